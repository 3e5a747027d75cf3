"""Stabilization windows over recorded recommendations.

Kubernetes: ``stabilizeRecommendationWithBehaviors`` and the behavior-less
``stabilizeRecommendation`` in pkg/controller/podautoscaler/horizontal.go.
GCE: "the autoscaler ... uses the peak recommendation of the stabilization
period" (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions#stabilization_period).

Windows are ``(now - w, now]`` (the protocol's windows, docs/architecture.md). Queries cost O(1)
amortized through :class:`~scalebridge.state.TimeLog`'s monotonic views.
"""
from __future__ import annotations

from typing import Optional

from ..state import TimeLog


def stabilize_both_ways(recs: TimeLog, now: float, current: int, desired: int,
                        up_window: float, down_window: float) -> tuple[int, Optional[str]]:
    """Port of ``stabilizeRecommendationWithBehaviors``: the lowest recommendation
    of the scale-up window and the highest of the scale-down window (each
    including this one) bound the current count; then this unstabilized
    recommendation is recorded. Returns the stabilized count and, when it
    differs from ``desired``, ``ScaleUpStabilized``/``ScaleDownStabilized``."""
    up = desired
    down = desired
    if up_window > 0:
        m = recs.window_min(now, up_window)
        if m is not None and m < up:
            up = m
    if down_window > 0:
        m = recs.window_max(now, down_window)
        if m is not None and m > down:
            down = m
    recommendation = current
    if recommendation < up:
        recommendation = up
    if recommendation > down:
        recommendation = down
    recs.append(now, desired)
    if recommendation == desired:
        return recommendation, None
    return recommendation, ("ScaleUpStabilized" if desired >= current else "ScaleDownStabilized")


def stabilize_down(recs: TimeLog, now: float, desired: int, window: float,
                   closed: bool = False) -> tuple[int, Optional[str]]:
    """The highest recommendation within the window, this one included, then
    record this one (Kubernetes ``stabilizeRecommendation``; GCE's
    stabilization period). Scale-out is never delayed: a new peak wins at once.

    ``closed``: the window is ``[now - w, now]`` — Kubernetes' behavior-less path
    drops a sample only when ``rec.timestamp.Before(cutoff)``, so one exactly
    ``w`` old still counts (with a behavior, ``After(cutoff)`` excludes it)."""
    peak = recs.window_max(now, window, closed) if window > 0 else None
    recs.append(now, desired)
    if peak is not None and peak > desired:
        return peak, "ScaleDownStabilized"
    return desired, None
