"""Formula metrics: KEDA's ``advanced.scalingModifiers`` (pkg/scaling/modifiers), the
arithmetic in :mod:`scalebridge.stages.formula`.

A metric of ``type: formula`` is a CEL expression over the policy's other metrics by
name. Every semantics decides from it as an ``external`` metric of its name and target
(the compiled policy has it so, and the metrics it names disabled: they are replaced by
it); its observation is computed, each decision, from the observations of the metrics it
names — a formula that cannot be computed is a failed metric. The response's entry of each
replaced metric says the formula and the value the metric stood for.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..decision import Context, Decision, aligned
from ..policy import Metric, Policy
from ..protocol import MetricObservation
from ..reads import SERIES, Need, Reads
from ..stages.formula import FormulaError, formula_observation, metric_value
from .base import Control, Inner
from .failed import note_failures

__all__ = ["Formulas", "Formula", "as_external", "compiled_formulas", "formulas_of"]


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


def formulas_of(policy: Policy) -> CompiledFormulas:
    """The policy's formulas, each compiled (CEL loads only here), and what they replace."""
    from ..cel import compile_formula
    metrics = policy.metrics or []
    names = tuple(m.name for m in metrics if m.type != "formula")
    formulas = []
    for m in metrics:
        if m.type == "formula":
            compiled = compile_formula(m.expression, tuple(n for n in names if n != m.name))
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
        metrics = dict(obs.metrics)
        for f in c.formulas:
            m = f.metric
            try:
                # built from finite floats and the inputs' validated times: nothing to validate again
                metrics[m.name] = MetricObservation(**formula_observation(f.compiled, source.metrics, obs.metrics,
                                                                          obs.members, ctx.now))
            except FormulaError as e:
                metrics.pop(m.name, None)
                failed[m.name] = f"formula {m.name}: {e}"
            for spec in f.inputs:   # the values it read, for the response
                try:
                    values[spec.name] = metric_value(spec, obs.metrics.get(spec.name), obs.members)
                except FormulaError:
                    values[spec.name] = None
        ctx.obs = dataclasses.replace(obs, metrics=metrics)
        if ctx.trace is not None and failed:
            note_failures(ctx)
        d = inner(ctx)
        if d.cause != "activation":   # an activation decision's entries are the policy's already
            _say_formulas(d, ctx, c.replaced)
        return d


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
