"""Invariants of the ``azure`` semantics (hypothesis).

- bounds: the count is always within the active profile's (or the policy's) [minimum, maximum];
- determinism: the same request gives the same response, and the request is not modified;
- cooldown: no rule acts before its own cooldown has run since the previous rule action;
- flapping: Azure never scales in (by a rule) to a count at which its own estimate
  (each scale-out rule's value × current / new count) would fire a scale-out rule.
The estimate is recomputed here independently, in exact arithmetic from the request's JSON.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.protocol import Observations

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = 1768384800.0
METRICS = ("cpu", "memory", "queue")
OPS = ("GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual", "Equals", "NotEquals")


@st.composite
def rules(draw, min_size=1):
    out = []
    for _ in range(draw(st.integers(min_size, 4))):
        direction = draw(st.sampled_from(["Increase", "Decrease"]))
        kind = draw(st.sampled_from(["ChangeCount", "ChangeCount", "PercentChangeCount", "ExactCount",
                                     "ServiceAllowedNextValue"]))
        action = {"direction": direction, "type": kind, "cooldown_seconds": draw(st.sampled_from([60, 300, 600, 3600]))}
        if kind != "ServiceAllowedNextValue":
            action["value"] = draw(st.integers(1, 12)) if kind != "PercentChangeCount" else draw(st.integers(1, 60))
        op = draw(st.sampled_from(OPS if draw(st.integers(0, 5)) == 0 else OPS[:4]))
        if direction == "Increase" and op.startswith("Less") and draw(st.booleans()):
            op = "Greater" + op[4:]
        out.append({"metric": draw(st.sampled_from(METRICS)), "operator": op,
                    "threshold": draw(st.integers(0, 120)
                                      | st.floats(0, 120, allow_nan=False).map(lambda x: round(x, 2))),
                    "statistic": "Average", "time_grain_seconds": 60,
                    "time_window_seconds": draw(st.sampled_from([60, 120, 300])),
                    "time_aggregation": draw(st.sampled_from(["Average", "Maximum", "Minimum", "Total", "Last",
                                                              "Count"])),
                    "divide_per_instance": draw(st.booleans()),
                    "action": action})
    return out


@st.composite
def policies(draw):
    if draw(st.booleans()):
        lo = draw(st.integers(0, 6))
        hi = draw(st.integers(max(lo, 1), 30))
        p = {"min_replicas": lo, "max_replicas": hi, "default_replicas": draw(st.integers(lo, hi)),
             "rules": draw(rules())}
    else:
        profiles = []
        for k in range(draw(st.integers(1, 3))):
            lo = draw(st.integers(0, 6))
            hi = draw(st.integers(max(lo, 1), 30))
            prof = {"name": f"p{k}", "capacity": {"minimum": lo, "maximum": hi, "default": draw(st.integers(lo, hi))},
                    "rules": draw(rules())}
            if k > 0:
                zone = draw(st.sampled_from(["UTC", "Pacific Standard Time", "Asia/Tokyo"]))
                prof["recurrence"] = {"time_zone": zone,
                                      "days": draw(st.lists(st.sampled_from(["Monday", "Wednesday", "Saturday"]),
                                                            min_size=1, max_size=3, unique=True)),
                                      "hours": [draw(st.integers(0, 23))], "minutes": [draw(st.sampled_from([0, 30]))]}
            profiles.append(prof)
        p = {"profiles": profiles}
    if draw(st.integers(0, 4)) == 0:
        p["allowed_replicas"] = sorted(set(draw(st.lists(st.integers(0, 40), min_size=1, max_size=6))))
    return p


@st.composite
def metric_obs(draw, now):
    obs = {}
    for name in METRICS:
        if draw(st.integers(0, 9)) == 0:
            continue   # unreadable now and then: the default-capacity path
        vals = draw(st.lists(st.integers(0, 150) | st.floats(0, 150, allow_nan=False).map(lambda x: round(x, 1)),
                             min_size=1, max_size=6))
        obs[name] = {"series": [[now - 60 * (len(vals) - 1 - i), v] for i, v in enumerate(vals)]}
    return obs


@st.composite
def requests(draw):
    policy = draw(policies())
    now = NOW + draw(st.integers(0, 7 * 86400 // 60)) * 60
    req = {"semantics": "azure", "now": float(now), "current_replicas": draw(st.integers(0, 35)),
           "policy": policy, "observations": {"metrics": draw(metric_obs(now))}}
    if draw(st.booleans()):
        req["state"] = {"last_scale": {"time": now - draw(st.integers(0, 4000)),
                                       "direction": draw(st.sampled_from(["Increase", "Decrease"])),
                                       "cause": draw(st.sampled_from(["rule", "boundary", "default"])),
                                       "cooldown_seconds": draw(st.sampled_from([60, 300, 3600]))}}
    return req


def _scope(req: dict, response: dict) -> tuple[int, int, list]:
    p = req["policy"]
    if response["profile"] is None:
        return p["min_replicas"], p["max_replicas"], p["rules"]
    prof = next(x for x in p["profiles"] if x["name"] == response["profile"])
    return prof["capacity"]["minimum"], prof["capacity"]["maximum"], prof["rules"]


@SETTINGS
@given(requests())
def test_within_bounds(req):
    r = decide(copy.deepcopy(req))
    lo, hi, _ = _scope(req, r)
    assert lo <= r["desired_replicas"] <= hi
    assert r["recommended_replicas"] == r["desired_replicas"]


@SETTINGS
@given(requests())
def test_deterministic_and_pure(req):
    original = copy.deepcopy(req)
    assert decide(req) == decide(req)
    assert req == original


# --- an independent, exact re-computation of a rule's value ---------------------------------

_AGG = {"Maximum": "Max", "Minimum": "Min", "Total": "Sum"}


def exact_value(rule: dict, req: dict):
    obs = req["observations"]["metrics"].get(rule["metric"])
    if obs is None:
        return None
    now, w = req["now"], rule["time_window_seconds"]
    pts = [(t, Fraction(repr(v)) if isinstance(v, float) else Fraction(v))
           for t, v in obs["series"] if now - w < t <= now]
    if not pts:
        return None
    how = _AGG.get(rule["time_aggregation"], rule["time_aggregation"])
    vals = [v for _, v in pts]
    v = {"Average": lambda: sum(vals) / len(vals), "Max": lambda: max(vals), "Min": lambda: min(vals),
         "Sum": lambda: sum(vals), "Count": lambda: Fraction(len(vals)),
         "Last": lambda: max(pts, key=lambda p: p[0])[1]}[how]()
    if rule["divide_per_instance"]:
        v /= max(req["current_replicas"], 1)
    return v


def fires(op: str, v, threshold) -> bool:
    t = Fraction(repr(threshold)) if isinstance(threshold, float) else Fraction(threshold)
    return {"GreaterThan": v > t, "GreaterThanOrEqual": v >= t, "LessThan": v < t,
            "LessThanOrEqual": v <= t, "Equals": v == t, "NotEquals": v != t}[op]


@SETTINGS
@given(requests())
def test_never_scales_in_to_a_count_that_would_scale_out_again(req):
    r = decide(copy.deepcopy(req))
    cur, new = req["current_replicas"], r["desired_replicas"]
    events = r["state"]["scale_down_events"]
    if not (new < cur and events and events[-1]["time"] == req["now"] and events[-1]["cause"] == "rule"):
        return
    _, _, rules_ = _scope(req, r)
    for rule in rules_:
        if rule["action"]["direction"] != "Increase":
            continue
        v = exact_value(rule, req)
        if v is None:
            continue
        estimate = v * cur / new if new else (math.inf if v > 0 else 0)
        assert not fires(rule["operator"], estimate, rule["threshold"]), (rule, v, cur, new)


@st.composite
def sequences(draw):
    policy = {"min_replicas": 1, "max_replicas": 20, "default_replicas": 1, "rules": draw(rules(min_size=2))}
    steps = draw(st.lists(st.tuples(st.sampled_from([30, 60, 120, 300, 900]),
                                    st.fixed_dictionaries({m: st.integers(0, 150) for m in METRICS})),
                          min_size=5, max_size=25))
    return policy, draw(st.integers(1, 20)), steps


@SETTINGS
@given(sequences())
def test_no_rule_acts_inside_its_own_cooldown_since_the_last_rule_action(seq):
    policy, current, steps = seq
    d = Decider(policy, "azure")
    now = NOW
    last = None   # (time, cooldown) of the last rule-caused action
    for dt, values in steps:
        now += dt
        obs = Observations.model_validate(
            {"metrics": {m: {"series": [[now - 60 * k, v] for k in range(5)]} for m, v in values.items()}})
        dec = d.step(now, current, obs)
        if dec.desired != current and dec.cause == "rule":
            # every rule that acted waited its own cooldown since the last rule action
            # (dec.cooldown_seconds: the longest of the acting rules')
            if last is not None:
                assert now >= last[0] + dec.cooldown_seconds, (now, last, dec.cooldown_seconds)
            last = (now, dec.cooldown_seconds)
        current = dec.desired
