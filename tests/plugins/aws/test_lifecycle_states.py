"""Each lifecycle state as the ``aws`` semantics expects its member (one group
shared by the module, one instance moved to each state in turn).

Lifecycle states: https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-lifecycle.html
("Pending", "Pending:Wait" while a launch lifecycle hook runs, "InService",
"Terminating", "Terminating:Wait", "Standby"); warm pool instances are outside
the group's desired capacity until they leave the pool
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-warm-pools.html);
"Retained instances do not count toward your Amazon EC2 Auto Scaling group's
desired capacity" (https://docs.aws.amazon.com/autoscaling/ec2/userguide/manage-retained-instances.html);
an instance whose root volume an instance refresh replaces goes through
"ReplacingRootVolume", "ReplacingRootVolume:Wait", "ReplacingRootVolume:Proceed",
"RootVolumeReplaced" and is health-checked before it is back in service
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/replace-root-volume.html).
Every value of the API's LifecycleState enum (botocore's own service model) has
a test here.
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
    """The group as the aws semantics reads it: standby members left out first, as engine.run does."""
    from scalebridge.protocol import serving
    o = Observations.model_validate({"status_replicas": obs.status_replicas, "members": obs.members})
    members, _ = serving(o.members)
    return GroupCapacity(time.time(), obs.current_replicas, o.status_replicas, members)


LAUNCHING = ["Pending", "Pending:Wait", "Pending:Proceed"]
ROOT_VOLUME = ["ReplacingRootVolume", "ReplacingRootVolume:Wait", "ReplacingRootVolume:Proceed", "RootVolumeReplaced"]
TERMINATING = ["Terminating", "Terminating:Wait", "Terminating:Proceed"]
IN_POOL = ["EnteringStandby", "Standby", "Warmed:Pending", "Warmed:Pending:Wait", "Warmed:Pending:Proceed",
           "Warmed:Pending:Retained", "Warmed:Running", "Warmed:Stopped", "Warmed:Hibernated"]
OUTSIDE = ["Detaching", "Detached", "Terminated", "Quarantined", "Terminating:Retained",
           "Warmed:Terminating", "Warmed:Terminating:Wait", "Warmed:Terminating:Proceed",
           "Warmed:Terminating:Retained", "Warmed:Terminated"]


def test_every_lifecycle_state_of_the_api_has_a_test():
    """The states tested here are exactly the ``LifecycleState`` enum of the Auto
    Scaling API model botocore ships (API_Instance.html)."""
    import botocore.session
    model = botocore.session.get_session().get_service_model("autoscaling")
    api = model.shape_for("LifecycleState").enum
    tested = LAUNCHING + ["InService"] + ROOT_VOLUME + TERMINATING + IN_POOL + OUTSIDE
    assert len(tested) == len(set(tested))
    assert sorted(tested) == sorted(api)


@pytest.mark.parametrize("state", LAUNCHING)
def test_launching_is_pending_a_scale_out_in_progress(shared, group, state):
    ids, obs = observe_with(group, state)
    m = next(m for m in obs.members if m.name == ids[0])
    assert (m.phase, m.ready, m.deleting) == ("Pending", False, False)
    f = fleet(obs)
    assert f.scale_out_in_progress and f.activity_in_progress and f.in_service == 2 and f.base_in == 2


def test_in_service_is_running_and_ready(shared, group):
    ids, obs = observe_with(group, "InService")
    assert all((m.phase, m.ready) == ("Running", True) for m in obs.members)
    f = fleet(obs)
    assert not f.activity_in_progress and f.in_service == 3


def test_in_service_but_unhealthy_is_not_ready(shared, group):
    ids, obs = observe_with(group, "InService", health="Unhealthy")
    m = next(m for m in obs.members if m.name == ids[0])
    assert (m.phase, m.ready) == ("Running", False)
    assert fleet(obs).in_service == 2


@pytest.mark.parametrize("state", ROOT_VOLUME)
def test_a_root_volume_replacement_is_in_the_group_but_not_in_service(shared, group, state):
    """The instance stays in the group (the scale-in base) but serves nothing
    until it is back InService: no scale-in starts meanwhile."""
    ids, obs = observe_with(group, state)
    m = next(m for m in obs.members if m.name == ids[0])
    assert (m.phase, m.ready, m.deleting) == ("Running", False, False)
    assert obs.status_replicas == 3
    f = fleet(obs)
    assert f.in_service == 2 and f.base_in == 3 and f.scale_out_in_progress and f.activity_in_progress


@pytest.mark.parametrize("state", TERMINATING)
def test_terminating_is_deleting_and_in_a_scale_ins_base(shared, group, state):
    """A scale-in from 3 to 2: "we consider instances that are terminating as
    part of the current capacity of the group" (UG as-scaling-simple-step.html#as-step-scaling-warmup)."""
    ids, obs = observe_with(group, state, desired=2)
    m = next(m for m in obs.members if m.name == ids[0])
    assert (m.phase, m.deleting) == ("Running", True)
    f = fleet(obs)
    assert f.base_in == 3 and f.in_service == 2 and f.activity_in_progress and not f.scale_out_in_progress


def test_terminating_while_the_desired_capacity_stays_is_a_replacement(shared, group):
    """3 desired, one terminating (a health replacement): a launch follows — a
    scale-out in progress, so no scale-in starts."""
    ids, obs = observe_with(group, "Terminating")
    f = fleet(obs)
    assert obs.status_replicas == 2 and f.scale_out_in_progress


@pytest.mark.parametrize("state", IN_POOL)
def test_warm_pool_and_standby_instances_are_standby_members_neither_capacity_nor_failures(shared, group, state):
    """"As instances leave the warm pool, they count toward the desired capacity of the group"
    (UG ec2-auto-scaling-warm-pools.html, "Core concepts"); "instances that are on standby are still part
    of the Auto Scaling group, but they do not actively handle load" (UG as-enter-exit-standby.html)."""
    ids, obs = observe_with(group, state)
    m = next(m for m in obs.members if m.name == ids[0])
    assert m.standby and m.phase != "Failed" and not m.deleting
    assert obs.status_replicas == 2 and obs.details["lifecycle_states"][state] == 1
    f = fleet(obs)
    assert f.in_service == 2 and f.base_in == 2


@pytest.mark.parametrize("state", OUTSIDE)
def test_detached_retained_and_leaving_warm_pool_instances_are_no_members(shared, group, state):
    ids, obs = observe_with(group, state)
    assert ids[0] not in {m.name for m in obs.members}
    assert obs.status_replicas == 2 and obs.details["lifecycle_states"][state] == 1


def test_a_retained_instance_beside_its_replacement_is_a_settled_group(shared, group):
    """Desired 2, two InService and one Terminating:Retained (its replacement
    already launched): the group is settled — no DescribeScalingActivities, no
    operation in flight, the retained instance in no capacity."""
    world = group[0]
    ids, obs = observe_with(group, "Terminating:Retained", desired=2)
    assert obs.current_replicas == 2 and obs.status_replicas == 2 and obs.in_flight is None
    assert ids[0] not in {m.name for m in obs.members}
    assert world.proxy.count("DescribeScalingActivities") == 0
    f = fleet(obs)
    assert not f.activity_in_progress and f.in_service == 2 and f.base_in == 2
