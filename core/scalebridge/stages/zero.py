"""A workload at zero replicas: paused by whoever set it there, unless this autoscaler did.

Kubernetes 1.36 made the HPA tell the two apart (KEP-2021, kubernetes/kubernetes#135118):
when it scales a workload from one or more replicas to zero it records the condition
``ScaledToZero=True``, and a workload found at zero without it is paused — "Setting a
Deployment to 0 by hand has always paused autoscaling", and the redesign keeps that
(the v1.37 blog "Scale Workloads to Zero with HorizontalPodAutoscaler", "How the HPA
distinguishes zero from paused"). The record lives in the decision's ``state`` under a
key of each semantics that keeps it; a scale from zero clears it, as the condition turns
``False``.
"""
from __future__ import annotations

from typing import Any, Optional


def scaled_to_zero(state: Any, key: str) -> bool:
    """Whether this autoscaler's own scale to zero is on record."""
    extra = state.extra
    return bool(extra.get(key)) if extra else False


def record_zero(state: Any, key: str, now: float, to_zero: bool) -> None:
    """After a scale carried out: on record when it went to zero (``now``, the
    condition's lastTransitionTime), off the record otherwise."""
    if to_zero:
        state.extra[key] = now
    elif state.extra:
        state.extra.pop(key, None)


def paused_at_zero(current: int, state: Any, key: str) -> Optional[str]:
    """Why a target at ``current`` replicas is not decided, or None: at zero without this
    autoscaler's record, someone else paused it."""
    if current != 0 or scaled_to_zero(state, key):
        return None
    return ("scaling is disabled since the replica count of the target is zero and this autoscaler did not set "
            "it there: someone paused it; set a size above zero to resume")
