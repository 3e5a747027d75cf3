"""Invariants of the neutral ``scalebridge`` semantics (hypothesis): bounds, determinism,
and a long-lived Decider matching one-shot ``decide`` calls."""

from hypothesis import given, HealthCheck, settings, strategies as st

from scalebridge import decide, Decider
from scalebridge.engine import parse_request
from scalebridge.testing.requests import cpu_request, neutral_request as neutral, NOW, series_points as series


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
