"""AWS step and simple scaling adjustments: which step applies, and the new capacity.

Amazon EC2 Auto Scaling, https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html:

- **Step bounds** (#as-scaling-steps) are relative to the alarm threshold:
  "If the metric value is above the breach threshold, the lower bound is
  inclusive and the upper bound is exclusive. If the metric value is below the
  breach threshold, the lower bound is exclusive and the upper bound is
  inclusive." With ``d = value − threshold``: ``lower ≤ d < upper`` above,
  ``lower < d ≤ upper`` below, a null bound being unbounded. Exactly at the
  threshold (``d = 0``) the alarm's direction decides (scale-out alarms
  ``GreaterThan*`` read ``[lower, upper)``, scale-in ``LessThan*`` read
  ``(lower, upper]``), as API_StepAdjustment's two examples do ("greater than
  or equal to 50 and less than 60 … lower bound of 0 and an upper bound of
  10"; "greater than 40 and less than or equal to 50 … lower bound of -10 and
  an upper bound of 0"). No step matching → no adjustment.
- **Adjustment types** (#as-scaling-adjustment): ``ChangeInCapacity``
  (``base + adjustment``: "current capacity of the group is 3 and the
  adjustment is 5 … a total of 8"), ``ExactCapacity`` ("we change the
  capacity to 5"), ``PercentChangeInCapacity`` ("current capacity is 10 and
  the adjustment is 10 percent … a total of 11").
- **Rounding** of a percentage: "Values greater than 1 are rounded down. For
  example, 12.7 is rounded to 12. Values between 0 and 1 are rounded to 1. For
  example, .67 is rounded to 1. Values between 0 and -1 are rounded to -1. For
  example, -.58 is rounded to -1. Values less than -1 are rounded up. For
  example, -6.67 is rounded to -6." — truncation toward zero, except that a
  non-zero change never becomes 0. Computed exactly (``base × percent / 100``
  as a fraction: 29 % of 100 is 29, never 28.999…).
- **MinAdjustmentMagnitude**: "suppose that you create a policy that adds 25
  percent and you specify a minimum increment of 2 instances. If you have an
  Auto Scaling group with 4 instances … 25 percent of 4 is 1 instance.
  However, because you specified a minimum increment of 2, there are 2
  instances added." Percent adjustments only, after the rounding.

Simple policies use the same adjustment types (protocol ``ChangeCount``,
``PercentChangeCount``, ``ExactCount``; ``action.value`` is a magnitude and
``action.direction`` its sign) and the same rounding: the user guide states it
under "Scaling adjustment types" for step *and* simple scaling.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional, Sequence, Union

from ..units import exact

__all__ = ["CompiledStep", "compile_steps", "select_step", "round_percent", "percent_change",
           "new_capacity", "SIMPLE_TYPES"]

Num = Union[int, Fraction]

# protocol action.type (simple rules) -> AWS AdjustmentType
SIMPLE_TYPES = {"ChangeCount": "ChangeInCapacity", "PercentChangeCount": "PercentChangeInCapacity",
                "ExactCount": "ExactCapacity"}

_NEG_INF = -math.inf
_POS_INF = math.inf


class CompiledStep(tuple):
    """``(lower, upper, adjustment)`` with exact numbers; ±inf for a null bound."""
    __slots__ = ()

    @property
    def lower(self):
        return self[0]

    @property
    def upper(self):
        return self[1]

    @property
    def adjustment(self):
        return self[2]


def compile_steps(steps: Sequence) -> tuple:
    """A policy's ``steps`` as exact :class:`CompiledStep` tuples, in bound order."""
    out = []
    for s in steps:
        lo = _NEG_INF if s.lower is None else exact(s.lower)
        hi = _POS_INF if s.upper is None else exact(s.upper)
        out.append(CompiledStep((lo, hi, exact(s.adjustment))))
    out.sort(key=lambda s: s[0])
    return tuple(out)


def select_step(steps: Sequence[CompiledStep], d: Num, scale_out: bool) -> Optional[CompiledStep]:
    """The step whose interval holds ``d = value − threshold`` (None: no step
    applies). Above the threshold ``[lower, upper)``, below ``(lower, upper]``;
    at the threshold, ``[lower, upper)`` for a scale-out alarm and
    ``(lower, upper]`` for a scale-in alarm."""
    upper_closed = d < 0 or (d == 0 and not scale_out)
    for s in steps:
        lo, hi = s[0], s[1]
        if upper_closed:
            if lo < d <= hi:
                return s
        elif lo <= d < hi:
            return s
    return None


def round_percent(x: Num) -> int:
    """AWS's rounding of a percentage change: toward zero, but a non-zero
    change is at least 1 in magnitude (12.7 → 12, 0.67 → 1, −0.58 → −1, −6.67 → −6)."""
    if x == 0:
        return 0
    t = math.trunc(x)
    if t == 0:
        return 1 if x > 0 else -1
    return t


def percent_change(base: int, percent: Num, min_adjustment_magnitude: Optional[int] = None) -> int:
    """The change ``base × percent / 100``, rounded as AWS rounds it, then
    raised to ``min_adjustment_magnitude`` when it is smaller (and non-zero)."""
    p = percent if type(percent) is int else exact(percent)
    if type(p) is int:
        raw = Fraction(base * p, 100)
    else:
        raw = base * p / 100
    r = round_percent(raw)
    if min_adjustment_magnitude and 0 < abs(r) < min_adjustment_magnitude:
        r = min_adjustment_magnitude if r > 0 else -min_adjustment_magnitude
    return r


def new_capacity(base: int, adjustment_type: str, adjustment: Num,
                 min_adjustment_magnitude: Optional[int] = None) -> int:
    """The capacity a policy asks for from ``base``: ``base + adjustment``
    (ChangeInCapacity), ``adjustment`` (ExactCapacity) or ``base +`` the rounded
    percentage (PercentChangeInCapacity). The result is never negative."""
    if adjustment_type == "PercentChangeInCapacity":
        out = base + percent_change(base, adjustment, min_adjustment_magnitude)
    elif adjustment_type == "ExactCapacity":
        out = adjustment if type(adjustment) is int else math.trunc(adjustment)
    else:   # ChangeInCapacity (AWS ScalingAdjustment is an integer; a fractional one is rounded
        # as a percentage's change is: toward zero, at least one)
        out = base + (adjustment if type(adjustment) is int else round_percent(adjustment))
    return out if out > 0 else 0
