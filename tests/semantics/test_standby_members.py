"""Members in standby (``members[].standby``: a GCE MIG's standby pool, an AWS warm pool,
an Azure standby pool) are neither capacity nor failures: no semantics counts them.

Sources: a MIG's ``targetSize`` is "the target number of running instances", its standby
VMs are counted by ``targetSuspendedSize`` and ``targetStoppedSize``
(https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers; "About
suspending and stopping VMs in a MIG",
https://cloud.google.com/compute/docs/instance-groups/suspended-and-stopped-vms-in-mig);
"As instances leave the warm pool, they count toward the desired capacity of the group"
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-warm-pools.html,
"Core concepts"); a scale set's standby pool VMs join it on scale-out
(https://learn.microsoft.com/azure/virtual-machine-scale-sets/standby-pools-overview, "Scaling").
"""
import copy

import pytest

from scalebridge import decide
from scalebridge.engine import builtin_semantics
from scalebridge.testing.requests import GCE_NOW, NOW, aws_request, cpu, gce_request, instances, per_vm, vms


def suspended(n: int, now: float = GCE_NOW) -> list[dict]:
    """``n`` VMs of a standby pool, as the gce provider reports them."""
    return [{"name": f"pool-{i}", "phase": "Pending", "ready": False, "start_time": now - 7200,
             "requests": {"cpu": 1}, "standby": True} for i in range(n)]


def test_gce_standby_vms_do_not_hold_back_a_scale_out():
    """Three running VMs at 90 % of their vCPUs against a 60 % target need
    ceil(3 × 90 / 60) = 5 VMs. Two suspended VMs beside them change nothing: they are not
    in targetSize (3) and serve no load. Reported as failed VMs instead (what the gce
    provider did before standby pools), they were taken for VMs still starting, and the
    scale-out waited for them."""
    running = vms(3)
    pool = suspended(2)
    req = gce_request(3, [cpu(60)], {"members": running + pool,
                                     "metrics": {"cpu": {"members": per_vm(running, 0.9), "timestamp": GCE_NOW,
                                                         "window": 60}}})
    r = decide(req)
    assert r["desired_replicas"] == 5
    assert r["standby_replicas"] == 2

    as_failed = copy.deepcopy(req)
    for m in as_failed["observations"]["members"][3:]:
        m.update(phase="Failed", standby=False)
    assert decide(as_failed)["desired_replicas"] == 3


def test_neutral_semantics_counts_standby_vms_as_gce_does():
    running = vms(3)
    req = gce_request(3, [cpu(60)], {"members": running + suspended(2),
                                     "metrics": {"cpu": {"members": per_vm(running, 0.9), "timestamp": GCE_NOW,
                                                         "window": 60}}})
    r = decide(req, "scalebridge")
    assert r["desired_replicas"] == 5 and r["standby_replicas"] == 2


def test_aws_warm_pool_instances_are_not_in_service_capacity():
    """Two instances in service at 90 % CPU against a 50 % target: ceil(2 × 90 / 50) = 4.
    Two warm-pool instances reported running beside them are not capacity: taken as
    in service they would make the scale-out ceil(4 × 90 / 50) = 8."""
    req = aws_request(2, 90, metrics=[cpu(50)], members=instances(2) + instances(2, prefix="warm", standby=True))
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["standby_replicas"] == 2


def test_a_standby_member_with_samples_adds_no_load():
    """A standby VM's stale sample (a VM suspended a minute ago) is no sample of the group."""
    running = vms(2)
    pool = suspended(1)
    samples = {**per_vm(running, 0.3), "pool-0": 1.0}
    req = gce_request(2, [cpu(60)], {"members": running + pool,
                                     "metrics": {"cpu": {"members": samples, "timestamp": GCE_NOW, "window": 60}}})
    assert decide(req)["metrics"][0]["utilization"] == 30


@pytest.mark.parametrize("semantics", builtin_semantics())
def test_standby_members_never_change_a_decision(semantics):
    """Under every semantics, a request with standby members beside its members decides as the
    same request without them, and says how many it left out."""
    if semantics == "gce":
        running = vms(4)
        req = gce_request(4, [cpu(60)], {"members": running,
                                         "metrics": {"cpu": {"members": per_vm(running, 0.8), "timestamp": GCE_NOW,
                                                             "window": 60}}})
    else:
        req = aws_request(4, 80)
        req["semantics"] = semantics
        req["policy"]["metrics"] = [cpu(50)]
        req["observations"]["members"] = [{**m, "requests": {"cpu": 1}} for m in instances(4)]
        req["observations"]["metrics"] = {"cpu": {"members": {f"i-{k}": 0.8 for k in range(4)}, "timestamp": NOW,
                                                  "window": 60, "series": [[NOW - 60 * j, 80] for j in range(16)]}}
    plain = decide(req, semantics)
    with_pool = copy.deepcopy(req)
    with_pool["observations"]["members"] = req["observations"]["members"] + [
        {"name": f"pool-{i}", "phase": phase, "ready": ready, "requests": {"cpu": 1}, "standby": True}
        for i, (phase, ready) in enumerate([("Pending", False), ("Running", True), ("Failed", False)])]
    got = decide(with_pool, semantics)
    assert got.pop("standby_replicas") == 3
    assert got == plain
