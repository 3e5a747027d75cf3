"""Differential property: a decision sequence is the same whether the caller keeps
state in a :class:`scalebridge.Decider` or round-trips it through the protocol
(the protocol's ``state``: "the previous response's ``state``").

For each built-in semantics, hypothesis draws a policy that keeps history
(stabilization windows, rate policies, scale-in controls, cooldowns, profiles,
alarms, warm-up) and a sequence of 10-60 decisions with irregular time steps,
loads, current sizes that follow the previous decision or jump (a manual change),
members that join warming, and ``mode`` changes. At every step the stateful path
(``Decider.step``) and the protocol path (``decide`` with the previous response's
``state`` after ``json.dumps``/``json.loads``) must give the same desired and
recommended counts and reason, and the same state.
"""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge.engine import Decider, decide, load_policy, parse_request
from scalebridge.errors import RequestError

NOW = 1768384800.0   # Wednesday 2026-01-14 10:00 UTC
MODES = ("ON", "OFF", "ONLY_SCALE_OUT")

CPU_UTIL = {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}


# ----------------------------------------------------------------------------- policies


def _cpu(draw, target=None):
    m = copy.deepcopy(CPU_UTIL)
    m["target"]["average_utilization"] = target if target is not None else draw(st.sampled_from([40, 50, 60, 75]))
    return m


def _scaling_rules(draw):
    r = {}
    if draw(st.booleans()):
        r["stabilization_window_seconds"] = draw(st.sampled_from([0, 15, 60, 120, 300, 600]))
    if draw(st.booleans()):
        r["select_policy"] = draw(st.sampled_from(["Max", "Min", "Max", "Min", "Disabled"]))
    if draw(st.booleans()):
        r["policies"] = draw(st.lists(st.fixed_dictionaries({
            "type": st.sampled_from(["Pods", "Percent"]),
            "value": st.integers(1, 150),
            "period_seconds": st.sampled_from([15, 30, 60, 120, 300, 900])}), min_size=1, max_size=3))
    return r


def _behavior(draw):
    b = {}
    if draw(st.booleans()):
        b["scale_up"] = _scaling_rules(draw)
    if draw(st.booleans()):
        b["scale_down"] = _scaling_rules(draw)
    return b


def _scale_in_control(draw):
    if draw(st.booleans()):
        m = {"fixed": draw(st.integers(0, 4))}
    else:
        m = {"percent": draw(st.sampled_from([0, 10, 25, 50, 100]))}
    return {"max_scaled_in_replicas": m, "time_window_seconds": draw(st.sampled_from([0, 60, 300, 600, 1200]))}


def _azure_rule(draw):
    up = draw(st.booleans())
    kind = draw(st.sampled_from(["ChangeCount", "ChangeCount", "PercentChangeCount", "ExactCount"]))
    value = draw(st.integers(1, 3)) if kind == "ChangeCount" else (
        draw(st.sampled_from([10, 25, 50, 100])) if kind == "PercentChangeCount" else draw(st.integers(1, 10)))
    r = {"metric": "cpu", "statistic": "Average", "time_grain_seconds": 60,
         "time_window_seconds": draw(st.sampled_from([60, 300, 600])),
         "time_aggregation": draw(st.sampled_from(["Average", "Max", "Min", "Last"])),
         "operator": draw(st.sampled_from(["GreaterThan", "GreaterThanOrEqual"] if up else ["LessThan", "LessThanOrEqual"])),
         "threshold": draw(st.sampled_from([60, 70, 80]) if up else st.sampled_from([20, 30, 40])),
         "action": {"direction": "Increase" if up else "Decrease", "type": kind, "value": value,
                    "cooldown_seconds": draw(st.sampled_from([0, 60, 120, 300, 600, 900]))}}
    if kind == "PercentChangeCount" and draw(st.booleans()):
        r["min_adjustment_magnitude"] = draw(st.integers(1, 3))
    return r


@st.composite
def kubernetes_case(draw):
    pol = {"min_replicas": draw(st.integers(1, 2)), "max_replicas": draw(st.integers(4, 20)),
           "metrics": [_cpu(draw)]}
    if draw(st.integers(0, 3)):
        pol["behavior"] = _behavior(draw)
    if draw(st.booleans()):
        pol["tolerance"] = draw(st.sampled_from([0, 0.05, 0.1, 0.2]))
    sets = {}
    if draw(st.booleans()):
        sets["downscale_stabilization_seconds"] = draw(st.sampled_from([0, 30, 60, 300]))
    return pol, sets


