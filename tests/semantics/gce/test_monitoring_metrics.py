"""The gce semantics' Cloud Monitoring signals: per-instance GAUGE and DELTA_PER_*
metrics, per-group metrics (single instance assignment, summed time series,
scaling to zero), and members that count for several.

Sources: https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (customMetricUtilizations)."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    average_value as group, cpu, GCE_NOW as NOW, gce_request as request, per_vm, pods_average as gauge,
    queue, vms)

REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
MON = "https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics"


def test_per_group_metric_scales_to_zero():
    """https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics: "if you need to scale your MIG down to zero VMs from time to time, you
    can configure your MIG to scale using per-group metrics instead." """
    r = decide(request(3, [queue(10)], {"metrics": {"queue": {"values": [0]}}}, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 0


def test_per_group_values_are_summed():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (filter): "If multiple TimeSeries are returned upon the query execution,
    the autoscaler will sum their respective values to obtain its scaling value." """
    r = decide(request(1, [queue(10)], {"metrics": {"queue": {"values": [30, 41, 0.5]}}}))
    assert r["metrics"][0]["replicas"] == 8 and r["metrics"][0]["value"] == 71.5


def test_per_instance_metrics_cannot_go_below_one_vm():
    """https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics: "When using per-instance metrics, the MIG cannot scale below a size of 1
    VM"; understanding-autoscaler-decisions ("Autoscale a MIG to zero instances"): "If the
    policy includes these metrics, then the autoscaler requires at least one instance in the
    group to obtain a signal, and the group won't scale in to zero instances." (G-GAP-7: with
    any per-instance signal the floor is max(min, 1); only per-group signals reach 0.)"""
    members = vms(2)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.0)}}}
    r = decide(request(2, [cpu(60)], obs, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 1 and r["reason"] == "TooFewReplicas"
    # a per-group signal beside it does not lift the floor
    obs["metrics"]["queue"] = {"values": [0]}
    r = decide(request(2, [cpu(60), queue(10)], obs, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 1 and r["reason"] == "TooFewReplicas"
    # per-group signals alone reach 0
    r = decide(request(2, [queue(10)], {"metrics": {"queue": {"values": [0]}}}, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 0


def test_delta_per_second_with_a_counter_reset():
    """DELTA_PER_SECOND: "the rate of growth per second". A counter that drops has
    been reset: the increment after it is its new value."""
    members = vms(1)
    series = {"vm-0": [[NOW - 60, 1000], [NOW - 30, 4000], [NOW, 3000]]}
    m = {"type": "pods", "name": "rps", "target": {"type": "AverageValue", "average_value": 50, "rate": "per_second"}}
    r = decide(request(1, [m], {"members": members, "metrics": {"rps": {"member_series": series}}}))
    assert r["metrics"][0]["value"] == 100 and r["metrics"][0]["replicas"] == 2   # (3000 + 3000) / 60


def test_members_with_count_weigh_that_many():
    members = [{"name": "a", "requests": {"cpu": 1}, "count": 3}, {"name": "b", "requests": {"cpu": 1}}]
    obs = {"members": members, "metrics": {"cpu": {"members": {"a": 0.2, "b": 1.0}}}}
    r = decide(request(4, [cpu(60)], obs))
    assert r["metrics"][0]["utilization"] == 40 and r["desired_replicas"] == 3   # ceil(4 × 40 / 60)


def test_single_instance_assignment_page_example_100_over_5_is_20():
    """MON: "For example, if the metric is equal to 100 and the single instance assignment is 5,
    then the autoscaler creates 20 VMs in the MIG." """
    r = decide(request(3, [group("q", 5)], {"metrics": {"q": {"value": 100}}}, policy={"max_replicas": 50}))
    assert r["desired_replicas"] == 20


def test_size_of_another_mig_one_backend_per_four_frontends_rounds_up():
    """MON (Autoscale based on size of another MIG): "If you need 1 backend VM for every 4
    frontend VMs, then set the single instance assignment to 4 in the backend MIG." 10 frontend
    VMs need ceil(10 / 4) = 3 backend VMs."""
    r = decide(request(1, [group("size", 4)], {"metrics": {"size": {"value": 10}}}))
    assert r["desired_replicas"] == 3


def test_gauge_per_instance_is_the_average_over_vms_against_the_target():
    """REST utilizationTarget: "A utilization metric scales number of virtual machines
    handling requests to increase or decrease proportionally to the metric. ... The
    autoscaler works to keep this value constant for each of the instances."
    4 VMs averaging 150 against 100 → 6."""
    members = vms(4)
    samples = {"vm-0": 100, "vm-1": 200, "vm-2": 100, "vm-3": 200}
    r = decide(request(4, [gauge()], {"members": members, "metrics": {"conn": {"members": samples}}}))
    assert r["metrics"][0]["value"] == 150 and r["desired_replicas"] == 6


@pytest.mark.divergence("gce-gauge-latest-point")
def test_gauge_series_is_averaged_over_the_last_couple_of_minutes():
    """REST UtilizationTargetType GAUGE: "Sets the utilization target value for a gauge
    metric. The autoscaler will collect the average utilization of the virtual machines
    from the last couple of minutes, and compare the value to the utilization target value
    to perform autoscaling." Each VM reports 100 one minute ago and 300 now (both inside
    any reading of "the last couple of minutes"): the average is 200 → ⌈4 × 200 / 100⌉ = 8,
    not the latest point's ⌈4 × 300 / 100⌉ = 12. (The window length is not quantified.)"""
    members = vms(4)
    series = {m["name"]: [[NOW - 60, 100], [NOW, 300]] for m in members}
    r = decide(request(4, [gauge()], {"members": members, "metrics": {"conn": {"member_series": series}}}))
    assert r["desired_replicas"] == 8


def test_delta_per_minute_is_the_rate_of_growth_per_minute():
    """REST UtilizationTargetType DELTA_PER_MINUTE: "Sets the utilization target value for a
    cumulative or delta metric, expressed as the rate of growth per minute." A counter that
    grows by 600 in 120 s grows 300 a minute; target 100 a minute on 2 VMs → 6."""
    members = vms(2)
    series = {m["name"]: [[NOW - 120, 1000], [NOW, 1600]] for m in members}
    r = decide(request(2, [gauge("req", 100, "per_minute")],
                       {"members": members, "metrics": {"req": {"member_series": series}}}))
    assert r["metrics"][0]["value"] == 300 and r["desired_replicas"] == 6


def test_delta_per_second_is_the_rate_of_growth_per_second():
    """REST UtilizationTargetType DELTA_PER_SECOND: "... expressed as the rate of growth per
    second." 600 in 120 s is 5 per second; target 2 per second on 2 VMs → 5."""
    members = vms(2)
    series = {m["name"]: [[NOW - 120, 1000], [NOW, 1600]] for m in members}
    r = decide(request(2, [gauge("req", 2, "per_second")],
                       {"members": members, "metrics": {"req": {"member_series": series}}}))
    assert r["metrics"][0]["value"] == 5 and r["desired_replicas"] == 5


def test_per_group_single_instance_assignment_does_not_depend_on_group_size():
    """REST singleInstanceAssignment: "Autoscaler keeps the number of instances proportional
    to the value of this metric. The metric itself does not change value due to group
    resizing." 45 units of work, 10 per VM → 5, whether the group has 2 or 20 VMs."""
    for current in (2, 20):
        r = decide(request(current, [queue(10)], {"metrics": {"queue": {"values": [45]}}}))
        assert r["metrics"][0]["replicas"] == 5 and r["recommended_replicas"] == 5


def test_per_group_several_time_series_are_summed():
    """REST filter: "If multiple TimeSeries are returned upon the query execution, the
    autoscaler will sum their respective values to obtain its scaling value." 12 + 13 + 20
    = 45, 10 per VM → 5."""
    r = decide(request(3, [queue(10)], {"metrics": {"queue": {"values": [12, 13, 20]}}}))
    assert r["metrics"][0]["value"] == 45 and r["desired_replicas"] == 5
