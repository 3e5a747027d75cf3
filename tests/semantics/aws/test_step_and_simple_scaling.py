"""The aws semantics' step and simple scaling: MinAdjustmentMagnitude, a simple policy
waiting for its cooldown (and for a scale-in still terminating instances), step
scale-out responding meanwhile, and alarms invoking their policy once per period.

Sources: https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html,
https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scaling-cooldowns.html."""

import copy

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.protocol import Observations
from scalebridge.testing.requests import (
    aws_request as request, AWS_SIMPLE_OUT as SIMPLE_OUT, AWS_STEP_IN as STEP_IN, aws_step_policy as _step,
    instances, NOW)

UG = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/"


def test_simple_policy_waits_for_its_cooldown():
    """UG Cooldown.html: simple policies wait for the cooldown; "A scaling-specific cooldown period
    overrides the default cooldown period"."""
    rule = copy.deepcopy(SIMPLE_OUT)
    rule["action"]["cooldown_seconds"] = 180
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [rule]}, "aws")

    def obs(now, n):
        return Observations.model_validate({"status_replicas": n, "members": instances(n),
                                            "metrics": {"cpu": {"series": [[now - 60, 90], [now, 90]]}}})
    assert d.step(NOW, 4, obs(NOW, 4)).desired == 6
    assert d.state.last_scale["cooldown_seconds"] == 180
    r = d.step(NOW + 120, 6, obs(NOW + 120, 6))
    assert (r.desired, r.reason) == (6, "CooldownActive")
    assert d.step(NOW + 180, 6, obs(NOW + 180, 6)).desired == 8


def test_completed_at_is_filled_when_an_activity_is_seen_finishing():
    """UG Cooldown.html: "the cooldown period … takes effect starting when the last instance
    finishes launching or terminating". When the caller does not fill ``last_scale.completed_at``,
    the first decision that sees the activity finished after seeing it in progress does."""
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [SIMPLE_OUT]}, "aws")
    hot = {"cpu": {"series": [[NOW, 90]]}}
    d.step(NOW, 4, Observations.model_validate({"status_replicas": 4, "members": instances(4), "metrics": hot}))
    assert d.state.last_scale["time"] == NOW and "completed_at" not in d.state.last_scale
    launching = instances(4) + [{"name": f"p-{i}", "phase": "Pending", "ready": False} for i in range(2)]
    r = d.step(NOW + 60, 6, Observations.model_validate(
        {"status_replicas": 6, "members": launching, "metrics": {"cpu": {"series": [[NOW + 60, 90]]}}}))
    assert r.reason == "ActivityInProgress"
    r = d.step(NOW + 240, 6, Observations.model_validate(
        {"status_replicas": 6, "members": instances(6), "metrics": {"cpu": {"series": [[NOW + 240, 90]]}}}))
    assert d.state.last_scale.get("completed_at") == NOW + 240 and r.reason == "CooldownActive"
    r = d.step(NOW + 540, 6, Observations.model_validate(
        {"status_replicas": 6, "members": instances(6), "metrics": {"cpu": {"series": [[NOW + 540, 90]]}}}))
    assert r.desired == 8


def test_an_alarm_invokes_its_policy_once_per_period():
    """CW AlarmThatSendsEmail.html: "the alarm continues to invoke the action for every period that
    the alarm remains in the new state" — once per period, not on every decision of the period."""
    rule = {**STEP_IN, "steps": [{"lower": None, "upper": 0, "adjustment": -1}], "adjustment_type": "ChangeInCapacity"}
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [rule]}, "aws")
    series = {"series": [[NOW, 10.0]]}

    def step(t, n):
        return d.step(t, n, Observations.model_validate(
            {"status_replicas": n, "members": instances(n), "metrics": {"cpu": series}}))
    assert step(NOW, 8).desired == 7
    assert step(NOW + 15, 7).desired == 7           # same period: held
    assert step(NOW + 45, 7).desired == 7
    assert step(NOW + 60, 7).desired == 6           # the next period
    assert d.state.extra["aws.alarm_invoked"] == {"rules[0]": NOW + 60}


