"""``import --from aws`` reads the Auto Scaling group with its policies: the group's default
cooldown is what its simple policies wait when they name none, and each group of a template
is its own policy, with the scaling policies that name it.

Sources: https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutScalingPolicy.html
("Cooldown ... When a cooldown period is specified here, it overrides the default cooldown"),
https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-autoscaling-autoscalinggroup.html
("Cooldown: The amount of time, in seconds, after a scaling activity completes before another
scaling activity can start. The default value is 300")."""
from __future__ import annotations

import copy
import json

import pytest

from scalebridge.engine import Decider
from scalebridge.protocol import Observations
from scalebridge.testing.requests import NOW, instances
from scalebridge.translate import NativeError, import_all

ALARM = {"Type": "AWS::CloudWatch::Alarm",
         "Properties": {"MetricName": "CPUUtilization", "Namespace": "AWS/EC2", "Statistic": "Average",
                        "Period": 60, "EvaluationPeriods": 1, "Threshold": 70,
                        "ComparisonOperator": "GreaterThanThreshold",
                        "AlarmActions": [{"Ref": "ScaleUp"}]}}
TEMPLATE = {"Resources": {
    "Group": {"Type": "AWS::AutoScaling::AutoScalingGroup",
              "Properties": {"MinSize": "1", "MaxSize": "20", "Cooldown": "120"}},
    "ScaleUp": {"Type": "AWS::AutoScaling::ScalingPolicy",
                "Properties": {"AutoScalingGroupName": {"Ref": "Group"}, "AdjustmentType": "ChangeInCapacity",
                               "ScalingAdjustment": 2}},
    "HighCpu": ALARM}}


def _sizes(policy: dict) -> list[tuple[int, str]]:
    """A simple policy on a hot group at 0, 60 and 120 seconds (its alarm invokes it once a period)."""
    d = Decider(policy, "aws")
    out, n = [], 4
    for t in (0, 60, 120):
        obs = Observations.model_validate({"status_replicas": n, "members": instances(n),
                                           "metrics": {"CPUUtilization": {"series": [[NOW + t - 60, 90], [NOW + t, 90]]}}})
        r = d.step(NOW + t, n, obs)
        n = r.desired
        out.append((r.desired, r.reason))
    return out


def test_a_simple_policy_without_its_cooldown_waits_the_groups():
    [(policy, losses)] = import_all(json.dumps(TEMPLATE), "aws")
    assert losses.lines == []
    assert policy["rules"][0]["action"] == {"direction": "Increase", "type": "ChangeCount", "value": 2,
                                            "cooldown_seconds": 120}
    assert _sizes(policy) == [(6, "DesiredWithinRange"), (6, "CooldownActive"), (8, "DesiredWithinRange")]
    del policy["rules"][0]["action"]["cooldown_seconds"]      # the 300 s default would still hold it
    assert _sizes(policy)[2] == (6, "CooldownActive")


def test_the_policys_own_cooldown_overrides_the_groups():
    t = copy.deepcopy(TEMPLATE)
    t["Resources"]["ScaleUp"]["Properties"]["Cooldown"] = "60"
    [(policy, _)] = import_all(json.dumps(t), "aws")
    assert policy["rules"][0]["action"]["cooldown_seconds"] == 60


