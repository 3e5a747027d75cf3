"""The alarm stage (scalebridge.stages.alarms): CloudWatch alarm evaluation — M out of N
datapoints, the documented missing-data tables, periods ending at the metric
delay, member series, and time aggregation.

Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
(evaluating an alarm, configuring how alarms treat missing data)."""

from fractions import Fraction

import pytest

from scalebridge.protocol import MetricObservation
from scalebridge.stages.alarms import (
    aggregate, ALARM, breach_test, datapoints, evaluate_alarm, INSUFFICIENT_DATA, OK)
from scalebridge.testing.requests import NOW

CW_MISSING = ("https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/"
              "AlarmThatSendsEmail.html#alarms-evaluating-missing-data")


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
