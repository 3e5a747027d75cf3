"""A neutral metric that render writes as a provider's own comes back from import under its
neutral name, so that the imported policy reads the observations the policy did: ``cpu``
as AWS/EC2 ``CPUUtilization`` on the group, Azure's ``Percentage CPU`` on the scale set,
GCE's CPU signal and its network metrics, KEDA's cpu trigger — run as a newcomer runs it,
``render`` into a file, then ``import`` it."""
from __future__ import annotations

import json

import yaml

RULES = """\
name: web
min_replicas: 1
max_replicas: 10
metrics:
  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}
  - {type: pods, name: network_in, target: {type: AverageValue, average_value: 5000000}}
rules:
  - {metric: cpu, operator: GreaterThan, threshold: 70, action: {direction: Increase, type: ChangeCount, value: 1}}
  - {metric: cpu, operator: LessThan, threshold: 30, action: {direction: Decrease, type: ChangeCount, value: 1}}
"""


def _round_trip(cli, tmp_path, to: str) -> dict:
    policy = tmp_path / "web.yaml"
    policy.write_text(RULES)
    rendered = cli("render", str(policy), "--to", to)
    assert rendered.returncode == 0, rendered.stderr
    native = tmp_path / f"{to}.native"
    native.write_text(rendered.stdout)
    imported = cli("import", str(native), "--from", to)
    assert imported.returncode == 0, imported.stderr
    [back] = list(yaml.safe_load_all(imported.stdout))
    return back


def test_aws_cpu_utilization_on_the_group_comes_back_as_cpu(cli, tmp_path):
    back = _round_trip(cli, tmp_path, "aws")
    assert [r["metric"] for r in back["rules"]] == ["cpu", "cpu"]
    assert [(m["type"], m["name"]) for m in back["metrics"]] == [("resource", "cpu"), ("pods", "network_in")]


def test_azure_percentage_cpu_on_the_scale_set_comes_back_as_cpu(cli, tmp_path):
    back = _round_trip(cli, tmp_path, "azure")
    assert back["name"] == "web" and [r["metric"] for r in back["rules"]] == ["cpu", "cpu"]


def test_gce_cpu_signal_and_network_metric_come_back_as_their_neutral_names(cli, tmp_path):
    back = _round_trip(cli, tmp_path, "gce")
    assert [(m["type"], m["name"]) for m in back["metrics"]] == [("resource", "cpu"), ("pods", "network_in")]


def test_keda_cpu_trigger_comes_back_as_cpu(cli, tmp_path):
    back = _round_trip(cli, tmp_path, "keda")
    assert back["metrics"][0] == {"type": "resource", "name": "cpu",
                                  "target": {"type": "Utilization", "average_utilization": 60}}


def test_a_metric_on_another_resource_keeps_its_name(cli, tmp_path):
    """Percentage CPU of another VM scale set is not this one's cpu."""
    setting = {"type": "Microsoft.Insights/autoscalesettings", "name": "web", "properties": {
        "targetResourceUri": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/web",
        "profiles": [{"name": "web", "capacity": {"minimum": "1", "maximum": "4", "default": "1"}, "rules": [{
            "metricTrigger": {"metricName": "Percentage CPU", "metricResourceUri": "/subscriptions/s/resourceGroups/"
                              "rg/providers/Microsoft.Compute/virtualMachineScaleSets/other",
                              "timeGrain": "PT1M", "statistic": "Average", "timeWindow": "PT5M",
                              "timeAggregation": "Average", "operator": "GreaterThan", "threshold": 70},
            "scaleAction": {"direction": "Increase", "type": "ChangeCount", "value": "1", "cooldown": "PT5M"}}]}]}}
    f = tmp_path / "setting.json"
    f.write_text(json.dumps(setting))
    proc = cli("import", str(f), "--from", "azure")
    assert proc.returncode == 0, proc.stderr
    [back] = list(yaml.safe_load_all(proc.stdout))
    assert back["rules"][0]["metric"] == "Percentage CPU"
