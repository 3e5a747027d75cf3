"""A wrapper that says when a forecast must not be trusted.

A predictive scaler that acts on a bad forecast is worse than a reactive one,
so the guard passes the inner model's numbers through but sets ``ok=False``
with a one-line ``reason`` when:

1. the input is bad: a non-finite sample in the last ``bad_input_hold_seconds``;
2. there is too little history (``min_history_seconds``, default the model's
   own: e.g. 3 days for ``seasonal``, after Compute Engine's requirement);
3. the input is stale: no sample for ``max_staleness_seconds``;
4. the model itself flags its forecast (e.g. no season to learn from yet);
5. the forecast is NaN/inf, or negative;
6. the model has recently been wrong: the guard remembers each forecast it
   hands out (value at ``now + horizon``), scores it against the first sample
   at or after that time (within ``match_tolerance_seconds``, or within the
   interval since the sample before it when samples are coarser), and falls back
   while the mean absolute percentage error of the last ``error_window``
   scored forecasts exceeds ``max_mape`` (at least ``min_errors`` scored)
   **and** exceeds the error persistence made over the same forecasts (the
   last sample at the time each forecast was made). A count of a few requests
   a minute is 50% noise that nothing forecasts; the fallback, which is
   persistence, would only chase that noise — so an error is "large" when it
   is large and the model is also doing worse than the naive forecast, the
   relative-error test of Hyndman & Koehler's MASE (2006), **significantly**
   so: the mean of the paired differences (model error − persistence error)
   over the last ``SKILL_WINDOW_FACTOR × error_window`` forecasts must be
   ``SKILL_SIGNIFICANCE`` standard errors above zero (Diebold & Mariano's
   test of equal accuracy, 1995, without their autocorrelation correction —
   forecasts made every tick overlap, so this errs towards falling back).
   Where the model and persistence are about as good, which one did better
   over 40 noisy forecasts is a coin toss: on the NASA trace the raw
   comparison fell back on 8% of plans, each a plan chasing one minute's
   count, and cost 3% more instance-hours at the same safety.
   Actual zeros are not scored (no percentage of zero), as in ``mape_at_lead``.

The caller then scales reactively and reports ``reason``. AWS and GCE treat
their own forecasts the same way: the forecast only ever adds capacity on top
of the reactive signal, never replaces it.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

from .base import Forecast, Forecaster, check_horizon, unavailable

DEFAULT_MAX_MAPE = 0.5
DEFAULT_ERROR_WINDOW = 10
DEFAULT_MIN_ERRORS = 3
DEFAULT_MAX_STALENESS_SECONDS = 300.0
DEFAULT_BAD_INPUT_HOLD_SECONDS = 60.0
DEFAULT_MATCH_TOLERANCE_SECONDS = 60.0
SKILL_WINDOW_FACTOR = 4
SKILL_SIGNIFICANCE = 2.0


class GuardedForecaster:
    """Wrap a :class:`Forecaster`; mark its forecasts unreliable with a reason."""

    def __init__(
        self,
        inner: Forecaster,
        *,
        min_history_seconds: float | None = None,
        max_mape: float | None = None,
        error_window: int | None = None,
        min_errors: int | None = None,
        max_staleness_seconds: float = DEFAULT_MAX_STALENESS_SECONDS,
        bad_input_hold_seconds: float = DEFAULT_BAD_INPUT_HOLD_SECONDS,
        match_tolerance_seconds: float = DEFAULT_MATCH_TOLERANCE_SECONDS,
    ) -> None:
        # None: the module's default, read when the guard is made (a screen can vary it)
        max_mape = DEFAULT_MAX_MAPE if max_mape is None else max_mape
        error_window = DEFAULT_ERROR_WINDOW if error_window is None else error_window
        min_errors = DEFAULT_MIN_ERRORS if min_errors is None else min_errors
        if error_window < 1 or min_errors < 1:
            raise ValueError("error_window and min_errors must be >= 1")
        self.inner = inner
        self.name = inner.name
        self.min_history_seconds = float(
            inner.min_history_seconds if min_history_seconds is None else min_history_seconds
        )
        self.max_mape = float(max_mape)
        self.min_errors = int(min_errors)
        self.max_staleness_seconds = float(max_staleness_seconds)
        self.bad_input_hold_seconds = float(bad_input_hold_seconds)
        self.match_tolerance_seconds = float(match_tolerance_seconds)
        self.dropped = 0  #: out-of-order samples dropped
        self._errors: deque[float] = deque(maxlen=int(error_window))
        # the model and persistence compared over a longer stretch than the MAPE
        # gate: ten noisy errors cannot tell the two apart
        self._skill_window = SKILL_WINDOW_FACTOR * int(error_window)
        self._model_skill: deque[float] = deque(maxlen=self._skill_window)
        self._naive_skill: deque[float] = deque(maxlen=self._skill_window)
        self._pending: list[tuple[float, float, float]] = []  # heap of (target time, predicted, persistence)
        self._last_value = math.nan
        self._last_pushed: tuple[float, float] | None = None
        self._first_t: float | None = None
        self._last_good_t = -math.inf
        self._last_t = -math.inf
        self._bad_t = -math.inf
        self._bad_value = 0.0

    def observe(self, t: float, value: float) -> None:
        """Score due forecasts against ``value``, then feed the inner model.

        An out-of-order sample is dropped (counted in ``dropped``) rather than
        raised: a live loop must not die on one late metric point.
        """
        if t < self._last_t:
            self.dropped += 1
            return
        self._last_t = t
        if not math.isfinite(value):
            self._bad_t, self._bad_value = t, value
            return
        if self._first_t is None:
            self._first_t = t
        # a forecast is scored against the first sample at or after its target: within the
        # tolerance, or — samples coarser than it (every 5 minutes) — within the interval
        # since the previous sample, so that a wrong model is caught at any sampling rate
        tolerance = max(self.match_tolerance_seconds, t - self._last_good_t)
        self._last_good_t = t
        pending = self._pending
        while pending and pending[0][0] <= t:
            target, predicted, naive = heapq.heappop(pending)
            if value != 0.0 and t - target <= tolerance:
                e = abs(predicted - value) / abs(value)
                self._errors.append(e)
                self._model_skill.append(e)
                self._naive_skill.append(abs(naive - value) / abs(value))
        self._last_value = value
        self.inner.observe(t, value)

    @property
    def recent_mape(self) -> float:
        """Mean absolute percentage error of the last scored forecasts (NaN if none)."""
        errors = self._errors
        return sum(errors) / len(errors) if errors else math.nan

    def _remember(self, now: float, f: Forecast) -> None:
        """Keep the forecast to score it later (not when made on stale input:
        that bounds the pending list while a metric is down)."""
        key = (f.at, f.value)
        fresh = now - self._last_good_t <= self.max_staleness_seconds
        if fresh and math.isfinite(f.value) and key != self._last_pushed:
            heapq.heappush(self._pending, (f.at, f.value, self._last_value))
            self._last_pushed = key

    def _reason(self, now: float, f: Forecast) -> str | None:
        name = self.name
        if self._bad_t >= self._last_good_t or now - self._bad_t < self.bad_input_hold_seconds:
            return f"{name}: non-finite input ({self._bad_value!r} at t={self._bad_t:g})"
        history = self._last_good_t - self._first_t  # type: ignore[operator]
        if history < self.min_history_seconds:
            return f"{name}: too little history ({history:g}s of {self.min_history_seconds:g}s needed)"
        stale = now - self._last_good_t
        if stale > self.max_staleness_seconds:
            return f"{name}: stale input (last sample {stale:g}s before now)"
        if not f.ok:
            return f.reason or f"{name}: model reported an unreliable forecast"
        if not (math.isfinite(f.value) and math.isfinite(f.peak)):
            return f"{name}: forecast is not finite ({f.value!r})"
        if f.value < 0.0 or f.peak < 0.0:
            return f"{name}: negative forecast ({min(f.value, f.peak):g})"
        errors = self._errors
        if len(errors) >= self.min_errors:
            mape = sum(errors) / len(errors)
            if mape > self.max_mape and self._worse_than_persistence():
                model, naive = sum(self._model_skill), sum(self._naive_skill)
                n = len(self._naive_skill)
                return (
                    f"{name}: recent forecast error too large (MAPE {mape:.0%} over the last "
                    f"{len(errors)} forecasts > {self.max_mape:.0%}; over the last {n}, "
                    f"{model / n:.0%} against persistence's {naive / n:.0%})"
                )
        return None

    def _worse_than_persistence(self) -> bool:
        """The model's recent errors are significantly above persistence's: the
        mean paired difference is ``SKILL_SIGNIFICANCE`` standard errors above 0."""
        d = [m - n for m, n in zip(self._model_skill, self._naive_skill)]
        k = len(d)
        mean = sum(d) / k if k else 0.0
        if mean <= 0.0:
            return False
        if k < 2:
            return True
        # products, not ``** 2``: errors relative to a load near zero can be huge,
        # and a float power overflows with an exception where a product gives inf
        var = math.fsum((x - mean) * (x - mean) for x in d) / (k - 1)
        return mean * mean * k > SKILL_SIGNIFICANCE * SKILL_SIGNIFICANCE * var

    def forecast(self, now: float, horizon_seconds: float) -> Forecast:
        """The inner forecast, with ``ok=False`` and a reason when unreliable."""
        check_horizon(horizon_seconds)
        if self._first_t is None:
            if self._bad_t > -math.inf:
                reason = f"{self.name}: non-finite input ({self._bad_value!r} at t={self._bad_t:g})"
            else:
                reason = f"{self.name}: no history"
            return unavailable(now, horizon_seconds, reason, self.name)
        f = self.inner.forecast(now, horizon_seconds)
        self._remember(now, f)
        reason = self._reason(now, f)
        return f if reason is None else f.failed(reason)
