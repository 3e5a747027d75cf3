"""The planner's inner constants as ``predictive`` keys (issue #30: the leave-one-out
selects them on the other workloads instead of their being fixed on ours): the defaults
are the constants, each key is validated, and each one changes what it names.

Source: docs/predictive.md ("How the plan is made"), benchmarks/frontier.py CANDIDATES."""

import numpy as np
import pytest

from scalebridge.forecasting import planner as predictive, risk
from scalebridge.forecasting import guard
from scalebridge.engine import load_policy
from scalebridge.errors import RequestError
from scalebridge.policy import Predictive
from scalebridge.forecasting.planner import PredictivePlanner, fit_error_model
from scalebridge.forecasting.risk import ReactiveBaseline

CAP = 25_000.0


def test_the_defaults_are_the_constants_they_replace():
    spec = Predictive()
    assert spec.ramp_significance == predictive.RAMP_SIGNIFICANCE
    assert spec.trend_significance == predictive.TREND_SIGNIFICANCE
    assert spec.trend_size == predictive.TREND_SIZE
    assert spec.outlier_fence_iqr == predictive.OUTLIER_FENCE
    assert spec.baseline_reaction_seconds == risk.REACTION_SECONDS
    assert spec.trend_window_seconds == predictive.TREND_SECONDS
    assert spec.margin_first_fit_seconds == predictive.MARGIN_MIN_HISTORY_SECONDS
    assert spec.guard_max_mape == guard.DEFAULT_MAX_MAPE
    assert spec.scale_down_adaptation is None


@pytest.mark.parametrize("key, bad", [("ramp_significance", 0), ("trend_significance", -1), ("trend_size", -0.5),
                                      ("outlier_fence_iqr", 0), ("baseline_reaction_seconds", -1),
                                      ("trend_size", "big"), ("trend_window_seconds", 0),
                                      ("margin_first_fit_seconds", "-1m"), ("guard_max_mape", 0)])
def test_each_key_is_validated(key, bad):
    with pytest.raises(RequestError, match=key):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "margin_quantile": 0.99, key: bad}})


def test_durations_are_accepted_as_elsewhere():
    assert Predictive(baseline_reaction_seconds="1m").baseline_reaction_seconds == 60.0
    assert Predictive(trend_window_seconds="10m").trend_window_seconds == 600.0
    assert Predictive(margin_first_fit_seconds="2h").margin_first_fit_seconds == 7200.0


def fitted(**kw):
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, target_utilization=0.7, model="linear",
                      margin_quantile=0.99, lead_time_seconds=120, **kw)
    p = PredictivePlanner(spec, startup_seconds=120)
    rng = np.random.default_rng(1)
    t = 0.0
    for k in range(360):
        t = 15.0 * k
        p.observe(t, 200_000 * (1 + rng.uniform(-0.02, 0.02)))
        p.plan(t)
    assert p.error_model is not None
    return p, t


def rise(p, t, per_tick):
    for k in range(1, 21):
        p.observe(t + 15 * k, (200_000 + per_tick * k) * (1 + 0.01 * (-1) ** k))   # a line, 1% off it
    return p.ramp_peak(t + 15 * 20)


def test_the_trend_thresholds_decide_whether_a_rise_is_extrapolated():
    steady = 8_000.0                               # +80% over 5 minutes, 3σ of the error model
    only_trend = {"ramp_significance": 1e9}        # the 5-sample line off
    assert rise(*fitted(**only_trend), steady) is not None
    assert rise(*fitted(trend_size=50.0, **only_trend), steady) is None
    assert rise(*fitted(trend_significance=1e4, **only_trend), steady) is None


def test_the_ramp_significance_decides_whether_a_step_is_extrapolated():
    def step(**kw):
        p, t = fitted(trend_significance=1e9, **kw)       # the 5-minute line off: only the 5 samples
        for k, x in enumerate((200_000, 200_000, 230_000, 260_000, 290_000), start=1):
            p.observe(t + 15 * k, x)
        return p.ramp_peak(t + 75)
    assert step() is not None
    assert step(ramp_significance=100.0) is None


def test_the_fence_decides_which_errors_are_outliers():
    rng = np.random.default_rng(0)
    r = np.concatenate([0.05 * rng.standard_normal(2000), [0.6] * 20])
    x = np.full(r.size, 0.1)
    outer, inner = fit_error_model(r, x, 0.999), fit_error_model(r, x, 0.999, fence=100.0)
    assert outer.a < inner.a


def test_the_reaction_time_delays_the_replayed_hpas_members():
    def short_for(reaction):
        hpa = ReactiveBaseline(0.6, CAP, 120, reaction)
        hpa.observe(0.0, 100_000)
        ticks = 0
        for k in range(1, 40):
            ticks += bool(hpa.observe(15.0 * k, 200_000))
        return ticks
    assert short_for(60.0) - short_for(30.0) == 2
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, margin_quantile=0.99,
                      reactive_baseline_utilization=0.6, baseline_reaction_seconds=60)
    assert PredictivePlanner(spec, startup_seconds=120).baseline.delay == 180.0


def test_the_margin_is_first_fitted_after_margin_first_fit_seconds_of_errors():
    """Until that much forecast-error history is known the margin is 1 / target_utilization;
    the 90 minutes of `fitted` hold enough for an hour and not for two."""
    p, _ = fitted()
    assert p.error_model is not None
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, target_utilization=0.7, model="linear",
                      margin_quantile=0.99, lead_time_seconds=120, margin_first_fit_seconds="2h")
    late = PredictivePlanner(spec, startup_seconds=120)
    rng = np.random.default_rng(1)
    for k in range(360):
        t = 15.0 * k
        late.observe(t, 200_000 * (1 + rng.uniform(-0.02, 0.02)))
        late.plan(t)
    assert late.error_model is None
    assert late.margin(t, 200_000.0) == pytest.approx(1 / 0.7)


def test_the_trend_window_decides_how_long_a_rise_the_line_sees():
    """A rise of 8,000 a tick for 20 ticks (5 minutes) under 1% noise: the 5-minute line
    extrapolates it; a 30-second line holds too few samples to pass its t-test."""
    steady = 8_000.0
    only_trend = {"ramp_significance": 1e9}        # the 5-sample line off
    assert rise(*fitted(**only_trend), steady) is not None
    assert rise(*fitted(trend_window_seconds=30, **only_trend), steady) is None


def test_the_guard_max_mape_reaches_the_guard():
    """guard_max_mape is the planner's guard's gate: a forecast whose recent error is above it
    is unreliable, and the plan falls back to the reactive decision."""
    from scalebridge.forecasting.planner import default_model
    assert default_model(Predictive(model="linear")).max_mape == guard.DEFAULT_MAX_MAPE
    assert default_model(Predictive(model="linear", guard_max_mape=0.2)).max_mape == 0.2
