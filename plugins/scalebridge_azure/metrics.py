"""Azure Monitor metrics (``metrics.list``) in the decision protocol's observation shapes.

What Azure autoscale itself reads, per rule
(https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings):
the metric of ``metricResourceUri`` at ``timeGrain``, combined across instances by the
``statistic`` into one sample per grain, then over ``timeWindow`` by
``timeAggregation``. Azure Monitor's own ``aggregation`` of a scale set's platform
metric per ``interval`` *is* that across-instance combination (Average, Minimum,
Maximum, Total, Count), so a rule's observation is the scale set's ``series`` at the
rule's grain, aggregated by its statistic; the semantics applies the time aggregation
over the window. A percentile statistic has no Azure Monitor aggregation: the rule
then gets a ``member_series`` (``$filter=VMName eq '*'``) and the semantics applies
the percentile across instances.

Azure Monitor stamps each point at the *start* of its grain
(https://learn.microsoft.com/rest/api/monitor/metrics/list, ``timeStamp``); the
protocol's series are stamped at the grain's end, so that a window ``(now − w, now]``
holds the ``w / grain`` complete grains. A grain still open at ``now`` is left out, and a
grain with no value is missing (never 0).

Per-member signals (``members``) are each instance's average over the query's window
(``Percentage CPU`` split by ``VMName``, asking for every instance's series: ``top``
defaults to 10), in percent: members carry no ``requests``, so the semantics read them
as utilization.
"""
from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Iterable, Mapping, Optional

from scalebridge.providers import MetricQuery, RefError

#: the default source of a policy metric named ``cpu`` (run-config: "Percentage CPU of the
#: scale set, split by VMName")
CPU_METRIC = "Percentage CPU"
#: Azure Monitor's aggregation for each autoscale ``statistic`` (ScaleRuleMetricTrigger.statistic)
STATISTIC_AGGREGATION = {"Average": "Average", "Min": "Minimum", "Max": "Maximum", "Sum": "Total",
                         "Count": "Count"}
SOURCE_KEYS = frozenset({"metric_name", "metric_namespace", "resource_uri", "aggregation", "per_member",
                         "filter", "interval_seconds"})
#: series asked for when a ``$filter`` splits a metric: Azure Monitor returns ``top`` of them,
#: 10 unless asked (https://learn.microsoft.com/rest/api/monitor/metrics/list); a scale set
#: holds at most 1,000 instances
#: (https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-placement-groups)
MAX_SERIES = 1000
_AGG_FIELD = {"Average": "average", "Minimum": "minimum", "Maximum": "maximum", "Total": "total", "Count": "count"}


def iso_duration(seconds: float) -> str:
    """``PT1M`` for 60 (azure-mgmt-monitor serializes a ``timedelta`` as ``0:01:00``,
    which ARM rejects; the API takes ISO 8601)."""
    s = int(round(seconds))
    if s <= 0:
        raise ValueError(f"a metric grain must be positive, got {seconds}")
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    out = "P" + (f"{d}D" if d else "")
    t = (f"{h}H" if h else "") + (f"{m}M" if m else "") + (f"{s}S" if s else "")
    return out + ("T" + t if t else "")


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_source(name: str, source: Optional[Mapping[str, Any]]) -> None:
    if source is None:
        return
    unknown = sorted(set(source) - SOURCE_KEYS)
    if unknown:
        raise RefError(f"metrics.{name}.source.{unknown[0]}",
                       f"unknown key; an Azure Monitor source takes {', '.join(sorted(SOURCE_KEYS))}")
    agg = source.get("aggregation")
    if agg is not None and agg not in _AGG_FIELD:
        raise RefError(f"metrics.{name}.source.aggregation",
                       f"is one of {', '.join(_AGG_FIELD)}, got {agg!r}")


