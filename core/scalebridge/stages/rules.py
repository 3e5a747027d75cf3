"""Threshold rules: metric triggers, scale actions, and how fired rules combine.

Azure Monitor autoscale rules (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings,
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-best-practices,
REST: https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update):

- **statistic**, per time grain, across instances — "The ARM statistic
  property combines metric values from multiple resource instances into each
  sample" — applied when the observation is a ``member_series``; a
  ``series`` already holds one value per grain;
- **time aggregation** over the window — "The timeAggregation property then
  combines those samples over the rule's time window" — of the points with
  ``now − window < t ≤ now``, the window ending ``settings.metric_delay_seconds``
  before ``now``;
- **divide per instance** — "If dividePerInstance = true, the metric is
  divided by the number of instances in the resource" (``current_replicas``);
- **operator** against the threshold (strict for GreaterThan / LessThan).

Arithmetic: values are compared in floating point when they are clearly apart
from the threshold, and recomputed exactly (decimal values as written, sums and
divisions as fractions) when they are within rounding distance of it, so
``(10 + 20) / 3`` against 10 and ``29 × 4 / 3`` against 38.67 decide as exact
arithmetic would, at float speed.

Combining (settings page): "If more than one scale-out rule is triggered,
autoscale scales to the highest specified capacity" and "Autoscale only scales
in if all the scale-in rules are triggered ... autoscale scales in by as little
as possible" — :func:`combine_rules`.

These are stage functions: the ``azure`` semantics composes them, and so does
the neutral ``scalebridge`` semantics beside its target metrics.
"""
from __future__ import annotations

import math
import operator as _op
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, Optional, Sequence, Union

from ..policy import Rule, RuleAction
from ..protocol import MetricObservation
from ..units import exact

__all__ = [
    "RuleValue", "RuleEvaluation", "CombinedRules", "OPERATORS",
    "window_points", "aggregate", "aggregate_exact", "rule_value", "compare",
    "evaluate_rule", "forecast_fires", "action_result", "percent_change", "combine_rules",
]

Num = Union[int, float, Fraction]

OPERATORS: dict[str, Callable[[object, object], bool]] = {
    "GreaterThan": _op.gt, "GreaterThanOrEqual": _op.ge, "LessThan": _op.lt,
    "LessThanOrEqual": _op.le, "Equals": _op.eq, "NotEquals": _op.ne,
}

_REL = 1e-9   # "within rounding distance": recompute exactly


# ----------------------------------------------------------------------------- values


class RuleValue:
    """A rule's aggregated metric value: ``approx`` (float) and, on demand, the
    exact value it stands for (:meth:`exact`)."""
    __slots__ = ("approx", "_points", "_how", "_divisor", "_exact")

    def __init__(self, approx: float, points: Sequence[tuple], how: str, divisor: int = 1):
        self.approx = approx
        self._points = points
        self._how = how
        self._divisor = divisor
        self._exact: Optional[Num] = None

    def exact(self) -> Num:
        if self._exact is None:
            v = aggregate_exact(self._points, self._how)
            self._exact = Fraction(v, self._divisor) if self._divisor != 1 else v
        return self._exact

    def __repr__(self) -> str:
        return f"RuleValue({self.approx!r})"


def _num(v: object) -> float:
    return v if type(v) is float or type(v) is int else float(exact(v))


def _statistic(values: list, statistic: str) -> float:
    n = len(values)
    if statistic == "Average":
        return math.fsum(values) / n
    if statistic == "Max":
        return max(values)
    if statistic == "Min":
        return min(values)
    if statistic == "Sum":
        return math.fsum(values)
    if statistic == "Count":
        return n
    # PercentileN: nearest rank (the smallest value with at least N % of the values at or below it)
    p = float(statistic[len("Percentile"):])
    rank = max(1, math.ceil(p / 100 * n))
    return sorted(values)[rank - 1]


