"""The step stage (scalebridge.stages.steps): step adjustments (bounds inclusive below for
scale-out, above for scale-in), percent rounding, and the adjustment types.

Sources: https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html,
https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_StepAdjustment.html."""

from fractions import Fraction

import pytest

from scalebridge.policy import StepAdjustment
from scalebridge.stages.steps import compile_steps, new_capacity, percent_change, round_percent, select_step

STEPS = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html"


def _steps(*triples):
    return compile_steps([StepAdjustment(lower=lo, upper=hi, adjustment=a) for lo, hi, a in triples])


OUT = _steps((0, 10, 0), (10, 20, 10), (20, None, 30))


IN = _steps((-10, 0, 0), (-20, -10, -10), (None, -20, -30))


@pytest.mark.parametrize("value,adjustment", [(50, 0), (59.9, 0), (60, 10), (69, 10), (70, 30), (1000, 30)])
def test_scale_out_steps_lower_inclusive_upper_exclusive(value, adjustment):
    """"If the metric value is above the breach threshold, the lower bound is inclusive and the
    upper bound is exclusive" (STEPS#as-scaling-steps); at the threshold, a scale-out alarm reads
    [lower, upper) (API_StepAdjustment: "greater than or equal to 50 and less than 60 … lower bound
    of 0 and an upper bound of 10")."""
    from scalebridge.units import exact
    assert select_step(OUT, exact(value) - 50, scale_out=True)[2] == adjustment


@pytest.mark.parametrize("value,adjustment", [(50, 0), (40.1, 0), (40, -10), (31, -10), (30, -30), (0, -30)])
def test_scale_in_steps_lower_exclusive_upper_inclusive(value, adjustment):
    """"If the metric value is below the breach threshold, the lower bound is exclusive and the
    upper bound is inclusive" (STEPS#as-scaling-steps); API_StepAdjustment: "greater than 40 and
    less than or equal to 50 … lower bound of -10 and an upper bound of 0"."""
    from scalebridge.units import exact
    assert select_step(IN, exact(value) - 50, scale_out=False)[2] == adjustment


def test_no_step_below_the_first_bound():
    """The CLI example's first step starts 10 above the threshold: 65 vs 60 matches none."""
    steps = _steps((10, 20, 10), (20, 30, 20), (30, None, 30))
    assert select_step(steps, 5, scale_out=True) is None


@pytest.mark.parametrize("x,rounded", [(Fraction(127, 10), 12), (Fraction(67, 100), 1), (Fraction(-58, 100), -1),
                                       (Fraction(-667, 100), -6), (0, 0), (1, 1), (-1, -1), (Fraction(3, 2), 1)])
def test_documented_percent_rounding(x, rounded):
    """"12.7 is rounded to 12 … .67 is rounded to 1 … -.58 is rounded to -1 … -6.67 is rounded to -6"
    (STEPS#as-scaling-adjustment)."""
    assert round_percent(x) == rounded


def test_percent_changes_are_exact():
    """Protocol conventions: "100 × 29% is 29, not 28.999…"."""
    assert percent_change(100, 29) == 29 and percent_change(100, -29) == -29
    # the float route (base × (percent / 100)) gives 28.999…, 28.999… and −62.999…
    assert percent_change(100, 29.0) == 29 and percent_change(50, 58.0) == 29
    assert percent_change(90, -70.0) == -63
    assert new_capacity(100, "PercentChangeInCapacity", 29) == 129
    assert new_capacity(100, "PercentChangeInCapacity", -29) == 71


def test_documented_adjustment_types():
    """STEPS#as-scaling-adjustment: 3 + 5 = 8; exact 5; 10 + 10 % = 11; 25 % of 4 with a minimum
    of 2 adds 2."""
    assert new_capacity(3, "ChangeInCapacity", 5) == 8
    assert new_capacity(3, "ExactCapacity", 5) == 5
    assert new_capacity(10, "PercentChangeInCapacity", 10) == 11
    assert new_capacity(4, "PercentChangeInCapacity", 25) == 5
    assert new_capacity(4, "PercentChangeInCapacity", 25, 2) == 6
    assert new_capacity(4, "PercentChangeInCapacity", -25, 2) == 2
    assert new_capacity(2, "ChangeInCapacity", -5) == 0           # never negative
