"""Predictive scaling: a forecast of a load signal, turned into a capacity forecast.

The case it follows, a published websocket autoscaler ("如何使用Kubernetes创建自定义Pod水平扩展器",
how to build a custom Kubernetes pod autoscaler): a websocket service whose pods break
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
- **down**: the proposal — forecast capacity included, a ramp's members still
  starting excepted (below) — comes down at most
  ``scale_down_rate_percent`` per ``scale_down_period_seconds`` and never below
  the reactive proposal for the current load (the websocket autoscaler follows "the count
  minus 5%", not its forecast). It is kept real-valued and rounded up only
  when handed out, so a fleet of 2–20 still comes down (5% of 10 is half a
  member: the proposal loses it over two periods) instead of never (ceil every
  period) or 10% at a time (floor). Holding what the forecast asked for is
  what the rate means, and it costs: a quadratic fitted across a spike curves
  upward and its overshoot is then paid for all the way down — which is why
  the forecast is damped and ramps are extrapolated only when significant;
- **margin**: with ``margin_quantile`` the plan covers that quantile of the
  forecast's own recent error — the peak load actually seen over each lead
  window against the peak forecast for it — instead of a fixed
  ``target_utilization``. How wide the error is depends on the level: a
  count of a few requests a minute is Poisson noise whose relative spread
  shrinks as 1/√level, a busy site's bursts are a share of its load at any
  level. Both are one variance model, ``σ²(level) = a + b / level`` (a
  multiplicative part and a count part), fitted by least squares to the
  squared relative errors; the margin is ``1 + q × σ(level)``, ``q`` the
  ``margin_quantile`` of the errors divided by their own ``σ``. Until an hour
  of errors is known, ``target_utilization`` is the margin. Errors beyond
  Tukey's outer fences (a flash crowd's 10×, a load falling off a cliff) are
  left out — no margin buys them off, the reactive path absorbs them. The reactive floor is then the
  need at 100% of a member's capacity;
- **ramps**: the websocket autoscaler first fitted a line to the last 5 values. A model fitted
  over half an hour barely moves on the first minute of a surge, so the last
  5 samples are fitted too, and so are the last 5 minutes; a rise beyond what
  the margin covers (the 5 samples) or a slope many standard errors above
  zero (the 5 minutes) is extrapolated over the lead time — upward only, and
  only when significant, so minute-level noise is rarely chased. What a ramp
  asks for is held on the slow decay only once it has asked for it
  throughout a lead time, when its members serve; members asked for by a ramp
  that stopped sooner are still starting, carry no load (no client to
  reconnect) and are withdrawn at once. Held at once, on count noise (a few
  events per member-minute: the NASA trace, where "significant" still fires
  on noise) the lines cost 6% of the instance-hours and bought nothing; so,
  1%, and World Cup's match crowds are caught as before
  (``extrapolate_ramps`` switches them off);
- **risk budget**: with ``reactive_baseline_utilization`` the margin is taken at
  the quantile that makes the plan as often short as a reactive HPA at that
  target would have been on the same load, never safer than
  ``margin_quantile`` (:mod:`scalebridge.forecasting.risk`);
- **adaptive margin**: with ``margin_adaptation: aci`` the margin's ``q`` is
  instead learned online by adaptive conformal inference
  (:class:`~scalebridge.forecasting.risk.AdaptiveMargin`, Gibbs & Candès 2021): raised
  after each sample the plan in force was short, lowered a little after each
  other one, toward the risk budget's target rate (never below
  ``1 − margin_quantile``). Measured out of sample (``benchmarks/frontier.py
  --leave-one-out``) it reaches its rate and costs more than the budget;
- **rebound** (``scale_down_adaptation: rebound``): the decay's rate is the policy's
  statement that a drop comes back (clients reconnect); the planner checks it on the
  load itself — whether its significant drops regained, within the HPA's 5-minute
  stabilization window, what the decay would still hold — and, where most did not, lets
  the held proposal go on the next drop, down to the reactive need (never below it);
- **inner constants**: the ramp tests' thresholds, the 5-minute line's span, the error
  model's outlier fences, the margin's first fit and the replayed HPA's reaction time are
  policy keys (``ramp_significance``, ``trend_significance``, ``trend_size``,
  ``trend_window_seconds``, ``outlier_fence_iqr``, ``margin_first_fit_seconds``,
  ``baseline_reaction_seconds``, ``guard_max_mape``), defaults the constants below, so that the
  leave-one-out can select them on the other workloads;
- **fallback**: when the guarded forecaster says the forecast is unreliable
  (too little history, NaN, a large recent error), the plan follows the
  reactive proposal and carries the reason, which the response reports.
"""
from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .registry import guarded, make_forecaster
from ..policy import Predictive
from ..protocol import CapacityForecast
from ..constants import K8S_DOWNSCALE_STABILIZATION
from .risk import AdaptiveMargin, ReactiveBaseline, RiskBudget

