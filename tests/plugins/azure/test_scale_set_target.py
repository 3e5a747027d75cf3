"""Observing and resizing a virtual machine scale set through azure-mgmt-compute
against the local ARM server.

REST references: https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/update
(PATCH ``sku.capacity``) and .../virtual-machine-scale-set-vms/list (``$expand=instanceView``).
"""
from __future__ import annotations

import time

import pytest

from scalebridge.providers import ErrorKind, ProviderError, RefError

from .conftest import SUB


def _target(arm, provider, capacity=2, **kw):
    arm.add_scale_set(SUB, "shop", "web", capacity=capacity, **kw)
    return provider.target({"resource_group": "shop", "scale_set": "web"})


def test_observe_reads_capacity_and_ready_members(arm, provider):
    t = _target(arm, provider, capacity=2)
    obs = t.observe(time.time())
    assert obs.current_replicas == 2 and obs.status_replicas == 2 and obs.in_flight is None
    assert [m.name for m in obs.members] == ["web_0", "web_1"]
    assert all(m.ready and m.phase == "Running" and not m.deleting for m in obs.members)
    # start and ready times come from timeCreated and the ProvisioningState/succeeded status
    assert all(m.start_time <= m.ready_transition_time for m in obs.members)


def test_a_booting_instance_is_pending_and_not_ready(arm, provider):
    t = _target(arm, provider, capacity=1, boot_seconds=3600, created=time.time())
    obs = t.observe(time.time())
    (m,) = obs.members
    assert m.phase == "Pending" and m.ready is False and m.ready_transition_time is None


def test_set_size_patches_the_capacity_and_is_in_flight_until_the_scale_set_succeeds(arm, provider):
    t = _target(arm, provider, capacity=2)
    t.observe(time.time())
    change = t.set_size(3)
    assert change.size == 3 and change.in_flight and "operations/" in (change.operation or "")
    patch = [c for c in arm.calls if c[0] == "PATCH"]
    assert len(patch) == 1 and patch[0][1].endswith("/virtualMachineScaleSets/web")
    first = t.observe(time.time())          # the fake stays Updating for one read
    assert first.current_replicas == 3 and first.in_flight == "scale set provisioningState is Updating"
    settled = t.observe(time.time())
    assert settled.in_flight is None and settled.current_replicas == 3 and len(settled.members) == 3


def test_setting_the_same_size_again_is_harmless(arm, provider):
    t = _target(arm, provider, capacity=2)
    t.observe(time.time())
    t.set_size(2)
    t.observe(time.time()), t.observe(time.time())
    t.set_size(2)
    assert t.observe(time.time()).current_replicas == 2
    assert arm.scale_set(SUB, "shop", "web").capacity == 2


def test_a_write_while_an_update_runs_is_a_conflict(arm, provider):
    # ARM refuses a second update while one is in progress (409 OperationNotAllowed);
    # the controller never sends one, this checks the error kind if something else does
    t = _target(arm, provider, capacity=2)
    t.observe(time.time())
    t.set_size(3)
    with pytest.raises(ProviderError) as e:
        t.set_size(4)
    assert e.value.kind is ErrorKind.CONFLICT and "OperationNotAllowed" in e.value.message


def test_capacity_beyond_a_single_placement_group_is_invalid(arm, provider):
    # a scale set with singlePlacementGroup holds at most 100 VMs
    # (https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-placement-groups)
    t = _target(arm, provider, capacity=2)
    t.observe(time.time())
    with pytest.raises(ProviderError) as e:
        t.set_size(101)
    assert e.value.kind is ErrorKind.INVALID and "sku.capacity" in e.value.message
    assert arm.scale_set(SUB, "shop", "web").capacity == 2


def test_an_unknown_scale_set_is_not_found(arm, provider):
    t = provider.target({"resource_group": "shop", "scale_set": "nosuch"})
    with pytest.raises(ProviderError) as e:
        t.observe(time.time())
    assert e.value.kind is ErrorKind.NOT_FOUND


def test_updates_are_paced_per_scale_set(arm, provider):
    # Compute's per-resource bucket: 12 updates, then about 4 a minute
    # (https://learn.microsoft.com/azure/virtual-machines/compute-throttling-limits)
    arm.update_polls = 0
    t = _target(arm, provider, capacity=1)
    t.observe(time.time())
    for size in range(2, 14):
        t.set_size(size)
        t.observe(time.time())
    writes = sum(1 for c in arm.calls if c[0] == "PATCH")
    with pytest.raises(ProviderError) as e:
        t.set_size(20)
    assert e.value.kind is ErrorKind.THROTTLED and e.value.retry_after is None and "next in" in e.value.message
    assert sum(1 for c in arm.calls if c[0] == "PATCH") == writes == 12   # the 13th was not sent


def test_arm_saying_no_writes_remain_holds_writes(arm, provider):
    arm.update_polls = 0
    t = _target(arm, provider, capacity=1)
    t.observe(time.time())
    arm.remaining_writes = 1    # this write takes the last one: the header says 0
    t.set_size(2)
    with pytest.raises(ProviderError) as e:
        t.set_size(3)
    assert e.value.kind is ErrorKind.THROTTLED and "wait" in e.value.message


