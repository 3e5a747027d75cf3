"""What the ``aws`` semantics derives from a policy, once per policy: each scaling
policy as Amazon EC2 Auto Scaling holds it.

- a rule with ``steps`` is a step scaling policy, a rule with an ``action`` a
  simple scaling policy, each with its CloudWatch alarm: ``evaluation_periods``
  (N), ``datapoints_to_alarm`` (M, default N), and an evaluation range of N + 2
  periods (``AWS_ALARM_EXTRA_PERIODS``,
  https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarms-evaluating-missing-data);
- each of ``policy.metrics`` is a target tracking policy with AWS's own pair of
  alarms: above the target for ``AWS_TT_HIGH_DATAPOINTS`` one-minute datapoints,
  below ``AWS_TT_LOW_PERCENT`` % of it for ``AWS_TT_LOW_DATAPOINTS``
  (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html);
  at a metric's ``period_seconds`` of 10 or 30 (high-resolution target tracking,
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/policy-creating-high-resolution-metrics.html)
  the alarms evaluate datapoints of that period, as many as ``AWS_TT_ALARM_DATAPOINTS`` says.

Numbers are exact (:func:`scalebridge.units.exact`): a threshold of 0.1 is 1/10.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from .. import constants as C
from ..policy import Metric, Policy, Rule
from ..stages.alarms import breach_test
from ..stages.steps import SIMPLE_TYPES, compile_steps
from ..units import decimal_pair, exact

__all__ = ["TT_SCALE_IN", "compile_policy", "ceil_ratio", "float_target", "tt_alarms"]

TT_SCALE_IN = "metrics.scale_in"
"""The alarm key under which target tracking's scale-in is invoked once per period."""


# Each policy's fields are read here once: a decision reads these plain slots, not the
# pydantic models (an attribute of a model costs several times a slot's).


@dataclass(slots=True)
class _Rule:
    index: int
    rule: Rule
    key: str                  # its entry in aws.alarm_states
    name: str
    enabled: bool
    metric: str
    grain: float              # the alarm's Period
    statistic: str
    treat_missing: str
    aggregation: str          # time_aggregation: the step policy's value from the evaluated datapoints
    series_key: tuple         # (metric, grain, statistic, divided): the datapoints it reads
    step: bool                # step scaling (else simple)
    scale_out: bool
    n: int                    # evaluation periods
    m: int                    # datapoints to alarm
    periods: int              # evaluation range (N + 2)
    breaches: Callable
    threshold: object         # exact
    steps: tuple
    adjustment_type: str
    adjustment: object        # simple rules: the signed adjustment (exact)
    mam: Optional[int]
    cooldown: Optional[float]


@dataclass(slots=True)
class _Target:
    index: int
    metric: Metric
    name: str
    enabled: bool
    warmup: Optional[float]   # the metric's own EstimatedInstanceWarmup (initialization_period_seconds)
    usage: bool               # a resource metric: its members' usage samples are checked (invalid_usage)
    resource: Optional[str]   # a Utilization target of a resource metric: its samples are usage of this
    scale_in: bool            # not DisableScaleIn
    series_key: tuple         # (metric, period, "Average", total): the datapoints it reads
    target: object            # exact target value
    target_float: Optional[float]   # float_target(target), for ceil_ratio
    total: bool               # object/external AverageValue: the series is a group total
    utilization: bool
    high_key: str
    low_key: str
    high: Callable
    low: Callable
    zeros: bool               # ALBRequestCountPerTarget: a period without data is a zero
    period: float             # the metric period its alarms evaluate (10, 30 or 60 s)
    high_n: int               # the high alarm: M of M datapoints above the target
    low_n: int                # the low alarm: N of N below AWS_TT_LOW_PERCENT % of it


@dataclass(slots=True)
class _Compiled:
    rules: tuple
    targets: tuple
    min_replicas: int
    max_replicas: Optional[int]
    periods: dict             # (metric, grain, statistic, divided) -> the longest range any alarm reads
    shared: frozenset         # those more than one alarm reads
    grains: dict              # alarm key -> its period (aws.alarm_invoked)
    warmup: Optional[float]   # the policy's EstimatedInstanceWarmup (initialization_period_seconds)
    predictive: object        # policy.predictive


_FLOAT_SLACK = 2.0 ** -49
"""How far, relative to it, a ratio worked out in floats may be from the exact one: within
2⁻⁵⁰ (a float within half an ulp of the decimal it stands for, a target rounded once, a
product and a quotient rounded once each), doubled."""
_FLOAT_RANGE = 1e250   # and 1/1e250: away from overflow and from subnormal floats


def float_target(target) -> Optional[float]:
    """``float(target)`` for :func:`ceil_ratio`'s float path, or None when outside its range."""
    try:
        f = float(target)
    except OverflowError:
        return None
    return f if 1 / _FLOAT_RANGE < f < _FLOAT_RANGE else None


