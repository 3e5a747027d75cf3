"""What one sync reads: the :class:`~scalebridge.providers.MetricQuery` list of a
policy under a semantics.

Each enabled policy metric, each enabled threshold rule (top level and in
profiles) and the predictive metric becomes one query under the name the
semantics looks it up by (``observations.metrics[name]``), with the window, grain
and statistic it needs and the observation shapes that semantics reads:

- ``kubernetes`` (and the neutral semantics' target metrics): per-pod samples for
  ``resource``/``container_resource``/``pods`` metrics, one ``value`` for
  ``object``, ``values`` for ``external`` — what ``replica_calculator.go``
  (``GetResourceReplicas``, ``GetObjectMetricReplicas``,
  ``GetExternalMetricReplicas``) takes from the metrics APIs;
- ``gce``: per-instance samples (``members``, or ``member_series``), and the
  group ``value`` of a load-balancing metric
  (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu-load-balancing);
- ``azure``: a rule's metric as ``series`` (or ``member_series`` per instance)
  over its time window at its time grain
  (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings);
- ``aws``: CloudWatch datapoints (``series``, or ``member_series``) per period —
  target tracking's alarms look at 3 one-minute datapoints to scale out and 15 to
  scale in (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html).

The neutral controls (docs/policy.md) read what every semantics reads alike: a
formula metric is never read (``decide`` computes it from the metrics it names,
which are read instead, with the window and series of every rule on the
formula), and the metrics of an activation phase and those a formula names are
read under every semantics, Azure's too (its rules may name a formula; its
activation phase watches the policy's metrics).
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping, Optional

from .. import registry
from ..errors import ScalebridgeError
from ..policy import Policy, Rule
from ..providers import MetricQuery

__all__ = ["queries_for", "metric_names", "TARGET_TRACKING_WINDOW_SECONDS", "METRIC_WINDOW_SECONDS"]

#: AWS target tracking's scale-in alarm: 15 datapoints of one minute (see the module docstring)
TARGET_TRACKING_WINDOW_SECONDS = 900.0
#: a snapshot metric's window: metrics-server's default resolution is 60 s
#: (https://github.com/kubernetes-sigs/metrics-server, ``--metric-resolution``), and
#: Cloud Monitoring samples compute.googleapis.com/instance/cpu/utilization every 60 s
METRIC_WINDOW_SECONDS = 60.0
#: the history a forecast metric asks for when the policy says none: two days
FORECAST_HISTORY_SECONDS = 2 * 86400.0

_SNAPSHOT_SHAPES = {
    "resource": frozenset({"members"}),
    "container_resource": frozenset({"members"}),
    "pods": frozenset({"members"}),
    "object": frozenset({"value"}),
    "external": frozenset({"values"}),
    "load_balancing": frozenset({"members", "value"}),
}
_SERIES = frozenset({"series", "member_series"})
_EVERYTHING = frozenset({"metrics", "rules"})


def _rules(policy: Policy) -> Iterator[Rule]:
    for r in policy.rules or []:
        yield r
    for p in getattr(policy, "profiles", None) or []:
        for r in p.rules or []:
            yield r


def _shapes(semantics: str, metric_type: str) -> frozenset[str]:
    if semantics == "aws":
        return _SERIES
    if semantics == "gce" and metric_type in ("resource", "container_resource", "pods"):
        return frozenset({"members", "member_series"})
    return _SNAPSHOT_SHAPES.get(metric_type, frozenset({"members", "value"}))


def metric_names(policy: Policy) -> list[str]:
    """Every observation name ``policy`` reads under some semantics (its enabled
    metrics, rules and predictive metric): what a target's ``metrics.<name>.source``
    may name, whichever semantics the target runs. A formula is not read: it has no
    source, the metrics it names do."""
    formulas = {m.name for m in policy.metrics or [] if m.type == "formula"}
    names = [m.name for m in policy.metrics or [] if m.enabled and m.name not in formulas]
    names += [r.metric for r in _rules(policy) if r.enabled and r.metric not in formulas]
    pred = policy.predictive
    if pred is not None and pred.metric and (pred.mode or "Disabled") != "Disabled":
        names.append(pred.metric)
    return list(dict.fromkeys(names))


def _decides_from(semantics: str) -> frozenset[str]:
    try:
        return getattr(registry.semantics(semantics), "decides_from", _EVERYTHING)
    except ScalebridgeError:   # not a registered semantics: read everything the policy has
        return _EVERYTHING


def _read_by_controls(policy: Policy) -> dict:
    """The metric names the neutral controls read whatever the semantics (a formula's
    inputs; the metrics an activation phase watches), and under the key None each
    formula's name with the metrics it names."""
    from ..controls import controls_of   # the engine's: loads CEL only for a formula
    c = controls_of(policy)
    if c is None:
        return {}
    out: dict = {None: {f.metric.name: f.inputs for f in c.formulas}}
    for f in c.formulas:
        out.update((m.name, True) for m in f.inputs)
    if c.phases is not None:
        out.update((m.name, True) for m, _ in c.watched if m.type != "formula")
    return out