def test_the_api_requests_default_cooldown():
    body = {"UpdateAutoScalingGroup": [{"AutoScalingGroupName": "web", "MinSize": 1, "MaxSize": 20,
                                        "DefaultCooldown": 120}],
            "PutScalingPolicy": [{"AutoScalingGroupName": "web", "PolicyName": "up", "PolicyType": "SimpleScaling",
                                  "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 2}],
            "PutMetricAlarm": [{**ALARM["Properties"], "AlarmName": "hot",
                                "AlarmActions": ["arn:aws:autoscaling:r:1:scalingPolicy:x:autoScalingGroupName/web:"
                                                 "policyName/up"]}]}
    [(policy, _)] = import_all(json.dumps(body), "aws")
    assert policy["rules"][0]["action"]["cooldown_seconds"] == 120


def test_two_groups_two_policies_each_with_its_own_bounds():
    t = copy.deepcopy(TEMPLATE)
    t["Resources"]["Other"] = {"Type": "AWS::AutoScaling::AutoScalingGroup",
                               "Properties": {"MinSize": 3, "MaxSize": 5}}
    t["Resources"]["OtherUp"] = {"Type": "AWS::AutoScaling::ScalingPolicy",
                                 "Properties": {"AutoScalingGroupName": {"Ref": "Other"},
                                                "PolicyType": "TargetTrackingScaling",
                                                "TargetTrackingConfiguration": {
                                                    "TargetValue": 40, "PredefinedMetricSpecification": {
                                                        "PredefinedMetricType": "ASGAverageCPUUtilization"}}}}
    t["Resources"]["Stray"] = {"Type": "AWS::AutoScaling::ScalingPolicy",
                               "Properties": {"AutoScalingGroupName": "elsewhere", "PolicyType": "TargetTrackingScaling",
                                              "TargetTrackingConfiguration": {"TargetValue": 10}}}
    (group, losses), (other, _) = import_all(json.dumps(t), "aws")
    assert (group["min_replicas"], group["max_replicas"], len(group["rules"])) == (1, 20, 1)
    assert "metrics" not in group
    assert (other["min_replicas"], other["max_replicas"]) == (3, 5)
    assert other["metrics"][0]["target"] == {"type": "Utilization", "average_utilization": 40}
    assert "rules" not in other
    assert losses.lines == ["$.Resources.Stray.Properties.AutoScalingGroupName: names none of the input's Auto "
                            "Scaling groups; dropped"]


def test_a_step_policys_metric_aggregation_type_chooses_its_step():
    """MetricAggregationType Maximum: the step is chosen on the evaluated datapoints' maximum
    (API_PutScalingPolicy.html; as-scaling-simple-step.html "applies the aggregation type to the most
    recent metric data points"). Datapoints 62 then 85 against a threshold of 60: Average 73.5 falls in
    [10, 20) above it (+1), Maximum 85 in [20, ∞) (+3)."""
    body = {"UpdateAutoScalingGroup": [{"AutoScalingGroupName": "web", "MinSize": 1, "MaxSize": 20}],
            "PutScalingPolicy": [{"AutoScalingGroupName": "web", "PolicyName": "out", "PolicyType": "StepScaling",
                                  "AdjustmentType": "ChangeInCapacity", "MetricAggregationType": "Maximum",
                                  "StepAdjustments": [
                                      {"MetricIntervalLowerBound": 0, "MetricIntervalUpperBound": 20,
                                       "ScalingAdjustment": 1},
                                      {"MetricIntervalLowerBound": 20, "ScalingAdjustment": 3}]}],
            "PutMetricAlarm": [{**ALARM["Properties"], "AlarmName": "hot", "Period": 60, "EvaluationPeriods": 2,
                                "Threshold": 60,
                                "AlarmActions": ["arn:aws:autoscaling:r:1:scalingPolicy:x:autoScalingGroupName/web:"
                                                 "policyName/out"]}]}
    [(policy, losses)] = import_all(json.dumps(body), "aws")
    assert losses.lines == [] and policy["rules"][0]["time_aggregation"] == "Max"

    def size(p: dict) -> int:
        d = Decider(p, "aws")
        obs = Observations.model_validate({"status_replicas": 4, "members": instances(4), "metrics": {
            "CPUUtilization": {"series": [[NOW - 60, 62], [NOW, 85]]}}})
        return d.step(NOW, 4, obs).desired

    assert size(policy) == 7
    body["PutScalingPolicy"][0].pop("MetricAggregationType")
    [(average, _)] = import_all(json.dumps(body), "aws")
    assert size(average) == 5
    body["PutScalingPolicy"][0]["MetricAggregationType"] = "Median"
    with pytest.raises(NativeError, match=r"^\$\.PutScalingPolicy\[0\]\.MetricAggregationType: expected one of"):
        import_all(json.dumps(body), "aws")
