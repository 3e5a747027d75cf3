"""The neutral `scalebridge` semantics: each composed stage shows through decide."""
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge import Decider, decide
from scalebridge.engine import parse_request
from scalebridge.testing.requests import NOW, cpu_request, pods

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def neutral(current, usage, **kw):
    kw.setdefault("state", {"recommendations": []})
    return cpu_request(current, usage, semantics="scalebridge", **kw)


def series(values, grain=60):
    return [[NOW - grain * (len(values) - 1 - i), v] for i, v in enumerate(values)]


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


def test_ten_minute_downscale_stabilization_by_default():
    state = {"recommendations": [{"time": NOW - 590, "replicas": 8}]}
    r = decide(neutral(8, "100m", state=state))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleDownStabilized"
    state = {"recommendations": [{"time": NOW - 600, "replicas": 8}]}   # the peak left the window
    r = decide(neutral(8, "100m", state=state))
    assert r["desired_replicas"] == 2


def test_rate_policies_in_exact_arithmetic():
    # Percent 29 of 100 is exactly 29 (float64 would also be fine here; 100 × 1.29 ceil is 129)
    policy = {"max_replicas": 1000, "behavior": {"scale_up": {"policies": [{"type": "Percent", "value": 29,
                                                                             "period_seconds": 60}]}}}
    r = decide(neutral(100, "2000m", members=pods(100), policy=policy))
    assert r["desired_replicas"] == 129 and r["reason"] == "ScaleUpLimit"


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


def test_scale_in_control_and_profiles():
    policy = {"scale_in_control": {"max_scaled_in_replicas": {"fixed": 2}, "time_window_seconds": 600},
              "behavior": {"scale_down": {"stabilization_window_seconds": 0}}}
    state = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 10}]}
    r = decide(neutral(10, "100m", members=pods(10), policy=policy, state=state))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleInControlled"
    profiles = [{"name": "night", "capacity": {"minimum": 6, "maximum": 12, "default": 6},
                 "recurrence": {"days": ["Thursday"], "hours": [0], "minutes": [0], "time_zone": "UTC"}},
                {"name": "day", "capacity": {"minimum": 1, "maximum": 10, "default": 2}}]
    r = decide(neutral(4, "500m", policy={"profiles": profiles}))   # NOW is Thursday 00:00 UTC
    assert r["profile"] == "night" and r["desired_replicas"] == 6 and r["reason"] == "TooFewReplicas"


def test_unreadable_metric_blocks_scale_in_but_not_scale_out():
    req = neutral(4, "100m")
    req["policy"]["metrics"].append({"type": "pods", "name": "qps", "target": {"type": "AverageValue",
                                                                                "average_value": 10}})
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics" and r["error"]
    req["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "900m" for i in range(4)}
    assert decide(req)["desired_replicas"] == 8


def test_default_capacity_when_nothing_can_be_read():
    req = neutral(3, "500m", policy={"default_replicas": 5})
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 5 and r["reason"] == "ProfileDefault"


@st.composite
def requests(draw):
    lo = draw(st.integers(1, 5))
    hi = draw(st.integers(lo, 30))
    current = draw(st.integers(lo, hi))
    usage = draw(st.lists(st.integers(0, 2000), min_size=current, max_size=current))
    req = cpu_request(current, [f"{u}m" for u in usage], semantics="scalebridge",
                      policy={"min_replicas": lo, "max_replicas": hi,
                              "mode": draw(st.sampled_from(["ON", "ONLY_SCALE_OUT", "OFF"]))},
                      state={"recommendations": [{"time": NOW - draw(st.integers(1, 900)),
                                                  "replicas": draw(st.integers(0, 40))}
                                                 for _ in range(draw(st.integers(0, 5)))]})
    if draw(st.booleans()):
        req["policy"]["rules"] = [{"metric": "q", "operator": "LessThan", "threshold": 20,
                                   "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1,
                                              "cooldown_seconds": 300}}]
        req["observations"]["metrics"]["q"] = {"series": series([draw(st.integers(0, 40)) for _ in range(5)])}
        if draw(st.booleans()):
            req["state"]["last_scale"] = {"time": NOW - draw(st.integers(1, 600)), "direction": "Decrease",
                                          "cause": "rule", "cooldown_seconds": 300}
    return req


@SETTINGS
@given(requests())
def test_invariants(req):
    r = decide(req)
    p = req["policy"]
    cur = req["current_replicas"]
    assert p["min_replicas"] <= r["desired_replicas"] <= p["max_replicas"]       # bounds
    assert decide(req) == r                                                       # determinism
    if p["mode"] == "ONLY_SCALE_OUT":
        assert r["desired_replicas"] >= cur
    if p["mode"] == "OFF":
        assert r["desired_replicas"] == cur
    ls = req["state"].get("last_scale")
    if ls and r["desired_replicas"] < cur and NOW < ls["time"] + ls["cooldown_seconds"]:
        assert r["state"]["last_scale"]["cause"] != "rule"                       # no rule action in cooldown


def test_decider_matches_one_shot_decide():
    req = neutral(4, "900m", state=None)       # first sight on both paths
    env, policy = parse_request(req)
    d = Decider(policy, "scalebridge")
    assert d.step(NOW, 4, env.observations).desired == decide(req)["desired_replicas"]


def test_semantics_all_and_explain(cli):
    req = json.dumps(neutral(4, "900m"))
    proc = cli("decide", "--semantics", "all", stdin=req)
    names = [json.loads(l)["semantics"] for l in proc.stdout.splitlines()]
    assert names == ["kubernetes", "gce", "azure", "aws", "scalebridge"]
    proc = cli("explain", "--semantics", "scalebridge", stdin=req)
    assert proc.returncode == 0
    for stage in ("signals", "stabilization", "rate limits and bounds"):
        assert stage in proc.stdout
