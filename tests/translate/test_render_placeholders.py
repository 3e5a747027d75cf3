"""``render`` says everything it could not fill (issue #26, item 1): every value written
as a stand-in is a ``note:`` naming the field and the ``--target`` key that fills it, and
``--strict`` exits 1 while one is left; ``--target`` takes what each native configuration
needs, refuses keys it does not take (with "did you mean") and ids that are no ids; a
rule on a neutral metric is the provider's own metric, one without an equivalent a loss."""
from __future__ import annotations

import json

import pytest
import yaml

from scalebridge.cli import main
from scalebridge.translate import render

from .test_native_validity import COMPLETE

# the newcomer's policy: a CPU target, a rule on the neutral metric `cpu`, a schedule
POLICY = """\
name: web
min_replicas: 2
max_replicas: 20
metrics:
  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}
rules:
  - {metric: cpu, operator: GreaterThan, threshold: 85, time_window_seconds: 300,
     action: {direction: Increase, type: ChangeCount, value: 3, cooldown_seconds: 300}}
"""
RULE = {"metric": "cpu", "operator": "GreaterThan", "threshold": 85,
        "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}
# every --target key whose absence leaves a placeholder, per cloud (kubernetes' namespace may be left out:
# the HPA then goes where kubectl applies it, which a note says)
FILLS = {"kubernetes": ["kind", "name"], "gce": ["project", "zone", "instance_group_manager"],
         "azure": ["subscription_id", "resource_group", "scale_set", "location"],
         "aws": ["auto_scaling_group", "region", "account"]}


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def policy_file(tmp_path):
    f = tmp_path / "web.yaml"
    f.write_text(POLICY)
    return str(f)


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("scalebridge render: note: ")]


def test_the_azure_location_is_a_target_key_and_a_note_when_missing(policy_file, capsys):
    """The newcomer: `"location": "PLACEHOLDER-set-with-target"` with a full --target, no note, --strict
    passing."""
    target = {k: v for k, v in COMPLETE["azure"].items() if k != "location"}
    code, out, err = _run(capsys, "render", policy_file, "--to", "azure", "--strict", "--target", json.dumps(target))
    assert code == 1 and json.loads(out)["location"] == "PLACEHOLDER-set-with-target"
    assert _notes(err) == ["scalebridge render: note: location: placeholder 'PLACEHOLDER-set-with-target': pass "
                           "--target location (the scale set's region, such as westeurope)"]
    code, out, err = _run(capsys, "render", policy_file, "--to", "azure", "--target", json.dumps(COMPLETE["azure"]))
    assert code == 0 and json.loads(out)["location"] == "westeurope" and _notes(err) == []


def test_an_aws_alarm_action_says_apply_native_fills_it(policy_file, capsys):
    """The newcomer: `AlarmActions: arn:aws:autoscaling:PLACEHOLDER:…` with no note and --strict passing. AWS
    gives a scaling policy its id when PutScalingPolicy creates it: no --target can, apply does."""
    code, out, err = _run(capsys, "render", policy_file, "--to", "aws", "--strict", "--target",
                          json.dumps(COMPLETE["aws"]))
    assert code == 1
    [alarm] = json.loads(out)["PutMetricAlarm"]
    assert alarm["AlarmActions"] == ["arn:aws:autoscaling:eu-west-1:123456789012:scalingPolicy:PLACEHOLDER-policy-id:"
                                     "autoScalingGroupName/web:policyName/web-rule-0"]
    assert _notes(err) == [
        "scalebridge render: note: PutMetricAlarm[0].AlarmActions[0]: placeholder 'PLACEHOLDER-policy-id': the id of "
        "the policy's ARN: use the PolicyARN that PutScalingPolicy returns for web-rule-0 (AWS gives a policy its id "
        "when it creates it; scalebridge apply does this)"]


def test_a_target_key_that_does_not_exist_is_refused_with_the_closest(policy_file, capsys):
    """The newcomer: `{kind: Deployment, nam: web}` rendered a placeholder name, exit 0."""
    code, out, err = _run(capsys, "render", policy_file, "--to", "kubernetes", "--target", "{kind: Deployment, nam: web}")
    assert (code, out) == (2, "")
    assert err == ("scalebridge render: --target.nam: unknown key; did you mean 'name'? valid keys for --to "
                   "kubernetes: kind, name, namespace, api_version, resource, kubernetes_version, metrics\n")


def test_ids_are_checked(policy_file, capsys):
    """The newcomer: `subscription_id: 0000` became `/subscriptions/0/`."""
    code, out, err = _run(capsys, "render", policy_file, "--to", "azure", "--target",
                          "{subscription_id: 0000, resource_group: shop, scale_set: web}")
    assert (code, out) == (2, "")
    assert err == ("scalebridge render: --target.subscription_id: the subscription ID: a GUID such as "
                   "00000000-0000-0000-0000-000000000000, got 0\n")
    for provider, bad, why in (("aws", {"account": "12345"}, "twelve digits"),
                               ("gce", {"project": "p"}, "a project ID such as my-project"),
                               ("kubernetes", {"namespace": "Shop"}, "a DNS-1123 label")):
        code, _, err = _run(capsys, "render", policy_file, "--to", provider, "--target", json.dumps(bad))
        assert code == 2 and why in err and err.count("\n") == 1


