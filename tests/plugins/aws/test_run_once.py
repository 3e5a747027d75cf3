"""End to end through ``scalebridge run --once``: a run configuration whose
``aws`` provider points at moto (behind the proxy), the real CLI, the real boto3.

Expected results from the documentation:
- kubernetes, an external metric with an AverageValue target: "the target value
  is divided by the number of pods" — desiredReplicas = ceil(metricValue /
  averageValue) = ceil(300 / 50) = 6
  (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale-walkthrough/#autoscaling-on-metrics-not-related-to-kubernetes-objects),
  within the autoscaling/v2 default scale-up of max(+4 pods, +100 %) per 15 s
  (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#default-behavior);
- aws target tracking: "We might determine that adding 1.5 instances will
  decrease the CPU utilization to close to 50 percent. Because it is not
  possible to add 1.5 instances, we round up and add two instances"
  (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html#target-tracking-considerations):
  3 instances at 75 % against 50 % carry the load of 3 × 75 / 50 = 4.5, so 1.5
  are added, rounded up to 2 → 5; "if we determine that removing 1.5 instances
  increases your CPU utilization to above 50 percent, we remove just one
  instance" → 5 at 35 % (3.5 needed) → 4. The alarms target tracking creates:
  above the target for 3 of 3 one-minute datapoints to scale out, below 90 % of
  it for 15 of 15 to scale in (docs/research/aws.md, G10);
- aws step scaling, the guide's own example: current capacity 10, threshold
  50, steps [0, 10) 0, [10, 20) +10 %, [20, ∞) +30 %, PercentChangeInCapacity:
  "The desired and current capacity is maintained while the aggregated metric
  value is greater than 40 and less than 60", and at 60 "increases by 1
  instance, to 11 … (add 10 percent of 10 instances)"
  (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-scaling-steps).
"""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.cli import main
from tests.plugins.aws.conftest import REGION, minutes

QUEUE_POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10, "behavior": {},
                "metrics": [{"type": "external", "name": "queue_depth",
                             "target": {"type": "AverageValue", "average_value": 50}}]}
QUEUE_SOURCE = {"queue_depth": {"source": {"namespace": "AWS/SQS", "metric_name": "ApproximateNumberOfMessagesVisible",
                                           "dimensions": {"QueueName": "jobs"}, "statistic": "Maximum"}}}
TT_POLICY = {"semantics": "aws", "min_replicas": 1, "max_replicas": 10,
             "metrics": [{"type": "resource", "name": "cpu",
                          "target": {"type": "Utilization", "average_utilization": 50}}]}
STEP_POLICY = {"semantics": "aws", "min_replicas": 1, "max_replicas": 20, "rules": [
    {"metric": "cpu_group", "statistic": "Average", "time_grain_seconds": 60, "time_window_seconds": 180,
     "operator": "GreaterThanOrEqual", "threshold": 50, "adjustment_type": "PercentChangeInCapacity",
     "steps": [{"lower": 0, "upper": 10, "adjustment": 0}, {"lower": 10, "upper": 20, "adjustment": 10},
               {"lower": 20, "upper": None, "adjustment": 30}]}]}
STEP_SOURCE = {"cpu_group": {"source": {"namespace": "AWS/EC2", "metric_name": "CPUUtilization",
                                        "dimensions": {"AutoScalingGroupName": "{auto_scaling_group}"}}}}


class Runner:
    def __init__(self, tmp_path, world):
        self.tmp, self.world = tmp_path, world
        self.audit = tmp_path / "audit.jsonl"
        self.state = tmp_path / "state.db"
        self.seen = 0

    def config(self, targets, policy, metrics):
        for t in targets:
            t.setdefault("provider", "aws")
            t.setdefault("policy", "p")
            t.setdefault("ref", {"auto_scaling_group": t["name"]})
            if metrics:
                t.setdefault("metrics", metrics)
        path = self.tmp / "run.yaml"
        path.write_text(yaml.safe_dump({
            "providers": {"aws": {"region": REGION, "endpoint_url": self.world.url, "max_attempts": 1}},
            "policies": {"p": policy}, "targets": targets}))
        return path

    def __call__(self, targets, *flags, policy=QUEUE_POLICY, metrics=QUEUE_SOURCE):
        rc = main(["run", str(self.config(targets, policy, metrics)), "--once", "--audit", str(self.audit),
                   "--state", str(self.state), *flags])
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        new, self.seen = [json.loads(x) for x in lines[self.seen:]], len(lines)
        return rc, new


