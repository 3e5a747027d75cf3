"""Invariants of the gce semantics (hypothesis): bounds hold, same request same
response, ONLY_SCALE_OUT never shrinks, stabilization never drops below the
window's peak, scale-in controls hold their floor, and a long-lived
:class:`~scalebridge.engine.Decider` agrees with one-shot ``decide()`` calls."""
from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.protocol import Observations, StateModel
from scalebridge.state import DecisionState

NOW = 1768410000.0
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def requests(draw, mode=None):
    min_r = draw(st.integers(0, 6))
    max_r = draw(st.integers(max(min_r, 1), 40))
    current = draw(st.integers(max(min_r, 1), max_r))
    kinds = draw(st.lists(st.sampled_from(["cpu", "lb", "pods", "queue"]), min_size=1, max_size=4, unique=True))
    members = [{"name": f"vm-{i}", "phase": "Running", "ready": True,
                "ready_transition_time": NOW - draw(st.sampled_from([5, 30, 90, 3600])),
                "requests": {"cpu": draw(st.sampled_from([1, "500m", 2]))}} for i in range(current)]
    metrics, obs = [], {}
    for k in kinds:
        if k == "cpu":
            metrics.append({"type": "resource", "name": "cpu",
                            "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 100))}})
            obs["cpu"] = {"members": {m["name"]: draw(st.sampled_from([0, 0.1, 0.55, 0.9, "750m", 1.3]))
                                      for m in members if draw(st.booleans()) or m is members[0]}}
        elif k == "lb":
            metrics.append({"type": "load_balancing", "name": "lb",
                            "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 100))}})
            obs["lb"] = {"value": draw(st.integers(0, 200))}
        elif k == "pods":
            metrics.append({"type": "pods", "name": "conns",
                            "target": {"type": "AverageValue", "average_value": draw(st.sampled_from([0.8, 100, "1k"]))}})
            obs["conns"] = {"members": {m["name"]: draw(st.sampled_from([0, 0.8, 55, 1200, "2k"])) for m in members}}
        else:
            metrics.append({"type": "external", "name": "queue",
                            "target": {"type": "AverageValue", "average_value": draw(st.sampled_from([1, 10, 2.5]))}})
            obs["queue"] = {"values": draw(st.lists(st.integers(0, 300), min_size=1, max_size=3))}
    if draw(st.integers(0, 9)) == 0:                # a signal without data now and then
        obs.pop(draw(st.sampled_from(sorted(obs))))
    policy = {"min_replicas": min_r, "max_replicas": max_r, "metrics": metrics,
              "mode": mode or draw(st.sampled_from(["ON", "ONLY_SCALE_OUT", "OFF"]))}
    if draw(st.booleans()):
        policy["behavior"] = {"scale_down": {"stabilization_window_seconds": draw(st.sampled_from([0, 120, 600]))}}
    if draw(st.booleans()):
        policy["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 300]))
    if draw(st.booleans()):
        mir = {"fixed": draw(st.integers(0, 5))} if draw(st.booleans()) else {"percent": draw(st.integers(0, 100))}
        policy["scale_in_control"] = {"max_scaled_in_replicas": mir,
                                      "time_window_seconds": draw(st.sampled_from([60, 600, 1200]))}
    if draw(st.booleans()):
        policy["schedules"] = [{"name": "s", "schedule": draw(st.sampled_from(["0 9 * * MON-FRI", "*/10 * * * *",
                                                                               "0 0 * * SAT"])),
                                "time_zone": draw(st.sampled_from(["UTC", "America/New_York"])),
                                "duration_seconds": draw(st.sampled_from([300, 28800])),
                                "min_required_replicas": draw(st.integers(0, 50))}]
    recs = draw(st.lists(st.tuples(st.floats(0, 1500), st.integers(0, 60)), max_size=8))
    sizes = draw(st.lists(st.tuples(st.floats(0, 1500), st.integers(min_r, max_r)), max_size=8))
    state = {"recommendations": [{"time": NOW - a, "replicas": r} for a, r in recs],
             "sizes": [{"time": NOW - a, "replicas": r} for a, r in sizes]}
    return {"semantics": "gce", "now": NOW, "current_replicas": current, "policy": policy,
            "observations": {"members": members, "metrics": obs}, "state": state}


@SETTINGS
@given(requests())
def test_within_bounds(req):
    r = decide(req)
    p = req["policy"]
    assert p["min_replicas"] <= r["recommended_replicas"] <= p["max_replicas"]
    assert p["min_replicas"] <= r["desired_replicas"] <= p["max_replicas"]


@SETTINGS
@given(requests())
def test_deterministic(req):
    assert decide(copy.deepcopy(req)) == decide(copy.deepcopy(req))


@SETTINGS
@given(requests(mode="ONLY_SCALE_OUT"))
def test_only_scale_out_never_shrinks(req):
    r = decide(req)
    assert r["desired_replicas"] >= req["current_replicas"]
    assert r["desired_replicas"] == max(req["current_replicas"], r["recommended_replicas"]) or r["error"]


@SETTINGS
@given(requests(mode="OFF"))
def test_off_never_changes_the_size(req):
    assert decide(req)["desired_replicas"] == req["current_replicas"]


@SETTINGS
@given(requests(mode="ON"))
def test_never_below_the_stabilization_peak_or_the_scale_in_floor(req):
    r = decide(req)
    if r["error"] and r["desired_replicas"] == req["current_replicas"]:
        return
    p = req["policy"]
    lo, hi = p["min_replicas"], p["max_replicas"]
    init = p.get("initialization_period_seconds", 60)
    window = max(p.get("behavior", {}).get("scale_down", {}).get("stabilization_window_seconds", 600), init)
    inside = [e["replicas"] for e in req["state"]["recommendations"] if NOW - window < e["time"] <= NOW]
    if inside:
        assert r["recommended_replicas"] >= min(max(inside), hi)
    sic = p.get("scale_in_control")
    if sic:
        peaks = [e["replicas"] for e in req["state"]["sizes"] if NOW - sic["time_window_seconds"] < e["time"] <= NOW]
        if peaks:
            peak = max(peaks)
            m = sic["max_scaled_in_replicas"]
            floor = peak - m["fixed"] if "fixed" in m else peak - peak * m["percent"] // 100
            assert r["recommended_replicas"] >= min(floor, hi)
    assert lo <= r["recommended_replicas"] <= hi


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.lists(st.tuples(st.integers(1, 400), st.integers(0, 300)), min_size=1, max_size=25))
def test_decider_agrees_with_one_shot_decisions(req, steps):
    """The controller's and simulator's path (a Decider carrying incremental
    window views) answers exactly as a fresh request carrying the previous
    response's state does."""
    d = Decider(req["policy"], "gce")
    state = req["state"]
    d.state = DecisionState.from_protocol(StateModel.model_validate(state))
    now, current = NOW, req["current_replicas"]
    for dt_, depth in steps:
        now += dt_
        obs = copy.deepcopy(req["observations"])
        for m in obs["metrics"].values():
            if "values" in m:
                m["values"] = [depth]
        one = decide({**req, "now": now, "current_replicas": current, "observations": obs, "state": state})
        dec = d.step(now, current, Observations.model_validate(obs))
        assert (dec.recommended, dec.desired, dec.reason) == \
            (one["recommended_replicas"], one["desired_replicas"], one["reason"])
        state = json.loads(json.dumps(one["state"]))
        assert d.state.to_protocol() == one["state"]
        current = one["desired_replicas"]
