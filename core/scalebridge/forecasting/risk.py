"""The risk budget of a predictive plan: no safer than the reactive autoscaler it stands in for.

``predictive.margin_quantile`` fixes how much of the forecast's error the margin
covers. On a bursty but smooth signal (a site's crowds) a high quantile is cheap
and a reactive autoscaler is hardly ever short either; on count noise (a few
events per member-minute) the same quantile buys safety nobody had before — a
reactive HPA at 60% CPU is short there almost 1% of the time — and pays for it
with 2.5× the forecast in members. ``predictive.reactive_baseline_utilization``
states the safety the plan must match instead: that of a reactive autoscaler at
this utilization target, on the same load.

- :class:`ReactiveBaseline` replays the HPA's arithmetic on the load the planner
  observes and counts the samples on which its members would have been short;
- :class:`RiskBudget` sets the miss rate the margin is taken at: the baseline's
  shortfall rate divided by how often the plan itself is short per unit of miss
  rate asked for (a plan held on a slow decay is short far less often than
  its margin's quantile says), never safer-than-needed past
  ``margin_quantile`` nor looser than the median.

Both are clock-free and kept outside ``decide`` with the planner.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Optional

from ..constants import K8S_DOWNSCALE_STABILIZATION, K8S_SCALE_UP_PERCENT, K8S_SCALE_UP_PODS, K8S_TOLERANCE

REACTION_SECONDS = 45.0
"""From a load to the members ordered for it serving, beyond their start-up: the
metric's age (metrics-server's 15 s resolution), the controller's sync period
(15 s, ``--horizontal-pod-autoscaler-sync-period``) and a pod first counted one
sync after it is ready. Measured against the simulator's ``kubernetes`` runs
(docs/predictive.md): with it the baseline's shortfall is within 20% of the
real run's at every target from 60 to 90% on every trace, 9% in the root mean
square of the log ratio (30 s: 14%, up to 23% under; 60 s: 15%, up to 33% over)."""


class ReactiveBaseline:
    """A default HPA on a utilization target ``utilization`` of ``capacity`` per
    member, replayed on load samples. ``observe`` returns whether its serving
    members were short of the sample (None until it has a fleet).

    The arithmetic is replica_calculator.go's: ``ceil(ratio × ready)`` outside
    the tolerance, the ratio from a utilization truncated to a whole percent
    (metrics/utilization.go: ``int32((metricsTotal * 100) / requestsTotal)`` —
    45.3% of a 60% target on 4 members is 3, not ``ceil(3.02)``), and on a
    scale-up with members not yet ready the ratio taken
    over every ordered member, the unready counted at 0% (``GetResourceReplicas``:
    "if scaling up, treat unready pods as 0% usage"); then horizontal.go's
    stabilization and scale-up limit, at the HPA's defaults (tolerance
    ``K8S_TOLERANCE``, the ``K8S_DOWNSCALE_STABILIZATION`` window, the larger of
    ``+K8S_SCALE_UP_PERCENT``% and ``+K8S_SCALE_UP_PODS`` pods). Members ordered within the last
    ``startup + reaction_seconds`` (default ``REACTION_SECONDS``; the policy's
    ``predictive.baseline_reaction_seconds``) do not serve yet; removals take effect at once."""

    __slots__ = ("utilization", "capacity", "delay", "ordered", "_recommendations", "_orders")

    def __init__(self, utilization: float, capacity: float, startup_seconds: float,
                 reaction_seconds: float = REACTION_SECONDS):
        self.utilization = float(utilization)
        self.capacity = float(capacity)
        self.delay = max(0.0, float(startup_seconds)) + max(0.0, float(reaction_seconds))
        self.ordered: Optional[int] = None
        self._recommendations: deque = deque()        # (t, recommendation) over the stabilization window
        self._orders: deque = deque()                 # (t, ordered) since the oldest not yet serving

    def observe(self, t: float, load: float) -> Optional[bool]:
        if self.ordered is None:                      # a fleet that was serving this load
            self.ordered = max(1, math.ceil(load / (self.capacity * self.utilization) - 1e-9))
            self._orders.append((t, self.ordered))
            return None
        orders = self._orders
        while len(orders) > 1 and orders[1][0] <= t - self.delay:
            orders.popleft()
        serving = max(1, min(n for _, n in orders))
        # GetResourceUtilizationRatio: each member's usage in millicores (rounded up, as
        # Quantity.MilliValue), then the utilization as a whole percent, truncated
        milli = math.ceil(load / (serving * self.capacity) * 1000 - 1e-9) * serving
        target = max(1, round(self.utilization * 100))   # averageUtilization is an int32 percent
        ratio = (milli * 100 // (1000 * serving)) / target
        current = self.ordered
        if ratio > 1.0 and current > serving:         # unready members at 0%
            ratio = (milli * 100 // (1000 * current)) / target
            recommendation = current if ratio <= 1.0 + K8S_TOLERANCE else math.ceil(ratio * current - 1e-9)
        elif abs(ratio - 1.0) <= K8S_TOLERANCE:
            recommendation = current
        else:
            recommendation = max(1, math.ceil(ratio * serving - 1e-9))
        recs = self._recommendations
        recs.append((t, recommendation))
        while recs[0][0] < t - K8S_DOWNSCALE_STABILIZATION:
            recs.popleft()
        wanted = max(r for _, r in recs)
        self.ordered = min(wanted, max(math.ceil(current * (1 + K8S_SCALE_UP_PERCENT / 100.0)), current + K8S_SCALE_UP_PODS))
        orders.append((t, self.ordered))
        return load > serving * self.capacity


class RiskBudget:
    """The miss rate the margin is taken at (``alpha``: the margin covers the
    ``1 − alpha`` quantile of the forecast's error).

    Over the last ``horizon`` seconds: ``target`` = the baseline's shortfall
    rate; the plan's own rate per unit of ``alpha`` asked for,
    ``c = (own misses + 1) / (Σ alpha + 1)`` (one prior miss at ``c = 1``);
    ``alpha = target / c`` within ``[1 − margin_quantile, 0.5]``. With a baseline
    never short, ``alpha`` is ``1 − margin_quantile``: the fixed quantile."""

    __slots__ = ("floor", "horizon", "alpha", "_baseline", "_baseline_misses", "_own", "_own_misses", "_own_alpha")

    def __init__(self, margin_quantile: float, horizon_seconds: float):
        self.floor = 1.0 - float(margin_quantile)
        self.horizon = float(horizon_seconds)
        self.alpha = self.floor
        self._baseline: deque = deque()               # (t, short)
        self._baseline_misses = 0
        self._own: deque = deque()                    # (t, short, alpha)
        self._own_misses = 0
        self._own_alpha = 0.0

    def baseline(self, t: float, short: bool) -> None:
        self._baseline.append((t, short))
        self._baseline_misses += short
        while self._baseline[0][0] < t - self.horizon:
            self._baseline_misses -= self._baseline.popleft()[1]

    def own(self, t: float, short: bool) -> None:
        """A sample scored against the plan in force: short or not, at the current ``alpha``."""
        self._own.append((t, short, self.alpha))
        self._own_misses += short
        self._own_alpha += self.alpha
        while self._own[0][0] < t - self.horizon:
            _, s, a = self._own.popleft()
            self._own_misses -= s
            self._own_alpha -= a

    @property
    def target(self) -> float:
        """The baseline's shortfall rate over the horizon."""
        return self._baseline_misses / len(self._baseline) if self._baseline else 0.0

    def update(self) -> float:
        """Recompute ``alpha`` (the planner does so when it refits the margin)."""
        target = self.target
        if target <= 0.0:
            self.alpha = self.floor
        else:
            per_alpha = (self._own_misses + 1.0) / (max(self._own_alpha, 0.0) + 1.0)
            self.alpha = min(0.5, max(self.floor, target / per_alpha))
        return self.alpha


ACI_DAILY_STEP = 0.5
"""How far the margin may wander in a day, in units of the forecast error's own
σ at that level: the step of adaptive conformal inference is set so that a
day of samples at the target shortfall rate moves ``q`` by about this much
(one standard deviation of its random walk): ``step = ACI_DAILY_STEP /
√(target × samples per day)``. Its long-run guarantee (the share of short
samples converges to the target, whatever the load does) holds for any step;
the step trades how fast the margin follows a change of regime against how
much it moves on noise — and a margin that moves costs, because what a high
margin asked for is held on the slow decay. Not tuned on any trace: half a σ
a day against the 2–4 σ a margin at the 99th–99.95th percentile is. A fixed
quarter σ per short sample was measured first: on NASA (44 short samples a
day at its target) the margin swung by about 2 σ a day and cost 8% more
instance-hours than the risk budget at the same risk."""
ACI_MAX_Q = 20.0
"""The margin's ceiling in σ (ACI's bounded-iterate condition; never reached in practice)."""


class AdaptiveMargin:
    """The margin's quantile learned online: adaptive conformal inference
    (Gibbs & Candès, "Adaptive conformal inference under distribution shift",
    NeurIPS 2021), in its quantile-tracking form (Angelopoulos, Candès &
    Tibshirani, "Conformal PID control for time series prediction", 2023,
    the P term): after every sample scored against the plan in force,

        q ← q + step × (short − target)

    so ``q`` (the margin in σ of the forecast's error, ``1 + q × σ(level)``)
    rises by ``step`` on each short sample and sinks by ``step × target`` on
    each other one: in the long run the plan is short on a ``target`` share of
    the samples, per workload, with no quantile fixed in advance. ``target``
    comes in with each sample (the reactive baseline's shortfall rate over the
    margin's history, never below ``floor``). ``q`` starts at the error model's
    ``margin_quantile`` (``start``): safe first, then learned down."""

    __slots__ = ("floor", "step", "q", "shorts", "scored", "_last_t")

    def __init__(self, floor: float, step: float = ACI_DAILY_STEP):
        if not 0.0 < floor < 1.0:
            raise ValueError(f"the target shortfall rate must be in (0, 1), got {floor!r}")
        self.floor = float(floor)
        self.step = float(step)
        self.q: Optional[float] = None
        self.shorts = 0
        self.scored = 0
        self._last_t: Optional[float] = None

    def start(self, q: float) -> None:
        if self.q is None:
            self.q = min(max(0.0, float(q)), ACI_MAX_Q)

    def update(self, t: float, short: bool, target: float = 0.0) -> None:
        """A sample at ``t`` scored against the plan in force (``short``), at the target rate ``target``."""
        last, self._last_t = self._last_t, t
        if self.q is None or last is None or t <= last:
            return
        self.scored += 1
        self.shorts += short
        rate = max(self.floor, float(target))
        per_day = 86400.0 / (t - last)
        step = self.step / math.sqrt(rate * per_day)
        self.q = min(ACI_MAX_Q, max(0.0, self.q + step * ((1.0 if short else 0.0) - rate)))
