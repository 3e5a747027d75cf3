"""A scale-in of chosen instances: ``instanceGroupManagers.deleteInstances`` (and the
regional one) naming them by URL, with ``skipInstancesOnValidationError`` so that an
instance already gone or being deleted is skipped; it lowers ``targetSize`` by the
instances deleted, so no resize follows unless the selection is partial
(https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers/deleteInstances).
The local server is strict as Compute is: without the flag, such an instance fails
the request."""
from __future__ import annotations

import json
import urllib.request

import pytest

from scalebridge.providers import Capability
from tests.plugins.gce.conftest import PROJECT, REGION, ZONE


@pytest.mark.parametrize("scope", [{"zone": ZONE}, {"region": REGION}])
def test_the_call_names_the_chosen_instances(compute, provider, now, scope):
    assert Capability.DELETE_MEMBERS in provider.capabilities
    mig = compute.add_mig("web", size=5, **scope)
    names = [v.name for v in mig.vms]
    target = provider.target({**scope, "instance_group_manager": "web"})
    target.observe(now)
    change = target.delete_members([names[3], names[0]], 3)
    assert change.size == 3
    assert compute.deleted == [names[3], names[0]]
    assert mig.target_size == 3, "deleteInstances lowered the target size"
    assert not [c for c in compute.calls if c[1].endswith("/resize")], "no resize after it"
    compute.settle(mig)
    assert sorted(v.name for v in mig.vms) == sorted([names[1], names[2], names[4]])


def test_a_retry_or_a_restart_deletes_no_one_twice(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=4)
    names = [v.name for v in mig.vms]
    target = provider.target({"zone": ZONE, "instance_group_manager": "web"})
    target.observe(now)
    target.delete_members([names[1]], 3)
    target.observe(now)                        # being deleted: not named again
    target.delete_members([names[1]], 3)
    assert compute.deleted == [names[1]] and mig.target_size == 3


def test_a_partial_selection_resizes_for_the_rest(compute, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=5)
    names = [v.name for v in mig.vms]
    target = provider.target({"zone": ZONE, "instance_group_manager": "web"})
    target.observe(now)
    target.delete_members([names[2]], 2)
    assert compute.deleted == [names[2]] and mig.target_size == 2
    assert [c for c in compute.calls if c[1].endswith("/resize")]


def test_the_server_refuses_a_non_member_without_the_skip_flag(compute):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    url = (f"{compute.endpoint}/compute/v1/projects/{PROJECT}/zones/{ZONE}/instanceGroupManagers/web/"
           "deleteInstances")
    gone = f"projects/{PROJECT}/zones/{ZONE}/instances/not-a-member"
    for skip, status in ((False, 400), (True, 200)):
        body = json.dumps({"instances": [gone], "skipInstancesOnValidationError": skip}).encode()
        req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            got = urllib.request.urlopen(req).status
        except urllib.error.HTTPError as e:
            got = e.code
        assert got == status
    assert mig.target_size == 2 and compute.deleted == []
