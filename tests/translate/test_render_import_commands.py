"""``scalebridge render`` and ``scalebridge import``: native configuration on stdout, the
loss report on stderr, ``--strict`` exits 1 when anything is lost, ``--target`` fills in
the scaled resource, and bad native input is one line naming the field, exit 2."""
from __future__ import annotations

import json

import yaml

from scalebridge.cli import main
from scalebridge.translate import PLACEHOLDER

POLICY = """\
name: web
min_replicas: 2
max_replicas: 10
metrics:
  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}
behavior:
  scale_up:
    policies: [{type: Pods, value: 4, period_seconds: 15}]
"""


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_writes_the_hpa_and_keeps_stderr_for_the_report(tmp_path, capsys):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    code, out, err = _run(capsys, "render", str(f), "--to", "kubernetes", "--strict",
                          "--target", "{kind: Deployment, namespace: shop, name: web}")
    assert code == 0 and err == ""
    hpa = yaml.safe_load(out)
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert hpa["metadata"] == {"name": "web", "namespace": "shop"}


def test_render_without_target_marks_the_placeholder(tmp_path, capsys):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    code, out, err = _run(capsys, "render", str(f), "--to", "aws")
    assert code == 0
    body = json.loads(out)
    assert body["UpdateAutoScalingGroup"][0]["AutoScalingGroupName"] == PLACEHOLDER
    assert f"scalebridge render: note: AutoScalingGroupName: placeholder {PLACEHOLDER!r}" in err


def test_strict_exits_1_when_something_is_lost(tmp_path, capsys):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    code, out, err = _run(capsys, "render", str(f), "--to", "gce", "--strict", "--target",
                          '{"project": "shop-prod", "zone": "europe-west1-b", "instance_group_manager": "web"}')
    assert code == 1
    assert json.loads(out)["target"].endswith("/projects/shop-prod/zones/europe-west1-b/instanceGroupManagers/web")
    assert err.splitlines() == ["scalebridge render: lost: behavior.scale_up.policies[0]: GCE has no scale-up "
                                "rate limit; dropped"]
    code, _, _ = _run(capsys, "render", str(f), "--to", "gce")
    assert code == 0


def test_a_bad_target_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    code, out, err = _run(capsys, "render", str(f), "--to", "azure", "--target", "[1, 2]")
    assert code == 2 and out == ""
    assert err.startswith("scalebridge render: --target: expected a mapping") and err.count("\n") == 1


def test_import_writes_a_policy_file_with_the_providers_semantics(tmp_path, capsys):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    _, hpa, _ = _run(capsys, "render", str(f), "--to", "kubernetes")
    native = tmp_path / "hpa.yaml"
    native.write_text(hpa)
    code, out, err = _run(capsys, "import", str(native), "--from", "kubernetes")
    assert code == 0
    policy = yaml.safe_load(out)
    assert policy["semantics"] == "kubernetes"
    assert policy["behavior"]["scale_up"]["policies"] == [{"type": "Pods", "value": 4, "period_seconds": 15}]
    back = tmp_path / "back.yaml"
    back.write_text(out)
    code, _, _ = _run(capsys, "validate", str(back))
    assert code == 0


def _bad(tmp_path, capsys, provider, text):
    f = tmp_path / "native"
    f.write_text(text)
    code, out, err = _run(capsys, "import", str(f), "--from", provider)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_an_hpa_with_an_unknown_metric_type_names_the_field(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "kubernetes", """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  metrics:
  - type: Resources
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
""")
    assert err.startswith("scalebridge import: $.spec.metrics[0].type: unknown metric type 'Resources'")


def test_an_azure_setting_with_an_invalid_recurrence_names_the_field(tmp_path, capsys):
    setting = {"type": "Microsoft.Insights/autoscalesettings", "location": "westeurope",
               "properties": {"enabled": True, "targetResourceUri": "/subscriptions/s",
                              "profiles": [{"name": "weekend", "capacity": {"minimum": "1", "maximum": "3",
                                                                            "default": "1"},
                                            "rules": [],
                                            "recurrence": {"frequency": "Week",
                                                           "schedule": {"timeZone": "W. Europe Standard Time",
                                                                        "days": ["Saturday", "Sundays"],
                                                                        "hours": [0], "minutes": [0]}}}]}}
    err = _bad(tmp_path, capsys, "azure", json.dumps(setting))
    assert err.startswith("scalebridge import: $.properties.profiles[0].recurrence.schedule.days[1]: "
                          "expected a day name")
    setting["properties"]["profiles"][0]["recurrence"]["frequency"] = "Month"
    err = _bad(tmp_path, capsys, "azure", json.dumps(setting))
    assert err.startswith("scalebridge import: $.properties.profiles[0].recurrence.frequency: ")


