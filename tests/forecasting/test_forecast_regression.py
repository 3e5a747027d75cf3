"""linear / quadratic: sliding-window polynomial regression — within 1 % on ramps and
curves (also at irregular and jittered sampling), exact over long replays with epoch
times, damping, and what too few samples or non-finite values do."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scalebridge.forecasting import guarded, make_forecaster, OutOfOrderError, PolynomialForecaster


EPOCH = 1_767_225_600.0  # 2026-01-01T00:00Z: absolute epoch times, as in production


def feed(model, times, values) -> None:
    for t, v in zip(times, values):
        model.observe(float(t), float(v))


@pytest.mark.parametrize("name", ["linear", "quadratic"])
@pytest.mark.parametrize("horizon", [15.0, 120.0, 600.0])
def test_linear_ramp_within_one_percent(name: str, horizon: float) -> None:
    t = EPOCH + np.arange(0, 3600, 15.0)
    ramp = lambda x: 500.0 + 3.0 * (x - EPOCH)  # noqa: E731
    model = make_forecaster(name)
    feed(model, t, ramp(t))
    now = float(t[-1])
    f = model.forecast(now, horizon)
    expected = ramp(now + horizon)
    assert f.ok and f.reason is None
    assert f.value == pytest.approx(expected, rel=0.01)
    assert f.peak == pytest.approx(expected, rel=0.01)  # rising: the peak is at the end
    assert f.peak_at == f.at == now + horizon
    assert f.model == name


@pytest.mark.parametrize("horizon", [60.0, 300.0, 900.0])
def test_quadratic_curve_within_one_percent(horizon: float) -> None:
    t = EPOCH + np.arange(0, 1800, 10.0)
    curve = lambda x: 200.0 + 0.5 * (x - EPOCH) + 0.004 * (x - EPOCH) ** 2  # noqa: E731
    model = make_forecaster("quadratic")
    feed(model, t, curve(t))
    now = float(t[-1])
    f = model.forecast(now, horizon)
    assert f.ok
    assert f.value == pytest.approx(curve(now + horizon), rel=0.01)
    # The line cannot follow the curvature: that is what degree 2 is for.
    lin = make_forecaster("linear", window_seconds=1800)
    feed(lin, t, curve(t))
    assert abs(lin.forecast(now, 900.0).value / curve(now + 900.0) - 1) > 0.05


def test_stays_exact_over_a_long_replay_with_epoch_times() -> None:
    """The running sums are rebuilt around a moving origin: no drift over days."""
    model = make_forecaster("quadratic", window_seconds=300)
    t = EPOCH + np.arange(0, 3 * 86400, 15.0)
    values = 1000 + 100 * np.sin(2 * math.pi * (t - EPOCH) / 86400)
    feed(model, t, values)
    ramp_t = t[-1] + np.arange(15, 601, 15.0)
    feed(model, ramp_t, 2000 + 2.0 * (ramp_t - ramp_t[0]))
    now = float(ramp_t[-1])
    expected = 2000 + 2.0 * (now + 60 - ramp_t[0])
    assert model.forecast(now, 60).value == pytest.approx(expected, rel=1e-6)


def test_peak_of_a_falling_line_is_now() -> None:
    model = make_forecaster("linear")
    feed(model, EPOCH + np.arange(0, 600, 15.0), 1000 - np.arange(0, 600, 15.0))
    now = EPOCH + 585
    f = model.forecast(now, 120)
    assert f.peak_at == now
    assert f.peak == pytest.approx(1000 - 585)
    assert f.value == pytest.approx(1000 - 705)


def test_peak_at_the_vertex_of_a_concave_curve() -> None:
    model = make_forecaster("quadratic")
    x = np.arange(0, 600, 10.0)
    feed(model, EPOCH + x, 100 + 2.0 * x - 0.002 * x**2)  # vertex at x = 500
    now = EPOCH + 590
    f = model.forecast(now, 600)  # the vertex lies behind now: the curve only falls
    assert f.peak_at == now
    model2 = make_forecaster("quadratic")
    feed(model2, EPOCH + x[:30], (100 + 2.0 * x - 0.002 * x**2)[:30])
    f2 = model2.forecast(EPOCH + 290, 600)
    assert f2.peak_at == pytest.approx(EPOCH + 500, abs=1e-3)
    assert f2.peak == pytest.approx(100 + 2.0 * 500 - 0.002 * 500**2, rel=1e-9)


def test_window_forgets_old_samples() -> None:
    model = make_forecaster("linear", window_seconds=300)
    feed(model, EPOCH + np.arange(0, 3600, 15.0), np.full(240, 50.0))
    feed(model, EPOCH + 3600 + np.arange(0, 900, 15.0), np.full(60, 900.0))
    assert model.forecast(EPOCH + 4485, 120).value == pytest.approx(900.0)


def test_damping_flattens_far_extrapolation() -> None:
    t = EPOCH + np.arange(0, 1800, 15.0)
    plain = make_forecaster("linear")
    damped = make_forecaster("linear", damping_seconds=300)
    feed(plain, t, 10.0 * (t - EPOCH))
    feed(damped, t, 10.0 * (t - EPOCH))
    now = float(t[-1])
    level = 10.0 * (now - EPOCH)
    assert damped.forecast(now, 10.0).value == pytest.approx(plain.forecast(now, 10.0).value, rel=1e-3)
    far_plain, far_damped = plain.forecast(now, 3600).value, damped.forecast(now, 3600).value
    assert level < far_damped < far_plain
    assert far_damped == pytest.approx(level + 10.0 * 300 * (1 - math.exp(-12)), rel=1e-6)


def test_too_few_samples_is_flagged_and_degrades() -> None:
    model = make_forecaster("quadratic")
    f = model.forecast(EPOCH, 60)
    assert not f.ok and "no samples" in f.reason and math.isnan(f.value)
    model.observe(EPOCH, 10.0)
    model.observe(EPOCH + 60, 20.0)
    f = model.forecast(EPOCH + 60, 60)
    assert not f.ok and "degree 1" in f.reason
    assert f.value == pytest.approx(30.0)  # the line through the two points


def test_non_finite_values_are_ignored_and_order_is_enforced() -> None:
    model = make_forecaster("linear")
    feed(model, EPOCH + np.arange(0, 300, 15.0), np.full(20, 7.0))
    model.observe(EPOCH + 300, math.nan)
    model.observe(EPOCH + 315, math.inf)
    assert model.forecast(EPOCH + 315, 60).value == pytest.approx(7.0)
    with pytest.raises(OutOfOrderError):
        model.observe(EPOCH, 1.0)


@pytest.mark.parametrize(
    "params", [{"degree": 3}, {"window_seconds": 0}, {"window_seconds": math.inf}, {"damping_seconds": -1}]
)
def test_invalid_parameters(params) -> None:
    with pytest.raises(ValueError):
        PolynomialForecaster(**params)


def test_negative_horizon_is_a_caller_error() -> None:
    with pytest.raises(ValueError):
        make_forecaster("linear").forecast(EPOCH, -1)


@pytest.mark.parametrize("step", [7.0, 300.0])
@pytest.mark.parametrize("name,curve", [
    ("linear", lambda s: 1000 + 3 * s),
    ("quadratic", lambda s: 1000 + 0.5 * s + 0.001 * s * s),
])
def test_ramp_and_curve_within_one_percent_at_irregular_sampling(step, name, curve):
    m = guarded(name)
    for k in range(int(2 * 3600 / step)):
        m.observe(EPOCH + k * step, curve(k * step))
    s = (int(2 * 3600 / step) - 1) * step
    for lead in (120.0, 600.0):
        f = m.forecast(EPOCH + s, lead)
        assert f.ok, f.reason
        assert f.value == pytest.approx(curve(s + lead), rel=0.01)


def test_ramp_with_jittered_sample_times_within_one_percent():
    rng = np.random.default_rng(7)
    t = np.cumsum(rng.uniform(3.0, 40.0, 400))        # every 3–40 s, duplicates of none
    m = guarded("linear")
    for ti in t.tolist():
        m.observe(EPOCH + ti, 500 + 2 * ti)
    now = EPOCH + float(t[-1])
    f = m.forecast(now, 120.0)
    assert f.ok and f.value == pytest.approx(500 + 2 * (float(t[-1]) + 120), rel=0.01)
