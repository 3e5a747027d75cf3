"""The gce semantics with several signals: one recommendation per signal, the largest
wins; rounding of each proposal; no tolerance band; what a failing or per-instance
signal may still do; the default CPU signal.

Sources: https://cloud.google.com/compute/docs/autoscaler/multiple-signals,
https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions,
https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics.
Choices the pages leave open are marked G-GAP-n (docs/research/gce.md)."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    average_value as group, cpu, gce_four_signal_example as four_signal_example, GCE_NOW as NOW,
    gce_request as request, load_balancing as lb, per_vm, pods_average as gauge, queue, vms)

MULTI = "https://cloud.google.com/compute/docs/autoscaler/multiple-signals"
DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
CPU = "https://cloud.google.com/compute/docs/autoscaler/scaling-cpu"


def test_four_signals_7_7_11_14_and_weekday_schedule_15():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "In this case, the autoscaler resizes the MIG to 15 VMs if the
    second schedule is currently active or to 14 VMs otherwise." Per signal:
    ceil(10·0.5/0.8) = 7, ceil(10·0.4/0.6) = 7, 10·1100/1000 = 11, ceil(13.5) = 14."""
    r = decide(four_signal_example())
    assert [m["replicas"] for m in r["metrics"]] == [7, 7, 11, 14]
    assert r["recommended_replicas"] == r["desired_replicas"] == 15
    assert r["reason"] == "ScheduleFloor"


def test_four_signals_outside_the_schedule_gives_14():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "… or to 14 VMs otherwise" (Wednesday 18:00 New York: the 8-hour
    weekday schedule from 09:00 has ended)."""
    r = decide(four_signal_example(now=NOW + 6 * 3600))
    assert [m["replicas"] for m in r["metrics"]] == [7, 7, 11, 14]
    assert r["desired_replicas"] == 14 and r["reason"] == "DesiredWithinRange"


def test_four_signals_weekend_schedule_6_is_below_14():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "A minimum of 6 VMs every Saturday and Sunday at 12:00 AM for 24 hours":
    active on Saturday noon, but 6 < 14."""
    r = decide(four_signal_example(now=NOW + 3 * 86400))
    assert r["desired_replicas"] == 14


def test_metric1_is_exactly_11_and_proposals_are_exact():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: metric1 "1100" against "1000" on 10 VMs is 11. Proposals are exact:
    in binary floating point 3 × 0.8 / 0.8 is 3.0000000000000004 (ceiling 4) and
    3 × 0.2 / 0.6 is 1.0000000000000002 (ceiling 2)."""
    assert 3 * 0.8 / 0.8 > 3 and 3 * 0.2 / 0.6 > 1          # the float trap
    members = vms(10)
    m = {"type": "pods", "name": "m", "target": {"type": "AverageValue", "average_value": 1000}}
    r = decide(request(10, [m], {"members": members, "metrics": {"m": {"members": per_vm(members, 1100)}}}))
    assert r["metrics"][0]["replicas"] == 11
    members = vms(3)
    for target, value, want in [(0.8, 0.8, 3), (0.6, 0.2, 1), ("800m", "800m", 3)]:
        m = {"type": "pods", "name": "m", "target": {"type": "AverageValue", "average_value": target}}
        r = decide(request(3, [m], {"members": members, "metrics": {"m": {"members": per_vm(members, value)}}}))
        assert r["metrics"][0]["replicas"] == want, (target, value)


def test_highest_of_several_signals_wins():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "calculating the recommended number of VMs for each signal and then
    picking the signal that results in the largest number of VMs"."""
    members = vms(4)
    metrics = [cpu(60), queue(10)]
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.3)}, "queue": {"values": [70]}}}
    r = decide(request(4, metrics, obs))
    assert [m["replicas"] for m in r["metrics"]] == [2, 7]
    assert r["desired_replicas"] == 7
    obs["metrics"]["cpu"]["members"] = per_vm(members, 0.9)     # now CPU asks for 6 (90% of 1 vCPU)
    obs["metrics"]["queue"]["values"] = [50]                    # and the queue for 5
    r = decide(request(4, metrics, obs))
    assert [m["replicas"] for m in r["metrics"]] == [6, 5] and r["desired_replicas"] == 6