def test_alarm_states_are_kept_for_ignore():
    """treat_missing_data ``ignore``: "The current alarm state is maintained" (CW #alarms-and-missing-data)."""
    rule = {**SIMPLE_OUT, "treat_missing_data": "ignore", "time_window_seconds": 180}
    d = Decider({"min_replicas": 1, "max_replicas": 20, "rules": [rule]}, "aws")
    d.step(NOW, 4, Observations.model_validate({"status_replicas": 4, "metrics": {"cpu": {"series": [
        [NOW - 120, 90], [NOW - 60, 90], [NOW, 90]]}}}))
    assert d.state.extra["aws.alarm_states"] == {"rules[0]": "ALARM"}
    r = d.step(NOW + 900, 6, Observations.model_validate({"status_replicas": 6, "metrics": {"cpu": {"series": []}}}))
    assert d.state.extra["aws.alarm_states"] == {"rules[0]": "ALARM"} and r.metrics[0].triggered


def test_min_adjustment_magnitude_also_applies_to_a_percent_scale_in():
    """API_PutScalingPolicy (MinAdjustmentMagnitude): "The minimum value to scale by when the
    adjustment type is PercentChangeInCapacity." UG as-scaling-simple-step.html: "With
    PercentChangeInCapacity, you can also specify the minimum number of instances to scale using the
    MinAdjustmentMagnitude parameter." −25 % of 4 is −1; with a minimum of 2, 4 → 2."""
    rule = _step("LessThanOrEqual", 50, "PercentChangeInCapacity",
                 [{"lower": None, "upper": 0, "adjustment": -25}], min_adjustment_magnitude=2)
    assert decide(request(4, 30, rules=[rule]))["desired_replicas"] == 2


def test_min_adjustment_magnitude_is_ignored_for_change_in_capacity():
    """API_PutScalingPolicy: MinAdjustmentMagnitude is "The minimum value to scale by when the
    adjustment type is PercentChangeInCapacity" — not for ChangeInCapacity: +1 stays +1."""
    rule = _step("GreaterThanOrEqual", 50, "ChangeInCapacity",
                 [{"lower": 0, "upper": None, "adjustment": 1}], min_adjustment_magnitude=3)
    assert decide(request(4, 70, rules=[rule]))["desired_replicas"] == 5


def test_step_scale_out_responds_while_a_scale_in_is_terminating_instances():
    """UG as-scaling-simple-step.html#SimpleScaling: "with step scaling the policy can continue to
    respond to additional alarms, even while a scaling activity or health check replacement is in
    progress." Same page, warm-up: "While scaling out, we do not consider instances that are warming
    up as part of the current capacity" (terminating ones are not in service either).

    Desired 8, ten instances of which two terminate; +1 from the 8 in service → 9."""
    members = instances(8) + instances(2, prefix="t", deleting=True)
    rule = _step("GreaterThanOrEqual", 50, "ChangeInCapacity", [{"lower": 0, "upper": None, "adjustment": 1}])
    r = decide(request(8, 70, rules=[rule], members=members, status=10))
    assert r["desired_replicas"] == 9


def test_simple_policy_waits_while_a_scale_in_is_terminating_instances():
    """UG as-scaling-simple-step.html#SimpleScaling: "after a scaling activity is started, the policy
    must wait for the scaling activity or health check replacement to complete and the cooldown
    period to expire before responding to additional alarms"."""
    members = instances(8) + instances(2, prefix="t", deleting=True)
    rule = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": "GreaterThan",
            "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}
    r = decide(request(8, 80, rules=[rule], members=members, status=10))
    assert r["desired_replicas"] == 8 and r["reason"] == "ActivityInProgress"
