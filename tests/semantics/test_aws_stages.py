"""The AWS stage functions on their own: CloudWatch alarms, step adjustments, warm-up."""
from fractions import Fraction

import pytest

from scalebridge.protocol import Member, MetricObservation, Settings
from scalebridge.policy import StepAdjustment
from scalebridge.stages.alarms import (ALARM, INSUFFICIENT_DATA, OK, aggregate, breach_test, datapoints,
                                       evaluate_alarm)
from scalebridge.stages.steps import (compile_steps, new_capacity, percent_change, round_percent,
                                      select_step)
from scalebridge.stages.warmup import Fleet, resolve_warmup

CW_MISSING = ("https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/"
              "AlarmThatSendsEmail.html#alarms-evaluating-missing-data")
STEPS = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html"
NOW = 1767225600.0

# ----------------------------------------------------------------------------- alarms

# The two documented tables (CW_MISSING), data points oldest -> newest, 0 not breaching,
# X breaching, - missing; the state under MISSING, IGNORE, BREACHING, NOT BREACHING
# ("retain": the current state is kept).
TABLE_3_OF_3 = [
    ("0 - X - X", "OK", "OK", "OK", "OK"),
    ("0 - - - -", "OK", "OK", "OK", "OK"),
    ("- - - - -", "INSUFFICIENT_DATA", "retain", "ALARM", "OK"),
    ("0 X X - X", "ALARM", "ALARM", "ALARM", "ALARM"),
    ("- - - - X", "INSUFFICIENT_DATA", "retain", "ALARM", "OK"),
    ("X - - - -", "ALARM", "retain", "ALARM", "OK"),
]
TABLE_2_OF_3 = [
    ("0 - X - X", "ALARM", "ALARM", "ALARM", "ALARM"),
    ("0 0 X 0 X", "ALARM", "ALARM", "ALARM", "ALARM"),
    ("0 - X - -", "OK", "OK", "ALARM", "OK"),
    ("- - - - 0", "OK", "OK", "ALARM", "OK"),
    ("- - - - X", "INSUFFICIENT_DATA", "retain", "ALARM", "OK"),
]
TREATMENTS = ("missing", "ignore", "breaching", "notBreaching")
GT50 = breach_test("GreaterThan", 50)


def _points(row: str) -> list:
    """A table row as datapoints, newest first (the tables print oldest first)."""
    vals = {"0": 20.0, "X": 80.0, "-": None}
    return [vals[c] for c in reversed(row.split())]


@pytest.mark.parametrize("m,row,expected", [(3, r[0], r[1:]) for r in TABLE_3_OF_3]
                         + [(2, r[0], r[1:]) for r in TABLE_2_OF_3])
def test_documented_missing_data_tables(m, row, expected):
    """Every cell of both tables on CW_MISSING (3 evaluation periods, 5 retrieved)."""
    for treat, want in zip(TREATMENTS, expected):
        for previous in (OK, ALARM, INSUFFICIENT_DATA):
            got = evaluate_alarm(_points(row), GT50, 3, m, treat, previous).state
            assert got == (previous if want == "retain" else want), (row, m, treat, previous)


def test_enough_real_points_evaluate_the_newest_n():
    """"If some data points in the evaluation range are missing, but the number of existing data
    points retrieved is equal to or more than the alarm's Evaluation Periods, CloudWatch evaluates
    the alarm state based on the most recent existing data points" (CW_MISSING)."""
    ev = evaluate_alarm(_points("0 X X - X"), GT50, 3, 3, "notBreaching")
    assert ev.state == ALARM and ev.evaluated == [80.0, 80.0, 80.0]


def test_ignore_without_previous_state_is_insufficient_data():
    assert evaluate_alarm([None] * 5, GT50, 3, 3, "ignore", None).state == INSUFFICIENT_DATA


def test_breach_test_is_exact_for_fractions_and_as_written_for_floats():
    t = breach_test("GreaterThanOrEqual", 29.7)
    assert t(29.7) and not t(29.69)
    assert t(Fraction(297, 10)) and not t(Fraction(2969, 100))
    assert breach_test("Equals", 0.3)(Fraction(3, 10))


def test_periods_are_half_open_and_end_at_the_metric_delay():
    """Period j is (end − (j+1)·grain, end − j·grain]: a sample exactly one grain old is the
    second period's."""
    obs = MetricObservation(series=[(NOW - 180, 1.0), (NOW - 60, 2.0), (NOW - 30, 3.0), (NOW, 4.0)])
    pts = datapoints(obs, NOW, 60, 5, "Average")
    assert pts[0] == Fraction(7, 2)          # 3.0 and 4.0 share (now − 60, now]: averaged
    assert pts[1] == 2.0 and pts[2] is None and pts[3] == 1.0 and pts[4] is None
    delayed = datapoints(obs, NOW - 60, 60, 2, "Max")   # settings.metric_delay_seconds = 60
    assert delayed == [2.0, None]


