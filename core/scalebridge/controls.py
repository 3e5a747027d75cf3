"""The neutral controls, applied around every semantics alike: formulas, fallback on
metric failure, and scale to and from zero (docs/policy.md, docs/semantics.md).

None of them is a provider's (they are KEDA's, which runs beside the Kubernetes
HPA): each semantics keeps its own arithmetic, and this layer changes only what
goes in and what a decision is when a control applies —

1. **a metric that failed to be read** (``observations.metrics.NAME.error``) is
   taken out of the observations, so every semantics sees it as it sees a
   missing metric; its entry in the response says the error;
2. **formulas** (:mod:`.stages.formula`): the policy the semantics runs has each
   formula as an ``external`` metric of its name and target, the metrics it
   names disabled, and its observation computed from theirs; a formula that
   cannot be computed is a missing metric;
3. **fallback** (:mod:`.stages.fallback`): each metric's consecutive failed
   decisions are counted in ``state``; past ``failure_threshold`` the fallback
   count joins the read metrics' proposals, the semantics decides from that
   as ``observations.proposal`` (its stabilization, rate limits, profiles and
   bounds apply), and the reason is ``Fallback``;
4. **activation** (:mod:`.stages.activation`): below ``max(min_replicas, 1)``
   the target is idle — an active metric sets that size, else it is held; above
   it the semantics decides with that floor, until no metric has been active
   for ``scale_to_zero_delay_seconds`` and the size goes to idle.

A policy with none of these keys (and observations without ``error``) is
decided by its semantics exactly as before: :func:`controls_of` is None for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from .decision import Context, Decision
from .policy import Metric, Policy
from .protocol import MetricObservation
from .stages import activation as A
from .stages.fallback import STATE_FAILURES, count_failures, failures_of, fallback_proposal, fallback_replicas
from .stages.formula import PER_MEMBER, FormulaError, formula_observation, metric_value

__all__ = ["Controls", "controls_of", "decide"]


@dataclass(frozen=True)
class _Formula:
    index: int
    metric: Metric
    compiled: Any


class Controls:
    """What the neutral controls derive from one policy (cached on it)."""
    __slots__ = ("policy", "effective", "scaling", "formulas", "replaced", "fallback", "phases", "watched")

    def __init__(self, policy: Policy):
        from .cel import compile_formula
        self.policy = policy
        metrics = policy.metrics or []
        names = tuple(m.name for m in metrics if m.type != "formula")
        self.formulas = tuple(_Formula(i, m, compile_formula(m.expression, tuple(n for n in names if n != m.name)))
                              for i, m in enumerate(metrics) if m.type == "formula")
        self.replaced: dict[str, str] = {}      # metric name -> the formula that replaces it
        for f in self.formulas:
            for n in f.compiled.references:
                self.replaced.setdefault(n, f.metric.name)
        self.fallback = policy.fallback
        self.phases = A.phases_of(policy)
        self.effective = _derive(policy, self.formulas, self.replaced, None)
        self.scaling = self.effective if self.phases is None else \
            _derive(policy, self.formulas, self.replaced, self.phases.floor)
        # the metrics whose activity counts: formulas in place of the metrics they name
        self.watched = tuple(m for m in metrics if m.enabled and m.name not in self.replaced)

    @property
    def idle_only(self) -> bool:
        return not self.formulas and self.fallback is None and self.phases is None


def _derive(policy: Policy, formulas: tuple, replaced: dict, floor: Optional[int]) -> Policy:
    """The policy the semantics runs: formulas as external metrics, the metrics they
    name disabled; with ``floor``, no bound below it (the scaling phase)."""
    if not formulas and floor is None:
        return policy
    update: dict = {}
    if formulas:
        out = []
        for m in policy.metrics:
            if m.type == "formula":
                out.append(m.model_copy(update={"type": "external", "expression": None}))
            elif m.name in replaced:
                out.append(m.model_copy(update={"enabled": False}))
            else:
                out.append(m)
        update["metrics"] = out
    if floor is not None:
        if policy.min_replicas is None or policy.min_replicas < floor:
            update["min_replicas"] = floor
        if policy.profiles:
            update["profiles"] = [p if p.capacity.minimum >= 1 or p.capacity.maximum < 1 else
                                  p.model_copy(update={"capacity": p.capacity.model_copy(update={"minimum": 1})})
                                  for p in policy.profiles]
    derived = policy.model_copy(update=update)
    object.__setattr__(derived, "__pydantic_private__", {"_compiled": {}})   # its own compiled forms
    return derived


_NONE = object()


def controls_of(policy: Policy) -> Optional[Controls]:
    """The policy's controls (compiled once), or None when it uses none."""
    cache = policy.compiled()
    c = cache.get("controls", _NONE)
    if c is _NONE:
        uses = policy.fallback is not None or A.phases_of(policy) is not None or \
            any(m.type == "formula" for m in policy.metrics or ())
        c = cache["controls"] = Controls(policy) if uses else None
    return c


