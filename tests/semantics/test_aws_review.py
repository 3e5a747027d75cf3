"""Fidelity review of the ``aws`` semantics against the Amazon EC2 Auto Scaling documentation.

Each test quotes the page it checks and pins documented behaviour that the existing AWS tests do
not exercise through ``decide``. (A step rule's direction follows its alarm's operator, as the
protocol states; AWS applies the adjustment's sign — docs/semantics/aws.md, G17.)
"""

from scalebridge import decide
from scalebridge.testing.requests import NOW
from tests.semantics.test_aws_documented import instances, request


def _step(operator, threshold, adjustment_type, steps, **kw):
    return {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": operator,
            "threshold": threshold, "adjustment_type": adjustment_type, "steps": steps, **kw}


# ----------------------------------------------------------------------------- agreements


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


def test_a_null_metric_aggregation_type_is_average():
    """API_PutScalingPolicy (MetricAggregationType): "The valid values are Minimum, Maximum, and
    Average. If the aggregation type is null, the value is treated as Average." UG
    as-scaling-simple-step.html: "Amazon EC2 Auto Scaling applies the aggregation type to the most
    recent metric data points from CloudWatch".

    Three breaching datapoints 75, 65, 55 against 50 with the user guide's scale-out steps: the
    average 65 (+15) selects the [10, 20) step (+10 % of 10 → 11); Maximum would select +30 %."""
    rule = _step("GreaterThanOrEqual", 50, "PercentChangeInCapacity",
                 [{"lower": 0, "upper": 10, "adjustment": 0}, {"lower": 10, "upper": 20, "adjustment": 10},
                  {"lower": 20, "upper": None, "adjustment": 30}], time_window_seconds=180)
    series = [[NOW - 120, 75], [NOW - 60, 65], [NOW, 55]]
    r = decide(request(10, series, rules=[rule]))
    assert r["desired_replicas"] == 11
    rule["time_aggregation"] = "Maximum"
    assert decide(request(10, series, rules=[rule]))["desired_replicas"] == 13


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
