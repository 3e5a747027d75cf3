"""Fidelity review of the ``kubernetes`` semantics against kubernetes/kubernetes
(pkg/controller/podautoscaler/horizontal.go, replica_calculator.go,
pkg/apis/autoscaling/validation/validation.go).

Passing tests pin behaviours checked against the upstream source; confirmed
divergences assert the upstream behaviour and are marked xfail(strict=True)."""
from __future__ import annotations

import pytest

from scalebridge import decide

from tests.semantics.test_kubernetes_audit import NOW, _proposal_request


def _proposal(now, current, proposal, behavior, state=None, min_r=1, max_r=100):
    return decide(_proposal_request(now, current, proposal, behavior, state, min_r, max_r))


def _external(target, total, current, *, metrics=None, min_r=1, max_r=100, behavior=None, state=None):
    policy = {"min_replicas": min_r, "max_replicas": max_r,
              "metrics": metrics or [{"type": "external", "name": "q", "target": target}]}
    if behavior is not None:
        policy["behavior"] = behavior
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": current, "policy": policy,
           "observations": {"metrics": {"q": {"values": [total]}}},
           "state": {"recommendations": []} if state is None else state}
    return decide(req)


# -- rate policies: upstream's float64 arithmetic --------------------------------------------

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
    r = _proposal(NOW, 0, 4, {"scale_up": {"select_policy": "Min"}}, {"recommendations": []}, min_r=0)
    assert (r["desired_replicas"], r["reason"]) == (0, "ScaleUpLimit")


# -- stabilization ---------------------------------------------------------------------------

def test_first_sight_seed_holds_a_scale_up_inside_the_up_window():
    """horizontal.go ``recordInitialRecommendation`` seeds ``{currentReplicas, now}``;
    ``stabilizeRecommendationWithBehaviors`` then takes the lowest recommendation of the
    scale-up window (the seed, 3), so a first-sight scale-up is held at the current size."""
    beh = {"scale_up": {"stabilization_window_seconds": 60}}
    r = _proposal(NOW, 3, 8, beh, None)
    assert (r["desired_replicas"], r["reason"]) == (3, "ScaleUpStabilized")
    # a known, empty history has no seed: the default rate policies (max(3+4, 6)) apply
    r = _proposal(NOW, 3, 8, beh, {"recommendations": []})
    assert (r["desired_replicas"], r["reason"]) == (7, "ScaleUpLimit")


# -- multiple metrics ------------------------------------------------------------------------

def test_invalid_metric_with_proposal_equal_to_current_still_reconciles():
    """horizontal.go ``computeReplicasForMetrics``: the no-decision signal (-1) is returned
    only when ``invalidMetricsCount > 0 && replicas < specReplicas``; a valid proposal equal
    to the current size goes on through normalization (its recommendation is recorded)
    with the error kept."""
    metrics = [{"type": "external", "name": "q", "target": {"type": "Value", "value": 10}},
               {"type": "external", "name": "r", "target": {"type": "Value", "value": 10}}]
    r = _external(None, 10, 3, metrics=metrics, behavior={})
    assert r["desired_replicas"] == 3
    assert r["error"].startswith("invalid metrics (1 invalid out of 2), first error is: ")
    assert [e["replicas"] for e in r["state"]["recommendations"]] == [3]


def test_external_value_exactly_at_lower_tolerance_holds():
    """replica_calculator.go ``Tolerances.isWithin``: ``(1 - 0.1) <= ratio`` is inclusive;
    a total of 27 against a Value target of 30 (ratio 0.9) keeps the size."""
    r = _external({"type": "Value", "value": 30}, 27, 4)
    assert r["desired_replicas"] == 4
    assert r["metrics"][0]["replicas"] == 4


# -- a divergence the review found, fixed -------------------------------------------------------------------

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
