"""End to end through ``scalebridge run --once``: a run configuration whose ``azure``
provider points at the local ARM server, the real CLI, the real SDKs.

Expected results come from Azure's documentation:
- scale out by 1 when CPU > 70 %, in by 1 when < 30 %: a set of 2 at 90 % goes to 3
  ("If more than one scale-out rule is triggered..." /  the rule's ``ChangeCount``,
  https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings);
- the flapping case of the same page's schema example (out above 85 %, in below 60 %
  over 10 minutes): 2 instances at 50 % would put 100 % on one — autoscale does not
  scale in (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-flapping);
- a rule's cooldown: "the amount of time to wait since the last scaling action before
  this action occurs" (REST: autoscalesettings, ScaleAction.cooldown);
- the ``kubernetes`` semantics on an external queue metric: ``ceil(300 / 50)`` = 6
  (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#algorithm-details).
"""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.cli import main

from .conftest import SUB


def rule(operator, threshold, direction, window=300, cooldown=300):
    return {"metric": "Percentage CPU", "statistic": "Average", "time_grain_seconds": 60,
            "time_window_seconds": window, "time_aggregation": "Average", "operator": operator,
            "threshold": threshold, "action": {"direction": direction, "type": "ChangeCount", "value": 1,
                                               "cooldown_seconds": cooldown}}


CPU_RULES = {"semantics": "azure", "profiles": [{"name": "default",
                                                  "capacity": {"minimum": 1, "maximum": 10, "default": 2},
                                                  "rules": [rule("GreaterThan", 70, "Increase"),
                                                            rule("LessThan", 30, "Decrease")]}]}
FLAPPING = {"semantics": "azure", "profiles": [{"name": "Auto created default scale condition",
                                                 "capacity": {"minimum": 1, "maximum": 4, "default": 1},
                                                 "rules": [rule("GreaterThan", 85, "Increase", window=600),
                                                           rule("LessThan", 60, "Decrease", window=600)]}]}
QUEUE = "/subscriptions/%s/resourceGroups/shop/providers/Microsoft.ServiceBus/namespaces/shop/queues/orders" % SUB
# with a `behavior` (even empty: the API server fills autoscaling/v2's defaults, scale-up by
# max(100 %, 4 pods) per 15 s) the first step can reach 6; without one the controller's
# behavior-less path caps it at max(2 × current, 4) = 4 (horizontal.go, normalizeDesiredReplicas)
QUEUE_POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 20, "behavior": {},
                "metrics": [{"type": "external", "name": "queue_depth",
                             "target": {"type": "AverageValue", "average_value": 50}}]}


def cpu(arm, name, percent, minutes=15):
    now = time.time()
    rid = arm.scale_set_id(SUB, "shop", name)
    ss = arm.scale_set(SUB, "shop", name)
    for iid in ss.vms:
        arm.put_metric(rid, "Percentage CPU", [(now - 60 * k, float(percent)) for k in range(1, minutes + 1)],
                       vm=f"{name}_{iid}")


class Runner:
    def __init__(self, tmp_path, options):
        self.tmp, self.options = tmp_path, options
        self.audit = tmp_path / "audit.jsonl"
        self.state = tmp_path / "state.db"
        self.seen = 0

    def __call__(self, policy, *flags, name="web", metrics=None):
        target = {"name": f"{name}-vmss", "provider": "azure-prod", "policy": "p",
                  "ref": {"resource_group": "shop", "scale_set": name}}
        if metrics:
            target["metrics"] = metrics
        config = self.tmp / "run.yaml"
        config.write_text(yaml.safe_dump({"providers": {"azure-prod": {"type": "azure", **self.options}},
                                          "policies": {"p": policy}, "targets": [target]}))
        rc = main(["run", str(config), "--once", "--audit", str(self.audit), "--state", str(self.state), *flags])
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        new, self.seen = [json.loads(x) for x in lines[self.seen:]], len(lines)
        return rc, new


