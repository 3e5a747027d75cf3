"""CloudWatch alarm evaluation: periods, M out of N, and missing data.

Amazon CloudWatch, https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html:

- "Period is the length of time to evaluate the metric … to create each
  individual data point", "Evaluation Period is the number of the most recent
  periods, or data points, to evaluate", "Datapoints to Alarm is the number of
  data points within the evaluation period that must be breaching to cause the
  alarm to go to the ALARM state. The breaching data points do not have to be
  consecutive" (#alarm-evaluation). Protocol: ``N = time_window_seconds /
  time_grain_seconds``, ``M = datapoints_to_alarm`` (default N). Period ``j``
  (0 the newest) is ``(end − (j+1)·grain, end − j·grain]`` with
  ``end = now − settings.metric_delay_seconds``.
- "CloudWatch attempts to retrieve a higher number of data points than
  specified by Evaluation Periods" — the *evaluation range*; the documented
  example retrieves 5 for 3 evaluation periods, so the range is ``N + 2``
  periods (:data:`~scalebridge.constants.AWS_ALARM_EXTRA_PERIODS`).
- (#alarms-evaluating-missing-data) "If no data points in the evaluation range
  are missing, CloudWatch evaluates the alarm based on the most recent data
  points collected." "If some data points … are missing, but the number of
  existing data points retrieved is equal to or more than the alarm's
  Evaluation Periods, CloudWatch evaluates the alarm state based on the most
  recent existing data points … the value you set for how to treat missing
  data is not needed and is ignored." "If … lower than the alarm's number of
  evaluation periods, CloudWatch fills in the missing data points with the
  result you specified for how to treat missing data … any real data points in
  the evaluation range, no matter when they were reported, are included …
  CloudWatch uses missing data points only as few times as possible."
- (#alarms-and-missing-data) ``missing`` "does not consider missing data
  points" (all missing → INSUFFICIENT_DATA); ``notBreaching`` "treated as being
  within the threshold"; ``breaching`` "treated as breaching the threshold";
  ``ignore`` "The current alarm state is maintained". Default ``missing``.

:func:`evaluate_alarm` reproduces every cell of the page's two tables (3 of 3
and 2 of 3, five retrieved periods, four treatments); with ``E`` real points
(``0 < E < N``), ``B`` of them breaching:

- ``breaching``: ALARM iff ``B + (N − E) ≥ M``; ``notBreaching``: ALARM iff ``B ≥ M``;
- ``missing``/``ignore``: ALARM if ``B ≥ M``; else OK if a real point is not
  breaching; else ``ignore`` keeps the previous state, and ``missing`` looks at
  the evaluated slots (the ``E`` real periods plus the ``N − E`` most recent
  missing ones): ALARM if the oldest of them is a real (breaching) point — the
  table's row ``X - - - -`` ("the oldest evaluated data point is breaching and
  there aren't any non-breaching data points") — else INSUFFICIENT_DATA
  (row ``- - - - X``).

"For Amazon EC2 Auto Scaling actions, the alarm continues to invoke the action
for every period that the alarm remains in the new state": a policy runs on
every decision its alarm is in ALARM.
"""
from __future__ import annotations

import math
import operator as _op
from dataclasses import dataclass
from fractions import Fraction
from itertools import repeat
from typing import Callable, Collection, Mapping, Optional, Sequence, Union

from ..units import exact

__all__ = ["OK", "ALARM", "INSUFFICIENT_DATA", "OPERATORS", "AlarmEvaluation", "Threshold", "datapoints",
           "series_datapoints", "evaluate_alarm", "all_breaching", "breach_test", "aggregate", "statistic_of"]

OK = "OK"
ALARM = "ALARM"
INSUFFICIENT_DATA = "INSUFFICIENT_DATA"

Num = Union[int, float, Fraction]

OPERATORS: dict[str, Callable] = {
    "GreaterThan": _op.gt, "GreaterThanOrEqual": _op.ge, "LessThan": _op.lt,
    "LessThanOrEqual": _op.le, "Equals": _op.eq, "NotEquals": _op.ne,
}