def ceil_ratio(base: int, value, target, target_float: Optional[float] = None) -> int:
    """``ceil(base × value / target)`` exactly (numbers as written: 0.1 is 1/10).

    ``target_float`` (:func:`float_target`, worked out once per target): a float value's
    ratio is first worked out in floats; it is within 2⁻⁵⁰ of the exact ratio of the
    decimal the float stands for, so when no integer lies within twice that of it, the
    integer above it is the exact answer — most ratios; one that is, or nearly is, an
    integer is worked out exactly (tests/stages/test_fast_paths.py)."""
    if type(value) is float:
        if target_float is not None and 0 <= base < 9007199254740992:   # 2**53: a float holds the int
            x = base * value / target_float
            if 1 / _FLOAT_RANGE < abs(x) < _FLOAT_RANGE and 1 / _FLOAT_RANGE < abs(value):
                c = math.ceil(x)
                slack = abs(x) * _FLOAT_SLACK
                if c - x >= slack and x - (c - 1) > slack:
                    return c
        vn, vd = decimal_pair(value)
    else:
        v = value if type(value) is int or type(value) is Fraction else exact(value)
        vn, vd = v.numerator, v.denominator
    return -((-base * vn * target.denominator) // (vd * target.numerator))


def tt_alarms(metric: Metric) -> tuple[float, tuple[int, int]]:
    """A target tracking metric's period (``period_seconds``, default 60) and its alarms'
    datapoints (high, low) at that period (``constants.AWS_TT_ALARM_DATAPOINTS``)."""
    period = metric.period_seconds or int(C.AWS_TT_PERIOD)
    return float(period), C.AWS_TT_ALARM_DATAPOINTS[period]


def _emits_zeros(name: str) -> bool:
    """A target-tracking metric named after the predefined ``ALBRequestCountPerTarget``
    (any case or punctuation): UG as-scaling-target-tracking.html, "the
    ALBRequestCountPerTarget metric emits zeros for periods with no associated data"."""
    return "".join(ch for ch in name.lower() if ch.isalnum()).startswith("albrequestcountpertarget")


def compile_policy(policy: Policy) -> _Compiled:
    extra = C.AWS_ALARM_EXTRA_PERIODS
    rules = []
    for k, r in enumerate(policy.rules):
        n = r.evaluation_periods
        m = r.datapoints_to_alarm or n
        step = r.steps is not None
        if step:
            scale_out = r.operator.startswith("Greater")
            adj_type = r.adjustment_type
            adjustment = None
            steps = compile_steps(r.steps)
            cooldown = r.action.cooldown_seconds if r.action is not None else None
        else:
            a = r.action
            scale_out = a.direction == "Increase"
            adj_type = SIMPLE_TYPES[a.type]
            v = exact(a.value)
            adjustment = v if adj_type == "ExactCapacity" or scale_out else -v
            steps = ()
            cooldown = a.cooldown_seconds
        rules.append(_Rule(k, r, f"rules[{k}]", r.name or r.metric, r.enabled, r.metric, r.time_grain_seconds,
                           r.statistic, r.treat_missing_data, r.time_aggregation,
                           (r.metric, r.time_grain_seconds, r.statistic, r.divide_per_instance),
                           step, scale_out, n, m, n + extra,
                           breach_test(r.operator, r.threshold), exact(r.threshold), steps, adj_type,
                           adjustment, r.min_adjustment_magnitude, cooldown))
    targets = []
    for i, mt in enumerate(policy.metrics or []):
        t = mt.target
        value = {"Utilization": t.average_utilization, "AverageValue": t.average_value,
                 "Value": t.value}[t.type]
        tv = exact(value)
        low = Fraction(tv * C.AWS_TT_LOW_PERCENT, 100)
        total = mt.type in ("object", "external") and t.type == "AverageValue"
        usage = mt.type in ("resource", "container_resource")
        period, (high_n, low_n) = tt_alarms(mt)
        targets.append(_Target(i, mt, mt.name, mt.enabled, mt.initialization_period_seconds, usage,
                               mt.name if usage and t.type == "Utilization" else None, not mt.disable_scale_in,
                               (mt.name, period, "Average", total), tv, float_target(tv), total,
                               t.type == "Utilization", f"metrics[{i}].high", f"metrics[{i}].low",
                               breach_test("GreaterThan", tv), breach_test("LessThan", low),
                               _emits_zeros(mt.name), period, high_n, low_n))
    periods: dict = {}
    shared: set = set()
    for key, n in [(r.series_key, r.periods) for r in rules if r.enabled] + \
                  [(t.series_key, t.low_n + extra) for t in targets if t.enabled]:
        if key in periods:
            shared.add(key)
        periods[key] = max(periods.get(key, 0), n)
    grains = {r.key: r.rule.time_grain_seconds for r in rules}
    for t in targets:
        grains[t.high_key] = t.period
    # scale-in is invoked once per period: the shortest period of the policies that vote on it
    grains[TT_SCALE_IN] = min((t.period for t in targets if t.enabled and t.scale_in), default=C.AWS_TT_PERIOD)
    return _Compiled(tuple(rules), tuple(targets), policy.min_replicas, policy.max_replicas, periods,
                     frozenset(shared), grains,
                     policy.initialization_period_seconds, policy.predictive)