@pytest.mark.parametrize("header, value", [
    ("x-ms-ratelimit-remaining-subscription-global-writes", "0"),
    ("x-ms-ratelimit-remaining-resource", "Microsoft.Compute/VMScaleSetActionsRangeThrottle3Min;0,"
                                          "Microsoft.Compute/VMScaleSetBatchedVMRequests5Min;1180"),
])
def test_a_regional_or_compute_limit_at_0_holds_writes_without_calling_arm(arm, provider, header, value):
    """ARM's regional bucket and Compute's per-resource policies report what remains
    (https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling,
    https://learn.microsoft.com/troubleshoot/azure/virtual-machines/troubleshooting-throttling-errors)."""
    arm.update_polls = 0
    t = _target(arm, provider, capacity=1)
    t.observe(time.time())
    arm.response_headers = {header: value}
    t.set_size(2)
    with pytest.raises(ProviderError) as e:
        t.set_size(3)
    assert e.value.kind is ErrorKind.THROTTLED and "wait" in e.value.message
    assert sum(1 for c in arm.calls if c[0] == "PATCH") == 1
    assert arm.scale_set(SUB, "shop", "web").capacity == 2


def test_limits_left_above_0_hold_nothing(arm, provider):
    arm.update_polls = 0
    t = _target(arm, provider, capacity=1)
    t.observe(time.time())
    arm.response_headers = {"x-ms-ratelimit-remaining-subscription-global-writes": "199",
                            "x-ms-ratelimit-remaining-resource": "Microsoft.Compute/VMScaleSetActionsRangeThrottle3Min;10"}
    t.set_size(2)
    t.observe(time.time())      # the update is done
    t.set_size(3)
    assert arm.scale_set(SUB, "shop", "web").capacity == 3


@pytest.mark.parametrize("ref, key", [
    ({"scale_set": "web"}, "ref.resource_group"),
    ({"resource_group": "shop"}, "ref.scale_set"),
    ({"resource_group": "shop", "scale_set": "web", "zone": "1"}, "ref.zone"),
    ({"resource_group": "shop", "scale_set": "bad name!"}, "ref.scale_set"),
])
def test_a_bad_ref_names_its_key(provider, ref, key):
    with pytest.raises(RefError) as e:
        provider.target(ref)
    assert e.value.key == key


def test_a_plain_http_endpoint_is_refused(options):
    from scalebridge_azure import AzureProvider
    with pytest.raises(RefError) as e:
        AzureProvider(**{**options, "arm_endpoint": "http://127.0.0.1:1"})
    assert e.value.key == "arm_endpoint"


def test_a_flexible_scale_sets_members_are_its_virtual_machines(arm, provider):
    # https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-orchestration-modes
    t = _target(arm, provider, capacity=2, orchestration="Flexible")
    obs = t.observe(time.time())
    assert obs.details["orchestration_mode"] == "Flexible"
    assert [m.name for m in obs.members] == ["web_0", "web_1"] and all(m.ready for m in obs.members)
    listed = [c for c in arm.calls if c[1].endswith("/providers/Microsoft.Compute/virtualMachines")]
    assert listed and "virtualMachineScaleSet/id" in listed[0][2]["$filter"]


def test_standby_pool_vms_are_neither_capacity_nor_failures_and_observe_says_scalebridge_does_not_manage_the_pool(
        arm, provider):
    """A Flexible scale set with an attached standby pool (Microsoft.StandbyPool/standbyVirtualMachinePools)
    of three deallocated VMs. "When your scale set requires more instances, rather than creating new instances
    from scratch, the scale set instead uses virtual machines from the standby pool"
    (https://learn.microsoft.com/azure/virtual-machine-scale-sets/standby-pools-overview, "Scaling"): they are
    no scale set instances (not in sku.capacity) and are told apart by their instance view's
    ``isVMInStandbyPool`` (azure-mgmt-compute ``VirtualMachineInstanceView.is_vm_in_standby_pool``)."""
    arm.add_scale_set(SUB, "shop", "web", capacity=2, orchestration="Flexible")
    arm.scale_set(SUB, "shop", "web").standby_pool = 3
    obs = provider.target({"resource_group": "shop", "scale_set": "web"}).observe(time.time())
    assert obs.current_replicas == 2 and obs.status_replicas == 2
    pool = [m for m in obs.members if m.standby]
    assert len(pool) == 3 and not any(m.phase == "Failed" for m in obs.members)
    assert obs.details["standby_pool"]["standby_members"] == 3
    assert obs.details["standby_pool"]["managed_by_scalebridge"] is False
    assert "does not manage this standby pool" in obs.details["standby_pool"]["note"]


def test_the_decision_leaves_standby_pool_vms_out(arm, provider):
    """2 instances at 80 % CPU against the guide's scale-out rule decide as without the pool: the standby
    VMs are not members the azure semantics counts (engine: protocol.serving)."""
    from scalebridge import decide
    arm.add_scale_set(SUB, "shop", "web", capacity=2, orchestration="Flexible")
    arm.scale_set(SUB, "shop", "web").standby_pool = 2
    obs = provider.target({"resource_group": "shop", "scale_set": "web"}).observe(time.time())
    members = [m.model_dump(exclude_none=True) for m in obs.members]
    now = time.time()
    req = {"semantics": "azure", "now": now, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10, "rules": [
               {"metric": "cpu", "statistic": "Average", "time_grain_seconds": 60, "time_window_seconds": 300,
                "time_aggregation": "Average", "operator": "GreaterThan", "threshold": 70,
                "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 300}}]},
           "observations": {"members": members,
                            "metrics": {"cpu": {"series": [[now - 60 * j, 80] for j in range(10, 0, -1)]}}}}
    with_pool = decide(req)
    req["observations"]["members"] = [m for m in members if not m.get("standby")]
    without = decide(req)
    assert with_pool.pop("standby_replicas") == 2
    assert with_pool == without and without["desired_replicas"] == 3
