"""Scale-in controls: how far below the recent peak the recommended size may drop.

GCE ``autoscalingPolicy.scaleInControl``
(https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers):
"Configuration that allows for slower scale in so that even if Autoscaler
recommends an abrupt scale in of a MIG, it will be throttled as specified by
the parameters below." ``maxScaledInReplicas``: "Maximum allowed number (or %)
of VMs that can be deducted from the peak recommendation during the window
autoscaler looks at when computing recommendations." ``timeWindowSec``: "How
far back autoscaling looks when computing recommendations to include
directives regarding slower scale in."

The protocol (scaling limits, docs/architecture.md): the size never drops below the peak of
``state.sizes`` (earlier ``recommended_replicas``) within
``time_window_seconds`` minus ``fixed``, or minus ``floor(percent × peak / 100)``
in exact arithmetic. Scale-out is never limited. The peak is a
:meth:`~scalebridge.state.TimeLog.window_max` query: O(1) amortized.
"""
from __future__ import annotations

from typing import Optional

from ..state import TimeLog
from .proposals import exact_pair

__all__ = ["scale_in_floor", "limit_scale_in"]


def scale_in_floor(sizes: TimeLog, now: float, control) -> Optional[int]:
    """The lowest size ``control`` (a :class:`~scalebridge.policy.ScaleInControl`)
    allows at ``now``, or None when ``sizes`` holds nothing inside the window.
    Windows are ``(now - w, now]``."""
    peak = sizes.window_max(now, control.time_window_seconds)
    if peak is None:
        return None
    m = control.max_scaled_in_replicas
    if m.fixed is not None:
        return peak - m.fixed
    pn, pd = exact_pair(m.percent)
    return peak - (peak * pn) // (100 * pd)


def limit_scale_in(sizes: TimeLog, now: float, recommended: int, control,
                   max_replicas: Optional[int] = None) -> tuple[int, bool]:
    """``(max(recommended, floor), limited)``. The floor never exceeds
    ``max_replicas`` (a lowered maximum wins over an older, higher peak)."""
    if control is None:
        return recommended, False
    floor = scale_in_floor(sizes, now, control)
    if floor is None:
        return recommended, False
    if max_replicas is not None and floor > max_replicas:
        floor = max_replicas
    if floor > recommended:
        return floor, True
    return recommended, False