def test_an_aws_step_policy_with_overlapping_bounds_names_the_field(tmp_path, capsys):
    body = {"PutScalingPolicy": [{"AutoScalingGroupName": "web", "PolicyName": "out", "PolicyType": "StepScaling",
                                  "AdjustmentType": "ChangeInCapacity",
                                  "StepAdjustments": [
                                      {"MetricIntervalLowerBound": 0, "MetricIntervalUpperBound": 20,
                                       "ScalingAdjustment": 1},
                                      {"MetricIntervalLowerBound": 10, "ScalingAdjustment": 3}]}],
            "PutMetricAlarm": [{"AlarmName": "a", "MetricName": "cpu", "Namespace": "AWS/EC2", "Period": 60,
                                "EvaluationPeriods": 1, "Threshold": 50,
                                "ComparisonOperator": "GreaterThanThreshold",
                                "AlarmActions": ["arn:aws:autoscaling:r:1:scalingPolicy:x:policyName/out"]}]}
    err = _bad(tmp_path, capsys, "aws", json.dumps(body))
    assert err.startswith("scalebridge import: $.PutScalingPolicy[0].StepAdjustments: steps overlap")


def test_input_that_is_not_json_names_the_line(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "gce", '{"autoscalingPolicy": {')
    assert err.startswith("scalebridge import: $: not JSON")


def test_an_aws_step_policy_with_overlapping_bounds_is_refused_without_its_alarm(tmp_path, capsys):
    """PutScalingPolicy refuses overlapping step intervals whatever alarm invokes the policy
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-scaling-steps:
    "The ranges of your step adjustments can't overlap or have a gap")."""
    body = {"AutoScalingGroupName": "web", "PolicyName": "out", "PolicyType": "StepScaling",
            "AdjustmentType": "ChangeInCapacity",
            "StepAdjustments": [{"MetricIntervalLowerBound": 0, "MetricIntervalUpperBound": 20, "ScalingAdjustment": 1},
                                {"MetricIntervalLowerBound": 10, "ScalingAdjustment": 3}]}
    err = _bad(tmp_path, capsys, "aws", json.dumps(body))
    assert err.startswith("scalebridge import: $.StepAdjustments: steps overlap")


def test_an_aws_field_the_api_does_not_know_names_the_field(tmp_path, capsys):
    """botocore's model of PutScalingPolicy: TargetTrackingConfiguration has CustomizedMetricSpecification,
    DisableScaleIn, PredefinedMetricSpecification and TargetValue; boto3 refuses anything else."""
    body = {"AutoScalingGroupName": "web", "PolicyName": "tt", "PolicyType": "TargetTrackingScaling",
            "TargetTrackingConfiguration": {"TargetValue": 50, "ScaleInCooldown": 300,
                                            "PredefinedMetricSpecification": {
                                                "PredefinedMetricType": "ASGAverageCPUUtilization"}}}
    err = _bad(tmp_path, capsys, "aws", json.dumps(body))
    assert err.startswith("scalebridge import: $.TargetTrackingConfiguration.ScaleInCooldown: unknown field")
    body["TargetTrackingConfiguration"].pop("ScaleInCooldown")
    body["StepAdjustments"] = [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1, "Cooldown": 60}]
    body["PolicyType"] = "StepScaling"
    err = _bad(tmp_path, capsys, "aws", json.dumps(body))
    assert err.startswith("scalebridge import: $.StepAdjustments[0].Cooldown: unknown field")


def test_bounds_the_provider_refuses_name_the_native_field(tmp_path, capsys):
    """Each API refuses a negative count and a minimum above the maximum (HPA validation: "must be
    greater than or equal to minReplicas"; UpdateAutoScalingGroup, autoscalers.insert and the autoscale
    setting's capacity likewise): the message names the native field, not the policy's."""
    hpa = ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n"
           "spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 3, maxReplicas: 2}\n")
    assert _bad(tmp_path, capsys, "kubernetes", hpa) == \
        "scalebridge import: $.spec.minReplicas: 3 is greater than the maximum ($.spec.maxReplicas: 2)\n"
    gce = {"autoscalingPolicy": {"minNumReplicas": 1, "maxNumReplicas": -4}}
    assert _bad(tmp_path, capsys, "gce", json.dumps(gce)) == \
        "scalebridge import: $.autoscalingPolicy.maxNumReplicas: a count is zero or more, got -4\n"
    aws = {"UpdateAutoScalingGroup": [{"AutoScalingGroupName": "web", "MinSize": 5, "MaxSize": 2}]}
    assert _bad(tmp_path, capsys, "aws", json.dumps(aws)).startswith(
        "scalebridge import: $.UpdateAutoScalingGroup[0].MinSize: 5 is greater than the maximum")
    azure = {"properties": {"profiles": [{"name": "p", "capacity": {"minimum": "4", "maximum": "2", "default": "2"},
                                          "rules": []}]}}
    assert _bad(tmp_path, capsys, "azure", json.dumps(azure)).startswith(
        "scalebridge import: $.properties.profiles[0].capacity.minimum: 4 is greater than the maximum")
