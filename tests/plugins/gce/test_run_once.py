"""End to end through ``scalebridge run --once``: a run configuration whose ``gce``
provider points at the local Compute and Monitoring servers, the real CLI, the
real clients.

Expected results come from GCE's documentation: a per-group metric with a
single-instance assignment keeps "the number of instances proportional to the
value of this metric" (300 undelivered messages at 50 per VM: 6 VMs,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers,
AutoscalingPolicyCustomMetricUtilization.singleInstanceAssignment); "when
scaling out, the autoscaler ignores data from VMs that are still initializing"
(the same reference, autoscalingPolicy.coolDownPeriodSec; the default
initialization period is 60 s);
the recommended size is set "to handle peak load observed over the stabilization
period" (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions),
600 s by default (autoscalingPolicy.stabilizationPeriodSec).
"""
from __future__ import annotations

import json

import yaml

from scalebridge.cli import main
from tests.plugins.gce.conftest import QUEUE, REGION, ZONE, cpu_series

QUEUE_POLICY = {"semantics": "gce", "min_replicas": 1, "max_replicas": 20,
                "metrics": [{"type": "external", "name": "queue_depth",
                             "target": {"type": "AverageValue", "average_value": 50}}]}
QUEUE_SOURCE = {"queue_depth": {"source": {"metric_type": QUEUE,
                                           "filter": 'resource.labels.subscription_id = "jobs"'}}}
CPU_POLICY = {"semantics": "gce", "min_replicas": 1, "max_replicas": 20,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 60}}]}


def queue(monitoring, depth, now):
    monitoring.reset()
    monitoring.add_series(QUEUE, resource_type="pubsub_subscription", resource_labels={"subscription_id": "jobs"},
                          points=[(now - 60, float(depth))])


class Runner:
    def __init__(self, tmp_path, options):
        self.tmp, self.options = tmp_path, options
        self.audit = tmp_path / "audit.jsonl"
        self.state = tmp_path / "state.db"
        self.seen = 0

    def __call__(self, targets, *flags, state=None, policy=QUEUE_POLICY, metrics=QUEUE_SOURCE):
        for t in targets:
            t.setdefault("provider", "gce")
            t.setdefault("policy", "p")
            t.setdefault("metrics", metrics)
        config = self.tmp / "run.yaml"
        config.write_text(yaml.safe_dump({"providers": {"gce": self.options}, "policies": {"p": policy},
                                          "targets": targets}))
        rc = main(["run", str(config), "--once", "--audit", str(self.audit), "--state", str(state or self.state),
                   *flags])
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        new, self.seen = [json.loads(x) for x in lines[self.seen:]], len(lines)
        return rc, new


def test_a_zonal_mig_of_2_with_a_queue_of_300_at_50_per_vm_goes_to_6(compute, monitoring, options, tmp_path, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    queue(monitoring, 300, now)
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}])
    assert rc == 0, rec
    assert rec["action"] == "applied" and rec["current_replicas"] == 2 and rec["desired_replicas"] == 6
    assert rec["provider"] == "gce" and rec["semantics"] == "gce"
    assert mig.target_size == 6


def test_a_regional_mig_the_same(compute, monitoring, options, tmp_path, now):
    mig = compute.add_mig("api", region=REGION, size=2)
    queue(monitoring, 300, now)
    rc, [rec] = Runner(tmp_path, options)([{"name": "api", "ref": {"region": REGION, "instance_group_manager": "api"}}])
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 6
    assert mig.target_size == 6
    assert compute.count(f"POST /compute/v1/projects/test-project/regions/{REGION}/instanceGroupManagers/api/resize") == 1


def test_cpu_with_instances_still_initializing_scales_on_the_settled_ones(compute, monitoring, options, tmp_path, now):
    """4 VMs: two up for an hour at 90% CPU, two started 20 s ago (inside the 60 s
    default initialization period) at 10%. "When scaling out, the autoscaler
    ignores data from VMs that are still initializing because those VMs might not
    yet represent normal usage of your application. The default initialization
    period is 60 seconds." (autoscalingPolicy.coolDownPeriodSec,
    https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers). Counting
    their data would average 50% against 60% and keep 4; without it the average
    is 90%, and the autoscaler "rounds up" the VMs that utilization needs
    (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions):
    ceil(4 × 90 / 60) = 6 (N the group's targetSize: docs/research/gce.md, G-GAP-1)."""
    mig = compute.add_mig("web", zone=ZONE, size=4, started=[now - 3600, now - 3600, now - 20, now - 20])
    cpu_series(monitoring, mig, [0.9, 0.9, 0.1, 0.1], now)
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}],
                                          policy=CPU_POLICY, metrics={})
    assert rc == 0 and rec["action"] == "applied", rec
    assert rec["desired_replicas"] == 6 and mig.target_size == 6
    # the default cpu source: compute.googleapis.com/instance/cpu/utilization, a fraction read as percent
    assert any("compute.googleapis.com/instance/cpu/utilization" in r.filter for r in monitoring.requests)


