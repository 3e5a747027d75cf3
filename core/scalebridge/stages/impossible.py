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
"""
from __future__ import annotations

from typing import Optional

from ..protocol import MetricObservation
from ..units import exact

__all__ = ["INVALID", "USAGE_METRICS", "impossible", "refuse_impossible"]

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


def impossible(o: MetricObservation) -> Optional[str]:
    """Why an observation of a metric that cannot be negative is impossible (the first
    negative reading, by member where it is one), or None."""
    if o.error is not None:
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
    keys = [m.name for m in policy.metrics] if policy.metrics else []
    rules = list(policy.rules)
    for profile in policy.profiles:
        rules.extend(profile.rules)
    keys.extend(r.metric for r in rules if r.metric in USAGE_METRICS)
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