def _entry(m: Any) -> dict:
    return m if isinstance(m, dict) else m.to_dict()


def decide(semantics, ctx: Context, align: Callable) -> Decision:
    """One decision of ``semantics`` with the policy's controls applied (the engine's
    ``run`` calls this instead of ``semantics.decide`` when :func:`needed`)."""
    c = controls_of(ctx.policy)
    original = ctx.policy
    obs = ctx.obs
    failed: dict[str, str] = {k: f"metric could not be read: {o.error}"
                              for k, o in obs.metrics.items() if o.error is not None}
    metrics = {k: o for k, o in obs.metrics.items() if o.error is None} if failed else None
    values: dict[str, Optional[float]] = {}
    if c is not None and c.formulas:
        metrics = dict(obs.metrics) if metrics is None else metrics
        for f in c.formulas:
            m = f.metric
            try:
                metrics[m.name] = MetricObservation.model_validate(
                    formula_observation(f.compiled, original.metrics, obs.metrics, obs.members, ctx.now))
            except FormulaError as e:
                metrics.pop(m.name, None)
                failed[m.name] = f"formula {m.name}: {e}"
            for n in f.compiled.references:   # the values it read, for the response
                spec = next(x for x in original.metrics if x.name == n)
                try:
                    values[n] = metric_value(spec, obs.metrics.get(n), obs.members)
                except FormulaError:
                    values[n] = None
    if metrics is not None:
        ctx.obs = obs.model_copy(update={"metrics": metrics})
        if ctx.trace is not None and failed:
            ctx.note("controls", None, sorted(failed), "metrics that failed to be read or computed")
    if c is None:   # only failed observations to report
        d = semantics.decide(ctx)
        _patch(d, original, failed, {}, c, align, ctx.policy)
        return d

    state, now, current = ctx.state, ctx.now, ctx.current
    prev = failures_of(state.extra) if c.fallback is not None else {}
    phases = c.phases
    if phases is not None:
        last = A.last_active_of(state.extra)
        statuses = _activity(c, obs, ctx.obs, failed, values)
        at_idle = current < phases.floor
        read = [m.name for m in c.watched]
        bad = [n for n, s in statuses.items() if s == "failed"]
        counts = count_failures(prev, read, bad) if c.fallback is not None else {}
        in_fallback = [k for k in bad if counts.get(k, 0) > (c.fallback.failure_threshold if c.fallback else 0)] \
            if c.fallback is not None else []
        active = any(s == "active" for s in statuses.values()) or bool(in_fallback)
        if statuses and all(m.type in ("resource", "container_resource") for m in c.watched) and not bad:
            active = True   # cpu/memory only: never idle (KEDA getScaledObjectState)
        erroring = [k for k in bad if k not in in_fallback]
        if at_idle or (not active and not erroring and A.may_go_idle(last, now, phases.delay)):
            if at_idle and active:
                target, reason = phases.floor, "Activated"
                why = f"a metric is above its activation threshold: from {current} to {phases.floor}"
                last = now
            elif at_idle:
                target, reason = current, "Idle"
                why = "no metric is above its activation threshold"
            else:
                target, reason = phases.idle, "Deactivated"
                why = (f"no metric above its activation threshold since {last:g} (more than "
                       f"{phases.delay:g}s)" if last is not None else "no metric has been active (first sight)")
            ctx.note("activation", current, target, why)
            _store(state, c, counts, last)
            entries = [_idle_entry(m, values, failed, c) for m in original.metrics or ()]
            d = Decision(target, target, reason, entries, cause="activation",
                         extra=_report(c, counts, active, last, in_fallback))
            ctx.policy = c.scaling
            return d
        ctx.policy = c.scaling
        d = _scaling_phase(semantics, ctx, c, prev, failed, align)
        if active and not erroring:
            last = now
        _store(state, c, None, last)
        d.extra = {**(d.extra or {}), **_report(c, None, active, last, None, state)}
        _patch(d, original, failed, values, c, align, ctx.policy)
        return d
    ctx.policy = c.effective
    d = _scaling_phase(semantics, ctx, c, prev, failed, align)
    if c.fallback is not None:
        d.extra = {**(d.extra or {}), **_report(c, None, None, None, None, state)}
    _patch(d, original, failed, values, c, align, ctx.policy)
    return d


