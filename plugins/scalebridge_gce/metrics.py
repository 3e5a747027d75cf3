"""Metric samples from Cloud Monitoring ``projects.timeSeries.list``
(https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.timeSeries/list),
in the decision protocol's observation shapes.

Sources (``metrics.<name>.source`` on a target, in Cloud Monitoring's terms):

===================  ==========================================================================
key                  meaning
===================  ==========================================================================
``metric_type``      the metric type (``pubsub.googleapis.com/subscription/num_undelivered_messages``)
``filter``           more of a Monitoring filter, ANDed (``resource.labels.subscription_id = "jobs"``)
``aligner``          the per-series aligner, ``ALIGN_MEAN`` by default (``ALIGN_RATE`` for a DELTA
                     or CUMULATIVE metric)
``per_member``       one series per instance of the group (``resource.type = "gce_instance"``,
                     matched by ``instance_id``); default true for ``resource`` and ``pods``
                     metrics, false otherwise
``resource_type``    the monitored resource type (default ``gce_instance`` when per member)
``scale``            multiply every value (``100``: a fraction as a percent)
``project``          the project whose metrics are read (default: the target's)
===================  ==========================================================================

Defaults:

- ``cpu`` (no source): ``compute.googleapis.com/instance/cpu/utilization`` per
  instance, a fraction of the instance's allocated vCPUs
  (https://cloud.google.com/monitoring/api/metrics_gcp_c#gcp-compute). As per-member
  samples it is given as vCPUs in use (fraction × the instance's vCPUs, its
  ``requests.cpu``), so the ``gce`` semantics computes the utilization of the group's
  total vCPUs; as a series or a value, as a percent.
- a ``load_balancing`` metric: the group's utilization of its serving capacity, in
  percent: the requests per second the load balancer sends the group
  (``loadbalancing.googleapis.com/https/backend_request_count``, ``ALIGN_RATE``,
  ``resource.labels.backend_name`` = the group's name) over ``max_rate_per_instance``
  (the backend's ``maxRatePerInstance``, required in the source) times the serving
  instances: the fraction of the backend's serving capacity that GCE's
  load-balancing signal keeps at its target
  (https://cloud.google.com/compute/docs/autoscaler/scaling-load-balancing).

Cloud Monitoring makes a sample visible up to 240 s after it was taken ("After
sampling, data is not visible for up to 240 seconds", metrics_gcp_c), so the
latest sample of each series is looked for that much further back than the
window. Missing series are missing, never 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Optional, Protocol

from scalebridge.protocol import MetricObservation
from scalebridge.providers import ErrorKind, MetricQuery, Observation, ProviderError, require


class GceTarget(Protocol):
    """What the metric reads take of a managed instance group's target (provider.GceTarget)."""
    clients: Any                      #: its :class:`~.client.GceClients`
    project: str
    igm_name: str
    metric_delay_seconds: float
    instance_ids: Mapping[str, str]   #: instance id -> managed instance name, from its last observe

__all__ = ["CPU_UTILIZATION", "Source", "read_metrics", "source_for", "read_history", "size_history",
           "INSTANCE_GROUP_SIZE", "RETENTION_SECONDS"]

CPU_UTILIZATION = "compute.googleapis.com/instance/cpu/utilization"
LB_REQUEST_COUNT = "loadbalancing.googleapis.com/https/backend_request_count"
#: Cloud Monitoring: "After sampling, data is not visible for up to 240 seconds."
VISIBILITY_DELAY = 240.0
_ALIGNERS = frozenset(("ALIGN_NONE", "ALIGN_DELTA", "ALIGN_RATE", "ALIGN_INTERPOLATE", "ALIGN_NEXT_OLDER",
                       "ALIGN_MIN", "ALIGN_MAX", "ALIGN_MEAN", "ALIGN_COUNT", "ALIGN_SUM", "ALIGN_STDDEV",
                       "ALIGN_PERCENTILE_99", "ALIGN_PERCENTILE_95", "ALIGN_PERCENTILE_50",
                       "ALIGN_PERCENTILE_05", "ALIGN_PERCENT_CHANGE"))
_KEYS = ("metric_type", "filter", "aligner", "per_member", "resource_type", "scale", "project",
         "max_rate_per_instance")
_IDS_PER_CALL = 100


@dataclass(frozen=True)
class Source:
    metric_type: str
    per_member: bool
    aligner: str = "ALIGN_MEAN"
    filter: Optional[str] = None
    resource_type: Optional[str] = None
    scale: Any = None
    project: Optional[str] = None
    cpu: bool = False                         # the default CPU source (vCPUs in use per member)
    max_rate_per_instance: Any = None         # load balancing: the backend's capacity per instance