def test_a_set_of_2_at_90_percent_scales_out_by_one(arm, options, tmp_path):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 90)
    rc, (rec,) = Runner(tmp_path, options)(CPU_RULES)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 3
    assert rec["provider"] == "azure-prod" and rec["semantics"] == "azure"
    assert arm.scale_set(SUB, "shop", "web").capacity == 3


def test_the_rule_reads_the_last_5_minutes_of_the_scale_sets_average(arm, options, tmp_path):
    """Two instances at 80 % and 100 % for the last 5 minutes (the scale set's
    Average: 90 %), both at 20 % for the 10 minutes before: the rule's 5-minute window
    sees 90 % > 70 % → 3; a 15-minute average (43 %) would not have scaled."""
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    now = time.time()
    rid = arm.scale_set_id(SUB, "shop", "web")
    for iid, hot in zip(sorted(arm.scale_set(SUB, "shop", "web").vms), (80.0, 100.0)):
        arm.put_metric(rid, "Percentage CPU", [(now - 60 * k, hot if k <= 5 else 20.0) for k in range(1, 16)],
                       vm=f"web_{iid}")
    rc, (rec,) = Runner(tmp_path, options)(CPU_RULES)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 3, rec
    assert arm.scale_set(SUB, "shop", "web").capacity == 3
    reads = [q for m, path, q in arm.calls if path.lower().endswith("/providers/microsoft.insights/metrics")]
    assert reads and all(q["metricnames"] == "Percentage CPU" and q["interval"] == "PT1M" and
                         q["aggregation"] == "Average" and "$filter" not in q for q in reads)


def test_the_documented_thread_count_flapping_case_keeps_the_size(arm, options, tmp_path):
    """Azure's flapping example: out by 1 when Thread Count >= 600, in by 1 when <= 600;
    3 instances at 575 would be 575 × 3 / 2 = 862.5 on 2 — autoscale does not scale in
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-flapping)."""
    arm.add_scale_set(SUB, "shop", "web", capacity=3)
    now = time.time()
    arm.put_metric(arm.scale_set_id(SUB, "shop", "web"), "Thread Count",
                   [(now - 60 * k, 575.0) for k in range(1, 16)])
    threads = [dict(rule(op, 600, direction), metric="Thread Count")
               for op, direction in (("GreaterThanOrEqual", "Increase"), ("LessThanOrEqual", "Decrease"))]
    policy = {"semantics": "azure", "profiles": [{"name": "default",
                                                  "capacity": {"minimum": 1, "maximum": 10, "default": 3},
                                                  "rules": threads}]}
    rc, (rec,) = Runner(tmp_path, options)(policy)
    assert rc == 0 and rec["action"] == "unchanged" and rec["reason"] == "FlappingPrevented", rec
    assert arm.scale_set(SUB, "shop", "web").capacity == 3
    assert not [c for c in arm.calls if c[0] == "PATCH"]


def test_the_documented_flapping_case_keeps_the_size(arm, options, tmp_path):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 50)
    rc, (rec,) = Runner(tmp_path, options)(FLAPPING)
    assert rc == 0 and rec["action"] == "unchanged" and rec["reason"] == "FlappingPrevented"
    assert arm.scale_set(SUB, "shop", "web").capacity == 2
    assert not [c for c in arm.calls if c[0] == "PATCH"]


def test_an_external_queue_metric_under_the_kubernetes_semantics(arm, options, tmp_path):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    now = time.time()
    arm.put_metric(QUEUE, "ActiveMessages", [(now - 60 * k, 300.0) for k in range(1, 4)])
    metrics = {"queue_depth": {"source": {"resource_uri": QUEUE, "metric_name": "ActiveMessages",
                                          "aggregation": "Average"}}}
    rc, (rec,) = Runner(tmp_path, options)(QUEUE_POLICY, metrics=metrics)
    assert rc == 0 and rec["desired_replicas"] == 6 and rec["action"] == "applied"
    assert arm.scale_set(SUB, "shop", "web").capacity == 6


