"""Observing a MIG: targetSize, members from managed instances, start times and
vCPUs from instances, and the operation in flight while the group is not stable
(https://cloud.google.com/compute/docs/instance-groups/working-with-managed-instances#checking_whether_a_mig_is_stable)."""
from __future__ import annotations

import pytest

from tests.plugins.gce.conftest import REGION, ZONE


def test_a_zonal_group_reads_its_target_size_and_running_members(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=3, machine_type="n1-standard-4",
                          started=[now - 3600, now - 1800, now - 30])
    obs = provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    assert obs.current_replicas == 3 and obs.status_replicas == 3 and obs.in_flight is None
    by_name = {m.name: m for m in obs.members}
    assert set(by_name) == {v.name for v in mig.vms}
    for vm in mig.vms:
        m = by_name[vm.name]
        assert m.phase == "Running" and m.ready is True
        assert m.requests == {"cpu": 4}                  # n1-standard-4: 4 vCPUs
        assert m.start_time == pytest.approx(vm.started, abs=0.01)   # lastStartTimestamp


def test_a_regional_group_reads_members_across_its_zones(compute, provider, now):
    mig = compute.add_mig("api", region=REGION, size=5)
    target = provider.target({"region": REGION, "instance_group_manager": "api"})
    obs = target.observe(now)
    assert obs.current_replicas == 5
    assert {m.name for m in obs.members} == {v.name for v in mig.vms}
    assert all(m.start_time is not None and m.requests == {"cpu": 2} for m in obs.members)
    # one instances.list per zone the group spans, one machine type read once
    assert provider.clients.calls["instances.list"] == 3
    assert provider.clients.calls["machineTypes.get"] == 3   # one per zone: machine types are zonal
    target.observe(now)
    assert provider.clients.calls["machineTypes.get"] == 3   # cached


def test_a_group_creating_instances_is_in_flight_and_its_new_members_pending(compute, provider, now):
    compute.add_mig("web", zone=ZONE, size=4, actions=["NONE", "NONE", "CREATING", "VERIFYING"])
    obs = provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    assert obs.in_flight is not None and "not stable" in obs.in_flight and "creating 1" in obs.in_flight
    phases = sorted((m.phase, m.ready) for m in obs.members)
    assert phases == [("Pending", False), ("Pending", False), ("Running", True), ("Running", True)]


def test_deleting_members_are_marked_and_not_counted_present(compute, provider, now):
    compute.add_mig("web", zone=ZONE, size=3, actions=["NONE", "NONE", "DELETING"])
    obs = provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    assert obs.status_replicas == 2
    assert [m.deleting for m in obs.members].count(True) == 1
    assert obs.in_flight is not None


def test_members_are_protocol_members(compute, provider, now):
    from scalebridge.protocol import Member
    compute.add_mig("web", zone=ZONE, size=3, actions=["NONE", "CREATING", "DELETING"])
    obs = provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    for m in obs.members:
        Member.model_validate(m.model_dump(exclude_none=True))


def test_a_missing_group_is_not_found(compute, provider, now):
    from scalebridge.providers import ErrorKind, ProviderError
    with pytest.raises(ProviderError) as e:
        provider.target({"zone": ZONE, "instance_group_manager": "nope"}).observe(now)
    assert e.value.kind is ErrorKind.NOT_FOUND and "instanceGroupManagers.get" in str(e.value)


def test_running_instances_are_read_once_and_new_or_restarted_ones_again(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    target = provider.target({"zone": ZONE, "instance_group_manager": "web"})
    target.observe(now)
    target.observe(now)
    assert provider.clients.calls["instances.list"] == 1
    target.set_size(3)
    target.observe(now)                 # the new VM is CREATING: read on every sync until it runs
    compute.settle(mig)
    obs = target.observe(now)           # now RUNNING: read, with its start time
    calls = provider.clients.calls["instances.list"]
    target.observe(now)
    assert provider.clients.calls["instances.list"] == calls   # and not again
    new = mig.vms[-1]
    assert {m.name: m for m in obs.members}[new.name].start_time == pytest.approx(new.started, abs=0.01)
    mig.vms[0].status, mig.vms[0].action = "STOPPING", "RESTARTING"
    target.observe(now)
    mig.vms[0].status, mig.vms[0].action, mig.vms[0].started = "RUNNING", "NONE", now - 5
    obs = target.observe(now)           # back up: its new lastStartTimestamp is read
    assert {m.name: m for m in obs.members}[mig.vms[0].name].start_time == pytest.approx(now - 5, abs=0.01)


def test_a_large_group_is_read_in_pages_and_chunks(compute, monitoring, provider, now):
    """listManagedInstances pages at maxResults 500; instances are listed 100 names
    a call and Monitoring asked about 100 instance ids a call."""
    from scalebridge.providers import MetricQuery
    from tests.plugins.gce.conftest import cpu_series
    mig = compute.add_mig("big", zone=ZONE, size=620)
    cpu_series(monitoring, mig, [0.5] * 620, now)
    target = provider.target({"zone": ZONE, "instance_group_manager": "big"})
    obs = target.observe(now)
    assert len(obs.members) == 620 and all(m.start_time is not None for m in obs.members)
    assert compute.count("listManagedInstances") == 2
    assert provider.clients.calls["instances.list"] == 7
    got = target.read_metrics(now, obs, [MetricQuery("cpu", "resource", {}, 60.0)])
    assert len(got["cpu"].members) == 620 and len(monitoring.requests) == 7
