"""``import`` reads the providers' own documentation examples, and the decisions on the
imported policy match the outcomes the pages state."""
from __future__ import annotations

import json

from scalebridge import decide
from scalebridge.testing.requests import AZURE_NOW, GCE_NOW, NOW, per_vm, pods, vms
from scalebridge.translate import import_native

# https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale-walkthrough/ (hpa/php-apache.yaml)
PHP_APACHE = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: php-apache
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: php-apache
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 50
"""

# the same page, "Autoscaling on multiple metrics and custom metrics"
MULTIPLE_METRICS = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: php-apache
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: php-apache
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 50
  - type: Pods
    pods:
      metric:
        name: packets-per-second
      target:
        type: AverageValue
        averageValue: 1k
  - type: Object
    object:
      metric:
        name: requests-per-second
      describedObject:
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        name: main-route
      target:
        type: Value
        value: 10k
"""


def _php_apache(policy: dict, n: int, usage: str, state=None) -> dict:
    members = pods(n, cpu_request="200m")
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": n, "policy": policy,
           "observations": {"members": members,
                            "metrics": {"cpu": {"members": {m["name"]: usage for m in members},
                                                "timestamp": NOW - 10, "window": 30}}}}
    if state is not None:
        req["state"] = state
    return req


def test_hpa_walkthrough_scales_to_seven_at_305_percent():
    """The walkthrough: "CPU consumption has increased to 305% of the request. As a result,
    the Deployment was resized to 7 replicas" (one pod requesting 200m). The controller gets
    there in two syncs: at most max(2 × 1, 4) = 4 at once without a behavior (its
    scaleUpLimitFactor and scaleUpLimitMinimum), then the same load over 4 pods is 76 % → 7."""
    policy, losses = import_native(PHP_APACHE, "kubernetes")
    assert losses.lines == []
    first = decide(_php_apache(policy, 1, "610m"))
    assert first["desired_replicas"] == 4
    assert decide(_php_apache(policy, 4, "152.5m", first["state"]))["desired_replicas"] == 7


def test_hpa_walkthrough_multiple_metrics_import_every_metric():
    policy, losses = import_native(MULTIPLE_METRICS, "kubernetes")
    assert [(m["type"], m["name"], m["target"]) for m in policy["metrics"]] == [
        ("resource", "cpu", {"type": "Utilization", "average_utilization": 50}),
        ("pods", "packets-per-second", {"type": "AverageValue", "average_value": "1k"}),
        ("object", "requests-per-second", {"type": "Value", "value": "10k"})]
    assert losses.lines == []


# https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "a MIG that contains 10 VMs"
# with cpuUtilization 0.8, loadBalancingUtilization 0.6, two per-instance metrics and two schedules
FOUR_SIGNALS = {
    "name": "example-autoscaler",
    "target": "https://www.googleapis.com/compute/v1/projects/p/zones/us-east1-b/instanceGroupManagers/example",
    "autoscalingPolicy": {
        "minNumReplicas": 1, "maxNumReplicas": 20,
        "cpuUtilization": {"utilizationTarget": 0.8},
        "loadBalancingUtilization": {"utilizationTarget": 0.6},
        "customMetricUtilizations": [
            {"metric": "metric1", "utilizationTarget": 1000, "utilizationTargetType": "GAUGE"},
            {"metric": "metric2", "utilizationTarget": 2000, "utilizationTargetType": "GAUGE"}],
        "scalingSchedules": {
            "weekend": {"schedule": "0 0 * * SAT,SUN", "timeZone": "America/New_York", "durationSec": 86400,
                        "minRequiredReplicas": 6},
            "weekday": {"schedule": "0 9 * * MON-FRI", "timeZone": "America/New_York", "durationSec": 28800,
                        "minRequiredReplicas": 15}}}}


