"""The aws semantics' target tracking: the metric against its target (utilization,
totals, ALB request count per target with missing periods as zero, SQS backlog
per instance), scale-in held by cooldowns, scale-outs in progress and terminating
instances, DisableScaleIn, and the metric aggregation type.

Sources: https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html,
https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-using-sqs-queue.html,
https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_TargetTrackingConfiguration.html."""

from scalebridge import decide
from scalebridge.testing.requests import (
    aws_request as request, aws_step_policy as _step, AWS_TT_CPU as TT_CPU, instances, NOW)

UG = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/"
UG_TT = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html"
UG_WARMUP = UG + "ec2-auto-scaling-default-instance-warmup.html"
UG_SQS = UG + "as-using-sqs-queue.html"


def test_external_average_value_reads_a_total():
    """An external metric's observation is a total (protocol: "values from outside; summed"); its
    per-instance value is total / in-service capacity, as AWS's backlog-per-instance recipe computes."""
    metric = {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 100}}
    req = request(4, 0, metrics=[metric])
    req["observations"]["metrics"]["queue"] = {"series": [[NOW - 60 * j, 1000] for j in range(3)]}
    r = decide(req)
    assert r["metrics"][0]["value"] == 250 and r["desired_replicas"] == 10   # ceil(4 × 250 / 100)


def test_member_usage_against_requests_is_a_utilization_percent():
    """A Kubernetes-style snapshot (usage in cores against a 500m request) is read as
    CloudWatch reads CPUUtilization: 400m of 500m is 80%, against a 50% target
    ceil(3 × 80 / 50) = 5 — the same request every semantics can answer."""
    import json as _json
    from pathlib import Path as _Path
    req = _json.loads((_Path(__file__).resolve().parents[3] / "examples" / "requests" /
                       "resource-utilization.json").read_text())
    r = decide(req, "aws")
    assert r["metrics"][0]["value"] == 80 and r["desired_replicas"] == 5


def test_alb_request_count_per_target_reads_missing_periods_as_zero():
    """UG as-scaling-target-tracking.html: "A target tracking scaling policy does not scale in your
    Auto Scaling group when the specified metric has insufficient data, unless you use the
    ALBRequestCountPerTarget metric. This works because the ALBRequestCountPerTarget metric emits
    zeros for periods with no associated data, and the target tracking policy requires metric data to
    interpret a low utilization trend. To have your Auto Scaling group scale in to 0 instances when no
    requests are routed to the target group, the group's minimum capacity must be set to 0."

    A target-tracking metric named ``ALBRequestCountPerTarget`` (the predefined metric type) with no
    datapoints scales in (to the minimum, 0); any other metric does not."""
    alb = {"type": "pods", "name": "ALBRequestCountPerTarget", "target": {"type": "AverageValue", "average_value": 1000}}
    req = request(4, 0, metrics=[alb], min_replicas=0)
    req["observations"]["metrics"]["ALBRequestCountPerTarget"] = {"series": []}
    r = decide(req)
    assert r["desired_replicas"] == 0 and r["metrics"][0]["value"] == 0

    other = {**alb, "name": "requests_per_target"}
    req = request(4, 0, metrics=[other], min_replicas=0)
    req["observations"]["metrics"]["requests_per_target"] = {"series": []}
    assert decide(req)["desired_replicas"] == 4            # insufficient data: no scale-in


def test_alb_request_count_per_target_gaps_between_requests_are_zeros():
    """Same source: periods without requests are zeros. Traffic at the target (1000 per target) in the
    newest 3 minutes only: the low alarm (below 90 % of the target, 15 of 15 one-minute datapoints)
    sees 3 datapoints at the target among the zeros — not ready to scale in. No traffic in the last
    17 minutes: 15 zeros, it scales in (to the minimum, 1)."""
    alb = {"type": "pods", "name": "ALBRequestCountPerTarget", "target": {"type": "AverageValue", "average_value": 1000}}
    req = request(4, 0, metrics=[alb], min_replicas=1)
    req["observations"]["metrics"]["ALBRequestCountPerTarget"] = {"series": [[NOW - 60 * j, 1000] for j in range(3)]}
    assert decide(req)["desired_replicas"] == 4
    req["observations"]["metrics"]["ALBRequestCountPerTarget"] = {"series": [[NOW - 60 * 20, 1000]]}
    assert decide(req)["desired_replicas"] == 1


