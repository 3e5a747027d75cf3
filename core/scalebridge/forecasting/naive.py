"""``naive``: persistence, the baseline every forecaster has to beat."""

from __future__ import annotations

import math

from .base import Forecast, check_horizon, in_order, unavailable


class NaiveForecaster:
    """Persistence: the next value is the last one. A baseline, nothing more."""

    __slots__ = ("name", "min_history_seconds", "_last", "_last_t")

    def __init__(self, name: str = "naive", min_history_seconds: float = 0.0) -> None:
        self.name = name
        self.min_history_seconds = float(min_history_seconds)
        self._last = math.nan
        self._last_t = -math.inf

    def observe(self, t: float, value: float) -> None:
        """Remember the latest finite value."""
        self._last_t = in_order(self._last_t, t)
        if math.isfinite(value):
            self._last = value

    def forecast(self, now: float, horizon_seconds: float) -> Forecast:
        """The last value, flat over the horizon."""
        check_horizon(horizon_seconds)
        if math.isnan(self._last):
            return unavailable(now, horizon_seconds, f"{self.name}: no samples yet", self.name)
        at = now + horizon_seconds
        return Forecast(self._last, self._last, at, at, True, None, self.name)
