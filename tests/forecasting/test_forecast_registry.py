"""Registry, the auto model and the evaluation helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scalebridge.forecasting import (
    MODELS,
    AutoForecaster,
    Forecaster,
    forecast_series,
    make_forecaster,
    mape,
    mape_at_lead,
    register_forecaster,
)
from scalebridge.forecasting.naive import NaiveForecaster

EPOCH = 1_767_225_600.0
DAY = 86400.0


def test_registry_names_and_protocol() -> None:
    assert {"naive", "linear", "quadratic", "seasonal", "auto"} <= set(MODELS)
    for name in MODELS:
        model = make_forecaster(name)
        assert isinstance(model, Forecaster)
        assert model.name == name


def test_params_reach_the_model() -> None:
    model = make_forecaster("quadratic", window_seconds=120, damping_seconds=60)
    assert model.window_seconds == 120 and model.damping_seconds == 60
    assert make_forecaster("linear").degree == 1


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown forecaster 'prophet'; valid: auto, linear, naive"):
        make_forecaster("prophet")


def test_register_a_plugin_model() -> None:
    factory = lambda **params: NaiveForecaster(name="mine", **params)  # noqa: E731
    try:
        register_forecaster("mine", factory)
        assert make_forecaster("mine").name == "mine"
        with pytest.raises(ValueError, match="already registered"):
            register_forecaster("mine", lambda **p: NaiveForecaster())
        register_forecaster("mine", NaiveForecaster, replace=True)
    finally:
        MODELS.pop("mine", None)


def test_auto_switches_from_quadratic_to_seasonal(daily_pattern) -> None:
    model = make_forecaster("auto")
    assert isinstance(model, AutoForecaster)
    t = EPOCH + np.arange(0, 2 * DAY, 60.0)
    values = daily_pattern(t)
    early = t < EPOCH + DAY
    for ti, vi in zip(t[early].tolist(), values[early].tolist()):
        model.observe(ti, vi)
    assert model.forecast(float(t[early][-1]), 120).model == "quadratic"
    for ti, vi in zip(t[~early].tolist(), values[~early].tolist()):
        model.observe(ti, vi)
    f = model.forecast(float(t[-1]), 3600)
    assert f.model == "seasonal" and f.ok
    assert f.value == pytest.approx(daily_pattern(t[-1] + 3600), rel=0.02)


def test_auto_can_wait_three_days_like_compute_engine(daily_pattern) -> None:
    model = make_forecaster("auto", seasonal_after_seconds=3 * DAY)
    t = EPOCH + np.arange(0, 2 * DAY, 300.0)
    for ti, vi in zip(t.tolist(), daily_pattern(t).tolist()):
        model.observe(ti, vi)
    assert model.forecast(float(t[-1]), 120).model == "quadratic"


def test_forecast_series_by_name_and_by_instance() -> None:
    t = EPOCH + np.arange(0, 3600, 60.0)
    v = 10 + 0.1 * (t - EPOCH)
    by_name = forecast_series("linear", t, v, 120)
    by_model = forecast_series(make_forecaster("linear"), t, v, 120)
    assert by_name.shape == t.shape
    np.testing.assert_array_equal(by_name, by_model)
    assert by_name[-1] == pytest.approx(10 + 0.1 * (t[-1] + 120 - EPOCH))
    with pytest.raises(TypeError):
        forecast_series(make_forecaster("linear"), t, v, 120, window_seconds=60)
    with pytest.raises(ValueError):
        forecast_series("linear", t, v[:-1], 120)


def test_mape_at_lead_on_a_ramp() -> None:
    t = EPOCH + np.arange(0, 7200, 60.0)
    v = 100 + (t - EPOCH) / 60.0  # +1 per minute
    assert mape_at_lead(t, v, "linear", 120, score_from=EPOCH + 60) == pytest.approx(0.0, abs=1e-9)
    # Persistence is off by exactly 2 at a 2-minute lead.
    scored = (t + 120 <= t[-1])
    expected = np.mean(2.0 / (v[scored] + 2.0))
    assert mape_at_lead(t, v, "naive", 120) == pytest.approx(expected)
    later = t >= EPOCH + 3600
    expected_later = np.mean(2.0 / (v[scored & later] + 2.0))
    assert mape_at_lead(t, v, "naive", 120, score_from=EPOCH + 3600) == pytest.approx(expected_later)


def test_mape_skips_zero_actuals_and_missing_forecasts() -> None:
    assert mape([1.0, 5.0, math.nan, 2.0], [0.0, 4.0, 3.0, 2.0]) == pytest.approx(0.125)
    assert math.isnan(mape([1.0], [0.0]))
    t = EPOCH + np.arange(0, 600, 60.0)
    v = np.array([5, 5, 0, 5, 5, 0, 5, 5, 5, 5], dtype=float)
    assert math.isfinite(mape_at_lead(t, v, "naive", 60))
