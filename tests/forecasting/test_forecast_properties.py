"""Invariants every model keeps, checked with hypothesis."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalebridge.forecasting import SeasonalForecaster, guarded, make_forecaster

EPOCH = 1_767_225_600.0

# Small seasons so hypothesis can feed several of them quickly; the logic is
# the same as with days and weeks.
SMALL_SEASONAL = {
    "bucket_seconds": 60.0,
    "season_seconds": 600.0,
    "week_seconds": 1800.0,
    "history_seconds": 3600.0,
    "level_half_life_seconds": 30.0,
}


def build(name: str):
    if name == "seasonal-small":
        return SeasonalForecaster(**SMALL_SEASONAL)
    if name == "auto-small":
        return make_forecaster("auto", seasonal_after_seconds=600.0, seasonal=SMALL_SEASONAL)
    return make_forecaster(name)


NAMES = ["naive", "linear", "quadratic", "seasonal", "seasonal-small", "auto", "auto-small"]

steps = st.floats(min_value=1.0, max_value=120.0)
values = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
horizons = st.floats(min_value=0.0, max_value=7200.0)


@st.composite
def series(draw, min_size: int = 2, max_size: int = 120) -> list[tuple[float, float]]:
    n = draw(st.integers(min_value=min_size, max_value=max_size))
    gaps = draw(st.lists(st.floats(min_value=0.0, max_value=600.0), min_size=n, max_size=n))
    ys = draw(st.lists(values, min_size=n, max_size=n))
    out, t = [], EPOCH + draw(st.floats(min_value=0.0, max_value=1e6))
    for gap, y in zip(gaps, ys):
        t += gap
        out.append((t, y))
    return out


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(c=values, step=steps, horizon=horizons, n=st.integers(min_value=3, max_value=200))
def test_constant_series_forecasts_the_constant(name: str, c: float, step: float, horizon: float, n: int) -> None:
    model = build(name)
    for i in range(n):
        model.observe(EPOCH + i * step, c)
    f = model.forecast(EPOCH + (n - 1) * step, horizon)
    tol = 1e-6 * max(1.0, c)
    assert f.value == pytest.approx(c, abs=tol)
    assert f.peak == pytest.approx(c, abs=tol)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None)
@given(data=series(), horizon=horizons)
def test_same_input_same_output(name: str, data, horizon: float) -> None:
    a, b = build(name), build(name)
    outs = []
    for model in (a, b):
        seen = []
        for t, y in data:
            model.observe(t, y)
            seen.append(model.forecast(t, horizon))
        # Asking again changes nothing: forecast() does not learn.
        seen.append(model.forecast(data[-1][0], horizon))
        assert seen[-1] == seen[-2] or (math.isnan(seen[-1].value) and math.isnan(seen[-2].value))
        outs.append(seen)
    for fa, fb in zip(*outs):
        assert repr(fa) == repr(fb)  # repr: NaN == NaN


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None)
@given(data=series(), horizon=horizons)
def test_peak_bounds_the_value_and_lies_in_the_horizon(name: str, data, horizon: float) -> None:
    model = build(name)
    for t, y in data:
        model.observe(t, y)
    now = data[-1][0]
    f = model.forecast(now, horizon)
    assert f.at == now + horizon
    if math.isfinite(f.value):
        assert f.peak >= f.value - 1e-9 * max(1.0, abs(f.value))
        assert now <= f.peak_at <= f.at
    if not f.ok:
        assert f.reason


@pytest.mark.parametrize("name", ["naive", "linear", "quadratic", "seasonal-small"])
@settings(max_examples=25, deadline=None)
@given(data=series(min_size=5), horizon=horizons, k=st.floats(min_value=0.01, max_value=100.0))
def test_scaling_the_load_scales_the_forecast(name: str, data, horizon: float, k: float) -> None:
    a, b = build(name), build(name)
    for t, y in data:
        a.observe(t, y)
        b.observe(t, k * y)
    now = data[-1][0]
    fa, fb = a.forecast(now, horizon), b.forecast(now, horizon)
    scale = max(abs(y) for _, y in data) * k * 1e-6 + 1e-9
    if math.isfinite(fa.value):
        assert fb.value == pytest.approx(k * fa.value, rel=1e-6, abs=scale * (1 + horizon))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.floats(min_value=-100.0, max_value=900.0), st.floats(allow_nan=True, allow_infinity=True)),
        max_size=60,
    ),
    horizon=horizons,
)
def test_guard_never_raises_and_ok_means_usable(name: str, data, horizon: float) -> None:
    g = guarded(build(name), min_history_seconds=0.0)
    for t, y in data:
        g.observe(EPOCH + t, y)  # out-of-order times included: dropped, not raised
        f = g.forecast(EPOCH + t, horizon)
        if f.ok:
            assert math.isfinite(f.value) and math.isfinite(f.peak)
            assert f.value >= 0.0 and f.peak >= 0.0
        else:
            assert f.reason
