"""Formula metrics: KEDA's ``advanced.scalingModifiers`` (pkg/scaling/modifiers), the
arithmetic in :mod:`scalebridge.stages.formula`.

A metric of ``type: formula`` is a CEL expression over the policy's other metrics by
name. Every semantics decides from it as an ``external`` metric of its name and target
(the compiled policy has it so, and the metrics it names disabled: they are replaced by
it); its observation is computed, each decision, from the observations of the metrics it
names — a formula that cannot be computed is a failed metric. The response's entry of each
replaced metric says the formula and the value the metric stood for.

Under ``fallback.behavior: formula`` (KEDA 2.20's ``scalingModifiers`` fallback) the fallback
is per metric, here: each metric a formula names counts its consecutive failed decisions
(``state["fallback.failures"]``, as :mod:`.fallback` counts); while a count is at most
``failure_threshold`` the metric's failure fails the formula, as before; past it the metric
is null in the formula, which may route around it (``m != null ? m : other``, KEDA's
``m ?? other``), and a formula that is null stands for ``fallback.replicas × target`` — what
KEDA hands the HPA, so that ``AverageValue`` decides ``replicas``. KEDA 2.20:
pkg/fallback/fallback.go ``GetMetricsWithFallback`` ("scaling modifier expression engine will
treat this as "nil" for the "??" operator": a placeholder, no error), pkg/scaling/modifiers/
formula.go ``scalingModifierTriggerValue`` (``nil`` when ``NumberOfFailures >
FailureThreshold``) and ``calculateScalingModifiersFormula`` / ``scalingModifiersFallbackTarget``
(``float64(so.Spec.Fallback.Replicas) * target`` when the formula is ``nil``); before the
threshold the failing trigger's error is the composite metric's (scale_handler.go
``GetScaledObjectMetrics``: "This case happens in failed times under failureThreshold. Report
error to HPA directly.").

Under ``invalid_values_as_zero`` the formula reads its external metrics as :mod:`.zero` has
them (KEDA's scalers clamp the value before the formula sees it).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..decision import Context, Decision, aligned
from ..policy import Metric, Policy
from ..protocol import MetricObservation
from ..reads import SERIES, Need, Reads
from ..stages.fallback import count_failures, failures_of
from ..stages.formula import FormulaError, formula_observation, metric_value
from ..stages.impossible import zeroed
from ..units import exact
from .base import Control, Inner
from .failed import note_failures
from .fallback import fallback_report, store_failures

__all__ = ["Formulas", "Formula", "as_external", "compiled_formulas", "formulas_of", "nullable"]


@dataclasses.dataclass(frozen=True)
class Formula:
    metric: Metric
    compiled: Any      # scalebridge.cel.Compiled
    inputs: tuple      # the metrics it names, in policy order


@dataclasses.dataclass(frozen=True)
class CompiledFormulas:
    formulas: tuple[Formula, ...]
    replaced: dict       # metric name -> the formula that replaces it


def as_external(m: Metric) -> Metric:
    """A formula metric as every semantics reads it: an external metric of its name and target."""
    return dataclasses.replace(m, type="external", expression=None)


def nullable(policy: Any) -> bool:
    """Whether a formula's metrics may be null: ``fallback.behavior: formula``."""
    return policy.fallback is not None and policy.fallback.behavior == "formula"


def formulas_of(policy: Policy) -> CompiledFormulas:
    """The policy's formulas, each compiled (CEL loads only here), and what they replace."""
    from ..cel import compile_formula
    metrics = policy.metrics or []
    names = tuple(m.name for m in metrics if m.type != "formula")
    formulas = []
    null = nullable(policy)
    for m in metrics:
        if m.type == "formula":
            compiled = compile_formula(m.expression, tuple(n for n in names if n != m.name), null)
            formulas.append(Formula(m, compiled, tuple(x for x in metrics if x.name in compiled.references
                                                       and x.type != "formula")))
    replaced: dict[str, str] = {}
    for f in formulas:
        for n in f.compiled.references:
            replaced.setdefault(n, f.metric.name)
    return CompiledFormulas(tuple(formulas), replaced)


def compiled_formulas(policy: Any) -> CompiledFormulas:
    """:func:`formulas_of` a compiled policy's source, once."""
    return policy.derived("controls.formulas", lambda p: formulas_of(p.source))


def _rules(policy: Policy):
    yield from policy.rules or ()
    for p in policy.profiles or ():
        yield from p.rules or ()