def _bad(name: str, key: str, message: str) -> ProviderError:
    where = f"metrics.{name}.source" + (f".{key}" if key else "")
    return ProviderError(ErrorKind.INVALID, f"{where}: {message}", operation="monitoring.ListTimeSeries")


def source_for(q: MetricQuery, igm_name: str) -> Source:
    """The Monitoring source of one query: its ``source`` checked, or a default."""
    raw = q.source
    lb = q.type == "load_balancing"
    if raw is None:
        if q.name == "cpu" and not lb:
            return Source(CPU_UTILIZATION, per_member=True, resource_type="gce_instance", cpu=True)
        if lb:
            raise _bad(q.name, "max_rate_per_instance",
                       "a load_balancing metric needs the backend's maxRatePerInstance "
                       "(source: {max_rate_per_instance: 100})")
        raise _bad(q.name, "", "required: the gce provider reads only cpu by default; give "
                               "{metric_type: ..., filter: ..., per_member: ...}")
    if not isinstance(raw, Mapping):
        raise _bad(q.name, "", f"must be a mapping, got {raw!r}")
    for key in raw:
        if key not in _KEYS:
            raise _bad(q.name, str(key), f"unknown key; valid: {', '.join(_KEYS)}")
    metric_type = raw.get("metric_type", LB_REQUEST_COUNT if lb else None)
    if not isinstance(metric_type, str) or "/" not in metric_type:
        raise _bad(q.name, "metric_type", f"must be a Cloud Monitoring metric type such as "
                                          f"custom.googleapis.com/queue_depth, got {metric_type!r}")
    aligner = raw.get("aligner", "ALIGN_RATE" if lb else "ALIGN_MEAN")
    if aligner not in _ALIGNERS:
        raise _bad(q.name, "aligner", f"must be one of {', '.join(sorted(_ALIGNERS))}, got {aligner!r}")
    per_member = raw.get("per_member", q.type in ("resource", "container_resource", "pods"))
    if not isinstance(per_member, bool):
        raise _bad(q.name, "per_member", f"must be true or false, got {per_member!r}")
    flt = raw.get("filter")
    if flt is not None and not isinstance(flt, str):
        raise _bad(q.name, "filter", f"must be a Monitoring filter string, got {flt!r}")
    rtype = raw.get("resource_type", "gce_instance" if per_member else ("https_lb_rule" if lb else None))
    if rtype is not None and not isinstance(rtype, str):
        raise _bad(q.name, "resource_type", f"must be a monitored resource type, got {rtype!r}")
    if lb and "filter" not in raw and "metric_type" not in raw:
        flt = f'resource.labels.backend_name = "{igm_name}"'
    scale = raw.get("scale")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise _bad(q.name, "scale", f"must be a number, got {scale!r}")
    rate = raw.get("max_rate_per_instance")
    if lb and (rate is None or isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0):
        raise _bad(q.name, "max_rate_per_instance", f"a load_balancing metric needs the backend's "
                                                    f"maxRatePerInstance (> 0), got {rate!r}")
    project = raw.get("project")
    if project is not None and not isinstance(project, str):
        raise _bad(q.name, "project", f"must be a project ID, got {project!r}")
    return Source(metric_type, per_member, aligner, flt, rtype, scale, project,
                  cpu=metric_type == CPU_UTILIZATION and per_member, max_rate_per_instance=rate if lb else None)


def _filter(src: Source, ids: Optional[list[str]]) -> str:
    parts = [f'metric.type = "{src.metric_type}"']
    if src.resource_type:
        parts.append(f'resource.type = "{src.resource_type}"')
    if ids is not None:
        parts.append("resource.labels.instance_id = one_of(" + ", ".join(f'"{i}"' for i in ids) + ")")
    if src.filter:
        parts.append(f"({src.filter})")
    return " AND ".join(parts)


def _number(v: Any) -> Optional[float]:
    kind = v._pb.WhichOneof("value") if hasattr(v, "_pb") else None
    if kind == "double_value":
        return v.double_value
    if kind == "int64_value":
        return float(v.int64_value)
    if kind == "bool_value":
        return 1.0 if v.bool_value else 0.0
    if kind == "distribution_value":
        return v.distribution_value.mean
    return None


