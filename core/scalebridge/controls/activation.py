"""Scale to and from zero: KEDA's activation phase (pkg/scaling/scale_handler.go,
``getScaledObjectState``; ``scaleFromZeroOrIdle``, ``scaleToZeroOrIdle`` in
pkg/scaling/executor), the arithmetic and its sources in :mod:`scalebridge.stages.activation`.

Below ``max(min_replicas, 1)`` the target is idle: an active metric sets that size, else
it is held. Above it the semantics decides with that floor (the compiled policy has no
bound below it), until no metric has been active for ``scale_to_zero_delay_seconds`` and
the size goes to idle — or, while none has ever been active, until
``initial_scale_to_zero_delay_seconds`` have passed since the first decision.
``force_activation`` makes every metric count as active.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from ..decision import Context, Decision, MetricResult
from ..policy import Policy
from ..reads import Reads
from ..stages import activation as A
from ..stages.fallback import count_failures, failures_of
from ..stages.formula import PER_MEMBER, FormulaError, metric_value
from .base import Control, Inner
from .fallback import fallback_report, store_failures
from .formula import as_external, compiled_formulas, formulas_of

__all__ = ["Activation", "watched", "whole_object_fallback"]


def watched(policy: Policy) -> tuple:
    """The metrics whose activity counts, each with the metric its value is read as: a
    formula's is its own observation (an external metric), in place of the metrics it names."""
    replaced = formulas_of(policy).replaced if any(m.type == "formula" for m in policy.metrics or ()) else {}
    return tuple((m, as_external(m) if m.type == "formula" else m)
                 for m in policy.metrics or () if m.enabled and m.name not in replaced)


@dataclasses.dataclass(frozen=True)
class _Compiled:
    phases: A.Phases
    watched: tuple
    formulas: bool


class Activation(Control):
    name = "activation"

    def applies(self, policy: Policy) -> bool:
        return A.phases_of(policy) is not None

    def compile(self, policy: Policy) -> dict[str, Any]:
        """The scaling phase has no bound below ``max(min_replicas, 1)``."""
        floor = A.phases_of(policy).floor
        out: dict[str, Any] = {}
        if policy.min_replicas is None or policy.min_replicas < floor:
            out["min_replicas"] = floor
        if policy.profiles:
            out["profiles"] = [p if p.capacity.minimum >= 1 or p.capacity.maximum < 1 else
                               dataclasses.replace(p, capacity=dataclasses.replace(p.capacity, minimum=1))
                               for p in policy.profiles]
        return out

    def reads(self, policy: Policy, reads: Reads, semantics: Any) -> Reads:
        """The metrics it watches are read whatever the semantics, as that semantics reads a
        metric of their type (a formula's are read for the formula)."""
        return reads.with_needs(semantics.metric_need(m) for m, _ in watched(policy) if m.type != "formula")

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        c = ctx.policy.derived("controls.activation",
                               lambda p: _Compiled(A.phases_of(p.source), watched(p.source),
                                                   any(m.type == "formula" for m in p.source.metrics or ())))
        phases = c.phases
        state, now, current = ctx.state, ctx.now, ctx.current
        failed, values = ctx.failed, ctx.values
        last = A.last_active_of(state.extra)
        since = _since(state, phases, last, now)
        statuses, errors = _activity(c.watched, ctx.obs, failed, values)
        bad = [n for n, s in statuses.items() if s == "failed"]
        fb = whole_object_fallback(ctx.policy)
        counts = count_failures(failures_of(state.extra), [m.name for m, _ in c.watched], bad) if fb else {}
        in_fallback = [k for k in bad if counts[k] > fb.failure_threshold] if fb else []
        erroring = [k for k in bad if k not in in_fallback]
        active = any(s == "active" for s in statuses.values()) or bool(in_fallback)
        if not erroring and all(m.type in ("resource", "container_resource") for m, _ in c.watched):
            active = True   # cpu/memory only: never idle (KEDA getScaledObjectState)
        forced = phases.forced
        only_forced = forced and not active
        active = active or forced   # RequestScale: isActive || NeedToForceActivation()
        at_idle = current < phases.floor
        if not at_idle and (active or erroring or
                            not A.may_go_idle(last, now, phases.delay, since, phases.initial_delay)):
            d = inner(ctx)
            if active and not erroring:
                last = now
            _store_last_active(state, last)
            _store_since(state, since, last)
            d.extra = {**(d.extra or {}), "activation": _report(active, last, forced)}
            return d
        if at_idle and active:
            target, reason, last = phases.floor, "Activated", now
            why = (f"activation is forced (force_activation): {current} to {phases.floor}" if only_forced else
                   f"a metric is above its activation threshold (or in fallback): {current} to {phases.floor}")
        elif at_idle:
            target, reason = current, "Idle"
            why = "no metric is above its activation threshold"
        else:
            target, reason = phases.idle, "Deactivated"
            why = (f"no metric has been above its activation threshold since {last:g}, more than {phases.delay:g}s"
                   if last is not None else
                   f"no metric is active and none was seen active since the first decision at {since:g}, more "
                   f"than {phases.initial_delay:g}s (initial_scale_to_zero_delay_seconds)"
                   if phases.initial_delay > 0 and since is not None else
                   "no metric is active and none was seen active (first sight)")
        ctx.note("activation", current, target, why)
        if fb is not None:
            store_failures(state, counts)
        _store_last_active(state, last)
        _store_since(state, since, last)
        replaced = compiled_formulas(ctx.policy).replaced if c.formulas else {}
        entries = []
        for m in ctx.policy.source.metrics or ():
            e = MetricResult(m.name, value=values.get(m.name),
                             error=failed.get(m.name, errors.get(m.name)) if m.enabled else "disabled")
            if m.name in replaced:
                e.formula = replaced[m.name]
            entries.append(e)
        extra: dict = {"activation": _report(active, last, forced)}
        if fb is not None:
            extra["fallback"] = fallback_report(fb, counts, None)
        return Decision(target, target, reason, entries, cause="activation", extra=extra)


