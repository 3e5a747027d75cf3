"""``invalid_values_as_zero``: an external metric's negative, NaN or infinite value read as 0,
as KEDA's scalers report it from 2.20.2 (kedacore/keda#7889; :mod:`scalebridge.stages.impossible`).

KEDA clamps the value a scaler reports to the HPA (``GenerateMetricInMili`` →
``quantityFromFloat64``, pkg/scalers/scaler.go) but computes the scaler's activity from the
value as read, before the clamp (e.g. ``prometheus_scaler.go`` ``GetMetricsAndActivity``:
``return …GenerateMetricInMili(metricName, val)…, val > s.metadata.ActivationThreshold``).
So this control is the innermost: the semantics reads the clamped values, while the
activation phase (:mod:`.activation`) compares the values as read with their thresholds; a
formula reads its external metrics clamped (:mod:`.formula`: they reach KEDA's formula as the
scalers reported them), and its own result is not clamped (``modifiers/formula.go`` sets the
composite metric directly).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..decision import Context, Decision
from ..policy import Policy
from ..stages.impossible import zeroed
from .base import Control, Inner

__all__ = ["InvalidAsZero", "external_names"]


def external_names(policy: Any) -> frozenset:
    """The names of the policy's external metrics (as written: a formula is not one)."""
    return frozenset(m.name for m in policy.metrics or () if m.type == "external")


class InvalidAsZero(Control):
    name = "invalid values as zero"

    def applies(self, policy: Policy) -> bool:
        return bool(policy.invalid_values_as_zero)

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        names = ctx.policy.derived("controls.zero", lambda p: external_names(p.source))
        obs = ctx.obs
        metrics = None
        for k in names:
            o = obs.metrics.get(k)
            z = zeroed(o)
            if z is not o:
                if metrics is None:
                    metrics = dict(obs.metrics)
                metrics[k] = z
                ctx.note("invalid values as zero", k, 0, f"a negative, NaN or infinite value of {k} is read as 0 "
                                                         "(invalid_values_as_zero: KEDA >= 2.20.2)")
        if metrics is None:
            return inner(ctx)
        ctx.obs = dataclasses.replace(obs, metrics=metrics)
        try:
            return inner(ctx)
        finally:
            ctx.obs = obs