def queue(world, depth):
    world.put("AWS/SQS", "ApproximateNumberOfMessagesVisible", minutes([depth]), {"QueueName": "jobs"})


def test_a_group_of_2_with_a_queue_of_300_at_50_each_goes_to_6(world, tmp_path):
    world.group("web", desired=2, max_size=10)
    queue(world, 300)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}])
    assert rc == 0, rec
    assert (rec["action"], rec["current_replicas"], rec["desired_replicas"]) == ("applied", 2, 6)
    assert rec["semantics"] == "kubernetes" and rec["provider"] == "aws"
    assert world.desired() == 6
    assert [c.params["HonorCooldown"] for c in world.proxy.calls if c.action == "SetDesiredCapacity"] == ["false"]


def test_dry_run_leaves_the_group(world, tmp_path):
    world.group("web", desired=2)
    queue(world, 300)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], "--dry-run")
    assert rc == 0 and rec["action"] == "dry_run" and rec["desired_replicas"] == 6
    assert world.desired() == 2 and world.proxy.count("SetDesiredCapacity") == 0


def test_the_queue_above_max_size_is_clamped_by_the_policy_and_never_sent_past_max(world, tmp_path):
    world.group("web", desired=2, max_size=4)
    queue(world, 1000)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}])
    assert rc == 0, rec
    assert world.desired() == 4
    assert all(int(c.params["DesiredCapacity"]) <= 4 for c in world.proxy.calls if c.action == "SetDesiredCapacity")
    assert "MaxSize 4" in rec["note"]


def test_aws_target_tracking_3_at_75_percent_vs_50_goes_to_5(world, tmp_path):
    ids = world.group("web", desired=3, max_size=10)
    world.age(3600)                   # warmed up long ago
    for i in ids:
        world.put_cpu(i, [75] * 5)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0, rec
    assert (rec["semantics"], rec["current_replicas"], rec["desired_replicas"]) == ("aws", 3, 5)
    assert world.desired() == 5
    # the default cpu source: AWS/EC2 CPUUtilization per InstanceId, every instance in one GetMetricData
    [gmd] = [c for c in world.proxy.calls if c.action == "GetMetricData"]
    stats = [q["MetricStat"] for q in gmd.params["MetricDataQueries"] if "MetricStat" in q]
    assert {(s["Metric"]["Namespace"], s["Metric"]["MetricName"]) for s in stats} == {("AWS/EC2", "CPUUtilization")}
    assert sorted(d["Value"] for s in stats for d in s["Metric"]["Dimensions"] if d["Name"] == "InstanceId") \
        == sorted(ids)


def test_aws_target_tracking_needs_3_datapoints_above_the_target(world, tmp_path):
    ids = world.group("web", desired=3, max_size=10)
    world.age(3600)
    for i in ids:
        world.put_cpu(i, [75, 75])     # two minutes: the high alarm is not in ALARM yet
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0 and rec["desired_replicas"] == 3 and world.desired() == 3


def test_warming_instances_are_not_the_metric_nor_the_base(world, tmp_path):
    """Just launched (inside the 300 s default warm-up): "an instance is not
    counted toward the aggregated metrics of the Auto Scaling group" — no
    datapoints, no scale-out (UG as-scaling-target-tracking.html#as-target-tracking-scaling-warmup)."""
    ids = world.group("web", desired=3, max_size=10)
    for i in ids:
        world.put_cpu(i, [75] * 5)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rec["desired_replicas"] == 3 and world.desired() == 3


def test_a_step_policy_on_the_groups_alarm_metric(world, tmp_path):
    world.group("web", desired=10, max_size=20)
    world.age(3600)
    world.put("AWS/EC2", "CPUUtilization", minutes([60, 60, 60]), {"AutoScalingGroupName": "web"}, "Percent")
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=STEP_POLICY, metrics=STEP_SOURCE)
    assert rc == 0, rec
    assert (rec["current_replicas"], rec["desired_replicas"]) == (10, 11) and world.desired() == 11
    gmd = next(c for c in world.proxy.calls if c.action == "GetMetricData")
    assert gmd.params["MetricDataQueries"][0]["MetricStat"]["Metric"]["Dimensions"] == [
        {"Name": "AutoScalingGroupName", "Value": "web"}]


