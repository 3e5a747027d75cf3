"""The rule stage (scalebridge.stages.rules): window points, aggregates (float and
exact), rule values and comparisons, scale actions, and combining rules.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings."""
from __future__ import annotations

from fractions import Fraction

import pytest

from scalebridge.policy import Rule, RuleAction
from scalebridge.protocol import MetricObservation
from scalebridge.stages.rules import (
    action_result, aggregate, aggregate_exact, combine_rules, compare, evaluate_rule, percent_change,
    rule_value, RuleValue, window_points)
from scalebridge.testing.requests import AZURE_NOW as NOW


def mk_rule(op="GreaterThan", threshold=70, direction="Increase", **kw) -> Rule:
    action = kw.pop("action", {"direction": direction, "type": "ChangeCount", "value": 1})
    return Rule.model_validate({"metric": "cpu", "operator": op, "threshold": threshold, "action": action, **kw})


def test_window_points_shapes():
    obs = MetricObservation.model_validate({"series": [[NOW - 300, 1], [NOW - 240, 2], [NOW, None], [NOW - 60, 3]]})
    assert window_points(obs, "Average", 60, NOW - 300, NOW) == [(NOW - 240, 2), (NOW - 60, 3)]
    ms = MetricObservation.model_validate({"member_series": {
        "a": [[NOW - 61, 10], [NOW - 30, 20]], "b": [[NOW - 59, 30], [NOW, 50]]}})
    # grains (NOW-120, NOW-60] and (NOW-60, NOW]
    assert window_points(ms, "Max", 60, NOW - 300, NOW) == [(NOW - 60, 10), (NOW, 50)]
    assert window_points(ms, "Sum", 60, NOW - 300, NOW) == [(NOW - 60, 10), (NOW, 100)]
    assert window_points(ms, "Count", 60, NOW - 300, NOW) == [(NOW - 60, 1), (NOW, 3)]
    pct = MetricObservation.model_validate({"member_series": {f"m{i}": [[NOW, i]] for i in range(1, 11)}})
    assert window_points(pct, "Percentile90", 60, NOW - 60, NOW) == [(NOW, 9)]
    assert window_points(pct, "Percentile100", 60, NOW - 60, NOW) == [(NOW, 10)]
    snap = MetricObservation.model_validate({"members": {"a": "500m", "b": 1.5}, "timestamp": NOW - 10})
    assert window_points(snap, "Sum", 60, NOW - 60, NOW) == [(NOW - 10, 2.0)]
    assert window_points(MetricObservation.model_validate({"value": 7}), "Average", 60, NOW - 60, NOW) == []
    assert window_points(None, "Average", 60, NOW - 60, NOW) == []


def test_aggregates_float_and_exact():
    pts = [(1, 0.1), (2, 0.2), (3, 0.3)]
    assert aggregate_exact(pts, "Average") == Fraction(1, 5)
    assert aggregate_exact(pts, "Sum") == Fraction(3, 5)
    assert aggregate(pts, "Count") == aggregate_exact(pts, "Count") == 3
    assert aggregate([(3, 1), (1, 9)], "Last") == 1
    assert aggregate(pts, "Max") == 0.3 and aggregate(pts, "Min") == 0.1


def test_rule_value_and_compare():
    r = mk_rule("LessThan", 0.2, "Decrease", divide_per_instance=True)
    obs = MetricObservation.model_validate({"series": [[NOW - 60, 0.3], [NOW, 0.9]]})
    v = rule_value(r, obs, NOW, 3)
    assert v.approx == pytest.approx(0.2) and v.exact() == Fraction(1, 5)
    assert compare("LessThan", v, 0.2) is False and compare("LessThanOrEqual", v, 0.2) is True
    assert compare("Equals", v, 0.2) is True and compare("NotEquals", v, 0.2) is False
    # projections: value × num / den; den 0 is +infinity for a positive value
    assert compare("GreaterThanOrEqual", v, 0.6, 3, 1) is True
    assert compare("GreaterThan", v, 1e9, 3, 0) is True
    zero = RuleValue(0.0, [(NOW, 0)], "Average")
    assert compare("GreaterThan", zero, 0, 3, 0) is False
    # the window is (now - w, now]
    assert rule_value(mk_rule(time_window_seconds=60), obs, NOW + 60, 1) is None
    assert rule_value(mk_rule(time_window_seconds=60), obs, NOW + 59, 1).approx == 0.9
    # a cache shared by one decision's rules
    cache: dict = {}
    a = rule_value(r, obs, NOW, 3, cache=cache)
    b = rule_value(mk_rule("GreaterThan", 1, divide_per_instance=False), obs, NOW, 3, cache=cache)
    assert len(cache) == 1 and a.approx * 3 == pytest.approx(b.approx)


def test_actions():
    act = lambda **kw: RuleAction.model_validate(kw)   # noqa: E731
    assert action_result(act(direction="Increase", type="ChangeCount", value=3), 4) == 7
    assert action_result(act(direction="Decrease", type="ChangeCount", value=9), 4) == 0
    assert action_result(act(direction="Increase", type="PercentChangeCount", value=15), 10) == 12
    assert action_result(act(direction="Decrease", type="PercentChangeCount", value=15), 10) == 8
    assert action_result(act(direction="Decrease", type="PercentChangeCount", value=15), 10, rounding="floor") == 9
    assert action_result(act(direction="Increase", type="ExactCount", value=8), 3) == 8
    assert action_result(act(direction="Decrease", type="ExactCount", value=8), 3) == 3
    nv = act(direction="Increase", type="ServiceAllowedNextValue")
    assert action_result(nv, 5, allowed=[1, 2, 4, 8]) == 8
    assert action_result(nv, 8, allowed=[1, 2, 4, 8]) == 8
    assert action_result(act(direction="Decrease", type="ServiceAllowedNextValue"), 5, allowed=[1, 2, 4, 8]) == 4
    assert percent_change(100, 29, "floor") == 29
    assert percent_change(3, 50, "nearest") == 2 and percent_change(5, 10, "nearest") == 1
    assert percent_change(10, 1, "floor", min_magnitude=2) == 2


def test_evaluate_and_combine():
    obs = MetricObservation.model_validate({"series": [[NOW, 50]], "forecast": [[NOW + 600, 90]]})
    up = evaluate_rule(mk_rule(), 0, obs, NOW, 4)
    assert (up.fired, up.result) == (False, None)
    fup = evaluate_rule(mk_rule(), 0, obs, NOW, 4, forecast_horizon=600)
    assert (fup.fired, fup.result, fup.forecast) == (True, 5, 90)
    down1 = evaluate_rule(mk_rule("LessThan", 60, "Decrease"), 1, obs, NOW, 4)
    down2 = evaluate_rule(mk_rule("LessThan", 40, "Decrease"), 2, obs, NOW, 4)
    c = combine_rules([up, down1, down2], 4)
    assert (c.count, c.direction) == (4, None) and "1 of 2" in c.why
    c = combine_rules([up, down1], 4)
    assert (c.count, c.direction, c.winners) == (3, "Decrease", [down1])
    c = combine_rules([fup, down1], 4)
    assert (c.count, c.direction) == (5, "Increase")
    # no rule in force keeps the count, as rules none of which fired do
    for none in ([], iter([])):
        c = combine_rules(none, 4)
        assert (c.count, c.direction, c.winners, c.fired, c.of, c.why) == (4, None, [], 0, 0, "no rule fired")
    missing = evaluate_rule(mk_rule(), 0, None, NOW, 4)
    assert missing.value is None and "no observation" in missing.error
