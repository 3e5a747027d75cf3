"""The kubernetes semantics' scaling policies (behavior): Pods and Percent limits over
their periods (Percent truncated down, ceiled up), selectPolicy, the scale events
each direction's limit sees and how a new event overwrites an outdated one, and
the limit without a behavior.

Source: kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go (normalizeDesiredReplicasWithBehaviors,
calculateScaleUpLimitWithScalingRules,
calculateScaleDownLimitWithBehaviors,
storeScaleEvent); https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#scaling-policies."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import cpu_request, NOW, proposal_request as _proposal_request


def test_behaviorless_scale_up_limit():
    """Without spec.behavior the controller caps scale-up at max(2 × current, 4)
    (horizontal.go calculateScaleUpLimit)."""
    r = decide(cpu_request(3, "1000m", state={"recommendations": []}))   # raw ceil(3×100/50) = 6 ≤ max(6, 4)
    assert r["desired_replicas"] == 6
    r = decide(cpu_request(3, "2000m", state={"recommendations": []}))   # raw 12 > 6
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleUpLimit"
    r = decide(cpu_request(1, "5000m", state={"recommendations": []}))   # raw 10; limit max(2, 4) = 4
    assert r["desired_replicas"] == 4


def _chain(steps, behavior):
    """Run decisions in order, each carrying the previous response's state."""
    state = {"recommendations": []}
    out = []
    for now, current, proposal in steps:
        r = decide(_proposal_request(now, current, proposal, behavior, state))
        state = r["state"]
        out.append(r)
    return out


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


def test_boundary_rescale_also_overwrites_an_outdated_event():
    """horizontal.go ``reconcileAutoscaler``: a rescale to ``maxReplicas`` (current above
    it) is stored with ``storeScaleEvent`` like any other, overwriting the outdated
    scale-down event (older than the 15 s scale-down period)."""
    state = {"recommendations": [],
             "scale_down_events": [{"time": NOW - 40, "change": 3, "cause": "metric"}]}
    r = decide(_proposal_request(NOW, 12, 12, UP_60S_DOWN_15S, state, max_r=10))
    assert r["desired_replicas"] == 10 and r["reason"] == "TooManyReplicas"
    assert [e["time"] for e in r["state"]["scale_down_events"]] == [NOW]


def _proposal(now, current, proposal, behavior, state=None, min_r=1, max_r=100):
    return decide(_proposal_request(now, current, proposal, behavior, state, min_r, max_r))


def _down_pct(value):
    return {"scale_down": {"stabilization_window_seconds": 0,
                           "policies": [{"type": "Percent", "value": value, "period_seconds": 15}]}}


def test_scale_down_percent_limit_is_float_truncated():
    """horizontal.go ``calculateScaleDownLimitWithBehaviors``:
    ``int32(float64(start) * (1 - float64(v)/100))``. 10 * (1 - 0.8) is 1.9999999999999996
    in float64, so the limit is 1 (exact arithmetic would give 2)."""
    assert _proposal(NOW, 10, 1, _down_pct(80), {"recommendations": []})[
        "desired_replicas"] == 1
    # 5 * (1 - 0.8) = 0.9999999999999998 -> limit 0; minReplicas 1 then binds
    assert _proposal(NOW, 5, 1, _down_pct(80), {"recommendations": []})[
        "desired_replicas"] == 1


def test_scale_up_percent_limit_is_float_ceiled():
    """horizontal.go ``calculateScaleUpLimitWithScalingRules``:
    ``int32(math.Ceil(float64(start) * (1 + float64(v)/100)))``: 25 * 1.12 is
    28.000000000000004 in float64, so the limit is 29 (exact arithmetic: 28)."""
    beh = {"scale_up": {"policies": [{"type": "Percent", "value": 12, "period_seconds": 15}]}}
    r = _proposal(NOW, 25, 100, beh, {"recommendations": []})
    assert (r["desired_replicas"], r["reason"]) == (29, "ScaleUpLimit")


