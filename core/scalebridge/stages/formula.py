"""Formula metrics and the value a metric stands for (KEDA ``advanced.scalingModifiers``).

KEDA evaluates ``scalingModifiers.formula`` over the triggers' metric values by
trigger name and hands the HPA one composite metric against
``scalingModifiers.target`` instead of them
(https://keda.sh/docs/latest/concepts/scaling-deployments/#scaling-modifiers;
pkg/scaling/modifiers/formula.go, ``calculateScalingModifiersFormula``: every
metric value as a float64, the result as a milli-quantity). Here the formula is
written in CEL (:mod:`scalebridge.cel`) over the policy's other metrics by name;
it replaces the metrics it names, and reaches every semantics as an
``external`` metric of that name and target (an External metric under
``kubernetes``, a per-group custom metric elsewhere, a key rules can read too).

:func:`metric_value` is also what the activation phase compares with a metric's
``activation_threshold`` (:mod:`.activation`).
"""
from __future__ import annotations

from typing import Optional

from ..units import exact

__all__ = ["FormulaError", "metric_value", "formula_observation", "PER_MEMBER"]

PER_MEMBER = frozenset(("resource", "container_resource", "pods", "load_balancing"))


class FormulaError(Exception):
    """A formula (or a metric it reads) that has no value in this decision."""


def _mean(values) -> Optional[float]:
    vals = [exact(v) for v in values if v is not None]
    return float(sum(vals) / len(vals)) if vals else None


def _latest(points) -> Optional[float]:
    for t, v in reversed(points or ()):
        if v is not None:
            return float(v)
    return None


def metric_value(metric, obs, members) -> Optional[float]:
    """The one number a metric stands for in a formula and against its activation
    threshold — a KEDA scaler's metric value:

    - ``external``/``object``: the total, ``value`` or the sum of ``values`` (as
      Kubernetes and GCE sum several series); else the latest point of ``series``;
    - per-member metrics (``resource``, ``container_resource``, ``pods``,
      ``load_balancing``): the average over the members' samples (``members``,
      else each member's latest ``member_series`` point, else the latest
      ``series`` point, a group aggregate); for a ``Utilization`` target of a
      resource, the average utilization in percent of each member's request;
      a ``load_balancing`` ``value`` is the group's percent already.

    None: the observation holds no value (no samples: e.g. no members at all).
    Raises :class:`FormulaError` for an observation the metric cannot read."""
    if obs is None:
        raise FormulaError(f"no data for metric {metric.name} (observations.metrics.{metric.name})")
    if obs.error is not None:
        raise FormulaError(f"metric {metric.name} could not be read: {obs.error}")
    kind = metric.type
    if kind not in PER_MEMBER:
        if obs.values:
            return float(sum(exact(v) for v in obs.values if v is not None))
        if obs.value is not None:
            return float(exact(obs.value))
        return _latest(obs.series)
    if kind == "load_balancing" and obs.value is not None and not obs.members:
        return float(exact(obs.value))
    samples = obs.members
    if not samples and obs.member_series:
        samples = {k: pts[-1][1] for k, pts in obs.member_series.items() if pts}
    if not samples:
        return _latest(obs.series)
    if kind in ("resource", "container_resource") and metric.target.type == "Utilization":
        by_name = {m.name: m for m in members or ()}
        pcts = []
        for name, v in samples.items():
            m = by_name.get(name)
            r = m.requests.get(metric.name) if m is not None and m.requests else None
            if v is None or r is None:
                continue
            q = exact(r)
            if q <= 0:
                raise FormulaError(f"request for {metric.name} on member {name} must be greater than 0")
            pcts.append(exact(v) * 100 / q)
        if not pcts:
            raise FormulaError(f"missing request for {metric.name}: its utilization needs "
                               f"observations.members[].requests.{metric.name}")
        return float(sum(pcts) / len(pcts))
    return _mean(samples.values())


def formula_observation(compiled, metrics, obs_metrics, members, now: float, nulls=frozenset(),
                        when_null: Optional[float] = None, read=None) -> dict:
    """The observation of a formula metric: ``{"value", "timestamp"}`` from the named
    metrics' values, and a ``series`` evaluated point by point when every named
    metric is a series (what AWS target tracking with metric math reads, a
    datapoint per period). Raises :class:`FormulaError`
    (a metric without a value, a CEL runtime error such as a division by zero).

    ``nulls``: the metrics that are null in it (a nullable formula's, failing past the
    fallback's threshold: KEDA 2.20 ``scalingModifierTriggerValue`` returns ``nil``); a
    formula that then evaluates to null stands for ``when_null`` (KEDA's
    ``scalingModifiersFallbackTarget``: ``fallback.replicas × target``). ``read``: how a
    metric's value is read (default :func:`metric_value`)."""
    from ..cel import CelError
    read = read or metric_value
    values: dict = {}
    stamps = []
    series: Optional[dict] = {} if not nulls else None
    for m in metrics:
        if m.name not in compiled.references:
            continue
        if m.name in nulls:
            values[m.name] = None
            continue
        o = obs_metrics.get(m.name)
        v = read(m, o, members)
        if v is None:
            raise FormulaError(f"metric {m.name} has no value (no samples)")
        values[m.name] = v
        if o.timestamp is not None:
            stamps.append(o.timestamp)
        if series is not None and o.series:
            series[m.name] = {t: x for t, x in o.series if x is not None}
        else:
            series = None
    try:
        value = compiled.evaluate(values)
    except CelError as e:
        raise FormulaError(f"the expression failed: {e}") from None
    if value is None:
        if when_null is None:   # KEDA: "scalingModifiers formula evaluated to nil but no fallback is configured"
            raise FormulaError("the expression evaluated to null and there is no fallback count")
        value, series = when_null, None
    out: dict = {"value": value, "timestamp": min(stamps) if stamps else now}
    if series:
        common = sorted(set.intersection(*(set(s) for s in series.values())))
        pts = []
        for t in common:
            try:
                pts.append((t, compiled.evaluate({k: s[t] for k, s in series.items()})))
            except CelError:
                pts.append((t, None))   # that period has no datapoint
        if pts:
            out["series"] = pts
            last = _latest(pts)
            if last is not None:   # the value is the series' own latest point
                out["value"] = last
    return out