def window_points(obs: Optional[MetricObservation], statistic: str, grain: float,
                  lo: float, hi: float) -> list[tuple]:
    """The per-grain points ``(t, value)`` of an observation with ``lo < t <= hi``.

    - ``member_series``: the ``statistic`` across the members reporting in each
      grain (grain ``k`` holds ``(k − 1)·grain < t ≤ k·grain``; its point is
      stamped at the grain's end);
    - ``series``: taken as is (one value per grain, after the statistic);
    - ``members`` / ``value`` / ``values`` with a ``timestamp``: one point at
      that time (the statistic across members; ``values`` summed).
    Null values are missing points."""
    if obs is None:
        return []
    ms = obs.member_series
    if ms:
        buckets: dict[int, list] = {}
        for pts in ms.values():
            for t, v in pts:
                if lo < t <= hi and v is not None:
                    k = math.ceil(t / grain)
                    b = buckets.get(k)
                    if b is None:
                        buckets[k] = [v]
                    else:
                        b.append(v)
        return [(k * grain, _statistic(vs, statistic)) for k, vs in sorted(buckets.items())]
    s = obs.series
    if s is not None:
        return [p for p in s if lo < p[0] <= hi and p[1] is not None]
    t = obs.timestamp
    if t is None or not (lo < t <= hi):
        return []
    if obs.members:
        vals = [_num(v) for v in obs.members.values() if v is not None]
        return [(t, _statistic(vals, statistic))] if vals else []
    if obs.values:
        return [(t, math.fsum(_num(v) for v in obs.values))]
    if obs.value is not None:
        return [(t, _num(obs.value))]
    return []


def aggregate(points: Sequence[tuple], how: str) -> float:
    """Time aggregation of non-empty ``points``: Average, Min, Max, Sum, Count
    (the number of points) or Last (the latest point)."""
    if how == "Average":
        if len(points) == 1:
            return points[0][1]
        return math.fsum(p[1] for p in points) / len(points)
    if how == "Max":
        return max(p[1] for p in points)
    if how == "Min":
        return min(p[1] for p in points)
    if how == "Sum":
        return math.fsum(p[1] for p in points)
    if how == "Count":
        return len(points)
    if how == "Last":
        return _last(points)[1]
    raise ValueError(f"unknown time aggregation {how!r}")


def _last(points: Sequence[tuple]) -> tuple:
    best = points[0]
    for p in points:
        if p[0] >= best[0]:
            best = p
    return best


def aggregate_exact(points: Sequence[tuple], how: str) -> Num:
    """:func:`aggregate` in exact arithmetic (a float stands for the decimal
    its JSON text wrote)."""
    if how == "Count":
        return len(points)
    if how == "Last":
        return exact(_last(points)[1])
    vals = [exact(p[1]) for p in points]
    if how == "Max":
        return max(vals)
    if how == "Min":
        return min(vals)
    total = sum(vals)
    if how == "Sum":
        return total
    return Fraction(total, len(vals)) if not isinstance(total, Fraction) else total / len(vals)


def rule_value(rule: Rule, obs: Optional[MetricObservation], now: float, current: int,
               delay: float = 0.0, cache: Optional[dict] = None) -> Optional[RuleValue]:
    """The rule's metric over its window (statistic per grain, time
    aggregation, then ``÷ current`` when ``divide_per_instance``), or None
    when no point lies inside the window (the metric cannot be read).

    Divide per instance by ``max(current, 1)``: a scale set at zero divides by
    one (no division by zero).

    ``cache``: a dict shared by the rules of one decision (same observations,
    same ``now``): rules reading the same metric over the same window share
    its points."""
    hi = now - delay
    if cache is not None:
        key = (rule.metric, rule.statistic, rule.time_grain_seconds, rule.time_window_seconds)
        pts = cache.get(key)
        if pts is None:
            pts = cache[key] = window_points(obs, rule.statistic, rule.time_grain_seconds,
                                             hi - rule.time_window_seconds, hi)
    else:
        pts = window_points(obs, rule.statistic, rule.time_grain_seconds, hi - rule.time_window_seconds, hi)
    if not pts:
        return None
    v = aggregate(pts, rule.time_aggregation)
    div = 1
    if rule.divide_per_instance:
        div = current if current > 1 else 1
        v = v / div
    return RuleValue(v, pts, rule.time_aggregation, div)


