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
- **down**: the plan is a real-valued envelope that decays at most
  ``scale_down_rate_percent`` per ``scale_down_period_seconds`` and is rounded
  up only when handed out — so a fleet of 2–20 still comes down (5% of 10 is
  half a member: the envelope loses it over two periods) instead of never
  (ceil every period) or 10% at a time (floor);
- **fallback**: when the guarded forecaster says the forecast is unreliable
  (too little history, NaN, a large recent error), the plan follows the
  reactive proposal and carries the reason, which the response reports.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .forecasting import guarded, make_forecaster
from .policy import Predictive
from .protocol import CapacityForecast

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

    def __init__(self, spec: Predictive, *, startup_seconds: float = 0.0, forecaster=None):
        if spec.capacity_per_replica is None:
            raise ValueError("predictive.capacity_per_replica is required to turn a load forecast into replicas")
        self.spec = spec
        self.lead = spec.lead_time_seconds if spec.lead_time_seconds is not None else max(startup_seconds, 0.0)
        self.per_replica = float(spec.capacity_per_replica) * float(spec.target_utilization)
        self.headroom = 1.0 + float(spec.headroom_percent) / 100.0
        self.keep = 1.0 - float(spec.scale_down_rate_percent) / 100.0
        self.period = spec.scale_down_period_seconds or DEFAULT_SCALE_DOWN_PERIOD
        self.model = forecaster if forecaster is not None else default_model(spec)
        self.envelope: Optional[float] = None
        self.last_time: Optional[float] = None
        self.last_load: Optional[float] = None

    def observe(self, t: float, load: float) -> None:
        """A sample of the load signal (in time order)."""
        self.model.observe(t, load)
        if load == load:   # not NaN
            self.last_load = load

    def replicas_for(self, load: float) -> int:
        return max(0, math.ceil(load * self.headroom / self.per_replica - 1e-9))

    def plan(self, now: float) -> Plan:
        reactive = self.replicas_for(self.last_load) if self.last_load is not None else 0
        f = self.model.forecast(now, self.lead) if self.lead > 0 else None
        if f is not None and f.ok and math.isfinite(f.peak):
            target = max(self.replicas_for(f.peak), reactive)
            reason, peak = None, f.peak
        else:
            target = reactive
            reason = f.reason if f is not None else None
            peak = None
        if self.envelope is None or self.last_time is None:
            env = float(target)
        else:
            decayed = self.envelope * self.keep ** (max(now - self.last_time, 0.0) / self.period)
            env = max(float(target), decayed)
        self.envelope, self.last_time = env, now
        return Plan(math.ceil(env - 1e-9), reactive, peak, reason)

    def capacity_forecast(self, now: float) -> CapacityForecast:
        p = self.plan(now)
        source = getattr(self.model, "name", None) or self.spec.model
        return CapacityForecast.model_construct(replicas=p.replicas, source=source, reason=p.reason)
