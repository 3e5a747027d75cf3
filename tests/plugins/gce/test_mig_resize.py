"""Resizing zonal and regional MIGs: the absolute size through
``instanceGroupManagers.resize`` / ``regionInstanceGroupManagers.resize``, polled
through the operations API; an operation DONE means the resize was scheduled, and
the group is settled when ``status.isStable``
(https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers/resize)."""
from __future__ import annotations

import pytest

from scalebridge.providers import ErrorKind, ProviderError
from tests.plugins.gce.conftest import REGION, ZONE


@pytest.mark.parametrize("scope", [{"zone": ZONE}, {"region": REGION}])
def test_resize_sets_the_target_size_and_reports_the_group_in_flight_until_stable(compute, provider, now, scope):
    mig = compute.add_mig("web", size=2, **scope)
    target = provider.target({**scope, "instance_group_manager": "web"})
    change = target.set_size(6)
    assert change.size == 6 and change.in_flight and change.operation
    assert mig.target_size == 6
    obs = target.observe(now)
    assert obs.current_replicas == 6 and obs.in_flight and "creating 4" in obs.in_flight
    compute.settle(mig)
    obs = target.observe(now)
    assert obs.in_flight is None and obs.status_replicas == 6


def test_a_resize_is_polled_until_its_operation_is_done(compute, provider):
    compute.op_polls = 3
    compute.add_mig("web", zone=ZONE, size=2)
    change = provider.target({"zone": ZONE, "instance_group_manager": "web"}).set_size(3)
    assert "scheduled" in change.note
    assert provider.clients.calls["zoneOperations.wait"] == 3


def test_an_operation_still_running_is_in_flight_even_when_the_group_is_stable(compute, options, now):
    from scalebridge_gce.provider import GceProvider
    compute.op_polls = 1000
    mig = compute.add_mig("web", zone=ZONE, size=2)
    provider = GceProvider(**{**options, "operation_wait_seconds": 0})
    target = provider.target({"zone": ZONE, "instance_group_manager": "web"})
    change = target.set_size(4)
    assert change.in_flight and "RUNNING" in change.note
    compute.settle(mig)                       # the VMs exist; the operation is not DONE yet
    obs = target.observe(now)
    assert obs.in_flight == f"operation {change.operation} RUNNING"
    # another process (a second `scalebridge run --once`) sees it too
    other = GceProvider(**options).target({"zone": ZONE, "instance_group_manager": "web"})
    assert "RUNNING" in other.observe(now).in_flight


def test_a_resize_done_with_a_quota_error_is_throttled(compute, provider):
    compute.add_mig("web", zone=ZONE, size=2)
    compute.fail_next_operation("QUOTA_EXCEEDED", "Quota 'CPUS' exceeded. Limit: 24.0 in region europe-west1.")
    with pytest.raises(ProviderError) as e:
        provider.target({"zone": ZONE, "instance_group_manager": "web"}).set_size(20)
    assert e.value.kind is ErrorKind.THROTTLED
    assert "QUOTA_EXCEEDED" in str(e.value) and e.value.operation == "instanceGroupManagers.resize"


def test_a_late_operation_error_reaches_the_next_observe(compute, options, now):
    from scalebridge_gce.provider import GceProvider
    compute.op_polls = 2
    compute.add_mig("web", zone=ZONE, size=2)
    compute.fail_next_operation("QUOTA_EXCEEDED")
    target = GceProvider(**{**options, "operation_wait_seconds": 0}).target(
        {"zone": ZONE, "instance_group_manager": "web"})
    assert target.set_size(9).in_flight
    assert "RUNNING" in target.observe(now).in_flight
    with pytest.raises(ProviderError) as e:
        target.observe(now)       # the operation finishes DONE with its error
    assert e.value.kind is ErrorKind.THROTTLED
    assert target.observe(now).in_flight is None   # reported once


def test_a_retried_resize_is_answered_with_its_first_operation(compute, provider):
    """A 503 on the first attempt: the retry carries the same requestId."""
    mig = compute.add_mig("web", zone=ZONE, size=2)
    compute.fail(503, method="POST", path="/resize")
    change = provider.target({"zone": ZONE, "instance_group_manager": "web"}).set_size(5)
    assert mig.target_size == 5 and change.size == 5
    assert compute.count("POST /compute/v1/projects/test-project/zones/europe-west1-b/instanceGroupManagers/web/resize") == 2
    assert len(compute.operations) == 1


def test_setting_the_current_size_changes_nothing(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=3)
    target = provider.target({"zone": ZONE, "instance_group_manager": "web"})
    target.set_size(3)
    obs = target.observe(now)
    assert obs.current_replicas == 3 and obs.in_flight is None and len(mig.vms) == 3


def test_scale_in_deletes_members_until_the_group_settles(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=4)
    target = provider.target({"zone": ZONE, "instance_group_manager": "web"})
    target.set_size(2)
    obs = target.observe(now)
    assert obs.current_replicas == 2 and obs.status_replicas == 2 and "deleting 2" in obs.in_flight
    compute.settle(mig)
    assert target.observe(now).in_flight is None and len(mig.vms) == 2


def test_a_negative_size_is_refused_before_any_call(compute, provider):
    compute.add_mig("web", zone=ZONE, size=2)
    with pytest.raises(ProviderError) as e:
        provider.target({"zone": ZONE, "instance_group_manager": "web"}).set_size(-1)
    assert e.value.kind is ErrorKind.INVALID and compute.count("resize") == 0