RAMP_SAMPLES = 5
"""The websocket autoscaler's first model: "根据最近5个websocketConnectionCount值进行线性拟合" — a
line through the last 5 values."""
RAMP_SIGNIFICANCE = 3.0
"""...extrapolated when its rise is this many times what the margin covers
(the default of ``predictive.ramp_significance``)."""
TREND_SECONDS = 300.0
"""A second line over the last 5 minutes of samples: a surge that builds over
minutes (a match's audience arriving) moves a per-minute metric too little
between 5 samples taken every 15 s to pass the test above (the default of
``predictive.trend_window_seconds``)."""
TREND_SIGNIFICANCE = 5.0
"""...extrapolated when its slope is this many standard errors above zero (the
samples of a per-minute metric read every 15 s repeat 4 times, which
inflates the t-statistic about 2×: 5 is about 2.5 on the distinct values;
the default of ``predictive.trend_significance``)."""
TREND_SIZE = 2.0
"""...and when the line rises over its 5 minutes by more than this many σ of the
forecast's relative error at that level: on a count of a few requests a
minute a slope can be significant and still be noise the margin covers
(the default of ``predictive.trend_size``)."""
OUTLIER_FENCE = 3.0
"""Errors beyond Q1 − 3 IQR and Q3 + 3 IQR (Tukey's outer fences) are left out of the
error model (the default of ``predictive.outlier_fence_iqr``)."""
REBOUND_SECONDS = float(K8S_DOWNSCALE_STABILIZATION)
"""``scale_down_adaptation: rebound``: a drop "comes back" when the load regains, within
this long, what the slow decay would still be holding — the reactive HPA's own
statement of how long a fall may be noise (horizontal.go's default downscale
stabilization window, 300 s). Not tuned."""

DEFAULT_SCALE_DOWN_PERIOD = 60.0
"""5% "per period": the websocket autoscaler's controller ran every 10 s; a minute keeps the
decay independent of the sync period (5%/min halves a fleet in ~14 minutes)."""


class _TimedValues:
    """Rows of values with their times, oldest dropped past a horizon: numpy
    buffers compacted when full, so a fit over a day of per-tick errors reads
    views instead of copying a deque."""

    __slots__ = ("times", "values", "head", "tail")

    def __init__(self, columns: int = 1, size: int = 1024):
        self.times = np.empty(size)
        self.values = np.empty((size, columns))
        self.head = self.tail = 0

    def __len__(self) -> int:
        return self.tail - self.head

    def append(self, t: float, *row: float) -> None:
        if self.tail == self.times.size:
            n = self.tail - self.head
            size = self.times.size * 2 if n * 2 > self.times.size else self.times.size
            times, values = np.empty(size), np.empty((size, self.values.shape[1]))
            times[:n] = self.times[self.head:self.tail]
            values[:n] = self.values[self.head:self.tail]
            self.times, self.values, self.head, self.tail = times, values, 0, n
        self.times[self.tail] = t
        self.values[self.tail] = row
        self.tail += 1

    def drop_before(self, t: float) -> None:
        if self.head < self.tail and self.times[self.head] < t:
            self.head += int(np.searchsorted(self.times[self.head:self.tail], t, side="left"))

    def span(self) -> float:
        return float(self.times[self.tail - 1] - self.times[self.head]) if self.tail > self.head else 0.0

    def column(self, i: int) -> np.ndarray:
        return self.values[self.head:self.tail, i]


