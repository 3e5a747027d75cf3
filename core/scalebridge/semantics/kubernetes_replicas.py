"""Port of ``pkg/controller/podautoscaler/replica_calculator.go`` (kubernetes/kubernetes)
and ``metrics/utilization.go``: one metric's raw replica proposal.

Values are milli-units (``Quantity.MilliValue()``) in int64 arithmetic;
utilization is truncated to an integer percent *before* the ratio
(``GetResourceUtilizationRatio``); ratios are float64 and proposals
``int32(math.Ceil(ratio × pods))``, exactly as upstream.

Members may carry ``count`` (a scalebridge extension): one entry standing for
``count`` identical pods. Sums weight by count, which is what the upstream
loops compute for that many identical pods.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..protocol import Member, MetricObservation
from ..units import milli_value
from .base import DISTANT_PAST


class MetricError(Exception):
    """The metric cannot give a proposal; the message uses upstream's wording."""


@dataclass(slots=True)
class Tolerances:
    """``Tolerances.isWithin``: ``(1 - scaleDown) <= ratio <= (1 + scaleUp)``."""
    scale_down: float
    scale_up: float

    def is_within(self, ratio: float) -> bool:
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)


@dataclass(slots=True)
class ReplicaCount:
    """What replica_calculator.go's ``Get*Replicas`` return: ``replicaCount``,
    ``utilization`` and the raw usage it came from."""
    replicas: int
    utilization: Optional[int] = None   # integer percent (Utilization targets)
    value_milli: Optional[int] = None   # the usage the proposal was based on, milli-units
    within_tolerance: bool = False


