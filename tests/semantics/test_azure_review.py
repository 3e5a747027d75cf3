"""Review of the ``azure`` semantics against Azure Monitor autoscale's documentation.

Each test cites the Learn page and quotes the sentence it checks. The three
cooldown tests were a divergence the review found, now fixed (a rule's own short
cooldown was re-read from the event log as the 300 s fallback after a move into
[min, max]); the others pin documented behaviour that the existing suites
(test_azure_documented/_audit/_stages/_invariants, conformance cases) do not
already cover.

Decisions are chained through the protocol itself (each response's ``state``
is the next request's ``state``), as a controller would.
"""
from __future__ import annotations

import pytest

from scalebridge import decide
from tests.semantics.test_azure_documented import NOW, request, rule, series

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"
MULTI_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile"
GS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started"
PRED_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-predictive"

# E. Europe Standard Time (CLDR: Europe/Chisinau) is UTC+2 in January.
SAT_0000_EET = 1768600800.0   # Saturday 2026-01-17 00:00 EET (22:00 UTC Friday)
HOUR = 3600.0

# A CPU pair with a 1-minute scale-in cooldown (PT1M: the REST minimum, used by the
# flapping page's own log record: "Cooldown":"PT1M").
PT1M_RULES = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=300),
              rule("cpu", "LessThan", 30, "Decrease", cooldown=60)]
RANGE = dict(min_replicas=2, max_replicas=6, default_replicas=2)


def _chain(current: int, now: float, cpu, state, rules=PT1M_RULES, **policy):
    pol = dict(RANGE)
    pol.update(policy)
    return decide(request(current, rules, {"cpu": series(cpu, now=now)}, now=now, state=state, **pol))


# ----------------------------------------------------------------------------- cooldown


def test_pt1m_scale_in_cooldown_lets_the_next_scale_in_run_after_a_minute():
    """settings: "The cooldown that applies is the one on the rule that most recently
    fired, not a separate cooldown for each direction." (SETTINGS_URL, "How does
    autoscale evaluate cooldown?"). A scale-in with a 1-minute cooldown at t0 holds
    nothing at t0 + 180 s."""
    r1 = _chain(5, NOW, 20, None)
    assert r1["desired_replicas"] == 4
    r2 = _chain(4, NOW + 120, 50, r1["state"])          # nothing fires
    assert r2["desired_replicas"] == 4
    r3 = _chain(4, NOW + 180, 20, r2["state"])
    assert (r3["desired_replicas"], r3["reason"]) == (3, "DesiredWithinRange")


def test_bounds_reset_does_not_stretch_a_shorter_rule_cooldown():
    """settings: "The cooldown that applies is the one on the rule that most recently
    fired" (SETTINGS_URL); bp: "if you manually set the scale to eight instances, the
    autoscale engine scales it back to six instances on its next run" (BEST_URL);
    protocol: "Azure cooldowns count only `cause: rule` events".

    A scale-in (cooldown PT1M) at t0; the count is set to 8 by hand and reset to the
    maximum 6 at t0 + 120 s (a boundary move, no rule); at t0 + 180 s the scale-in
    rule fires again. The rule's minute ran out at t0 + 60 s, and the reset is no
    rule action, so the scale-in runs (6 -> 5). scalebridge answers 6,
    ``CooldownActive`` (held until t0 + 300 s)."""
    r1 = _chain(5, NOW, 20, None)
    assert (r1["desired_replicas"], r1["state"]["last_scale"]["cooldown_seconds"]) == (4, 60.0)
    r2 = _chain(8, NOW + 120, 50, r1["state"])          # manual 8 -> maximum 6
    assert (r2["desired_replicas"], r2["reason"]) == (6, "TooManyReplicas")
    r3 = _chain(6, NOW + 180, 20, r2["state"])
    assert (r3["desired_replicas"], r3["reason"]) == (5, "DesiredWithinRange")