_EPS = 1e-9
_EXACT_ENOUGH = 2.0 ** 40
"""``series_datapoints(first=…)`` skips early only while ``|end| ≤ 2⁴⁰ × grain``: rounding
then moves a sample's place by at most 2⁻¹¹ of a period (any protocol time, 10 s periods
and up: by less than a millisecond)."""


def _exact(v: object) -> Union[int, Fraction]:
    return v if type(v) is int or type(v) is Fraction else exact(v)


def statistic_of(values: Sequence, statistic: str) -> Num:
    """A period's datapoint from several samples (CloudWatch statistics), exactly."""
    n = len(values)
    if n == 1 and statistic not in ("Count", "Sum"):
        return values[0]
    if statistic == "Count":
        return n
    xs = [v if type(v) is int or type(v) is Fraction else exact(v) for v in values]   # _exact, inline
    if statistic == "Average":
        return Fraction(sum(xs), n)
    if statistic == "Sum":
        return sum(xs)
    if statistic == "Max":
        return max(xs)
    if statistic == "Min":
        return min(xs)
    # PercentileN: nearest rank
    p = Fraction(statistic[len("Percentile"):])
    rank = max(1, math.ceil(p * n / 100))
    return sorted(xs)[rank - 1]


def aggregate(values: Sequence, how: str) -> Num:
    """``time_aggregation`` (AWS MetricAggregationType: Average, Minimum,
    Maximum) of datapoints given newest first, exactly."""
    if how == "Last":
        return values[0]
    return statistic_of(values, how) if len(values) > 1 or how in ("Count", "Sum") else values[0]


def _divide(v: Num, divisor: Union[int, Fraction]) -> Num:
    if divisor == 1:
        return v
    return _exact(v) / divisor if divisor else v


def datapoints(obs, end: float, grain: float, periods: int, statistic: str = "Average",
               members: Optional[Collection[str]] = None, divisor: Union[int, Fraction] = 1,
               scale: Optional[Mapping[str, Fraction]] = None) -> list:
    """The datapoints of ``periods`` periods ending at ``end``, newest first
    (``None``: missing), from a metric observation:

    - ``series`` ``[[t, v], …]``: the datapoint of period ``j`` is the sample in
      it (several samples: their ``statistic``); null values are missing;
    - ``member_series``: per period, the ``statistic`` across the samples of the
      members in ``members`` (all members when None) — how CloudWatch builds an
      Auto Scaling group aggregate;
    - a snapshot (``members``, ``values`` summed, ``value``) with a ``timestamp``
      inside the range: that one value stands for every period (a metric that
      held it over the range); without a timestamp, or an older one, no data.

    ``divisor`` divides every datapoint (per-instance values of a total).
    ``scale`` multiplies each member's samples by its factor before aggregating —
    usage against a request becomes a utilization percent (``100 / request``), as
    CloudWatch's ``CPUUtilization`` is; a member without a factor (no request)
    reports its samples as they are."""
    if obs is None or periods <= 0:
        return [None] * periods
    lo = end - periods * grain
    series = obs.series
    if series is not None:
        out = series_datapoints(series, end, grain, periods, statistic)
    elif obs.member_series:
        out = [None] * periods
        buckets: list = [None] * periods
        for name, pts in obs.member_series.items():
            if members is not None and name not in members:
                continue
            f = 1 if scale is None else scale.get(name, 1)
            for t, v in pts:
                if v is None or not (lo < t <= end):
                    continue
                if f != 1:
                    v = _exact(v) * f
                j = int((end - t) / grain + _EPS)
                if j >= periods:
                    continue
                b = buckets[j]
                if b is None:
                    buckets[j] = [v]
                else:
                    b.append(v)
        for j, b in enumerate(buckets):
            if b is not None:
                out[j] = statistic_of(b, statistic)
    else:
        out = [None] * periods
        t = obs.timestamp
        if t is None or not (lo < t <= end):
            return out
        v = None
        if obs.members:
            vals = [x if scale is None or name not in scale else _exact(x) * scale[name]
                    for name, x in obs.members.items()
                    if x is not None and (members is None or name in members)]
            if vals:   # statistic_of makes each value exact
                v = statistic_of(vals, statistic) if len(vals) > 1 else _exact(vals[0])
        elif obs.values:
            v = sum(_exact(x) for x in obs.values)
        elif obs.value is not None:
            v = _exact(obs.value)
        if v is not None:
            out = [v] * periods
    if divisor != 1:
        out = [None if v is None else _divide(v, divisor) for v in out]
    return out


