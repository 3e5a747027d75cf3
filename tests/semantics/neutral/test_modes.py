"""The neutral ``scalebridge`` semantics' modes: OFF reporting its recommendation,
ONLY_SCALE_OUT (and ONLY_UP) with rule cooldowns and recorded sizes.

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces."""

from scalebridge import decide
from scalebridge.testing.requests import (
    neutral_in_rule as in_rule, neutral_out_rule as out_rule, neutral_request as neutral,
    neutral_rules_request as rules_request, NOW, pods, series_points as series)


NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def test_mode_off_reports_recommendation_and_records_no_scale_event():
    # the protocol: "Under `OFF` and `ONLY_SCALE_OUT` the response still carries `recommended_replicas`";
    # state: "when `desired_replicas != current_replicas`, a scale event at `now`"
    rules = [{"metric": "q", "operator": "GreaterThan", "threshold": 10, "time_window_seconds": 120,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 2, "cooldown_seconds": 600}}]
    req = neutral(4, "500m", policy={"rules": rules, "mode": "OFF"})
    req["observations"]["metrics"]["q"] = {"series": series([50, 50])}
    r = decide(req)
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (6, 4, "ScalingDisabled")
    assert r["state"]["scale_up_events"] == [] and "last_scale" not in r["state"]
    assert r["state"]["sizes"][-1]["replicas"] == 6      # "its `recommended_replicas` to `sizes`"


def test_only_up_alias():
    # the protocol: "`mode`: `ON`, `ONLY_SCALE_OUT` (alias `ONLY_UP`), `OFF`"
    r = decide(neutral(6, "100m", members=pods(6), policy={"mode": "ONLY_UP", "behavior": NO_WINDOW}))
    assert (r["recommended_replicas"], r["desired_replicas"]) == (2, 6)


def _mode_step(mode, now, current, cpu, q, state):
    req = neutral(current, cpu, state=state,
                  policy={"max_replicas": 20, "rules": [out_rule(cooldown=60), in_rule(cooldown=60)],
                          "behavior": NO_WINDOW, "mode": mode})
    req["now"] = now
    req["observations"]["metrics"]["cpu"]["timestamp"] = now - 10
    req["observations"]["metrics"]["q"] = {"series": [[now - 60, q], [now, q]]}
    return decide(req)


def test_only_scale_out_blocked_rule_action_keeps_the_earlier_rule_cooldown():
    # the protocol (state): "`last_scale.cooldown_seconds` is the cooldown that activity imposes (default: its
    # rule's ...)"; "when `desired_replicas != current_replicas`, a scale event" — a blocked scale-in is
    # not an activity; policy.md: mode "ONLY_SCALE_OUT ... the recommendation is computed in every mode".
    r = _mode_step("ONLY_SCALE_OUT", NOW, 4, "500m", 80, {"recommendations": []})   # rule: 4 -> 6, 60 s
    assert r["desired_replicas"] == 6 and r["state"]["last_scale"]["cooldown_seconds"] == 60
    r = _mode_step("ONLY_SCALE_OUT", NOW + 10, 6, "750m", 80, r["state"])          # metric: 6 -> 8
    assert r["state"]["last_scale"]["cause"] == "metric"
    r = _mode_step("ONLY_SCALE_OUT", NOW + 100, 8, "100m", 10, r["state"])         # rule 8 -> 7, blocked
    assert r["desired_replicas"] == 8 and r["reason"] == "ScalingDisabled"
    r = _mode_step("ONLY_SCALE_OUT", NOW + 130, 8, "500m", 80, r["state"])         # the last rule action
    assert r["desired_replicas"] == 10 and r["reason"] == "DesiredWithinRange"     # ended at NOW + 60


def test_same_sequence_under_on_holds_for_the_scale_in_rules_cooldown():
    # control for the test above: under ON the scale-in at NOW + 100 is carried out and its own
    # 60 s cooldown holds the scale-out at NOW + 130 (docs/semantics.md: "Azure cooldowns — the most
    # recent rule action's cooldown holds every rule, both ways").
    r = _mode_step("ON", NOW, 4, "500m", 80, {"recommendations": []})
    r = _mode_step("ON", NOW + 10, 6, "750m", 80, r["state"])
    r = _mode_step("ON", NOW + 100, 8, "100m", 10, r["state"])
    assert r["desired_replicas"] == 7 and r["state"]["last_scale"]["cause"] == "rule"
    r = _mode_step("ON", NOW + 130, 7, "500m", 80, r["state"])
    assert r["desired_replicas"] == 7 and r["reason"] == "CooldownActive"


def test_only_scale_out_rule_scale_in_starts_no_cooldown():
    # the protocol: a scale event only "when `desired_replicas != current_replicas`"
    r = decide(rules_request(5, [in_rule()], {"q": {"series": series([10, 10])}},
                             {"mode": "ONLY_SCALE_OUT", "behavior": NO_WINDOW}))
    assert (r["recommended_replicas"], r["desired_replicas"]) == (4, 5)
    assert r["state"].get("last_scale") is None and r["state"]["scale_down_events"] == []