@st.composite
def gce_case(draw):
    pol = {"min_replicas": draw(st.integers(1, 2)), "max_replicas": draw(st.integers(4, 20)),
           "metrics": [_cpu(draw)]}
    if draw(st.booleans()):
        pol["scale_in_control"] = _scale_in_control(draw)
    if draw(st.booleans()):
        pol["behavior"] = {"scale_down": {"stabilization_window_seconds": draw(st.sampled_from([0, 60, 300, 600, 900]))}}
    if draw(st.booleans()):
        pol["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 120, 400]))
    return pol, {}


@st.composite
def azure_case(draw):
    rules = draw(st.lists(st.builds(dict), min_size=1, max_size=4))
    rules = [_azure_rule(draw) for _ in rules]
    lo = draw(st.integers(1, 2))
    hi = draw(st.integers(4, 12))
    if draw(st.booleans()):
        pol = {"min_replicas": lo, "max_replicas": hi, "default_replicas": draw(st.integers(lo, hi)), "rules": rules}
    else:
        prof_rules = [_azure_rule(draw) for _ in range(draw(st.integers(1, 3)))]
        h = draw(st.integers(10, 14))
        pol = {"profiles": [
            {"name": "default", "capacity": {"minimum": lo, "maximum": hi, "default": lo}, "rules": rules},
            {"name": "busy", "capacity": {"minimum": lo + 1, "maximum": hi + 2, "default": lo + 2},
             "recurrence": {"frequency": "Week", "time_zone": "UTC",
                            "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                            "hours": [h], "minutes": [0]}, "rules": prof_rules},
            {"name": "quiet", "capacity": {"minimum": lo, "maximum": hi, "default": lo},
             "recurrence": {"frequency": "Week", "time_zone": "UTC",
                            "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                            "hours": [h + draw(st.integers(1, 3))], "minutes": [0]}, "rules": rules}]}
    sets = {}
    if draw(st.booleans()):
        sets["default_cooldown_seconds"] = draw(st.sampled_from([0, 60, 300, 1200]))
    return pol, sets


@st.composite
def aws_case(draw):
    pol = {"min_replicas": draw(st.integers(1, 2)), "max_replicas": draw(st.integers(4, 30)), "rules": []}
    if draw(st.booleans()):
        tt = _cpu(draw)
        if draw(st.booleans()):
            tt["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 300]))
        if draw(st.integers(0, 3)) == 0:
            tt["disable_scale_in"] = True
        pol["metrics"] = [tt]
    for _ in range(draw(st.integers(0 if "metrics" in pol else 1, 3))):
        kind = draw(st.sampled_from(["step_out", "step_in", "simple_out", "simple_in"]))
        grain = draw(st.sampled_from([60, 60, 300]))
        r = {"metric": "cpu", "time_grain_seconds": grain,
             "time_window_seconds": grain * draw(st.integers(1, 3)),
             "time_aggregation": draw(st.sampled_from(["Average", "Maximum", "Minimum"]))}
        if draw(st.booleans()):
            r["treat_missing_data"] = draw(st.sampled_from(["missing", "notBreaching", "breaching", "ignore"]))
        if kind == "step_out":
            t = draw(st.sampled_from([50, 60, 70]))
            r.update(operator="GreaterThanOrEqual", threshold=t,
                     adjustment_type=draw(st.sampled_from(["ChangeInCapacity", "PercentChangeInCapacity"])),
                     steps=[{"lower": 0, "upper": 15, "adjustment": draw(st.integers(0, 2))},
                            {"lower": 15, "upper": None, "adjustment": draw(st.integers(1, 40))}])
            if draw(st.booleans()):
                r["action"] = {"cooldown_seconds": draw(st.sampled_from([0, 60, 300]))}
        elif kind == "step_in":
            t = draw(st.sampled_from([30, 40, 50]))
            r.update(operator="LessThanOrEqual", threshold=t, adjustment_type="ChangeInCapacity",
                     steps=[{"lower": -15, "upper": 0, "adjustment": -draw(st.integers(0, 1))},
                            {"lower": None, "upper": -15, "adjustment": -draw(st.integers(1, 3))}])
        else:
            up = kind == "simple_out"
            r.update(operator="GreaterThan" if up else "LessThan", threshold=70 if up else 30,
                     action={"direction": "Increase" if up else "Decrease", "type": "ChangeCount",
                             "value": draw(st.integers(1, 3)),
                             "cooldown_seconds": draw(st.sampled_from([0, 60, 120, 300, 600]))})
        pol["rules"].append(r)
    if draw(st.booleans()):
        pol["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 300]))
    if draw(st.integers(0, 2)) == 0:   # predictive scaling may raise the maximum (state: aws.max_capacity)
        pol["predictive"] = {"mode": "ForecastAndScale",
                             "max_capacity_breach_behavior": draw(st.sampled_from(["HonorMaxCapacity",
                                                                                   "IncreaseMaxCapacity"])),
                             "max_capacity_buffer_percent": draw(st.sampled_from([0, 10, 50]))}
    sets = {}
    if draw(st.booleans()):
        sets["default_cooldown_seconds"] = draw(st.sampled_from([0, 60, 300]))
    if draw(st.booleans()):
        sets["default_instance_warmup_seconds"] = draw(st.sampled_from([0, 60, 300]))
    return pol, sets


@st.composite
def neutral_case(draw):
    pol = {"min_replicas": draw(st.integers(1, 2)), "max_replicas": draw(st.integers(4, 20))}
    if draw(st.integers(0, 3)):
        pol["metrics"] = [_cpu(draw)]
    if draw(st.booleans()) or "metrics" not in pol:
        pol["rules"] = [_azure_rule(draw) for _ in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        pol["behavior"] = _behavior(draw)
    if draw(st.booleans()):
        pol["scale_in_control"] = _scale_in_control(draw)
    if draw(st.booleans()):
        pol["tolerance"] = draw(st.sampled_from([0, 0.1]))
    sets = {}
    if draw(st.booleans()):
        sets["default_cooldown_seconds"] = draw(st.sampled_from([0, 60, 300, 1200]))
    return pol, sets


CASES = {"kubernetes": kubernetes_case(), "gce": gce_case(), "azure": azure_case(),
         "aws": aws_case(), "scalebridge": neutral_case()}


# ----------------------------------------------------------------------------- sequences


@st.composite
def steps(draw):
    n = draw(st.integers(10, 60))
    out = []
    for _ in range(n):
        out.append({
            "dt": draw(st.one_of(st.integers(1, 400), st.integers(1, 400).map(lambda x: x + 0.5))),
            "util": draw(st.sampled_from([0, 5, 20, 35, 45, 55, 60, 65, 75, 90, 130, 200])),
            "noise": draw(st.integers(-10, 10)),
            # 0: follow the previous desired size, 1: a manual change, 2: not applied yet
            "size": draw(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2])),
            "jump": draw(st.integers(0, 22)),
            "pending": draw(st.integers(0, 3)) == 0,     # members added by the last scale-out not ready yet
            "forecast": draw(st.sampled_from([None] * 6 + [2, 8, 40])),
            "mode": draw(st.sampled_from([None] * 12 + ["ON", "ON", "OFF", "ONLY_SCALE_OUT"])),
            "lag": draw(st.integers(0, 5)) == 0,         # status_replicas still the previous size
            "missing": draw(st.integers(0, 15)) == 0,   # the metric is not observed this time
        })
    return out


def observations(now: float, current: int, starts: list, util: float, noise: int, status: int,
                 missing: bool, semantics: str, pending: bool = False, forecast=None) -> dict:
    members = [{"name": f"m-{i}", "phase": "Running", "ready": True, "start_time": t - 30,
                "ready_transition_time": t, "requests": {"cpu": 1}} for i, t in enumerate(starts)]
    if pending:
        for m in members:
            if m["ready_transition_time"] >= now - 1:
                m.update(phase="Pending", ready=False)
    obs = {"status_replicas": status, "members": members, "metrics": {}}
    if forecast is not None and semantics == "aws":
        obs["forecast"] = {"replicas": forecast, "source": "test"}
    if not missing:
        series = [[now - 60 * j, max(0.0, float(util + noise * ((j % 3) - 1)))] for j in range(30, -1, -1)]
        obs["metrics"]["cpu"] = {"members": {m["name"]: max(0.0, util + noise * (k % 2)) / 100
                                             for k, m in enumerate(members)},
                                 "timestamp": now - 15, "window": 60, "series": series}
    return obs


def _same(a, b) -> bool:
    """Equal, and of the same JSON types (a tuple where JSON has a list, an int key
    where JSON has a string, 3.0 where JSON has 3 would read back differently)."""
    if isinstance(a, dict):
        return type(b) is dict and set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(b) is list and type(a) is list and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:   # noqa: BLE001 - both paths must fail alike
        return None, f"{type(e).__name__}: {e}"


def run_both(semantics: str, policy: dict, sets: dict, seq: list, first_current: int):
    """Run ``seq`` through a Decider and through chained decide(); return the first
    divergence as a string (None when the two agree throughout)."""
    mode = "ON"
    policies = {m: {**policy, "mode": m} for m in MODES}
    decider = Decider(policies[mode], semantics, sets)
    now = NOW
    current = first_current
    prev_current = current
    starts = [now - 7200.0] * current
    state = None
    log = []
    for k, s in enumerate(seq):
        now += s["dt"]
        if s["mode"] is not None and s["mode"] != mode:
            mode = s["mode"]
            decider.policy = load_policy(policies[mode])   # a caller keeps the state across the change
        status = prev_current if s["lag"] else current
        obs = observations(now, current, starts, s["util"], s["noise"], status, s["missing"], semantics,
                           s["pending"], s["forecast"])
        req = {"semantics": semantics, "now": now, "current_replicas": current, "policy": policies[mode],
               "settings": sets, "observations": obs}
        if state is not None:
            req["state"] = state
        log.append(f"t+{now - NOW:g} current={current} util={s['util']}{'+/-' + str(s['noise']) if s['noise'] else ''}"
                   f" mode={mode}{' status=' + str(status) if s['lag'] else ''}{' MISSING' if s['missing'] else ''}")
        r, err_p = _outcome(lambda: decide(copy.deepcopy(req)))
        d, err_d = _outcome(lambda: decider.step(now, current, parse_request(req)[0].observations))
        if err_p or err_d:
            if err_p != err_d:
                return f"step {k}: decide -> {err_p!r}, Decider -> {err_d!r}", log
            return None, log   # both reject this input alike; nothing further to compare
        text = json.dumps(r["state"])
        state = json.loads(text)
        mine = (d.desired, d.recommended, d.reason)
        theirs = (r["desired_replicas"], r["recommended_replicas"], r["reason"])
        if mine != theirs:
            return f"step {k}: Decider (desired, recommended, reason) {mine} != protocol {theirs}", log
        raw = decider.state.to_protocol()
        ds = json.loads(json.dumps(raw))
        if not _same(raw, state):
            return f"step {k}: the Decider's state is not what JSON carries:\n  Decider  {raw}\n  protocol {state}", log
        if ds != state:
            return f"step {k}: state differs:\n  Decider  {ds}\n  protocol {state}", log
        log.append(f"    -> {theirs}")
        # the next current size
        prev_current = current
        if s["size"] == 0:
            current = r["desired_replicas"]
        elif s["size"] == 1:
            current = s["jump"]
        if current > len(starts):
            starts = starts + [now] * (current - len(starts))
        else:
            starts = starts[:current]
    return None, log


def draw_case(data, semantics: str):
    """A drawn ``(policy, settings)`` of ``semantics`` that a Decider accepts, or None."""
    policy, sets = data.draw(CASES[semantics], label="policy, settings")
    try:
        Decider(policy, semantics, sets)
    except RequestError:
        return None
    return policy, sets


@pytest.mark.parametrize("semantics", sorted(CASES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_decider_and_protocol_round_trip_agree(semantics, data):
    case = draw_case(data, semantics)
    if case is None:
        return
    policy, sets = case
    seq = data.draw(steps(), label="steps")
    first = data.draw(st.integers(1, 12), label="first current")
    problem, log = run_both(semantics, policy, sets, seq, first)
    assert problem is None, f"{semantics} {json.dumps(policy)} settings {sets}\n" + "\n".join(log) + "\n" + problem
