"""seasonal: a daily/weekly profile × the recent level — within 5 % on a daily pattern
after three days (also at irregular and quarter-hour sampling), level changes,
one-off flash crowds, the weekly reference, bounded memory."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scalebridge.forecasting import forecast_series, guarded, make_forecaster, mape, SeasonalForecaster


EPOCH = 1_767_225_600.0  # 2026-01-01T00:00Z, a Thursday


DAY = 86400.0


def feed(model, times, values) -> None:
    for t, v in zip(np.asarray(times).tolist(), np.asarray(values).tolist()):
        model.observe(t, v)


@pytest.mark.parametrize("lead", [120.0, 600.0, 3600.0, 6 * 3600.0])
def test_pure_daily_pattern_within_five_percent_after_three_days(daily_pattern, lead: float) -> None:
    t = EPOCH + np.arange(0, 4 * DAY, 60.0)
    values = daily_pattern(t)
    predicted = forecast_series(make_forecaster("seasonal"), t, values, lead)
    scored = (t >= EPOCH + 3 * DAY) & (t + lead <= t[-1])
    actual = daily_pattern(t[scored] + lead)
    error = np.abs(predicted[scored] - actual) / actual
    assert error.max() < 0.05
    assert error.mean() < 0.01


def test_peak_over_the_horizon_matches_the_pattern(daily_pattern) -> None:
    model = make_forecaster("seasonal")
    t = EPOCH + np.arange(0, 3 * DAY, 60.0)
    feed(model, t, daily_pattern(t))
    now = float(t[-1])
    f = model.forecast(now, 12 * 3600)
    grid = now + np.arange(60.0, 12 * 3600 + 1, 60.0)
    true_peak = daily_pattern(grid).max()
    assert f.ok
    assert f.peak == pytest.approx(true_peak, rel=0.02)
    assert f.peak_at == pytest.approx(grid[np.argmax(daily_pattern(grid))], abs=600)
    assert f.value == pytest.approx(daily_pattern(now + 12 * 3600), rel=0.02)


def test_follows_a_multiplicative_level_change(daily_pattern) -> None:
    model = make_forecaster("seasonal")
    t = EPOCH + np.arange(0, 3 * DAY, 60.0)
    feed(model, t, daily_pattern(t))
    busier = t[-1] + np.arange(60.0, 30 * 60 + 1, 60.0)
    feed(model, busier, 2.0 * daily_pattern(busier))  # the same shape, twice the users
    now = float(busier[-1])
    for lead in (120.0, 1800.0, 3 * 3600.0):
        assert model.forecast(now, lead).value == pytest.approx(2.0 * daily_pattern(now + lead), rel=0.05)


def test_a_one_off_flash_crowd_is_not_repeated_next_day(daily_pattern) -> None:
    t = EPOCH + np.arange(0, 8 * DAY, 60.0)
    values = daily_pattern(t).copy()
    crowd = (t >= EPOCH + 5 * DAY + 12 * 3600) & (t < EPOCH + 5 * DAY + 14 * 3600)
    values[crowd] *= 5.0
    model = make_forecaster("seasonal")
    now = EPOCH + 7 * DAY + 11 * 3600
    feed(model, t[t <= now], values[t <= now])
    noon = model.forecast(now, 3600.0)  # 12:00 on day 8: the median of 7 days ignores day 6
    assert noon.value == pytest.approx(daily_pattern(now + 3600.0), rel=0.05)


def test_weekly_reference_learns_the_weekend() -> None:
    """Weekdays peak in the afternoon, weekends are flat and low."""

    def load(t: np.ndarray) -> np.ndarray:
        days = np.floor((t - EPOCH) / DAY).astype(int)
        weekend = ((days + 3) % 7) >= 5  # EPOCH is a Thursday
        x = 2 * math.pi * (t - EPOCH) / DAY
        return np.where(weekend, 300.0, 1000 + 600 * np.sin(x))

    t = EPOCH + np.arange(0, 17 * DAY, 300.0)
    values = load(t)
    lead = 3600.0
    saturday = (t >= EPOCH + 16 * DAY) & (t < EPOCH + 17 * DAY - lead)  # day 17 is a Saturday
    errors = {}
    variants = {"blend": {}, "daily only": {"week_seconds": None}, "weekly only": {"weekly_weight": 1.0}}
    for name, params in variants.items():
        predicted = forecast_series(make_forecaster("seasonal", **params), t, values, lead)
        errors[name] = mape(predicted[saturday], load(t[saturday] + lead))
    assert errors["weekly only"] < 0.01
    assert errors["blend"] < 0.8 * errors["daily only"]


def test_before_one_season_it_holds_the_recent_level_and_says_so() -> None:
    model = make_forecaster("seasonal")
    assert math.isnan(model.forecast(EPOCH, 60).value)
    feed(model, EPOCH + np.arange(0, 3600, 60.0), np.full(60, 42.0))
    f = model.forecast(EPOCH + 3540, 120)
    assert not f.ok and "no history one season before" in f.reason
    assert f.value == pytest.approx(42.0)


def test_memory_is_bounded(daily_pattern) -> None:
    model = SeasonalForecaster(bucket_seconds=300, history_seconds=2 * DAY)
    t = EPOCH + np.arange(0, 10 * DAY, 300.0)
    feed(model, t, daily_pattern(t))
    slots = 2 * 288 + 288  # history + one season of 5-minute buckets
    assert len(model._sum) == len(model._cnt) == len(model._id) == slots
    assert len(model._cache) < 10
    assert model.forecast(float(t[-1]), 600).value == pytest.approx(daily_pattern(t[-1] + 600), rel=0.02)


@pytest.mark.parametrize(
    "params",
    [
        {"bucket_seconds": 0},
        {"bucket_seconds": 7},  # a day is not a whole number of 7-second buckets
        {"history_seconds": 3600},
        {"weekly_weight": 1.5},
        {"level_half_life_seconds": 0},
        {"max_level_ratio": 0.5},
    ],
)
def test_invalid_parameters(params) -> None:
    with pytest.raises(ValueError):
        SeasonalForecaster(**params)


def daily(t):
    x = 2 * math.pi * (np.asarray(t) - EPOCH) / DAY
    return 1000 + 500 * np.sin(x) + 200 * np.sin(2 * x + 1)


def test_seasonal_with_quarter_hour_samples_still_forecasts():
    m = guarded("seasonal")
    t = EPOCH + np.arange(0, 4 * DAY, 900.0)
    for ti, vi in zip(t.tolist(), daily(t).tolist()):
        m.observe(ti, vi)
    now = float(t[-1])
    f = m.forecast(now, 600.0)
    assert f.ok, f.reason
    assert f.value == pytest.approx(float(daily(now + 600.0)), rel=0.05)


@pytest.mark.parametrize("step", [7.0, 300.0])
def test_seasonal_daily_pattern_within_five_percent_at_irregular_sampling(step):
    m = guarded("seasonal")
    t = EPOCH + np.arange(0, 3 * DAY + 3600, step)
    for ti, vi in zip(t.tolist(), daily(t).tolist()):
        m.observe(ti, vi)
    now = float(t[-1])
    for lead in (120.0, 600.0, 3600.0):
        f = m.forecast(now, lead)
        assert f.ok, f.reason
        assert f.value == pytest.approx(float(daily(now + lead)), rel=0.05)
