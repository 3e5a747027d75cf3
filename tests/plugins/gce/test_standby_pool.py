"""A MIG with a standby pool of suspended and stopped VMs, on the local Compute server.

Sources:
- ``targetSize`` is "the target number of running instances"; the pool's VMs are counted by
  ``targetSuspendedSize`` and ``targetStoppedSize``
  (https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers; google-cloud-compute
  ``InstanceGroupManager.target_suspended_size``: "This number changes when you: Suspend instance using
  the suspendInstances method or resume instances using the resumeInstances method").
- ``standbyPolicy.mode``: ``SCALE_OUT_POOL`` — "MIG automatically resumes or starts VMs in the standby
  pool when the group scales out, and replenishes the standby pool afterwards"; ``MANUAL`` — "MIG does not
  automatically resume or start VMs in the standby pool when the group scales out"
  (google-cloud-compute ``InstanceGroupManagerStandbyPolicy.Mode``).
- "if for some reason you prefer to use a different autoscaler, use the endpoints of the MIG API to
  handle suspended and stopped VMs" ("Accelerate MIG scale out with standby pools",
  https://cloud.google.com/compute/docs/instance-groups/accelerate-mig-scale-out-with-standby-pools,
  "Use MIG API for autoscaling").
"""
from __future__ import annotations

import json

import pytest

from scalebridge.cli import main
from tests.plugins.gce.conftest import ZONE, cpu_series
from tests.plugins.gce.test_run_once import CPU_POLICY, Runner, queue

REF = {"zone": ZONE, "instance_group_manager": "web"}


def test_suspended_and_stopped_vms_of_the_pool_are_standby_not_failed(compute, provider, now):
    compute.add_mig("web", zone=ZONE, size=3, suspended=2, stopped=1, standby_mode="SCALE_OUT_POOL")
    obs = provider.target(REF).observe(now)
    assert obs.current_replicas == 3 and obs.status_replicas == 3
    standby = [m for m in obs.members if m.standby]
    assert len(standby) == 3 and not any(m.phase == "Failed" for m in obs.members)
    assert obs.details["standby_pool"] == {
        "mode": "SCALE_OUT_POOL", "target_suspended_size": 2, "target_stopped_size": 1, "standby_members": 3,
        "managed_by_scalebridge": True, "note": obs.details["standby_pool"]["note"]}


def test_a_stopped_vm_outside_any_pool_is_still_failed(compute, provider, now):
    """Without a standby pool, a VM found STOPPED is not one the group keeps ready."""
    mig = compute.add_mig("web", zone=ZONE, size=3)
    mig.vms[2].status = "STOPPED"
    obs = provider.target(REF).observe(now)
    assert [m.phase for m in obs.members].count("Failed") == 1 and not any(m.standby for m in obs.members)


def test_scale_out_of_a_scale_out_pool_group_resumes_standby_vms_first(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=2, suspended=2, stopped=1, standby_mode="SCALE_OUT_POOL")
    pool = {v.name for v in mig.vms if v.status != "RUNNING"}
    target = provider.target(REF)
    target.observe(now)
    change = target.set_size(6)
    assert "resumes or starts standby VMs first" in change.note
    actions = {v.name: v.action for v in mig.vms}
    assert sorted(actions[n] for n in pool) == ["RESUMING", "RESUMING", "STARTING"]
    assert mig.target_size == 6 and mig.target_suspended_size == 2 and mig.target_stopped_size == 1
    # one VM created to serve (6 = 2 running + 3 from the pool + 1), three to refill the pool
    obs = target.observe(now)
    serving = [m for m in obs.members if not m.standby]
    assert len(serving) == 6 and sum(1 for m in obs.members if m.standby) == 3
    assert obs.status_replicas == 6 and not any(m.phase == "Failed" for m in obs.members)
    compute.settle(mig)
    assert sorted(v.status for v in mig.vms) == ["RUNNING"] * 6 + ["STOPPED"] + ["SUSPENDED"] * 2


def test_scale_out_of_a_manual_pool_group_only_creates(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=2, suspended=2, standby_mode="MANUAL")
    target = provider.target(REF)
    obs = target.observe(now)
    assert "does not manage this standby pool" in obs.details["standby_pool"]["note"]
    assert obs.details["standby_pool"]["managed_by_scalebridge"] is False
    target.set_size(4)
    assert sorted(v.action for v in mig.vms) == ["CREATING", "CREATING", "NONE", "NONE", "NONE", "NONE"]
    assert [v.status for v in mig.vms].count("SUSPENDED") == 2


