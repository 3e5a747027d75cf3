"""The azure semantics' default capacity: used when no metric can be read, with what a
readable scale-out rule and a cooldown still do, clamped to the maximum, and not
applied on a profile's activation.

Sources: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings (capacity.default),
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    AZURE_NOW as NOW, azure_request as request, azure_rule as rule, azure_series as series)

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"


def test_default_capacity_fallback_reports_error_and_starts_no_cooldown():
    """SETTINGS_URL: "If there's a problem reading the resource metric, and the current capacity is below
    the default, autoscale scales out to the default." (A6; cause ``default``, no cooldown: A-GAP-7.)"""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(1, rules, {}, default_replicas=3))
    assert (r["desired_replicas"], r["reason"]) == (3, "ProfileDefault")
    assert "cannot be read" in r["error"] and "default capacity 3" in r["error"]
    assert r["metrics"][0]["error"] == "metric 'cpu' cannot be read: no observation"
    assert r["state"]["last_scale"]["cause"] == "default"
    assert "cooldown_seconds" not in r["state"]["last_scale"]


def test_unreadable_metric_does_not_stop_a_readable_scale_out():
    """A-GAP-8: one rule's metric cannot be read, another scale-out rule fires → scale out; below the
    default the default capacity still applies (SETTINGS_URL: "If there's a problem reading the resource
    metric, and the current capacity is below the default, autoscale scales out to the default"), so more
    load never gives fewer instances than the fallback."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("queue", "GreaterThan", 100, "Increase"),
             rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(5, rules, {"cpu": series(90)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (6, "DesiredWithinRange")
    r = decide(request(2, rules, {"cpu": series(90)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")
    r = decide(request(2, rules, {"cpu": series(50)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")


def test_no_rules_no_scaling_and_no_fallback():
    """Protocol defaults: azure with no rules does not scale, and has no metric to fail to read."""
    r = decide(request(4, [], {}, default_replicas=6))
    assert (r["desired_replicas"], r["reason"], r["error"]) == (4, "DesiredWithinRange", None)


# CPU and memory scale-out rules, a CPU scale-in rule (the bp page's shape); memory cannot be read.
RULES = [rule("cpu", "GreaterThan", 70, "Increase"),
         rule("mem", "GreaterThan", 70, "Increase"),
         rule("cpu", "LessThan", 20, "Decrease")]


def test_default_capacity_applies_when_a_readable_scale_out_rule_fires_below_it():
    """SETTINGS_URL, capacity.default: "If there's a problem reading the resource metric, and the current
    capacity is below the default, autoscale scales out to the default. This action ensures the
    availability of the resource." BEST_URL ("Always select a safe default instance count") repeats it.

    The memory metric cannot be read and the current capacity (1) is below the default (5): autoscale
    scales out to the default, not to the CPU scale-out rule's count (2): another rule firing does not set
    the default aside, so more load never gives fewer instances than less load (at 50 % CPU, where no
    rule fires, the same request goes to 5)."""
    r = decide(request(1, RULES, {"cpu": series(90)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")
    assert "mem" in r["error"]
    # the same request with no rule firing: the documented fallback (unchanged)
    r = decide(request(1, RULES, {"cpu": series(50)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")


def test_default_capacity_during_a_cooldown_when_a_scale_out_rule_fires():
    """SETTINGS_URL (capacity.default, quoted above). The fallback to the default ignores rule cooldowns
    (docs/semantics/azure.md, A-GAP-7): with no rule firing it already moved 1 → 5 during a cooldown. A
    scale-out rule firing as well (CPU 90 %) must not leave the count at 1: the cooldown holds the rule's
    own action, not the default capacity."""
    state = {"last_scale": {"time": NOW - 60, "direction": "Increase", "cause": "rule", "cooldown_seconds": 600}}
    r = decide(request(1, RULES, {"cpu": series(90)}, default_replicas=5, state=state))
    assert (r["desired_replicas"], r["reason"]) == (5, "ProfileDefault")
    assert r["state"]["last_scale"]["cause"] == "default"
    # the rule cooldown is not erased by the default move: a readable scale-out is still held next minute
    r2 = decide({**request(5, [RULES[0], RULES[2]], {"cpu": series(90, NOW + 60)}, default_replicas=5,
                           state=r["state"]), "now": NOW + 60})
    assert (r2["desired_replicas"], r2["reason"]) == (5, "CooldownActive")


def test_scale_out_above_the_default_is_a_rule_action():
    """SETTINGS_URL: "If more than one scale-out rule is triggered, autoscale scales to the highest
    specified capacity to ensure service availability." When the fired scale-out rule asks for more than
    the default, its count stands and it is a rule action (its cooldown starts)."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", value=3, cooldown=600)] + RULES[1:]
    r = decide(request(4, rules, {"cpu": series(90)}, default_replicas=5))
    assert (r["desired_replicas"], r["reason"]) == (7, "DesiredWithinRange")
    assert r["state"]["last_scale"]["cause"] == "rule"
    assert r["state"]["last_scale"]["cooldown_seconds"] == 600


def test_default_capacity_with_a_scale_out_rule_is_clamped_to_maximum():
    """SETTINGS_URL: capacity.maximum "ensures that autoscale doesn't scale your resource above this
    number"; the default floor is then clamped like the documented fallback."""
    r = decide(request(1, RULES, {"cpu": series(90)}, default_replicas=5, max_replicas=4))
    assert r["desired_replicas"] == 4


def test_default_capacity_at_or_below_current_leaves_the_scale_out_alone():
    """SETTINGS_URL: "If the current capacity is already higher than the default capacity, autoscale doesn't
    scale in." — the default plays no part; the fired scale-out rule decides (3 → 4)."""
    r = decide(request(3, RULES, {"cpu": series(90)}, default_replicas=2))
    assert (r["desired_replicas"], r["reason"], r["error"]) == (4, "DesiredWithinRange", None)