def _activity(c: Controls, raw_obs, obs, failed: dict, values: dict) -> dict:
    """Each watched metric's status: ``active`` (above its activation threshold),
    ``inactive``, ``failed`` (not read, or not computed), or ``unsampled`` (a
    per-member metric with no member to sample: not a failure)."""
    out = {}
    members = raw_obs.members
    for m in c.watched:
        if m.name in failed:
            out[m.name] = "failed"
            continue
        try:
            v = metric_value(m if m.type != "formula" else _as_external(m), obs.metrics.get(m.name), members)
        except FormulaError as e:
            failed.setdefault(m.name, str(e))
            out[m.name] = "failed"
            continue
        values[m.name] = v
        if v is None:
            out[m.name] = "unsampled" if m.type in PER_MEMBER else "failed"
            if out[m.name] == "failed":
                failed.setdefault(m.name, f"metric {m.name} has no value")
            continue
        threshold = m.activation_threshold if m.activation_threshold is not None else 0
        out[m.name] = "active" if v > threshold else "inactive"
    return out


def _as_external(m: Metric) -> Metric:
    return m.model_copy(update={"type": "external", "expression": None})


def _scaling_phase(semantics, ctx: Context, c: Controls, prev: dict, failed: dict, align: Callable) -> Decision:
    """The semantics' decision, with fallback when a metric has failed past its threshold."""
    fb = c.fallback
    if fb is None or ctx.obs.proposal is not None:
        return semantics.decide(ctx)
    state = ctx.state
    imminent = any(n >= fb.failure_threshold for n in prev.values())
    scratch = state.copy() if imminent else state
    real = ctx.state
    ctx.state = scratch
    d = semantics.decide(ctx)
    ctx.state = real
    entries = [_entry(m) for m in align(ctx.policy, d.metrics)]
    d.metrics = entries
    read, bad, proposals = _read_metrics(ctx.policy, d, entries, failed)
    counts = count_failures(prev, read, bad)
    over = sorted(k for k in bad if counts[k] > fb.failure_threshold)
    _store(state if not imminent else scratch, c, counts, _KEEP)
    if not over:
        if imminent:
            state.assign(scratch)
        return d
    r = fallback_replicas(fb, ctx.current)
    still = any(counts[k] <= fb.failure_threshold for k in bad)
    p = fallback_proposal(r, proposals, ctx.current, still)
    ctx.note("fallback", ctx.current, p, f"{', '.join(over)} failed {max(counts[k] for k in over)} decisions in a "
                                        f"row (failure_threshold {fb.failure_threshold}): fallback {r} "
                                        f"({fb.behavior}) with the read metrics' proposals")
    obs = ctx.obs
    ctx.obs = obs.model_copy(update={"proposal": p})
    d2 = semantics.decide(ctx)
    ctx.obs = obs
    _store(state, c, counts, _KEEP)
    d2.metrics = entries
    d2.reason = "Fallback"
    if d2.cause == "metric":
        d2.cause = "fallback"
    d2.error = (f"fallback: {', '.join(over)} failed {max(counts[k] for k in over)} consecutive decisions "
                f"(failure_threshold {fb.failure_threshold}); fallback replicas {r} ({fb.behavior})")
    d2.extra = {**(d2.extra or {}), "fallback_replicas": r}
    return d2