def test_dry_run_leaves_the_size(compute, monitoring, options, tmp_path, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    queue(monitoring, 300, now)
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}],
                                          "--dry-run")
    assert rc == 0 and rec["action"] == "dry_run" and rec["desired_replicas"] == 6
    assert mig.target_size == 2 and compute.count("resize") == 0


def test_an_operation_still_running_gets_no_second_resize(compute, monitoring, options, tmp_path, now):
    compute.op_polls = 1000
    mig = compute.add_mig("web", zone=ZONE, size=2)
    queue(monitoring, 300, now)
    run = Runner(tmp_path, {**options, "operation_wait_seconds": 0})
    ref = {"zone": ZONE, "instance_group_manager": "web"}
    rc, [rec] = run([{"name": "web", "ref": ref}])
    assert rc == 0 and rec["action"] == "applied" and mig.target_size == 6
    compute.settle(mig)                 # the VMs are there, the operation is not DONE
    queue(monitoring, 500, now)
    rc, [rec] = run([{"name": "web", "ref": ref}])
    assert rec["action"] == "in_flight" and rec["desired_replicas"] == 10 and "RUNNING" in rec["note"]
    assert compute.count("/resize") == 1 and mig.target_size == 6


def test_a_group_not_yet_stable_gets_no_second_resize(compute, monitoring, options, tmp_path, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    queue(monitoring, 300, now)
    run = Runner(tmp_path, options)
    ref = {"zone": ZONE, "instance_group_manager": "web"}
    run([{"name": "web", "ref": ref}])
    queue(monitoring, 500, now)
    rc, [rec] = run([{"name": "web", "ref": ref}])   # 4 VMs still CREATING
    assert rec["action"] == "in_flight" and "not stable" in rec["note"]
    assert compute.count("/resize") == 1 and mig.target_size == 6


def test_the_stabilization_period_holds_across_two_runs_sharing_a_state_file(compute, monitoring, options,
                                                                             tmp_path, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    run = Runner(tmp_path, options)
    ref = {"zone": ZONE, "instance_group_manager": "web"}
    queue(monitoring, 300, now)
    rc, [rec] = run([{"name": "web", "ref": ref}])
    assert rec["action"] == "applied" and mig.target_size == 6
    compute.settle(mig)
    queue(monitoring, 50, now)                       # 1 VM's worth
    rc, [rec] = run([{"name": "web", "ref": ref}])
    assert rc == 0 and rec["recommended_replicas"] == 6 and rec["reason"] == "ScaleDownStabilized"
    assert rec["action"] == "unchanged" and mig.target_size == 6
    # the held peak is the state file's: with the group resized to 3 behind scalebridge's
    # back, the shared state still recommends 6, a fresh state only the current 3
    mig.target_size = 3
    _, [shared] = run([{"name": "web", "ref": ref}], "--dry-run")
    _, [fresh] = run([{"name": "web", "ref": ref}], "--dry-run", state=tmp_path / "fresh.db")
    assert shared["desired_replicas"] == 6 and fresh["desired_replicas"] == 3


def test_an_autoscaler_in_on_mode_is_refused_naming_it(compute, monitoring, options, tmp_path, now):
    mig = compute.add_mig("web", zone=ZONE, size=2, autoscaler_mode="ON")
    queue(monitoring, 300, now)
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}])
    assert rc == 1 and rec["action"] == "refused"
    assert f"projects/test-project/zones/{ZONE}/autoscalers/web-as (mode ON)" in rec["error"]
    assert mig.target_size == 2 and compute.count("resize") == 0


def test_a_quota_error_reaches_the_audit_log_as_throttled(compute, monitoring, options, tmp_path, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    queue(monitoring, 300, now)
    compute.fail_next_operation("QUOTA_EXCEEDED", "Quota 'CPUS' exceeded. Limit: 8.0 in region europe-west1.")
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}])
    assert rc == 1 and rec["action"] == "failed" and rec["error_kind"] == "throttled"
    assert "QUOTA_EXCEEDED" in rec["error"] and mig.target_size == 2