@pytest.mark.parametrize("provider", list(FILLS))
def test_a_partial_target_leaves_one_note_per_missing_value_and_strict_fails(provider, policy_file, tmp_path, capsys):
    """Must show: with a complete --target no placeholder is left, and a policy the provider expresses
    whole passes --strict; each key left out is one note naming it, and --strict exits 1. (An AWS rule's
    alarm keeps one: its policy's id, which AWS makes and apply writes.)"""
    whole = yaml.safe_load(POLICY)
    whole.pop("metrics" if provider == "azure" else "rules")
    f = tmp_path / "whole.yaml"
    f.write_text(yaml.safe_dump(whole))
    code, _, err = _run(capsys, "render", str(f), "--to", provider, "--strict", "--target",
                        json.dumps(COMPLETE[provider]))
    assert code == 0 and [n for n in _notes(err) if "placeholder" in n] == []
    f = policy_file if provider == "aws" else str(f)       # the ARN of the rule's alarm needs region and account
    _, _, err = _run(capsys, "render", f, "--to", provider, "--target", json.dumps(COMPLETE[provider]))
    complete = _notes(err)
    for key in FILLS[provider]:
        partial = {k: v for k, v in COMPLETE[provider].items() if k != key}
        code, _, err = _run(capsys, "render", f, "--to", provider, "--strict", "--target", json.dumps(partial))
        new = [n for n in _notes(err) if n not in complete]
        assert code == 1 and len(new) == 1 and f"pass --target {key}" in new[0], (key, new)


def test_without_a_namespace_the_hpa_says_where_it_goes(policy_file, capsys):
    code, out, err = _run(capsys, "render", policy_file, "--to", "kubernetes", "--target", "{kind: Deployment, name: web}")
    assert code == 0 and "namespace" not in yaml.safe_load(out)["metadata"]
    assert _notes(err) == ["scalebridge render: note: metadata.namespace: not set: the HPA goes in the namespace "
                           "kubectl applies it to, which must be the workload's (pass --target namespace to write it)"]


def test_a_rule_on_cpu_is_each_providers_cpu_metric():
    """The newcomer: a rule on `cpu` was the Azure metric `cpu` and an AWS alarm on `cpu` in namespace
    `scalebridge`: alarms that never fire. It is Azure's `Percentage CPU` of the scale set and AWS/EC2
    `CPUUtilization` of the group's instances (the AutoScalingGroupName dimension)."""
    policy = {"name": "web", "min_replicas": 1, "max_replicas": 5, "rules": [RULE]}
    setting, losses = render(policy, "azure", COMPLETE["azure"])
    trigger = setting["properties"]["profiles"][0]["rules"][0]["metricTrigger"]
    assert (trigger["metricName"], trigger["metricResourceUri"]) == ("Percentage CPU",
                                                                      setting["properties"]["targetResourceUri"])
    assert losses.lines == [] and losses.notes == []
    requests, losses = render(policy, "aws", COMPLETE["aws"])
    [alarm] = requests["PutMetricAlarm"]
    assert (alarm["Namespace"], alarm["MetricName"], alarm["Dimensions"]) == \
        ("AWS/EC2", "CPUUtilization", [{"Name": "AutoScalingGroupName", "Value": "web"}])
    assert losses.lines == []
    # an HPA and a GCE autoscaler have no rules (a loss); their CPU signal is their own
    for provider in ("kubernetes", "gce"):
        _, losses = render(policy, provider, COMPLETE[provider])
        assert losses.lines == [f"rules[0]: {'an HPA' if provider == 'kubernetes' else 'a GCE autoscaler'} has no "
                                "threshold rules; dropped"]
    cpu = {**policy, "rules": [], "metrics": [{"type": "resource", "name": "cpu",
                                               "target": {"type": "Utilization", "average_utilization": 60}}]}
    assert render(cpu, "gce", COMPLETE["gce"])[0]["autoscalingPolicy"]["cpuUtilization"] == {"utilizationTarget": 0.6}
    hpa, _ = render(cpu, "kubernetes", COMPLETE["kubernetes"])
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"


