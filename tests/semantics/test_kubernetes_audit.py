"""Audit of the ``kubernetes`` semantics against upstream kubernetes/kubernetes
``pkg/controller/podautoscaler`` (horizontal.go, replica_calculator.go).

Each test names the upstream function whose behaviour it pins down."""
from __future__ import annotations

from scalebridge import decide

NOW = 1767225600.0


def _proposal_request(now, current, proposal, behavior, state=None, min_r=1, max_r=100):
    req = {"semantics": "kubernetes", "now": now, "current_replicas": current,
           "policy": {"min_replicas": min_r, "max_replicas": max_r, "behavior": behavior},
           "observations": {"proposal": proposal}}
    if state is not None:
        req["state"] = state
    return req


def _chain(steps, behavior):
    """Run decisions in order, each carrying the previous response's state."""
    state = {"recommendations": []}
    out = []
    for now, current, proposal in steps:
        r = decide(_proposal_request(now, current, proposal, behavior, state))
        state = r["state"]
        out.append(r)
    return out


# -- scale events: which ones the rate limits still see ------------------------------------

UP_60S_DOWN_15S = {
    "scale_up": {"stabilization_window_seconds": 0, "select_policy": "Max",
                 "policies": [{"type": "Pods", "value": 2, "period_seconds": 60}]},
    "scale_down": {"stabilization_window_seconds": 0, "select_policy": "Max",
                   "policies": [{"type": "Percent", "value": 100, "period_seconds": 15}]},
}


def test_scale_down_events_count_for_a_longer_scale_up_period():
    """horizontal.go ``calculateScaleUpLimitWithScalingRules``: the scale-up limit starts
    from ``currentReplicas - replicasAddedInCurrentPeriod + replicasDeletedInCurrentPeriod``
    with *both* sums taken over the scale-up policy's period (``getReplicasChangePerPeriod``).
    ``storeScaleEvent`` never deletes events; it only overwrites one outdated event of the
    same direction when it stores a new one. A scale-down 40 s ago therefore still counts
    for a 60 s scale-up policy even though the scale-down policies' longest period is 15 s:
    start = 5 - 0 + 5 = 10, limit = 10 + 2 = 12."""
    r = _chain([(NOW, 10, 5), (NOW + 20, 5, 5), (NOW + 40, 5, 20)], UP_60S_DOWN_15S)
    assert r[0]["desired_replicas"] == 5
    assert r[2]["desired_replicas"] == 12 and r[2]["reason"] == "ScaleUpLimit"


UP_15S_DOWN_60S = {
    "scale_up": {"stabilization_window_seconds": 0, "select_policy": "Max",
                 "policies": [{"type": "Pods", "value": 4, "period_seconds": 15}]},
    "scale_down": {"stabilization_window_seconds": 0, "select_policy": "Max",
                   "policies": [{"type": "Pods", "value": 2, "period_seconds": 60}]},
}


def test_scale_up_events_count_for_a_longer_scale_down_period():
    """horizontal.go ``calculateScaleDownLimitWithBehaviors``: the period start adds back
    the replicas *added* within the scale-down policy's period. A scale-up by 4 30 s ago
    (scale-up policies: 15 s) still counts for a 60 s scale-down policy:
    start = 8 - 4 + 0 = 4, limit = 4 - 2 = 2 (not 8 - 2 = 6)."""
    r = _chain([(NOW, 4, 8), (NOW + 20, 8, 8), (NOW + 30, 8, 1)], UP_15S_DOWN_60S)
    assert r[0]["desired_replicas"] == 8
    assert r[2]["desired_replicas"] == 2


def test_storing_an_event_overwrites_an_outdated_one_of_its_direction():
    """horizontal.go ``storeScaleEvent`` / ``markScaleEventsOutdated``: when a scale-down is
    stored, a scale-down event older than the longest scale-down period (15 s) is marked
    outdated and *overwritten* by the new one, so it stops counting for the 60 s scale-up
    period. Steady scale-down every 15 s keeps only the last two events upstream:
    at NOW+61 the scale-down events within 60 s are those of NOW+45 and NOW+60 (1 each):
    start = 5 - 0 + 2 = 7, limit 9 (keeping every event of the last 60 s would give
    start 9, limit 11)."""
    steps = [(NOW, 10, 9), (NOW + 15, 9, 8), (NOW + 30, 8, 7), (NOW + 45, 7, 6),
             (NOW + 60, 6, 5)]
    r = _chain(steps + [(NOW + 61, 5, 50)], UP_60S_DOWN_15S)
    assert [x["desired_replicas"] for x in r[:-1]] == [9, 8, 7, 6, 5]
    # upstream slice after the last store: [60, 45] (each store overwrote the one outdated)
    assert r[-1]["desired_replicas"] == 5 + 2 + 2
    down = sorted(e["time"] - NOW for e in r[-2]["state"]["scale_down_events"])
    assert down == [45, 60]


# -- external metrics: the int64 sums -----------------------------------------------------

MAX_INT64 = 2**63 - 1
MAX_INT32 = 2**31 - 1


