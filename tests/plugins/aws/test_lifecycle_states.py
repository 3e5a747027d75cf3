"""Each lifecycle state as the ``aws`` semantics expects its member (one group
shared by the module, one instance moved to each state in turn).

Lifecycle states: https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-lifecycle.html
("Pending", "Pending:Wait" while a launch lifecycle hook runs, "InService",
"Terminating", "Terminating:Wait", "Standby"); warm pool instances are outside
the group's desired capacity until they leave the pool
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-warm-pools.html).
How the semantics reads members: scalebridge.stages.warmup — Pending: a
scale-out in progress, in no capacity; Running and not ready: not in service;
Running and deleting: terminating, counted in a scale-in's base."""
from __future__ import annotations

import time

import pytest

from scalebridge.stages.warmup import GroupCapacity
from scalebridge.protocol import Observations


@pytest.fixture(scope="module")
def group(module_world):
    ids = module_world.group("web", desired=3)
    from scalebridge_aws.provider import AwsProvider
    p = AwsProvider(region="us-east-1", endpoint_url=module_world.url, max_attempts=1)
    yield module_world, ids, p
    p.close()


def observe_with(group, state, health=None, desired=None):
    world, ids, p = group
    world.set_state(ids[0], state, health=health)
    g = world.backend_group()
    if desired is not None:
        g.desired_capacity = desired      # as after a SetDesiredCapacity, before the instance is gone
    try:
        return ids, p.target({"auto_scaling_group": "web"}).observe(time.time())
    finally:
        world.set_state(ids[0], "InService", health="Healthy")
        g.desired_capacity = 3


def fleet(obs):
    o = Observations.model_validate({"status_replicas": obs.status_replicas, "members": obs.members})
    return GroupCapacity(time.time(), obs.current_replicas, o.status_replicas, o.members)


@pytest.mark.parametrize("state", ["Pending", "Pending:Wait", "Pending:Proceed"])
def test_launching_is_pending_a_scale_out_in_progress(shared, group, state):
    ids, obs = observe_with(group, state)
    m = next(m for m in obs.members if m["name"] == ids[0])
    assert (m["phase"], m["ready"], m.get("deleting")) == ("Pending", False, None)
    f = fleet(obs)
    assert f.scale_out_in_progress and f.activity_in_progress and f.in_service == 2 and f.base_in == 2


def test_in_service_is_running_and_ready(shared, group):
    ids, obs = observe_with(group, "InService")
    assert all((m["phase"], m["ready"]) == ("Running", True) for m in obs.members)
    f = fleet(obs)
    assert not f.activity_in_progress and f.in_service == 3


def test_in_service_but_unhealthy_is_not_ready(shared, group):
    ids, obs = observe_with(group, "InService", health="Unhealthy")
    m = next(m for m in obs.members if m["name"] == ids[0])
    assert (m["phase"], m["ready"]) == ("Running", False)
    assert fleet(obs).in_service == 2


@pytest.mark.parametrize("state", ["Terminating", "Terminating:Wait", "Terminating:Proceed"])
def test_terminating_is_deleting_and_in_a_scale_ins_base(shared, group, state):
    """A scale-in from 3 to 2: "we consider instances that are terminating as
    part of the current capacity of the group" (UG as-scaling-simple-step.html#as-step-scaling-warmup)."""
    ids, obs = observe_with(group, state, desired=2)
    m = next(m for m in obs.members if m["name"] == ids[0])
    assert (m["phase"], m.get("deleting")) == ("Running", True)
    f = fleet(obs)
    assert f.base_in == 3 and f.in_service == 2 and f.activity_in_progress and not f.scale_out_in_progress


def test_terminating_while_the_desired_capacity_stays_is_a_replacement(shared, group):
    """3 desired, one terminating (a health replacement): a launch follows — a
    scale-out in progress, so no scale-in starts."""
    ids, obs = observe_with(group, "Terminating")
    f = fleet(obs)
    assert obs.status_replicas == 2 and f.scale_out_in_progress


@pytest.mark.parametrize("state", ["EnteringStandby", "Standby", "Detaching", "Detached",
                                   "Warmed:Pending", "Warmed:Running", "Warmed:Stopped", "Warmed:Hibernated"])
def test_standby_detached_and_warm_pool_instances_are_no_members(shared, group, state):
    ids, obs = observe_with(group, state)
    assert ids[0] not in {m["name"] for m in obs.members}
    assert obs.status_replicas == 2 and obs.details["lifecycle_states"][state] == 1
