"""Review of the neutral `scalebridge` semantics against ../shared/spec/decide-protocol.md,
../shared/DESIGN.md and docs/semantics.md / docs/policy.md (where the spec is silent).

Each test quotes the sentence it checks. Confirmed divergences are strict xfails that
assert the specified behaviour."""
import pytest

from scalebridge import RequestError, decide
from scalebridge.testing.requests import NOW, cpu_request, pods

NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def neutral(current, usage, **kw):
    kw.setdefault("state", {"recommendations": []})
    return cpu_request(current, usage, semantics="scalebridge", **kw)


def series(values, grain=60):
    return [[NOW - grain * (len(values) - 1 - i), v] for i, v in enumerate(values)]


def quiet_rule_request(current, **policy):
    """A rules-only policy whose one (scale-out) rule does not fire."""
    rules = [{"metric": "q", "operator": "GreaterThan", "threshold": 100, "time_window_seconds": 120,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}]
    pol = {"max_replicas": 10, "rules": rules, "behavior": NO_WINDOW}
    pol.update(policy)
    return {"semantics": "scalebridge", "now": NOW, "current_replicas": current, "policy": pol,
            "observations": {"metrics": {"q": {"series": series([5, 5])}}},
            "state": {"recommendations": []}}


# --------------------------------------------------------------------------- divergences

def test_forecast_never_causes_a_scale_in_by_itself():
    # spec (observations.forecast): "It joins the signals by max; it never causes a
    # scale-in by itself (AWS and GCE predictive scaling behave so)."
    req = quiet_rule_request(6, predictive={"mode": "ForecastAndScale"})
    req["observations"]["forecast"] = {"replicas": 2}
    r = decide(req)
    assert r["desired_replicas"] == 6
    assert r["state"]["scale_down_events"] == []


def test_default_fallback_when_every_metric_failed_even_with_a_lower_schedule():
    # spec (Response.error): "set, with desired_replicas == current_replicas, when no decision
    # can be made (every metric failed; ...) — unless the semantics has a documented fallback
    # count"; docs/semantics.md (no data, scalebridge): "`max(current, default)` if a default
    # exists, else no change".
    sched = [{"name": "low", "schedule": "0 * * * *", "time_zone": "UTC", "duration_seconds": 3600,
              "min_required_replicas": 3}]
    req = neutral(4, "500m", policy={"default_replicas": 6, "schedules": sched})
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 6 and r["reason"] == "ProfileDefault"


# --------------------------------------------------------------------------- agreements: defaults

def test_default_cpu_metric_is_60_percent():
    # docs/semantics.md: "no metrics, rules or schedules | 60% CPU"; DESIGN: "per-metric ceil formula"
    req = neutral(4, "900m")
    del req["policy"]["metrics"]
    r = decide(req)                       # ceil(4 × 90 / 60) = 6
    assert r["desired_replicas"] == 6 and r["metrics"][0]["name"] == "cpu"


def test_min_replicas_defaults_to_one_and_max_is_required():
    # docs/semantics.md: "min / max replicas | 1 / required"
    req = neutral(6, "10m", policy={"behavior": NO_WINDOW})
    del req["policy"]["min_replicas"]
    assert decide(req)["desired_replicas"] == 1
    del req["policy"]["max_replicas"]
    with pytest.raises(RequestError) as e:
        decide(req)
    assert "max_replicas" in str(e.value)


def test_per_direction_tolerance_wins_over_the_policy_tolerance():
    # spec: "`tolerance`: a number for both directions, or per direction in
    # `behavior.scale_up.tolerance` / `behavior.scale_down.tolerance`, which win."
    r = decide(neutral(4, "540m", policy={"tolerance": 0.1}))          # ratio 1.08: held
    assert r["desired_replicas"] == 4 and r["reason"] == "WithinTolerance"
    r = decide(neutral(4, "540m", policy={"tolerance": 0.1, "behavior": {"scale_up": {"tolerance": 0.02}}}))
    assert r["desired_replicas"] == 5


