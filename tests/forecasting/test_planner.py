"""The predictive planner (scalebridge.forecasting.planner): fast up with the lead time, slow down
at the scale-down rate, a fallback with a reason; the noise model (count and burst
noise, flash crowds, sudden drops), the learned margin, ramps extrapolated or not;
ForecastOnly and ForecastAndScale in a decision.

Source: docs/predictive.md."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scalebridge import decide
from scalebridge.policy import Predictive
from scalebridge.forecasting.planner import ErrorModel, fit_error_model, PredictivePlanner
from scalebridge.testing.requests import cpu_request, NOW


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
    """The proposal — forecast capacity included — loses at most `rate` per minute
    between any two instants, give or take the one member that rounding up can
    add, and never drops below the reactive proposal."""
    p = planner(scale_down_rate_percent=rate, scale_down_period_seconds=60)
    keep = 1 - rate / 100
    seen = []
    for k, load in enumerate(loads):
        t = NOW + 15 * k
        p.observe(t, load)
        plan = p.plan(t)
        for s, earlier in seen:
            assert plan.replicas > earlier * keep ** ((t - s) / 60) - 1 - 1e-9
        assert plan.replicas >= plan.reactive
        seen.append((t, plan.replicas))


def test_forecast_capacity_comes_down_at_the_rate_too():
    """A ramp the linear model extrapolates, then the load collapses: what the
    forecast asked for is handed back at 5% a minute, not at once."""
    p = planner(scale_down_rate_percent=5, scale_down_period_seconds=60)
    t = NOW
    for k in range(121):
        t = NOW + 15 * k
        p.observe(t, 100_000 + 1_500 * k)         # 100/s, as in the ramp test
    top = p.plan(t).replicas
    assert top > math.ceil(p.last_load / 25000)  # the forecast is above what the load needs
    p.observe(t + 15, 0.0)
    assert p.plan(t + 15).replicas == top         # 15 s at 5%/min: under one member
    after = [p.plan(t + 15 + 60 * m).replicas for m in range(1, 11)]
    assert all(b >= math.floor(a * 0.95) for a, b in zip([top] + after, after))
    assert after[-1] < top


def test_small_fleet_still_comes_down():
    """5% of 10 members is half a member: ceil every period would never scale down;
    the real-valued proposal gets there."""
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


def test_count_noise_is_fitted_as_the_poisson_part():
    """Relative errors of a count with 12 per member: σ² = 1 / (12 × level), so b ≈ 1/12, a ≈ 0."""
    rng = np.random.default_rng(1)
    level = rng.uniform(0.5, 30, 20000)
    lam = 12 * level
    r = rng.poisson(lam) / lam - 1
    m = fit_error_model(r, 1 / level, 0.99)
    assert m.a < 0.002 and abs(m.b - 1 / 12) < 0.01
    assert 2.0 < m.q < 2.7                      # about the normal 99th percentile (2.33)
    assert m.margin(1.0) > m.margin(4.0) > m.margin(30.0) > 1.0
    assert m.margin(4.0) - 1 == pytest.approx((m.margin(1.0) - 1) / 2, rel=0.1)


def test_burst_noise_is_fitted_as_the_multiplicative_part():
    """Bursts that are 5% of the load at any level: a margin the same share at every level."""
    rng = np.random.default_rng(2)
    level = rng.uniform(0.5, 30, 20000)
    r = rng.normal(0, 0.05, level.size)
    m = fit_error_model(r, 1 / level, 0.99)
    assert abs(math.sqrt(m.a) - 0.05) < 0.003 and m.b < 0.001
    assert m.margin(1.0) == pytest.approx(m.margin(30.0), rel=0.02)
    assert m.margin(10.0) == pytest.approx(1 + 2.33 * 0.05, abs=0.015)


def test_a_flash_crowd_is_left_out_of_the_margin():
    rng = np.random.default_rng(3)
    level = np.full(5000, 10.0)
    r = rng.normal(0, 0.05, level.size)
    calm = fit_error_model(r, 1 / level, 0.999)
    r[:10] = 9.0                                  # ten forecasts missed a 10× surge
    assert fit_error_model(r, 1 / level, 0.999).margin(10) == pytest.approx(calm.margin(10), rel=0.02)


def test_a_sudden_drop_is_left_out_of_the_noise():
    """A load that falls off a cliff (a sawtooth's reset) leaves a few forecasts
    far above what came: errors near -100% that are no more noise than a flash
    crowd's +900%. Kept, they inflated σ fourfold — and σ is also the yardstick the
    5-minute trend line must rise beyond, so the next ramp went unseen."""
    rng = np.random.default_rng(3)
    level = np.full(5000, 10.0)
    r = rng.normal(0, 0.05, level.size)
    calm = fit_error_model(r, 1 / level, 0.999)
    r[:10] = -0.9                                 # ten forecasts made just before the drop
    m = fit_error_model(r, 1 / level, 0.999)
    assert m.sigma(10) == pytest.approx(calm.sigma(10), rel=0.02)
    assert m.margin(10) == pytest.approx(calm.margin(10), rel=0.02)


def test_no_error_gives_no_margin():
    assert fit_error_model(np.zeros(100), np.full(100, 0.5), 0.99) == ErrorModel(0.0, 0.0, 0.0)


def _quantile_planner(**kw):
    return planner(model="linear", margin_quantile=0.99, **kw)


def test_the_margin_is_learned_from_the_planners_own_errors():
    """Flat load with ±4% bursts: after an hour the plan covers the bursts, not target_utilization."""
    rng = np.random.default_rng(4)
    p = _quantile_planner()
    for k in range(480):
        t = NOW + 15 * k
        p.observe(t, 200_000 * (1 + rng.uniform(-0.04, 0.04)))
        plan = p.plan(t)
    assert p.error_model is not None
    assert 1.02 < p.error_model.margin(8.0) < 1.10
    assert plan.replicas == math.ceil(200_000 * p.error_model.margin(8.0) / 25000 - 1e-9) or \
        plan.replicas == plan.reactive


def test_a_sustained_surge_is_extrapolated_and_noise_is_not():
    """The 5-minute line: a 10%/minute surge is planned for at now + lead; the same noise without
    the surge is not extrapolated."""
    rng = np.random.default_rng(5)

    def run(slope):
        p = _quantile_planner()
        t = NOW
        for k in range(400):
            t = NOW + 15 * k
            minute = k // 4                                    # a per-minute metric read every 15 s
            base = 100_000 * (1 + rng.normal(0, 0.01))
            surge = 100_000 * slope * max(0, minute - 90)
            p.observe(t, base + surge)
            p.plan(t)
        return p, t

    flat, t = run(0.0)
    assert flat.ramp_peak(t) is None
    surging, t = run(0.10)
    ahead = surging.ramp_peak(t)
    last = surging.last_load
    assert ahead is not None and ahead > last * 1.1            # 2 minutes and more ahead of the last sample


def test_a_trend_within_the_forecasts_own_noise_is_not_chased():
    """The same clean 1%/minute rise: extrapolated where the forecast's error is 1%
    (a busy site), left to the margin where it is 30% (a few requests a minute)."""
    p = _quantile_planner()
    t = NOW
    for k in range(21):
        t = NOW + 15 * k
        p.observe(t, 25_000 * (1 + 0.01 * k / 4))
    p.error_model = ErrorModel(a=0.0, b=0.09, q=3.0)          # σ(1 member) = 30%
    assert p.ramp_peak(t) is None
    p.error_model = ErrorModel(a=0.0001, b=0.0, q=3.0)        # σ = 1%
    ahead = p.ramp_peak(t)
    assert ahead == pytest.approx(25_000 * (1 + 0.01 * (20 + 8) / 4), rel=1e-6)


def test_ramps_are_not_extrapolated_when_switched_off():
    """``extrapolate_ramps: false`` (count noise): the 10%/minute surge that the
    lines extrapolate is left to the forecast and its margin."""
    def run(**kw):
        p = _quantile_planner(**kw)
        rng = np.random.default_rng(5)
        fired, replicas = 0, []
        for k in range(400):
            t = NOW + 15 * k
            minute = k // 4
            p.observe(t, 100_000 * (1 + rng.normal(0, 0.01)) + 100_000 * 0.10 * max(0, minute - 90))
            fired += p.ramp_peak(t) is not None
            plan = p.plan(t)
            replicas.append(plan.replicas)
            if plan.forecast_peak is not None and p.error_model is not None:
                # never below the forecast peak with its learned margin
                assert plan.replicas >= math.ceil(
                    plan.forecast_peak * p.error_model.margin(plan.forecast_peak / 25000) / 25000 - 1e-9)
        return fired, sum(replicas[360:])

    fired_on, paid_on = run()
    fired_off, paid_off = run(extrapolate_ramps=False)
    assert fired_on > 0 and fired_off == 0
    assert paid_off < paid_on


def test_the_count_noise_example_is_the_main_example_without_ramps_or_budget_at_a_lower_quantile():
    from pathlib import Path
    from scalebridge.policyfile import load_policy_file
    examples = Path(__file__).resolve().parents[2] / "examples" / "predictive"
    main = load_policy_file(examples / "policy.yaml")
    noise = load_policy_file(examples / "count-noise.yaml")
    assert main.predictive.extrapolate_ramps is True
    assert noise.predictive.extrapolate_ramps is False
    assert noise.predictive.margin_quantile < main.predictive.margin_quantile
    assert noise.predictive.reactive_baseline_utilization is None
    same = noise.model_copy(update={
        "name": main.name,
        "predictive": noise.predictive.model_copy(update={
            "extrapolate_ramps": True, "margin_quantile": main.predictive.margin_quantile,
            "reactive_baseline_utilization": main.predictive.reactive_baseline_utilization})})
    assert same.model_dump() == main.model_dump()


@pytest.mark.parametrize("value", ["no", "false", 0])
def test_extrapolate_ramps_is_a_real_boolean(value):
    """YAML 1.1's ``no`` is a string in scalebridge policy files: refused, not read as false."""
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match="extrapolate_ramps"):
        Predictive(mode="ForecastAndScale", capacity_per_replica=25000, extrapolate_ramps=value)