def test_a_neutral_metric_without_an_equivalent_is_a_loss_never_a_copy():
    policy = {"name": "web", "min_replicas": 1, "max_replicas": 5, "rules": [dict(RULE, metric="memory")]}
    _, losses = render(policy, "azure", COMPLETE["azure"])
    assert losses.lines == ["rules[0].metric: a scale set's platform metrics hold the memory available (Available "
                            "Memory Bytes, Available Memory Percentage), not the memory used; rule dropped"]
    requests, losses = render(policy, "aws", COMPLETE["aws"])
    assert requests["PutScalingPolicy"] == [] and requests["PutMetricAlarm"] == []
    assert losses.lines == ["rules[0].metric: AWS/EC2 has no memory metric (the CloudWatch agent publishes one, "
                            "CWAgent mem_used_percent); rule dropped"]
    pods = {"name": "web", "min_replicas": 1, "max_replicas": 5,
            "metrics": [{"type": "pods", "name": "memory", "target": {"type": "AverageValue", "average_value": 5}}]}
    native, losses = render(pods, "gce", COMPLETE["gce"])
    assert "customMetricUtilizations" not in native["autoscalingPolicy"]
    assert losses.lines == ["metrics[0]: Compute Engine has no memory metric without the Ops Agent "
                            "(agent.googleapis.com/memory/percent_used); dropped"]


def test_a_metric_of_the_users_own_takes_its_source_from_the_target():
    """A name that is no neutral metric is the user's: where it lives is its source, as a run
    configuration target's `metrics:` says it; without one, the native field is a placeholder."""
    policy = {"name": "web", "min_replicas": 1, "max_replicas": 5,
              "metrics": [{"type": "pods", "name": "conn", "target": {"type": "AverageValue", "average_value": 100}}],
              "rules": [dict(RULE, metric="conn")]}
    requests, losses = render(policy, "aws", {"auto_scaling_group": "web"})
    assert requests["PutScalingPolicy"][0]["TargetTrackingConfiguration"]["CustomizedMetricSpecification"][
        "Namespace"] == "PLACEHOLDER-set-with-target"
    assert ("PutScalingPolicy[0].TargetTrackingConfiguration.CustomizedMetricSpecification.Namespace: placeholder "
            "'PLACEHOLDER-set-with-target': 'conn' is no AWS/EC2 metric: pass --target metrics.conn.source (namespace, "
            "dimensions) saying where it is published") in losses.placeholders
    requests, losses = render(policy, "aws", COMPLETE["aws"])
    spec = requests["PutScalingPolicy"][0]["TargetTrackingConfiguration"]["CustomizedMetricSpecification"]
    assert spec == {"MetricName": "Connections", "Namespace": "Shop", "Statistic": "Average",
                    "Dimensions": [{"Name": "AutoScalingGroupName", "Value": "web"}]}
    assert (requests["PutMetricAlarm"][0]["Namespace"], requests["PutMetricAlarm"][0]["MetricName"]) == \
        ("Shop", "Connections")
    native, losses = render(policy, "gce", {k: v for k, v in COMPLETE["gce"].items() if k != "metrics"})
    assert losses.placeholders == ["autoscalingPolicy.customMetricUtilizations[0].metric: placeholder 'conn': a Cloud "
                                   "Monitoring metric type: pass --target metrics.conn.source.metric_type"]
    native, losses = render(policy, "gce", COMPLETE["gce"])
    assert native["autoscalingPolicy"]["customMetricUtilizations"][0]["metric"] == "custom.googleapis.com/conn"
    setting, losses = render(policy, "azure", COMPLETE["azure"])
    assert losses.notes == ["rules[0].metric: 'conn' is written as the scale set's metric 'conn': pass --target "
                            "metrics.conn.source (metric_name, metric_namespace, resource_uri) if it is another"]
    rps = {"name": "web", "min_replicas": 1, "max_replicas": 5,
           "metrics": [{"type": "object", "name": "rps", "target": {"type": "Value", "value": 100}}]}
    hpa, losses = render(rps, "kubernetes", {k: v for k, v in COMPLETE["kubernetes"].items() if k != "metrics"})
    assert len(losses.placeholders) == 3 and all("metrics.rps.source.described_object" in n
                                                 for n in losses.placeholders)
    hpa, losses = render(rps, "kubernetes", COMPLETE["kubernetes"])
    assert hpa["spec"]["metrics"][0]["object"]["describedObject"] == {"apiVersion": "networking.k8s.io/v1",
                                                                      "kind": "Ingress", "name": "main"}
    assert losses.placeholders == []


def test_a_metric_source_key_is_checked_too(policy_file, capsys):
    code, _, err = _run(capsys, "render", policy_file, "--to", "aws", "--target",
                        "{auto_scaling_group: web, metrics: {conn: {source: {namespce: Shop}}}}")
    assert code == 2
    assert err == ("scalebridge render: --target.metrics: each policy metric's source, as a run configuration "
                   "target's metrics:: conn.source.namespce: not a key of a aws metric source; did you mean "
                   "'namespace'? valid: dimensions, extended_statistic, metric_name, namespace, per_member, "
                   "period_seconds, statistic, unit\n")