MARGIN_MIN_HISTORY_SECONDS = 3600.0
"""The margin is first fitted once an hour of forecast errors is known (the default of
``predictive.margin_first_fit_seconds``)."""
MARGIN_REFIT_SECONDS = 300.0
"""A day of errors moves little in 5 minutes; refitting every minute doubled the replay's time."""


@dataclass(frozen=True, slots=True)
class ErrorModel:
    """The forecast's relative error at a level: ``σ²(level) = a + b / level``,
    and ``q``, the quantile of errors measured in units of their own σ
    (``standard``: those errors, sorted, for another quantile)."""

    a: float
    b: float
    q: float
    standard: Optional[np.ndarray] = field(default=None, compare=False, repr=False)

    def q_at(self, quantile: float) -> float:
        """``q`` at another quantile of the same errors (``q`` itself without them)."""
        if self.standard is None or not self.standard.size:
            return self.q
        return max(0.0, float(np.quantile(self.standard, quantile, method="linear")))

    def sigma(self, level: float) -> float:
        return math.sqrt(self.a + self.b / level) if level > 0 else math.inf

    def margin(self, level: float) -> float:
        return 1.0 + self.q * self.sigma(level) if level > 0 else 1.0


def fit_error_model(relative: np.ndarray, inverse_level: np.ndarray, quantile: float,
                    fence: float = OUTLIER_FENCE) -> Optional[ErrorModel]:
    """Fit :class:`ErrorModel` to relative errors ``observed / forecast − 1`` made
    at levels ``1 / inverse_level`` (in members).

    Outliers first: errors beyond Tukey's fences (Q1 − fence × IQR, Q3 + fence × IQR; 3: the outer ones)
    of the √level-normalised errors are a flash crowd (far above) or a load
    falling off a cliff (far below), not a forecast's spread.
    Then least squares of ``r²`` on ``1 / level`` gives ``a`` and ``b``
    (clamped at zero: a negative variance part is noise in the fit), and
    ``q`` is the ``quantile`` of ``r / σ``. None when nothing is left."""
    z = relative / np.sqrt(inverse_level)
    q1, q3 = np.quantile(z, (0.25, 0.75))
    iqr = q3 - q1
    kept = (z <= q3 + fence * iqr) & (z >= q1 - fence * iqr)
    r, x = relative[kept], inverse_level[kept]
    if r.size < 2:
        return None
    y = r * r
    xm, ym = float(x.mean()), float(y.mean())
    dx = x - xm
    sxx = float(dx @ dx)
    b = max(0.0, float(dx @ (y - ym)) / sxx) if sxx > 0 else 0.0
    a = max(0.0, ym - b * xm)
    if a == 0.0 and b == 0.0:
        return ErrorModel(0.0, 0.0, 0.0)
    sigma = np.sqrt(a + b * x)
    with np.errstate(divide="ignore", invalid="ignore"):
        standard = np.where(sigma > 0, r / sigma, 0.0)
    standard.sort()
    return ErrorModel(a, b, max(0.0, float(np.quantile(standard, quantile))), standard)


def _line(samples) -> Optional[tuple]:
    """Least squares through ``(t, v)`` samples: (mean value, slope, mean time,
    Σ(t − t̄)², residual Σ²), or None unless the slope is positive."""
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mv = sum(v for _, v in samples) / n
    sxx = sxy = 0.0
    for t, v in samples:
        sxx += (t - mt) ** 2
        sxy += (t - mt) * (v - mv)
    if sxx <= 0 or sxy <= 0:
        return None
    slope = sxy / sxx
    sse = sum((v - mv - slope * (t - mt)) ** 2 for t, v in samples)
    return mv, slope, mt, sxx, sse


