"""The ``kubernetes`` semantics counts a rollout's surge as upstream does, a quirk kept.

``GetExternalPerPodMetricReplicas`` / ``GetObjectPerPodMetricReplicas``
(kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go) judge the
tolerance on ``scale.status.replicas`` and, within it, return that count: during a
rolling update with a surge, status is above spec and the HPA writes status back into
spec — "HPA tolerance check causes unexpected scale-up during rolling updates"
(kubernetes/kubernetes#138505, open; the fix #141134 is not merged), the mechanism of the
over-scaling reported since kubernetes/kubernetes#72775 ("HPA locks in a desired count
that includes the surging pods")."""
from scalebridge.engine import decide

T0 = 1_767_225_600.0


def request(total, *, spec, status, rollout):
    obs = {"status_replicas": status, "metrics": {"connections": {"values": [total]}}}
    if rollout:
        obs["rollout"] = {"updated_replicas": status - spec}
    return {"now": T0, "current_replicas": spec,
            "policy": {"min_replicas": 2, "max_replicas": 40,
                       "metrics": [{"type": "external", "name": "connections",
                                    "target": {"type": "AverageValue", "average_value": 20000}}]},
            "observations": obs, "state": {"recommendations": []}}


def test_within_tolerance_of_the_surge_the_hpa_writes_status_back_into_spec():
    # 250,000 connections over 13 pods: 0.96 of the target, within the 10 % band, so the
    # HPA answers status.replicas (13) for a spec of 10
    r = decide(request(250_000, spec=10, status=13, rollout=True), "kubernetes")
    assert r["desired_replicas"] == 13
    # the neutral semantics asks what the load needs: 12.5 members' worth
    assert decide(request(250_000, spec=10, status=13, rollout=True), "scalebridge")["desired_replicas"] == 13


def test_each_surge_is_locked_in_the_next_sync():
    # spec 13 surges to 16 (25 %); the same load is 0.78 of 16 pods' target: out of the band,
    # ceil(250,000 / 20,000) = 13 — the ratchet lasts while the load sits near status
    assert decide(request(250_000, spec=13, status=16, rollout=True), "kubernetes")["desired_replicas"] == 13
    assert decide(request(300_000, spec=13, status=16, rollout=True), "kubernetes")["desired_replicas"] == 16


def test_the_rollout_observation_changes_nothing_under_kubernetes():
    for total in (150_000, 250_000, 320_000):
        with_ = decide(request(total, spec=10, status=13, rollout=True), "kubernetes")
        without = decide(request(total, spec=10, status=13, rollout=False), "kubernetes")
        assert with_["desired_replicas"] == without["desired_replicas"]