def test_unordered_series_is_read_whole():
    obs = MetricObservation(series=[(NOW, 4.0), (NOW - 600, 9.0), (NOW - 120, 2.0)])
    assert datapoints(obs, NOW, 60, 3, "Average") == [4.0, None, 2.0]


def test_member_series_aggregates_only_the_counted_members():
    obs = MetricObservation(member_series={"a": [(NOW, 10.0)], "b": [(NOW, 30.0)], "warming": [(NOW, 99.0)]})
    assert datapoints(obs, NOW, 60, 2, "Average", members={"a", "b"}) == [Fraction(20), None]
    assert datapoints(obs, NOW, 60, 1, "Max") == [99.0]


def test_a_snapshot_stands_for_every_period_only_when_fresh():
    fresh = MetricObservation(members={"a": 40, "b": 60}, timestamp=NOW - 10)
    assert datapoints(fresh, NOW, 60, 3, "Average") == [50, 50, 50]
    assert datapoints(MetricObservation(value=7, timestamp=NOW - 1000), NOW, 60, 3) == [None] * 3
    assert datapoints(MetricObservation(value=7), NOW, 60, 3) == [None] * 3   # null time: distant past
    assert datapoints(MetricObservation(values=[1, 2], timestamp=NOW), NOW, 60, 2, divisor=3) == [1, 1]


def test_time_aggregation_of_the_evaluated_points():
    """MetricAggregationType: "The valid values are Minimum, Maximum, and Average. If the
    aggregation type is null, the value is treated as Average." (PutScalingPolicy)."""
    pts = [80.0, 60.0, 70.0]
    assert aggregate(pts, "Average") == 70
    assert aggregate(pts, "Min") == 60 and aggregate(pts, "Max") == 80
    assert aggregate(pts, "Last") == 80.0
    assert aggregate([0.1, 0.2], "Average") == Fraction(3, 20)


# ----------------------------------------------------------------------------- steps


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


# ----------------------------------------------------------------------------- warm-up


def test_warmup_resolution_chain():
    """consolidated-view-of-warm-up-and-cooldown-settings.html: EstimatedInstanceWarmup, else
    DefaultInstanceWarmup, else DefaultCooldown (300 s by default)."""
    assert resolve_warmup(30, 60, Settings(default_instance_warmup_seconds=90)) == 30
    assert resolve_warmup(None, 60, Settings(default_instance_warmup_seconds=90)) == 60
    assert resolve_warmup(None, None, Settings(default_instance_warmup_seconds=90)) == 90
    assert resolve_warmup(None, None, Settings(default_cooldown_seconds=120)) == 120
    assert resolve_warmup(None, None, Settings()) == 300


def _m(name, phase="Running", ready=True, age=3600, deleting=False, weight=1, count=1):
    return Member(name=name, phase=phase, ready=ready, start_time=NOW - age - 60,
                  ready_transition_time=NOW - age, deleting=deleting, weight=weight, count=count)


def test_fleet_bases():
    """Scale-out adds to in-service, warmed-up capacity; scale-in counts terminating instances."""
    members = [_m("old", count=8), _m("new", age=100), _m("gone", deleting=True), _m("launching", "Pending", False),
               _m("big", weight=4)]
    f = Fleet(NOW, 14, None, members)
    assert f.base_in == 8 + 1 + 1 + 4
    assert f.base_out(300) == 8 + 4 and f.base_out(60) == 8 + 1 + 4
    assert f.activity_in_progress and f.scale_out_in_progress
    assert f.metric_members(members, 300) == frozenset({"old", "big"})


def test_fleet_without_members_reads_status():
    assert Fleet(NOW, 11, 10, None).scale_out_in_progress
    f = Fleet(NOW, 9, 10, None)
    assert f.activity_in_progress and not f.scale_out_in_progress and f.base_in == 10
    f = Fleet(NOW, 10, None, None)
    assert not f.activity_in_progress and f.base_out(300) == 10


def test_ready_null_counts_as_in_service():
    f = Fleet(NOW, 2, None, [_m("a", ready=None), _m("b", ready=None)])
    assert f.base_out(300) == 2 and not f.activity_in_progress