class Formulas(Control):
    name = "formulas"
    adds_failures = True

    def applies(self, policy: Policy) -> bool:
        return any(m.type == "formula" for m in policy.metrics or ())

    def compile(self, policy: Policy) -> dict[str, Any]:
        replaced = formulas_of(policy).replaced
        return {"metrics": [as_external(m) if m.type == "formula" else
                            dataclasses.replace(m, enabled=False) if m.name in replaced else m
                            for m in policy.metrics]}

    def reads(self, policy: Policy, reads: Reads, semantics: Any) -> Reads:
        """A formula is not read: the metrics it names are, whatever the semantics (as it
        reads a metric of their type) — and, for a rule on the formula that the semantics
        reads, with the rule's window and as series."""
        c = formulas_of(policy)
        inputs = {f.metric.name: f.inputs for f in c.formulas}
        needs = [semantics.metric_need(m) for f in c.formulas for m in f.inputs if m.enabled]
        for r in _rules(policy):
            n = reads.need(r.metric)
            if r.enabled and r.metric in inputs and n is not None and n.type == "rule":
                needs += [Need(m.name, m.type, m, n.window_seconds, n.grain_seconds, SERIES)
                          for m in inputs[r.metric]]
        return reads.without(inputs).with_needs(needs)

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        c = compiled_formulas(ctx.policy)
        source = ctx.policy.source
        obs = ctx.obs
        failed, values = ctx.failed, ctx.values
        read = _read_zeroed if source.invalid_values_as_zero else metric_value
        fb = source.fallback if nullable(source) else None
        counts: dict = {}
        nulls: frozenset = frozenset()
        if fb is not None:
            counts, nulls = _per_metric_fallback(ctx, c, read)
        metrics = dict(obs.metrics)
        stood_for = []   # the formulas that were null: each stands for fallback.replicas
        for f in c.formulas:
            m = f.metric
            when_null = fb.replicas * _target(m) if fb is not None else None
            try:
                # built from finite floats and the inputs' validated times: nothing to validate again
                o = formula_observation(f.compiled, source.metrics, obs.metrics, obs.members, ctx.now,
                                        nulls & f.compiled.references, when_null, read)
                metrics[m.name] = MetricObservation(**o)
                if when_null is not None and o["value"] is when_null:
                    stood_for.append(m.name)
            except FormulaError as e:
                metrics.pop(m.name, None)
                failed[m.name] = f"formula {m.name}: {e}"
            for spec in f.inputs:   # the values it read, for the response
                try:
                    values[spec.name] = None if spec.name in nulls else read(spec, obs.metrics.get(spec.name),
                                                                             obs.members)
                except FormulaError:
                    values[spec.name] = None
        ctx.obs = dataclasses.replace(obs, metrics=metrics)
        if ctx.trace is not None and failed:
            note_failures(ctx)
        if fb is not None and (nulls or stood_for):
            n = max((counts[k] for k in nulls), default=0)
            ctx.note("fallback", sorted(nulls), stood_for or None,
                     f"{', '.join(sorted(nulls))} failed {n} decisions in a row (failure_threshold "
                     f"{fb.failure_threshold}): null in the formulas"
                     + (f"; {', '.join(stood_for)} null: fallback replicas {fb.replicas} × target" if stood_for
                        else ""))
        d = inner(ctx)
        if d.cause != "activation":   # an activation decision's entries are the policy's already
            _say_formulas(d, ctx, c.replaced)
        if fb is not None:
            if stood_for and d.cause != "activation":
                d.reason = "Fallback"
            d.extra = {**(d.extra or {}), "fallback": fallback_report(fb, counts, fb.replicas if stood_for
                                                                      else None)}
        return d


def _read_zeroed(metric, obs, members):
    """A metric's value as :func:`metric_value` reads it, an external one's negative, NaN or
    infinite values read as 0 (:mod:`.zero`)."""
    return metric_value(metric, zeroed(obs) if metric.type == "external" else obs, members)


def _target(m: Metric) -> float:
    """A formula's target, the number KEDA multiplies ``fallback.replicas`` by."""
    t = m.target
    return float(exact(t.average_value if t.type == "AverageValue" else t.value))


def _per_metric_fallback(ctx: Context, c: CompiledFormulas, read) -> tuple[dict, frozenset]:
    """Each metric the formulas name: its failures counted (one more for each decision it
    fails in: not read, no value, or a value it cannot use; back to none once read), kept in
    ``state``; and those past ``failure_threshold``, which are null in the formulas."""
    obs, failed = ctx.obs, ctx.failed
    names: list = []
    bad: list = []
    for f in c.formulas:
        for spec in f.inputs:
            if spec.name in names:
                continue
            names.append(spec.name)
            if spec.name in failed:
                bad.append(spec.name)
                continue
            try:
                v = read(spec, obs.metrics.get(spec.name), obs.members)
            except FormulaError:
                v = None
            if v is None:
                bad.append(spec.name)
    fb = ctx.policy.source.fallback
    state = ctx.state
    counts = count_failures(failures_of(state.extra), names, bad)
    store_failures(state, counts)
    return counts, frozenset(k for k in bad if counts[k] > fb.failure_threshold)


def _say_formulas(d: Decision, ctx: Context, replaced: dict) -> None:
    """Each replaced metric's entry: the formula that replaced it, the value it stood for,
    and its error when it failed to be read."""
    entries = aligned(ctx.policy, d.metrics)
    specs = ctx.policy.source.metrics or []
    targets = [e for e in entries if e.triggered is None]
    if len(targets) == len(specs) and all(e.name == m.name for e, m in zip(targets, specs)):
        failed, values = ctx.failed, ctx.values
        for e, m in zip(targets, specs):
            if m.enabled and m.name in replaced:
                e.error, e.value, e.formula = failed.get(m.name), values.get(m.name), replaced[m.name]
    d.metrics = entries
