"""The flapping stage (scalebridge.stages.flapping): the projected metric after a
scale-in and the reduced count that would not scale out again.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-flapping."""
from __future__ import annotations

from scalebridge.stages.flapping import prevent_flapping, Projection, would_scale_out
from scalebridge.stages.rules import RuleValue
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