def test_a_rate_limit_reaches_the_audit_log_as_throttled(compute, monitoring, options, tmp_path, now):
    compute.add_mig("web", zone=ZONE, size=2)
    queue(monitoring, 300, now)
    compute.fail(403, method="GET", path="instanceGroupManagers/web", reason="rateLimitExceeded",
                 message="Rate Limit Exceeded")
    run = Runner(tmp_path, options)
    rc, [rec] = run([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}])
    assert rc == 1 and rec["action"] == "failed" and rec["error_kind"] == "throttled"
    assert "Rate Limit Exceeded" in rec["error"]
    monitoring.fail("RESOURCE_EXHAUSTED", message="Quota exceeded for quota metric 'Time series queries'")
    rc, [rec] = run([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}])
    assert rc == 1 and rec["error_kind"] == "throttled" and "Time series queries" in rec["error"]


def test_load_balancing_utilization_scales_the_group(compute, monitoring, options, tmp_path, now):
    """3 VMs serving 240 requests/s at maxRatePerInstance 100: 80% of the serving
    capacity against a 60% target — ceil(3 × 80 / 60) = 4
    (https://cloud.google.com/compute/docs/autoscaler/scaling-load-balancing)."""
    mig = compute.add_mig("web", zone=ZONE, size=3)
    monitoring.add_series("loadbalancing.googleapis.com/https/backend_request_count", resource_type="https_lb_rule",
                          resource_labels={"backend_name": "web", "backend_scope": ZONE},
                          points=[(now - 60, 240.0 * 60)])
    policy = {"semantics": "gce", "min_replicas": 1, "max_replicas": 20,
              "metrics": [{"type": "load_balancing", "name": "lb",
                           "target": {"type": "Utilization", "average_utilization": 60}}]}
    rc, [rec] = Runner(tmp_path, options)([{"name": "web", "ref": {"zone": ZONE, "instance_group_manager": "web"}}],
                                          policy=policy, metrics={"lb": {"source": {"max_rate_per_instance": 100}}})
    assert rc == 0 and rec["action"] == "applied", rec
    assert rec["desired_replicas"] == 4 and mig.target_size == 4


def _age_state(path, seconds):
    """Every time the state file holds, ``seconds`` earlier: the state as the next
    ``--once`` run would find it had it started ``seconds`` later (the CLI runs on
    the real clock)."""
    from scalebridge.controller.store import SQLiteStore

    def back(v):
        if isinstance(v, dict):
            return {k: (x - seconds if k == "time" and isinstance(x, (int, float)) else back(x))
                    for k, x in v.items()}
        if isinstance(v, list):
            return [back(x) for x in v]
        return v

    store = SQLiteStore(path)
    try:
        rows = list(store.load_all().values())
        assert rows and all(r.intent_size is None for r in rows)      # no write pending between the runs
        for r in rows:
            r.state = back(r.state)
        store.save(rows)
    finally:
        store.close()


def test_the_stabilization_period_is_10_minutes_across_once_runs(compute, monitoring, options, tmp_path, now):
    """The recommended size serves "peak load observed over the stabilization
    period", 600 s by default (autoscalingPolicy.stabilizationPeriodSec,
    https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers): after a
    peak of 6, a load of 1 VM keeps 6 for a run 9.5 minutes later and goes to 1
    on a run past 10 minutes — each run its own ``scalebridge run --once``
    process state, the peak only in the shared state file."""
    mig = compute.add_mig("web", zone=ZONE, size=2)
    run = Runner(tmp_path, options)
    ref = {"zone": ZONE, "instance_group_manager": "web"}
    queue(monitoring, 300, now)
    _, [rec] = run([{"name": "web", "ref": ref}])
    assert rec["action"] == "applied" and mig.target_size == 6
    compute.settle(mig)
    queue(monitoring, 50, now)
    _age_state(run.state, 570)
    rc, [rec] = run([{"name": "web", "ref": ref}])
    assert rc == 0 and (rec["action"], rec["desired_replicas"], rec["reason"]) == ("unchanged", 6,
                                                                                    "ScaleDownStabilized")
    assert mig.target_size == 6
    _age_state(run.state, 40)                        # the peak is now 610 s old
    rc, [rec] = run([{"name": "web", "ref": ref}])
    assert rc == 0 and (rec["action"], rec["desired_replicas"]) == ("applied", 1), rec
    assert mig.target_size == 1
