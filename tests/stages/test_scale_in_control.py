"""The scale-in control stage (scalebridge.stages.scale_in_control): the floor a fixed or
percent maxScaledInReplicas sets under the peak of the time window.

Source: https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (scaleInControl)."""
from __future__ import annotations

from scalebridge.policy import ScaleInControl
from scalebridge.stages.scale_in_control import limit_scale_in, scale_in_floor
from scalebridge.state import TimeLog
from scalebridge.testing.requests import GCE_NOW


def test_scale_in_floor_fixed_and_percent():
    sizes = TimeLog([(GCE_NOW - 1300, 90, None), (GCE_NOW - 900, 50, None), (GCE_NOW - 60, 30, None)])
    fixed = ScaleInControl.model_validate({"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200})
    assert scale_in_floor(sizes, GCE_NOW, fixed) == 40
    pct = ScaleInControl.model_validate({"max_scaled_in_replicas": {"percent": 15}, "time_window_seconds": 1200})
    assert scale_in_floor(sizes, GCE_NOW, pct) == 43                       # 50 − floor(7.5)
    pct = ScaleInControl.model_validate({"max_scaled_in_replicas": {"percent": 29}, "time_window_seconds": 1200})
    assert scale_in_floor(TimeLog([(GCE_NOW - 1, 100, None)]), GCE_NOW, pct) == 71   # exact: 100 × 29 % is 29
    assert scale_in_floor(TimeLog(), GCE_NOW, fixed) is None
    assert limit_scale_in(sizes, GCE_NOW, 20, fixed) == (40, True)
    assert limit_scale_in(sizes, GCE_NOW, 45, fixed) == (45, False)
    assert limit_scale_in(sizes, GCE_NOW, 20, fixed, max_replicas=35) == (35, True)
    assert limit_scale_in(sizes, GCE_NOW, 20, None) == (20, False)
