"""The controls: what sits around every semantics alike (docs/policy.md, docs/semantics.md).

None of them is a provider's arithmetic — most are KEDA's, which runs beside the
Kubernetes HPA — and each semantics keeps its own. A control changes only what goes in
and what a decision is when it applies, through the one interface of
:class:`~scalebridge.controls.base.Control`. Outermost first:

1. :mod:`.mode` — ``OFF``, ``ONLY_SCALE_OUT`` and ``ONLY_SCALE_IN`` (docs/protocol.md, ``mode``);
2. :mod:`.failed` — a metric that failed to be read is seen missing, its entry says why;
3. :mod:`.formula` — formulas, each an ``external`` metric computed from the metrics it names
   (and, under ``fallback.behavior: formula``, a metric failing past its threshold null in them);
4. :mod:`.activation` — scale to and from zero (the idle size, activation, deactivation);
5. :mod:`.fallback` — the fallback count of a metric failing past its threshold;
6. :mod:`.zero` — an external metric's negative, NaN or infinite value read as 0
   (``invalid_values_as_zero``), innermost: the activation phase compares the value as read;

and, before any decision, :mod:`.pause` — a target paused holds its size, undecided.

:func:`compile` makes the policy as decisions read it (the
:class:`~scalebridge.compiled.CompiledPolicy`: the controls that apply, and what they
change); :func:`decide` runs one decision through them; :func:`reads` says what deciding
on a policy reads, with them. A new control is a module here with a :class:`Control`,
and its place in :data:`CONTROLS`.
"""
from __future__ import annotations

from functools import partial
from typing import Any

from ..compiled import CompiledPolicy
from ..decision import Context, Decision, MetricResult
from ..policy import Policy
from ..reads import Reads
from .activation import Activation
from .base import Control, Inner
from .failed import FailedReads
from .fallback import Fallback
from .formula import Formulas
from .mode import Mode
from .zero import InvalidAsZero

__all__ = ["CONTROLS", "Control", "Inner", "compile", "decide", "reads"]

#: every control, outermost first
CONTROLS: tuple[Control, ...] = (Mode(), FailedReads(), Formulas(), Activation(), Fallback(), InvalidAsZero())

_ONLY_FAILED_READS = (CONTROLS[1],)


def compile(policy: Policy) -> CompiledPolicy:
    """The policy as decisions read it: the controls that apply to it, outermost first, and
    the fields they change (never the policy itself)."""
    applying = tuple(c for c in CONTROLS if c.applies(policy))
    if applying == _ONLY_FAILED_READS:
        applying = _ONLY_FAILED_READS   # one tuple: decide() knows it by identity
    changes: dict[str, Any] = {}
    for c in applying:
        changes.update(c.compile(policy))
    return CompiledPolicy(policy, applying, **changes)


def decide(semantics: Any, ctx: Context) -> Decision:
    """One decision of ``semantics`` (its ``decide``) with the controls of ``ctx.policy``
    around it."""
    policy = ctx.policy
    if policy.controls is _ONLY_FAILED_READS:
        for o in ctx.obs.metrics.values():
            if o.error is not None:
                break
        else:   # nothing to control: the semantics alone (most decisions)
            return _results(semantics.decide(ctx))
    return policy.derived(("controls", semantics), lambda p: _chain(p.controls, semantics))(ctx)


def _results(d: Decision) -> Decision:
    """``d`` with its entries as :class:`MetricResult` (a semantics written before them
    returned dicts)."""
    metrics = d.metrics
    if metrics and type(metrics[0]) is not MetricResult:
        d.metrics = [MetricResult.of(m) for m in metrics]
    return d


def _chain(controls: tuple[Control, ...], semantics: Any) -> Inner:
    decide = semantics.decide
    inner: Inner = FailedReads.seen_by(lambda ctx: _results(decide(ctx)))
    for c in reversed(controls):
        inner = partial(c.decide, inner=inner)
    return inner


def reads(policy: CompiledPolicy, semantics: Any) -> Reads:
    """What deciding on ``policy`` with ``semantics`` reads: what the semantics reads of it,
    then what each control adds, innermost first."""
    r = semantics.reads(policy)
    for c in reversed(policy.controls):
        r = c.reads(policy.source, r, semantics)
    return r