def _four_signal_request(policy: dict, now: float) -> dict:
    members = vms(10, now=now)
    return {"semantics": "gce", "now": now, "current_replicas": 10, "policy": policy,
            "observations": {"members": members,
                             "metrics": {"cpu": {"members": per_vm(members, 0.5)}, "load_balancing": {"value": 40},
                                         "metric1": {"members": per_vm(members, 1100)},
                                         "metric2": {"members": per_vm(members, 2700)}}},
            "state": {"recommendations": []}}


def test_gce_multiple_signals_example_decides_as_the_page():
    """"the autoscaler recommends 15 VMs" while the weekday schedule is active, and metric2's
    ⌈13.5⌉ = 14 otherwise."""
    policy, losses = import_native(json.dumps(FOUR_SIGNALS), "gce")
    assert losses.lines == []
    assert decide(_four_signal_request(policy, GCE_NOW))["desired_replicas"] == 15     # Wednesday 12:00 New York
    r = decide(_four_signal_request(policy, GCE_NOW + 10 * 3600))   # 22:00: no schedule active
    assert r["desired_replicas"] == 14
    # the page: "7 VMs based on CPU utilization", "7 VMs based on load balancing", "11 VMs based on
    # metric1", "14 VMs based on metric2"
    assert [(m["name"], m["replicas"]) for m in r["metrics"]] == [("cpu", 7), ("load_balancing", 7),
                                                                  ("metric1", 11), ("metric2", 14)]