def whole_object_fallback(policy):
    """The policy's fallback where it stands for the whole target (KEDA's ``doFallback``):
    None under ``behavior: formula``, which falls back inside the formulas instead
    (:mod:`.formula`)."""
    fb = policy.fallback
    return None if fb is None or fb.behavior == "formula" else fb


def _report(active: bool, last: Optional[float], forced: bool) -> dict:
    out: dict = {"active": active, "last_active": last}
    if forced:
        out["forced"] = True
    return out


def _since(state, phases: A.Phases, last: Optional[float], now: float) -> Optional[float]:
    """The first decision's time, while the initial delay can matter (a delay above 0 and no
    metric yet seen active): recorded at the first such decision."""
    if phases.initial_delay <= 0 or last is not None:
        return None
    since = A.since_of(state.extra)
    return now if since is None else since


def _store_since(state, since: Optional[float], last: Optional[float]) -> None:
    if since is None or last is not None:
        state.extra.pop(A.STATE_SINCE, None)
    else:
        state.extra[A.STATE_SINCE] = since


def _store_last_active(state, last: Optional[float]) -> None:
    if last is None:
        state.extra.pop(A.STATE_LAST_ACTIVE, None)
    else:
        state.extra[A.STATE_LAST_ACTIVE] = last


def _activity(watched: tuple, obs, failed: dict, values: dict) -> tuple[dict, dict]:
    """Each watched metric's status — ``active`` (above its activation threshold),
    ``inactive``, ``failed`` (not read, or not computed), ``unsampled`` (a per-member
    metric with no member to sample: not a failure) — and why each failed one did."""
    out: dict = {}
    errors: dict = {}
    for m, spec in watched:
        if m.name in failed:
            out[m.name] = "failed"
            continue
        try:
            v = metric_value(spec, obs.metrics.get(m.name), obs.members)
        except FormulaError as e:
            out[m.name], errors[m.name] = "failed", str(e)
            continue
        values[m.name] = v
        if v is None:
            if m.type in PER_MEMBER:
                out[m.name] = "unsampled"
            else:
                out[m.name], errors[m.name] = "failed", f"metric {m.name} has no value"
            continue
        threshold = m.activation_threshold if m.activation_threshold is not None else 0
        out[m.name] = "active" if v > threshold else "inactive"
    return out, errors
