"""A metric that failed to be read (``observations.metrics.NAME.error``, docs/protocol.md):
the semantics sees it as it sees a missing metric — with its provider's own damping of
a missing metric — and its entries in the response say the error.

It runs for every policy (a failure is of the observations, not the policy), outermost
but for ``mode``: it starts ``ctx.failed``, which the controls inward of it read and the
formulas add to, and says every failure in the entries once they are all known. The
observations are taken out only where the semantics is called (:meth:`FailedReads.seen_by`):
a formula reads its metrics' observations as they came, failures included.
"""
from __future__ import annotations

import dataclasses

from ..decision import Context, Decision, aligned
from ..policy import Policy
from ..stages.impossible import INVALID
from .base import Control, Inner

__all__ = ["FailedReads", "FIRST_ERROR", "note_failures"]

#: how a semantics' summary of invalid metrics names the first (the HPA's
#: "invalid metrics (N invalid out of M), first error is: …", replica_calculator.go)
FIRST_ERROR = "first error is: "


class FailedReads(Control):
    name = "failed reads"

    def applies(self, policy: Policy) -> bool:
        return True

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        failed: dict[str, str] = {}
        for k, o in ctx.obs.metrics.items():
            if o.error is not None:
                failed[k] = o.error if o.error.startswith(INVALID) else f"metric could not be read: {o.error}"
        ctx.failed = failed
        ctx.values = {}
        unread = frozenset(failed)
        if unread and ctx.trace is not None and not any(c.adds_failures for c in ctx.policy.controls):
            note_failures(ctx)   # else the formulas note it, once theirs are known
        d = inner(ctx)
        if ctx.failed and d.cause != "activation":   # an activation decision's entries are the policy's already
            _say_failures(d, ctx, unread)
        return d

    @staticmethod
    def seen_by(decide: Inner) -> Inner:
        """``decide`` (the semantics') on the observations without those that failed."""
        def without_failures(ctx: Context) -> Decision:
            obs = ctx.obs
            for o in obs.metrics.values():
                if o.error is not None:
                    ctx.obs = dataclasses.replace(obs, metrics={k: o for k, o in obs.metrics.items()
                                                                if o.error is None})
                    break
            return decide(ctx)
        return without_failures


def note_failures(ctx: Context) -> None:
    """The explain trace's line naming the metrics that failed to be read or computed."""
    ctx.note("controls", None, sorted(ctx.failed), "metrics that failed to be read or computed")


def _say_failures(d: Decision, ctx: Context, unread: frozenset) -> None:
    """The response's entries with the error of each metric that failed to be read or
    computed; where the decision's first error is of a metric in ``unread`` (its
    observation failed), the decision's error names it as the entry does."""
    failed = ctx.failed
    source = ctx.policy.source
    entries = aligned(ctx.policy, d.metrics)
    rules = source.rules
    if d.profile is not None:
        rules = next((p.rules for p in source.profiles if p.name == d.profile), rules)
    for e in entries:
        if e.triggered is None and e.name in failed and e.error != "disabled":
            e.error = failed[e.name]
    for rule, e in zip(rules, [e for e in entries if e.triggered is not None]):
        if rule.metric in failed:
            e.error = failed[rule.metric]
    d.metrics = entries
    if unread and d.error and FIRST_ERROR in d.error:   # the semantics saw it missing: say why it was
        first = next((e for e in entries if e.error and e.error != "disabled"), None)
        if first is not None and first.name in unread:
            d.error = d.error[:d.error.index(FIRST_ERROR) + len(FIRST_ERROR)] + first.error