class MetricPlan:
    """One ``metrics.list`` call's parameters for a query."""

    def __init__(self, query: MetricQuery, scale_set_id: str):
        src = dict(query.source or {})
        spec = query.spec or {}
        self.query = query
        self.resource_uri = src.get("resource_uri") or scale_set_id
        self.metric_name = src.get("metric_name") or (CPU_METRIC if query.name == "cpu" or
                                                      spec.get("name") == "cpu" else query.name)
        self.namespace = src.get("metric_namespace")
        self.filter = src.get("filter")
        statistic = spec.get("statistic") if query.type == "rule" else None
        percentile = isinstance(statistic, str) and statistic.startswith("Percentile")
        self.aggregation = src.get("aggregation") or (STATISTIC_AGGREGATION.get(statistic, "Average")
                                                      if statistic and not percentile else "Average")
        on_scale_set = self.resource_uri.lower() == scale_set_id.lower()
        if query.type == "rule":
            # a rule reads the resource's own series, combined across instances by
            # Azure Monitor; only a percentile needs every instance's
            wants_members = percentile
        else:
            wants_members = bool({"members", "member_series"} & set(query.shapes)) and on_scale_set
        per_member = src.get("per_member")
        self.split = bool(per_member) if per_member is not None else wants_members
        self.grain = float(src.get("interval_seconds") or query.grain_seconds or 60.0)
        self.window = max(float(query.window_seconds or self.grain), self.grain)


def read(monitor: Any, call, plan: MetricPlan, now: float, delay: float) -> Optional[dict]:
    """One metric's observation dict, or None when Azure Monitor has no value for it."""
    end = now - delay
    grain = plan.grain
    # whole grains only: the window's grains plus one, from a grain boundary
    start = math.floor((end - plan.window) / grain) * grain - grain
    kwargs: dict[str, Any] = {"timespan": f"{_iso(start)}/{_iso(end)}", "interval": iso_duration(grain),
                              "metricnames": plan.metric_name, "aggregation": plan.aggregation}
    filters = [f for f in (plan.filter, "VMName eq '*'" if plan.split else None) if f]
    if filters:
        kwargs["filter"] = " and ".join(filters)
        kwargs["top"] = MAX_SERIES
    if plan.namespace:
        kwargs["metricnamespace"] = plan.namespace
    response = call("metrics.list", monitor.metrics.list, plan.resource_uri, **kwargs)
    field = _AGG_FIELD[plan.aggregation]
    per_member: dict[str, list[tuple[float, float]]] = {}
    group: list[tuple[float, float]] = []
    for metric in response.value or []:
        for ts in metric.timeseries or []:
            vm = next((md.value for md in ts.metadatavalues or []
                       if (md.name.value or "").lower() == "vmname"), None)
            points = list(_points(ts.data or (), field, grain, end))
            if vm is not None and plan.split:
                per_member.setdefault(vm, []).extend(points)
            else:
                group.extend(points)
    return _observation(plan, per_member, sorted(group), end)


def _points(data: Iterable[Any], field: str, grain: float, end: float) -> Iterable[tuple[float, float]]:
    for d in data:
        v = getattr(d, field, None)
        if v is None:
            continue   # a grain without data is missing, never 0
        t = d.time_stamp.timestamp() + grain   # the protocol stamps a grain at its end
        if t <= end + 1e-6:                    # a grain still open is not a sample yet
            yield t, float(v)


def _observation(plan: MetricPlan, per_member: dict[str, list[tuple[float, float]]],
                 group: list[tuple[float, float]], end: float) -> Optional[dict]:
    lo = end - plan.window
    obs: dict[str, Any] = {}
    if per_member:
        inside = {vm: [v for t, v in pts if lo < t <= end] for vm, pts in per_member.items()}
        members = {vm: sum(vs) / len(vs) for vm, vs in inside.items() if vs}
        if members:
            obs["members"] = members
            obs["timestamp"] = end
            obs["window"] = plan.window
        obs["member_series"] = {vm: [[t, v] for t, v in sorted(pts)] for vm, pts in per_member.items()}
        if not group:   # the group's series, from the instances' (the scale set's own aggregation)
            by_t: dict[float, list[float]] = {}
            for pts in per_member.values():
                for t, v in pts:
                    by_t.setdefault(t, []).append(v)
            group = sorted((t, _combine(plan.aggregation, vs)) for t, vs in by_t.items())
    if group:
        obs["series"] = [[t, v] for t, v in group]
        inside = [v for t, v in group if lo < t <= end]
        if inside:
            obs["value"] = inside[-1]
            obs["values"] = [inside[-1]]
            obs.setdefault("timestamp", group[-1][0])
            obs.setdefault("window", plan.window)
    return obs or None


def _combine(aggregation: str, values: list[float]) -> float:
    if aggregation == "Minimum":
        return min(values)
    if aggregation == "Maximum":
        return max(values)
    if aggregation in ("Total", "Count"):
        return sum(values)
    return sum(values) / len(values)