def test_rounds_up_when_adding_1_5_instances():
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions: "if you set a utilization target of 0.7 … adding 1.5 virtual machine
    (VM) instances … the autoscaler rounds up and adds two instances."
    4 VMs at 96.25 % need 4·96.25/70 = 5.5 VMs."""
    members = vms(4)
    r = decide(request(4, [cpu(70)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9625)}}}))
    assert r["desired_replicas"] == 6 and r["metrics"][0]["utilization"] == 96


def test_removes_one_when_removing_1_5_would_reach_target():
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions (older revision): "if the autoscaler determines that removing 1.5
    virtual machines would increase your utilization to close to 0.7, it will
    remove just one virtual machine." 4 VMs at 43.75 %: 2.5 needed → 3."""
    members = vms(4)
    r = decide(request(4, [cpu(70)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.4375)}}}))
    assert r["desired_replicas"] == 3


def test_no_tolerance_band():
    """GCE has no tolerance: 4 VMs at 61 % of a 60 % target scale out to 5
    (Kubernetes' 0.1 tolerance would hold 4)."""
    members = vms(4)
    r = decide(request(4, [cpu(60)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.61)}}}))
    assert r["desired_replicas"] == 5


def test_every_signal_failing_is_an_error_and_keeps_the_size():
    r = decide(request(4, [cpu(60)], {"members": vms(4), "metrics": {}}))
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics"
    assert "no data for metric cpu" in r["error"] and r["able_to_scale"] is False


def test_a_failing_signal_blocks_scale_in_not_scale_out():
    """G-GAP-6: the rest of the signals may scale out, never in."""
    obs = {"metrics": {"queue": {"values": [20]}}}
    r = decide(request(4, [cpu(60), queue(10)], obs))
    assert r["desired_replicas"] == 4 and r["error"]
    obs["metrics"]["queue"]["values"] = [90]
    r = decide(request(4, [cpu(60), queue(10)], obs))
    assert r["desired_replicas"] == 9 and "1 invalid out of 2" in r["error"]


def test_threshold_rules_alone_get_the_default_cpu_signal():
    """GCE has no threshold rules; a policy naming no signal gets CPU utilization 0.6
    (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu), as the HPA API adds 80% CPU."""
    pol = {"rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70,
                      "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]}
    req = request(3, [], {}, policy=pol)
    del req["policy"]["metrics"]
    r = decide(req)
    assert r["desired_replicas"] == 3 and "no data for metric cpu" in r["error"]   # the default signal, unread
    members = vms(3)
    req = request(3, [], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}, policy=pol)
    del req["policy"]["metrics"]
    assert decide(req)["desired_replicas"] == 5                                     # ceil(3 × 90 / 60)


def test_any_per_instance_signal_prevents_scale_to_zero():
    """DECIDE (Autoscale a MIG to zero instances): "The autoscaling policy must not use any of
    the following metrics that depend on running instances. If the policy includes these
    metrics, then the autoscaler requires at least one instance in the group to obtain a
    signal, and the group won't scale in to zero instances." (Average CPU utilization is listed.)"""
    m = vms(1)
    r = decide(request(1, [cpu(60), group()],
                       {"members": m, "metrics": {"cpu": {"members": {"vm-0": 0}}, "queue": {"values": [0]}}},
                       policy={"min_replicas": 0}))
    assert r["recommended_replicas"] == 1
    assert r["desired_replicas"] == 1


def test_only_per_instance_signal_cannot_scale_out_from_zero():
    """DECIDE: "If the only scaling signal in the policy is based on metrics collected from each
    instance, then the MIG can't scale out from zero because no instances exist in the group to
    generate the metrics." """
    r = decide(request(0, [cpu(60)], {"members": [], "metrics": {}}, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 0


def test_lb_and_cpu_the_larger_signal_wins():
    """MULTI: "An autoscaler handles multiple signals by calculating the recommended number
    of VMs for each signal and then picking the signal that results in the largest number
    of VMs in the MIG." CPU 30 % of a 0.6 target asks for 2; serving capacity 100 % of a
    0.8 target asks for 5 → 5."""
    members = vms(4)
    r = decide(request(4, [cpu(60), lb(80)],
                       {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.3)},
                                                        "lb": {"value": 100}}}))
    assert [m["replicas"] for m in r["metrics"]] == [2, 5]
    assert r["desired_replicas"] == 5


def test_missing_metric_with_a_working_scale_out_signal():
    """MULTI: the autoscaler picks "the signal that results in the largest number of VMs".
    A per-instance metric not yet exported does not stop the CPU signal's scale-out; the
    missing metric is reported (GCE reports MISSING_CUSTOM_METRIC_DATA_POINTS, REST
    AutoscalerStatusDetails: "The autoscaler did not receive any data from the custom metric
    configured for autoscaling.")."""
    members = vms(4)
    r = decide(request(4, [gauge(), cpu(60)],
                       {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}))
    assert r["desired_replicas"] == 6
    assert r["metrics"][0]["error"] and r["metrics"][1]["replicas"] == 6
