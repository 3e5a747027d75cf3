"""The azure semantics' cooldowns: each rule waits its own cooldown since the most recent
rule action, across moves into [minimum, maximum] and profile changes, with 5 minutes
for a rule that names none.

Sources: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings (cooldown),
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started,
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    AZURE_NOW as NOW, azure_request as request, azure_rule as rule, azure_series as series, AzureRun as Run)

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
BEST_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices"
MULTI_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile"


# the cooldown section of SETTINGS_URL (current revision): "After any scale action, autoscale evaluates
# each candidate rule by using that rule's configured cooldown. A rule becomes eligible to initiate a
# scale action when its own cooldown has elapsed since the most recent scale action. Cooldown isn't
# applied globally based on the rule that performed the most recent scale action." Its timeline:
# scale-out cooldown 60 minutes, scale-in 40; a scale-out at 10:00; the scale-in rule is deferred at
# 10:30 and eligible at 10:40; the scale-out rule is not eligible before 11:00.
TIMELINE_RULES = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=3600),
                  rule("cpu", "LessThan", 30, "Decrease", cooldown=2400)]
AFTER_TEN = {"last_scale": {"time": NOW, "direction": "Increase", "cause": "rule", "cooldown_seconds": 3600}}


def _probe(minutes: float, cpu: float) -> dict:
    t = NOW + 60 * minutes
    return decide(request(5, TIMELINE_RULES, {"cpu": series(cpu, t)}, now=t, state=AFTER_TEN))


def test_the_pages_timeline_each_rule_waits_its_own_cooldown():
    r = _probe(30, 10)                      # 10:30: the scale-in rule fires, its 40 minutes not yet over
    assert (r["desired_replicas"], r["reason"]) == (5, "CooldownActive")
    r = _probe(40, 10)                      # 10:40: eligible (equality is eligible)
    assert (r["desired_replicas"], r["reason"]) == (4, "DesiredWithinRange")
    r = _probe(50, 90)                      # 10:50: the scale-out rule fires, its 60 minutes run to 11:00
    assert (r["desired_replicas"], r["reason"]) == (5, "CooldownActive")
    r = _probe(60, 90)                      # 11:00: eligible
    assert (r["desired_replicas"], r["reason"]) == (6, "DesiredWithinRange")


def test_a_carried_out_scale_in_restarts_every_rules_cooldown():
    """"since the most recent scale action": after the 10:40 scale-in, the scale-out rule's
    60 minutes count from 10:40, not from 10:00."""
    run = Run({"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": TIMELINE_RULES}, 4)
    assert run.step(NOW, {"cpu": series(90, NOW)}).desired == 5                      # 10:00
    assert run.step(NOW + 1800, {"cpu": series(10, NOW + 1800)}).reason == "CooldownActive"   # 10:30
    assert run.step(NOW + 2400, {"cpu": series(10, NOW + 2400)}).desired == 4        # 10:40
    for minutes in (50, 60, 99):
        t = NOW + 60 * minutes
        d = run.step(t, {"cpu": series(90, t)})
        assert (d.desired, d.reason) == (4, "CooldownActive"), minutes
    t = NOW + 100 * 60                                                              # 11:40
    assert run.step(t, {"cpu": series(90, t)}).desired == 5


def test_of_two_fired_scale_out_rules_only_the_eligible_one_acts():
    """Two scale-out rules, 5 and 20 minutes, 10 minutes after the last action, both fired:
    only the 5-minute rule acts ("Another rule with a shorter cool-down period can become
    eligible sooner", https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started)."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", value=1, cooldown=300),
             rule("queue", "GreaterThan", 100, "Increase", value=3, cooldown=1200)]
    state = {"last_scale": {"time": NOW - 600, "direction": "Increase", "cause": "rule", "cooldown_seconds": 300}}
    r = decide(request(4, rules, {"cpu": series(90), "queue": series(500)}, state=state))
    assert (r["desired_replicas"], r["reason"]) == (5, "DesiredWithinRange")
    assert [m["triggered"] for m in r["metrics"]] == [True, True]
    assert r["state"]["last_scale"]["cooldown_seconds"] == 300     # the rule that acted
    later = {"last_scale": {**state["last_scale"], "time": NOW - 1200}}
    assert decide(request(4, rules, {"cpu": series(90), "queue": series(500)}, state=later))["desired_replicas"] == 7