def series_datapoints(series: Sequence, end: float, grain: float, periods: int, statistic: str = "Average",
                      first: Optional[int] = None) -> list:
    """:func:`datapoints` of a ``series`` ``[[t, v], …]``: the samples bucketed into
    ``periods`` periods ending at ``end``, newest first (any order; several samples in
    one period: their ``statistic``; ``None``: missing). ``first``: only the datapoints
    of the ``first`` newest periods — what the whole list begins with — for a caller
    that may need no more: a sample a whole period older than those is skipped
    without its period being worked out (tests/stages/test_fast_paths.py)."""
    k = periods if first is None or first > periods else first
    if k + 1 < periods and abs(end) <= grain * _EXACT_ENOUGH:
        # A sample at or before ``end − (k + 1) × grain`` falls in period ``k`` or older:
        # ``end − t`` and its quotient by ``grain`` are off by far less than a period
        # (|end| ≤ 2⁴⁰ periods), so the bucket worked out below would be at least ``k``.
        lo = end - (k + 1) * grain
    else:
        lo = end - periods * grain
    out: list = [None] * k
    extra: Optional[dict] = None
    for t, v in series:
        if v is None or t <= lo or t > end:
            continue
        j = int((end - t) / grain + _EPS)
        if j >= k:
            continue
        if out[j] is None:
            out[j] = v
        else:
            if extra is None:
                extra = {}
            extra.setdefault(j, [out[j]]).append(v)
    if extra:
        for j, vs in extra.items():
            out[j] = statistic_of(vs, statistic)
    return out


class Threshold:
    """``value OP threshold``, exactly: numbers as written (``0.1`` is 1/10).
    Plain numbers compare as they are (the same decimal gives the same double);
    exact fractions (an average of several samples) against the exact threshold."""
    __slots__ = ("op", "raw", "exact")

    def __init__(self, operator: str, threshold: object):
        self.op = OPERATORS[operator]
        self.exact = x = _exact(threshold)
        # a float sample against the nearest double of the threshold: equal decimals stay equal
        self.raw = threshold if type(threshold) is int or type(threshold) is float else (
            x.numerator if x.denominator == 1 else float(x))

    def __call__(self, v: Num) -> bool:
        if type(v) is Fraction:
            return self.op(v, self.exact)
        return self.op(v, self.raw)

    def count(self, values: Sequence) -> int:
        """How many of ``values`` breach. A fraction repeated as the same object (a
        snapshot stands for every period as one value, :func:`datapoints`) is
        compared once: an exact comparison costs microseconds, a float's does not."""
        op, t, c = self.op, self.raw, 0
        last: object = None
        breached = False
        for v in values:
            if type(v) is Fraction:
                if v is not last:
                    last = v
                    breached = op(v, self.exact)
                if breached:
                    c += 1
            elif op(v, t):
                c += 1
        return c


def breach_test(operator: str, threshold: object) -> Threshold:
    """The breach test of an alarm: ``test(value)`` and ``test.count(values)``."""
    return Threshold(operator, threshold)


@dataclass(slots=True)
class AlarmEvaluation:
    """An alarm's state and the real datapoints it evaluated (newest first)."""
    state: str
    evaluated: list
    breaching: int = 0


