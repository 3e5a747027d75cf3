"""Predictive scaling: a forecast of a load signal, turned into a capacity forecast.

The second seed (shared/seeds/002_*.txt): a websocket service whose pods break
near 25,000 connections while CPU and memory stay flat, so scaling follows the
connection count, ahead of it — new pods need time to start. Its authors
forecast the count with a degree-2 polynomial regression, scaled **up fast**
(over-provisioning when needed, reserving start-up time) and **down slowly**
(following the count minus 5%), because disconnected clients come back.

:class:`PredictivePlanner` lives outside ``decide`` (it keeps a model and a
clock-free history); every sync period it hands decide a
``observations.forecast`` of replicas, which each semantics combines by its own
rule (the highest of all signals; a forecast never scales in by itself):

- **up**: ``ceil(peak forecast over (now, now + lead] × (1 + headroom) / (capacity × target))``,
  never below the reactive proposal for the current load;
- **down**: the capacity the observed load needed is an envelope that decays
  at most ``scale_down_rate_percent`` per ``scale_down_period_seconds`` — the
  seed follows "the count minus 5%", not its forecast — real-valued and
  rounded up only when handed out, so a fleet of 2–20 still comes down (5% of
  10 is half a member: the envelope loses it over two periods) instead of
  never (ceil every period) or 10% at a time (floor). Forecast capacity above
  what the load has needed is never held: a quadratic fitted across a spike
  curves upward, and keeping its overshoot on a slow decay would pay for
  members no load ever used;
- **margin**: with ``margin_quantile`` the plan covers that quantile of the
  forecast's own recent error — the peak load actually seen over each lead
  window against the peak forecast for it — instead of a fixed
  ``target_utilization``. Count-like load is noisier, relatively, when it is
  small (σ/level ∝ 1/√level), so errors are kept normalised by √level and the
  margin is ``1 + z_q / √level``: tight in a busy daytime, where a member
  costs most, wide in small night-time counts, where it costs little.
  Until an hour of errors is known, ``target_utilization`` is the margin;
  errors beyond Tukey's outer fence (a flash crowd's 10×) are left out —
  no margin buys them off, the reactive path absorbs them.
  The reactive floor is then the need at 100% of a member's capacity;
- **ramps**: the seed first fitted a line to the last 5 values. A model fitted
  over half an hour barely moves on the first minute of a surge, so the last
  5 samples are fitted too, and a rise the forecast's own noise cannot
  explain (its normalised size beyond 3 × ``z_q``) is extrapolated over the
  lead time — upward only, and only when significant, so minute-level noise
  is never chased;
- **fallback**: when the guarded forecaster says the forecast is unreliable
  (too little history, NaN, a large recent error), the plan follows the
  reactive proposal and carries the reason, which the response reports.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .forecasting import guarded, make_forecaster
from .policy import Predictive
from .protocol import CapacityForecast

RAMP_SAMPLES = 5
"""The seed: "根据最近5个websocketConnectionCount值进行线性拟合" — a line through the last 5 values."""
RAMP_SIGNIFICANCE = 3.0

DEFAULT_SCALE_DOWN_PERIOD = 60.0
"""5% "per period": the seed's controller ran every 10 s; a minute keeps the
decay independent of the sync period (5%/min halves a fleet in ~14 minutes)."""


@dataclass(slots=True)
class Plan:
    replicas: int
    reactive: int
    forecast_peak: Optional[float]
    reason: Optional[str]


def default_model(spec: Predictive):
    """The policy's model behind the guard; ``history_seconds`` is the regression window."""
    params = {}
    if spec.history_seconds and spec.model in ("linear", "quadratic"):
        params["window_seconds"] = spec.history_seconds
    return guarded(make_forecaster(spec.model, **params))


