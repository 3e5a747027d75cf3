"""Kubernetes-style scaling policies: how far the count may move per period.

Port of ``convertDesiredReplicasWithBehaviorRate``,
``calculateScaleUpLimitWithScalingRules``, ``calculateScaleDownLimitWithBehaviors``,
``getReplicasChangePerPeriod`` and, for the behavior-less path,
``convertDesiredReplicasWithRules`` / ``calculateScaleUpLimit``
(pkg/controller/podautoscaler/horizontal.go).

``exact=False`` reproduces the controller's float64 arithmetic
(``math.Ceil(float64(n) * (1 + float64(v)/100))``); ``exact=True`` computes the
percentage in exact arithmetic, as the neutral semantics does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..constants import K8S_SCALE_UP_LIMIT_FACTOR, K8S_SCALE_UP_LIMIT_MINIMUM
from ..state import DecisionState


@dataclass(frozen=True, slots=True)
class RatePolicy:
    type: str        # "Pods" | "Percent"
    value: int
    period_seconds: float


def _period_start(state: DecisionState, now: float, current: int, period: float) -> int:
    added = state.scale_up_events.window_sum(now, period)
    deleted = state.scale_down_events.window_sum(now, period)
    return current - added + deleted


def _limit(state: DecisionState, now: float, current: int, select: str, policies: Sequence[RatePolicy],
           exact: bool, propose, pick, unlimited: int) -> int:
    """The loop both limits share: each policy's limit from the size at the start of
    its period (``getReplicasChangePerPeriod``), the first kept, then ``pick`` of
    them (``selectPolicy``); ``unlimited`` when there is no policy."""
    if select == "Disabled":
        return current
    result = None
    for p in policies:
        proposed = propose(_period_start(state, now, current, p.period_seconds), p, exact)
        result = proposed if result is None else pick(result, proposed)
    return result if result is not None else unlimited


def _up(start: int, p: RatePolicy, exact: bool) -> int:
    if p.type == "Pods":
        return start + p.value
    if exact:
        return -((-start * (100 + p.value)) // 100)
    return int(math.ceil(float(start) * (1 + float(p.value) / 100)))


def _down(start: int, p: RatePolicy, exact: bool) -> int:
    if p.type == "Pods":
        return start - p.value
    if exact:
        return (start * (100 - p.value)) // 100 if start >= 0 else -((-start * (100 - p.value)) // 100)
    return int(float(start) * (1 - float(p.value) / 100))


def scale_up_limit(state: DecisionState, now: float, current: int, select: str,
                   policies: Sequence[RatePolicy], exact: bool = False) -> int:
    """``calculateScaleUpLimitWithScalingRules``. No policies (an empty list): the
    loop never runs and the start value is returned — Max starts at MinInt32 (then
    clamped to current: no scale-up), Min at MaxInt32 (no limit)."""
    if select == "Min":
        return _limit(state, now, current, select, policies, exact, _up, min, 2**31 - 1)
    return _limit(state, now, current, select, policies, exact, _up, max, -(2**31))


def scale_down_limit(state: DecisionState, now: float, current: int, select: str,
                     policies: Sequence[RatePolicy], exact: bool = False) -> int:
    """``calculateScaleDownLimitWithBehaviors``. No policies: Max starts at MaxInt32
    (then clamped to current: no scale-down), Min at MinInt32 (no limit)."""
    if select == "Min":
        return _limit(state, now, current, select, policies, exact, _down, max, -(2**31))
    return _limit(state, now, current, select, policies, exact, _down, min, 2**31 - 1)


def limit_with_behavior(state: DecisionState, now: float, current: int, desired: int,
                        min_replicas: int, max_replicas: int,
                        up_select: str, up_policies: Sequence[RatePolicy],
                        down_select: str, down_policies: Sequence[RatePolicy],
                        exact: bool = False) -> tuple[int, str]:
    """``convertDesiredReplicasWithBehaviorRate``: bounds and rate limits together.
    Returns the count and its reason (``ScaleUpLimit``, ``TooManyReplicas``,
    ``ScaleDownLimit``, ``TooFewReplicas`` or ``DesiredWithinRange``)."""
    if desired > current:
        limit = scale_up_limit(state, now, current, up_select, up_policies, exact)
        if limit < current:
            limit = current
        if max_replicas > limit:
            maximum, reason = limit, "ScaleUpLimit"
        else:
            maximum, reason = max_replicas, "TooManyReplicas"
        if desired > maximum:
            return maximum, reason
    elif desired < current:
        limit = scale_down_limit(state, now, current, down_select, down_policies, exact)
        if limit > current:
            limit = current
        if min_replicas < limit:
            minimum, reason = limit, "ScaleDownLimit"
        else:
            minimum, reason = min_replicas, "TooFewReplicas"
        if desired < minimum:
            return minimum, reason
    return desired, "DesiredWithinRange"


def legacy_scale_up_limit(current: int) -> int:
    """``calculateScaleUpLimit``: ``max(2 × current, 4)``."""
    return int(max(K8S_SCALE_UP_LIMIT_FACTOR * float(current), K8S_SCALE_UP_LIMIT_MINIMUM))


def limit_without_behavior(current: int, desired: int, min_replicas: int, max_replicas: int) -> tuple[int, str]:
    """``convertDesiredReplicasWithRules`` (an HPA whose ``spec.behavior`` is nil)."""
    up_limit = legacy_scale_up_limit(current)
    if max_replicas > up_limit:
        maximum, reason = up_limit, "ScaleUpLimit"
    else:
        maximum, reason = max_replicas, "TooManyReplicas"
    if desired < min_replicas:
        return min_replicas, "TooFewReplicas"
    if desired > maximum:
        return maximum, reason
    return desired, "DesiredWithinRange"