def test_scale_from_zero_with_min_select_policy_stays_at_zero():
    """horizontal.go ``calculateScaleUpLimitWithScalingRules`` with selectPolicy Min and the
    default scale-up policies: min(0 + 4, ceil(0 * 2)) = 0, so
    ``convertDesiredReplicasWithBehaviorRate`` caps the scale-up at 0 (ScaleUpLimit)."""
    # (from a zero the HPA set itself: Kubernetes 1.36+ leaves any other zero paused)
    # (from a zero the HPA set itself: Kubernetes 1.36+ leaves any other zero paused; and
    # minReplicas 0 needs an external or object metric, validateMetrics)
    req = _proposal_request(NOW, 0, 4, {"scale_up": {"select_policy": "Min"}},
                            {"recommendations": [], "kubernetes.scaled_to_zero": NOW - 600}, min_r=0)
    req["policy"]["metrics"] = [{"type": "external", "name": "queue",
                                 "target": {"type": "AverageValue", "average_value": 10}}]
    r = decide(req)
    assert (r["desired_replicas"], r["reason"]) == (0, "ScaleUpLimit")


REORDER_BEHAVIOR = {
    "scale_up": {"stabilization_window_seconds": 0,
                 "policies": [{"type": "Pods", "value": 100, "period_seconds": 15}]},
    "scale_down": {"stabilization_window_seconds": 0,
                   "policies": [{"type": "Pods", "value": 1, "period_seconds": 600}]},
}


def test_store_scale_event_overwrites_by_slice_position_not_by_time():
    """horizontal.go ``storeScaleEvent`` + ``markScaleEventsOutdated`` (longest scale-up
    period 15 s) and ``calculateScaleDownLimitWithBehaviors`` (period 600 s).

    Upstream scale-up slice: NOW+0 [(0,+1)]; NOW+10 [(0,+1),(10,+5)]; NOW+20: (0) is
    outdated and overwritten in place -> [(20,+1),(10,+5)]; NOW+40: both are outdated,
    the last by index is (10,+5) -> [(20,+1),(40,+1)]. At NOW+50 the scale-down period
    start is 9 - (1+1) + 0 = 7, limit 7 - 1 = 6. scalebridge keeps (10,+5) and drops
    (20,+1): start 9 - 6 = 3, limit 2 — it did, before the slice order was kept in state."""
    state = {"recommendations": []}
    current = 1
    out = []
    orders = []
    for dt, proposal in [(0, 2), (10, 7), (20, 8), (40, 9), (50, 1)]:
        r = _proposal(NOW + dt, current, proposal, REORDER_BEHAVIOR, state)
        out.append(r["desired_replicas"])
        state, current = r["state"], r["desired_replicas"]
        orders.append(state.get("kubernetes.scale_up_order"))
    assert out[:4] == [2, 7, 8, 9]
    assert out[4] == 6
    # the slice order is in state only while it is not the time order
    assert orders[:4] == [None, None, [NOW + 20, NOW + 10], None]


def test_empty_scaling_policies_follow_the_controller():
    """``calculateScaleUpLimitWithScalingRules`` / ``calculateScaleDownLimitWithBehaviors`` with
    no policies return their start value: Max starts at MinInt32 (scale-up) / MaxInt32
    (scale-down), which ``convertDesiredReplicasWithBehaviorRate`` clamps to the current size —
    no change; Min starts at the other end — no limit. (The API server's validateScalingRules
    refuses an empty list, "must specify at least one Policy"; the controller's own tests
    build rules without policies.)"""
    beh = lambda d, sel: {d: {"policies": [], "select_policy": sel, "stabilization_window_seconds": 0}}  # noqa: E731
    r = _proposal(NOW, 2, 20, beh("scale_up", "Max"), {"recommendations": []}, max_r=20)
    assert (r["desired_replicas"], r["reason"]) == (2, "ScaleUpLimit")
    r = _proposal(NOW, 2, 20, beh("scale_up", "Min"), {"recommendations": []}, max_r=20)
    assert r["desired_replicas"] == 20
    r = _proposal(NOW, 10, 1, beh("scale_down", "Max"), {"recommendations": []})
    assert (r["desired_replicas"], r["reason"]) == (10, "ScaleDownLimit")
    r = _proposal(NOW, 10, 1, beh("scale_down", "Min"), {"recommendations": []})
    assert r["desired_replicas"] == 1