def test_select_policy_disabled_blocks_that_direction():
    # spec: "`select_policy` `Max`, `Min` or `Disabled`" (Kubernetes-style rate policies)
    r = decide(neutral(4, "1000m", policy={"behavior": {"scale_up": {"select_policy": "Disabled"}}}))
    assert r["desired_replicas"] == 4 and r["recommended_replicas"] == 4 and r["reason"] == "ScaleUpLimit"
    r = decide(neutral(8, "100m", members=pods(8),
                       policy={"behavior": {"scale_down": {"select_policy": "Disabled",
                                                           "stabilization_window_seconds": 0}}}))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleDownLimit"


def test_default_scale_up_rate_and_custom_scale_down_rate():
    # docs/semantics.md: "scale-up stabilization and rate | 0 s; max(+4, +100%) per 15 s"
    r = decide(neutral(2, "5000m"))       # raw 20 → 2 + max(4, 2) = 6
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleUpLimit"
    pol = {"behavior": {"scale_down": {"stabilization_window_seconds": 0,
                                       "policies": [{"type": "Pods", "value": 1, "period_seconds": 60}]}}}
    r = decide(neutral(8, "100m", members=pods(8), policy=pol))
    assert r["desired_replicas"] == 7 and r["reason"] == "ScaleDownLimit"


def test_scale_up_stabilization_window_when_configured():
    # docs/semantics.md: "stabilization over recorded recommendations in both directions"
    r = decide(neutral(4, "1000m", policy={"behavior": {"scale_up": {"stabilization_window_seconds": 60}}},
                       state={"recommendations": [{"time": NOW - 30, "replicas": 3}]}))
    assert r["desired_replicas"] == 4 and r["reason"] == "ScaleUpStabilized"


def test_first_sight_records_the_current_count():
    # docs/semantics.md: "first sight | the current count is a recommendation"; spec (state):
    # "An absent `recommendations` means the target was never seen"
    r = decide(neutral(6, "100m", members=pods(6), state={}))
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleDownStabilized"
    r = decide(neutral(6, "100m", members=pods(6), state={"recommendations": []}))
    assert r["desired_replicas"] == 2


def test_initializing_members_ignored_only_when_scaling_out():
    # docs/semantics.md: "new members | initializing members ignored when scaling out";
    # "initialization period | 60 s"
    members = pods(2) + [dict(p, name=f"new-{i}", ready_transition_time=NOW - 30, start_time=NOW - 40)
                         for i, p in enumerate(pods(2))]
    pol = {"behavior": NO_WINDOW, "tolerance": 0}
    # settled at 10%: no scale-out; all four average 20% → scale in to ceil(4 × 20/50) = 2
    r = decide(neutral(4, ["100m", "100m", "300m", "300m"], members=members, policy=pol))
    assert r["desired_replicas"] == 2
    # a 20 s initialization period: the new members count → all at 100%/90% scale out
    r = decide(neutral(4, ["900m", "900m", "1000m", "1000m"], members=members,
                       policy={"initialization_period_seconds": 20}))
    assert r["desired_replicas"] == 8


# --------------------------------------------------------------------------- mode

def test_mode_off_reports_recommendation_and_records_no_scale_event():
    # spec: "Under `OFF` and `ONLY_SCALE_OUT` the response still carries `recommended_replicas`";
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
    # spec: "`mode`: `ON`, `ONLY_SCALE_OUT` (alias `ONLY_UP`), `OFF`"
    r = decide(neutral(6, "100m", members=pods(6), policy={"mode": "ONLY_UP", "behavior": NO_WINDOW}))
    assert (r["recommended_replicas"], r["desired_replicas"]) == (2, 6)


# --------------------------------------------------------------------------- forecast / proposal / schedule

