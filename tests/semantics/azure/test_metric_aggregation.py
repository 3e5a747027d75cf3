"""The azure semantics' metric aggregation: the statistic across instances within each
time grain, then the time aggregation over the time window; dividePerInstance; the
metric delay; exact threshold comparison.

Sources: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings (metricTrigger),
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-custom-metric,
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    AZURE_NOW as NOW, azure_request as request, azure_rule as rule, azure_series as series)

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"
CUSTOM_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-custom-metric"
REST_URL = "https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update"


def test_statistic_then_time_aggregation():
    """BEST_URL (2026): "with a 1-minute timeGrain, statistic set to Average, and timeAggregation set to
    Maximum, autoscale first averages the metric across instances for each minute. It then compares the
    highest 1-minute average in the time window with the rule threshold." """
    members = {"vm-0": [[NOW - 120, 50], [NOW - 60, 90], [NOW, 60]],
               "vm-1": [[NOW - 120, 70], [NOW - 60, 70], [NOW, 60]]}
    # per-minute averages 60, 80, 60 → Maximum 80 > 75; Average of all samples (66.7) would not fire
    rules = [rule("cpu", "GreaterThan", 75, "Increase", aggregation="Maximum")]
    r = decide(request(2, rules, {"cpu": {"member_series": members}}))
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (80, 3)
    # per-minute Max across instances 70, 90, 60 → Average 73.3
    rules = [rule("cpu", "GreaterThan", 73, "Increase", statistic="Max")]
    r = decide(request(2, rules, {"cpu": {"member_series": members}}))
    assert r["metrics"][0]["value"] == pytest.approx(220 / 3) and r["desired_replicas"] == 3
    # A-GAP-12: statistic Count = instances reporting in each grain
    rules = [rule("cpu", "GreaterThanOrEqual", 2, "Increase", statistic="Count", aggregation="Minimum")]
    assert decide(request(2, rules, {"cpu": {"member_series": members}}))["desired_replicas"] == 3


def test_time_aggregation_count_and_last():
    """A-GAP-12: ``Count`` is the number of points in the window; ``Last`` the latest one."""
    rules = [rule("cpu", "LessThan", 5, "Decrease", aggregation="Count")]
    r = decide(request(3, rules, {"cpu": series([1, 1, 1, 1])}))
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (4, 2)
    rules = [rule("cpu", "GreaterThan", 70, "Increase", aggregation="Last")]
    shuffled = {"series": [[NOW, 90], [NOW - 120, 10], [NOW - 60, 10]]}
    assert decide(request(3, rules, {"cpu": shuffled}))["desired_replicas"] == 4


