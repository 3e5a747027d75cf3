"""The neutral ``scalebridge`` semantics' threshold rules: any scale-out rule, all
scale-in rules, cooldowns (from completed_at, defaults, clamped actions, rate-limited
actions), flapping prevention, the interplay of rules and metrics, and a service's
allowed next value.

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces. Azure: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings."""

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    neutral_in_rule as in_rule, neutral_out_rule as out_rule, neutral_request as neutral,
    neutral_rules_request as rules_request, NOW, series_points as series)


def test_rules_any_out_all_in_with_metrics_beside():
    rules = [
        {"metric": "cpu_percent", "operator": "GreaterThan", "threshold": 70, "time_window_seconds": 300,
         "action": {"direction": "Increase", "type": "ChangeCount", "value": 2, "cooldown_seconds": 300}},
        {"metric": "queue", "operator": "GreaterThan", "threshold": 100, "time_window_seconds": 300,
         "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 300}},
    ]
    req = neutral(4, "500m", policy={"rules": rules})
    req["observations"]["metrics"]["cpu_percent"] = {"series": series([80, 82, 85, 81, 79])}
    req["observations"]["metrics"]["queue"] = {"series": series([10, 12, 8, 9, 11])}
    r = decide(req)
    assert r["desired_replicas"] == 6                  # one scale-out rule of two fires: OR-out
    assert [m.get("triggered") for m in r["metrics"][1:]] == [True, False]
    assert r["state"]["last_scale"]["cause"] == "rule" and r["state"]["last_scale"]["cooldown_seconds"] == 300


def test_one_of_two_scale_in_rules_does_not_scale_in():
    rules = [{"metric": m, "operator": "LessThan", "threshold": 30, "time_window_seconds": 300,
              "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}} for m in ("a", "b")]
    req = {"semantics": "scalebridge", "now": NOW, "current_replicas": 5,
           "policy": {"min_replicas": 1, "max_replicas": 10, "rules": rules,
                      "behavior": {"scale_down": {"stabilization_window_seconds": 0}}},
           "observations": {"metrics": {"a": {"series": series([10] * 5)}, "b": {"series": series([50] * 5)}}},
           "state": {"recommendations": []}}
    assert decide(req)["desired_replicas"] == 5        # AND-in: b does not fire
    req["observations"]["metrics"]["b"] = {"series": series([20] * 5)}
    assert decide(req)["desired_replicas"] == 4


def test_rule_cooldown_holds_rule_actions_only():
    rules = [{"metric": "q", "operator": "GreaterThan", "threshold": 10, "time_window_seconds": 120,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 3, "cooldown_seconds": 600}}]
    state = {"recommendations": [], "last_scale": {"time": NOW - 120, "direction": "Increase", "cause": "rule",
                                                   "cooldown_seconds": 600}}
    req = neutral(4, "500m", policy={"rules": rules}, state=state)
    req["observations"]["metrics"]["q"] = {"series": series([50, 50])}
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["reason"] == "CooldownActive"
    req["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "900m" for i in range(4)}
    assert decide(req)["desired_replicas"] == 8         # a metric is not held by a rule's cooldown


def _firing(state=None, settings=None):
    rules = [{"metric": "q", "operator": "GreaterThan", "threshold": 10, "time_window_seconds": 120,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 3}}]
    req = neutral(4, "500m", policy={"rules": rules}, state=state, settings=settings)
    req["observations"]["metrics"]["q"] = {"series": series([50, 50])}
    return req


def test_cooldown_counts_from_completed_at():
    # the protocol: "`last_scale.completed_at` is when that scaling activity finished (cooldowns count from it)"
    st = {"recommendations": [], "last_scale": {"time": NOW - 400, "completed_at": NOW - 200, "direction": "Increase",
                                                "cause": "rule", "cooldown_seconds": 300}}
    r = decide(_firing(st))
    assert r["desired_replicas"] == 4 and r["reason"] == "CooldownActive"


def test_last_scale_cooldown_defaults():
    # the protocol: "`last_scale.cooldown_seconds` is the cooldown that activity imposes (default: its
    # rule's, else the settings' default)"; docs/semantics.md: "rule cooldown | 300 s"
    assert decide(_firing())["state"]["last_scale"]["cooldown_seconds"] == 300
    r = decide(_firing(settings={"default_cooldown_seconds": 100}))
    assert r["state"]["last_scale"]["cooldown_seconds"] == 100


def test_non_rule_event_does_not_hold_rules():
    # the protocol: "Azure cooldowns count only `cause: rule` events" (the neutral composes Azure's rules)
    st = {"recommendations": [], "last_scale": {"time": NOW - 10, "direction": "Increase", "cause": "metric",
                                                "cooldown_seconds": 300}}
    assert decide(_firing(st))["desired_replicas"] == 7


NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


@pytest.mark.parametrize("direction", ["out", "in"])
def test_rule_action_clamped_by_bounds_still_starts_its_cooldown(direction):
    # docs/semantics.md (pipeline, 2): "Azure-style rules with cooldowns"; neutral.py: "a rule-caused
    # action is held during the last rule action's cooldown"; the protocol (state): "a scale event at `now`
    # with its `cause` (`rule`, ...)", "Azure cooldowns count only `cause: rule` events".
    # The azure semantics records the same clamped move with cause "rule" and holds the next rule.
    if direction == "out":   # 4 -> asks 14, max 8
        rules, first, second, current = [out_rule(value=10), in_rule()], 80, 10, 4
        policy = {"max_replicas": 8, "behavior": NO_WINDOW}
    else:                    # 5 -> asks 0, min 2
        rules = [out_rule(threshold=90), in_rule(type="ExactCount", value=0)]
        first, second, current = 10, 95, 5
        policy = {"min_replicas": 2, "max_replicas": 10, "behavior": NO_WINDOW}
    r = decide(rules_request(current, rules, {"q": {"series": series([first, first])}}, policy))
    assert r["state"]["last_scale"]["cause"] == "rule"
    size = r["desired_replicas"]
    nxt = rules_request(size, rules, {"q": {"series": series([second, second], end=NOW + 60)}}, policy,
                        state=r["state"], now=NOW + 60)
    r2 = decide(nxt)             # the opposite rule fires a minute later: inside the 300 s cooldown
    assert r2["desired_replicas"] == size and r2["reason"] == "CooldownActive"


def test_rule_scale_out_beats_a_metric_asking_for_less():
    # docs/semantics.md: "several signals | ... | highest of metrics, rules, schedules, forecast"
    req = neutral(4, "100m", policy={"rules": [out_rule()], "behavior": NO_WINDOW})
    req["observations"]["metrics"]["q"] = {"series": series([80, 80])}
    r = decide(req)
    assert r["desired_replicas"] == 6 and r["reason"] == "DesiredWithinRange"
    assert r["state"]["last_scale"]["cause"] == "rule" and r["state"]["last_scale"]["cooldown_seconds"] == 300
    # the protocol (Response): "`metrics[i]` follows `policy.metrics[i]` for target metrics, then the rules in
    # force ... the raw proposal of that metric or rule before combining"
    assert [(m["name"], m["replicas"], m.get("triggered")) for m in r["metrics"]] == \
        [("cpu", 1, None), ("q", 6, True)]


def test_scale_in_rule_does_not_act_while_a_metric_holds():
    # highest wins: every scale-in rule fires (3), the metric holds at 4 (50% against 50%)
    req = neutral(4, "500m", policy={"rules": [in_rule()], "behavior": NO_WINDOW})
    req["observations"]["metrics"]["q"] = {"series": series([10, 10])}
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["metrics"][1]["triggered"] is True
    assert r["metrics"][1]["replicas"] == 3 and r["state"]["scale_down_events"] == []


def test_metric_scale_in_is_not_flapping_checked():
    # neutral.py: "a rule-caused scale-in that its own projection says would flap back out is
    # reduced or skipped" — only rule-caused: a metric's scale-in goes through
    rules = [out_rule(threshold=40), in_rule()]
    req = neutral(2, "100m", policy={"rules": rules, "behavior": NO_WINDOW})
    req["observations"]["metrics"]["q"] = {"series": series([25, 25])}
    r = decide(req)
    assert r["desired_replicas"] == 1 and r["state"]["last_scale"]["cause"] == "metric"


def test_flapping_estimate_uses_current_count_and_stabilization_holds_the_reduced_count():
    # the protocol: "`current_replicas` ... Per-instance division and flapping estimates use it"; Azure's
    # estimate v × current / n: at 1 → 25 × 4 / 1 = 100 > 70 flaps, at 2 → 50 does not.
    rules = [out_rule(threshold=70), in_rule(value=3)]
    obs = {"q": {"series": series([25, 25])}}
    r = decide(rules_request(4, rules, obs, {"behavior": NO_WINDOW}, ))
    assert r["desired_replicas"] == 2 and r["state"]["last_scale"]["cause"] == "rule"
    # with a 600 s window holding a 3 from 5 minutes ago: the rule's reduced count (2) is this
    # decision's unstabilized recommendation (the protocol: "this decision's unstabilized recommendation
    # appended to `recommendations`"), the window keeps 3
    r = decide(rules_request(4, rules, obs, state={"recommendations": [{"time": NOW - 300, "replicas": 3}]}))
    assert r["desired_replicas"] == 3 and r["reason"] == "ScaleDownStabilized"
    assert r["state"]["recommendations"][-1] == {"time": NOW, "replicas": 2}


def test_flapping_prevented_records_the_current_count():
    # docs/semantics.md ("rules-in-flap-out"): "with a >40% scale-out rule that would fire again, so the
    # scale-in is skipped"
    rules = [out_rule(threshold=40), in_rule()]
    r = decide(rules_request(2, rules, {"q": {"series": series([25, 25])}}, {"behavior": NO_WINDOW}))
    assert r["desired_replicas"] == 2 and r["reason"] == "FlappingPrevented"
    assert r["state"]["recommendations"][-1]["replicas"] == 2 and r["state"].get("last_scale") is None


def _cooldown_state(rule_cooldown=True):
    st = {"recommendations": [{"time": NOW - 100, "replicas": 8}]}
    if rule_cooldown:
        st["last_scale"] = {"time": NOW - 60, "direction": "Increase", "cause": "rule", "cooldown_seconds": 300}
    return st


def test_scale_in_rule_held_by_cooldown_or_by_the_window():
    # neutral.py: "a rule-caused action is held during the last rule action's cooldown"; docs/semantics.md
    # (3): "stabilization over recorded recommendations"
    obs = {"q": {"series": series([10, 10])}}
    r = decide(rules_request(8, [in_rule(value=2)], obs, state=_cooldown_state()))
    assert r["desired_replicas"] == 8 and r["reason"] == "CooldownActive"
    r = decide(rules_request(8, [in_rule(value=2)], obs, state=_cooldown_state(False)))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleDownStabilized"


def test_rate_limited_rule_action_then_its_cooldown():
    # docs/semantics.md (4): "rate policies (Kubernetes), in exact arithmetic, then bounds"
    pol = {"behavior": {"scale_up": {"policies": [{"type": "Pods", "value": 1, "period_seconds": 60}]}}}
    r = decide(rules_request(4, [out_rule(value=3)], {"q": {"series": series([80, 80])}}, pol))
    assert r["desired_replicas"] == 5 and r["reason"] == "ScaleUpLimit"
    assert r["state"]["scale_up_events"] == [{"time": NOW, "change": 1, "cause": "rule"}]
    nxt = rules_request(5, [out_rule(value=3)], {"q": {"series": series([80, 80], end=NOW + 60)}}, pol,
                        state=r["state"], now=NOW + 60)
    r = decide(nxt)
    assert r["desired_replicas"] == 5 and r["reason"] == "CooldownActive"


def test_service_allowed_next_value_rule_in_the_pipeline():
    # the protocol: "`allowed_replicas`: the sizes the service allows, ascending (Azure `ServiceAllowedNextValue`)"
    rule = in_rule(type="ServiceAllowedNextValue")
    del rule["action"]["value"]
    r = decide(rules_request(8, [rule], {"q": {"series": series([10, 10])}},
                             {"allowed_replicas": [2, 4, 8, 16], "min_replicas": 3, "behavior": NO_WINDOW}))
    assert r["desired_replicas"] == 4 and r["metrics"][0]["replicas"] == 4
