"""``scale_in``: which members leave on a scale-in, under every semantics alike
(docs/policy.md, ``scale_in``).

Outermost: it reads the decision every other control and the semantics made (after
``mode``: a scale-in the mode holds back removes no one) and, when that decision
scales in, adds the selection (:func:`scalebridge.stages.scale_in.select_members`)
to it as the response's ``scale_in`` object. It never changes how many leave — the
semantics says that; the selection says which. The controller carries it out with a
provider that can remove chosen members (``Capability.DELETE_MEMBERS``), and sets the
size otherwise.
"""
from __future__ import annotations

from typing import Any

from .. import constants as C
from ..decision import Context, Decision
from ..policy import Policy
from ..reads import Need, Reads
from ..stages.scale_in import samples_of, select_members
from .base import Control, Inner

__all__ = ["ScaleInSelection"]


class ScaleInSelection(Control):
    name = "scale_in"

    def applies(self, policy: Policy) -> bool:
        return policy.scale_in is not None

    def reads(self, policy: Policy, reads: Reads, semantics: Any) -> Reads:
        """The selection's metric, per member, beside whatever the semantics reads of it."""
        metric = policy.scale_in.metric
        if metric is None:
            return reads
        known = reads.need(metric)
        if known is not None:
            return reads.with_needs([Need(metric, known.type, known.spec, known.window_seconds,
                                          known.grain_seconds, frozenset({"members"}))])
        return reads.with_needs([Need(metric, "pods", None, C.METRIC_WINDOW_SECONDS, 60.0, frozenset({"members"}))])

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        d = inner(ctx)
        current = ctx.current
        if d.desired >= current:
            return d
        spec = ctx.policy.scale_in
        samples = samples_of(ctx.obs.metrics.get(spec.metric)) if spec.metric else None
        sel = select_members(ctx.obs.members, current - d.desired, spec.select, samples=samples, metric=spec.metric)
        ctx.note("scale-in selection", current, d.desired, sel.reason)
        d.extra = {**(d.extra or {}), "scale_in": sel.to_json()}
        return d
