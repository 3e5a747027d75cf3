"""``import`` reads every real configuration under ../shared/data/native/ (provenance in
its SOURCES.md, read from there, never copied): each gives a valid policy with its loss
report, or — for the files SOURCES.md marks malformed — one clear message naming the
field. Unresolved template expressions are reported by path."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from scalebridge.engine import load_policy
from scalebridge.translate import NativeError, import_all

# beside the checkout (../shared), else where the shared data lives on this machine (a worktree's
# checkout is one level deeper), or where SCALEBRIDGE_NATIVE_CORPUS says
_PLACES = [os.environ.get("SCALEBRIDGE_NATIVE_CORPUS"), Path(__file__).resolve().parents[3] / "shared" / "data" / "native",
           "/work/shared/data/native"]
CORPUS = next((Path(p) for p in _PLACES if p and Path(p).is_dir()), Path(_PLACES[1]))
FILES = sorted(p for p in CORPUS.glob("*/*") if p.suffix in (".json", ".yaml", ".yml")) if CORPUS.is_dir() else []

# SOURCES.md: "MALFORMED: apiVersion autoscaling/v2 but uses v2beta1 field targetAverageUtilization";
# "NOT the REST shape: DCL field names (... "cooldownPeriodSec" instead of REST "coolDownPeriodSec" ...)"
MALFORMED = {
    "kubernetes/krane__horizontal_pod_autoscaler_test.yaml": "$.spec.metrics[0].resource.targetAverageUtilization",
    "gce/declarative-resource-client-library__regional.autoscaler.json": "$.autoscalingPolicy.cooldownPeriodSec",
}

pytestmark = pytest.mark.skipif(not FILES, reason="the shared native corpus is not next to this checkout")


def _key(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


@pytest.mark.parametrize("path", FILES, ids=_key)
def test_every_corpus_file_imports_or_names_the_bad_field(path):
    text = path.read_text(encoding="utf-8")
    provider = path.parent.name
    if _key(path) in MALFORMED:
        with pytest.raises(NativeError) as e:
            import_all(text, provider)
        assert str(e.value).startswith(MALFORMED[_key(path)] + ": ")
        assert "\n" not in str(e.value)
        return
    results = import_all(text, provider)
    assert results
    for policy, losses in results:
        assert policy["semantics"] == provider
        load_policy(policy)        # a valid policy file
        for line in losses.lines + losses.notes:
            assert line.startswith("$"), line   # every line names where in the input


def test_the_corpus_is_all_there():
    assert {p.parent.name for p in FILES} == {"kubernetes", "gce", "azure", "aws"}
    assert len(FILES) >= 40


def test_an_arm_parameter_without_a_default_is_reported_by_path_with_how_to_set_it():
    f = CORPUS / "azure" / "azure-quickstart-templates__monitor-autoscale-webappserviceplan-simplemetricbased.json"
    [(policy, losses)] = import_all(f.read_text(), "azure")
    assert ("$.resources[0].properties.enabled: unresolved template expression \"[parameters('autoscaleEnabled')]\"; "
            "left out (no defaultValue: pass --parameters autoscaleEnabled=VALUE)") in losses.lines
    # a variable needs the deployment: it stays a loss line
    assert "$.resources[0].name: unresolved template expression \"[variables('settingName')]\"; left out" \
        in losses.lines


def test_cloudformation_refs_are_reported_by_path():
    f = CORPUS / "aws" / "aws-cf-templates__cluster.json"
    policy, losses = import_all(f.read_text(), "aws")[0]
    assert ('$.Resources.AutoScalingGroup.Properties.MinSize: unresolved template expression {"Ref": "MinSize"}; '
            "left out") in losses.lines


def test_several_hpas_in_one_stream_give_one_policy_each():
    f = CORPUS / "kubernetes" / "kubernetes-engine-samples__hpa-v2beta2.yaml"
    results = import_all(f.read_text(), "kubernetes")
    names = [p.get("name") for p, _ in results]
    assert len(results) > 1 and len(set(names)) == len(names)


def test_cloudformation_alarms_join_their_simple_policies():
    """SOURCES.md: two SimpleScaling policies (+1/-1, Cooldown "60") each driven by a CPUUtilization
    alarm (>90% / <70%, 2x300s)."""
    f = CORPUS / "aws" / "aws-cloudformation-templates__AutoScalingMultiAZWithNotifications.json"
    policy, losses = import_all(f.read_text(), "aws")[0]
    rules = sorted(policy["rules"], key=lambda r: r["threshold"])
    assert [(r["operator"], r["threshold"], r["action"]["direction"], r["action"]["value"]) for r in rules] == \
        [("LessThan", 70, "Decrease", 1), ("GreaterThan", 90, "Increase", 1)]
    assert all(r["time_grain_seconds"] == 300 and r["time_window_seconds"] == 600 for r in rules)
    assert all(r["action"]["cooldown_seconds"] == 60 for r in rules)


def test_each_auto_scaling_group_of_a_template_is_its_own_policy():
    """SOURCES.md: "three ASGs in the template (blue, green, load generator)"; the scaling policies
    name the blue one (``AutoScalingGroupName: {"Ref": "ApplicationAutoScalingGroup"}``)."""
    f = CORPUS / "aws" / "amazon-ec2-auto-scaling-group-examples__predictive-scaling-blue-green-deployment.json"
    results = import_all(f.read_text(), "aws")
    assert len(results) == 3
    (blue, blue_losses), (green, green_losses), (load, _) = results
    assert blue["metrics"] == [{"type": "resource", "name": "cpu", "initialization_period_seconds": 300,
                                "target": {"type": "Utilization", "average_utilization": 25}}]
    assert blue["predictive"] == {"mode": "ForecastOnly"}
    assert "metrics" not in green and "predictive" not in green and "metrics" not in load
    assert green_losses.lines[0].startswith("$.Resources.GreenApplicationAutoScalingGroup.Properties.MinSize: ")


def test_a_policy_two_alarms_invoke_is_one_rule_per_alarm():
    """SOURCES.md: "one explicit PolicyType SimpleScaling policy (+1, Cooldown 60 as a number) fired by
    two AWS/EFS PermittedThroughput alarms"."""
    f = CORPUS / "aws" / "aws-refarch-wordpress__aws-refarch-wordpress-03-efsalarms.json"
    [(policy, losses)] = import_all(f.read_text(), "aws")
    assert [r["name"] for r in policy["rules"]] == ["AutoScalingPolicy", "AutoScalingPolicy-1"]
    for r in policy["rules"]:
        assert (r["metric"], r["operator"], r["threshold"], r["statistic"]) == ("PermittedThroughput", "LessThan", 0,
                                                                                "Sum")
        assert r["action"] == {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 60}
    assert losses.lines == []