# https://msdn.microsoft.com/en-us/library/dn931928.aspx ("Create or update an autoscale setting"):
# profile "Day", capacity 1..5 default 4, Percentage CPU >= 60 over PT45M adds 2 (cooldown PT20M),
# weekdays from 8:00 Pacific Standard Time
AZURE_DAY = {
    "name": "webfrontend-norapp-norapp", "type": "Microsoft.Insights/autoscaleSettings", "location": "East US",
    "tags": {},
    "properties": {
        "profiles": [{
            "name": "Day", "capacity": {"minimum": "1", "maximum": "5", "default": "4"},
            "rules": [{"metricTrigger": {"metricName": "Percentage CPU", "metricNamespace": "",
                                         "metricResourceUri": "/subscriptions/s/resourceGroups/norapp/providers/"
                                                              "microsoft.classicCompute/domainNames/norapp/"
                                                              "availabilitySets/webfrontend",
                                         "timeGrain": "PT5M", "statistic": "Average", "timeWindow": "PT45M",
                                         "timeAggregation": "Average", "operator": "GreaterThanOrEqual",
                                         "threshold": 60},
                       "scaleAction": {"direction": "Increase", "type": "ChangeCount", "value": "2",
                                       "cooldown": "PT20M"}}],
            "recurrence": {"frequency": "Week",
                           "schedule": {"timeZone": "Pacific Standard Time",
                                        "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                                        "hours": [8], "minutes": [0]}}}],
        "enabled": True, "name": "webfrontend-norapp-norapp",
        "targetResourceUri": "/subscriptions/s/resourceGroups/norapp/providers/microsoft.classicCompute/"
                             "domainNames/norapp/availabilitySets/webfrontend",
        "notifications": [{"operation": "Scale", "email": {"sendToSubscriptionAdministrator": False,
                                                            "sendToSubscriptionCoAdministrators": False,
                                                            "customEmails": ["user1@mycompany.com"]}}]}}


def test_azure_rest_example_adds_two_on_high_cpu():
    policy, losses = import_native(json.dumps(AZURE_DAY), "azure")
    assert policy["profiles"][0]["recurrence"]["time_zone"] == "Pacific Standard Time"
    assert losses.lines == ["$.properties.notifications: notifications are not part of a policy; dropped"]
    now = AZURE_NOW + 8 * 3600       # Wednesday 10:00 Pacific: the "Day" profile is in force
    series = {"series": [[now - 300 * (9 - i), 70] for i in range(10)]}
    req = {"semantics": "azure", "now": now, "current_replicas": 2, "policy": policy,
           "observations": {"metrics": {"Percentage CPU": series}}}
    assert decide(req)["desired_replicas"] == 4          # "Increase", "ChangeCount", "value": "2"


# https://docs.aws.amazon.com/autoscaling/ec2/userguide/policy_creating.html: config.json of
# `aws autoscaling put-scaling-policy --policy-type TargetTrackingScaling`
AWS_TT = {"AutoScalingGroupName": "my-asg", "PolicyName": "cpu50-target-tracking-scaling-policy",
          "PolicyType": "TargetTrackingScaling",
          "TargetTrackingConfiguration": {"TargetValue": 50.0,
                                          "PredefinedMetricSpecification":
                                              {"PredefinedMetricType": "ASGAverageCPUUtilization"}}}

# https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-scaling-steps:
# threshold 50; [0, 10) 0, [10, 20) +10 %, [20, ∞) +30 % of a group of 10
AWS_STEP = {
    "UpdateAutoScalingGroup": [{"AutoScalingGroupName": "my-asg", "MinSize": 1, "MaxSize": 20}],
    "PutScalingPolicy": [{"AutoScalingGroupName": "my-asg", "PolicyName": "step-out", "PolicyType": "StepScaling",
                          "AdjustmentType": "PercentChangeInCapacity",
                          "StepAdjustments": [
                              {"MetricIntervalLowerBound": 0.0, "MetricIntervalUpperBound": 10.0, "ScalingAdjustment": 0},
                              {"MetricIntervalLowerBound": 10.0, "MetricIntervalUpperBound": 20.0,
                               "ScalingAdjustment": 10},
                              {"MetricIntervalLowerBound": 20.0, "ScalingAdjustment": 30}]}],
    "PutMetricAlarm": [{"AlarmName": "step-out-alarm", "MetricName": "cpu", "Namespace": "AWS/EC2",
                        "Statistic": "Average", "Period": 60, "EvaluationPeriods": 1, "Threshold": 50.0,
                        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                        "AlarmActions": ["arn:aws:autoscaling:r:1:scalingPolicy:x:autoScalingGroupName/my-asg:"
                                         "policyName/step-out"]}]}


def _aws_request(policy: dict, current: int, cpu: float) -> dict:
    return {"semantics": "aws", "now": NOW, "current_replicas": current, "policy": policy,
            "observations": {"status_replicas": current,
                             "metrics": {"cpu": {"series": [[NOW - 60 * j, cpu] for j in range(20, -1, -1)]}}}}


def test_aws_target_tracking_example_scales_out_above_its_target():
    """"your Auto Scaling group will scale out ... when CPU exceeds 50 percent"
    (as-scaling-target-tracking.html): 2 instances at 100 % against 50 % need 4."""
    policy, _ = import_native(json.dumps(AWS_TT), "aws")
    policy["max_replicas"] = 10
    assert policy["metrics"] == [{"type": "resource", "name": "cpu",
                                  "target": {"type": "Utilization", "average_utilization": 50}}]
    assert decide(_aws_request(policy, 2, 100))["desired_replicas"] == 4


def test_aws_step_example_adds_one_at_60_and_three_at_70():
    """The guide: at 60 "increases the capacity ... by 10 percent" (one of 10), at 70 "by 30 percent"."""
    policy, losses = import_native(json.dumps(AWS_STEP), "aws")
    assert losses.lines == []
    assert decide(_aws_request(policy, 10, 60))["desired_replicas"] == 11
    assert decide(_aws_request(policy, 10, 70))["desired_replicas"] == 13


# https://docs.aws.amazon.com/autoscaling/ec2/userguide/examples-scaling-policies.html ("Example scaling
# policies for the AWS CLI"): the config.json files of `--target-tracking-configuration file://config.json`
# as the page shows them, and the step policies' `put-scaling-policy` options as the request bodies the
# CLI sends (`--cli-input-json`), with the alarm of the step scaling walkthrough
# (https://docs.aws.amazon.com/autoscaling/ec2/userguide/step-scaling-create-scale-out-policy.html:
# Step-Scaling-AlarmHigh-AddCapacity, CPUUtilization Average, 120 s × 2, >= 60).
EXAMPLES_URL = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/examples-scaling-policies.html"
CPU50_CONFIG = """{
  "TargetValue": 50.0,
  "PredefinedMetricSpecification": {
    "PredefinedMetricType": "ASGAverageCPUUtilization"
  }
}"""
SQS100_CONFIG = """{
  "TargetValue": 100.0,
  "CustomizedMetricSpecification": {
    "MetricName": "MyBacklogPerInstance",
    "Namespace": "MyNamespace",
    "Dimensions": [{
      "Name": "MyOptionalMetricDimensionName",
      "Value": "MyOptionalMetricDimensionValue"
    }],
    "Statistic": "Average",
    "Unit": "None"
  }
}"""
ALB1000_CONFIG = """{
  "TargetValue": 1000.0,
  "PredefinedMetricSpecification": {
    "PredefinedMetricType": "ALBRequestCountPerTarget",
    "ResourceLabel": "app/my-alb/778d41231b141a0f/targetgroup/my-alb-target-group/943f017f100becff"
  },
  "DisableScaleIn": true
}"""
STEP_OUT = {"UpdateAutoScalingGroup": [{"AutoScalingGroupName": "my-asg", "MinSize": 1, "MaxSize": 20}],
            "PutScalingPolicy": [{"AutoScalingGroupName": "my-asg", "PolicyName": "my-step-scale-out-policy",
                                  "PolicyType": "StepScaling", "AdjustmentType": "PercentChangeInCapacity",
                                  "MetricAggregationType": "Average",
                                  "StepAdjustments": [
                                      {"MetricIntervalLowerBound": 10.0, "MetricIntervalUpperBound": 20.0,
                                       "ScalingAdjustment": 10},
                                      {"MetricIntervalLowerBound": 20.0, "MetricIntervalUpperBound": 30.0,
                                       "ScalingAdjustment": 20},
                                      {"MetricIntervalLowerBound": 30.0, "ScalingAdjustment": 30}],
                                  "MinAdjustmentMagnitude": 1}],
            "PutMetricAlarm": [{"AlarmName": "Step-Scaling-AlarmHigh-AddCapacity", "MetricName": "CPUUtilization",
                                "Namespace": "AWS/EC2", "Statistic": "Average", "Period": 120,
                                "EvaluationPeriods": 2, "Threshold": 60,
                                "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                                "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "my-asg"}],
                                "AlarmActions": ["arn:aws:autoscaling:region:123456789012:scalingPolicy:ac542982-"
                                                 "cbeb-4294-891c-a5a941dfa787:autoScalingGroupName/my-asg:"
                                                 "policyName/my-step-scale-out-policy"]}]}


def _aws_metric_request(policy: dict, current: int, name: str, value: float) -> dict:
    return {"semantics": "aws", "now": NOW, "current_replicas": current, "policy": {**policy, "max_replicas": 20},
            "observations": {"status_replicas": current,
                             "metrics": {name: {"series": [[NOW - 60 * j, value] for j in range(20, -1, -1)]}}}}


def test_aws_cpu50_config_json_scales_out_above_50_percent():
    """Example 1; "your Auto Scaling group will scale out ... when CPU exceeds 50 percent"
    (as-scaling-target-tracking.html): 2 instances at 100 % against 50 % need 4."""
    policy, losses = import_native(CPU50_CONFIG, "aws")
    assert policy["metrics"] == [{"type": "resource", "name": "cpu",
                                  "target": {"type": "Utilization", "average_utilization": 50}}]
    assert losses.lines == ["$: no Auto Scaling group bounds in the input; min_replicas read as 0 and "
                            "max_replicas as unbounded"]
    assert decide(_aws_metric_request(policy, 2, "cpu", 100))["desired_replicas"] == 4


def test_aws_customized_metric_config_json_is_a_per_instance_target():
    """Example 2: a customized metric (a backlog per instance) held at 100."""
    policy, losses = import_native(SQS100_CONFIG, "aws")
    assert policy["metrics"] == [{"type": "pods", "name": "MyBacklogPerInstance",
                                  "target": {"type": "AverageValue", "average_value": 100}}]
    assert losses.notes == ["$.CustomizedMetricSpecification.Dimensions: dimensions are the metric source's business"]


def test_aws_scale_out_only_config_json_never_scales_in():
    """Example 3, "To apply a target tracking scaling policy for scale out only": DisableScaleIn true;
    "scale in is disabled and the target tracking scaling policy won't remove capacity"
    (API_TargetTrackingConfiguration.html)."""
    policy, losses = import_native(ALB1000_CONFIG, "aws")
    [metric] = policy["metrics"]
    assert metric["disable_scale_in"] is True and metric["target"] == {"type": "AverageValue", "average_value": 1000}
    assert losses.notes == ["$.PredefinedMetricSpecification.ResourceLabel: the load balancer's label is the metric "
                            "source's business"]
    assert decide(_aws_metric_request(policy, 6, metric["name"], 10))["desired_replicas"] == 6
    assert decide(_aws_metric_request(policy, 2, metric["name"], 3000))["desired_replicas"] == 6


def test_aws_step_scale_out_example_adds_its_steps_above_the_alarm_threshold():
    """Example 4 with its alarm (>= 60): the step bounds are relative to the threshold (as-scaling-simple-step.html,
    "Step adjustments"), so [70, 80) adds 10 %, [80, 90) 20 %, 90 and above 30 %, and [60, 70) matches no step;
    MinAdjustmentMagnitude 1 makes 10 % of 2 instances one instance."""
    policy, losses = import_native(json.dumps(STEP_OUT), "aws")
    assert losses.lines == []
    [rule] = policy["rules"]
    # AWS/EC2 CPUUtilization on the group is the neutral cpu (what render writes cpu as)
    assert (rule["metric"], rule["threshold"], rule["time_grain_seconds"], rule["time_window_seconds"]) == \
        ("cpu", 60, 120, 240)
    sizes = [decide(_aws_metric_request(policy, 10, "cpu", cpu))["desired_replicas"]
             for cpu in (65, 75, 85, 95)]
    assert sizes == [10, 11, 12, 13]
    assert decide(_aws_metric_request(policy, 2, "cpu", 75))["desired_replicas"] == 3


def test_aws_step_scale_in_example_removes_two():
    """Example 5: MetricIntervalUpperBound 0, ScalingAdjustment -2, with a <= 40 alarm."""
    body = {"UpdateAutoScalingGroup": [{"AutoScalingGroupName": "my-asg", "MinSize": 1, "MaxSize": 20}],
            "PutScalingPolicy": [{"AutoScalingGroupName": "my-asg", "PolicyName": "my-step-scale-in-policy",
                                  "PolicyType": "StepScaling", "AdjustmentType": "ChangeInCapacity",
                                  "StepAdjustments": [{"MetricIntervalUpperBound": 0.0, "ScalingAdjustment": -2}]}],
            "PutMetricAlarm": [{"AlarmName": "Step-Scaling-AlarmLow-RemoveCapacity", "MetricName": "CPUUtilization",
                                "Namespace": "AWS/EC2", "Statistic": "Average", "Period": 120,
                                "EvaluationPeriods": 2, "Threshold": 40,
                                "ComparisonOperator": "LessThanOrEqualToThreshold",
                                "AlarmActions": ["arn:aws:autoscaling:region:123456789012:scalingPolicy:x:"
                                                 "autoScalingGroupName/my-asg:policyName/my-step-scale-in-policy"]}]}
    policy, losses = import_native(json.dumps(body), "aws")
    assert losses.lines == []
    assert decide(_aws_metric_request(policy, 6, "CPUUtilization", 20))["desired_replicas"] == 4
    assert decide(_aws_metric_request(policy, 6, "CPUUtilization", 50))["desired_replicas"] == 6


# https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings
# ("Autoscale setting schema"): setting1 on vmss1, one profile of capacity 1..4, "The scale-out rule is
# triggered when the virtual machine scale set's average percentage CPU metric is greater than 85 percent
# for the past 10 minutes", the scale-in rule when it is below 60 percent; +1 / -1, cooldown PT5M.
SETTING1 = """{
  "id": "/subscriptions/s1/resourceGroups/rg1/providers/microsoft.insights/autoscalesettings/setting1",
  "name": "setting1",
  "type": "Microsoft.Insights/autoscaleSettings",
  "location": "East US",
  "properties": {
    "enabled": true,
    "targetResourceUri": "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.Compute/virtualMachineScaleSets/vmss1",
    "profiles": [
      {
        "name": "mainProfile",
        "capacity": {"minimum": "1", "maximum": "4", "default": "1"},
        "rules": [
          {
            "metricTrigger": {
              "metricName": "Percentage CPU",
              "metricResourceUri": "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.Compute/virtualMachineScaleSets/vmss1",
              "timeGrain": "PT1M", "statistic": "Average", "timeWindow": "PT10M", "timeAggregation": "Average",
              "operator": "GreaterThan", "threshold": 85
            },
            "scaleAction": {"direction": "Increase", "type": "ChangeCount", "value": "1", "cooldown": "PT5M"}
          },
          {
            "metricTrigger": {
              "metricName": "Percentage CPU",
              "metricResourceUri": "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.Compute/virtualMachineScaleSets/vmss1",
              "timeGrain": "PT1M", "statistic": "Average", "timeWindow": "PT10M", "timeAggregation": "Average",
              "operator": "LessThan", "threshold": 60
            },
            "scaleAction": {"direction": "Decrease", "type": "ChangeCount", "value": "1", "cooldown": "PT5M"}
          }
        ]
      }
    ]
  }
}"""


def test_azure_setting1_scales_out_above_85_and_in_below_60():
    policy, losses = import_native(SETTING1, "azure")
    assert losses.lines == []
    assert (policy["min_replicas"], policy["max_replicas"]) == (1, 4)
    # its default profile keeps its name (Azure reports a decision under it), its bounds the policy's too
    [profile] = policy["profiles"]
    assert (profile["name"], profile["capacity"]) == ("mainProfile",
                                                      {"minimum": 1, "maximum": 4, "default": 1})
    assert [(r["operator"], r["threshold"], r["time_window_seconds"], r["action"]["cooldown_seconds"])
            for r in profile["rules"]] == [("GreaterThan", 85, 600, 300), ("LessThan", 60, 600, 300)]

    def size(current: int, cpu: float) -> int:
        series = {"series": [[AZURE_NOW - 60 * (9 - i), cpu] for i in range(10)]}
        return decide({"semantics": "azure", "now": AZURE_NOW, "current_replicas": current, "policy": policy,
                       "observations": {"metrics": {"cpu": series}}})["desired_replicas"]

    assert [r["metric"] for r in profile["rules"]] == ["cpu", "cpu"]   # the scale set's Percentage CPU
    assert [size(2, cpu) for cpu in (90, 70, 20)] == [3, 2, 1]
    assert size(4, 90) == 4 and size(1, 20) == 1        # capacity.maximum / capacity.minimum
    # 50 % on 2 is below 60, but on 1 it would be 100 %, above the scale-out threshold: "autoscale
    # won't scale in" (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-flapping)
    assert size(2, 50) == 2
