"""What one sync reads: the :class:`~scalebridge.providers.MetricQuery` list of a policy
under a semantics.

Nothing here knows a semantics: each says what it reads of a policy — the observation
shapes, windows and grains of its provider's autoscaler, and the parts of a policy it
ignores (:meth:`scalebridge.semantics.base.Semantics.reads`) — and each control around
it what it adds (:func:`scalebridge.controls.reads`: a formula's metrics in its place, the
metrics an activation phase watches). This module turns that into one query per
observation name, in the policy's order, each with the target's ``metrics.<name>.source``.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from .. import controls, registry
from ..policy import Policy, policy_json
from ..providers import MetricQuery
from ..reads import Need, Reads
from ..errors import ScalebridgeError
from ..semantics.base import UNREGISTERED, rules_of

__all__ = ["queries_for", "metric_names", "reads_for"]


def metric_names(policy: Policy) -> list[str]:
    """Every observation name ``policy`` reads under some semantics (its enabled
    metrics, rules, predictive metric and scale-in selection metric): what a target's ``metrics.<name>.source``
    may name, whichever semantics the target runs. A formula is not read: it has no
    source, the metrics it names do."""
    formulas = {m.name for m in policy.metrics or [] if m.type == "formula"}
    names = [m.name for m in policy.metrics or [] if m.enabled and m.name not in formulas]
    names += [r.metric for r in rules_of(policy) if r.enabled and r.metric not in formulas]
    pred = policy.predictive
    if pred is not None and pred.metric and (pred.mode or "Disabled") != "Disabled":
        names.append(pred.metric)
    if policy.scale_in is not None and policy.scale_in.metric:   # the scale-in selection's, per member
        names.append(policy.scale_in.metric)
    return list(dict.fromkeys(names))


def reads_for(policy: Any, semantics: str) -> Reads:
    """What deciding on ``policy`` (a :class:`Policy` or a compiled one) under the
    semantics named ``semantics`` reads, with the controls around it."""
    compiled = controls.compile(policy) if isinstance(policy, Policy) else policy
    try:
        sem = registry.semantics(semantics)
    except ScalebridgeError:   # not a registered semantics: read everything the policy has
        sem = UNREGISTERED
    return controls.reads(compiled, sem)


def _order(policy: Policy) -> dict[str, int]:
    """Each observation name's place: the policy's metrics, then its rules, then its
    predictive metric (what a name read for several uses is listed under: its first)."""
    names = [m.name for m in policy.metrics or ()] + [r.metric for r in rules_of(policy)]
    if policy.predictive is not None and policy.predictive.metric:
        names.append(policy.predictive.metric)
    out: dict[str, int] = {}
    for n in names:
        out.setdefault(n, len(out))
    return out


def _spec(need: Need) -> Mapping[str, Any]:
    """The query's ``spec``: the policy's metric, rule or predictive block as its JSON (a
    metric the policy does not name, a semantics' default, as its type and name)."""
    if need.spec is None:
        return {"type": need.type, "name": need.name}
    return policy_json(need.spec, exclude_none=True)


def queries_for(policy: Any, semantics: str,
                sources: Optional[Mapping[str, Mapping[str, Any]]] = None) -> list[MetricQuery]:
    """The queries one sync of a target with ``policy`` under ``semantics`` makes,
    one per observation name, in the policy's order; ``sources`` are the target's
    ``metrics.<name>.source``. The parts of the policy the semantics ignores (the HPA's
    and GCE's threshold rules, Azure's target metrics) are not read."""
    sources = sources or {}
    r = reads_for(policy, semantics)
    order = _order(getattr(policy, "source", policy))
    needs = sorted(r.needs, key=lambda n: order.get(n.name, len(order)))
    return [MetricQuery(n.name, n.type, _spec(n), n.window_seconds, n.grain_seconds, n.shapes, sources.get(n.name))
            for n in needs]
