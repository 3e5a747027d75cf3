"""The streaming contract every forecaster implements.

A forecaster is fed one sample at a time (``observe``) and asked, at any
instant, what it expects over the next ``horizon_seconds`` (``forecast``).
There is no clock inside: time always comes in as an argument, so a forecaster
replays a recorded trace exactly as it runs live (no clock, no network, no
randomness: docs/architecture.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0
WEEK = 7 * DAY


@dataclass(frozen=True, slots=True)
class Forecast:
    """What a forecaster expects over ``(now, at]``, ``at = now + horizon``.

    - ``value``: the predicted value at ``at`` (the end of the horizon).
    - ``peak``: the highest predicted value over ``(now, at]``; ``peak_at`` is
      when it happens. A scale-up decision wants the peak, not the end value.
    - ``ok``: ``False`` when the forecast should not be acted on; ``reason``
      then says why, in one line a controller can report as is.
    - ``model``: the name of the model that produced the numbers.

    A caller that wants a series (the protocol's ``metrics.*.forecast``) asks
    for several horizons; each call is O(1).
    """

    value: float
    peak: float
    peak_at: float
    at: float
    ok: bool = True
    reason: str | None = None
    model: str = ""

    def failed(self, reason: str, model: str | None = None) -> "Forecast":
        """The same numbers, marked unreliable with ``reason``."""
        return Forecast(
            self.value,
            self.peak,
            self.peak_at,
            self.at,
            False,
            reason,
            self.model if model is None else model,
        )


def unavailable(now: float, horizon_seconds: float, reason: str, model: str) -> Forecast:
    """A forecast with no numbers at all (NaN), e.g. before the first sample."""
    nan = math.nan
    at = now + horizon_seconds
    return Forecast(nan, nan, at, at, False, reason, model)


@runtime_checkable
class Forecaster(Protocol):
    """A streaming forecaster.

    - ``observe(t, value)``: samples arrive in time order (``t`` never goes
      back; equal ``t`` is allowed). A non-finite ``value`` is ignored by the
      models (it carries no information); :class:`GuardedForecaster` reports it.
    - ``forecast(now, horizon_seconds)``: predicted values over
      ``(now, now + horizon_seconds]``. It does not change what was learnt:
      calling it twice with the same arguments gives the same answer.
    - ``min_history_seconds``: how much history the model needs before its
      forecasts deserve trust (the guard's default).
    """

    name: str
    min_history_seconds: float

    def observe(self, t: float, value: float) -> None: ...

    def forecast(self, now: float, horizon_seconds: float) -> Forecast: ...


def check_horizon(horizon_seconds: float) -> None:
    """Reject a negative or non-finite horizon (a caller bug, not a data issue)."""
    if not (horizon_seconds >= 0.0 and math.isfinite(horizon_seconds)):
        raise ValueError(f"horizon_seconds must be a finite number >= 0, got {horizon_seconds!r}")


class OutOfOrderError(ValueError):
    """A sample older than the previous one was observed."""


def in_order(last_t: float, t: float) -> float:
    """``t`` when it is not older than ``last_t``; samples arrive in time order."""
    if t < last_t:
        raise OutOfOrderError(f"sample at t={t} is older than the previous one ({last_t})")
    return t
