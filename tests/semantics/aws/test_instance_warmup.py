"""The aws semantics' instance warm-up: how the warm-up is resolved (policy, metric,
default instance warmup, −1 as unset), warming instances left out of the metric
and counted toward the next scale-out's capacity.

Sources: https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-default-instance-warmup.html,
https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html."""

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    aws_request as request, AWS_STEP_IN as STEP_IN, AWS_STEP_OUT as STEP_OUT, AWS_TT_CPU as TT_CPU,
    aws_warming_group as _warming_group, instances, NOW)

UG = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/"
UG_WARMUP = UG + "ec2-auto-scaling-default-instance-warmup.html"


@pytest.mark.parametrize("settings,policy_warmup,desired", [
    ({}, None, 13),                                   # default cooldown 300 > 200: warming, 10 + 3
    ({"default_cooldown_seconds": 100}, None, 14),   # warm-up falls back to DefaultCooldown 100
    ({"default_instance_warmup_seconds": 120}, None, 14),
    ({"default_instance_warmup_seconds": 120, "default_cooldown_seconds": 600}, None, 14),
    ({"default_instance_warmup_seconds": 120}, 600, 13),   # EstimatedInstanceWarmup overrides
])
def test_initialization_period_defaults(settings, policy_warmup, desired):
    """UG consolidated-view-of-warm-up-and-cooldown-settings.html: "If not defined, the value of this
    parameter defaults to the value for the default instance warmup … If default instance warmup is
    null, then it falls back to the value of default cooldown." (300 s: UG Cooldown.html)."""
    extra = {} if policy_warmup is None else {"initialization_period_seconds": policy_warmup}
    r = decide(request(11, 70, rules=[STEP_OUT, STEP_IN], members=_warming_group(), settings=settings, **extra))
    assert r["desired_replicas"] == desired


def test_target_tracking_metric_warmup_overrides_the_policys():
    """A target-tracking policy's EstimatedInstanceWarmup (metrics[i].initialization_period_seconds)."""
    members = instances(4) + instances(1, age=200, prefix="new")
    short = {**TT_CPU, "initialization_period_seconds": 100}
    assert decide(request(5, 75, metrics=[TT_CPU], members=members))["desired_replicas"] == 6      # ceil(4 × 1.5)
    assert decide(request(5, 75, metrics=[short], members=members))["desired_replicas"] == 8       # ceil(5 × 1.5)


def test_member_series_leaves_warming_instances_out_of_the_metric():
    """UG as-scaling-target-tracking.html#as-target-tracking-scaling-warmup: "Until its specified
    warm-up time has expired, an instance is not counted toward the aggregated metrics"."""
    members = instances(4) + instances(1, age=60, prefix="new")
    series = {m["name"]: [[NOW - 60 * j, 75.0] for j in range(3)] for m in members[:4]}
    series["new-0"] = [[NOW - 60 * j, 0.0] for j in range(3)]     # idle while warming up
    req = request(5, 0, metrics=[TT_CPU], members=members)
    req["observations"]["metrics"]["cpu"] = {"member_series": series}
    r = decide(req)
    assert r["metrics"][0]["value"] == 75 and r["desired_replicas"] == 6


def test_default_instance_warmup_minus_one_means_unset():
    """CreateAutoScalingGroup / UpdateAutoScalingGroup, DefaultInstanceWarmup: "To remove a value
    that you previously set, include the property but specify -1 for the value." -1 is then the
    same as no default warm-up (the default cooldown applies), not an invalid request."""
    from scalebridge.protocol import Settings
    assert Settings(default_instance_warmup_seconds=-1).default_instance_warmup_seconds is None
    assert Settings(default_instance_warmup_seconds=120).default_instance_warmup_seconds == 120
    with pytest.raises(Exception):
        Settings(default_instance_warmup_seconds=-5)


def test_hot_warming_instances_do_not_trigger_a_scale_out():
    """UG_WARMUP (#understand-how-warmup-affects-scaling): "While instances are in the warm-up
    period, your scaling policies only scale out if the metric value from instances that are not
    warming up is greater than the policy's alarm high threshold (which is the same as the target
    utilization of a target tracking scaling policy)."

    Four warmed-up instances at exactly 50 % (the target), one warming instance at 100 %: the group
    average with it would be 60 %, without it 50 %, which is not greater than the target."""
    members = instances(4) + instances(1, age=60, prefix="new")
    series = {m["name"]: [[NOW - 60 * j, 50.0] for j in range(20)] for m in members[:4]}
    series["new-0"] = [[NOW - 60 * j, 100.0] for j in range(2)]
    req = request(5, 0, metrics=[TT_CPU], members=members, status=5)
    req["observations"]["metrics"]["cpu"] = {"member_series": series}
    r = decide(req)
    assert r["metrics"][0]["value"] == 50
    assert r["desired_replicas"] == 5


def test_warming_instances_count_toward_the_desired_capacity_of_the_next_scale_out():
    """UG_WARMUP: "If instances are still warming up and the group scales out again, the instances
    are counted as part of the desired capacity for the next scale-out activity. … The intention is
    to continuously (but not excessively) scale out."

    Desired 5 = four warmed-up instances + one warming. At 60 % of the four, ceil(4 × 60 / 50) = 5:
    the warming instance already provides it, nothing is launched. At 65 %, ceil(5.2) = 6: one more."""
    members = instances(4) + instances(1, age=60, prefix="new")
    assert decide(request(5, 60, metrics=[TT_CPU], members=members, status=5))["desired_replicas"] == 5
    assert decide(request(5, 65, metrics=[TT_CPU], members=members, status=5))["desired_replicas"] == 6