def compare(operator: str, value: RuleValue, threshold: Num, num: int = 1, den: int = 1) -> bool:
    """``value × num / den  OP  threshold``; exact when the float values are
    within rounding distance of each other. ``den == 0`` stands for an
    estimate at zero instances: any positive value becomes +infinity."""
    op = OPERATORS[operator]
    if den == 0:
        a = value.approx
        v = math.inf if a > 0 else (-math.inf if a < 0 else 0.0)
        return op(v, float(threshold))
    a = value.approx if num == den else value.approx * num / den
    t = float(threshold)
    if abs(a - t) > _REL * max(1.0, abs(a), abs(t)):
        return op(a, t)
    e = value.exact()
    if num != den:
        e = e * Fraction(num, den)
    return op(e, exact(threshold))


def forecast_fires(rule: Rule, obs: Optional[MetricObservation], now: float, horizon: float,
                   current: int) -> Optional[float]:
    """Azure predictive autoscale: "If you want your Virtual Machine Scale Set
    to scale out when the CPU usage exceeds 70% and actual or predicted data
    shows that CPU usage is or will be over 70%, then a scale out will occur"
    (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-predictive).

    The first forecast point in ``(now, now + horizon]`` that meets the rule
    (divided per instance like the series), or None. Forecast points are in the
    series' unit."""
    if obs is None or not obs.forecast:
        return None
    end = now + horizon
    div = (current if current > 1 else 1) if rule.divide_per_instance else 1
    for t, v in sorted(p for p in obs.forecast if p[1] is not None):
        if now < t <= end:
            rv = RuleValue(v / div, ((t, v),), "Last", div)
            if compare(rule.operator, rv, rule.threshold):
                return rv.approx
    return None


# ----------------------------------------------------------------------------- actions


def percent_change(current: int, percent: Num, rounding: str = "ceil",
                   min_magnitude: Optional[int] = None) -> int:
    """``current × percent / 100`` instances, exact, rounded by ``rounding``
    (``ceil`` default: a configured percentage always moves at least one
    instance; ``floor``; ``nearest``, halves up); at least ``min_magnitude``."""
    x = Fraction(current) * exact(percent) / 100
    if rounding == "floor":
        n = math.floor(x)
    elif rounding == "nearest":
        n = math.floor(x + Fraction(1, 2))
    else:
        n = math.ceil(x)
    if min_magnitude is not None and n < min_magnitude:
        n = min_magnitude
    return n


def action_result(action: RuleAction, current: int, *, allowed: Optional[Sequence[int]] = None,
                  rounding: str = "ceil", min_magnitude: Optional[int] = None) -> int:
    """The instance count a fired rule's action asks for (before combining and bounds).

    - ``ChangeCount``: current ± value;
    - ``PercentChangeCount``: current ± :func:`percent_change` (undocumented
      rounding; see docs/semantics/azure.md);
    - ``ExactCount``: value — never against the rule's direction (an Increase
      rule does not lower the count: ``max(current, value)``; a Decrease rule
      ``min(current, value)``);
    - ``ServiceAllowedNextValue``: the next ``allowed`` size above (Increase)
      or below (Decrease) current; none → current; no ``allowed`` list →
      ChangeCount 1.
    Never below zero."""
    up = action.direction == "Increase"
    kind = action.type
    if kind == "ChangeCount":
        change = math.ceil(exact(action.value))
    elif kind == "PercentChangeCount":
        change = percent_change(current, action.value, rounding, min_magnitude)
    elif kind == "ExactCount":
        v = math.ceil(exact(action.value)) if up else math.floor(exact(action.value))
        return max(current, v) if up else max(0, min(current, v))
    elif kind == "ServiceAllowedNextValue":
        if not allowed:
            change = 1
        elif up:
            return next((a for a in allowed if a > current), current)
        else:
            return next((a for a in reversed(allowed) if a < current), current)
    else:
        raise ValueError(f"unknown action type {kind!r}")
    return current + change if up else max(0, current - change)


# ----------------------------------------------------------------------------- evaluation


