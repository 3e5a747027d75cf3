"""Impossible observations: a negative value of a metric that cannot be negative.

Every target a policy's ``metrics`` name is a ratio target — utilization, a value or
an average value that the group's size is scaled in proportion to: the HPA's
``desiredReplicas = ceil(currentReplicas × currentMetricValue / desiredMetricValue)``
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#algorithm-details;
the API refuses a target that is not positive), the managed instance group's
utilization targets (https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics),
AWS target tracking ("the metric value must increase or decrease proportionally to the
number of instances", https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html).
A negative reading of such a metric — a utilization, a usage, a queue length or a count
— has no proportional meaning; upstream arithmetic on it ends at a bound (the HPA's
external per-pod sum reads a negative running sum as ``MaxInt64``, a ratio below zero
scales to the minimum), so one broken metric source could max out or empty a fleet.

Such an observation is therefore an invalid metric under every semantics, the same way
a metric that failed to be read is (``observations.metrics.NAME.error``): its result
carries the error (naming the member whose sample it was), it proposes nothing, it
blocks a scale-in as invalid metrics do, and a policy's ``fallback`` counts it as a
failure. The upstream overflow guards stay for what upstream computes from valid input.

A rule's threshold (Azure Monitor, CloudWatch alarms) may be crossed by a metric that is
negative by nature, so rules are only checked on the neutral resource names ``cpu`` and
``memory``, which are usage.

A policy that says ``invalid_values_as_zero`` (what ``import --from keda`` gives) reads an
external metric's negative, NaN or infinite value as 0 instead, as KEDA's scalers report
it from 2.20.2 (kedacore/keda#7889, ``pkg/scalers/scaler.go`` ``quantityFromFloat64``:
"NaN, Inf, and negative values are treated as zero to prevent panics and incorrect HPA
scaling", called by ``GenerateMetricInMili`` in every external scaler): its external
metrics are not checked here, and :func:`zeroed` is what the semantics and the formulas
read of them (:mod:`scalebridge.controls.zero`).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..compiled import derived
from ..protocol import MetricObservation
from ..units import exact, none_negative

__all__ = ["INVALID", "USAGE_METRICS", "impossible", "refuse_impossible", "zero_value", "zeroed"]

#: how the error of an impossible observation begins
INVALID = "invalid observation: "

#: the neutral metric names that are resource usage (docs/policy.md)
USAGE_METRICS = frozenset({"cpu", "memory"})


def _negative(v: object) -> bool:
    if v is None:
        return False
    if type(v) is str:   # a quantity: only one written with a sign can be negative
        return v.lstrip().startswith("-") and exact(v) < 0
    return v < 0


def _shown(v: object) -> str:
    return repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)


def _second(points) -> list:
    return [p[1] for p in points]


def impossible(o: MetricObservation) -> Optional[str]:
    """Why an observation of a metric that cannot be negative is impossible (the first
    negative reading, by member where it is one), or None."""
    if o.error is not None:
        return None
    # the common case, no value that can be negative, without a Python call per value;
    # anything else is looked at value by value below (which finds the first)
    members, values, series, member_series = o.members, o.values, o.series, o.member_series
    if (not members or none_negative(members.values())) and (o.value is None or not _negative(o.value)) and \
            (not values or none_negative(values)) and (not series or none_negative(_second(series))) and \
            (not member_series or all(not pts or none_negative(_second(pts)) for pts in member_series.values())):
        return None
    for name, v in (o.members or {}).items():
        if _negative(v):
            return f"{INVALID}negative value {_shown(v)} for member {name}"
    if _negative(o.value):
        return f"{INVALID}negative value {_shown(o.value)}"
    for i, v in enumerate(o.values or ()):
        if _negative(v):
            return f"{INVALID}negative value {_shown(v)} (values[{i}])"
    for _, v in o.series or ():
        if _negative(v):
            return f"{INVALID}negative value {_shown(v)} in its series"
    for name, pts in (o.member_series or {}).items():
        for _, v in pts:
            if _negative(v):
                return f"{INVALID}negative value {_shown(v)} in member {name}'s series"
    return None


def refuse_impossible(policy, metrics: dict) -> dict:
    """``metrics`` (the observations by key) with every impossible observation of a
    metric that cannot be negative replaced by a failed one carrying why; the same
    mapping when none is (the common case costs one scan, no copy)."""
    keys = _checked_keys(policy)
    out = metrics
    for k in keys:
        o = metrics.get(k)
        if o is None:
            continue
        why = impossible(o)
        if why is not None:
            if out is metrics:
                out = dict(metrics)
            out[k] = MetricObservation(error=why)
    return out


def _checked_keys(policy) -> tuple:
    """The observation keys whose readings cannot be negative: every metric of the policy,
    and ``cpu``/``memory`` where a rule reads them (derived once per compiled policy, as the
    semantics keep what they derive)."""
    return derived(policy, _KEYS, _keys)


def _keys(policy) -> tuple:
    zero = policy.invalid_values_as_zero
    keys = [m.name for m in policy.metrics if not (zero and m.type == "external")] if policy.metrics else []
    rules = list(policy.rules)
    for profile in policy.profiles:
        rules.extend(profile.rules)
    keys.extend(r.metric for r in rules if r.metric in USAGE_METRICS)
    return tuple(keys)


_KEYS = ("impossible", "keys")   # not a string: the semantics key their own entries by name


def zero_value(v):
    """``v`` as KEDA >= 2.20.2 reports a scaler's value (``quantityFromFloat64``): 0 when it
    is negative, NaN or infinite, else ``v`` itself (None stays None: no value)."""
    if v is None:
        return v
    if type(v) is str:
        return 0 if _negative(v) else v
    return v if v == v and v >= 0 and v != float("inf") else 0


def _zero_points(points):
    return [p if zero_value(p[1]) is p[1] else [p[0], zero_value(p[1])] for p in points]


def zeroed(o: Optional[MetricObservation]) -> Optional[MetricObservation]:
    """``o`` with each of its values as :func:`zero_value` has it; ``o`` itself when no value
    changes (the common case: no copy)."""
    if o is None or o.error is not None:
        return o
    changes: dict = {}
    if o.value is not None and zero_value(o.value) is not o.value:
        changes["value"] = zero_value(o.value)
    if o.values and any(zero_value(v) is not v for v in o.values):
        changes["values"] = [zero_value(v) for v in o.values]
    if o.series and any(zero_value(p[1]) is not p[1] for p in o.series):
        changes["series"] = _zero_points(o.series)
    if o.members and any(zero_value(v) is not v for v in o.members.values()):
        changes["members"] = {k: zero_value(v) for k, v in o.members.items()}
    if o.member_series and any(zero_value(p[1]) is not p[1] for pts in o.member_series.values() for p in pts):
        changes["member_series"] = {k: _zero_points(pts) for k, pts in o.member_series.items()}
    if not changes:
        return o
    return dataclasses.replace(o, **changes)