class PredictivePlanner:
    """Forecast-driven capacity for one target (see the module docstring)."""

    def __init__(self, spec: Predictive, *, startup_seconds: float = 0.0, forecaster=None,
                 capacity_per_replica: Optional[float] = None):
        capacity = spec.capacity_per_replica if spec.capacity_per_replica is not None else capacity_per_replica
        if capacity is None:
            raise ValueError("predictive.capacity_per_replica is required to turn a load forecast into replicas")
        self.spec = spec
        self.lead = spec.lead_time_seconds if spec.lead_time_seconds is not None else max(startup_seconds, 0.0)
        self.per_replica = float(capacity) * float(spec.target_utilization)
        self.headroom = 1.0 + float(spec.headroom_percent) / 100.0
        self.keep = 1.0 - float(spec.scale_down_rate_percent) / 100.0
        self.period = spec.scale_down_period_seconds or DEFAULT_SCALE_DOWN_PERIOD
        self.model = forecaster if forecaster is not None else default_model(spec)
        self.envelope: Optional[float] = None
        self.last_time: Optional[float] = None
        self.last_load: Optional[float] = None
        self.capacity = float(capacity)
        self.quantile = spec.margin_quantile
        if self.quantile is not None:
            self.floor_per_replica = self.capacity               # the reactive floor: need at 100%
        else:
            self.floor_per_replica = self.per_replica
        self._errors: deque = deque()                            # (time, observed peak / forecast peak)
        self._error_horizon = float(spec.margin_history_seconds)
        self._pending: deque = deque()                           # (made at, forecast peak)
        self._window: deque = deque()                            # (time, load): monotonic max over a lead
        self._recent: deque = deque(maxlen=RAMP_SAMPLES)         # the last samples, for the ramp line
        self._margin = 1.0 / float(spec.target_utilization)
        self._z: Optional[float] = None
        self._margin_at = -math.inf

    def observe(self, t: float, load: float) -> None:
        """A sample of the load signal (in time order)."""
        self.model.observe(t, load)
        if load == load:   # not NaN
            self.last_load = load
            if self.quantile is not None:
                self._score(t, load)
                self._recent.append((t, load))

    def _score(self, t: float, load: float) -> None:
        """Close the lead windows that ended by ``t``: each forecast's observed peak
        over its window against the peak it forecast."""
        w = self._window
        while w and w[-1][1] <= load:
            w.pop()
        w.append((t, load))
        pending = self._pending
        while pending and pending[0][0] + self.lead <= t:
            made, peak = pending.popleft()
            while w and w[0][0] <= made:
                w.popleft()
            if w and peak > 0:
                # count-like noise: the relative error shrinks as 1/sqrt(level), so keep it
                # normalised — z = (observed / forecast - 1) × sqrt(forecast level)
                self._errors.append((t, (w[0][1] / peak - 1.0) * math.sqrt(peak / self.capacity)))
        errors = self._errors
        while errors and errors[0][0] < t - self._error_horizon:
            errors.popleft()

    def margin(self, now: float, peak: float) -> float:
        """The multiplier on a forecast ``peak``: ``1 + z_q / sqrt(level)`` where
        ``z_q`` is the ``margin_quantile`` of recent normalised errors (recomputed
        once a minute), or ``1 / target_utilization`` until an hour of errors is known."""
        if self.quantile is None:
            return 1.0 / float(self.spec.target_utilization)
        if now - self._margin_at >= 60.0:
            self._margin_at = now
            errors = self._errors
            if errors and errors[-1][0] - errors[0][0] >= 3600.0:
                z = np.fromiter((r for _, r in errors), dtype=float, count=len(errors))
                q1, q3 = np.quantile(z, (0.25, 0.75))
                # bursts beyond Tukey's outer fence are no forecast error a margin can
                # buy off (a flash crowd): the reactive path absorbs them
                kept = z[z <= q3 + 3.0 * (q3 - q1)]
                self._z = max(0.0, float(np.quantile(kept, self.quantile)))
        if self._z is None:
            return 1.0 / float(self.spec.target_utilization)
        level = peak / self.capacity
        self._margin = 1.0 + self._z / math.sqrt(level) if level > 0 else 1.0
        return self._margin

    def ramp_peak(self, now: float) -> Optional[float]:
        """The load a significant recent rise reaches by ``now + lead`` (None: no ramp)."""
        r = self._recent
        if self._z is None or len(r) < 3:
            return None
        t0, first = r[0]
        t1, last = r[-1]
        if last <= first or first <= 0:
            return None
        if (last / first - 1.0) * math.sqrt(first / self.capacity) <= RAMP_SIGNIFICANCE * max(self._z, 1e-9):
            return None
        n = len(r)
        mt = sum(t for t, _ in r) / n
        mv = sum(v for _, v in r) / n
        sxx = sum((t - mt) ** 2 for t, _ in r)
        slope = sum((t - mt) * (v - mv) for t, v in r) / sxx if sxx else 0.0
        if slope <= 0:
            return None
        return last + slope * (now + self.lead - t1)

    def replicas_for(self, load: float) -> int:
        return max(0, math.ceil(load * self.headroom / self.per_replica - 1e-9))

    def plan(self, now: float) -> Plan:
        reactive = max(0, math.ceil(self.last_load * self.headroom / self.floor_per_replica - 1e-9)) \
            if self.last_load is not None else 0
        if self.envelope is None or self.last_time is None:
            env = float(reactive)
        else:
            decayed = self.envelope * self.keep ** (max(now - self.last_time, 0.0) / self.period)
            env = max(float(reactive), decayed)
        self.envelope, self.last_time = env, now
        held = math.ceil(env - 1e-9)
        f = self.model.forecast(now, self.lead) if self.lead > 0 else None
        if f is not None and f.ok and math.isfinite(f.peak):
            if self.quantile is not None:
                self._pending.append((now, f.peak))
                peak = f.peak
                ramp = self.ramp_peak(now)
                if ramp is not None and ramp > peak:
                    peak = ramp
                up = max(0, math.ceil(peak * self.margin(now, peak) * self.headroom / self.capacity - 1e-9))
            else:
                up = self.replicas_for(f.peak)
            return Plan(max(up, held), reactive, f.peak, None)
        if self.quantile is not None and self.last_load:
            # no trusted forecast: the last load (or a significant ramp) is the forecast,
            # with the same margin
            peak = max(self.last_load, self.ramp_peak(now) or 0.0)
            held = max(held, math.ceil(peak * self.margin(now, peak) * self.headroom / self.capacity - 1e-9))
        return Plan(held, reactive, None, f.reason if f is not None else None)

    def capacity_forecast(self, now: float) -> CapacityForecast:
        p = self.plan(now)
        source = getattr(self.model, "name", None) or self.spec.model
        return CapacityForecast.model_construct(replicas=p.replicas, source=source, reason=p.reason)


