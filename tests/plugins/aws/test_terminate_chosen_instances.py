"""A scale-in of chosen instances: ``TerminateInstanceInAutoScalingGroup`` with
``ShouldDecrementDesiredCapacity`` true, naming each chosen instance, against moto
through the proxy (which refuses, as Auto Scaling does, a missing decrement flag and a
decrement at MinSize: "Terminating instance without replacement will violate group's
min size constraint", https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_TerminateInstanceInAutoScalingGroup.html).
Instances protected from scale-in are never named
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-instance-protection.html)."""
from __future__ import annotations

import time

from scalebridge.providers import Capability


def terminations(proxy):
    return [(c.params["InstanceId"], c.params["ShouldDecrementDesiredCapacity"], c.status)
            for c in proxy.calls if c.action == "TerminateInstanceInAutoScalingGroup"]


def test_the_calls_name_the_chosen_instances_and_decrement(world, provider, proxy):
    ids = world.group("web", desired=5, min_size=1)
    t = provider().target({"auto_scaling_group": "web"})
    assert Capability.DELETE_MEMBERS in provider().capabilities
    t.observe(time.time())
    chosen = [ids[3], ids[1]]
    change = t.delete_members(chosen, 3)
    assert change.size == 3
    assert terminations(proxy) == [(ids[3], "true", 200), (ids[1], "true", 200)]
    assert world.desired() == 3
    assert not [c for c in proxy.calls if c.action == "SetDesiredCapacity"], "the decrement set the size"
    left = set(world.instances())
    assert ids[3] not in left and ids[1] not in left and {ids[0], ids[2], ids[4]} <= left


def test_a_retry_terminates_no_one_twice(world, provider, proxy):
    ids = world.group("web", desired=4, min_size=1)
    t = provider().target({"auto_scaling_group": "web"})
    t.observe(time.time())
    t.delete_members([ids[0]], 3)
    t.delete_members([ids[0]], 3)          # a lost reply, retried: the instance is no longer in the group
    assert [i for i, _, _ in terminations(proxy)] == [ids[0]]
    assert world.desired() == 3


def test_never_below_min_size_and_never_a_protected_instance(world, provider, proxy):
    ids = world.group("web", desired=4, min_size=3)
    world.asg.set_instance_protection(AutoScalingGroupName="web", InstanceIds=[ids[2]], ProtectedFromScaleIn=True)
    t = provider().target({"auto_scaling_group": "web"})
    obs = t.observe(time.time())
    assert [m.name for m in obs.members if m.protected] == [ids[2]]
    t.delete_members([ids[2], ids[0], ids[1]], 1)   # asks below MinSize 3, the first one protected
    assert [i for i, _, _ in terminations(proxy)] == [ids[0]], "one, to MinSize; the protected one skipped"
    assert world.desired() == 3


def test_the_proxy_refuses_a_decrement_at_min_size_as_auto_scaling_does(world, proxy):
    import boto3
    from botocore.exceptions import ClientError
    ids = world.group("web", desired=2, min_size=2)
    asg = boto3.client("autoscaling", endpoint_url=proxy.url, region_name="us-east-1")
    try:
        asg.terminate_instance_in_auto_scaling_group(InstanceId=ids[0], ShouldDecrementDesiredCapacity=True)
    except ClientError as e:
        assert "violate group's min size constraint" in str(e)
    else:
        raise AssertionError("terminated below MinSize")
    assert world.desired() == 2 and ids[0] in world.instances()
