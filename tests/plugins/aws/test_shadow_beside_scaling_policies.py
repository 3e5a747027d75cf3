"""Shadow mode beside an Auto Scaling group driven by a target tracking policy, with the
real boto3 against moto (behind the proxy): the group's desired capacity and its scaling
activities are read and compared, the group never written. moto evaluates no alarm
(its CloudWatch never invokes a policy), so the test plays the policy as AWS carries it
out: the desired capacity set and the activity recorded in AWS's words
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-verify-scaling-activity.html)."""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import yaml

from scalebridge.controller.loop import build_controller
from tests.plugins.aws.conftest import REGION
from tests.plugins.aws.test_run_once import TT_POLICY

TT = {"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 60}


def _policy_acts(world, frm: int, to: int) -> None:
    """The target tracking policy's alarm fired: the desired capacity set, the activity recorded."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    world.asg.set_desired_capacity(AutoScalingGroupName="web", DesiredCapacity=to, HonorCooldown=False)
    world.proxy.activities["web"] = [{
        "ActivityId": "a1", "AutoScalingGroupName": "web", "StatusCode": "Successful", "Progress": 100,
        "StartTime": now, "EndTime": now + 30, "Description": "Launching a new EC2 instance: i-0123456789",
        "Cause": f"At {stamp} a monitor alarm TargetTracking-web-AlarmHigh-5f1b in state ALARM triggered policy "
                 f"cpu60 changing the desired capacity from {frm} to {to}.  At {stamp} an instance was started in "
                 f"response to a difference between desired and running capacity, increasing the capacity from "
                 f"{frm} to {to}."}]


def test_the_groups_scaling_activities_are_read_and_compared(world, tmp_path):
    ids = world.group("web", desired=3, max_size=10)
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu60", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration=TT)
    world.age(3600)
    for i in ids:
        world.put_cpu(i, [75] * 5)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"aws": {"region": REGION, "endpoint_url": world.url, "max_attempts": 1}},
        "policies": {"p": TT_POLICY},
        "targets": [{"name": "web", "provider": "aws", "policy": "p", "shadow": True,
                     "ref": {"auto_scaling_group": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), state=str(tmp_path / "s.db"), audit=str(audit))
    try:
        # scalebridge's policy targets 50 %: 3 × 75 / 50 = 4.5, rounded up → 5
        assert c.run(once=True) == 0
        # the group's own policy targets 60 %: 3 × 75 / 60 = 3.75 → 4
        _policy_acts(world, 3, 4)
        assert c.run(once=True) == 0
    finally:
        c.close()
    first, second = [json.loads(x) for x in audit.read_text().splitlines()]
    # a group with its own scaling policies is compared with them, not refused
    assert first["action"] == "shadow" and first["desired_replicas"] == 5
    s = second["shadow"]
    assert s["native_autoscaler"] == "the group's scaling policies: cpu60 (TargetTrackingScaling)"
    assert (s["current_replicas"], s["scalebridge_replicas"]) == (3, 5)
    assert (s["native_current"], s["native_replicas"], s["difference"]) == (3, 4, 1)
    assert s["agree"] is False
    assert s["stage"] == "target tracking" and s["detail"].endswith("; native 4")
    [act] = s["native_actions"]
    assert (act["from"], act["to"], act["policy"]) == (3, 4, "cpu60") and "AlarmHigh" in act["reason"]
    # never written: the only SetDesiredCapacity was the played policy's, straight to moto
    assert world.proxy.count("SetDesiredCapacity") == 0
    assert not [x.action for x in world.proxy.calls if not x.action.startswith(("Describe", "Get", "List"))]


def test_a_shadow_group_is_never_written_when_reading_its_activities_fails(world, tmp_path):
    from scalebridge_aws.fake_server import Fault
    ids = world.group("web", desired=3, max_size=10)
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu60", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration=TT)
    world.age(3600)
    for i in ids:
        world.put_cpu(i, [75] * 5)
    world.proxy.add(Fault.server_error(action="DescribeScalingActivities", times=None))
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"aws": {"region": REGION, "endpoint_url": world.url, "max_attempts": 1}},
        "policies": {"p": TT_POLICY},
        "targets": [{"name": "web", "provider": "aws", "policy": "p", "shadow": True,
                     "ref": {"auto_scaling_group": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), state=str(tmp_path / "s.db"), audit=str(audit))
    try:
        for _ in range(2):
            assert c.run(once=True) == 0
    finally:
        c.close()
    records = [json.loads(x) for x in audit.read_text().splitlines()]
    assert all(r["action"] == "shadow" and r["desired_replicas"] == 5 for r in records)
    assert all("native_read_error" in r["shadow"] for r in records)
    assert world.desired() == 3
    assert not [x.action for x in world.proxy.calls if not x.action.startswith(("Describe", "Get", "List"))]
