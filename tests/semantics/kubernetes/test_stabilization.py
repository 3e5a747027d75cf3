"""The kubernetes semantics' stabilization windows: the recommendations recorded, and the
first decision seeding the window with the current size.

Source: kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go (stabilizeRecommendationWithBehaviors,
storeScaleEvent);
https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#stabilization-window."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import cpu_request, NOW, proposal_request as _proposal_request


def test_state_records_recommendation_and_event():
    r = decide(cpu_request(4, "900m", state={"recommendations": []}))
    st = r["state"]
    assert st["recommendations"] == [{"time": NOW, "replicas": 8}]
    assert st["scale_up_events"] == [{"time": NOW, "change": 4, "cause": "metric"}]
    assert st["sizes"] == [{"time": NOW, "replicas": 8}]
    assert st["last_scale"]["direction"] == "Increase"


def test_first_sight_seeds_current():
    r = decide(cpu_request(4, "100m"))
    assert r["desired_replicas"] == 4 and r["reason"] == "ScaleDownStabilized"
    assert {"time": NOW, "replicas": 4} in r["state"]["recommendations"]


def _proposal(now, current, proposal, behavior, state=None, min_r=1, max_r=100):
    return decide(_proposal_request(now, current, proposal, behavior, state, min_r, max_r))


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
