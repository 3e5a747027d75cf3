"""Second review of the neutral `scalebridge` semantics: interactions between its stages.

Sources: ../shared/spec/decide-protocol.md, ../shared/DESIGN.md, docs/semantics.md (the
pipeline and defaults table), docs/policy.md, and the neutral module's own docstring
(core/scalebridge/semantics/neutral.py), which docs/semantics.md points to ("`semantics/neutral.py`
names each"). Each test quotes what it checks. Confirmed divergences are strict xfails that
assert the documented behaviour; behaviour the documents leave open is not tested here (it is
listed as "unsure" in the review report)."""
import pytest

from scalebridge import decide
from scalebridge.testing.requests import NOW, cpu_request, pods

NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def series(values, grain=60, end=NOW):
    return [[end - grain * (len(values) - 1 - i), v] for i, v in enumerate(values)]


def neutral(current, usage, **kw):
    kw.setdefault("state", {"recommendations": []})
    kw.setdefault("members", pods(current))
    return cpu_request(current, usage, semantics="scalebridge", **kw)


def out_rule(threshold=70, value=2, cooldown=None, metric="q", **action):
    a = {"direction": "Increase", "type": "ChangeCount", "value": value, **action}
    if cooldown is not None:
        a["cooldown_seconds"] = cooldown
    return {"metric": metric, "operator": "GreaterThan", "threshold": threshold, "time_window_seconds": 120,
            "action": a}


def in_rule(threshold=30, value=1, cooldown=None, metric="q", **action):
    a = {"direction": "Decrease", "type": "ChangeCount", "value": value, **action}
    if cooldown is not None:
        a["cooldown_seconds"] = cooldown
    return {"metric": metric, "operator": "LessThan", "threshold": threshold, "time_window_seconds": 120,
            "action": a}


def rules_request(current, rules, metrics, policy=None, state=None, now=NOW):
    pol = {"min_replicas": 1, "max_replicas": 20, "rules": rules}
    pol.update(policy or {})
    return {"semantics": "scalebridge", "now": now, "current_replicas": current, "policy": pol,
            "observations": {"metrics": metrics},
            "state": state if state is not None else {"recommendations": []}}


# =========================================================================== divergences

@pytest.mark.parametrize("direction", ["out", "in"])
def test_rule_action_clamped_by_bounds_still_starts_its_cooldown(direction):
    # docs/semantics.md (pipeline, 2): "Azure-style rules with cooldowns"; neutral.py: "a rule-caused
    # action is held during the last rule action's cooldown"; spec (state): "a scale event at `now`
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


def test_rules_only_policy_nothing_readable_falls_back_to_default():
    # docs/semantics.md (pipeline, 2): "when no metric or rule can be read at all the policy's default
    # capacity is the fallback (`max(current, default)`, ...)"; table: "no data | ... `scalebridge`:
    # `max(current, default)` if a default exists". (The azure semantics answers 5 ProfileDefault here.)
    req = rules_request(3, [out_rule(), in_rule()], {}, {"default_replicas": 5})
    r = decide(req)
    assert r["metrics"][0]["error"]          # both rules report "cannot be read"
    assert r["desired_replicas"] == 5 and r["reason"] == "ProfileDefault"


def _mode_step(mode, now, current, cpu, q, state):
    req = neutral(current, cpu, state=state,
                  policy={"max_replicas": 20, "rules": [out_rule(cooldown=60), in_rule(cooldown=60)],
                          "behavior": NO_WINDOW, "mode": mode})
    req["now"] = now
    req["observations"]["metrics"]["cpu"]["timestamp"] = now - 10
    req["observations"]["metrics"]["q"] = {"series": [[now - 60, q], [now, q]]}
    return decide(req)


def test_only_scale_out_blocked_rule_action_keeps_the_earlier_rule_cooldown():
    # spec (state): "`last_scale.cooldown_seconds` is the cooldown that activity imposes (default: its
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


# =========================================================================== rules and metrics together

def test_rule_scale_out_beats_a_metric_asking_for_less():
    # docs/semantics.md: "several signals | ... | highest of metrics, rules, schedules, forecast"
    req = neutral(4, "100m", policy={"rules": [out_rule()], "behavior": NO_WINDOW})
    req["observations"]["metrics"]["q"] = {"series": series([80, 80])}
    r = decide(req)
    assert r["desired_replicas"] == 6 and r["reason"] == "DesiredWithinRange"
    assert r["state"]["last_scale"]["cause"] == "rule" and r["state"]["last_scale"]["cooldown_seconds"] == 300
    # spec (Response): "`metrics[i]` follows `policy.metrics[i]` for target metrics, then the rules in
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