def test_the_guides_second_step_rounds_the_percentage_down(world, tmp_path):
    """The same guide example, later: at 70 with 11 instances "another 3
    instances, to 14 … (add 30 percent of 11 instances, 3.3 instances, rounded
    down to 3 instances)" (as-scaling-simple-step.html#as-scaling-steps)."""
    world.group("web", desired=11, max_size=20)
    world.age(3600)
    world.put("AWS/EC2", "CPUUtilization", minutes([70, 70, 70]), {"AutoScalingGroupName": "web"}, "Percent")
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=STEP_POLICY, metrics=STEP_SOURCE)
    assert rc == 0, rec
    assert (rec["current_replicas"], rec["desired_replicas"]) == (11, 14) and world.desired() == 14


def test_the_zero_step_changes_nothing(world, tmp_path):
    world.group("web", desired=10, max_size=20)
    world.age(3600)
    world.put("AWS/EC2", "CPUUtilization", minutes([59, 59, 59]), {"AutoScalingGroupName": "web"}, "Percent")
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=STEP_POLICY, metrics=STEP_SOURCE)
    assert rc == 0 and rec["desired_replicas"] == 10 and world.proxy.count("SetDesiredCapacity") == 0


def test_a_scaling_activity_in_progress_means_no_write_that_sync(world, tmp_path):
    ids = world.group("web", desired=3)
    world.set_state(ids[2], "Pending")
    world.proxy.activities["web"] = [{"ActivityId": "a-1", "AutoScalingGroupName": "web", "StatusCode": "InProgress",
                                      "Progress": 40, "Description": f"Launching a new EC2 instance: {ids[2]}",
                                      "StartTime": time.time() - 30}]
    queue(world, 300)
    run = Runner(tmp_path, world)
    rc, [rec] = run([{"name": "web"}])
    assert rc == 0 and rec["action"] == "in_flight" and "a-1" in rec["note"]
    assert world.proxy.count("SetDesiredCapacity") == 0 and world.desired() == 3
    world.set_state(ids[2], "InService")            # the activity finished
    world.proxy.activities["web"][0]["StatusCode"] = "Successful"
    rc, [rec] = run([{"name": "web"}])
    assert rc == 0 and rec["action"] == "applied" and world.desired() == 6


def test_a_group_with_its_own_target_tracking_policy_is_refused(world, tmp_path):
    world.group("web", desired=2)
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu50", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration={"PredefinedMetricSpecification": {
                                     "PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 50})
    queue(world, 300)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}])
    assert rc == 1 and rec["action"] == "refused" and "cpu50 (TargetTrackingScaling)" in rec["error"]
    assert world.desired() == 2


def test_allow_scaling_policies_in_the_ref(world, tmp_path):
    world.group("web", desired=2)
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu50", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration={"PredefinedMetricSpecification": {
                                     "PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 50})
    queue(world, 300)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web", "ref": {"auto_scaling_group": "web",
                                                                  "allow_scaling_policies": True}}])
    assert rc == 0 and rec["action"] == "applied" and world.desired() == 6


def test_a_missing_group_fails_that_target_only(world, tmp_path):
    world.group("web", desired=2)
    queue(world, 300)
    rc, recs = Runner(tmp_path, world)([{"name": "web"}, {"name": "gone"}])
    by = {r["target"]: r for r in recs}
    assert rc == 1 and by["gone"]["action"] == "failed" and by["gone"]["error_kind"] == "not_found"
    assert by["web"]["action"] == "applied" and world.desired() == 6


def test_a_bad_metric_source_is_a_configuration_error_naming_the_key(world, tmp_path, capsys):
    """Provider.check_metric_source: the run configuration's file and line, the key, exit 2,
    before any call to AWS."""
    world.group("web", desired=2)
    rc, records = Runner(tmp_path, world)([{"name": "web"}], metrics={
        "queue_depth": {"source": {"namespace": "AWS/SQS", "metric_name": "X", "statistc": "Sum"}}})
    err = capsys.readouterr().err
    assert rc == 2 and records == []
    assert "run.yaml:" in err and "statistc" in err and "Traceback" not in err
    assert world.desired() == 2