def all_breaching(points: Sequence, breaches: Threshold, n: int, length: int) -> Optional[str]:
    """The state :func:`evaluate_alarm` gives an alarm of ``n`` out of ``n`` datapoints
    (M = N, as target tracking's 3 of 3 and 15 of 15) over the first ``length`` of
    ``points``, found from the newest datapoint on and as soon as it is known: OK at
    the first real datapoint (one of the N most recent) that does not breach, whatever
    the treatment of missing data ("If … lower than the alarm's number of evaluation
    periods …" still leaves a real non-breaching datapoint in the evaluated ones: OK);
    ALARM when the N most recent real datapoints all breach. None when fewer than N
    real datapoints, all breaching, leave it to the missing-data treatment: call
    :func:`evaluate_alarm` (tests/stages/test_fast_paths.py holds the two equal)."""
    op, raw = breaches.op, breaches.raw
    real = 0
    last: object = None
    hit = False
    for v in points:
        if v is not None:
            if type(v) is Fraction:   # exactly, and once for a fraction repeated as one object
                if v is not last:
                    last = v
                    hit = op(v, breaches.exact)
                if not hit:
                    return OK
            elif not op(v, raw):
                return OK
            real += 1
            if real == n:
                return ALARM
        length -= 1
        if not length:
            break
    return None


def _complete(points: Sequence) -> bool:
    """Whether no datapoint is missing (None). ``None in points`` compares by ``==``, a
    Python call per Fraction (``Fraction.__eq__``): fractions are looked at by identity,
    at C speed; floats and ints by ``in``, faster still for them. Either says the same."""
    if type(points[0]) is Fraction:
        return not any(map(_op.is_, points, repeat(None)))
    return None not in points


def evaluate_alarm(points: Sequence, breaches: Threshold, n: int, m: int,
                   treat_missing: str = "missing", previous: Optional[str] = None) -> AlarmEvaluation:
    """The alarm state from the evaluation range's datapoints (newest first,
    ``None`` missing; normally ``N + 2`` of them), ``N`` evaluation periods,
    ``M`` datapoints to alarm, the missing-data treatment and the previous
    state (for ``ignore``; absent → INSUFFICIENT_DATA, the state of a new alarm)."""
    head = points[:n]
    if n > 0 and len(head) == n and _complete(head):
        # fast path: the N most recent periods all have data, so they are the evaluated
        # datapoints (what _evaluate_alarm's scan finds; tests/stages/test_fast_paths.py)
        values = head if type(head) is list else list(head)
        b = breaches.count(values)
        return AlarmEvaluation(ALARM if b >= m else OK, values, b)
    return _evaluate_alarm(points, breaches, n, m, treat_missing, previous)


def _evaluate_alarm(points: Sequence, breaches: Threshold, n: int, m: int,
                    treat_missing: str, previous: Optional[str]) -> AlarmEvaluation:
    """:func:`evaluate_alarm` for any datapoints."""
    values = []
    for v in points:
        if v is not None:
            values.append(v)
            if len(values) == n:   # enough real datapoints: the N most recent are evaluated
                b = breaches.count(values)
                return AlarmEvaluation(ALARM if b >= m else OK, values, b)
    e = len(values)
    if e == 0:
        if treat_missing == "breaching":
            return AlarmEvaluation(ALARM, values, 0)
        if treat_missing == "notBreaching":
            return AlarmEvaluation(OK, values, 0)
        if treat_missing == "ignore":
            return AlarmEvaluation(previous or INSUFFICIENT_DATA, values, 0)
        return AlarmEvaluation(INSUFFICIENT_DATA, values, 0)
    b = breaches.count(values)
    if treat_missing == "breaching":
        return AlarmEvaluation(ALARM if b + (n - e) >= m else OK, values, b)
    if treat_missing == "notBreaching" or b >= m:
        return AlarmEvaluation(ALARM if b >= m else OK, values, b)
    if b < e:   # a real datapoint is not breaching
        return AlarmEvaluation(OK, values, b)
    if treat_missing == "ignore":
        return AlarmEvaluation(previous or INSUFFICIENT_DATA, values, b)
    # missing: the evaluated slots are the real periods and the N − E most recent missing ones;
    # ALARM when the oldest of them is a real (breaching) datapoint
    missing_idx = [j for j, v in enumerate(points) if v is None][:n - e]
    oldest_real = max(j for j, v in enumerate(points) if v is not None)
    if not missing_idx or oldest_real > missing_idx[-1]:
        return AlarmEvaluation(ALARM, values, b)
    return AlarmEvaluation(INSUFFICIENT_DATA, values, b)
