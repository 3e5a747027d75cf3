"""Signals that join the metric proposals: capacity forecasts.

Spec (observations.forecast): a forecast joins the signals by max and never
causes a scale-in by itself (AWS predictive scaling: "predictive scaling ...
only scales out"; GCE predictive autoscaling likewise only raises the
recommendation). It is ignored under ``ForecastOnly`` and ``Disabled``.
"""
from __future__ import annotations

from typing import Optional

from ..semantics.base import Context


def predictive_mode(ctx: Context, semantics: str) -> str:
    """``policy.predictive.mode`` with the spec's defaults: absent predictive →
    Disabled; present without mode → ForecastOnly under aws (AWS's default),
    ForecastAndScale elsewhere."""
    p = ctx.policy.predictive
    if p is None:
        return "Disabled"
    if p.mode is not None:
        return p.mode
    return "ForecastOnly" if semantics == "aws" else "ForecastAndScale"


def forecast_floor(ctx: Context, semantics: str) -> Optional[int]:
    """The forecast's replicas when it may act on this decision, else None."""
    f = ctx.obs.forecast
    if f is None or predictive_mode(ctx, semantics) != "ForecastAndScale":
        return None
    return f.replicas