def test_metric_delay_shifts_the_window():
    """Protocol: windows end ``settings.metric_delay_seconds`` before now."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", window=120)]
    metrics = {"cpu": {"series": [[NOW - 240, 90], [NOW - 180, 90], [NOW - 60, 10], [NOW, 10]]}}
    assert decide(request(3, rules, metrics))["desired_replicas"] == 3
    assert decide(request(3, rules, metrics, settings={"metric_delay_seconds": 180}))["desired_replicas"] == 4


def test_thresholds_compare_exactly():
    """Protocol: exact arithmetic. (0.1 + 0.2 + 0.3) / 3 is 0.2 (float: 0.19999999999999998)."""
    rules = [rule("load", "LessThan", 0.2, "Decrease")]
    r = decide(request(3, rules, {"load": series([0.1, 0.2, 0.3])}))
    assert r["metrics"][0]["triggered"] is False
    rules = [rule("load", "LessThanOrEqual", 0.2, "Decrease")]
    assert decide(request(3, rules, {"load": series([0.1, 0.2, 0.3])}))["metrics"][0]["triggered"] is True


MIN = 60.0


def grain_rule(metric="m", operator="GreaterThan", threshold=0, direction="Increase", *, statistic="Average",
         aggregation="Average", grain=60, window=300, divide=False) -> dict:
    return {"metric": metric, "statistic": statistic, "time_grain_seconds": grain,
            "time_window_seconds": window, "time_aggregation": aggregation, "operator": operator,
            "threshold": threshold, "divide_per_instance": divide,
            "action": {"direction": direction, "type": "ChangeCount", "value": 1, "cooldown_seconds": 300}}


def decide_rules(current: int, rules: list, metrics: dict, now: float = NOW) -> dict:
    return decide({"semantics": "azure", "now": now, "current_replicas": current,
                   "policy": {"min_replicas": 1, "max_replicas": 20, "default_replicas": 1, "rules": rules},
                   "observations": {"metrics": metrics}})


def member_series(values_per_member: dict, now: float = NOW) -> dict:
    """{member: [v_oldest, ..., v_now]} at one sample per minute, the last at ``now``."""
    return {"member_series": {m: [[now - MIN * (len(vs) - 1 - i), v] for i, v in enumerate(vs)]
                              for m, vs in values_per_member.items()}}


SPIKE = {"vm0": [10, 90, 10, 10, 10], "vm1": [10, 70, 10, 10, 10]}   # per-minute averages: 10, 80, 10, 10, 10


@pytest.mark.parametrize("threshold, fired", [(79, True), (80, False)])
def test_statistic_across_instances_then_maximum_over_the_window(threshold, fired):
    """BEST_URL: "with a 1-minute timeGrain, statistic set to Average, and timeAggregation set to Maximum,
    autoscale first averages the metric across instances for each minute. It then compares the highest
    1-minute average in the time window with the rule threshold." The highest 1-minute average is 80
    (90 and 70), not 90: > 79 fires, > 80 does not."""
    r = decide_rules(2, [grain_rule(threshold=threshold, aggregation="Maximum")], {"m": member_series(SPIKE)})
    assert r["metrics"][0]["value"] == 80
    assert r["metrics"][0]["triggered"] is fired
    assert r["desired_replicas"] == (3 if fired else 2)


@pytest.mark.parametrize("statistic, aggregation, want", [
    ("Average", "Average", 24),     # (10 + 80 + 10 + 10 + 10) / 5
    ("Max", "Average", 26),         # (10 + 90 + 10 + 10 + 10) / 5
    ("Min", "Maximum", 70),         # per-minute minimum, highest: 70
    ("Sum", "Total", 240),          # per-minute sums 20, 160, 20, 20, 20
    ("Sum", "Minimum", 20),
    ("Average", "Last", 10),        # the latest 1-minute average
])
def test_time_grain_statistic_then_time_aggregation(statistic, aggregation, want):
    """REST_URL, MetricTrigger.statistic: "the metric statistic type. How the metrics from multiple
    instances are combined." (Average, Min, Max, Sum, Count); timeAggregation: "How the data that is
    collected should be combined over time." (Average, Minimum, Maximum, Total, Count, Last). BEST_URL:
    "The ARM statistic property combines metric values from multiple resource instances into each
    sample. The timeAggregation property then combines those samples over the rule's time window." """
    r = decide_rules(2, [grain_rule(statistic=statistic, aggregation=aggregation)], {"m": member_series(SPIKE)})
    assert r["metrics"][0]["value"] == want


def test_time_aggregation_average_of_the_ten_one_minute_samples():
    """SETTINGS_URL, timeAggregation: "timeAggregation = "Average" should aggregate the sampled metrics by
    taking the average. In the preceding case, take the ten 1-minute samples, and average them." (PT1M
    grain, PT10M window). Ten per-minute values 81..90 average 85.5 > 85; an eleventh, older sample (a
    low 0 from 10 minutes ago) is outside the window."""
    values = [0] + list(range(81, 91))           # 11 points: now-10min .. now
    pts = [[NOW - MIN * (len(values) - 1 - i), v] for i, v in enumerate(values)]
    r = decide_rules(2, [grain_rule(threshold=85, window=600)], {"m": {"series": pts}})
    assert r["metrics"][0]["value"] == 85.5
    assert r["desired_replicas"] == 3