def _list(target: "GceTarget", src: Source, end: float, start: float, grain: float,
          ids: Optional[list[str]]) -> list[tuple[dict, list[tuple[float, float]]]]:
    """``[(resource labels, [(end time, value) …ascending])]`` of every matching series."""
    mon = require("google.cloud.monitoring_v3", "gce", "gce")
    clients = target.clients
    client = clients.monitoring()
    period = max(60, int(grain))
    out = []
    chunks = [None] if ids is None else [ids[k:k + _IDS_PER_CALL] for k in range(0, len(ids), _IDS_PER_CALL)]
    for chunk in chunks:
        agg = None
        if src.aligner != "ALIGN_NONE":
            agg = mon.Aggregation(alignment_period={"seconds": period},
                                  per_series_aligner=getattr(mon.Aggregation.Aligner, src.aligner))
        req = mon.ListTimeSeriesRequest(
            name=f"projects/{src.project or target.project}", filter=_filter(src, chunk),
            interval=mon.TimeInterval(start_time={"seconds": int(start)}, end_time={"seconds": int(end)}),
            aggregation=agg, view=mon.ListTimeSeriesRequest.TimeSeriesView.FULL)
        for ts in clients.pages("monitoring.ListTimeSeries", client.list_time_series, request=req):
            pts = []
            for p in ts.points:
                v = _number(p.value)
                if v is not None:
                    pts.append((p.interval.end_time.timestamp(), v))
            pts.sort()
            if pts:
                out.append((dict(ts.resource.labels), pts))
    return out


def _scaled(v: float, src: Source) -> Any:
    return v * src.scale if src.scale is not None else v


def read_metrics(target: "GceTarget", now: float, observation: Observation,
                 queries: list[MetricQuery]) -> dict[str, MetricObservation]:
    members = {m.name: m for m in observation.members or ()}
    # a standby-pool VM's samples are no sample of the group: not asked for
    ids = {k: v for k, v in target.instance_ids.items() if not getattr(members.get(v), "standby", False)}
    end = now - target.metric_delay_seconds
    out: dict[str, MetricObservation] = {}
    for q in queries:
        src = source_for(q, target.igm_name)
        grain = max(60.0, float(q.grain_seconds or 60))
        start = end - max(float(q.window_seconds or 0), grain) - VISIBILITY_DELAY
        found = _list(target, src, end, start, grain, sorted(ids) if src.per_member else None)
        if src.per_member:
            obs = _per_member(q, src, found, ids, members)
        else:
            obs = _group(q, src, found, observation)
        if obs:
            out[q.name] = MetricObservation(**obs)   # the core's own type: read and checked here
    return out


def _per_member(q: MetricQuery, src: Source, found, ids: dict, members: dict) -> Optional[dict]:
    series: dict[str, dict[float, float]] = {}
    for labels, pts in found:
        name = ids.get(str(labels.get("instance_id", "")))
        if name is None:
            continue   # an instance no longer in the group
        acc = series.setdefault(name, {})
        for t, v in pts:   # several series of one instance (metric labels): summed
            acc[t] = acc.get(t, 0.0) + v
    if not series:
        return None
    obs: dict[str, Any] = {}
    shapes = q.shapes or frozenset({"members"})
    latest_t = max(max(s) for s in series.values())

    def value(name: str, v: float, as_usage: bool) -> Any:
        if src.cpu:
            if as_usage:   # vCPUs in use, against requests.cpu (the instance's vCPUs)
                m = members.get(name)
                req = (m.requests if m is not None else None) or {}
                cpus = req.get("cpu")
                return v * cpus if cpus else v
            return v * 100   # a fraction as the percent the rules and series use
        return _scaled(v, src)

    if "members" in shapes:
        obs["members"] = {n: value(n, s[max(s)], True) for n, s in series.items()}
        obs["timestamp"] = latest_t
        obs["window"] = max(60.0, float(q.grain_seconds or 60))
    if "member_series" in shapes:
        obs["member_series"] = {n: [[t, value(n, v, False)] for t, v in sorted(s.items())]
                                for n, s in series.items()}
    if "series" in shapes:
        by_t: dict[float, list[float]] = {}
        for n, s in series.items():
            for t, v in s.items():
                by_t.setdefault(t, []).append(value(n, v, False))
        obs["series"] = [[t, sum(vs) / len(vs)] for t, vs in sorted(by_t.items())]
    if "value" in shapes or "values" in shapes:
        last = [value(n, s[max(s)], False) for n, s in series.items()]
        if "values" in shapes:
            obs["values"] = last
        if "value" in shapes:
            obs["value"] = sum(last) / len(last)
    return obs


