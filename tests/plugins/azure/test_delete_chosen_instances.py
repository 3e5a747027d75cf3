"""A scale-in of chosen instances: ``virtualMachineScaleSets.deleteInstances`` through
azure-mgmt-compute (``begin_delete_instances``) naming their instance ids, against the
local ARM server, which lowers the capacity by the instances deleted
(https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/delete-instances).
An instance protected from scale-in is never named
(https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-instance-protection)."""
from __future__ import annotations

import time

from scalebridge.providers import Capability

from .conftest import SUB


def deletes(arm):
    return [(p, q) for m, p, q in arm.calls if m == "POST" and p.lower().endswith("/delete")]


def _target(arm, provider, capacity):
    arm.update_polls = 0
    arm.add_scale_set(SUB, "shop", "web", capacity=capacity)
    return provider.target({"resource_group": "shop", "scale_set": "web"})


def test_the_call_names_the_chosen_instances(arm, provider):
    assert Capability.DELETE_MEMBERS in provider.capabilities
    t = _target(arm, provider, 5)
    t.observe(time.time())
    change = t.delete_members(["web_3", "web_1"], 3)
    assert change.size == 3 and change.in_flight
    assert arm.deleted == ["web_3", "web_1"]
    assert len(deletes(arm)) == 1
    ss = arm.scale_set(SUB, "shop", "web")
    assert ss.capacity == 3 and sorted(ss.vms, key=int) == ["0", "2", "4"]
    assert not [c for c in arm.calls if c[0] == "PATCH"], "deleteInstances lowered the capacity itself"


def test_a_retry_deletes_no_one_twice(arm, provider):
    t = _target(arm, provider, 4)
    t.observe(time.time())
    t.delete_members(["web_0"], 3)
    t.observe(time.time())
    t.delete_members(["web_0"], 3)        # gone: nothing is named, the capacity is already 3
    assert arm.deleted == ["web_0"] and arm.scale_set(SUB, "shop", "web").capacity == 3


def test_a_protected_instance_is_never_named(arm, provider):
    t = _target(arm, provider, 3)
    obs = t.observe(time.time())
    obs.members[0].protected = True       # as the scale set reports protectionPolicy.protectFromScaleIn
    t._last_members = obs.members
    t.delete_members(["web_0", "web_2"], 2)
    assert arm.deleted == ["web_2"]


def test_the_server_refuses_an_id_that_is_not_an_instance(arm, provider):
    t = _target(arm, provider, 2)
    t.observe(time.time())
    t._ids["ghost"] = "7"
    t._last_members.append(type(t._last_members[0])(name="ghost", phase="Running", ready=True))
    from scalebridge.providers import ProviderError
    try:
        t.delete_members(["ghost"], 1)
    except ProviderError as e:
        assert "not instances" in str(e)
    else:
        raise AssertionError("deleted an instance that is not one")
    assert arm.deleted == [] and arm.scale_set(SUB, "shop", "web").capacity == 2
