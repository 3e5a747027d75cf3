"""``mode``: ``OFF`` keeps the size, ``ONLY_SCALE_OUT`` keeps it on a scale-in and
``ONLY_SCALE_IN`` keeps it on a scale-out, under every semantics alike;
``recommended_replicas`` is still reported (docs/protocol.md, ``mode``). Outermost: it acts
on the decision every other control and the semantics made — a scale to or from zero
too, as KEDA's pause annotations block them (``autoscaling.keda.sh/paused-scale-in``:
``scaleToZeroOrIdle`` returns early; ``paused-scale-out``: ``scaleFromZeroOrIdle`` does;
kedacore/keda v2.20.2 pkg/scaling/executor/scale_scaledobjects.go)."""
from __future__ import annotations

from ..decision import Context, Decision
from ..policy import Policy
from .base import Control, Inner

__all__ = ["Mode"]


class Mode(Control):
    name = "mode"

    def applies(self, policy: Policy) -> bool:
        return policy.mode != "ON"

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        d = inner(ctx)
        mode, current = ctx.policy.mode, ctx.current
        if mode == "OFF" and d.desired != current:
            ctx.note("mode", d.desired, current, "mode OFF: the recommendation is reported, not applied")
            d.desired, d.reason = current, "ScalingDisabled"
        elif mode == "ONLY_SCALE_OUT" and d.desired < current:
            ctx.note("mode", d.desired, current, "mode ONLY_SCALE_OUT: no scale-in")
            d.desired, d.reason = current, "ScalingDisabled"
        elif mode == "ONLY_SCALE_IN" and d.desired > current:
            ctx.note("mode", d.desired, current, "mode ONLY_SCALE_IN: no scale-out")
            d.desired, d.reason = current, "ScalingDisabled"
        return d
