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
from .stages.impossible import INVALID

__all__ = ["Controls", "controls_of", "decide"]


@dataclass(frozen=True)
class _Formula:
    metric: Metric
    compiled: Any      # scalebridge.cel.Compiled
    inputs: tuple      # the metrics it names, in policy order


class Controls:
    """What the neutral controls derive from one policy (cached on it)."""
    __slots__ = ("policy", "effective", "scaling", "formulas", "replaced", "fallback", "phases", "watched")

    def __init__(self, policy: Policy):
        from .cel import compile_formula
        self.policy = policy
        metrics = policy.metrics or []
        names = tuple(m.name for m in metrics if m.type != "formula")
        formulas = []
        for m in metrics:
            if m.type == "formula":
                compiled = compile_formula(m.expression, tuple(n for n in names if n != m.name))
                formulas.append(_Formula(m, compiled, tuple(x for x in metrics if x.name in compiled.references
                                                             and x.type != "formula")))
        self.formulas = tuple(formulas)
        self.replaced: dict[str, str] = {}      # metric name -> the formula that replaces it
        for f in self.formulas:
            for n in f.compiled.references:
                self.replaced.setdefault(n, f.metric.name)
        self.fallback = policy.fallback
        self.phases = A.phases_of(policy)
        self.effective = _derive(policy, self.formulas, self.replaced, None)
        self.scaling = self.effective if self.phases is None else \
            _derive(policy, self.formulas, self.replaced, self.phases.floor)
        # the metrics whose activity counts, each with the metric its value is read as: a
        # formula's is its own observation (an external metric), in place of the metrics it names
        self.watched = tuple((m, _external(m) if m.type == "formula" else m)
                             for m in metrics if m.enabled and m.name not in self.replaced)


def _external(m: Metric) -> Metric:
    """A formula metric as every semantics reads it: an external metric of its name and target."""
    return m.model_copy(update={"type": "external", "expression": None})


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
                out.append(_external(m))
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
    cache = policy.__pydantic_private__["_compiled"]   # policy.compiled(), uncalled (see it)
    c = cache.get("controls", _NONE)
    if c is _NONE:
        uses = policy.fallback is not None or A.phases_of(policy) is not None or \
            any(m.type == "formula" for m in policy.metrics or ())
        c = cache["controls"] = Controls(policy) if uses else None
    return c


def _with(obs, **changes):
    """``obs`` with some fields replaced (not validated again; the simulator's
    observations are built without pydantic's bookkeeping, so no ``model_copy``)."""
    return type(obs).model_construct(**{**obs.__dict__, **changes})


def _entry(m: Any) -> dict:
    return m if isinstance(m, dict) else m.to_dict()


def decide(semantics, ctx: Context, align: Callable) -> Decision:
    """One decision of ``semantics`` with the policy's controls applied (the engine's
    ``run`` calls this instead of ``semantics.decide`` when the policy has controls or
    an observation says its metric failed to be read); ``align`` aligns a decision's
    entries to a policy's metrics (:func:`scalebridge.engine.align_metrics`)."""
    c = controls_of(ctx.policy)
    original = ctx.policy
    obs = ctx.obs
    failed: dict[str, str] = {k: o.error if o.error.startswith(INVALID) else f"metric could not be read: {o.error}"
                              for k, o in obs.metrics.items() if o.error is not None}
    unread = frozenset(failed)
    metrics = {k: o for k, o in obs.metrics.items() if o.error is None} if failed else None
    values: dict[str, Optional[float]] = {}
    if c is not None and c.formulas:
        metrics = dict(obs.metrics) if metrics is None else metrics
        for f in c.formulas:
            m = f.metric
            try:
                # built from finite floats and the inputs' validated times: nothing to validate again
                metrics[m.name] = MetricObservation.model_construct(
                    **formula_observation(f.compiled, original.metrics, obs.metrics, obs.members, ctx.now))
            except FormulaError as e:
                metrics.pop(m.name, None)
                failed[m.name] = f"formula {m.name}: {e}"
            for spec in f.inputs:   # the values it read, for the response
                try:
                    values[spec.name] = metric_value(spec, obs.metrics.get(spec.name), obs.members)
                except FormulaError:
                    values[spec.name] = None
    if metrics is not None:
        ctx.obs = _with(obs, metrics=metrics)
        if ctx.trace is not None and failed:
            ctx.note("controls", None, sorted(failed), "metrics that failed to be read or computed")
    if c is None:   # only failed observations to report
        d = semantics.decide(ctx)
        _patch(d, original, failed, values, c, align, ctx.policy, unread)
        return d
    if c.phases is None:
        ctx.policy = c.effective
        d = _scaling_phase(semantics, ctx, c, failed, align)
    else:
        ctx.policy = c.scaling
        d = _activation_phase(semantics, ctx, c, failed, values, align)
        if d.cause == "activation":   # the semantics did not run: its entries are the policy's already
            return d
    _patch(d, original, failed, values, c, align, ctx.policy, unread)
    return d