# =========================================================================== flapping inside the pipeline

def test_flapping_estimate_uses_current_count_and_stabilization_holds_the_reduced_count():
    # spec: "`current_replicas` ... Per-instance division and flapping estimates use it"; Azure's
    # estimate v × current / n: at 1 → 25 × 4 / 1 = 100 > 70 flaps, at 2 → 50 does not.
    rules = [out_rule(threshold=70), in_rule(value=3)]
    obs = {"q": {"series": series([25, 25])}}
    r = decide(rules_request(4, rules, obs, {"behavior": NO_WINDOW}, ))
    assert r["desired_replicas"] == 2 and r["state"]["last_scale"]["cause"] == "rule"
    # with a 600 s window holding a 3 from 5 minutes ago: the rule's reduced count (2) is this
    # decision's unstabilized recommendation (spec: "this decision's unstabilized recommendation
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


# =========================================================================== cooldowns vs windows vs rates

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


# =========================================================================== scale-in controls last

def _control(down_pods, window=0, mode="ON"):
    return {"scale_in_control": {"max_scaled_in_replicas": {"fixed": 3}, "time_window_seconds": 600},
            "mode": mode,
            "behavior": {"scale_down": {"stabilization_window_seconds": window,
                                        "policies": [{"type": "Pods", "value": down_pods, "period_seconds": 60}]}}}


def test_scale_in_control_applies_after_rate_limits_and_sizes_record_the_result():
    # docs/semantics.md: "4. rate policies ..., then bounds; 5. scale-in controls (GCE)"; spec: "the size
    # never drops below the peak of `state.sizes` within `time_window_seconds` minus `fixed`"; "its
    # `recommended_replicas` to `sizes`"
    st = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", policy=_control(1), state=st))     # raw 2; rate 9 above the floor 7
    assert r["desired_replicas"] == 9 and r["reason"] == "ScaleDownLimit"
    assert r["state"]["sizes"][-1] == {"time": NOW, "replicas": 9}
    r = decide(neutral(10, "100m", policy=_control(5), state=st))     # rate 5 below the floor 7
    assert r["desired_replicas"] == 7 and r["reason"] == "ScaleInControlled"
    assert r["state"]["sizes"][-1] == {"time": NOW, "replicas": 7}
    assert r["state"]["recommendations"][-1] == {"time": NOW, "replicas": 2}


