"""Invariants of the kubernetes semantics (hypothesis)."""
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge import decide
from scalebridge.testing.requests import NOW, pods

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def requests(draw, behavior=True):
    min_r = draw(st.integers(1, 10))
    max_r = draw(st.integers(min_r, 40))
    current = draw(st.integers(min_r, max_r))
    target = draw(st.integers(10, 100))
    usages = draw(st.lists(st.integers(0, 3000), min_size=current, max_size=current))
    members = pods(current)
    policy = {"min_replicas": min_r, "max_replicas": max_r,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": target}}]}
    if draw(st.booleans()):
        policy["tolerance"] = draw(st.sampled_from([0, 0.05, 0.1, 0.2]))
    if behavior and draw(st.booleans()):
        policy["behavior"] = {
            "scale_up": {"stabilization_window_seconds": draw(st.sampled_from([0, 60, 300])),
                         "select_policy": draw(st.sampled_from(["Max", "Min"])),
                         "policies": [{"type": draw(st.sampled_from(["Pods", "Percent"])),
                                       "value": draw(st.integers(1, 200)),
                                       "period_seconds": draw(st.sampled_from([15, 60, 600]))}]},
            "scale_down": {"stabilization_window_seconds": draw(st.sampled_from([0, 120, 300])),
                           "policies": [{"type": draw(st.sampled_from(["Pods", "Percent"])),
                                         "value": draw(st.integers(1, 100)),
                                         "period_seconds": draw(st.sampled_from([15, 60, 600]))}]}}
    recs = draw(st.lists(st.tuples(st.floats(1, 900), st.integers(0, 50)), max_size=12))
    ups = draw(st.lists(st.tuples(st.floats(1, 900), st.integers(1, 10)), max_size=4))
    downs = draw(st.lists(st.tuples(st.floats(1, 900), st.integers(1, 10)), max_size=4))
    state = {"recommendations": [{"time": NOW - a, "replicas": r} for a, r in recs],
             "scale_up_events": [{"time": NOW - a, "change": c, "cause": "metric"} for a, c in ups],
             "scale_down_events": [{"time": NOW - a, "change": c, "cause": "metric"} for a, c in downs]}
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": current, "policy": policy,
            "observations": {"members": members,
                             "metrics": {"cpu": {"members": {m["name"]: f"{u}m" for m, u in zip(members, usages)},
                                                 "timestamp": NOW - 10, "window": 30}}},
            "state": state}


@SETTINGS
@given(requests())
def test_within_bounds(req):
    r = decide(req)
    p = req["policy"]
    assert p["min_replicas"] <= r["desired_replicas"] <= p["max_replicas"]


@SETTINGS
@given(requests())
def test_deterministic(req):
    assert decide(req) == decide(req)


@SETTINGS
@given(requests(behavior=False), st.data())
def test_ratio_within_tolerance_keeps_count(req, data):
    """All pods at the same utilization within the tolerance band → the count holds."""
    tol = req["policy"].get("tolerance", 0.1)
    target = req["policy"]["metrics"][0]["target"]["average_utilization"]
    lo, hi = math.ceil(target * (1 - tol)), math.floor(target * (1 + tol))
    if lo > hi:
        return
    util = data.draw(st.integers(lo, hi))
    for name in req["observations"]["metrics"]["cpu"]["members"]:
        req["observations"]["metrics"]["cpu"]["members"][name] = f"{util * 10}m"
    r = decide(req)
    assert r["metrics"][0]["replicas"] == req["current_replicas"]
    # with no other history the count holds (recorded recommendations may legitimately
    # pull it elsewhere: stabilization takes the window's peak, even above current)
    req["state"] = {"recommendations": []}
    r = decide(req)
    assert r["desired_replicas"] == req["current_replicas"]


@SETTINGS
@given(requests())
def test_scale_down_never_below_window_peak(req):
    p = req["policy"]
    if "behavior" in p:
        window = p["behavior"]["scale_down"]["stabilization_window_seconds"]
    else:
        window = 300
    r = decide(req)
    cur = req["current_replicas"]
    if r["desired_replicas"] < cur and window > 0:
        in_window = [x["replicas"] for x in req["state"]["recommendations"] if NOW - window < x["time"] <= NOW]
        peak = max(in_window + [r["state"]["recommendations"][-1]["replicas"]])
        assert r["desired_replicas"] >= min(peak, cur) or r["desired_replicas"] == p["min_replicas"]


@SETTINGS
@given(requests())
def test_scale_up_never_exceeds_policy_allowance(req):
    p = req["policy"]
    r = decide(req)
    cur = req["current_replicas"]
    if r["desired_replicas"] <= cur:
        return
    if "behavior" not in p:
        assert r["desired_replicas"] <= max(2 * cur, 4)
        return
    up = p["behavior"]["scale_up"]
    allowed = []
    for pol in up["policies"]:
        period = pol["period_seconds"]
        added = sum(e["change"] for e in req["state"]["scale_up_events"] if e["time"] > NOW - period)
        deleted = sum(e["change"] for e in req["state"]["scale_down_events"] if e["time"] > NOW - period)
        start = cur - added + deleted
        allowed.append(start + pol["value"] if pol["type"] == "Pods" else math.ceil(start * (1 + pol["value"] / 100)))
    limit = max(allowed) if up["select_policy"] == "Max" else min(allowed)
    assert r["desired_replicas"] <= max(limit, cur)
