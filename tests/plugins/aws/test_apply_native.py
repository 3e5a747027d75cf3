"""``scalebridge apply CONFIG`` against moto's server on 127.0.0.1: it creates
each aws target's scaling policies and alarms, a second apply updates them without
duplicating any, and ``--dry-run`` prints the difference and writes nothing."""
from __future__ import annotations

import os
import urllib.request

import pytest

from scalebridge.cli import main

pytestmark = pytest.mark.slow   # one moto server and its backends: about 15 s

REGION = "us-east-1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION}


@pytest.fixture(scope="module")
def moto_url():
    moto_server = pytest.importorskip("moto.server")
    old = {k: os.environ.get(k) for k in CREDENTIALS}
    os.environ.update(CREDENTIALS)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def aws(moto_url, tmp_path, monkeypatch):
    import boto3
    monkeypatch.chdir(tmp_path)     # the default state file, scalebridge-state.db, is looked for here
    urllib.request.urlopen(urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST")).read()
    kw = dict(endpoint_url=moto_url, region_name=REGION)
    asg, ec2, cw = (boto3.client(s, **kw) for s in ("autoscaling", "ec2", "cloudwatch"))
    ec2.create_launch_template(LaunchTemplateName="web-template",
                               LaunchTemplateData={"ImageId": "ami-12c6146b", "InstanceType": "t3.micro"})
    asg.create_auto_scaling_group(AutoScalingGroupName="web", MinSize=1, MaxSize=5, DesiredCapacity=1,
                                  LaunchTemplate={"LaunchTemplateName": "web-template"},
                                  AvailabilityZones=[f"{REGION}a"])
    return asg, cw


CONFIG = """\
providers:
  aws: {{region: us-east-1, endpoint_url: "{url}"}}
policies:
  web:
    name: web
    min_replicas: 2
    max_replicas: 12
    metrics:
      - {{type: resource, name: cpu, target: {{type: Utilization, average_utilization: {target}}}}}
    rules:
      - {{metric: cpu, operator: GreaterThan, threshold: 90, action: {{direction: Increase, type: ChangeCount, value: 2}}}}
targets:
  - {{name: web-asg, provider: aws, policy: web, ref: {{auto_scaling_group: web}}}}
"""


def _apply(tmp_path, capsys, url, target, *flags):
    f = tmp_path / "run.yaml"
    f.write_text(CONFIG.format(url=url, target=target))
    code = main(["apply", str(f), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_apply_native_creates_then_updates_without_duplicating(aws, moto_url, tmp_path, capsys):
    asg, cw = aws
    code, out, err = _apply(tmp_path, capsys, moto_url, 60)
    assert code == 0, err
    assert "web-asg: PutScalingPolicy web-metric-0: create" in out
    policies = asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"]
    assert sorted(p["PolicyName"] for p in policies) == ["web-metric-0", "web-rule-0"]
    group = asg.describe_auto_scaling_groups(AutoScalingGroupNames=["web"])["AutoScalingGroups"][0]
    assert (group["MinSize"], group["MaxSize"]) == (2, 12)
    [alarm] = cw.describe_alarms(AlarmNames=["web-rule-0-alarm"])["MetricAlarms"]
    rule_arn = next(p["PolicyARN"] for p in policies if p["PolicyName"] == "web-rule-0")
    assert alarm["AlarmActions"] == [rule_arn]      # the real ARN PutScalingPolicy returned

    code, out, _ = _apply(tmp_path, capsys, moto_url, 60)
    assert code == 0 and out.strip().splitlines()[-1] == "web-asg: unchanged"

    code, out, _ = _apply(tmp_path, capsys, moto_url, 45)
    assert code == 0
    assert "web-asg: PutScalingPolicy web-metric-0: TargetTrackingConfiguration.TargetValue: 60.0 -> 45.0" in out
    policies = asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"]
    assert len(policies) == 2
    tt = next(p for p in policies if p["PolicyName"] == "web-metric-0")
    assert tt["TargetTrackingConfiguration"]["TargetValue"] == 45.0
    assert len(cw.describe_alarms(AlarmNamePrefix="web-rule-0")["MetricAlarms"]) == 1


def test_dry_run_prints_the_difference_and_writes_nothing(aws, moto_url, tmp_path, capsys):
    asg, cw = aws
    code, out, _ = _apply(tmp_path, capsys, moto_url, 60, "--dry-run")
    assert code == 0
    assert "web-asg: UpdateAutoScalingGroup web: MinSize: 1 -> 2" in out
    assert "web-asg: PutMetricAlarm web-rule-0-alarm: create" in out
    assert asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"] == []
    assert cw.describe_alarms()["MetricAlarms"] == []
    assert asg.describe_auto_scaling_groups(AutoScalingGroupNames=["web"])["AutoScalingGroups"][0]["MinSize"] == 1


def test_a_missing_group_fails_that_target(aws, moto_url, tmp_path, capsys):
    f = tmp_path / "run.yaml"
    f.write_text(CONFIG.format(url=moto_url, target=60).replace("auto_scaling_group: web", "auto_scaling_group: gone"))
    assert main(["apply", str(f)]) == 1
    _, err = capsys.readouterr()
    assert err.strip() == "scalebridge apply: web-asg: Auto Scaling group 'gone' not found"


def test_a_target_in_the_run_state_is_refused(aws, moto_url, tmp_path, capsys):
    """docs/run.md: a target is actuated by `scalebridge run` or translated, never both."""
    from scalebridge.controller.store import SQLiteStore, StoredTarget
    asg, _ = aws
    db = tmp_path / "state.db"
    store = SQLiteStore(db)
    store.save([StoredTarget(name="web-asg", policy_hash="x", state={"recommendations": []})])
    store.close()
    f = tmp_path / "run.yaml"
    f.write_text(CONFIG.format(url=moto_url, target=60))
    assert main(["apply", str(f), "--state", str(db)]) == 1
    _, err = capsys.readouterr()
    assert err.startswith("scalebridge apply: web-asg: refused: `scalebridge run` actuates this target")
    assert asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"] == []


RULES_CONFIG = """\
providers:
  aws: {{region: us-east-1, endpoint_url: "{url}"}}
policies:
  web:
    name: web
    min_replicas: 2
    max_replicas: 12
    metrics:
      - {{type: resource, name: cpu, target: {{type: Utilization, average_utilization: 60}}}}
    rules: {rules}
targets:
  - {{name: web-asg, provider: aws, policy: web, ref: {{auto_scaling_group: web}}}}
"""
RULE = "{{metric: cpu, operator: GreaterThan, threshold: {t}, action: {{direction: Increase, type: ChangeCount, value: 2}}}}"


def _apply_rules(tmp_path, capsys, url, rules, *flags):
    f = tmp_path / "run.yaml"
    f.write_text(RULES_CONFIG.format(url=url, rules="[" + ", ".join(rules) + "]"))
    code = main(["apply", str(f), *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_a_changed_alarm_is_updated_and_a_dropped_rule_deleted_with_its_alarm(aws, moto_url, tmp_path, capsys):
    """PutMetricAlarm "Creates or updates an alarm" (API_PutMetricAlarm.html): one alarm per rule, its
    threshold updated in place. A rule the policy no longer has: DeletePolicy, and DeleteAlarms, since
    deleting a step or simple policy "does not delete the alarm" (API_DeletePolicy.html). A policy on
    the group this policy did not write is left as it is."""
    asg, cw = aws
    asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="someone-elses", PolicyType="SimpleScaling",
                           AdjustmentType="ChangeInCapacity", ScalingAdjustment=1)
    _apply_rules(tmp_path, capsys, moto_url, [RULE.format(t=90), RULE.format(t=30)])
    out = _apply_rules(tmp_path, capsys, moto_url, [RULE.format(t=80), RULE.format(t=30)])
    assert "web-asg: PutMetricAlarm web-rule-0-alarm: Threshold: 90.0 -> 80.0" in out
    assert [a["Threshold"] for a in cw.describe_alarms(AlarmNamePrefix="web-rule-0")["MetricAlarms"]] == [80.0]

    out = _apply_rules(tmp_path, capsys, moto_url, [RULE.format(t=80)], "--dry-run")
    assert "web-asg: DeletePolicy web-rule-1: no longer in the policy" in out
    assert "web-asg: DeleteAlarms web-rule-1-alarm: no longer in the policy" in out
    assert "web-asg: PutScalingPolicy someone-elses: on the group but not in the policy; left as it is" in out
    names = sorted(p["PolicyName"] for p in asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"])
    assert names == ["someone-elses", "web-metric-0", "web-rule-0", "web-rule-1"]     # the dry run wrote nothing

    _apply_rules(tmp_path, capsys, moto_url, [RULE.format(t=80)])
    names = sorted(p["PolicyName"] for p in asg.describe_policies(AutoScalingGroupName="web")["ScalingPolicies"])
    assert names == ["someone-elses", "web-metric-0", "web-rule-0"]
    assert sorted(a["AlarmName"] for a in cw.describe_alarms()["MetricAlarms"]
                  if a["AlarmName"].startswith("web-")) == ["web-rule-0-alarm"]
    assert _apply_rules(tmp_path, capsys, moto_url, [RULE.format(t=80)]).strip().splitlines()[-1] == \
        "web-asg: unchanged"


SCHEDULE_CONFIG = """\
providers:
  aws: {{region: us-east-1, endpoint_url: "{url}"}}
policies:
  web:
    name: web
    min_replicas: 2
    max_replicas: 12
    schedules:
      - {{name: office, schedule: "0 8 * * MON-FRI", time_zone: Europe/Paris, duration_seconds: 36000,
         min_required_replicas: {floor}}}
targets:
  - {{name: web-asg, provider: aws, policy: web, ref: {{auto_scaling_group: web}}}}
"""


def test_a_scaling_schedule_is_two_scheduled_actions_created_then_updated(aws, moto_url, tmp_path, capsys):
    """PutScheduledUpdateGroupAction "Creates or updates a scheduled scaling action"
    (API_PutScheduledUpdateGroupAction.html): MinSize raised at 08:00 Paris on weekdays, restored at 18:00;
    a second apply changes nothing, a changed floor updates the start action in place."""
    asg, _ = aws
    f = tmp_path / "run.yaml"

    def apply(floor, *flags):
        f.write_text(SCHEDULE_CONFIG.format(url=moto_url, floor=floor))
        code = main(["apply", str(f), *flags])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    def actions():
        got = asg.describe_scheduled_actions(AutoScalingGroupName="web")["ScheduledUpdateGroupActions"]
        return sorted((a["ScheduledActionName"], a["Recurrence"], a["MinSize"], a.get("TimeZone")) for a in got)

    assert "web-asg: PutScheduledUpdateGroupAction web-office-start: create" in apply(6, "--dry-run")
    assert actions() == []
    apply(6)
    assert actions() == [("web-office-end", "0 18 * * 1,2,3,4,5", 2, "Europe/Paris"),
                         ("web-office-start", "0 8 * * 1,2,3,4,5", 6, "Europe/Paris")]
    assert apply(6).strip().splitlines()[-1] == "web-asg: unchanged"
    assert "web-asg: PutScheduledUpdateGroupAction web-office-start: MinSize: 6 -> 8" in apply(8)
    assert actions()[1] == ("web-office-start", "0 8 * * 1,2,3,4,5", 8, "Europe/Paris")
    assert len(actions()) == 2
    # the schedule renamed: the old pair is deleted, the new one created (still two actions); a lone
    # action of the group's named like one is someone else's and stays
    asg.put_scheduled_update_group_action(AutoScalingGroupName="web", ScheduledActionName="web-nightly-end",
                                          Recurrence="0 23 * * *", MinSize=1)
    f.write_text(SCHEDULE_CONFIG.format(url=moto_url, floor=8).replace("name: office", "name: shop"))
    assert main(["apply", str(f)]) == 0
    assert "web-asg: DeleteScheduledAction web-office-end: no longer in the policy" in capsys.readouterr().out
    assert [a[0] for a in actions()] == ["web-nightly-end", "web-shop-end", "web-shop-start"]
