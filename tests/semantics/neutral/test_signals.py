"""The neutral ``scalebridge`` semantics' signals: each metric's exact ceil formula with
the tolerance (per direction), the highest of all signals, the default CPU metric
(GCE's 60 %), initializing members, forecasts that never scale in by themselves,
schedules as floors held by the window, unreadable metrics, the metrics list.

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces."""

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    neutral_in_rule as in_rule, neutral_out_rule as out_rule, neutral_request as neutral, NOW, pods,
    series_points as series)


def test_ceil_formula_in_exact_arithmetic():
    # 4 × 55/50: exact 4.4 → 5 (ratio 1.1 is at the edge of the 0.1 tolerance → held)
    r = decide(neutral(4, "550m"))
    assert r["desired_replicas"] == 4 and r["reason"] == "WithinTolerance"
    r = decide(neutral(4, "560m"))        # ratio 1.12 → ceil(4.48) = 5
    assert r["desired_replicas"] == 5 and r["metrics"][0]["replicas"] == 5


def test_highest_of_all_signals_and_schedule_floor():
    req = neutral(4, "500m", policy={"schedules": [{"name": "peak", "schedule": "0 * * * *", "time_zone": "UTC",
                                                    "duration_seconds": 3600, "min_required_replicas": 9}]})
    r = decide(req)
    assert r["desired_replicas"] == 8                 # 9, within the default rate max(+4, +100%)
    assert r["state"]["scale_up_events"][0]["cause"] == "schedule"


def test_unreadable_metric_blocks_scale_in_but_not_scale_out():
    req = neutral(4, "100m")
    req["policy"]["metrics"].append({"type": "pods", "name": "qps", "target": {"type": "AverageValue",
                                                                                "average_value": 10}})
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics" and r["error"]
    req["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "900m" for i in range(4)}
    assert decide(req)["desired_replicas"] == 8


NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def quiet_rule_request(current, **policy):
    """A rules-only policy whose one (scale-out) rule does not fire."""
    rules = [{"metric": "q", "operator": "GreaterThan", "threshold": 100, "time_window_seconds": 120,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}]
    pol = {"max_replicas": 10, "rules": rules, "behavior": NO_WINDOW}
    pol.update(policy)
    return {"semantics": "scalebridge", "now": NOW, "current_replicas": current, "policy": pol,
            "observations": {"metrics": {"q": {"series": series([5, 5])}}},
            "state": {"recommendations": []}}


def test_forecast_never_causes_a_scale_in_by_itself():
    # the protocol (observations.forecast): "It joins the signals by max; it never causes a
    # scale-in by itself (AWS and GCE predictive scaling behave so)."
    req = quiet_rule_request(6, predictive={"mode": "ForecastAndScale"})
    req["observations"]["forecast"] = {"replicas": 2}
    r = decide(req)
    assert r["desired_replicas"] == 6
    assert r["state"]["scale_down_events"] == []


def test_default_cpu_metric_is_60_percent():
    # docs/semantics.md: "no metrics, rules or schedules | 60% CPU"
    req = neutral(4, "900m")
    del req["policy"]["metrics"]
    r = decide(req)                       # ceil(4 × 90 / 60) = 6
    assert r["desired_replicas"] == 6 and r["metrics"][0]["name"] == "cpu"


def test_per_direction_tolerance_wins_over_the_policy_tolerance():
    # the protocol: "`tolerance`: a number for both directions, or per direction in
    # `behavior.scale_up.tolerance` / `behavior.scale_down.tolerance`, which win."
    r = decide(neutral(4, "540m", policy={"tolerance": 0.1}))          # ratio 1.08: held
    assert r["desired_replicas"] == 4 and r["reason"] == "WithinTolerance"
    r = decide(neutral(4, "540m", policy={"tolerance": 0.1, "behavior": {"scale_up": {"tolerance": 0.02}}}))
    assert r["desired_replicas"] == 5


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


@pytest.mark.parametrize("predictive, applied", [(None, False), ({"mode": "ForecastOnly"}, False),
                                                 ({"mode": "Disabled"}, False), ({}, True),
                                                 ({"mode": "Enabled"}, True)])
def test_forecast_mode_defaults(predictive, applied):
    # the protocol: "absent `predictive` means `Disabled`; a present one without `mode` defaults to
    # `ForecastOnly` under `aws` ... and `ForecastAndScale` elsewhere"; "(`Enabled` is an alias)"
    req = neutral(4, "500m", policy={} if predictive is None else {"predictive": predictive})
    req["observations"]["forecast"] = {"replicas": 8}
    r = decide(req)
    assert r["desired_replicas"] == (8 if applied else 4)
    if applied:
        assert r["reason"] == "ForecastFloor" and r["state"]["last_scale"]["cause"] == "forecast"


def test_schedule_does_not_replace_max_and_is_held_after_it_ends():
    # the protocol (schedules): "it does not replace min/max, and after it ends the stabilization
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


def test_schedule_ending_during_the_window_is_released_600s_after_its_last_recommendation():
    # the protocol (schedules): "after it ends the stabilization window holds its size like any other signal";
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


def test_metrics_list_holds_metrics_in_policy_order_then_rules_in_force():
    # the protocol (Response): "`metrics[i]` follows `policy.metrics[i]` for target metrics, then the rules in
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