class TraceForecaster:
    """The simulator's forecaster seam (``forecaster(now, history, tick)``) driving
    a :class:`PredictivePlanner`: each new history point (the load of tick ``i``,
    at ``t0 + i × tick``) is observed once, then the plan for ``now`` is returned."""

    def __init__(self, planner: PredictivePlanner, t0: float, tick_seconds: float):
        self.planner, self.t0, self.tick = planner, t0, tick_seconds
        self.seen = 0

    def __call__(self, now: float, history, tick_seconds: float) -> CapacityForecast:
        n = len(history)
        if n > self.seen:
            observe, t0, tick = self.planner.observe, self.t0, self.tick
            for i in range(self.seen, n):
                observe(t0 + i * tick, float(history[i]))
            self.seen = n
        return self.planner.capacity_forecast(now)


def trace_forecaster(policy, *, capacity: float, startup_seconds: float, t0: float,
                     tick_seconds: float) -> Optional[TraceForecaster]:
    """The forecaster a replay uses for ``policy.predictive`` (None: no predictive
    scaling, or ``Disabled``); the member capacity defaults to the fleet's."""
    spec = policy.predictive
    if spec is None or spec.mode == "Disabled":
        return None
    planner = PredictivePlanner(spec, startup_seconds=startup_seconds, capacity_per_replica=capacity)
    return TraceForecaster(planner, t0, tick_seconds)
