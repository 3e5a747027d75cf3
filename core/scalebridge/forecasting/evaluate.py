"""Batch helpers to score a forecaster on a recorded series."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .base import Forecaster


def forecast_series(
    model: Forecaster | str,
    times: Any,
    values: Any,
    lead_seconds: float,
    **params: Any,
) -> np.ndarray:
    """Replay a series through ``model``; return the forecasts made along the way.

    For each i the sample ``(times[i], values[i])`` is observed, then the model
    is asked at ``now = times[i]`` for ``lead_seconds`` ahead: ``out[i]`` is
    the predicted value at ``times[i] + lead_seconds`` (NaN when the model has
    nothing to say). ``model`` is a forecaster (it is fed, so pass a fresh one)
    or a registry name built with ``params``.
    """
    if isinstance(model, str):
        from .registry import make_forecaster

        model = make_forecaster(model, **params)
    elif params:
        raise TypeError("params are only accepted with a model name")
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape or t.ndim != 1:
        raise ValueError("times and values must be 1-D arrays of the same length")
    out = np.empty(t.shape[0])
    observe, forecast = model.observe, model.forecast
    for i, (ti, vi) in enumerate(zip(t.tolist(), v.tolist())):
        observe(ti, vi)
        out[i] = forecast(ti, lead_seconds).value
    return out


def mape(predicted: Any, actual: Any) -> float:
    """Mean of |predicted − actual| / |actual| over pairs with a non-zero actual
    and a finite prediction (NaN if there are none)."""
    p = np.asarray(predicted, dtype=float)
    a = np.asarray(actual, dtype=float)
    keep = np.isfinite(p) & np.isfinite(a) & (a != 0.0)
    if not keep.any():
        return math.nan
    return float(np.mean(np.abs(p[keep] - a[keep]) / np.abs(a[keep])))


def mape_at_lead(
    times: Any,
    values: Any,
    model_name: str,
    lead_seconds: float,
    *,
    score_from: float | None = None,
    **params: Any,
) -> float:
    """MAPE of the forecasts made at t for t + ``lead_seconds``, against the actual value there.

    - The forecast made at ``times[i]`` is compared with the actual value at
      ``times[i] + lead_seconds``, linearly interpolated between samples
      (exact for a regular series and a lead that is a multiple of the step);
      targets past the end of the series are not scored.
    - Actual zeros are skipped: a percentage of zero is undefined (the NASA
      trace has 162 zero minutes, most likely logging outages).
    - Forecasts that are NaN (the model has nothing yet) are skipped.
    - ``score_from``: only forecasts made at ``t >= score_from`` count (e.g.
      to compare models after the seasonal model's 3-day warm-up). The model
      still observes everything before it.
    - ``params`` go to the model (``make_forecaster(model_name, **params)``).
    """
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    predicted = forecast_series(model_name, t, v, lead_seconds, **params)
    target = t + lead_seconds
    keep = target <= t[-1]
    if score_from is not None:
        keep &= t >= score_from
    actual = np.interp(target[keep], t, v)
    return mape(predicted[keep], actual)
