"""Signals that join the metric proposals: capacity forecasts.

The protocol (``observations.forecast``, docs/protocol.md): a forecast joins the signals by max and never
causes a scale-in by itself (AWS predictive scaling: "predictive scaling ...
only scales out"; GCE predictive autoscaling likewise only raises the
recommendation). It is ignored under ``ForecastOnly`` and ``Disabled``.
"""
from __future__ import annotations

from typing import Optional

from ..decision import Context

FORECAST_AND_SCALE = "ForecastAndScale"


def predictive_mode(ctx: Context, default: str = FORECAST_AND_SCALE) -> str:
    """``policy.predictive.mode``: absent predictive → ``Disabled``; present without
    a mode → ``default``, the semantics' own (``Semantics.default_predictive_mode``: AWS
    predictive scaling defaults to ``ForecastOnly``,
    https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PredictiveScalingConfiguration.html)."""
    p = ctx.policy.predictive
    if p is None:
        return "Disabled"
    if p.mode is not None:
        return p.mode
    return default


def forecast_floor(ctx: Context, default: str = FORECAST_AND_SCALE) -> Optional[int]:
    """The forecast's replicas when it may act on this decision, else None
    (``default``: the semantics' predictive mode when the policy names none)."""
    f = ctx.obs.forecast
    if f is None or predictive_mode(ctx, default) != FORECAST_AND_SCALE:
        return None
    return f.replicas
