"""Audit of the gce semantics against the Compute Engine autoscaler documentation.

Each test cites the page and quotes the sentence it checks; each one failed
before the fix it names in semantics/gce.py.
"""
from __future__ import annotations

from scalebridge import decide

NOW = 1768410000.0
CPU_PAGE = "https://cloud.google.com/compute/docs/autoscaler/scaling-cpu"


def _vm(name: str, vcpus, *, age: float = 3600.0) -> dict:
    return {"name": name, "phase": "Running", "ready": True, "ready_transition_time": NOW - age,
            "start_time": NOW - age, "requests": {"cpu": vcpus}}


def _request(current: int, members: list[dict], usage: dict, target: float = 60) -> dict:
    return {"semantics": "gce", "now": NOW, "current_replicas": current,
            "policy": {"min_replicas": 1, "max_replicas": 20,
                       "metrics": [{"type": "resource", "name": "cpu",
                                    "target": {"type": "Utilization", "average_utilization": target}}]},
            "observations": {"members": members, "metrics": {"cpu": {"members": usage}}},
            "state": {"recommendations": []}}


def test_cpu_utilization_is_the_average_use_of_all_vcpus():
    """scaling-cpu (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu): "The
    autoscaler treats the target CPU utilization level as a fraction of the average
    use of all vCPUs over time in the instance group. If the average utilization of
    your total vCPUs exceeds the target utilization, the autoscaler adds more VM
    instances. If the average utilization of your total vCPUs is less than the target
    utilization, the autoscaler removes instances."

    A 2-vCPU VM fully busy and an idle 8-vCPU VM use 2 of 10 vCPUs: 20 %, below a
    60 % target, so the group of 2 shrinks to ceil(2 × 20 / 60) = 1. The port
    averaged the per-VM percentages ((100 % + 0 %) / 2 = 50 %) and kept 2."""
    r = decide(_request(2, [_vm("small", 2), _vm("big", 8)], {"small": 2, "big": 0}))
    assert r["metrics"][0]["utilization"] == 20
    assert r["recommended_replicas"] == 1 and r["desired_replicas"] == 1


def test_cpu_utilization_of_total_vcpus_scales_out():
    """scaling-cpu: "If the average utilization of your total vCPUs exceeds the target
    utilization, the autoscaler adds more VM instances."

    An 8-vCPU VM using 7 cores and an idle 2-vCPU VM: 7 of 10 vCPUs = 70 % against
    60 % → ceil(2 × 70 / 60) = 3. The per-VM mean, (87.5 % + 0 %) / 2 = 43.75 %,
    gave ceil(1.46) = 2."""
    r = decide(_request(2, [_vm("big", 8), _vm("small", 2)], {"big": 7, "small": 0}))
    assert r["metrics"][0]["utilization"] == 70
    assert r["recommended_replicas"] == 3


def test_total_vcpu_average_still_ignores_initializing_vms_when_scaling_out():
    """REST coolDownPeriodSec (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers):
    "when scaling out, the autoscaler ignores data from VMs that are still
    initializing". With mixed vCPU counts the settled VMs' total-vCPU average decides
    the scale-out: settled 4 vCPUs at 4 cores (100 %) and 2 idle settled vCPUs →
    4 / 6 = 66.7 % → ceil(3 × 66.7 / 60) = 4; the busy 16-vCPU VM still starting
    up does not count."""
    members = [_vm("a", 4), _vm("b", 2), _vm("new", 16, age=10)]
    r = decide(_request(3, members, {"a": 4, "b": 0, "new": 16}))
    assert r["recommended_replicas"] == 4
    # once it has settled its data counts: 20 of 22 vCPUs = 90.9 % → ceil(3 × 90.9 / 60) = 5
    members = [_vm("a", 4), _vm("b", 2), _vm("new", 16, age=120)]
    r = decide(_request(3, members, {"a": 4, "b": 0, "new": 16}))
    assert r["recommended_replicas"] == 5


def test_uniform_vcpus_unchanged():
    """With equal vCPU counts the total-vCPU average is the per-VM average
    (decide page: 4 VMs at 96.25 % with target 0.7 → 6)."""
    members = [_vm(f"vm-{i}", 2) for i in range(4)]
    r = decide(_request(4, members, {m["name"]: 1.925 for m in members}, target=70))
    assert r["metrics"][0]["utilization"] == 96 and r["recommended_replicas"] == 6