def test_a_scale_out_rule_in_its_cooldown_keeps_scale_in_from_being_considered():
    """"A rule in its cooldown does not count as triggered": a fired, cooling scale-out rule
    leaves no eligible scale-out, and the size stays (not a scale-in in its place)."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=3600),
             rule("mem", "LessThan", 30, "Decrease", cooldown=60)]
    state = {"last_scale": {"time": NOW - 600, "direction": "Increase", "cause": "rule"}}
    r = decide(request(4, rules, {"cpu": series(90), "mem": series(10)}, state=state))
    assert (r["desired_replicas"], r["reason"]) == (4, "CooldownActive")


def test_get_started_cooldown_holds_both_directions():
    """https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started (2024): "if the
    cooldown is set to 10 minutes and Autoscale has just scaled-in, Autoscale won't attempt to scale again
    for another 10 minutes in either direction." """
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=600),
             rule("cpu", "LessThan", 30, "Decrease", cooldown=600)]
    state = {"last_scale": {"time": NOW - 300, "direction": "Decrease", "cause": "rule", "cooldown_seconds": 600}}
    for cpu in (90, 10):
        r = decide(request(4, rules, {"cpu": series(cpu)}, state=state))
        assert (r["desired_replicas"], r["reason"]) == (4, "CooldownActive")


def test_rule_cooldown_survives_a_boundary_move():
    """Protocol: "Azure cooldowns count only cause: rule events"; a move into a new profile's range
    (cause boundary) neither starts nor ends a rule's cooldown (A-GAP-7). The boundary move overwrites
    ``last_scale``; the rule action is kept as ``azure.last_rule_scale``."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=3600)]
    policy = {"profiles": [
        {"name": "night", "capacity": {"minimum": 1, "maximum": 10, "default": 1},
         "recurrence": {"days": ["Wednesday"], "hours": [0]}, "rules": rules},
        {"name": "day", "capacity": {"minimum": 6, "maximum": 10, "default": 6},
         "recurrence": {"days": ["Wednesday"], "hours": [10], "minutes": [5]}, "rules": rules}]}
    run = Run(policy, 3)
    d = run.step(NOW, {"cpu": series(90)})
    assert (d.desired, d.profile, d.cause) == (4, "night", "rule")
    t = NOW + 600                                          # 10:10, the day profile: minimum 6
    d = run.step(t, {"cpu": series(90, t)})
    assert (d.desired, d.reason, d.cause, d.profile) == (6, "TooFewReplicas", "boundary", "day")
    out = run.d.state.to_protocol()
    assert out["last_scale"]["cause"] == "boundary"
    assert out["azure.last_rule_scale"]["cooldown_seconds"] == 3600
    t = NOW + 1200
    d = run.step(t, {"cpu": series(90, t)})
    assert (d.desired, d.reason) == (6, "CooldownActive")
    t = NOW + 3600
    d = run.step(t, {"cpu": series(90, t)})
    assert d.desired == 7
    assert "azure.last_rule_scale" not in run.d.state.to_protocol()


def test_rule_event_without_known_cooldown_uses_the_default():
    """A hand-written state whose rule event has no recorded cooldown holds for the default five
    minutes (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started: "The
    default cool-down period is five minutes")."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase")]
    state = {"scale_up_events": [{"time": NOW - 200, "change": 1, "cause": "rule"},
                                 {"time": NOW - 100, "change": 2, "cause": "boundary"}],
             "last_scale": {"time": NOW - 100, "direction": "Increase", "cause": "boundary"}}
    r = decide(request(4, rules, {"cpu": series(90)}, state=state))
    assert r["reason"] == "CooldownActive"
    state["scale_up_events"][0]["time"] = NOW - 300
    assert decide(request(4, rules, {"cpu": series(90)}, state=state))["desired_replicas"] == 5


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
    (MULTI_URL); settings: "A rule becomes eligible to initiate a scale action when its own
    cooldown has elapsed since the most recent scale action" (SETTINGS_URL).

    Default profile [2, 10]; a fixed-date profile [5, 10] from t0 + 30 s. A scale-in
    (PT1M) 5 -> 4 at t0; at t0 + 60 s the fixed-date profile raises the count to its
    minimum 5 (no rule); at t0 + 120 s its scale-out rule fires, but waits its own five
    minutes since the last rule action (t0): held to t0 + 300 s, not restarted by the move
    into the profile's range."""
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
    r3 = step(5, NOW + 120, 90, r2["state"])       # the scale-out rule waits its own 300 s from t0
    assert (r3["desired_replicas"], r3["reason"]) == (5, "CooldownActive")
    r4 = step(5, NOW + 300, 90, r3["state"])       # from the rule action at t0: the move to 5 started none
    assert (r4["desired_replicas"], r4["reason"]) == (6, "DesiredWithinRange")
