"""The gce semantics' load-balancing signal: serving capacity proportional to the
target, the 0.8 default, and initializing VMs' data.

Sources: https://cloud.google.com/compute/docs/autoscaler/scaling-load-balancing,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (loadBalancingUtilization)."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import gce_request as request, load_balancing as lb, per_vm, vms

REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
LB = "https://cloud.google.com/compute/docs/autoscaler/scaling-load-balancing"


def test_lb_group_serving_capacity_is_proportional_to_the_target():
    """LB: "autoscaling adds or removes VM instances in the group when the load balancer
    indicates that the group has reached a configurable fraction of its fullness, where
    fullness is defined by the target capacity of the selected balancing mode".
    REST loadBalancingUtilization.utilizationTarget: "Fraction of backend capacity
    utilization (set in HTTP(S) load balancing configuration) that the autoscaler
    maintains." 8 VMs at 40 % of serving capacity, target 0.8 → half the VMs: 4."""
    members = vms(8)
    r = decide(request(8, [lb(80)], {"members": members, "metrics": {"lb": {"value": 40}}}))
    assert r["metrics"][0]["replicas"] == 4 and r["recommended_replicas"] == 4
    assert r["metrics"][0]["utilization"] == 40


def test_lb_without_a_target_defaults_to_0_8():
    """REST AutoscalingPolicyLoadBalancingUtilization.utilizationTarget: "Must be a positive
    float value. If not defined, the default is 0.8." (a policy of
    ``loadBalancingUtilization: {}``). 4 VMs at 100 % → ⌈4 × 100 / 80⌉ = 5."""
    members = vms(4)
    m = {"type": "load_balancing", "name": "lb", "target": {"type": "Utilization"}}
    r = decide(request(4, [m], {"members": members, "metrics": {"lb": {"value": 100}}}))
    assert r["desired_replicas"] == 5


def test_lb_per_vm_data_of_initializing_vms_never_causes_a_scale_out():
    """REST coolDownPeriodSec: "when scaling out, the autoscaler ignores data from VMs that
    are still initializing because those VMs might not yet represent normal usage of your
    application." Two settled VMs at 40 % of capacity and two 30-s-old VMs at 200 %: the
    settled VMs do not ask for more than 4, so no scale-out."""
    members = vms(2) + vms(2, age=30, prefix="new")
    samples = {**per_vm(members[:2], 40), **per_vm(members[2:], 200)}
    r = decide(request(4, [lb(80)], {"members": members, "metrics": {"lb": {"members": samples}}}))
    assert r["desired_replicas"] == 4