@pytest.mark.parametrize("predictive, applied", [(None, False), ({"mode": "ForecastOnly"}, False),
                                                 ({"mode": "Disabled"}, False), ({}, True),
                                                 ({"mode": "Enabled"}, True)])
def test_forecast_mode_defaults(predictive, applied):
    # spec: "absent `predictive` means `Disabled`; a present one without `mode` defaults to
    # `ForecastOnly` under `aws` ... and `ForecastAndScale` elsewhere"; "(`Enabled` is an alias)"
    req = neutral(4, "500m", policy={} if predictive is None else {"predictive": predictive})
    req["observations"]["forecast"] = {"replicas": 8}
    r = decide(req)
    assert r["desired_replicas"] == (8 if applied else 4)
    if applied:
        assert r["reason"] == "ForecastFloor" and r["state"]["last_scale"]["cause"] == "forecast"


def test_proposal_still_bounded():
    # spec: "When set, metric calculation is skipped; stabilization, rate limits, profiles and
    # bounds still apply."
    req = neutral(6, "100m", members=pods(6), policy={"max_replicas": 10})
    req["observations"]["proposal"] = 20
    r = decide(req)
    assert r["desired_replicas"] == 10 and r["reason"] == "TooManyReplicas"
    assert r["state"]["last_scale"]["cause"] == "boundary"
    req = neutral(6, "900m", members=pods(6), policy={"behavior": NO_WINDOW})
    req["observations"]["proposal"] = 2        # the metric would say 11: skipped
    assert decide(req)["desired_replicas"] == 2


def test_schedule_does_not_replace_max_and_is_held_after_it_ends():
    # spec (schedules): "it does not replace min/max, and after it ends the stabilization
    # window holds its size like any other signal."
    sched = [{"name": "peak", "schedule": "0 * * * *", "time_zone": "UTC", "duration_seconds": 300,
              "min_required_replicas": 9}]
    r = decide(neutral(8, "100m", members=pods(8), policy={"schedules": sched, "max_replicas": 8}))
    assert r["desired_replicas"] == 8 and r["reason"] == "TooManyReplicas"
    req = neutral(9, "100m", members=pods(9), policy={"schedules": sched},
                  state={"recommendations": [{"time": NOW, "replicas": 9}]})
    req["now"] = NOW + 480                      # ended 3 minutes ago
    r = decide(req)
    assert r["desired_replicas"] == 9 and r["reason"] == "ScaleDownStabilized"


# --------------------------------------------------------------------------- scale-in control, profiles

def test_scale_in_control_percent_floor():
    # spec: "minus `floor(percent × peak / 100)`"
    pol = {"scale_in_control": {"max_scaled_in_replicas": {"percent": 25}, "time_window_seconds": 600},
           "behavior": NO_WINDOW}
    st = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", members=pods(10), policy=pol, state=st))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleInControlled"    # 10 − floor(2.5)


