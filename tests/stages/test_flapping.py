"""The flapping stage (scalebridge.stages.flapping): the projected metric after a
scale-in and the reduced count that would not scale out again.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-flapping."""
from __future__ import annotations

from scalebridge.policy import Rule, RuleAction
from scalebridge.protocol import MetricObservation
from scalebridge.stages.flapping import prevent_flapping, Projection, scale_out_projections, would_scale_out
from scalebridge.stages.rules import RuleValue, evaluate_rule
from scalebridge.testing.requests import AZURE_NOW as NOW


def _proj(v, op="GreaterThan", thr=70):
    return Projection(RuleValue(float(v), [(NOW, v)], "Average"), op, thr, "cpu")


def test_prevent_flapping():
    # 30 instances at 65 % CPU, target 20: 28 is the nearest count that would not fire > 70 %
    r = prevent_flapping(30, 20, 1, 60, [_proj(65)])
    assert (r.count, r.reason, r.target) == (28, "FlappingReduced", 20)
    assert prevent_flapping(2, 1, 1, 10, [_proj(28, thr=50)]).reason == "FlappingPrevented"
    assert prevent_flapping(2, 1, 1, 10, [_proj(28, thr=50)]).count == 2
    assert prevent_flapping(3, 2, 1, 10, [_proj(50, "GreaterThanOrEqual", 80)]).count == 2
    # the target is clamped to [min, max] before the estimate; the unclamped target comes back
    assert prevent_flapping(5, 1, 3, 10, [_proj(10)]) .count == 1
    assert prevent_flapping(5, 1, 3, 10, [_proj(10)]).target == 3
    # never searched above the maximum
    assert prevent_flapping(12, 8, 1, 9, [_proj(60)]).count == 12
    assert would_scale_out([_proj(60)], 12, 9) is not None
    # scale-outs pass through
    assert prevent_flapping(3, 5, 1, 10, [_proj(99)]).count == 5


def _rule(metric, operator, threshold, direction, name=None):
    return Rule(metric=metric, name=name, operator=operator, threshold=threshold, time_window_seconds=300,
                action=RuleAction(direction=direction, type="ChangeCount", value=1))


def test_scale_in_is_checked_against_every_readable_scale_out_rule_fired_or_not():
    obs = MetricObservation.model_validate({"series": [[NOW, 50]]})
    fired_out = evaluate_rule(_rule("cpu", "GreaterThan", 40, "Increase", "hot"), 0, obs, NOW, 4)
    quiet_out = evaluate_rule(_rule("cpu", "GreaterThan", 70, "Increase"), 1, obs, NOW, 4)
    unread_out = evaluate_rule(_rule("q", "GreaterThan", 70, "Increase"), 2, None, NOW, 4)
    scale_in = evaluate_rule(_rule("cpu", "LessThan", 60, "Decrease"), 3, obs, NOW, 4)
    assert fired_out.fired and not quiet_out.fired and unread_out.value is None and scale_in.fired
    got = scale_out_projections([fired_out, quiet_out, unread_out, scale_in])
    assert [(p.name, p.operator, p.threshold) for p in got] == [("hot", "GreaterThan", 40), ("cpu", "GreaterThan", 70)]
    assert got[0].value is fired_out.value
    # 4 at 50 % to 3: 66.7 % fires the > 40 % rule only; without it, the > 70 % rule lets it through
    assert prevent_flapping(4, 3, 1, 10, got).reason == "FlappingPrevented"
    assert prevent_flapping(4, 3, 1, 10, got[1:]).reason is None