def test_cpu_target_tracking_with_no_data_still_does_not_scale_in():
    """UG as-scaling-target-tracking.html: "does not scale in … when the specified metric has
    insufficient data" — unchanged for every metric but ALBRequestCountPerTarget."""
    req = request(4, 0, metrics=[TT_CPU], min_replicas=0)
    req["observations"]["metrics"]["cpu"] = {"series": []}
    assert decide(req)["desired_replicas"] == 4


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


QUEUE = {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 100}}


def _steady(value, minutes=20):
    return [[NOW - 60 * j, value] for j in range(minutes, -1, -1)]


def test_sqs_backlog_per_instance_example_scales_out_by_five():
    """UG_SQS: "let's say that the current ApproximateNumberOfMessages is 1500 and the fleet's
    running capacity is 10 … the acceptable backlog per instance is 10 / 0.1, which equals 100.
    This means that 100 is the target value for your target tracking policy. Because the backlog
    per instance is currently at 150 (1500 / 10), your fleet scales out by five instances to
    maintain proportion to the target value."

    The queue length is a group total (``external`` + ``AverageValue``): 1500 / 10 = 150 per
    instance, ceil(10 × 150 / 100) = 15."""
    req = request(10, 0, metrics=[QUEUE])
    req["observations"]["metrics"]["queue"] = {"series": _steady(1500)}
    r = decide(req)
    assert r["metrics"][0]["value"] == 150
    assert r["desired_replicas"] == 15


def test_sqs_backlog_divides_by_in_service_instances_including_warming_ones():
    """UG_SQS: "Divide that number by the fleet's running capacity, which for an Auto Scaling group
    is the number of instances in the InService state, to get the backlog per instance."
    UG_WARMUP: the warm-up is "how long after an instance reaches the InService state it waits
    before contributing usage data" — a warming instance is already InService, so it divides."""
    members = instances(9) + instances(1, age=60, prefix="new")
    req = request(10, 0, metrics=[QUEUE], members=members, status=10)
    req["observations"]["metrics"]["queue"] = {"series": _steady(1500)}
    assert decide(req)["metrics"][0]["value"] == 150      # 1500 / 10, not 1500 / 9


def test_target_tracking_scale_in_blocked_for_the_default_cooldown_without_default_warmup():
    """UG_WARMUP: "When default instance warmup is not enabled, the default cooldown might be applied
    when instances launch, and dynamic scaling scale-in activities will be blocked until the default
    cooldown period ends." (DefaultCooldown default: 300 s.)"""
    young = instances(4) + instances(1, age=200, prefix="new")
    r = decide(request(5, 20, metrics=[TT_CPU], members=young, status=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ScaleDownStabilized")
    old = instances(4) + instances(1, age=400, prefix="new")
    assert decide(request(5, 20, metrics=[TT_CPU], members=old, status=5))["desired_replicas"] == 2


def test_target_tracking_scale_in_waits_for_a_scale_out_in_progress():
    """UG_TT (#as-target-tracking-scaling-warmup): "A scale-in activity can't start while a scale-out
    activity is in progress." (The step-policy version is in test_multiple_policies.py.)"""
    members = instances(4) + [{"name": "p", "phase": "Pending", "ready": False}]
    r = decide(request(5, 20, metrics=[TT_CPU], members=members, status=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ActivityInProgress")


def test_target_tracking_scale_in_counts_terminating_instances():
    """UG_TT (#as-target-tracking-scaling-warmup): "While scaling in, we consider instances that are
    terminating as part of the current capacity of the group. Therefore, we don't remove more
    instances from the Auto Scaling group than necessary."

    Desired 8, ten running of which two terminate, 30 % vs 50 %: ceil(10 × 30 / 50) = 6 (from the 8
    alone it would be ceil(4.8) = 5, one instance too many removed)."""
    members = instances(8) + instances(2, prefix="t", deleting=True)
    r = decide(request(8, 30, metrics=[TT_CPU], members=members, status=10))
    assert r["desired_replicas"] == 6


def test_disable_scale_in_keeps_the_scale_out_portion():
    """UG_TT (#target-tracking-considerations): "You can disable the scale-in portion of a target
    tracking scaling policy. … For example, you can use a different scaling policy type for scale in
    while using a target tracking scaling policy for scale out." 3 at 75 % vs 50 % → 5."""
    metric = dict(TT_CPU, disable_scale_in=True)
    assert decide(request(3, 75, metrics=[metric]))["desired_replicas"] == 5
