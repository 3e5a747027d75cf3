"""Audit of the ``azure`` semantics against Azure Monitor autoscale's documentation.

Each test quotes the page that makes the port's earlier behaviour a divergence.

Sources:

- settings: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings
- bp: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices
- rest: https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update
"""
from __future__ import annotations

import pytest

from scalebridge import decide
from tests.semantics.test_azure_documented import NOW, request, rule, series

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"
REST_URL = "https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update"

# CPU and memory scale-out rules, a CPU scale-in rule (the bp page's shape); memory cannot be read.
RULES = [rule("cpu", "GreaterThan", 70, "Increase"),
         rule("mem", "GreaterThan", 70, "Increase"),
         rule("cpu", "LessThan", 20, "Decrease")]


# ----------------------------------------------------------------------------- default capacity


def test_default_capacity_applies_when_a_readable_scale_out_rule_fires_below_it():
    """SETTINGS_URL, capacity.default: "If there's a problem reading the resource metric, and the current
    capacity is below the default, autoscale scales out to the default. This action ensures the
    availability of the resource." BEST_URL ("Always select a safe default instance count") repeats it.

    The memory metric cannot be read and the current capacity (1) is below the default (5): autoscale
    scales out to the default. The port used to take only the CPU scale-out rule's count (2), ignoring the
    default because *another* rule fired — so more load gave fewer instances than less load (at 50 % CPU,
    where no rule fires, the same request already went to 5)."""
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


# ----------------------------------------------------------------------------- request validation (shared files)


@pytest.mark.parametrize("zone", ["Türkiye Standard Time", "Kamchatka Standard Time"])
def test_rest_reference_time_zones_are_accepted(zone):
    """REST_URL, TimeWindow.timeZone / RecurrentSchedule.timeZone: "Some examples of valid time zones are:
    ... E. Europe Standard Time, South Africa Standard Time, FLE Standard Time, Türkiye Standard Time,
    Israel Standard Time, ... Fiji Standard Time, Kamchatka Standard Time, Tonga Standard Time ..." Both
    names were rejected as unknown (exit 2); timezones.WINDOWS_TO_IANA now maps them."""
    policy = {"profiles": [
        {"name": "default", "capacity": {"minimum": 1, "maximum": 10, "default": 2}},
        {"name": "event", "capacity": {"minimum": 4, "maximum": 10, "default": 4},
         "fixed_date": {"start": "2026-01-14T00:00:00", "end": "2026-01-14T23:59:00", "time_zone": zone}}]}
    r = decide({"semantics": "azure", "now": NOW, "current_replicas": 2, "policy": policy})
    assert (r["desired_replicas"], r["profile"]) == (4, "event")


def test_scale_action_value_defaults_to_one():
    """REST_URL, ScaleAction.value: "the number of instances that are involved in the scaling action. This
    value must be 1 or greater. The default value is 1." (not required). A ChangeCount action without
    `value` was rejected ("a ChangeCount action needs `value`"); policy.Rule._action now defaults it to 1."""
    r = rule("cpu", "GreaterThan", 70, "Increase")
    del r["action"]["value"]
    out = decide(request(2, [r], {"cpu": series(90)}))
    assert out["desired_replicas"] == 3