@dataclass(slots=True)
class Plan:
    replicas: int
    reactive: int
    forecast_peak: Optional[float]
    reason: Optional[str]


def default_model(spec: Predictive):
    """The policy's model behind the guard; ``history_seconds`` is the regression window,
    ``guard_max_mape`` the guard's gate."""
    params = {}
    if spec.history_seconds and spec.model in ("linear", "quadratic"):
        params["window_seconds"] = spec.history_seconds
    return guarded(make_forecaster(spec.model, **params), max_mape=float(spec.guard_max_mape))


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
        self._errors = _TimedValues(2)                           # (relative error, 1 / level) per closed window
        self._error_horizon = float(spec.margin_history_seconds)
        self._pending: deque = deque()                           # (made at, forecast peak)
        self._window: deque = deque()                            # (time, load): monotonic max over a lead
        self._recent: deque = deque()                            # the last trend_seconds of samples
        self.error_model: Optional[ErrorModel] = None
        self._margin_at = -math.inf
        self._last_seen: Optional[float] = None
        self.budget: Optional[RiskBudget] = None
        self.baseline: Optional[ReactiveBaseline] = None
        self._q: Optional[float] = None                          # q at the budget's quantile
        self._plans: deque = deque()                             # (time, replicas) over the last lead
        self._ramps: deque = deque()                             # (time, a ramp's proposal) over the last lead
        self.ramp_significance = float(spec.ramp_significance)
        self.trend_significance = float(spec.trend_significance)
        self.trend_size = float(spec.trend_size)
        self.trend_seconds = float(spec.trend_window_seconds)
        self.first_fit = float(spec.margin_first_fit_seconds)
        self.fence = float(spec.outlier_fence_iqr)
        # scale_down_adaptation: rebound — significant drops waiting REBOUND_SECONDS for their
        # outcome ([time, the peak before, the highest load since]), the outcomes over the
        # margin's history (time, came back), and until when the held proposal is released
        self.rebound = self.quantile is not None and spec.scale_down_adaptation == "rebound"
        self._drops: deque = deque()
        self._outcomes: deque = deque()
        self._came_back = 0
        self._last_drop = -math.inf
        self._release_until = -math.inf
        self.drops_released = 0                                  #: drops on which the held proposal was let go
        self.aci: Optional[AdaptiveMargin] = None
        if self.quantile is not None and spec.margin_adaptation == "aci":
            self.aci = AdaptiveMargin(1.0 - float(self.quantile))
        if self.quantile is not None and spec.reactive_baseline_utilization is not None:
            self.budget = RiskBudget(self.quantile, self._error_horizon)
            self.baseline = ReactiveBaseline(spec.reactive_baseline_utilization, self.capacity,
                                             startup_seconds if startup_seconds > 0 else self.lead,
                                             spec.baseline_reaction_seconds)

    def observe(self, t: float, load: float) -> None:
        """A sample of the load signal (in time order: a late sample is dropped here as
        the guarded model drops it; a non-finite one reaches only the model, whose guard
        then reports "non-finite input")."""
        self.model.observe(t, load)
        if self._last_seen is not None and t < self._last_seen:
            return
        self._last_seen = t
        if math.isfinite(load):
            self.last_load = load
            if self.quantile is not None:
                self._score(t, load)
                if self.aci is not None:
                    self._adapt(t, load)
                elif self.budget is not None:
                    self._budget(t, load)
                if self.rebound:
                    self._rebound(t, load)
                r = self._recent
                r.append((t, load))
                while r[0][0] <= t - self.trend_seconds:
                    r.popleft()

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
                self._errors.append(t, w[0][1] / peak - 1.0, self.capacity / peak)
        self._errors.drop_before(t - self._error_horizon)

    def _rebound(self, t: float, load: float) -> None:
        """``scale_down_adaptation: rebound``: learn whether the load's significant drops
        come back, and release the held proposal on a drop when most did not.

        A **drop** is a sample below the highest of the last scale-down period by more
        than the decay lets go in a period and more than ``ramp_significance`` times
        what the margin covers at that level (the ramp test, mirrored: a fall the
        forecast's own error cannot explain); at most one per period. It **came back**
        if within ``REBOUND_SECONDS`` the load regained what the slow decay would still
        be holding then (the peak before × the decay over that time) — a websocket's
        clients reconnecting. The share that came back over the margin's history,
        with one prior drop of each kind (so: hold, until the load has shown a drop
        that stayed down), decides: below one half, a new drop releases the held
        proposal for ``REBOUND_SECONDS``: it is not carried, the forecast is capped at
        the last load (a model fitted across the drop still forecasts the level before
        it) and the margin is at least ``1 / target_utilization``, the margin of the
        first hour (the error model was measured on forecasts the drop has just made
        stale) — so only the reactive need, the last load with that margin and a
        serving ramp count; otherwise it decays at the rate. Measured on the three
        sawtooths: the forecast left uncapped, 0.923–0.926 of the frontier against
        0.905–0.908; the error model's margin kept, short 0.07–0.28% of the time
        where the HPA at 60% never is."""
        drops = self._drops
        for d in drops:
            if load > d[2]:
                d[2] = load
        back = self.keep ** (REBOUND_SECONDS / self.period)
        while drops and drops[0][0] + REBOUND_SECONDS <= t:
            made, prior, highest = drops.popleft()
            came = highest >= prior * back
            self._outcomes.append((made, came))
            self._came_back += came
        outcomes = self._outcomes
        while outcomes and outcomes[0][0] < t - self._error_horizon:
            self._came_back -= outcomes.popleft()[1]
        model = self.error_model
        if model is None or t - self._last_drop < self.period:
            return
        prior = max((v for when, v in self._recent if when >= t - self.period), default=0.0)
        if prior <= 0.0:
            return
        fall = 1.0 - load / prior
        if fall > max(1.0 - self.keep, self.ramp_significance * (model.margin(prior / self.capacity) - 1.0)):
            self._last_drop = t
            drops.append([t, prior, load])
            if (self._came_back + 1.0) / (len(outcomes) + 2.0) < 0.5:
                self._release_until = t + REBOUND_SECONDS
                self.drops_released += 1

    def _budget(self, t: float, load: float) -> None:
        """Score the sample against the reactive baseline and, once the margin
        is fitted, against the plan in force: the lowest proposal of the last
        lead time (what was ordered earlier is serving, a cut is at once)."""
        short = self.baseline.observe(t, load)
        if short is not None:
            self.budget.baseline(t, short)
        plans = self._plans
        while len(plans) > 1 and plans[0][0] < t - self.lead:
            plans.popleft()
        if self.error_model is not None and plans and plans[0][0] <= t:
            in_force = min(n for when, n in plans if when <= t)
            self.budget.own(t, load > in_force * self.capacity)

    def _adapt(self, t: float, load: float) -> None:
        """Adaptive conformal inference of the margin (:class:`~scalebridge.forecasting.risk.AdaptiveMargin`):
        the sample scored against the plan in force (as :meth:`_budget` does), the
        target the reactive baseline's shortfall rate over the margin's history
        (without a baseline: ``1 − margin_quantile``)."""
        target = 0.0
        if self.baseline is not None:
            short = self.baseline.observe(t, load)
            if short is not None:
                self.budget.baseline(t, short)
            target = self.budget.target
        plans = self._plans
        while len(plans) > 1 and plans[0][0] < t - self.lead:
            plans.popleft()
        if self.aci.q is not None and plans and plans[0][0] <= t:
            in_force = min(n for when, n in plans if when <= t)
            self.aci.update(t, load > in_force * self.capacity, target)

    def margin(self, now: float, peak: float) -> float:
        """The multiplier on a forecast ``peak``: ``1 + q × σ(level)`` of the
        :class:`ErrorModel` refitted every ``MARGIN_REFIT_SECONDS``, or ``1 / target_utilization``
        until ``margin_first_fit_seconds`` of errors are known (an hour)."""
        if self.quantile is None:
            return 1.0 / float(self.spec.target_utilization)
        if now - self._margin_at >= MARGIN_REFIT_SECONDS:
            self._margin_at = now
            errors = self._errors
            if len(errors) and errors.span() >= self.first_fit:
                self.error_model = fit_error_model(errors.column(0), errors.column(1), self.quantile,
                                                   self.fence) or self.error_model
            if self.aci is not None and self.error_model is not None:
                self.aci.start(self.error_model.q)
            elif self.budget is not None and self.error_model is not None:
                alpha = self.budget.update()
                self._q = self.error_model.q_at(1.0 - alpha) if alpha > self.budget.floor else None
        model = self.error_model
        if model is None:
            return 1.0 / float(self.spec.target_utilization)
        level = peak / self.capacity
        if self.aci is not None and self.aci.q is not None and level > 0:
            return 1.0 + self.aci.q * model.sigma(level)
        if self._q is None or level <= 0:
            return model.margin(level)
        return 1.0 + self._q * model.sigma(level)

    def ramp_peak(self, now: float) -> Optional[float]:
        """The load a significant recent rise reaches by ``now + lead`` (None: no
        ramp), the higher of two least-squares lines extrapolated upward:

        - through the last ``RAMP_SAMPLES`` samples (the websocket autoscaler's line), when the
          rise from the first to the last is beyond ``ramp_significance`` (``RAMP_SIGNIFICANCE``)
          times what the margin covers at that level — a step the forecast's
          own error cannot explain;
        - through the last ``trend_window_seconds`` of samples (``TREND_SECONDS``), when its slope is more
          than ``trend_significance`` (``TREND_SIGNIFICANCE``) standard errors above zero — a rise the
          samples' scatter around the line cannot explain — and its rise over
          the window is beyond ``trend_size`` (``TREND_SIZE``) σ of the error model.

        Never with ``extrapolate_ramps: false`` (count noise)."""
        r = self._recent
        n = len(r)
        model = self.error_model
        if model is None or n < 4 or not self.spec.extrapolate_ramps:
            return None
        best = None
        short = list(itertools.islice(r, max(0, n - RAMP_SAMPLES), n))
        first, last = short[0][1], short[-1][1]
        if last > first > 0 and \
                last / first - 1.0 > self.ramp_significance * (model.margin(first / self.capacity) - 1.0):
            line = _line(short)
            if line is not None:
                best = line[0] + line[1] * (now + self.lead - line[2])
        line = _line(r)
        if line is not None:
            level, slope, mt, sxx, sse = line
            span = r[-1][0] - r[0][0]
            if slope * slope * sxx * (n - 2) > self.trend_significance ** 2 * sse and level > 0 and \
                    slope * span / level > self.trend_size * model.sigma(level / self.capacity):
                trend = level + slope * (now + self.lead - mt)
                best = trend if best is None else max(best, trend)
        return best

    def plan(self, now: float) -> Plan:
        """The proposal for ``now``: the forecast's capacity (or, without a trusted
        forecast, the last load's, with the same margin) joined with the reactive
        proposal and with the previous proposal decayed by the scale-down rate."""
        reactive = max(0, math.ceil(self.last_load * self.headroom / self.floor_per_replica - 1e-9)) \
            if self.last_load is not None else 0
        held = float(reactive)
        if self.envelope is not None and self.last_time is not None and now >= self._release_until:
            held = max(held, self.envelope * self.keep ** (max(now - self.last_time, 0.0) / self.period))
        f = self.model.forecast(now, self.lead) if self.lead > 0 else None
        up, ramp_up, peak, reason = 0.0, 0.0, None, None
        if f is None:
            reason = "lead time is 0: no forecast (the reactive proposal)"
        target = None
        if f is not None and f.ok and math.isfinite(f.peak):
            peak = f.peak
            if self.quantile is not None:
                self._pending.append((now, f.peak))
                target = peak
            else:
                up = peak * self.headroom / self.per_replica
        else:
            if f is not None:
                reason = f.reason or "forecast is not finite"
            if self.quantile is not None and self.last_load:
                target = self.last_load      # no trusted forecast: the last load is the forecast, same margin
        released = target is not None and now < self._release_until and self.last_load is not None
        if released:
            target = min(target, self.last_load)   # a drop that stays down: the pre-drop fit is not the forecast
        if target is not None:
            margin = self.margin(now, target)
            if released:                           # ...nor is its error model: the margin of the first hour
                margin = max(margin, 1.0 / float(self.spec.target_utilization))
            up = target * margin * self.headroom / self.capacity
            ramp = self.ramp_peak(now)
            if ramp is not None and ramp > target:
                ramp_up = ramp * self.margin(now, ramp) * self.headroom / self.capacity
        self.envelope, self.last_time = max(held, up, self._sustained(now, ramp_up)), now
        replicas = max(0, math.ceil(max(self.envelope, ramp_up) - 1e-9))
        if self.budget is not None or self.aci is not None:
            self._plans.append((now, replicas))
        return Plan(replicas, reactive, peak, reason)

    def _sustained(self, now: float, ramp_up: float) -> float:
        """The part of the ramps' proposals made throughout the last lead time: the
        members it asked for are serving now and come down at the scale-down rate.
        Above it, members asked for by a ramp that stopped within the lead time are
        still starting — they carry no load and are withdrawn at once."""
        ramps = self._ramps
        ramps.append((now, ramp_up))
        while len(ramps) > 1 and ramps[1][0] <= now - self.lead:
            ramps.popleft()
        if ramps[0][0] > now - self.lead:
            return 0.0
        return min(r for _, r in ramps)

    def capacity_forecast(self, now: float) -> CapacityForecast:
        p = self.plan(now)
        source = getattr(self.model, "name", None) or self.spec.model
        return CapacityForecast(replicas=p.replicas, source=source, reason=p.reason)