def test_bounds_reset_during_a_short_cooldown_does_not_extend_it():
    """settings: "The cooldown that applies is the one on the rule that most recently
    fired" (SETTINGS_URL). Same as above, but the reset happens while the PT1M
    cooldown is still running (t0 + 30 s): the rule action is kept as
    ``azure.last_rule_scale``, then dropped when it expires, after which the rule
    event in ``scale_down_events`` is read back with the 300 s fallback: at
    t0 + 90 s scalebridge holds (``CooldownActive``) instead of scaling in."""
    r1 = _chain(5, NOW, 20, None)
    r2 = _chain(8, NOW + 30, 50, r1["state"])
    assert r2["desired_replicas"] == 6
    assert r2["state"]["azure.last_rule_scale"]["cooldown_seconds"] == 60.0
    r3 = _chain(6, NOW + 90, 20, r2["state"])
    assert (r3["desired_replicas"], r3["reason"]) == (5, "DesiredWithinRange")


def test_profile_minimum_after_a_short_cooldown_does_not_hold_the_next_rule():
    """multi: "If the instance count is less than 3, autoscale scales to the new minimum
    of three. Autoscale continues to use this profile and scales based on CPU%"
    (MULTI_URL); settings: "The cooldown that applies is the one on the rule that most
    recently fired" (SETTINGS_URL).

    Default profile [2, 10]; a fixed-date profile [5, 10] from t0 + 30 s. A scale-in
    (PT1M) 5 -> 4 at t0; at t0 + 60 s the fixed-date profile raises the count to its
    minimum 5 (no rule); at t0 + 120 s its scale-out rule fires: the rule's minute is
    long over, so 5 -> 6. scalebridge holds it (``CooldownActive``) until t0 + 300 s."""
    profiles = [{"name": "default", "capacity": {"minimum": 2, "maximum": 10, "default": 2},
                 "rules": PT1M_RULES},
                {"name": "event", "capacity": {"minimum": 5, "maximum": 10, "default": 5},
                 "rules": PT1M_RULES,
                 "fixed_date": {"start": NOW + 30, "end": NOW + 6 * HOUR, "time_zone": "UTC"}}]

    def step(current, now, cpu, state):
        req = {"semantics": "azure", "now": now, "current_replicas": current, "policy": {"profiles": profiles},
               "observations": {"metrics": {"cpu": series(cpu, now=now)}}}
        if state is not None:
            req["state"] = state
        return decide(req)

    r1 = step(5, NOW, 20, None)
    assert (r1["desired_replicas"], r1["profile"]) == (4, "default")
    r2 = step(4, NOW + 60, 50, r1["state"])
    assert (r2["desired_replicas"], r2["profile"], r2["reason"]) == (5, "event", "TooFewReplicas")
    r3 = step(5, NOW + 120, 90, r2["state"])
    assert (r3["desired_replicas"], r3["reason"]) == (6, "DesiredWithinRange")


# ----------------------------------------------------------------------------- profiles


def _weekend_setting(now: float, current: int) -> dict:
    ee = "E. Europe Standard Time"
    profiles = [
        {"name": "Weekend profile", "capacity": {"minimum": 1, "maximum": 2, "default": 1}, "rules": [],
         "recurrence": {"frequency": "Week", "time_zone": ee, "days": ["Saturday", "Sunday"],
                        "hours": [6], "minutes": [0]}},
        {"name": '{"name":"Auto created default scale condition","for":"Weekend profile"}',
         "capacity": {"minimum": 4, "maximum": 10, "default": 4}, "rules": [],
         "recurrence": {"frequency": "Week", "time_zone": ee, "days": ["Saturday", "Sunday"],
                        "hours": [19], "minutes": [0]}},
    ]
    return decide({"semantics": "azure", "now": now, "current_replicas": current,
                   "policy": {"profiles": profiles}, "observations": {}})


@pytest.mark.parametrize("hours_after_saturday_midnight, profile", [
    (5.99, "default"),      # Saturday 05:59 EET: the copy that started Sunday 19:00
    (6.0, "Weekend profile"),
    (18.99, "Weekend profile"),
    (19.0, "default"),
    (24 + 3, "default"),    # Sunday 03:00: the copy that started Saturday 19:00
    (24 + 7, "Weekend profile"),
    (48 + 10, "default"),   # Monday 10:00
])
def test_settings_page_weekend_recurrence_06_to_19(hours_after_saturday_midnight, profile):
    """settings: "The partial schema example here shows a recurring profile. It starts
    at 06:00 and ends at 19:00 on Saturdays and Sundays. The default profile has been
    modified to start at 19:00 on Saturdays and Sundays." and "The end of date and
    time for a recurring profile is set by the start time of the following profile."
    (SETTINGS_URL). Weekend capacity [1, 2], default [4, 10]; 3 instances."""
    r = _weekend_setting(SAT_0000_EET + hours_after_saturday_midnight * HOUR, 3)
    if profile == "default":
        assert r["profile"].startswith('{"name":"Auto created default scale condition"')
        assert r["desired_replicas"] == 4
    else:
        assert r["profile"] == "Weekend profile"
        assert r["desired_replicas"] == 2