def test_a_pending_instance_is_not_in_a_scale_outs_base(world, tmp_path):
    """4 desired, 3 in service at 75 %, 1 Pending: "we do not consider instances
    that are warming up as part of the current capacity" when scaling out —
    ceil(3 × 75 / 50) = 5, not ceil(4 × 1.5) = 6
    (UG as-scaling-simple-step.html#as-step-scaling-warmup)."""
    ids = world.group("web", desired=4, max_size=10)
    world.age(3600)
    world.set_state(ids[3], "Pending")
    for i in ids[:3]:
        world.put_cpu(i, [75] * 5)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0, rec
    assert (rec["current_replicas"], rec["desired_replicas"]) == (4, 5) and world.desired() == 5


def test_a_warming_instance_is_neither_the_metric_nor_the_base(world, tmp_path):
    """3 warmed up at 75 %, 1 just launched at 10 %: its datapoints are left out
    of the aggregate and of the scale-out's base — 5."""
    ids = world.group("web", desired=3, max_size=10)
    world.age(3600)
    world.asg.set_desired_capacity(AutoScalingGroupName="web", DesiredCapacity=4)
    new = [i for i in world.instances() if i not in ids]
    for i in ids:
        world.put_cpu(i, [75] * 5)
    world.put_cpu(new[0], [10] * 5)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0, rec
    assert (rec["current_replicas"], rec["desired_replicas"]) == (4, 5)


def test_a_bad_ref_key_is_one_line_naming_the_file_line_and_key(world, tmp_path, capsys):
    run = Runner(tmp_path, world)
    config = run.config([{"name": "web", "ref": {"auto_scaling_group": "web", "asg_name": "x"}}], QUEUE_POLICY,
                        QUEUE_SOURCE)
    rc = main(["run", str(config), "--once", "--state", str(tmp_path / "s.db")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "run.yaml:" in err[0] and "ref.asg_name" in err[0] and "Traceback" not in err[0]


def test_aws_target_tracking_scales_in_after_15_minutes_below_90_percent(world, tmp_path):
    """5 instances at 35 % vs 50 % for the scale-in alarm's 15 one-minute
    datapoints: "we remove just one instance" — ceil(5 × 35 / 50) = 4
    (UG as-scaling-target-tracking.html); 14 datapoints are not enough."""
    ids = world.group("web", desired=5, max_size=10)
    world.age(3600)
    for i in ids:
        world.put_cpu(i, [35] * 14)
    run = Runner(tmp_path, world)
    rc, [rec] = run([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0 and rec["desired_replicas"] == 5 and world.desired() == 5
    for i in ids:
        world.put_cpu(i, [35] * 16)
    rc, [rec] = run([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0, rec
    assert (rec["current_replicas"], rec["desired_replicas"]) == (5, 4) and world.desired() == 4


def test_a_warm_pool_instance_is_neither_capacity_nor_a_failure_and_the_run_audits_it(world, tmp_path):
    """3 instances in service at 75 % against 50 % go to ceil(3 × 75 / 50) = 5 (as above). A fourth
    instance in the warm pool (``Warmed:Running``) changes nothing: "As instances leave the warm pool,
    they count toward the desired capacity of the group" (UG ec2-auto-scaling-warm-pools.html, "Core
    concepts") — it is no capacity, no failure, and its CPU is no sample of the group. The audit says
    one standby member was left out."""
    ids = world.group("web", desired=4, max_size=10)
    world.age(3600)
    world.set_state(ids[3], "Warmed:Running")
    world.backend_group().desired_capacity = 3
    for i in ids[:3]:
        world.put_cpu(i, [75] * 5)
    world.put_cpu(ids[3], [5] * 5)
    rc, [rec] = Runner(tmp_path, world)([{"name": "web"}], policy=TT_POLICY, metrics=None)
    assert rc == 0, rec
    assert (rec["current_replicas"], rec["desired_replicas"], rec["standby_replicas"]) == (3, 5, 1), rec
    [gmd] = [c for c in world.proxy.calls if c.action == "GetMetricData"]
    asked = {d["Value"] for q in gmd.params["MetricDataQueries"] if "MetricStat" in q
             for d in q["MetricStat"]["Metric"]["Dimensions"] if d["Name"] == "InstanceId"}
    assert asked == set(ids[:3])