def _read_metrics(policy: Policy, d: Decision, entries: list, failed: dict) -> tuple[list, set, list]:
    """The metric keys this decision read, those that failed, and the read ones' proposals."""
    read: list = []
    bad: set = set()
    proposals: list = []
    targets = [e for e in entries if "triggered" not in e]
    rules = [e for e in entries if "triggered" in e]
    for e in targets:
        if e.get("error") == "disabled":
            continue
        read.append(e["name"])
        if e.get("error") is not None or e["name"] in failed:
            bad.add(e["name"])
        else:
            proposals.append(e.get("replicas"))
    in_force = policy.rules
    if d.profile is not None:
        in_force = next((p.rules for p in policy.profiles if p.name == d.profile), policy.rules)
    for rule, e in zip(in_force, rules):
        if not rule.enabled:
            continue
        read.append(rule.metric)
        if e.get("error") is not None or rule.metric in failed:
            bad.add(rule.metric)
        elif e.get("triggered"):
            proposals.append(e.get("replicas"))
    return read, bad, proposals


_KEEP = object()


def _store(state, c: Controls, counts: Optional[dict], last: Any) -> None:
    if c.fallback is not None and counts is not None:
        if counts:
            state.extra[STATE_FAILURES] = counts
        else:
            state.extra.pop(STATE_FAILURES, None)
    if c.phases is not None and last is not _KEEP:
        if last is None:
            state.extra.pop(A.STATE_LAST_ACTIVE, None)
        else:
            state.extra[A.STATE_LAST_ACTIVE] = last


def _report(c: Controls, counts: Optional[dict], active: Optional[bool], last: Optional[float],
            in_fallback: Optional[list], state=None) -> dict:
    out: dict = {}
    if c.fallback is not None:
        if counts is None:
            counts = state.extra.get(STATE_FAILURES) or {}
        over = sorted(k for k, n in counts.items() if n > c.fallback.failure_threshold)
        out["fallback"] = {"active": bool(over), "failures": dict(counts), "metrics": over}
    if c.phases is not None:
        out["activation"] = {"active": bool(active), "last_active": last}
    return out


def _idle_entry(m: Metric, values: dict, failed: dict, c: Controls) -> dict:
    e = {"name": m.name, "replicas": None, "utilization": None, "value": values.get(m.name),
         "error": None if m.enabled else "disabled"}
    if m.name in failed:
        e["error"] = failed[m.name]
    if m.name in c.replaced:
        e["formula"] = c.replaced[m.name]
    return e


def _patch(d: Decision, policy: Policy, failed: dict, values: dict, c: Optional[Controls],
           align: Callable, ran: Policy) -> None:
    """The response's entries in the policy's terms (``ran``: the policy the semantics
    ran, aligned to first): the error of a metric that failed to be read or computed,
    and the metrics a formula replaced (their value, the formula)."""
    if not failed and (c is None or not c.replaced):
        return
    entries = [_entry(m) for m in align(ran, d.metrics)]
    specs = policy.metrics or []
    rules = policy.rules
    if d.profile is not None:
        rules = next((p.rules for p in policy.profiles if p.name == d.profile), policy.rules)
    targets = [e for e in entries if "triggered" not in e]
    aligned = len(targets) == len(specs) and all(e["name"] == m.name for e, m in zip(targets, specs))
    for e in targets:
        if e["name"] in failed and e.get("error") != "disabled":
            e["error"] = failed[e["name"]]
    if aligned and c is not None:
        for e, m in zip(targets, specs):
            if m.enabled and m.name in c.replaced:
                e.update({"error": failed.get(m.name), "value": values.get(m.name), "formula": c.replaced[m.name]})
    for rule, e in zip(rules, [e for e in entries if "triggered" in e]):
        if rule.metric in failed:
            e["error"] = failed[rule.metric]
    d.metrics = entries
