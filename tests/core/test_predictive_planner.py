"""The predictive planner: fast up with lead time, slow down, fallback with a reason."""
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from scalebridge import decide
from scalebridge.policy import Predictive
from scalebridge.predictive import PredictivePlanner
from tests.conftest import NOW, cpu_request


def planner(**kw):
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=25000, target_utilization=0.8,
                      model=kw.pop("model", "linear"), **kw)
    return PredictivePlanner(spec, startup_seconds=120)


def test_ramp_is_provisioned_ahead_by_the_lead_time():
    p = planner()
    # connections grow 100/s: the plan covers the load 120 s ahead
    for k in range(121):
        t = NOW + 15 * k
        p.observe(t, 100_000 + 100 * 15 * k)
    plan = p.plan(NOW + 15 * 120)
    ahead = 100_000 + 100 * (15 * 120 + 120)
    assert plan.reason is None
    assert plan.replicas == math.ceil(ahead / 20000)
    assert plan.replicas > plan.reactive


def test_too_little_history_falls_back_to_reactive_with_a_reason():
    p = planner(model="seasonal")
    p.observe(NOW, 50_000)
    plan = p.plan(NOW)
    assert plan.reason and plan.replicas == plan.reactive == math.ceil(50_000 / 20000)


def test_nan_input_falls_back_with_a_reason():
    p = planner()
    for k in range(60):
        p.observe(NOW + 15 * k, 80_000.0)
    p.observe(NOW + 15 * 60, float("nan"))
    plan = p.plan(NOW + 15 * 60)
    assert plan.reason is not None
    assert plan.replicas >= plan.reactive


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 900_000), min_size=5, max_size=80), st.sampled_from([5, 10, 20]))
def test_scale_down_rate_is_never_exceeded(loads, rate):
    p = planner(scale_down_rate_percent=rate, scale_down_period_seconds=60)
    keep = 1 - rate / 100
    prev_env = None
    for k, load in enumerate(loads):
        t = NOW + 15 * k
        p.observe(t, load)
        plan = p.plan(t)
        env = p.envelope
        if prev_env is not None:
            # the capacity the load needed decays at most `rate` per minute
            assert env >= prev_env * keep ** (15 / 60) - 1e-9
        assert plan.replicas >= math.ceil(env - 1e-9)              # the plan never drops below it
        assert plan.replicas >= plan.reactive                      # nor below the current load's need
        prev_env = env


def test_small_fleet_still_comes_down():
    """5% of 10 members is half a member: ceil every period would never scale down;
    the envelope gets there."""
    p = planner(scale_down_rate_percent=5, scale_down_period_seconds=60)
    p.observe(NOW, 200_000)
    assert p.plan(NOW).replicas == 10
    seen = []
    for k in range(1, 61):
        t = NOW + 60 * k
        p.observe(t, 0)
        seen.append(p.plan(t).replicas)
    assert seen[0] == 10 and seen[-1] < 5
    assert all(a - b <= 1 for a, b in zip([10] + seen, seen))


def _forecast_request(mode, replicas=9, reason=None):
    req = cpu_request(4, "500m", policy={"predictive": {"mode": mode}}, state={"recommendations": []})
    req["observations"]["forecast"] = {"replicas": replicas, "source": "quadratic"}
    if reason:
        req["observations"]["forecast"]["reason"] = reason
    return req


def test_forecast_only_reports_and_never_changes_the_decision():
    base = decide(cpu_request(4, "500m", state={"recommendations": []}))
    r = decide(_forecast_request("ForecastOnly"))
    assert r["desired_replicas"] == base["desired_replicas"] == 4
    assert r["forecast"] == {"replicas": 9, "source": "quadratic", "mode": "ForecastOnly", "applied": False}


def test_forecast_and_scale_raises_and_reports():
    r = decide(_forecast_request("ForecastAndScale"))
    assert r["desired_replicas"] == 8           # 9, within the default scale-up rate of max(2×4, 4)
    assert r["forecast"]["applied"] is True


def test_fallback_reason_reaches_the_response():
    r = decide(_forecast_request("ForecastAndScale", replicas=0, reason="too little history (40s of 3d)"))
    assert r["desired_replicas"] == 4 and r["forecast"]["reason"].startswith("too little history")