def test_time_window_looks_back_only_its_duration():
    """SETTINGS_URL, timeWindow: "The amount of time to look back for metrics. For example, timeWindow =
    "PT10M" means that every time autoscale runs, it queries metrics for the past 10 minutes." A spike 11
    minutes ago does not fire a PT10M Maximum rule; one 9 minutes ago does."""
    old = {"series": [[NOW - 11 * MIN, 95]] + [[NOW - k * MIN, 40] for k in range(9, -1, -1)]}
    recent = {"series": [[NOW - 9 * MIN, 95]] + [[NOW - k * MIN, 40] for k in range(8, -1, -1)]}
    r = decide_rules(2, [grain_rule(threshold=85, window=600, aggregation="Maximum")], {"m": old})
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (40, 2)
    r = decide_rules(2, [grain_rule(threshold=85, window=600, aggregation="Maximum")], {"m": recent})
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (95, 3)


def test_divide_per_instance_queue_length_summed_across_instances():
    """SETTINGS_URL, dividePerInstance: "if the metric is a queue length and the aggregation is Sum, when
    dividePerInstance = true, the metric is divided by the number of instances in the virtual machine
    scale set, giving the average queue length across all virtual machines." BEST_URL: "it's still
    50/2 = 25 messages per instance. So, scale-out doesn't occur. For the first scale-out action to
    happen, the total message count in the queue should be 100." Two instances report 60 and 40 (sum
    100 per minute): 100 / 2 = 50 ≥ 50 → 3; 30 and 20 (sum 50): 25 → no scale-out."""
    out = grain_rule(operator="GreaterThanOrEqual", threshold=50, statistic="Sum", divide=True)
    r = decide_rules(2, [out], {"m": member_series({"vm0": [60] * 5, "vm1": [40] * 5})})
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (50, 3)
    r = decide_rules(2, [out], {"m": member_series({"vm0": [30] * 5, "vm1": [20] * 5})})
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (25, 2)


def test_custom_metric_sessions_divided_by_instance_count():
    """CUSTOM_URL: "Set up a scale-out rule so that Azure spins up another instance of the web app when
    your web app is handling more than 70 sessions per instance." with "Enable metric divide by instance
    count ... so that the number of sessions per instance is measured." 150 sessions on 2 instances =
    75 > 70 → 3; 140 sessions = 70, not more than 70 → stays at 2."""
    out = grain_rule(metric="sessions", threshold=70, divide=True)
    r = decide_rules(2, [out], {"sessions": {"series": [[NOW - k * MIN, 150] for k in range(4, -1, -1)]}})
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (75, 3)
    r = decide_rules(2, [out], {"sessions": {"series": [[NOW - k * MIN, 140] for k in range(4, -1, -1)]}})
    assert (r["metrics"][0]["value"], r["desired_replicas"]) == (70, 2)


@pytest.mark.divergence("azure-clock-aligned-grains")
def test_ten_minute_window_holds_ten_one_minute_samples_between_minute_boundaries():
    """SETTINGS_URL, timeAggregation: "In the preceding case, take the ten 1-minute samples, and average
    them." (timeGrain PT1M, timeWindow PT10M); SETTINGS_URL: "The autoscale job runs every 30 to 60
    seconds", so a run 30 s past the minute is ordinary.

    One instance reports every 15 s. ``now`` is 10:00:30; the window (09:50:30, 10:00:30] touches
    eleven clock minutes, the first and last only half. The samples are 110 in the window's first 30 s
    (09:50:45, 09:51:00) and last 30 s (10:00:15, 10:00:30), 0 elsewhere. Any ten 1-minute samples of
    this window — ten minutes ending at now, or the eleven clock minutes less either partial one —
    average to 11 (one sample of 110 or two of 55 among ten), below the threshold 15. scalebridge
    averages eleven clock-minute buckets, (110 + 110) / 11 = 20, and scales out."""
    now = NOW + 30
    pts = []
    t = now - 12 * MIN
    while t <= now:
        edge = (now - 600 < t <= NOW - 540) or t > NOW
        pts.append([t, 110 if edge else 0])
        t += 15
    r = decide_rules(2, [grain_rule(threshold=15, window=600)], {"m": {"member_series": {"vm0": pts}}}, now=now)
    assert r["metrics"][0]["value"] == 11
    assert r["desired_replicas"] == 2