@dataclass(slots=True)
class RuleEvaluation:
    """One rule at ``now``: its value, whether it fired, and its action's count."""
    rule: Rule
    index: int
    value: Optional[RuleValue]       # None: the metric could not be read
    fired: bool = False
    result: Optional[int] = None     # the action's count, when fired
    forecast: Optional[float] = None  # the forecast value that fired it (predictive)
    error: Optional[str] = None

    @property
    def increase(self) -> bool:
        return self.rule.direction == "Increase"


def evaluate_rule(rule: Rule, index: int, obs: Optional[MetricObservation], now: float, current: int, *,
                  delay: float = 0.0, forecast_horizon: Optional[float] = None,
                  allowed: Optional[Sequence[int]] = None, rounding: str = "ceil",
                  cache: Optional[dict] = None) -> RuleEvaluation:
    """Evaluate one rule: its value over the window, the trigger, and (when
    fired) its action's count. ``forecast_horizon``: seconds of
    ``metrics[rule.metric].forecast`` that may fire a scale-out rule (None:
    forecasts are not acted on). ``cache``: see :func:`rule_value`."""
    v = rule_value(rule, obs, now, current, delay, cache)
    ev = RuleEvaluation(rule, index, v)
    if v is None:
        ev.error = _unreadable(rule, obs, now, delay)
    else:
        ev.fired = compare(rule.operator, v, rule.threshold)
    if not ev.fired and forecast_horizon is not None and rule.direction == "Increase":
        f = forecast_fires(rule, obs, now, forecast_horizon, current)
        if f is not None:
            ev.fired, ev.forecast = True, f
    if ev.fired:
        ev.result = action_result(rule.action, current, allowed=allowed, rounding=rounding,
                                  min_magnitude=rule.min_adjustment_magnitude)
    return ev


def _unreadable(rule: Rule, obs: Optional[MetricObservation], now: float, delay: float) -> str:
    w = rule.time_window_seconds
    if obs is None:
        return f"metric {rule.metric!r} cannot be read: no observation"
    end = f" ending {delay:g}s before now" if delay else ""
    return f"metric {rule.metric!r} cannot be read: no sample in the {w:g}s window{end}"


@dataclass(slots=True)
class CombinedRules:
    """What the fired rules ask for: ``direction`` None when nothing scales."""
    count: int
    direction: Optional[str]                 # "Increase", "Decrease" or None
    winners: list                            # the evaluations whose count was chosen
    fired: int = 0                           # rules of the deciding direction that fired
    of: int = 0                              # rules of that direction

    @property
    def why(self) -> str:
        if self.direction == "Increase":
            return f"{self.fired} of {self.of} scale-out rule(s) fired: the highest count wins"
        if self.direction == "Decrease":
            return f"all {self.of} scale-in rule(s) fired: the smallest reduction wins"
        if self.fired:
            return f"{self.fired} of {self.of} scale-in rules fired: scaling in needs all of them"
        return "no rule fired"


def combine_rules(evals: Iterable[RuleEvaluation], current: int) -> CombinedRules:
    """Scale out when any scale-out rule fired, to the highest count asked;
    otherwise scale in only when every scale-in rule fired, to the highest
    count asked (the smallest reduction); otherwise keep ``current``."""
    if not evals:   # no rule in force (a list): nothing to tally
        return CombinedRules(current, None, [])
    up, down = _Tally(), _Tally()
    for e in evals:
        (up if e.rule.direction == "Increase" else down).add(e)
    if up.best is not None:
        return CombinedRules(up.best, "Increase", up.winners, up.fired, up.rules)
    if down.rules and down.fired == down.rules:
        return CombinedRules(down.best, "Decrease", down.winners, down.fired, down.rules)
    return CombinedRules(current, None, [], down.fired, down.rules)


class _Tally:
    """The rules of one direction: how many, how many fired, the highest count a
    fired one asks for and the rules that ask for it."""
    __slots__ = ("rules", "fired", "best", "winners")

    def __init__(self) -> None:
        self.rules = self.fired = 0
        self.best = None
        self.winners: list = []

    def add(self, e: "RuleEvaluation") -> None:
        self.rules += 1
        if e.fired:
            self.fired += 1
            r = e.result
            if self.best is None or r > self.best:
                self.best, self.winners = r, [e]
            elif r == self.best:
                self.winners.append(e)
