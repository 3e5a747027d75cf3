"""Invariants of the aws semantics (hypothesis): bounds, determinism, cooldowns, forecasts,
and "the policy that provides the largest capacity for both scale out and scale in"
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scale-based-on-demand.html#multiple-scaling-policy-resolution)."""
import copy

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scalebridge import decide
from scalebridge.testing.requests import NOW

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPERATORS = ["GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual"]


@st.composite
def series(draw, grain=60):
    n = draw(st.integers(0, 20))
    values = draw(st.lists(st.one_of(st.none(), st.integers(0, 100), st.floats(0, 100, allow_nan=False)),
                           min_size=n, max_size=n))
    return [[NOW - grain * j, v] for j, v in enumerate(values)]


@st.composite
def step_rule(draw, direction=None):
    out = draw(st.booleans()) if direction is None else direction == "out"
    op = draw(st.sampled_from(OPERATORS[:2] if out else OPERATORS[2:]))
    kind = draw(st.sampled_from(["ChangeInCapacity", "PercentChangeInCapacity", "ExactCapacity"]))
    sign = 1 if out else -1
    if kind == "ExactCapacity":
        adj = lambda: draw(st.integers(0, 60))  # noqa: E731
    elif kind == "ChangeInCapacity":
        adj = lambda: sign * draw(st.integers(0, 10))  # noqa: E731
    else:
        adj = lambda: sign * draw(st.integers(0, 200 if out else 100))  # noqa: E731
    cut = draw(st.integers(1, 30))
    if out:
        steps = [{"lower": 0, "upper": cut, "adjustment": adj()}, {"lower": cut, "upper": None, "adjustment": adj()}]
    else:
        steps = [{"lower": -cut, "upper": 0, "adjustment": adj()}, {"lower": None, "upper": -cut, "adjustment": adj()}]
    grain = 60
    periods = draw(st.integers(1, 4))
    rule = {"metric": draw(st.sampled_from(["cpu", "queue"])), "time_grain_seconds": grain,
            "time_window_seconds": grain * periods, "operator": op, "threshold": draw(st.integers(10, 90)),
            "time_aggregation": draw(st.sampled_from(["Average", "Minimum", "Maximum"])),
            "datapoints_to_alarm": draw(st.integers(1, periods)),
            "treat_missing_data": draw(st.sampled_from(["missing", "notBreaching", "breaching", "ignore"])),
            "adjustment_type": kind, "steps": steps}
    if kind == "PercentChangeInCapacity" and draw(st.booleans()):
        rule["min_adjustment_magnitude"] = draw(st.integers(1, 5))
    return rule


@st.composite
def simple_rule(draw):
    out = draw(st.booleans())
    action = {"direction": "Increase" if out else "Decrease",
              "type": draw(st.sampled_from(["ChangeCount", "PercentChangeCount", "ExactCount"])),
              "value": draw(st.integers(0, 50))}
    if draw(st.booleans()):
        action["cooldown_seconds"] = draw(st.sampled_from([0, 60, 180, 300]))
    return {"metric": draw(st.sampled_from(["cpu", "queue"])), "time_grain_seconds": 60, "time_window_seconds": 60,
            "operator": draw(st.sampled_from(OPERATORS[:2] if out else OPERATORS[2:])),
            "threshold": draw(st.integers(10, 90)), "action": action}


@st.composite
def requests(draw, rules=None, with_forecast=False, with_last_scale=None, target_tracking=True):
    min_r = draw(st.integers(0, 10))
    max_r = draw(st.integers(max(min_r, 1), 60))
    current = draw(st.integers(0, 70))
    if rules is None:
        rules = draw(st.lists(st.one_of(step_rule(), simple_rule()), max_size=4))
    policy = {"min_replicas": min_r, "max_replicas": max_r, "rules": rules}
    if target_tracking and draw(st.booleans()):
        policy["metrics"] = [{"type": "resource", "name": "cpu",
                              "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 90))},
                              "disable_scale_in": draw(st.booleans())}]
    obs = {"metrics": {"cpu": {"series": draw(series())}, "queue": {"series": draw(series())}}}
    if draw(st.booleans()):
        obs["status_replicas"] = draw(st.integers(0, 70))
    if draw(st.booleans()):
        n = draw(st.integers(0, 12))
        obs["members"] = [{"name": f"i-{i}", "phase": draw(st.sampled_from(["Running", "Running", "Pending"])),
                           "ready": draw(st.sampled_from([True, True, False, None])),
                           "ready_transition_time": NOW - draw(st.integers(0, 900)),
                           "deleting": draw(st.booleans()) and draw(st.booleans())} for i in range(n)]
    state = {}
    if with_last_scale is None and draw(st.booleans()) or with_last_scale:
        t = NOW - draw(st.integers(0, 900))
        state["last_scale"] = {"time": t, "direction": "Increase", "cause": "rule",
                               "completed_at": t + draw(st.integers(0, 120)),
                               "cooldown_seconds": draw(st.sampled_from([60, 300, 600]))}
    if draw(st.booleans()):
        state["aws.alarm_states"] = {f"rules[{k}]": draw(st.sampled_from(["OK", "ALARM", "INSUFFICIENT_DATA"]))
                                     for k in range(len(rules))}
    if with_forecast:
        policy["predictive"] = {"mode": "ForecastAndScale"}
        obs["forecast"] = {"replicas": draw(st.integers(0, 80))}
    settings_ = {}
    if draw(st.booleans()):
        settings_["default_instance_warmup_seconds"] = draw(st.sampled_from([0, 60, 300]))
    return {"semantics": "aws", "now": NOW, "current_replicas": current, "policy": policy,
            "settings": settings_, "observations": obs, "state": state}