def _group(q: MetricQuery, src: Source, found, observation: Observation) -> Optional[dict]:
    if not found:
        return None
    latest = [pts[-1][1] for _, pts in found]
    if src.max_rate_per_instance is not None:
        serving = sum(1 for m in observation.members or () if m.ready and not m.deleting)
        if serving == 0:
            return None   # no serving capacity: no utilization to read
        capacity = Fraction(str(src.max_rate_per_instance)) * serving
        total = sum(Fraction(v) for v in latest)
        return {"value": float(total / capacity * 100)}
    shapes = q.shapes or frozenset({"values"})
    obs: dict[str, Any] = {}
    if "values" in shapes or "members" in shapes:
        obs["values"] = [_scaled(v, src) for v in latest]
    if "value" in shapes:
        obs["value"] = _scaled(sum(latest), src)
    if "series" in shapes or "member_series" in shapes:
        by_t: dict[float, float] = {}
        for _, pts in found:
            for t, v in pts:
                by_t[t] = by_t.get(t, 0.0) + v
        obs["series"] = [[t, _scaled(v, src)] for t, v in sorted(by_t.items())]
    return obs


# ----------------------------------------------------------------------------- history (``scalebridge backtest``)

#: "Data retention ... metric data: 24 weeks" for Google Cloud metrics
#: (https://cloud.google.com/monitoring/quotas#data_retention_policy)
RETENTION_SECONDS = 24 * 7 * 86400.0
#: "The number of VMs in the instance group", sampled every 60 s (metrics_gcp_c, compute)
INSTANCE_GROUP_SIZE = "compute.googleapis.com/instance_group/size"


def _history(target: "GceTarget", src: Source, start: float, end: float, step: float, now: float) -> tuple[list, int]:
    """A group-level source's points over ``[start, end)`` at an alignment period of
    ``max(60, step)``: each aligned point summarizes ``(t − period, t]``, so it is
    stamped at ``t − period`` (the start of the span it holds for); several series
    are summed."""
    if now - start > RETENTION_SECONDS:
        raise ProviderError(ErrorKind.INVALID, f"the period starts {(now - start) / 86400:.0f} days ago, past Cloud "
                            "Monitoring's retention of 24 weeks", operation="monitoring.ListTimeSeries")
    period = max(60, int(step))
    first = (start // period) * period
    found = _list(target, src, end + period, first, period, None)
    acc: dict[float, float] = {}
    for _, pts in found:
        for t, v in pts:
            if start - period <= t - period < end:
                acc[t - period] = acc.get(t - period, 0.0) + v
    return [[t, _scaled(v, src)] for t, v in sorted(acc.items())], period


def read_history(target: "GceTarget", q: MetricQuery, start: float, end: float, step: float, now: float) -> dict:
    """``q``'s history from Cloud Monitoring ``ListTimeSeries`` for a back-test. A
    per-instance source (the default ``cpu``) has no history of the instances that
    came and went: it is refused, naming a group-level source or a metric source."""
    src = source_for(q, target.igm_name)
    if src.per_member or src.max_rate_per_instance is not None:
        raise _bad(q.name, "per_member", "a per-instance source keeps no history of the instances that came and "
                                         "went: for a back-test give a group-level source (per_member: false, "
                                         "such as the load balancer's request count) or read it from a metric "
                                         "source")
    pts, period = _history(target, src, start, end, step, now)
    return {"series": pts, "resolution": float(period),
            "source": f"Cloud Monitoring {src.metric_type} {src.aligner}, {period} s"}


def size_history(target: "GceTarget", start: float, end: float, step: float, now: float) -> Optional[dict]:
    """``instance_group/size`` of the group (resource ``instance_group``, by its name)."""
    src = Source(INSTANCE_GROUP_SIZE, per_member=False, aligner="ALIGN_MEAN", resource_type="instance_group",
                 filter=f'resource.labels.instance_group_name = "{target.igm_name}"')
    pts, period = _history(target, src, start, end, step, now)
    if not pts:
        raise ProviderError(ErrorKind.NOT_FOUND, f"Cloud Monitoring has no {INSTANCE_GROUP_SIZE} of "
                            f"{target.igm_name} in the period", operation="monitoring.ListTimeSeries")
    return {"desired": pts, "serving": None, "resolution": float(period),
            "source": f"Cloud Monitoring {INSTANCE_GROUP_SIZE}, {period} s"}

