"""Imports usable as they come out (issue #26, item 5): every autoscaler of a file is a
policy named after it; ``import --out DIR`` writes one policy file per autoscaler, and
stdout is a YAML stream of those policies (docs/translate.md); every line of the loss
report names its policy; an import that exits 0 always passes ``validate --semantics``;
a native key off by case or a letter gets "did you mean"."""
from __future__ import annotations

import json

import yaml

from scalebridge.cli import main

HPAS = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: frontend}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: frontend}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: worker}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  maxReplicas: 30
  metrics:
  - type: External
    external:
      metric: {name: queue, selector: {matchLabels: {queue: jobs}}}
      target: {type: AverageValue, averageValue: "30"}
"""


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _validates(capsys, path, semantics) -> None:
    code, out, err = _run(capsys, "validate", "--semantics", semantics, str(path))
    assert code == 0, err


def test_several_hpas_are_named_policies_one_file_each(tmp_path, capsys):
    """The newcomer: several HPAs imported as one multi-document YAML that `validate` rejects ("but found
    another document"), without names."""
    f = tmp_path / "hpas.yaml"
    f.write_text(HPAS)
    code, out, err = _run(capsys, "import", str(f), "--from", "kubernetes")
    assert code == 0
    docs = list(yaml.safe_load_all(out))
    assert [d["name"] for d in docs] == ["frontend", "worker"]
    code, out, _ = _run(capsys, "import", str(f), "--from", "kubernetes", "--out", str(tmp_path / "policies"))
    assert code == 0
    written = out.splitlines()
    assert written == [str(tmp_path / "policies" / "frontend.yaml"), str(tmp_path / "policies" / "worker.yaml")]
    for path, doc in zip(written, docs):
        assert yaml.safe_load(open(path)) == doc
        _validates(capsys, path, "kubernetes")


def test_every_loss_line_names_its_policy(tmp_path, capsys):
    """The newcomer: every loss line pointed at `$`, and which object lost what could not be told."""
    f = tmp_path / "hpas.yaml"
    f.write_text(HPAS)
    _, _, err = _run(capsys, "import", str(f), "--from", "kubernetes")
    assert ("scalebridge import: lost: worker: $[1].spec.metrics[0].external.metric.selector: a metric's label "
            "selector is the metric source's business; dropped") in err.splitlines()
    assert all(line.split(": ")[2] in ("frontend", "worker") for line in err.splitlines())


CFN = {"Resources": {
    "Blue": {"Type": "AWS::AutoScaling::AutoScalingGroup", "Properties": {"MinSize": "2", "MaxSize": "8"}},
    "Green": {"Type": "AWS::AutoScaling::AutoScalingGroup",
              "Properties": {"AutoScalingGroupName": "green-asg", "MinSize": "1", "MaxSize": {"Ref": "GreenMax"}}},
    "BlueCpu": {"Type": "AWS::AutoScaling::ScalingPolicy",
                "Properties": {"AutoScalingGroupName": {"Ref": "Blue"}, "PolicyType": "TargetTrackingScaling",
                               "TargetTrackingConfiguration": {
                                   "TargetValue": 50,
                                   "PredefinedMetricSpecification": {
                                       "PredefinedMetricType": "ASGAverageCPUUtilization"}}}}}}


def test_auto_scaling_groups_are_named_by_their_name_or_resource(tmp_path, capsys):
    f = tmp_path / "template.json"
    f.write_text(json.dumps(CFN))
    code, out, err = _run(capsys, "import", str(f), "--from", "aws", "--out", str(tmp_path / "out"))
    assert code == 0
    assert out.splitlines() == [str(tmp_path / "out" / "Blue.yaml"), str(tmp_path / "out" / "green-asg.yaml")]
    assert err.splitlines() == [
        'scalebridge import: lost: green-asg: $.Resources.Green.Properties.MaxSize: unresolved template expression '
        '{"Ref": "GreenMax"}; left out']
    blue = yaml.safe_load((tmp_path / "out" / "Blue.yaml").read_text())
    assert blue["name"] == "Blue" and blue["metrics"][0]["target"] == {"type": "Utilization",
                                                                      "average_utilization": 50}
    for name in ("Blue", "green-asg"):
        _validates(capsys, tmp_path / "out" / f"{name}.yaml", "aws")


ARM = {"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
       "parameters": {"minimumCapacity": {"type": "int"}},
       "resources": [{"type": "Microsoft.Insights/autoscalesettings", "apiVersion": "2022-10-01",
                      "name": "[parameters('settingName')]", "location": "[resourceGroup().location]",
                      "properties": {"name": "[parameters('settingName')]", "enabled": True,
                                     "targetResourceUri": "[parameters('planId')]",
                                     "profiles": [{"name": "default",
                                                   "capacity": {"minimum": "[parameters('minimumCapacity')]",
                                                                "maximum": "[parameters('maximumCapacity')]",
                                                                "default": "[parameters('minimumCapacity')]"},
                                                   "rules": []}]}}]}


def test_an_import_that_would_not_validate_exits_2_and_writes_nothing(tmp_path, capsys):
    """The newcomer: an ARM template whose autoscale setting is parameters imported as just
    `semantics: azure`, exit 0, which `validate` then refused."""
    f = tmp_path / "azuredeploy.json"
    f.write_text(json.dumps(ARM))
    code, out, err = _run(capsys, "import", str(f), "--from", "azure", "--out", str(tmp_path / "out"))
    assert (code, out) == (2, "") and not (tmp_path / "out").exists()
    lines = err.splitlines()
    assert ("scalebridge import: lost: $.resources[0].properties.profiles[0].capacity.minimum: unresolved template "
            "expression \"[parameters('minimumCapacity')]\"; left out (no defaultValue: pass --parameters "
            "minimumCapacity=VALUE)") in lines
    assert lines[-1] == (f"scalebridge import: {f}: the imported policy would not be valid ($.policy.min_replicas: "
                         "required by the azure semantics for a policy without profiles (Azure capacity "
                         "minimum/maximum); or give `profiles` with `capacity`): what the input left out is on the "
                         "lost: lines above; nothing written")
    code, out, _ = _run(capsys, "import", str(f), "--from", "azure")
    assert (code, out) == (2, "")


def test_a_native_key_off_by_case_or_a_letter_gets_did_you_mean(tmp_path, capsys):
    """The newcomer: `cooldownPeriodSec` (the declarative client library's spelling) got no suggestion."""
    for key, meant in (("cooldownPeriodSec", "coolDownPeriodSec"), ("maxNumReplica", "maxNumReplicas"),
                       ("MinNumReplicas", "minNumReplicas")):
        f = tmp_path / "autoscaler.json"
        f.write_text(json.dumps({"name": "web", "autoscalingPolicy": {"maxNumReplicas": 5, key: 60}}))
        code, out, err = _run(capsys, "import", str(f), "--from", "gce")
        assert (code, out) == (2, "")
        assert err.startswith(f"scalebridge import: $.autoscalingPolicy.{key}: unknown field {key!r}; did you mean "
                              f"{meant!r}? valid fields here: ")


def test_unnamed_autoscalers_are_told_apart_by_place(tmp_path, capsys):
    f = tmp_path / "list.json"
    f.write_text(json.dumps({"items": [{"autoscalingPolicy": {"maxNumReplicas": 5, "minNumReplicas": 1}},
                                       {"autoscalingPolicy": {"maxNumReplicas": 9}}]}))
    code, out, err = _run(capsys, "import", str(f), "--from", "gce", "--out", str(tmp_path / "out"))
    assert code == 0 and out.splitlines() == [str(tmp_path / "out" / "list-1.yaml"),
                                              str(tmp_path / "out" / "list-2.yaml")]
    assert err.splitlines() == ["scalebridge import: lost: object 2: $.items[1].autoscalingPolicy.minNumReplicas: not "
                                "set: GCE's default depends on the maximum (undocumented); read as 1"]