def test_a_step_policy_whose_alarm_threshold_is_a_parameter_is_reported_dropped():
    f = CORPUS / "aws" / "aws-cf-templates__cluster.json"
    [(policy, losses)] = import_all(f.read_text(), "aws")
    assert "rules" not in policy
    assert "$.Resources.ScaleUpPolicy.Properties: StepScaling policy 'ScaleUpPolicy': its alarm's threshold is " \
           "not known; dropped" in losses.lines
    assert "$.Resources.ScaleDownPolicy.Properties: StepScaling policy 'ScaleDownPolicy': its alarm's threshold " \
           "is not known; dropped" in losses.lines


def test_a_high_resolution_customized_metric_period_is_carried():
    """SOURCES.md: "CustomizedMetricSpecification ... with Period 10 (high-resolution "faster target
    tracking")". The period is the policy's (``period_seconds``): "Accepted values are 10, 30, and 60"
    (API_CustomizedMetricSpecification.html), and the aws semantics evaluates its alarms at it."""
    f = CORPUS / "aws" / "amazon-ec2-auto-scaling-group-examples__FasterScalingCFN.json"
    [(policy, losses)] = import_all(f.read_text(), "aws")
    assert not any("Period" in line for line in losses.lines)
    assert [m.get("period_seconds") for m in policy["metrics"]] == [10]


@pytest.mark.parametrize("path", FILES, ids=_key)
def test_every_import_that_exits_0_validates_policy_by_policy(path, tmp_path, capsys):
    """Must show: `import --out` writes one file per autoscaler of the file, and `validate --semantics
    PROVIDER` accepts each; a file it cannot import so exits 2 and writes nothing, each line of stderr
    one problem (an ARM template's parameters are their defaultValues: those imports exit 0)."""
    from scalebridge.cli import main
    provider = path.parent.name
    out_dir = tmp_path / "policies"
    code = main(["import", str(path), "--from", provider, "--out", str(out_dir)])
    out, err = capsys.readouterr()
    assert all(line.startswith("scalebridge import: ") for line in err.splitlines()), err
    if _key(path) in MALFORMED:
        assert (code, out) == (2, "") and not out_dir.exists()
        assert err.startswith(f"scalebridge import: {MALFORMED[_key(path)]}: ") and err.count("\n") == 1
        return
    assert code == 0, err
    written = out.splitlines()
    assert len(written) == len(import_all(path.read_text(encoding="utf-8"), provider))
    for policy_file in written:
        assert main(["validate", "--semantics", provider, policy_file]) == 0, capsys.readouterr().err
        assert yaml.safe_load(Path(policy_file).read_text())["semantics"] == provider