def _activation_phase(semantics, ctx: Context, c: Controls, failed: dict, values: dict,
                      align: Callable) -> Decision:
    """Idle, activated, deactivated — or the scaling phase (:mod:`.stages.activation`)."""
    phases = c.phases
    state, now, current = ctx.state, ctx.now, ctx.current
    last = A.last_active_of(state.extra)
    statuses, errors = _activity(c, ctx.obs, failed, values)
    bad = [n for n, s in statuses.items() if s == "failed"]
    fb = c.fallback
    counts = count_failures(failures_of(state.extra), [m.name for m, _ in c.watched], bad) if fb else {}
    in_fallback = [k for k in bad if counts[k] > fb.failure_threshold] if fb else []
    erroring = [k for k in bad if k not in in_fallback]
    active = any(s == "active" for s in statuses.values()) or bool(in_fallback)
    if not erroring and all(m.type in ("resource", "container_resource") for m, _ in c.watched):
        active = True   # cpu/memory only: never idle (KEDA getScaledObjectState)
    at_idle = current < phases.floor
    if not at_idle and (active or erroring or not A.may_go_idle(last, now, phases.delay)):
        d = _scaling_phase(semantics, ctx, c, failed, align)
        if active and not erroring:
            last = now
        _store(state, c, None, last)
        d.extra = {**(d.extra or {}), "activation": {"active": active, "last_active": last}}
        return d
    if at_idle and active:
        target, reason, last = phases.floor, "Activated", now
        why = f"a metric is above its activation threshold (or in fallback): {current} to {phases.floor}"
    elif at_idle:
        target, reason = current, "Idle"
        why = "no metric is above its activation threshold"
    else:
        target, reason = phases.idle, "Deactivated"
        why = (f"no metric has been above its activation threshold since {last:g}, more than {phases.delay:g}s"
               if last is not None else "no metric is active and none was seen active (first sight)")
    ctx.note("activation", current, target, why)
    _store(state, c, counts, last)
    entries = []
    for m in c.policy.metrics or ():
        e = {"name": m.name, "replicas": None, "utilization": None, "value": values.get(m.name),
             "error": failed.get(m.name, errors.get(m.name)) if m.enabled else "disabled"}
        if m.name in c.replaced:
            e["formula"] = c.replaced[m.name]
        entries.append(e)
    extra: dict = {"activation": {"active": active, "last_active": last}}
    if fb is not None:
        extra["fallback"] = _fallback_report(fb, counts, None)
    return Decision(target, target, reason, entries, cause="activation", extra=extra)


def _activity(c: Controls, obs, failed: dict, values: dict) -> tuple[dict, dict]:
    """Each watched metric's status — ``active`` (above its activation threshold),
    ``inactive``, ``failed`` (not read, or not computed), ``unsampled`` (a per-member
    metric with no member to sample: not a failure) — and why each failed one did."""
    out: dict = {}
    errors: dict = {}
    for m, spec in c.watched:
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


