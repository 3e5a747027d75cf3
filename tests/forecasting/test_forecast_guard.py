"""The guard (scalebridge.forecasting.guard): ok=False with a reason whenever a forecast
must not be acted on — too little, stale or non-finite history, a large recent error,
a model worse than persistence, a broken model at any sampling interval."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scalebridge.forecasting import Forecast, guarded, GuardedForecaster, make_forecaster


EPOCH = 1_767_225_600.0


def feed(model, times, values) -> None:
    for t, v in zip(np.asarray(times, dtype=float).tolist(), np.asarray(values, dtype=float).tolist()):
        model.observe(t, v)


def steady(model, start: float, seconds: float, value: float, step: float = 15.0, lead: float = 120.0) -> float:
    """Feed a constant series tick by tick, forecasting each tick like a controller; return the last t."""
    t = start
    while t < start + seconds:
        model.observe(t, value)
        model.forecast(t, lead)
        t += step
    return t - step


def test_no_history() -> None:
    g = guarded("linear")
    f = g.forecast(EPOCH, 120)
    assert not f.ok and "no history" in f.reason and math.isnan(f.value)


@pytest.mark.parametrize("name,needed", [("linear", 450.0), ("quadratic", 900.0), ("seasonal", 3 * 86400.0)])
def test_too_little_history(name: str, needed: float) -> None:
    g = guarded(name)
    last = steady(g, EPOCH, 300, 100.0)
    f = g.forecast(last, 120)
    assert not f.ok
    assert f"too little history (285s of {needed:g}s needed)" in f.reason
    assert f.value == pytest.approx(100.0)  # the numbers are still there for reporting


def test_enough_history_is_ok_and_passes_the_numbers_through() -> None:
    inner, twin = make_forecaster("linear"), make_forecaster("linear")
    g = GuardedForecaster(inner)
    t = EPOCH + np.arange(0, 1800, 15.0)
    feed(g, t, 100 + 0.5 * (t - EPOCH))
    feed(twin, t, 100 + 0.5 * (t - EPOCH))
    f = g.forecast(float(t[-1]), 120)
    assert f.ok and f.reason is None
    assert f == twin.forecast(float(t[-1]), 120)


def test_nan_input_falls_back_then_recovers() -> None:
    g = guarded("linear")
    last = steady(g, EPOCH, 1800, 100.0)
    g.observe(last + 15, math.nan)
    f = g.forecast(last + 15, 120)
    assert not f.ok and "non-finite input (nan" in f.reason
    g.observe(last + 30, 100.0)  # a good sample, but the bad one is still recent
    assert "non-finite" in g.forecast(last + 30, 120).reason
    last = steady(g, last + 45, 120, 100.0)
    assert g.forecast(last, 120).ok


def test_inf_input_falls_back() -> None:
    g = guarded("quadratic")
    last = steady(g, EPOCH, 1800, 100.0)
    g.observe(last + 15, math.inf)
    assert "non-finite input (inf" in g.forecast(last + 15, 120).reason


def test_nan_only_input() -> None:
    g = guarded("seasonal")
    g.observe(EPOCH, math.nan)
    f = g.forecast(EPOCH, 60)
    assert not f.ok and "non-finite" in f.reason


def test_large_recent_error_falls_back_then_recovers() -> None:
    g = guarded("linear")
    last = steady(g, EPOCH, 1800, 100.0)
    assert g.forecast(last, 120).ok
    # The load triples at once: every forecast made before the jump misses by 67%.
    t = last + 15
    reasons = []
    while t < last + 300:
        g.observe(t, 300.0)
        reasons.append(g.forecast(t, 120).reason)
        t += 15
    flagged = [r for r in reasons if r]
    assert flagged and all("recent forecast error too large (MAPE" in r for r in flagged)
    # A long steady stretch at the new level: the model is right again.
    last = steady(g, t, 3600, 300.0)
    assert g.forecast(last, 120).ok
    assert g.recent_mape == pytest.approx(0.0, abs=1e-9)


def test_error_threshold_is_configurable() -> None:
    lax = guarded("linear", max_mape=10.0)
    strict = guarded("linear", max_mape=0.01)
    for g in (lax, strict):
        last = steady(g, EPOCH, 1800, 100.0)
        steady(g, last + 15, 180, 115.0)  # a 13% step
    assert lax.forecast(last + 180, 120).ok
    assert "recent forecast error" in strict.forecast(last + 180, 120).reason


def test_negative_forecast_falls_back() -> None:
    g = guarded("linear")
    t = EPOCH + np.arange(0, 1800, 15.0)
    feed(g, t, 2000 - 1.0 * (t - EPOCH))  # 2000 → 215, falling 1/s
    f = g.forecast(float(t[-1]), 600)
    assert f.value < 0
    assert not f.ok and "negative forecast" in f.reason


def test_stale_input_falls_back() -> None:
    g = guarded("linear")
    last = steady(g, EPOCH, 1800, 100.0)
    assert g.forecast(last + 60, 120).ok
    f = g.forecast(last + 900, 120)
    assert not f.ok and "stale input (last sample 900s before now)" in f.reason


def test_model_flags_pass_through() -> None:
    g = guarded(make_forecaster("seasonal", min_history_seconds=0))
    steady(g, EPOCH, 3600, 50.0)
    f = g.forecast(EPOCH + 3585, 120)
    assert not f.ok and "no history one season before" in f.reason


def test_out_of_order_samples_are_dropped_not_raised() -> None:
    g = guarded("linear")
    last = steady(g, EPOCH, 1800, 100.0)
    g.observe(EPOCH, 1e9)
    assert g.dropped == 1
    assert g.forecast(last, 120).value == pytest.approx(100.0)


def test_guard_parameters_are_validated() -> None:
    with pytest.raises(ValueError):
        guarded("linear", error_window=0)


def test_forecasts_on_stale_input_are_not_kept_for_scoring() -> None:
    g = guarded("linear")
    last = steady(g, EPOCH, 1800, 100.0)
    for k in range(1, 2000):  # the metric is down; the controller keeps ticking
        g.forecast(last + 300 + 15 * k, 120)
    assert len(g._pending) <= 30


def test_noise_no_model_forecasts_does_not_trigger_the_fallback() -> None:
    """A count of a few a minute is > 50% noise (MAPE over the gate) that a
    30-minute line still forecasts better than persistence: no fallback, since
    the fallback is persistence and would only chase the noise."""
    rng = np.random.default_rng(7)
    g = guarded(make_forecaster("linear", window_seconds=1800))
    t = EPOCH
    over_gate = flagged = 0
    for k in range(2000):
        g.observe(t, float(rng.poisson(3.0)))
        reason = g.forecast(t, 120).reason
        if k > 200:
            over_gate += g.recent_mape > 0.5
            flagged += reason is not None
        t += 15
    assert over_gate > 0.2 * 1800                   # the MAPE gate alone would fire often...
    assert flagged < 0.05 * 1800                    # ...but the model beats persistence


def test_fallback_reason_names_the_persistence_comparison() -> None:
    g = guarded("linear")
    last = steady(g, EPOCH, 1800, 100.0)
    t = last + 15
    reason = None
    while t < last + 300 and reason is None:
        g.observe(t, 300.0)
        reason = g.forecast(t, 120).reason
        t += 15
    assert reason is not None and "against persistence's" in reason


def _flagged_share(window_seconds: float) -> float:
    rng = np.random.default_rng(7)
    g = guarded(make_forecaster("linear", window_seconds=window_seconds))
    t, flagged = EPOCH, 0
    for k in range(3000):
        g.observe(t, float(rng.poisson(3.0)))
        flagged += k >= 200 and g.forecast(t, 120).reason is not None
        t += 15
    return flagged / 2800


def test_worse_than_persistence_must_be_significant() -> None:
    """On Poisson noise a 5-minute line is about as good as persistence, and
    which did better over 40 forecasts is a coin toss: the raw comparison fell
    back on 16% of forecasts; the paired test (Diebold-Mariano) almost never.
    A 2-minute line, extrapolating 8 noisy samples, is really worse: it still
    falls back."""
    assert _flagged_share(300) < 0.02
    assert _flagged_share(120) > 0.5


class TenTimesOff:
    """A model that is always 10× too high (a broken forecaster)."""
    name = "broken"
    min_history_seconds = 0.0

    def __init__(self):
        self.last = math.nan

    def observe(self, t, v):
        self.last = v

    def forecast(self, now, h):
        return Forecast(10 * self.last, 10 * self.last, now + h, now + h, True, None, self.name)


def _broken_model_fallback_fraction(step: float, lead: float) -> float:
    g = guarded(TenTimesOff())
    flagged = n = 0
    for k in range(int(4 * 3600 / step)):
        t = EPOCH + step * k
        g.observe(t, 1000.0 + 50.0 * math.sin(k))
        f = g.forecast(t, lead)
        n += 1
        flagged += not f.ok
    return flagged / n


def test_a_broken_model_is_caught_at_minute_sampling():
    assert _broken_model_fallback_fraction(60.0, 120.0) > 0.9


def test_a_broken_model_is_caught_at_five_minute_sampling():
    assert _broken_model_fallback_fraction(300.0, 120.0) > 0.9     # today 0.0
