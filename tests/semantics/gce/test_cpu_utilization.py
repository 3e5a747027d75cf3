"""The gce semantics' CPU utilization signal: the average use of all vCPUs of the
group against the target, its 0.6 default, and how far one decision may scale out.

Sources: https://cloud.google.com/compute/docs/autoscaler/scaling-cpu,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (cpuUtilization),
https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    cpu, GCE_NOW as NOW, gce_request as request, GceChain, per_vm, vm_cpu_observations as cpu_obs, vms)

REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
CPU = "https://cloud.google.com/compute/docs/autoscaler/scaling-cpu"


def test_default_is_cpu_60_percent():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers: "If none of these are specified, the default will be to autoscale
    based on cpuUtilization to 0.6 or 60%." """
    members = vms(4)
    req = request(4, [], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}})
    del req["policy"]["metrics"]
    r = decide(req)
    assert r["desired_replicas"] == 6 and r["metrics"][0]["name"] == "cpu"


def test_cpu_utilization_uses_each_members_request():
    members = vms(2)
    members[1]["requests"] = {"cpu": "500m"}
    obs = {"members": members, "metrics": {"cpu": {"members": {"vm-0": 0.5, "vm-1": "500m"}}}}
    r = decide(request(2, [cpu(60)], obs))
    # "the average utilization of your total vCPUs" (scaling-cpu): 1 core used of 1.5 → 66.7 %
    # (not the per-VM mean (50 % + 100 %) / 2 = 75 %); ceil(2 × 66.7 / 60) = 3
    assert r["metrics"][0]["utilization"] == 66 and r["desired_replicas"] == 3


def test_missing_cpu_request_is_a_metric_error():
    members = vms(2)
    members[0]["requests"] = None
    r = decide(request(2, [cpu(60)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.5)}}}))
    assert r["metrics"][0]["error"] == "missing request for cpu on member vm-0"


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


def test_heavy_cpu_utilization_adds_at_most_50_percent():
    """CPU (How autoscaler handles heavy CPU utilization): "During periods of heavy CPU
    utilization, if utilization is close to 100%, the autoscaler estimates that the group might
    already be heavily overloaded. In these cases, the autoscaler increases the number of
    virtual machines by 50% at most." (The page adds: "This behavior might change in the
    future. Google recommends that you not rely on this behavior.")"""
    m = vms(4)
    r = decide(request(4, [cpu(50)], {"members": m, "metrics": {"cpu": {"members": {x["name"]: 1 for x in m}}}}))
    assert r["recommended_replicas"] <= 6


def test_cpu_without_a_target_defaults_to_0_6():
    """REST AutoscalingPolicyCpuUtilization.utilizationTarget: "The target CPU utilization
    that the autoscaler maintains. Must be a float value in the range (0, 1]. If not
    specified, the default is 0.6." (``cpuUtilization: {}``, e.g. only to set
    ``predictiveMethod``). 4 VMs at 90 % → ⌈4 × 90 / 60⌉ = 6."""
    members = vms(4)
    m = {"type": "resource", "name": "cpu", "target": {"type": "Utilization"}}
    r = decide(request(4, [m], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}))
    assert r["desired_replicas"] == 6


T0 = NOW


def test_heavy_cpu_each_decision_adds_at_most_half_of_the_group():
    """CPU: "During periods of heavy CPU utilization, if utilization is close to 100%,
    the autoscaler estimates that the group might already be heavily overloaded. In
    these cases, the autoscaler increases the number of virtual machines by 50% at
    most." Every decision of a sequence keeps within +50 % of the size it starts from.
    (How the rule repeats while the added VMs initialize is not documented; VMs not yet
    running carry none of the load: test_initialization_period.py.)"""
    c = GceChain([cpu(50)], policy={"max_replicas": 40}, current=4)
    for k in range(6):
        now = T0 + 15 * k
        before = c.current
        r = c.step(now, cpu_obs(now, 4, 1.0, young=before - 4, young_util=0.0, young_age=5))
        assert r["desired_replicas"] <= before + (before + 1) // 2, (k, before, r["desired_replicas"])