def _scaling_phase(semantics, ctx: Context, c: Controls, failed: dict, align: Callable) -> Decision:
    """The semantics' decision, with fallback when a metric has failed past its threshold."""
    fb = c.fallback
    if fb is None or ctx.obs.proposal is not None:
        return semantics.decide(ctx)
    state = ctx.state
    prev = failures_of(state.extra)
    # a decision that may fall back runs first on a copy: its state is kept only if it stands
    imminent = any(n >= fb.failure_threshold for n in prev.values())
    scratch = state.copy() if imminent else state
    ctx.state = scratch
    d = semantics.decide(ctx)
    ctx.state = state
    entries = [_entry(m) for m in align(ctx.policy, d.metrics)]
    read, bad, proposals = _read_metrics(ctx.policy, d, entries, failed)
    counts = count_failures(prev, read, bad)
    over = sorted(k for k in bad if counts[k] > fb.failure_threshold)
    if not over:
        if imminent:
            state.assign(scratch)
        _store(state, c, counts, _KEEP)
        d.metrics = entries
        d.extra = {**(d.extra or {}), "fallback": _fallback_report(fb, counts, None)}
        return d
    r = fallback_replicas(fb, ctx.current)
    still = any(counts[k] <= fb.failure_threshold for k in bad)
    p = fallback_proposal(r, proposals, ctx.current, still)
    n = max(counts[k] for k in over)
    ctx.note("fallback", ctx.current, p, f"{', '.join(over)} failed {n} decisions in a row (failure_threshold "
                                        f"{fb.failure_threshold}): fallback {r} ({fb.behavior}) joins the read "
                                        "metrics' proposals")
    obs = ctx.obs
    ctx.obs = _with(obs, proposal=p)
    d2 = semantics.decide(ctx)
    ctx.obs = obs
    _store(state, c, counts, _KEEP)
    d2.metrics = entries
    d2.reason = "Fallback"
    if d2.cause == "metric":
        d2.cause = "fallback"
    d2.error = (f"fallback: {', '.join(over)} failed {n} consecutive decisions (failure_threshold "
                f"{fb.failure_threshold}); fallback replicas {r} ({fb.behavior})")
    d2.extra = {**(d2.extra or {}), "fallback": _fallback_report(fb, counts, r)}
    return d2


def _fallback_report(fb, counts: dict, replicas: Optional[int]) -> dict:
    """The response's ``fallback``: whether it applies, each failing metric's count, the
    metrics past the threshold, and the count they stand for."""
    over = sorted(k for k, n in counts.items() if n > fb.failure_threshold)
    return {"active": bool(over), "failures": dict(counts), "metrics": over, "replicas": replicas}


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


#: how the semantics' summary of invalid metrics names the first (the HPA's
#: "invalid metrics (N invalid out of M), first error is: …", replica_calculator.go)
FIRST_ERROR = "first error is: "


def _patch(d: Decision, policy: Policy, failed: dict, values: dict, c: Optional[Controls],
           align: Callable, ran: Policy, unread: frozenset = frozenset()) -> None:
    """The response's entries in the policy's terms (``ran``: the policy the semantics
    ran, aligned to first): the error of a metric that failed to be read or computed,
    and the metrics a formula replaced (their value, the formula); where the first
    error is of a metric in ``unread`` (its observation failed: not read, or impossible),
    the decision's error names it as the entry does."""
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
    if unread and d.error and FIRST_ERROR in d.error:   # the semantics saw it missing: say why it was
        first = next((e for e in entries if e.get("error") and e["error"] != "disabled"), None)
        if first is not None and first["name"] in unread:
            d.error = d.error[:d.error.index(FIRST_ERROR) + len(FIRST_ERROR)] + first["error"]