def _external_request(target, values, *, current=3, status=None, max_r=100):
    members = [{"name": f"p{i}", "phase": "Running", "ready": True} for i in range(current)]
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": current,
            "policy": {"min_replicas": 1, "max_replicas": max_r,
                       "metrics": [{"type": "external", "name": "q", "target": target}]},
            "observations": {"status_replicas": current if status is None else status,
                             "members": members, "metrics": {"q": {"values": values}}}}


def _milli(v):
    from scalebridge.units import milli_value
    return milli_value(v)


def test_external_per_pod_sum_going_negative_is_read_as_max_int64():
    """replica_calculator.go ``GetExternalPerPodMetricReplicas``: the values are summed as
    ``usage = usage + val; if usage < 0 { usage = math.MaxInt64; break }`` (an overflow
    guard that also fires on a running sum that goes negative). A first value of -5
    makes the usage MaxInt64: the proposal is clamped to MaxInt32 and the reported
    usage is MaxInt64 (``float64(usage) >= float64(math.MaxInt64)``)."""
    r = decide(_external_request({"type": "AverageValue", "average_value": 10}, [-5, 20]))
    m = r["metrics"][0]
    assert m["replicas"] == MAX_INT32
    assert _milli(m["value"]) == MAX_INT64
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleUpLimit"   # max(2*3, 4)


def test_external_per_pod_negative_total_after_positive_start():
    """Same guard: 20 then -25 brings the running sum below zero -> MaxInt64."""
    r = decide(_external_request({"type": "AverageValue", "average_value": 10}, [20, -25]))
    assert r["metrics"][0]["replicas"] == MAX_INT32


def test_external_value_sum_stops_at_the_cap():
    """replica_calculator.go ``GetExternalMetricReplicas``: ``if val > 0 && usage >
    math.MaxInt64-val { usage = math.MaxInt64; break }``: once capped, later values
    (here a negative one) are not added."""
    half = "4611686018427387904m"
    r = decide(_external_request({"type": "Value", "value": 10}, [half, half, "-1"]))
    assert _milli(r["metrics"][0]["value"]) == MAX_INT64


def test_external_per_pod_reported_usage_at_max_int64_is_not_divided():
    """replica_calculator.go ``GetExternalPerPodMetricReplicas``: ``if float64(usage) >=
    float64(math.MaxInt64) { usage = math.MaxInt64 } else { usage = int64(math.Ceil(
    float64(usage) / float64(statusReplicas))) }``: a total at MaxInt64 is reported as
    is, not divided by the 2 status replicas. Ratio MaxInt64/(MaxInt64*2) = 0.5 ->
    ceil(MaxInt64/MaxInt64) = 1 replica."""
    big = f"{MAX_INT64}m"
    r = decide(_external_request({"type": "AverageValue", "average_value": big}, [big],
                                 current=2))
    m = r["metrics"][0]
    assert m["replicas"] == 1
    assert _milli(m["value"]) == MAX_INT64


# -- error wording -------------------------------------------------------------------------

def test_resource_metric_error_is_wrapped_as_computeReplicasForMetric_does():
    """horizontal.go ``computeReplicasForMetric`` wraps a Resource metric's error as
    ``failed to get %s resource metric value: %v`` around ``computeStatusForResourceMetricGeneric``'s
    ``failed to get %s utilization: %v``."""
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "resource", "name": "cpu",
                                   "target": {"type": "Utilization", "average_utilization": 50}}]},
           "observations": {"metrics": {}}}
    r = decide(req)
    assert r["error"] == ("invalid metrics (1 invalid out of 1), first error is: failed to get cpu "
                          "resource metric value: failed to get cpu utilization: unable to get metrics "
                          "for resource cpu: no metrics returned from resource metrics API")


def test_external_metric_error_is_wrapped_as_computeReplicasForMetric_does():
    """horizontal.go: ``failed to get %s external metric value: %v`` around
    ``computeStatusForExternalMetric``'s ``failed to get %s external metric: %v`` (AverageValue)."""
    req = _external_request({"type": "AverageValue", "average_value": 10}, [])
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert "failed to get q external metric value: failed to get q external metric: " in r["error"]


def test_object_value_without_pods_error_wording():
    """replica_calculator.go ``getUsageRatioReplicaCount``: a failing ``getReadyPodsCount``
    is returned as ``unable to calculate ready pods: %s``."""
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "object", "name": "rps",
                                   "target": {"type": "Value", "value": 10}}]},
           "observations": {"members": [], "metrics": {"rps": {"value": 100}}}}
    r = decide(req)
    assert ("failed to get object metric value: unable to calculate ready pods: no pods returned "
            "by selector while calculating replica count") in r["error"]


def test_boundary_rescale_also_overwrites_an_outdated_event():
    """horizontal.go ``reconcileAutoscaler``: a rescale to ``maxReplicas`` (current above
    it) is stored with ``storeScaleEvent`` like any other, overwriting the outdated
    scale-down event (older than the 15 s scale-down period)."""
    state = {"recommendations": [],
             "scale_down_events": [{"time": NOW - 40, "change": 3, "cause": "metric"}]}
    r = decide(_proposal_request(NOW, 12, 12, UP_60S_DOWN_15S, state, max_r=10))
    assert r["desired_replicas"] == 10 and r["reason"] == "TooManyReplicas"
    assert [e["time"] for e in r["state"]["scale_down_events"]] == [NOW]