@SETTINGS
@given(requests())
def test_within_bounds_even_when_no_policy_fires(req):
    """UG asg-capacity-limits.html: "All requests to change the Auto Scaling group's desired capacity
    … must fall within these limits"."""
    r = decide(req)
    p = req["policy"]
    assert p["min_replicas"] <= r["desired_replicas"] <= p["max_replicas"]
    assert p["min_replicas"] <= r["recommended_replicas"] <= p["max_replicas"]


@SETTINGS
@given(requests(with_forecast=True))
def test_within_the_raised_maximum(req):
    req["policy"]["predictive"].update(max_capacity_breach_behavior="IncreaseMaxCapacity",
                                       max_capacity_buffer_percent=10)
    r = decide(req)
    top = max(req["policy"]["max_replicas"], r["state"].get("aws.max_capacity", 0))
    assert req["policy"]["min_replicas"] <= r["desired_replicas"] <= top


@SETTINGS
@given(requests(with_forecast=True))
def test_deterministic(req):
    assert decide(copy.deepcopy(req)) == decide(copy.deepcopy(req))


@SETTINGS
@given(st.lists(simple_rule(), min_size=1, max_size=3).flatmap(
    lambda rules: requests(rules=rules, with_last_scale=True, target_tracking=False)))
def test_no_simple_policy_action_inside_its_cooldown(req):
    """UG as-scaling-simple-step.html#SimpleScaling: "the policy must wait for the scaling activity
    … to complete and the cooldown period to expire before responding to additional alarms"."""
    last = req["state"]["last_scale"]
    assume(NOW < last["completed_at"] + last["cooldown_seconds"])
    r = decide(req)
    p = req["policy"]
    within = min(max(req["current_replicas"], p["min_replicas"]), p["max_replicas"])
    assert r["desired_replicas"] == within           # only the bounds may move it


@SETTINGS
@given(requests(with_forecast=True))
def test_a_forecast_never_lowers_capacity(req):
    """UG ec2-auto-scaling-predictive-scaling.html: the desired capacity is the maximum of the
    policies'; "If actual capacity is greater than the predicted capacity, Amazon EC2 Auto Scaling
    doesn't scale in capacity"."""
    without = copy.deepcopy(req)
    del without["observations"]["forecast"]
    assert decide(req)["desired_replicas"] >= decide(without)["desired_replicas"]


def _alone(req, k):
    one = copy.deepcopy(req)
    one["policy"]["rules"] = [req["policy"]["rules"][k]]
    one["state"] = {key: v for key, v in req["state"].items() if key != "aws.alarm_states"}
    return decide(one)["desired_replicas"]


@st.composite
def settled_requests(draw):
    """Several step policies of one direction on a steady group whose metrics breach often."""
    direction = draw(st.sampled_from(["out", "in"]))
    rules = draw(st.lists(step_rule(direction=direction), min_size=2, max_size=4))
    min_r = draw(st.integers(0, 10))
    max_r = draw(st.integers(max(min_r, 1), 80))
    current = draw(st.integers(min_r, max_r))
    level = {"cpu": draw(st.integers(0, 100)), "queue": draw(st.integers(0, 100))}
    obs = {"status_replicas": current,
           "metrics": {k: {"series": [[NOW - 60 * j, v] for j in range(6)]} for k, v in level.items()}}
    return {"semantics": "aws", "now": NOW, "current_replicas": current,
            "policy": {"min_replicas": min_r, "max_replicas": max_r, "rules": rules},
            "observations": obs, "state": {}}


@SETTINGS
@given(st.one_of(settled_requests(), st.sampled_from(["out", "in"]).flatmap(
    lambda d: st.lists(step_rule(direction=d), min_size=2, max_size=4)).flatmap(
    lambda rules: requests(rules=rules, target_tracking=False))))
def test_several_policies_the_largest_capacity_wins(req):
    """Scale-out: the largest proposal; scale-in: the proposal that keeps the most capacity."""
    p = req["policy"]
    cur = req["current_replicas"]
    assume(p["min_replicas"] <= cur <= p["max_replicas"])
    req["state"].pop("aws.alarm_states", None)
    alone = [_alone(req, k) for k in range(len(p["rules"]))]
    got = decide(req)["desired_replicas"]
    moved = [a for a in alone if a != cur]
    assert got == (max(moved) if moved else cur)