def test_get_started_scale_to_a_specific_instance_count_on_sunday():
    """gs: "Set your resource to scale to a single instance on a Sunday. ... Select Scale
    to a specific instance count. ... Enter 1 in the Instance count field. ... Select
    Repeat specific days. ... Select Sunday." and "Outside of this time range, the
    default scale condition applies." (GS_URL). A rule-less profile with capacity 1/1/1
    sets 1 instance; the default copy from 23:00 brings back its own range."""
    profiles = [
        {"name": "default", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 20, "Decrease")]},
        {"name": "Sunday", "capacity": {"minimum": 1, "maximum": 1, "default": 1}, "rules": [],
         "recurrence": {"frequency": "Week", "time_zone": "UTC", "days": ["Sunday"], "hours": [6], "minutes": [0]}},
        {"name": '{"name":"Auto created default scale condition","for":"Sunday"}',
         "capacity": {"minimum": 1, "maximum": 3, "default": 1},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 20, "Decrease")],
         "recurrence": {"frequency": "Week", "time_zone": "UTC", "days": ["Sunday"], "hours": [23], "minutes": [0]}},
    ]
    sunday_noon = 1768737600.0       # Sunday 2026-01-18 12:00 UTC
    cpu = {"cpu": series(50, now=sunday_noon)}
    r = decide({"semantics": "azure", "now": sunday_noon, "current_replicas": 3,
                "policy": {"profiles": profiles}, "observations": {"metrics": cpu}})
    assert (r["profile"], r["desired_replicas"]) == ("Sunday", 1)
    later = sunday_noon + 11.5 * HOUR   # Sunday 23:30
    r = decide({"semantics": "azure", "now": later, "current_replicas": 1,
                "policy": {"profiles": profiles},
                "observations": {"metrics": {"cpu": series(90, now=later)}}})
    assert r["profile"].startswith('{"name":"Auto created default scale condition"')
    assert r["desired_replicas"] == 2


# ----------------------------------------------------------------------------- capacity


@pytest.mark.parametrize("cpu", [95, 5])
def test_minimum_equal_to_maximum_no_scale_action(cpu):
    """bp: "If you have a setting that has minimum=2, maximum=2, and the current instance
    count is 2, no scale action can occur." (BEST_URL)"""
    r = decide(request(2, [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 20, "Decrease")],
                       {"cpu": series(cpu)}, min_replicas=2, max_replicas=2, default_replicas=2))
    assert r["desired_replicas"] == 2
    assert r["state"].get("last_scale") is None


def test_predictive_scale_out_adheres_to_the_maximum():
    """pred: "Predictive autoscale adheres to the scaling boundaries you've set for your
    virtual machine scale set. When the system predicts that the percentage CPU load of
    your virtual machine scale set will cross your scale-out boundary, new instances are
    added according to your specifications." (PRED_URL). At the maximum, a forecast above
    the threshold adds nothing; one below the maximum adds the rule's count."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", value=2), rule("cpu", "LessThan", 30, "Decrease")]
    obs = {"cpu": {**series(50), "forecast": [[NOW + 600, 85]]}}
    pred = {"mode": "Enabled", "look_ahead_seconds": 1800}
    at_max = decide(request(4, rules, obs, min_replicas=1, max_replicas=4, predictive=pred))
    assert at_max["desired_replicas"] == 4
    below = decide(request(3, rules, obs, min_replicas=1, max_replicas=4, predictive=pred))
    assert below["desired_replicas"] == 4
    free = decide(request(2, rules, obs, min_replicas=1, max_replicas=4, predictive=pred))
    assert free["desired_replicas"] == 4 and free["metrics"][0]["forecast_triggered"] is True


# ----------------------------------------------------------------------------- rules


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
