"""Acting on a group: SetDesiredCapacity with HonorCooldown=False, never outside
MinSize/MaxSize, and what instance scale-in protection means for a scale-in.

"All requests to change the Auto Scaling group's desired capacity … must fall
within these limits" (https://docs.aws.amazon.com/autoscaling/ec2/userguide/asg-capacity-limits.html);
real Auto Scaling answers a SetDesiredCapacity above MaxSize with a
ValidationError, which moto does not (the proxy does, and records every call)."""
from __future__ import annotations

import time

import pytest

from scalebridge.providers import ErrorKind, ProviderError


def sets(proxy):
    return [c.params for c in proxy.calls if c.action == "SetDesiredCapacity"]


def test_sets_the_absolute_size_without_honoring_the_cooldown(world, provider, proxy):
    world.group("web", desired=2, max_size=10)
    t = provider().target({"auto_scaling_group": "web"})
    t.observe(time.time())
    change = t.set_size(6)
    assert change.size == 6 and change.note is None and change.in_flight
    assert world.desired() == 6
    assert sets(proxy) == [{"Version": "2011-01-01", "AutoScalingGroupName": "web", "DesiredCapacity": "6",
                            "HonorCooldown": "false"}]
    t.set_size(6)     # idempotent: an absolute size, not a delta
    assert world.desired() == 6


@pytest.mark.parametrize("asked, min_size, max_size, sent, word", [
    (12, 1, 10, 10, "MaxSize 10"),
    (0, 2, 10, 2, "MinSize 2"),
])
def test_clamped_to_the_groups_bounds_and_said(world, provider, proxy, asked, min_size, max_size, sent, word):
    world.group("web", desired=3, min_size=min_size, max_size=max_size)
    t = provider().target({"auto_scaling_group": "web"})
    t.observe(time.time())
    change = t.set_size(asked)
    assert change.size == sent and word in change.note and str(asked) in change.note
    assert [p["DesiredCapacity"] for p in sets(proxy)] == [str(sent)]
    assert world.desired() == sent


def test_never_sends_above_max_even_without_observing_first(world, provider, proxy):
    world.group("web", desired=3, max_size=5)
    t = provider().target({"auto_scaling_group": "web"})
    assert t.set_size(50).size == 5
    assert all(int(p["DesiredCapacity"]) <= 5 for p in sets(proxy))


def test_the_proxy_is_strict_where_aws_is(world, provider):
    """What real AWS answers, and what the provider never provokes."""
    world.group("web", desired=3, max_size=5)
    from scalebridge_aws.client import AwsClients
    c = AwsClients("us-east-1", world.url, max_attempts=1)
    with pytest.raises(ProviderError) as e:
        c.call("autoscaling", "set_desired_capacity", AutoScalingGroupName="web", DesiredCapacity=9)
    assert e.value.kind is ErrorKind.INVALID and "above max value 5" in str(e.value)
    world.proxy.strict = False      # moto alone accepts it
    c.call("autoscaling", "set_desired_capacity", AutoScalingGroupName="web", DesiredCapacity=9)
    assert world.desired() == 9


def test_a_scale_in_notes_protected_instances(world, provider):
    ids = world.group("web", desired=4)
    world.asg.set_instance_protection(AutoScalingGroupName="web", InstanceIds=ids[:3], ProtectedFromScaleIn=True)
    t = provider().target({"auto_scaling_group": "web"})
    obs = t.observe(time.time())
    assert sorted(obs.details["protected_from_scale_in"]) == sorted(ids[:3])
    change = t.set_size(2)
    assert change.size == 2
    assert "only 1 in service unprotected" in change.note and "protected from scale-in" in change.note


def test_a_scale_in_with_enough_unprotected_instances(world, provider):
    ids = world.group("web", desired=4)
    world.asg.set_instance_protection(AutoScalingGroupName="web", InstanceIds=ids[:1], ProtectedFromScaleIn=True)
    t = provider().target({"auto_scaling_group": "web"})
    t.observe(time.time())
    note = t.set_size(3).note
    assert note.startswith("scale-in of 1: 1 instances protected") and ids[0] in note


def test_a_scale_out_says_nothing_of_protection(world, provider):
    ids = world.group("web", desired=2)
    world.asg.set_instance_protection(AutoScalingGroupName="web", InstanceIds=ids, ProtectedFromScaleIn=True)
    t = provider().target({"auto_scaling_group": "web"})
    t.observe(time.time())
    assert t.set_size(3).note is None


def test_a_missing_group_is_not_found(world, provider):
    with pytest.raises(ProviderError) as e:
        provider().target({"auto_scaling_group": "gone"}).set_size(3)
    assert e.value.kind is ErrorKind.NOT_FOUND


def test_a_group_deleted_between_observe_and_write_is_not_found(world, provider):
    world.group("web", desired=2)
    t = provider().target({"auto_scaling_group": "web"})
    t.observe(time.time())
    world.asg.delete_auto_scaling_group(AutoScalingGroupName="web", ForceDelete=True)
    with pytest.raises(ProviderError) as e:
        t.set_size(3)
    assert e.value.kind is ErrorKind.NOT_FOUND and e.value.operation == "SetDesiredCapacity"
