"""The azure semantics combining rules: scale out if any scale-out rule fires, in only
if every scale-in rule fires; the largest scale-out and the smallest scale-in win;
a scale-out beats a scale-in.

Sources: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices ("Considerations for scaling when multiple
rules are configured in a profile"),
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import azure_request as request, azure_rule as rule, azure_series as series

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"


FOUR_RULES = [rule("cpu", "GreaterThan", 75, "Increase"), rule("memory", "GreaterThan", 75, "Increase"),
              rule("cpu", "LessThan", 30, "Decrease"), rule("memory", "LessThan", 50, "Decrease")]


@pytest.mark.parametrize(("cpu", "memory", "want"), [(76, 50, 5), (50, 76, 5), (25, 51, 4), (29, 49, 3)])
def test_best_practices_cpu_and_memory(cpu, memory, want):
    """BEST_URL: "If CPU is 76% and Memory is 50%, autoscale scales out. If CPU is 50% and Memory is 76%,
    autoscale scales out. On the other hand, if CPU is 25% and Memory is 51%, autoscale doesn't scale in.
    To scale in, CPU must be 29% and Memory 49%." """
    r = decide(request(4, FOUR_RULES, {"cpu": series(cpu), "memory": series(memory)}))
    assert r["desired_replicas"] == want


def test_or_out_one_scale_out_rule_of_two_fires():
    """SETTINGS_URL: "If more than one scale-out rule is triggered, autoscale scales to the
    highest specified capacity" — one firing is enough."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("queue", "GreaterThan", 100, "Increase")]
    r = decide(request(3, rules, {"cpu": series(90), "queue": series(5)}))
    assert r["desired_replicas"] == 4
    assert [m["triggered"] for m in r["metrics"]] == [True, False]


def test_and_in_one_scale_in_rule_of_two_fires():
    """SETTINGS_URL: "Autoscale only scales in if all the scale-in rules are triggered." """
    rules = [rule("cpu", "LessThan", 30, "Decrease"), rule("queue", "LessThan", 10, "Decrease")]
    r = decide(request(4, rules, {"cpu": series(10), "queue": series(50)}))
    assert r["desired_replicas"] == 4
    assert [m["triggered"] for m in r["metrics"]] == [True, False]
    r = decide(request(4, rules, {"cpu": series(10), "queue": series(5)}))
    assert r["desired_replicas"] == 3


def test_highest_scale_out_and_smallest_scale_in():
    """SETTINGS_URL: "Rule 1 specifies a scale-out by three instances, and rule 2 specifies a scale-out by
    five. If both rules are triggered, autoscale scales out by five instances." / "one that decreases
    capacity by 50% and one that decreases capacity by three instances. If the first rule results in five
    instances and the second rule results in seven, autoscale scales in to seven instances." """
    out = [rule("cpu", "GreaterThan", 80, "Increase", 3), rule("memory", "GreaterThan", 80, "Increase", 5)]
    r = decide(request(10, out, {"cpu": series(90), "memory": series(90)}, max_replicas=30))
    assert r["desired_replicas"] == 15
    inn = [rule("cpu", "GreaterThan", 80, "Increase"),
           rule("cpu", "LessThan", 30, "Decrease", 50, type="PercentChangeCount"),
           rule("memory", "LessThan", 30, "Decrease", 3)]
    r = decide(request(10, inn, {"cpu": series(20), "memory": series(20)}, max_replicas=30))
    assert [r["metrics"][1]["replicas"], r["metrics"][2]["replicas"], r["desired_replicas"]] == [5, 7, 7]


def test_scale_out_wins_over_scale_in():
    """SETTINGS_URL: "If no scale-out rules are triggered, autoscale evaluates the scale-in rules" — a
    firing scale-out rule means the scale-in rules are not acted on."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("queue", "LessThan", 10, "Decrease")]
    r = decide(request(4, rules, {"cpu": series(90), "queue": series(0)}))
    assert r["desired_replicas"] == 5


def test_scale_out_rule_decides_even_when_all_scale_in_rules_fire_on_another_metric():
    """settings: "If no scale-out rules are triggered, autoscale evaluates the scale-in
    rules ... Autoscale only scales in if all the scale-in rules are triggered."
    (SETTINGS_URL); bp: "If CPU > 90%, scale out by 1 / If Memory > 90%, scale out by 1 /
    If CPU < 45%, scale in by 1 — the memory usage might be over 90% while the CPU usage
    is under 45%" (BEST_URL). Memory 95 % with CPU 40 %: the scale-out wins."""
    rules = [rule("cpu", "GreaterThan", 90, "Increase"), rule("mem", "GreaterThan", 90, "Increase"),
             rule("cpu", "LessThan", 45, "Decrease")]
    r = decide(request(3, rules, {"cpu": series(40), "mem": series(95)}))
    assert r["desired_replicas"] == 4
    assert [m["triggered"] for m in r["metrics"]] == [False, True, True]