def trunc_div(a: int, b: int) -> int:
    """Go's int64 division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1


def go_ceil(x: float) -> int:
    """``int32(math.Ceil(x))``, clamped to MaxInt32 as upstream guards proposals
    against overflow (TestReplicaCalcScaleUpOverflow)."""
    if math.isnan(x):
        return 0
    if x >= MAX_INT32:
        return MAX_INT32
    if x <= -MAX_INT32 - 1:
        return -MAX_INT32 - 1
    return int(math.ceil(x))


def _wrap64(x: int) -> int:
    """Go int64 addition wraps around."""
    return (x + 2**63) % 2**64 - 2**63


def external_value_sum(values) -> int:
    """The sum in ``GetExternalMetricReplicas``: ``if val > 0 && usage > MaxInt64-val
    { usage = MaxInt64; break }; usage = usage + val`` — capped at MaxInt64, and once
    capped the remaining values are not added (TestReplicaCalcExternalMetricUsageOverflow)."""
    usage = 0
    for val in values:
        if val > 0 and usage > MAX_INT64 - val:
            return MAX_INT64
        usage = _wrap64(usage + val)
    return usage


def external_per_pod_sum(values) -> int:
    """The sum in ``GetExternalPerPodMetricReplicas``: ``usage = usage + val; if usage < 0
    { usage = MaxInt64; break }``. The overflow guard fires when the int64 running sum
    wraps below zero; upstream's guard would fire on a negative value too, but the
    engine decides a negative reading as an invalid metric before this runs
    (scalebridge.stages.impossible), so only valid values reach it through ``decide``."""
    usage = 0
    for val in values:
        usage = _wrap64(usage + val)
        if usage < 0:
            return MAX_INT64
    return usage


def _t(x: Optional[float]) -> float:
    return DISTANT_PAST if x is None else x


def group_pods(members: list[Member], samples: dict, cpu: bool, now: float,
               cpu_init: float, readiness_delay: float, ts: Optional[float], window: float,
               usage: bool = False, member_ts: Optional[dict] = None, member_windows: Optional[dict] = None):
    """``groupPods`` and ``removeMetricsForPods`` in one pass.

    Returns the ready count, the unready and missing pods, the milli-values of
    the samples that stay in the calculation, and each pod's count.

    Deleting and failed pods are ignored; pending pods are unready; a pod
    without a sample is missing. For cpu only: a pod with no Ready condition is
    unready; inside the cpu-initialization period (counted from start) a pod
    is unready if not ready or if its sample predates one metric window after
    its last readiness transition (the pod's own sample time and window,
    ``metric.Timestamp`` and ``metric.Window`` of its ``PodMetric``, where the
    observation has them per member; else the observation's); after it, a
    not-ready pod is unready only if it has never been ready since the initial
    readiness delay.

    Samples of pods the selector did not return stay, as upstream keeps them:
    they make ``len(metrics)`` non-zero, count in plain averages, and are
    skipped by the utilization sum (they have no request).

    ``usage``: the samples are resource usage (the resource metrics API's
    ``PodMetrics``), which cannot be negative: a pod with a negative sample is
    treated as a pod without one (missing), and so gets the missing pods'
    damping, never drives the ratio."""
    ready_count = 0
    unready: list[Member] = []
    missing: list[Member] = []
    values: dict[str, int] = {}
    counts: dict[str, int] = {}
    metric_ts = DISTANT_PAST if ts is None else ts
    get = samples.get
    for m in members:
        name = m.name
        counts[name] = m.count
        phase = m.phase
        if m.deleting or phase == "Failed":
            continue
        if phase == "Pending":
            unready.append(m)
            continue
        v = get(name)
        if v is None:
            missing.append(m)
            continue
        milli = v * 1000 if type(v) is int else milli_value(v)   # once: the usage check reads it too
        if usage and milli < 0:
            missing.append(m)
            continue
        if cpu:
            ready = m.ready
            if ready is None:
                unready.append(m)
                continue
            start = m.start_time
            if start is None:
                start = DISTANT_PAST
            transition = m.ready_transition_time
            if transition is None:
                transition = DISTANT_PAST
            if start + cpu_init > now:
                t = metric_ts if member_ts is None else member_ts.get(name, metric_ts)
                w = window if member_windows is None else member_windows.get(name, window)
                if ready is False or t < transition + w:
                    unready.append(m)
                    continue
            elif ready is False and start + readiness_delay > transition:
                unready.append(m)
                continue
        ready_count += m.count
        values[name] = milli
    for name, v in samples.items():           # extraneous samples: pods the selector did not return
        if name not in counts and v is not None and not (
                usage and (v < 0 if type(v) is int else milli_value(v) < 0)):
            counts[name] = 1
            values[name] = v * 1000 if type(v) is int else milli_value(v)
    return ready_count, unready, missing, values, counts


def _pod_requests(members: list[Member], resource: str) -> dict[str, int]:
    """``calculateRequests`` over every pod the selector returns
    (pkg/controller/podautoscaler/replica_calculator.go): the first pod without a
    request fails the metric, in the provider's words when the member carries them
    (``calculatePodLevelRequests``: "missing pod-level request for cpu in Pod p";
    ``calculatePodRequestsFromContainers``: "missing request for cpu in container c of
    Pod p", "container c not found in Pod p")."""
    requests: dict[str, int] = {}
    for m in members:
        rq = m.requests
        r = None if rq is None else rq.get(resource)
        if r is None:
            said = m.request_errors.get(resource) if m.request_errors else None
            raise MetricError(said or f"missing request for {resource} in Pod {m.name}")
        requests[m.name] = r * 1000 if type(r) is int else milli_value(r)
    return requests


def _utilization_ratio(values: dict[str, int], counts: dict[str, int], requests: dict[str, int],
                       target: float) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``."""
    metrics_total = requests_total = entries = 0
    for name, v in values.items():
        r = requests.get(name)
        if r is None:
            continue
        c = counts[name]
        metrics_total += v * c
        requests_total += r * c
        entries += c
    if requests_total == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = trunc_div(metrics_total * 100, requests_total)
    return float(utilization) / float(target), utilization, trunc_div(metrics_total, entries)


def _usage_ratio(values: dict[str, int], counts: dict[str, int], target: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: integer average of the samples over the target."""
    total = n = 0
    for name, v in values.items():
        c = counts[name]
        total += v * c
        n += c
    usage = trunc_div(total, n)
    return float(usage) / float(target), usage


def _pods_with_metrics(members: list[Member], obs: MetricObservation, resource: Optional[str], now: float,
                       cpu_init: float, readiness_delay: float) -> tuple:
    """The opening both ``GetResourceReplicas`` and ``calcPlainMetricReplicas`` share:
    the selector's pods grouped by ``groupPods`` (ready count, unready, missing,
    the metrics of the rest), with upstream's two errors."""
    if not members:
        raise MetricError("no pods returned by selector while calculating replica count")
    grouped = group_pods(members, obs.members or {}, resource == "cpu", now, cpu_init, readiness_delay,
                         obs.timestamp, obs.window or 0.0, usage=resource is not None,
                         member_ts=obs.member_timestamps, member_windows=obs.member_windows)
    if not grouped[3]:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    return grouped


def _fill_in(values: dict, ratio: float, missing, unready, scale_down_use) -> None:
    """Missing pods on a scale-down use ``scale_down_use(pod)``, on a scale-up nothing
    (at a ratio of exactly 1.0 they stay out); unready pods on a scale-up use nothing
    ("if scaling up, treat unready pods as 0% usage")."""
    if missing:
        if ratio < 1.0:
            for m in missing:
                values[m.name] = scale_down_use(m)
        elif ratio > 1.0:
            for m in missing:
                values[m.name] = 0
    for m in unready:
        values[m.name] = 0


def _rebalanced(current: int, ratio: float, new_ratio: float, tol: Tolerances, values: dict, counts: dict,
                utilization: Optional[int], raw: Optional[int]) -> ReplicaCount:
    """The closing both share, once missing and unready pods are filled in: no
    change when the new ratio is within tolerance or crosses 1 the other way,
    ``ceil(new_ratio × pods)`` unless that moves against the ratio."""
    if tol.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return ReplicaCount(current, utilization, raw, tol.is_within(new_ratio))
    pods = sum(counts[n] for n in values)
    new_replicas = go_ceil(new_ratio * float(pods))
    if (new_ratio < 1.0 and new_replicas > current) or (new_ratio > 1.0 and new_replicas < current):
        return ReplicaCount(current, utilization, raw)
    return ReplicaCount(new_replicas, utilization, raw)


def resource_utilization_replicas(current: int, target_utilization: float, resource: str,
                                  tol: Tolerances, members: list[Member], obs: MetricObservation,
                                  now: float, cpu_init: float, readiness_delay: float) -> ReplicaCount:
    """``GetResourceReplicas`` (and the container variant: the caller passes that
    container's requests and samples)."""
    ready_count, unready, missing, values, counts = _pods_with_metrics(members, obs, resource, now, cpu_init,
                                                                      readiness_delay)
    requests = _pod_requests(members, resource)
    ratio, utilization, raw = _utilization_ratio(values, counts, requests, target_utilization)

    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if tol.is_within(ratio):
            return ReplicaCount(current, utilization, raw, True)
        return ReplicaCount(go_ceil(ratio * float(ready_count)), utilization, raw)

    # scale-down: missing pods use all of their request, or the target when it is above 100%
    fallback = max(100, int(target_utilization))
    _fill_in(values, ratio, missing, unready if scale_up_with_unready else (),
             lambda m: trunc_div(requests[m.name] * fallback, 100))
    new_ratio, _, _ = _utilization_ratio(values, counts, requests, target_utilization)
    return _rebalanced(current, ratio, new_ratio, tol, values, counts, utilization, raw)


def plain_metric_replicas(current: int, target_milli: int, tol: Tolerances, members: list[Member],
                          obs: MetricObservation, resource: Optional[str], now: float,
                          cpu_init: float, readiness_delay: float) -> ReplicaCount:
    """``calcPlainMetricReplicas`` (pods metrics; resource metrics with an
    AverageValue target via ``GetRawResourceReplicas``)."""
    ready_count, unready, missing, values, counts = _pods_with_metrics(members, obs, resource, now, cpu_init,
                                                                      readiness_delay)
    ratio, usage = _usage_ratio(values, counts, target_milli)

    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if tol.is_within(ratio):
            return ReplicaCount(current, None, usage, True)
        return ReplicaCount(go_ceil(ratio * float(ready_count)), None, usage)

    # scale-down: missing pods use exactly the target
    _fill_in(values, ratio, missing, unready if scale_up_with_unready else (), lambda m: target_milli)
    new_ratio, _ = _usage_ratio(values, counts, target_milli)
    return _rebalanced(current, ratio, new_ratio, tol, values, counts, None, usage)


def ready_pods_count(members: list[Member]) -> int:
    """``getReadyPodsCount``: running pods whose Ready condition is true."""
    if not members:
        raise MetricError("no pods returned by selector while calculating replica count")
    return sum(m.count for m in members if m.phase == "Running" and m.ready is True)


def usage_ratio_replicas(current: int, ratio: float, tol: Tolerances, members: list[Member]) -> tuple[int, bool]:
    """``getUsageRatioReplicaCount``: ready pods × ratio, or ``ceil(ratio)`` from zero."""
    if current != 0:
        if tol.is_within(ratio):
            return current, True
        try:
            ready = ready_pods_count(members)
        except MetricError as e:
            raise MetricError(f"unable to calculate ready pods: {e}") from None
        return go_ceil(ratio * float(ready)), False
    return go_ceil(ratio), False


def per_pod_replicas(status_replicas: int, usage_milli: int, target_milli: int, tol: Tolerances,
                     external: bool = False) -> ReplicaCount:
    """``GetObjectPerPodMetricReplicas`` / ``GetExternalPerPodMetricReplicas``:
    the total over the per-pod target, with tolerance judged on status replicas.
    The external variant reports a total at MaxInt64 as is (``float64(usage) >=
    float64(math.MaxInt64)``), without dividing it by the status replicas."""
    replicas = status_replicas
    denominator = float(target_milli) * float(replicas)
    ratio = float(usage_milli) / denominator if denominator else math.inf
    within = tol.is_within(ratio)
    if not within:
        replicas = go_ceil(float(usage_milli) / float(target_milli))
    if external and float(usage_milli) >= float(MAX_INT64):
        per_pod = MAX_INT64
    elif status_replicas:
        avg = float(usage_milli) / float(status_replicas)
        per_pod = MAX_INT64 if avg >= float(MAX_INT64) else int(math.ceil(avg))
    else:
        per_pod = usage_milli
    return ReplicaCount(replicas, None, per_pod, within)