def queries_for(policy: Policy, semantics: str,
                sources: Optional[Mapping[str, Mapping[str, Any]]] = None) -> list[MetricQuery]:
    """The queries one sync of a target with ``policy`` under ``semantics`` makes,
    one per observation name (the first use of a name decides its type); ``sources``
    are the target's ``metrics.<name>.source``. The parts of the policy the
    semantics ignores (:attr:`Semantics.decides_from`: the HPA's and GCE's threshold
    rules, Azure's target metrics) are not read."""
    sources = sources or {}
    out: dict[str, MetricQuery] = {}
    parts = _decides_from(semantics)

    def add(name: str, type_: str, spec: dict, window: float, grain: float, shapes: frozenset[str]) -> None:
        q = out.get(name)
        if q is None:
            out[name] = MetricQuery(name, type_, spec, window, grain, shapes, sources.get(name))
        else:   # one observation serves both uses: the longer window, every shape
            out[name] = MetricQuery(name, q.type, q.spec, max(q.window_seconds, window),
                                    min(q.grain_seconds, grain), q.shapes | shapes, q.source)

    controlled = _read_by_controls(policy)
    inputs = controlled.pop(None, {})   # formula name -> the metrics it names
    for m in policy.metrics or []:
        if not m.enabled or m.type == "formula" or ("metrics" not in parts and m.name not in controlled):
            continue
        spec = m.model_dump(mode="json", exclude_none=True)
        window = TARGET_TRACKING_WINDOW_SECONDS if semantics == "aws" else METRIC_WINDOW_SECONDS
        add(m.name, m.type, spec, window, 60.0, _shapes(semantics, m.type))
    for r in _rules(policy) if "rules" in parts else ():
        if not r.enabled:
            continue
        if r.metric in inputs:   # computed: its metrics are read over the rule's window, as series
            periods = max(r.evaluation_periods, r.datapoints_to_alarm or 1)
            window = max(float(r.time_window_seconds), float(r.time_grain_seconds) * periods)
            for m in inputs[r.metric]:
                add(m.name, m.type, m.model_dump(mode="json", exclude_none=True), window,
                    float(r.time_grain_seconds), _SERIES)
            continue
        spec = r.model_dump(mode="json", exclude_none=True)
        periods = max(r.evaluation_periods, r.datapoints_to_alarm or 1)
        window = max(float(r.time_window_seconds), float(r.time_grain_seconds) * periods)
        add(r.metric, "rule", spec, window, float(r.time_grain_seconds), _SERIES)
    pred = policy.predictive
    if pred is not None and pred.metric and (pred.mode or "Disabled") != "Disabled":
        history = float(pred.history_seconds or FORECAST_HISTORY_SECONDS)
        add(pred.metric, "forecast", pred.model_dump(mode="json", exclude_none=True), history, 3600.0
            if semantics == "aws" else 60.0, frozenset({"series"}))
    if not policy.metrics and (semantics in ("kubernetes", "gce") or (
            semantics == "scalebridge" and not any(True for _ in _rules(policy)) and not policy.schedules)):
        # no metric in the policy: these semantics default to CPU utilization (the HPA's
        # 80 %, GCE's 0.6 CPU)
        add("cpu", "resource", {"type": "resource", "name": "cpu"}, METRIC_WINDOW_SECONDS, 60.0,
            _shapes(semantics, "resource"))
    return list(out.values())
