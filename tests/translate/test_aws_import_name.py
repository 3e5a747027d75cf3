"""`scalebridge import aws.json --from aws` names the policy as docs/translate.md says: the
group's AutoScalingGroupName, but for a rendered configuration the name render wrote into
its scaling policies — with a note naming the group, which is the target."""
from __future__ import annotations

import yaml

POLICY = """\
name: shop-web
min_replicas: 2
max_replicas: 10
metrics:
  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}
"""


def test_a_rendered_configuration_imports_under_the_policys_name_and_notes_the_group(cli, tmp_path):
    policy = tmp_path / "shop-web.yaml"
    policy.write_text(POLICY)
    rendered = cli("render", str(policy), "--to", "aws", "--target", "{auto_scaling_group: web}")
    assert rendered.returncode == 0, rendered.stderr
    native = tmp_path / "aws.json"
    native.write_text(rendered.stdout)
    proc = cli("import", str(native), "--from", "aws")
    assert proc.returncode == 0, proc.stderr
    [back] = list(yaml.safe_load_all(proc.stdout))
    assert back["name"] == "shop-web"
    assert proc.stderr.splitlines()[0] == (
        "scalebridge import: note: shop-web: $.UpdateAutoScalingGroup[0].AutoScalingGroupName: the policy is named "
        "'shop-web' after its scaling policies' names (shop-web-…, as render writes them); the group 'web' is the "
        "target (--target auto_scaling_group, a run configuration target's ref)")


def test_a_group_of_the_users_own_is_named_after_its_auto_scaling_group_name(cli, tmp_path):
    native = tmp_path / "aws.json"
    native.write_text('{"UpdateAutoScalingGroup": [{"AutoScalingGroupName": "web", "MinSize": 1, "MaxSize": 4}], '
                      '"PutScalingPolicy": [{"AutoScalingGroupName": "web", "PolicyName": "cpu60", '
                      '"PolicyType": "TargetTrackingScaling", "TargetTrackingConfiguration": {'
                      '"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, '
                      '"TargetValue": 60}}]}')
    proc = cli("import", str(native), "--from", "aws")
    assert proc.returncode == 0, proc.stderr
    [back] = list(yaml.safe_load_all(proc.stdout))
    assert back["name"] == "web" and proc.stderr == ""
