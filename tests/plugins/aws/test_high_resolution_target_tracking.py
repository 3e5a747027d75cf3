"""A target tracking policy on a high-resolution metric (a 10-second period), on moto's CloudWatch and
Auto Scaling, through ``scalebridge run --once`` and through render → import.

Sources: "To scale on a high-resolution metric, specify the name of the metric and set the metric
period at which the target tracking observes this metric to a value lower than 60 seconds. Currently
the lowest supported interval is 10 seconds" (EC2 Auto Scaling User Guide,
https://docs.aws.amazon.com/autoscaling/ec2/userguide/policy-creating-high-resolution-metrics.html,
"How target tracking policy with high-resolution metrics works"; its Example 1 puts ``Period`` in
``CustomizedMetricSpecification``); ``Period``: "The period of the metric in seconds. The default value
is 60. Accepted values are 10, 30, and 60" (API_CustomizedMetricSpecification.html,
API_TargetTrackingMetricStat.html). The alarm shape at 10 s (3 of 3 datapoints above the target) is
scalebridge's documented choice, constants.AWS_TT_ALARM_DATAPOINTS (docs/known-divergences.md).
"""
from __future__ import annotations

import copy
import json

import pytest

from scalebridge_aws.translate import dump, import_all, render
from tests.plugins.aws.conftest import minutes
from tests.plugins.aws.test_run_once import Runner

SOURCE = {"inflight": {"source": {"namespace": "App", "metric_name": "InFlightRequests",
                                  "dimensions": {"AutoScalingGroupName": "{auto_scaling_group}"}}}}


def policy(period):
    m = {"type": "pods", "name": "inflight", "target": {"type": "AverageValue", "average_value": 50}}
    if period is not None:
        m["period_seconds"] = period
    return {"semantics": "aws", "min_replicas": 1, "max_replicas": 10, "metrics": [m]}


def put_10s(world, values):
    world.put("App", "InFlightRequests", minutes(values, period=10), {"AutoScalingGroupName": "web"}, "Count")


@pytest.mark.parametrize("period, expected", [(10, 7), (None, 4)])
def test_a_10_s_policy_decides_from_10_s_datapoints_on_cloudwatch(world, tmp_path, period, expected):
    """Four instances; the group's in-flight requests per instance at 40 for five minutes, then 80 for
    the last half minute. At a 10-s period three datapoints are above the target of 50: the policy asks
    for ceil(4 × 80 / 50) = 7. At the default one-minute period the same half minute is no three
    one-minute datapoints above the target: the group stays at 4."""
    world.group("web", desired=4, max_size=10)
    world.age(3600)
    put_10s(world, [40] * 30 + [80] * 3)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=policy(period), metrics=SOURCE)
    assert rc == 0, rec
    assert rec["desired_replicas"] == expected and world.desired() == expected, rec
    [gmd] = [c for c in world.proxy.calls if c.action == "GetMetricData"]
    periods = {int(q["MetricStat"]["Period"]) for q in gmd.params["MetricDataQueries"] if "MetricStat" in q}
    assert periods == {period or 60}


def test_render_writes_the_period_and_import_reads_it_back():
    """render → import → render is a fixed point (import names the metric after its MetricName)."""
    source = {"InFlightRequests": SOURCE["inflight"]}
    target = {"auto_scaling_group": "web", "metrics": source}
    p = policy(10)
    p["metrics"][0]["name"] = "InFlightRequests"
    native, losses = render(p, target)
    [tt] = native["PutScalingPolicy"]
    spec = tt["TargetTrackingConfiguration"]["CustomizedMetricSpecification"]
    assert spec["Period"] == 10 and spec["MetricName"] == "InFlightRequests"
    [(back, _)] = import_all(dump(native))
    assert back["metrics"][0]["period_seconds"] == 10
    again, _ = render(back, target)
    assert again["PutScalingPolicy"] == native["PutScalingPolicy"]


def test_a_policy_put_on_the_group_imports_with_its_period(world):
    """The rendered policy as Auto Scaling stores it (PutScalingPolicy, then DescribePolicies) imports
    with its 10-s period."""
    world.group("web", desired=2)
    native, _ = render(policy(10), {"auto_scaling_group": "web", "metrics": SOURCE})
    world.asg.put_scaling_policy(**native["PutScalingPolicy"][0])
    described = world.asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"]
    [(back, _)] = import_all(json.loads(json.dumps({"ScalingPolicies": described}, default=str)))
    assert back["metrics"][0]["period_seconds"] == 10


def test_metric_math_periods_are_read():
    """``Metrics[].MetricStat.Period`` (TargetTrackingMetricStat): the same 10 s on every query."""
    stat = {"Metric": {"Namespace": "App", "MetricName": "InFlightRequests",
                       "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "web"}]},
            "Stat": "Sum", "Period": 10}
    cfg = {"TargetValue": 50, "CustomizedMetricSpecification": {"Metrics": [
        {"Id": "m1", "MetricStat": stat, "ReturnData": False},
        {"Id": "m2", "MetricStat": copy.deepcopy(stat), "ReturnData": False},
        {"Id": "e1", "Expression": "m1 / m2", "ReturnData": True}]}}
    [(back, _)] = import_all({"ScalingPolicies": [{"AutoScalingGroupName": "web", "PolicyName": "math",
                                                   "PolicyType": "TargetTrackingScaling",
                                                   "TargetTrackingConfiguration": cfg}]})
    assert back["metrics"][0]["period_seconds"] == 10


@pytest.mark.parametrize("period", [20, 120])
def test_a_period_aws_does_not_accept_is_refused_naming_it(period):
    from scalebridge.translate import NativeError
    cfg = {"TargetValue": 50, "CustomizedMetricSpecification": {"MetricName": "m", "Namespace": "App",
                                                                "Statistic": "Average", "Period": period}}
    with pytest.raises(NativeError) as e:
        import_all({"ScalingPolicies": [{"AutoScalingGroupName": "web", "PolicyName": "p",
                                         "PolicyType": "TargetTrackingScaling", "TargetTrackingConfiguration": cfg}]})
    assert "Period" in str(e.value) and "10, 30 or 60" in str(e.value)


def test_a_predefined_metric_with_a_high_resolution_period_is_a_loss():
    p = {"semantics": "aws", "min_replicas": 1, "max_replicas": 10,
         "metrics": [{"type": "resource", "name": "cpu", "period_seconds": 10,
                      "target": {"type": "Utilization", "average_utilization": 50}}]}
    native, losses = render(p, {"auto_scaling_group": "web"})
    assert "Period" not in json.dumps(native)
    assert any(line.startswith("metrics[0].period_seconds: a 10-second period") for line in losses.lines), \
        losses.lines