def test_scale_in_deletes_running_vms_never_standby_ones(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=4, suspended=2, standby_mode="SCALE_OUT_POOL")
    target = provider.target(REF)
    target.observe(now)
    target.set_size(2)
    deleting = [v for v in mig.vms if v.action == "DELETING"]
    assert len(deleting) == 2 and all(v.status == "RUNNING" for v in deleting)


@pytest.mark.parametrize("verb, status, moved", [("resumeInstances", "SUSPENDED", "targetSuspendedSize"),
                                                 ("startInstances", "STOPPED", "targetStoppedSize")])
def test_resume_and_start_move_named_vms_out_of_the_pool(compute, provider, verb, status, moved, now):
    """google-cloud-compute ``resume_instances``: "increases the targetSize and decreases the
    targetSuspendedSize … by the number of instances that you resume" (``start_instances`` the same with
    ``targetStoppedSize``)."""
    from google.cloud import compute_v1
    mig = compute.add_mig("web", zone=ZONE, size=1, suspended=1, stopped=1)
    vm = next(v for v in mig.vms if v.status == status)
    client = provider.clients.compute("InstanceGroupManagersClient")
    url = f"https://www.googleapis.com/compute/v1/projects/{mig.project}/zones/{ZONE}/instances/{vm.name}"
    if verb == "resumeInstances":
        body = compute_v1.InstanceGroupManagersResumeInstancesRequest(instances=[url])
        client.resume_instances_unary(project=mig.project, zone=ZONE, instance_group_manager="web",
                                      instance_group_managers_resume_instances_request_resource=body)
    else:
        body = compute_v1.InstanceGroupManagersStartInstancesRequest(instances=[url])
        client.start_instances_unary(project=mig.project, zone=ZONE, instance_group_manager="web",
                                     instance_group_managers_start_instances_request_resource=body)
    got = client.get(project=mig.project, zone=ZONE, instance_group_manager="web")
    assert got.target_size == 2
    assert (got.target_suspended_size, got.target_stopped_size) == ((0, 1) if moved == "targetSuspendedSize"
                                                                    else (1, 0))
    assert vm.action == ("RESUMING" if status == "SUSPENDED" else "STARTING")


def test_resuming_a_running_vm_is_refused_as_the_api_refuses_it(compute, provider):
    from google.api_core import exceptions
    from google.cloud import compute_v1
    mig = compute.add_mig("web", zone=ZONE, size=1, suspended=1)
    running = next(v for v in mig.vms if v.status == "RUNNING")
    url = f"https://www.googleapis.com/compute/v1/projects/{mig.project}/zones/{ZONE}/instances/{running.name}"
    client = provider.clients.compute("InstanceGroupManagersClient")
    with pytest.raises(exceptions.BadRequest):
        client.resume_instances_unary(
            project=mig.project, zone=ZONE, instance_group_manager="web",
            instance_group_managers_resume_instances_request_resource=compute_v1.
            InstanceGroupManagersResumeInstancesRequest(instances=[url]))
    assert mig.target_size == 1 and mig.target_suspended_size == 1


def test_run_scales_a_pool_group_out_through_its_pool_and_audits_it(compute, monitoring, options, tmp_path, now):
    """3 running VMs at 90 % CPU against 60 %: ceil(3 × 90 / 60) = 5. The two suspended VMs of the pool
    are not failed VMs the scale-out would wait for: the run resizes to 5, the MIG resumes them, and the
    audit records the decision with the standby members it left out."""
    mig = compute.add_mig("web", zone=ZONE, size=3, suspended=2, standby_mode="SCALE_OUT_POOL")
    cpu_series(monitoring, mig, [0.9, 0.9, 0.9], now)
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": REF}], policy=CPU_POLICY, metrics={})
    assert rc == 0 and rec["action"] == "applied", rec
    assert rec["current_replicas"] == 3 and rec["desired_replicas"] == 5
    assert mig.target_size == 5
    assert sorted(v.action for v in mig.vms if v.goal == "RUNNING" and v.action != "NONE") == ["RESUMING"] * 2
    assert rec["standby_replicas"] == 2, rec   # the pool, left out of the decision