class TraceForecaster:
    """The simulator's forecaster seam (``forecaster(now, history, tick)``) driving
    a :class:`PredictivePlanner`: each new history point (the load of tick ``i``,
    at ``t0 + i × tick``) is observed once, then the plan for ``now`` is returned."""

    def __init__(self, planner: PredictivePlanner, t0: float, tick_seconds: float):
        self.planner, self.t0, self.tick = planner, t0, tick_seconds
        self.seen = 0
        self.plans = 0
        self.fallbacks = 0          #: plans made without a trusted forecast (they carry a reason)

    def __call__(self, now: float, history, tick_seconds: float) -> CapacityForecast:
        n = len(history)
        if n > self.seen:
            observe, t0, tick = self.planner.observe, self.t0, self.tick
            for i in range(self.seen, n):
                observe(t0 + i * tick, float(history[i]))
            self.seen = n
        forecast = self.planner.capacity_forecast(now)
        self.plans += 1
        self.fallbacks += forecast.reason is not None
        return forecast


def trace_forecaster(policy, *, capacity: float, startup_seconds: float, t0: float,
                     tick_seconds: float) -> Optional[TraceForecaster]:
    """The forecaster a replay uses for ``policy.predictive`` (None: no predictive
    scaling, or ``Disabled``); the member capacity defaults to the fleet's."""
    spec = policy.predictive
    if spec is None or spec.mode == "Disabled":
        return None
    planner = PredictivePlanner(spec, startup_seconds=startup_seconds, capacity_per_replica=capacity)
    return TraceForecaster(planner, t0, tick_seconds)