def test_without_behavior_the_first_step_is_capped_as_the_hpa_caps_it(arm, options, tmp_path):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    now = time.time()
    arm.put_metric(QUEUE, "ActiveMessages", [(now - 60 * k, 300.0) for k in range(1, 4)])
    metrics = {"queue_depth": {"source": {"resource_uri": QUEUE, "metric_name": "ActiveMessages"}}}
    policy = {k: v for k, v in QUEUE_POLICY.items() if k != "behavior"}
    rc, (rec,) = Runner(tmp_path, options)(policy, metrics=metrics)
    assert (rec["desired_replicas"], rec["reason"]) == (4, "ScaleUpLimit")


def test_dry_run_leaves_the_capacity(arm, options, tmp_path):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 90)
    rc, (rec,) = Runner(tmp_path, options)(CPU_RULES, "--dry-run")
    assert rc == 0 and rec["action"] == "dry_run" and rec["desired_replicas"] == 3
    assert arm.scale_set(SUB, "shop", "web").capacity == 2
    assert not [c for c in arm.calls if c[0] == "PATCH"]


def test_the_cooldown_holds_across_two_runs_sharing_a_state_file(arm, options, tmp_path):
    arm.update_polls = 0
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 90)
    run = Runner(tmp_path, options)
    rc, (first,) = run(CPU_RULES)
    assert first["action"] == "applied" and arm.scale_set(SUB, "shop", "web").capacity == 3
    cpu(arm, "web", 90)                       # still hot, the new instance too
    rc, (second,) = run(CPU_RULES)
    assert rc == 0 and second["reason"] == "CooldownActive" and second["action"] == "unchanged"
    assert arm.scale_set(SUB, "shop", "web").capacity == 3


def test_an_update_in_progress_gets_no_second_update(arm, options, tmp_path):
    arm.update_polls = 5
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 90)
    policy = {**CPU_RULES, "profiles": [{**CPU_RULES["profiles"][0],
                                         "rules": [rule("GreaterThan", 70, "Increase", cooldown=0),
                                                   rule("LessThan", 30, "Decrease", cooldown=0)]}]}
    run = Runner(tmp_path, options)
    assert run(policy)[1][0]["action"] == "applied"
    rc, (rec,) = run(policy)
    assert rec["action"] == "in_flight" and "Updating" in rec["note"]
    assert sum(1 for c in arm.calls if c[0] == "PATCH") == 1


def test_a_scale_set_an_enabled_autoscale_setting_targets_is_refused(arm, options, tmp_path, capsys):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 90)
    arm.add_autoscale_setting(SUB, "shop", "web-autoscale", arm.scale_set_id(SUB, "shop", "web"))
    rc, (rec,) = Runner(tmp_path, options)(CPU_RULES)
    assert rc == 1 and rec["action"] == "refused" and "web-autoscale" in rec["error"]
    assert "web-vmss" in capsys.readouterr().err
    assert arm.scale_set(SUB, "shop", "web").capacity == 2


def test_a_refused_autoscale_listing_fails_the_target_and_leaves_it(arm, options, tmp_path):
    """Without ``Microsoft.Insights/autoscalesettings/read`` at the subscription, ARM answers
    the listing 403 AuthorizationFailed: the target is not resized unchecked."""
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    cpu(arm, "web", 90)
    arm.fail(403, match=r"^GET .*/autoscalesettings$", times=10, body={"error": {
        "code": "AuthorizationFailed", "message": "The client 'scalebridge' does not have authorization to perform "
        "action 'microsoft.insights/autoscalesettings/read' over scope '/subscriptions/%s'." % SUB}})
    rc, recs = Runner(tmp_path, options)(CPU_RULES)
    assert rc != 0 and recs and recs[-1]["action"] == "failed", recs
    assert recs[-1]["error_kind"] == "forbidden"
    assert "autoscaleSettings.listBySubscription" in recs[-1]["error"] and "AuthorizationFailed" in recs[-1]["error"]
    assert arm.scale_set(SUB, "shop", "web").capacity == 2
    assert not [c for c in arm.calls if c[0] == "PATCH"]