def test_scale_in_control_after_stabilization():
    st = {"recommendations": [{"time": NOW - 100, "replicas": 9}], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", policy=_control(5, window=600), state=st))
    assert r["desired_replicas"] == 9 and r["reason"] == "ScaleDownStabilized"


def test_only_scale_out_records_the_controlled_recommendation_in_sizes():
    # spec: "Under `OFF` and `ONLY_SCALE_OUT` the response still carries `recommended_replicas`";
    # "its `recommended_replicas` to `sizes`"
    st = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", policy=_control(5, mode="ONLY_SCALE_OUT"), state=st))
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (7, 10, "ScalingDisabled")
    assert r["state"]["sizes"][-1] == {"time": NOW, "replicas": 7} and r["state"].get("last_scale") is None


def test_only_scale_out_rule_scale_in_starts_no_cooldown():
    # spec: a scale event only "when `desired_replicas != current_replicas`"
    r = decide(rules_request(5, [in_rule()], {"q": {"series": series([10, 10])}},
                             {"mode": "ONLY_SCALE_OUT", "behavior": NO_WINDOW}))
    assert (r["recommended_replicas"], r["desired_replicas"]) == (4, 5)
    assert r["state"].get("last_scale") is None and r["state"]["scale_down_events"] == []


# =========================================================================== allowed_replicas

def test_service_allowed_next_value_rule_in_the_pipeline():
    # spec: "`allowed_replicas`: the sizes the service allows, ascending (Azure `ServiceAllowedNextValue`)"
    rule = in_rule(type="ServiceAllowedNextValue")
    del rule["action"]["value"]
    r = decide(rules_request(8, [rule], {"q": {"series": series([10, 10])}},
                             {"allowed_replicas": [2, 4, 8, 16], "min_replicas": 3, "behavior": NO_WINDOW}))
    assert r["desired_replicas"] == 4 and r["metrics"][0]["replicas"] == 4


# =========================================================================== schedules, profiles, defaults

def test_schedule_ending_during_the_window_is_released_600s_after_its_last_recommendation():
    # spec (schedules): "after it ends the stabilization window holds its size like any other signal";
    # conventions: "`now − w < t ≤ now`"; docs/semantics.md: "scale-down stabilization | 600 s"
    sched = [{"name": "peak", "schedule": "0 * * * *", "time_zone": "UTC", "duration_seconds": 300,
              "min_required_replicas": 9}]
    st = {"recommendations": []}
    seen = []
    for dt, cur in ((0, 4), (299, 9), (300, 9), (898, 9), (899, 9)):
        req = neutral(cur, "100m", policy={"schedules": sched}, state=st)
        req["now"] = NOW + dt
        req["observations"]["metrics"]["cpu"]["timestamp"] = NOW + dt - 5
        r = decide(req)
        seen.append((dt, r["desired_replicas"], r["reason"]))
        st = r["state"]
    assert seen == [(0, 8, "ScaleUpLimit"), (299, 9, "DesiredWithinRange"), (300, 9, "ScaleDownStabilized"),
                    (898, 9, "ScaleDownStabilized"), (899, 2, "DesiredWithinRange")]


@pytest.mark.parametrize("offset, profile, desired", [(-1, "eve", 8), (0, "night", 4), (1, "night", 4)])
def test_default_capacity_follows_the_profile_in_force_at_its_boundary(offset, profile, desired):
    # spec (profiles): "a recurrence profile runs until the next profile starts"; "The active
    # profile's capacity replaces `min_replicas`/`max_replicas`/`default_replicas`"
    profiles = [{"name": "night", "capacity": {"minimum": 1, "maximum": 12, "default": 3},
                 "recurrence": {"days": ["Thursday"], "hours": [0], "minutes": [0], "time_zone": "UTC"}},
                {"name": "eve", "capacity": {"minimum": 1, "maximum": 12, "default": 8},
                 "recurrence": {"days": ["Wednesday"], "hours": [18], "minutes": [0], "time_zone": "UTC"}}]
    req = neutral(4, "500m", policy={"profiles": profiles})      # NOW is Thursday 00:00 UTC
    req["now"] = NOW + offset
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert (r["profile"], r["desired_replicas"], r["reason"]) == (profile, desired, "ProfileDefault")


def test_default_raised_by_old_profile_is_held_by_the_window_after_the_boundary():
    # docs/semantics.md (3): "stabilization over recorded recommendations in both directions"
    profiles = [{"name": "night", "capacity": {"minimum": 1, "maximum": 12, "default": 3},
                 "recurrence": {"days": ["Thursday"], "hours": [0], "minutes": [0], "time_zone": "UTC"}},
                {"name": "eve", "capacity": {"minimum": 1, "maximum": 12, "default": 8},
                 "recurrence": {"days": ["Wednesday"], "hours": [18], "minutes": [0], "time_zone": "UTC"}}]
    req = neutral(8, "100m", policy={"profiles": profiles}, state={"recommendations": [{"time": NOW - 60, "replicas": 8}]})
    r = decide(req)
    assert (r["profile"], r["desired_replicas"], r["reason"]) == ("night", 8, "ScaleDownStabilized")


# =========================================================================== the response's metrics list

def test_metrics_list_holds_metrics_in_policy_order_then_rules_in_force():
    # spec (Response): "`metrics[i]` follows `policy.metrics[i]` for target metrics, then the rules in
    # force ... with `"triggered": true|false`"; "`error` a message when it could not be computed"
    req = neutral(4, "500m", policy={"rules": [out_rule(metric="a"), dict(in_rule(metric="b"), enabled=False),
                                               in_rule(metric="c")], "behavior": NO_WINDOW})
    req["policy"]["metrics"] = [
        {"type": "pods", "name": "qps", "target": {"type": "AverageValue", "average_value": 10}},
        req["policy"]["metrics"][0],
        {"type": "external", "name": "queue", "enabled": False, "target": {"type": "AverageValue", "average_value": 10}}]
    req["observations"]["metrics"]["a"] = {"series": series([80, 80])}
    r = decide(req)
    assert [m["name"] for m in r["metrics"]] == ["qps", "cpu", "queue", "a", "b", "c"]
    assert r["metrics"][0]["error"] and r["metrics"][0]["replicas"] is None
    assert [m.get("triggered") for m in r["metrics"]] == [None, None, None, True, False, False]
    assert r["metrics"][5]["error"]                              # c cannot be read
    assert r["desired_replicas"] == 6                            # an unreadable metric blocks a scale-in only