def test_profile_rules_replace_top_level_rules():
    # spec (profiles): "its `rules` replace the top-level ones"
    def rule(v):
        return [{"metric": "q", "operator": "GreaterThan", "threshold": 10, "time_window_seconds": 120,
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": v}}]
    profiles = [{"name": "d", "capacity": {"minimum": 1, "maximum": 20, "default": 2}, "rules": rule(1)}]
    req = neutral(4, "500m", policy={"profiles": profiles, "rules": rule(3)})
    req["observations"]["metrics"]["q"] = {"series": series([50, 50])}
    r = decide(req)
    assert r["profile"] == "d" and r["desired_replicas"] == 5


def test_fixed_date_profile_capacity_and_iso_strings():
    # spec: "The active profile's capacity replaces `min_replicas`/`max_replicas`/...";
    # "`fixed_date.start/end` may also be ISO-8601 strings without offset, read in `time_zone`"
    fixed = {"name": "fx", "capacity": {"minimum": 5, "maximum": 20, "default": 5},
             "fixed_date": {"start": "2025-12-31T23:00:00", "end": "2026-01-01T01:00:00", "time_zone": "UTC"}}
    default = {"name": "d", "capacity": {"minimum": 1, "maximum": 20, "default": 2}}
    r = decide(neutral(4, "500m", policy={"profiles": [fixed, default]}))
    assert r["profile"] == "fx" and r["desired_replicas"] == 5 and r["reason"] == "TooFewReplicas"
    fixed["fixed_date"] = {"start": NOW - 1000, "end": NOW - 100, "time_zone": "UTC"}
    r = decide(neutral(4, "500m", policy={"profiles": [fixed, default]}))
    assert r["profile"] == "d" and r["desired_replicas"] == 4


# --------------------------------------------------------------------------- cooldowns, state

def _firing(state=None, settings=None):
    rules = [{"metric": "q", "operator": "GreaterThan", "threshold": 10, "time_window_seconds": 120,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 3}}]
    req = neutral(4, "500m", policy={"rules": rules}, state=state, settings=settings)
    req["observations"]["metrics"]["q"] = {"series": series([50, 50])}
    return req


def test_cooldown_counts_from_completed_at():
    # spec: "`last_scale.completed_at` is when that scaling activity finished (cooldowns count from it)"
    st = {"recommendations": [], "last_scale": {"time": NOW - 400, "completed_at": NOW - 200, "direction": "Increase",
                                                "cause": "rule", "cooldown_seconds": 300}}
    r = decide(_firing(st))
    assert r["desired_replicas"] == 4 and r["reason"] == "CooldownActive"


def test_last_scale_cooldown_defaults():
    # spec: "`last_scale.cooldown_seconds` is the cooldown that activity imposes (default: its
    # rule's, else the settings' default)"; docs/semantics.md: "rule cooldown | 300 s"
    assert decide(_firing())["state"]["last_scale"]["cooldown_seconds"] == 300
    r = decide(_firing(settings={"default_cooldown_seconds": 100}))
    assert r["state"]["last_scale"]["cooldown_seconds"] == 100


def test_non_rule_event_does_not_hold_rules():
    # spec: "Azure cooldowns count only `cause: rule` events" (the neutral composes Azure's rules)
    st = {"recommendations": [], "last_scale": {"time": NOW - 10, "direction": "Increase", "cause": "metric",
                                                "cooldown_seconds": 300}}
    assert decide(_firing(st))["desired_replicas"] == 7


def test_state_drops_entries_older_than_every_window():
    # spec: "Entries older than every window that needs them are dropped."
    st = {"recommendations": [{"time": NOW - 700, "replicas": 9}, {"time": NOW - 500, "replicas": 5}]}
    r = decide(neutral(4, "500m", state=st))
    assert [e["time"] for e in r["state"]["recommendations"]] == [NOW - 500, NOW]


# --------------------------------------------------------------------------- errors

def test_every_metric_failed_without_default_is_an_error():
    # spec: "`error`: set, with `desired_replicas == current_replicas`, when no decision can be
    # made (every metric failed; ...)"
    req = neutral(4, "500m")
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["error"] and r["reason"] == "InvalidMetrics"
    assert r["able_to_scale"] is False


def test_default_fallback_is_clamped_and_profile_default_wins():
    # spec: "`default_replicas`: the count to use when metrics cannot be read ... for a policy
    # without profiles"; "The active profile's capacity replaces ... `default_replicas`";
    # (azure) "`max(current, default)`, then clamped to the active profile's range, reason `ProfileDefault`"
    req = neutral(3, "500m", policy={"default_replicas": 6, "max_replicas": 5})
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 5 and r["reason"] == "ProfileDefault"
    assert r["state"]["last_scale"]["cause"] == "default"
    profiles = [{"name": "d", "capacity": {"minimum": 1, "maximum": 10, "default": 7}}]
    req = neutral(3, "500m", policy={"profiles": profiles, "default_replicas": 2})
    del req["policy"]["max_replicas"]
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 7 and r["profile"] == "d"