def _flat_fitted_planner():
    """A quantile planner after 90 minutes of flat ±2% load: its margin is fitted."""
    rng = np.random.default_rng(9)
    p = _quantile_planner()
    t = NOW
    for k in range(360):
        t = NOW + 15 * k
        p.observe(t, 200_000 * (1 + rng.uniform(-0.02, 0.02)))
        p.plan(t)
    assert p.error_model is not None
    return p, t


def test_a_ramp_that_stops_within_the_lead_time_is_withdrawn_at_once():
    """Members a ramp asked for less than a lead time ago are still starting: when
    the ramp stops they go at once instead of at the scale-down rate."""
    p, t = _flat_fitted_planner()
    before = p.plan(t).replicas
    p.ramp_peak = lambda now: 400_000.0            # a ramp fires for a minute
    during = [p.plan(t + 15 * k).replicas for k in range(1, 5)]
    del p.ramp_peak
    after = p.plan(t + 75).replicas
    assert min(during) >= 16 > before + 6
    assert after <= before + 1


def test_a_ramp_sustained_for_the_lead_time_comes_down_at_the_scale_down_rate():
    """Once the ramp has asked for its members for a whole lead time they serve,
    and what they add comes down no faster than 5% a minute."""
    p, t = _flat_fitted_planner()
    p.ramp_peak = lambda now: 400_000.0
    k = 0
    while 15 * k <= p.lead:
        k += 1
        top = p.plan(t + 15 * k).replicas
    del p.ramp_peak
    t += 15 * k
    seen = [p.plan(t + 15 * j).replicas for j in range(1, 41)]
    assert seen[0] >= top - 1
    for j, n in enumerate(seen, start=1):
        assert n >= math.ceil(top * 0.95 ** (15 * j / 60) - 1e-9) - 1
    assert seen[-1] < top                         # and it does come down


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(50_000, 900_000), min_size=20, max_size=60))
def test_serving_members_come_down_no_faster_than_the_rate(loads):
    """With ramps and a fitted margin: the held proposal (what the load, its
    forecast and any ramp sustained for a lead time asked for — the members that
    serve) loses at most 5% a minute, give or take the member rounding adds, and
    the plan is above it only while a ramp that fired within the lead time asks
    for members still starting."""
    p, t0 = _flat_fitted_planner()
    held, fired = [], []
    for k, load in enumerate(loads, start=1):
        t = t0 + 15 * k
        p.observe(t, load)
        if p.ramp_peak(t) is not None:
            fired.append(t)
        replicas = p.plan(t).replicas
        floor = math.ceil(p.envelope - 1e-9)
        assert replicas >= floor
        if replicas > floor:
            assert fired and fired[-1] > t - p.lead
        for s, earlier in held:
            assert floor > earlier * 0.95 ** ((t - s) / 60) - 1 - 1e-9
        held.append((t, floor))
