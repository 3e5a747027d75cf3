"""CloudWatch metric sources of the ``aws`` provider, read with ``GetMetricData``.

A target's ``metrics.<name>.source`` (run configuration) in CloudWatch's own terms:

| key | meaning |
|---|---|
| ``namespace`` | ``AWS/EC2``, ``AWS/SQS``, a custom namespace (required) |
| ``metric_name`` | ``CPUUtilization``, ``ApproximateNumberOfMessagesVisible`` (required) |
| ``dimensions`` | a mapping ``{Name: Value}``; the value ``{auto_scaling_group}`` is the target's group name |
| ``statistic`` | ``Average`` (default), ``Sum``, ``Minimum``, ``Maximum``, ``SampleCount``, or an extended statistic (``p99``) |
| ``extended_statistic`` | an extended statistic (``p99``, ``tm90``), instead of ``statistic`` |
| ``period_seconds`` | the datapoint period (default: the query's grain, else 60); 1, 5, 10, 30 or a multiple of 60 |
| ``per_member`` | one series per instance (``InstanceId`` added to the dimensions), default false |
| ``unit`` | the datapoints' unit, when the metric is published in several |

The default source of a metric named ``cpu`` is ``AWS/EC2`` ``CPUUtilization``
per ``InstanceId``, ``Average`` over 60 s.

``GetMetricData`` (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html):
up to 500 ``MetricDataQuery`` structures per call and 100,800 datapoints per
call; every member's and every metric's query of one target goes into as few
calls as that allows (one, for up to 500 series). A datapoint's ``Timestamp``
is its period's start; the protocol stamps a period's point at its end
(``docs/protocol.md``: "one point per period (stamped at the period's end)").
A period without a datapoint is absent — never 0 — and a member without any is
absent from ``members``/``member_series``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Optional, Sequence

from scalebridge.protocol import MetricObservation
from scalebridge.providers import ErrorKind, MetricQuery, ProviderError

__all__ = ["Source", "DEFAULT_CPU", "parse_source", "plan", "read_metrics", "read_metrics_many", "MAX_QUERIES",
           "MAX_DATAPOINTS", "read_history", "size_history", "history_period", "RETENTION"]

MAX_QUERIES = 500          #: MetricDataQueries per GetMetricData call
MAX_DATAPOINTS = 100_800   #: datapoints per GetMetricData call
STATISTICS = ("SampleCount", "Average", "Sum", "Minimum", "Maximum")
_EXTENDED = re.compile(r"^(p|tm|tc|ts|wm|pr|iqm)(\d{1,2}(\.\d{1,10})?|100)?(\(.*\))?$|^(TM|TC|TS|WM|PR)\(.+\)$")
_VALID_PERIODS_BELOW_60 = (1, 5, 10, 30)
SOURCE_KEYS = ("namespace", "metric_name", "dimensions", "statistic", "extended_statistic", "period_seconds",
               "per_member", "unit")
GROUP_TOKEN = "{auto_scaling_group}"


@dataclass(frozen=True)
class Source:
    namespace: str
    metric_name: str
    dimensions: tuple = ()          # ((Name, Value), ...) with the group token still in
    stat: str = "Average"
    period: Optional[int] = None    # None: the query's grain
    per_member: bool = False
    unit: Optional[str] = None

    def dims(self, group: str, instance: Optional[str] = None) -> list[dict]:
        out = [{"Name": k, "Value": group if v == GROUP_TOKEN else v} for k, v in self.dimensions]
        if instance is not None:
            out.append({"Name": "InstanceId", "Value": instance})
        return out


#: the run configuration's default source of ``cpu`` (shared/spec run-config: "AWS/EC2 CPUUtilization per InstanceId, Average over 60 s")
DEFAULT_CPU = Source("AWS/EC2", "CPUUtilization", (), "Average", 60, True)


def _bad(name: str, key: Optional[str], message: str) -> ProviderError:
    where = f"metrics.{name}.source" + (f".{key}" if key else "")
    return ProviderError(ErrorKind.INVALID, f"{where}: {message}", operation="GetMetricData")


def parse_source(name: str, source: Optional[Mapping[str, Any]]) -> Source:
    """A metric source from ``metrics.<name>.source``; errors name the key."""
    if source is None:
        if name == "cpu":
            return DEFAULT_CPU
        raise _bad(name, None, "required: only `cpu` has a default source (AWS/EC2 CPUUtilization per "
                   "InstanceId); give {namespace, metric_name, dimensions, statistic, period_seconds, per_member}")
    if not isinstance(source, Mapping):
        raise _bad(name, None, f"must be a mapping of {', '.join(SOURCE_KEYS)}, got {source!r}")
    for k in source:
        if k not in SOURCE_KEYS:
            raise _bad(name, str(k), f"unknown key; valid keys: {', '.join(SOURCE_KEYS)}")
    ns, mn = source.get("namespace"), source.get("metric_name")
    for key, v in (("namespace", ns), ("metric_name", mn)):
        if not isinstance(v, str) or not v:
            raise _bad(name, key, f"required, a non-empty string (got {v!r})")
    dims = source.get("dimensions") or {}
    if not isinstance(dims, Mapping):
        raise _bad(name, "dimensions", f"must be a mapping {{Name: Value}} (got {dims!r})")
    if len(dims) > 30:
        raise _bad(name, "dimensions", "at most 30 dimensions (CloudWatch's limit)")
    for k, v in dims.items():
        if not isinstance(k, str) or not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise _bad(name, f"dimensions.{k}", f"must map a name to a string value (got {v!r})")
    stat = source.get("statistic")
    ext = source.get("extended_statistic")
    if stat is not None and ext is not None:
        raise _bad(name, "extended_statistic", "give `statistic` or `extended_statistic`, not both")
    if ext is not None:
        if not isinstance(ext, str) or not _EXTENDED.match(ext):
            raise _bad(name, "extended_statistic", f"an extended statistic such as p99 or tm90 (got {ext!r})")
        stat = ext
    elif stat is None:
        stat = "Average"
    elif not isinstance(stat, str) or (stat not in STATISTICS and not _EXTENDED.match(stat)):
        raise _bad(name, "statistic", f"one of {', '.join(STATISTICS)}, or an extended statistic such as p99 "
                   f"(got {stat!r})")
    period = source.get("period_seconds")
    if period is not None:
        if isinstance(period, bool) or not isinstance(period, (int, float)) or period != int(period) or \
                not (int(period) in _VALID_PERIODS_BELOW_60 or (period >= 60 and int(period) % 60 == 0)):
            raise _bad(name, "period_seconds", f"1, 5, 10, 30 or a multiple of 60 (got {period!r})")
        period = int(period)
    per_member = source.get("per_member", False)
    if not isinstance(per_member, bool):
        raise _bad(name, "per_member", f"true or false (got {per_member!r})")
    unit = source.get("unit")
    if unit is not None and not isinstance(unit, str):
        raise _bad(name, "unit", f"a CloudWatch unit name such as Percent or Count (got {unit!r})")
    return Source(ns, mn, tuple((k, str(v)) for k, v in dims.items()), stat, period, per_member, unit)


# ----------------------------------------------------------------------------- planning the calls


@dataclass(frozen=True)
class _Series:
    id: str
    query: str                # the MetricQuery's name
    member: Optional[str]     # instance id (per member) or None
    period: int
    body: dict                # the MetricDataQuery


def _period(src: Source, q: MetricQuery) -> int:
    if src.period is not None:
        return src.period
    g = int(q.grain_seconds or 60)
    if g in _VALID_PERIODS_BELOW_60 or (g >= 60 and g % 60 == 0):
        return g
    return max(60, int(math.ceil(g / 60)) * 60)


def plan(group: str, queries: Sequence[MetricQuery], members: Iterable[str]) -> tuple[list[_Series], dict]:
    """Every series the queries need: one per metric, or one per metric and
    member for a per-member source. Returns them and each query's parsed source."""
    member_ids = list(members)
    series: list[_Series] = []
    sources: dict = {}
    n = 0
    for q in queries:
        src = parse_source(q.name, q.source)
        sources[q.name] = src
        period = _period(src, q)
        targets = member_ids if src.per_member else [None]
        for m in targets:
            metric = {"Namespace": src.namespace, "MetricName": src.metric_name, "Dimensions": src.dims(group, m)}
            stat = {"Metric": metric, "Period": period, "Stat": src.stat}
            if src.unit:
                stat["Unit"] = src.unit
            sid = f"m{n}"
            n += 1
            series.append(_Series(sid, q.name, m, period, {"Id": sid, "MetricStat": stat, "ReturnData": True}))
    return series, sources


def _batches(series: list[_Series], span: float) -> list[list[_Series]]:
    """Series in calls of at most MAX_QUERIES queries and MAX_DATAPOINTS datapoints."""
    out: list[list[_Series]] = []
    cur: list[_Series] = []
    points = 0
    for s in series:
        p = int(span // s.period) + 1
        if cur and (len(cur) >= MAX_QUERIES or points + p > MAX_DATAPOINTS):
            out.append(cur)
            cur, points = [], 0
        cur.append(s)
        points += p
    if cur:
        out.append(cur)
    return out


def _epoch(t: Any) -> float:
    if isinstance(t, datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=timezone.utc)
        return t.timestamp()
    return float(t)


def _num(v: float):
    return int(v) if float(v).is_integer() else float(v)


def _windows(series: list[_Series], queries: Sequence[MetricQuery], now: float,
             delay: float) -> tuple[float, float, dict[float, list[_Series]]]:
    """The raw end (``now - delay``), the aligned end, and the series by StartTime."""
    end_raw = now - delay
    base = 60 if all(s.period % 60 == 0 for s in series) else min(s.period for s in series)
    end = math.floor(end_raw / base) * base
    windows = {q.name: max(float(q.window_seconds or 0), 0.0) for q in queries}
    # one call per distinct start: the series of a window share StartTime (in the
    # common case every query's: one call); a start is aligned to each period
    by_start: dict[float, list[_Series]] = {}
    for s in series:
        w = max(windows[s.query], s.period)
        start = math.floor((end - w) / s.period) * s.period - s.period
        by_start.setdefault(start, []).append(s)
    if len(by_start) > 1:       # merge windows that differ little: one StartTime for them all
        merged: dict[float, list[_Series]] = {}
        earliest = min(by_start)
        for start, ss in by_start.items():
            if all((start - earliest) % s.period == 0 and (end - earliest) // s.period <= 1440 for s in ss):
                merged.setdefault(earliest, []).extend(ss)
            else:
                merged.setdefault(start, []).extend(ss)
        by_start = merged
    return end_raw, end, by_start


def _fetch(clients, series: list[_Series], start: float, end: float, region: Optional[str],
           raw: dict[str, list], failed: Optional[dict[str, ProviderError]] = None) -> None:
    """GetMetricData for ``series`` over [start, end], in calls of at most
    MAX_QUERIES queries and MAX_DATAPOINTS datapoints, the points added to ``raw``
    by id. A result whose StatusCode is Forbidden or InternalError raises — or, with
    ``failed``, is recorded there by id (a batch of many targets' series)."""
    start_dt = datetime.fromtimestamp(start, timezone.utc)
    end_dt = datetime.fromtimestamp(end, timezone.utc)
    for batch in _batches(series, end - start):
        token = None
        while True:
            params: dict = {"MetricDataQueries": [s.body for s in batch], "StartTime": start_dt,
                            "EndTime": end_dt, "ScanBy": "TimestampAscending"}
            if token:
                params["NextToken"] = token
            resp = clients.call("cloudwatch", "get_metric_data", region=region, **params)
            for r in resp.get("MetricDataResults", ()):
                if r.get("StatusCode") in ("Forbidden", "InternalError"):
                    msgs = "; ".join(m.get("Value", "") for m in r.get("Messages", ()) or ())
                    kind = ErrorKind.FORBIDDEN if r["StatusCode"] == "Forbidden" else ErrorKind.TRANSIENT
                    e = ProviderError(kind, f"GetMetricData: {r['StatusCode']} for {r.get('Id')}: {msgs}",
                                      operation="GetMetricData")
                    if failed is None:
                        raise e
                    failed[r.get("Id")] = e
                    continue
                pts = raw.setdefault(r["Id"], [])
                pts.extend(zip(r.get("Timestamps", ()), r.get("Values", ())))
            token = resp.get("NextToken")
            if not token:
                break


def _observations(series: list[_Series], sources: dict, raw: dict[str, list], end_raw: float,
                  queries: Sequence[MetricQuery]) -> dict[str, MetricObservation]:
    by_id = {s.id: s for s in series}
    per_query: dict[str, dict] = {}
    for sid, pts in raw.items():
        s = by_id.get(sid)
        if s is None:
            continue
        clean = sorted((_epoch(t) + s.period, _num(v)) for t, v in pts
                       if v is not None and not (isinstance(v, float) and math.isnan(v)))
        clean = [[t, v] for t, v in clean if t <= end_raw + 1e-6]
        if clean:
            per_query.setdefault(s.query, {})[s.member] = (clean, s.period)
    out: dict[str, MetricObservation] = {}
    for q in queries:
        got = per_query.get(q.name)
        if not got:
            continue            # no datapoints: the metric is missing, never 0
        shapes = set(q.shapes or ()) or {"members", "member_series", "series", "value", "values"}
        # the core's own type: read and checked here
        if sources[q.name].per_member:
            out[q.name] = MetricObservation(**_member_shapes(got, shapes))
        else:
            out[q.name] = MetricObservation(**_group_shapes(got[None], shapes))
    return out


def read_metrics(clients, group: str, now: float, delay: float, observation,
                 queries: Sequence[MetricQuery], region: Optional[str] = None) -> dict[str, MetricObservation]:
    """The protocol's ``observations.metrics`` for ``queries``, from GetMetricData."""
    if not queries:
        return {}
    members = [m.name for m in (observation.members or ()) if not m.standby]   # no warm-pool instance's metric
    series, sources = plan(group, queries, members)
    if not series:
        return {}
    end_raw, end, by_start = _windows(series, queries, now, delay)
    raw: dict[str, list] = {}
    for start, group_series in sorted(by_start.items()):
        _fetch(clients, group_series, start, end, region, raw)
    return _observations(series, sources, raw, end_raw, queries)


def read_metrics_many(clients, items: Sequence[tuple[str, float, Any, Sequence[MetricQuery]]], now: float,
                      region: Optional[str] = None) -> list:
    """:func:`read_metrics` of many groups (``(group, delay, observation, queries)``
    each) in shared GetMetricData calls — up to MAX_QUERIES queries of any groups
    per call, the series of one (StartTime, EndTime) together — instead of one call
    per group. One entry per group: its metrics, or the :class:`ProviderError` it
    alone failed with (a call that fails fails the groups whose series it carried;
    a result refused for one series fails that series' group)."""
    out: list = [None] * len(items)
    plans: list = [None] * len(items)
    calls: dict[tuple[float, float], list[_Series]] = {}
    owner: dict[str, int] = {}
    for k, (group, delay, observation, queries) in enumerate(items):
        try:
            if not queries:
                out[k] = {}
                continue
            series, sources = plan(group, queries, [m.name for m in (observation.members or ()) if not m.standby])
            if not series:
                out[k] = {}
                continue
            # ids unique across the groups of the batch (an Id starts with a lowercase letter)
            series = [_Series(f"g{k}_{s.id}", s.query, s.member, s.period, {**s.body, "Id": f"g{k}_{s.id}"})
                      for s in series]
            end_raw, end, by_start = _windows(series, queries, now, delay)
        except ProviderError as e:
            out[k] = e
            continue
        plans[k] = (series, sources, end_raw, queries)
        for start, ss in by_start.items():
            calls.setdefault((start, end), []).extend(ss)
            for s in ss:
                owner[s.id] = k
    raw: dict[str, list] = {}
    failed: dict[str, ProviderError] = {}
    for (start, end), ss in sorted(calls.items()):
        try:
            _fetch(clients, ss, start, end, region, raw, failed)
        except ProviderError as e:
            for s in ss:
                failed.setdefault(s.id, e)
    for sid, e in failed.items():
        k = owner.get(sid)
        if k is not None and not isinstance(out[k], ProviderError):
            out[k] = e
    for k, p in enumerate(plans):
        if p is None or out[k] is not None:
            continue
        series, sources, end_raw, queries = p
        out[k] = _observations(series, sources, raw, end_raw, queries)
    return out


def _member_shapes(got: dict, shapes: set) -> dict:
    """Per-member datapoints in the shapes asked for: ``member_series``; a
    ``members`` snapshot (each member's datapoint of the newest period any member
    has); else the average across members as a ``series``; else the newest
    datapoints as ``values`` (and their sum as ``value``)."""
    obs: dict = {}
    period = max(p for _, p in got.values())
    latest = max(pts[-1][0] for pts, _ in got.values())
    snap = {m: pts[-1][1] for m, (pts, _) in got.items() if pts[-1][0] == latest}
    if "member_series" in shapes:
        obs["member_series"] = {m: pts for m, (pts, _) in got.items()}
    if "members" in shapes:
        obs.update(members=snap, timestamp=latest, window=period)
    if not obs and "series" in shapes:
        obs["series"] = _average_series(got)
    if not obs:
        vals = list(snap.values())
        obs.update(values=vals, value=_num(sum(vals)), timestamp=latest, window=period)
    return obs


def _average_series(got: dict) -> list:
    acc: dict = {}
    for pts, _ in got.values():
        for t, v in pts:
            acc.setdefault(t, []).append(v)
    return [[t, _num(sum(vs) / len(vs))] for t, vs in sorted(acc.items())]


def _group_shapes(got: tuple, shapes: set) -> dict:
    pts, period = got
    obs: dict = {}
    t, v = pts[-1]
    if "series" in shapes:
        obs["series"] = pts
    if "value" in shapes:
        obs["value"] = v
    if "values" in shapes:
        obs["values"] = [v]
    if "members" in shapes and not obs:
        obs["value"] = v
    if "series" not in shapes or len(obs) > 1:
        obs["timestamp"] = t
        obs["window"] = period
    return obs


# ----------------------------------------------------------------------------- history (``scalebridge backtest``)

#: what CloudWatch keeps, by age: "Data points with a period of 60 seconds (1 minute) are available for
#: 15 days; ... 300 seconds (5 minutes) ... for 63 days; ... 3600 seconds (1 hour) ... for 455 days
#: (15 months)" (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html,
#: "Metrics retention")
RETENTION = ((15 * 86400.0, 60), (63 * 86400.0, 300), (455 * 86400.0, 3600))
#: the group metrics Auto Scaling publishes once EnableMetricsCollection is on (1-minute granularity),
#: https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-metrics.html
GROUP_DESIRED, GROUP_IN_SERVICE = "GroupDesiredCapacity", "GroupInServiceInstances"


def history_period(start: float, now: float) -> int:
    """The finest period CloudWatch still keeps for datapoints as old as ``start``."""
    age = now - start
    for keep, period in RETENTION:
        if age <= keep:
            return period
    raise ProviderError(ErrorKind.INVALID, f"the period starts {age / 86400:.0f} days ago, past CloudWatch's "
                        "retention of 455 days (15 months)", operation="GetMetricData")


def _history_series(clients, metric: dict, stat: str, period: int, start: float, end: float,
                    region: Optional[str], unit: Optional[str] = None) -> list:
    """One MetricStat's datapoints over ``[start, end)``, stamped at their period's start."""
    first = math.floor(start / period) * period
    body: dict = {"Id": "h0", "MetricStat": {"Metric": metric, "Period": period, "Stat": stat}, "ReturnData": True}
    if unit:
        body["MetricStat"]["Unit"] = unit
    pts: list = []
    token = None
    while True:
        params: dict = {"MetricDataQueries": [body], "StartTime": datetime.fromtimestamp(first, timezone.utc),
                        "EndTime": datetime.fromtimestamp(end, timezone.utc), "ScanBy": "TimestampAscending"}
        if token:
            params["NextToken"] = token
        resp = clients.call("cloudwatch", "get_metric_data", region=region, **params)
        for r in resp.get("MetricDataResults", ()):
            pts.extend(zip(r.get("Timestamps", ()), r.get("Values", ())))
        token = resp.get("NextToken")
        if not token:
            break
    return sorted([_epoch(t), _num(v)] for t, v in pts
                  if v is not None and not (isinstance(v, float) and math.isnan(v)) and _epoch(t) < end)


def read_history(clients, group: str, query: MetricQuery, start: float, end: float, now: float,
                 region: Optional[str] = None) -> dict:
    """``query``'s history for a back-test: its source's statistic at the finest
    period CloudWatch keeps for that age (:func:`history_period`). A per-instance
    source (the default ``cpu``) is read as the group's aggregate — the same metric
    with the ``AutoScalingGroupName`` dimension, which EC2 publishes for the
    instances of a group — since the instances of a past period are gone."""
    src = parse_source(query.name, query.source)
    period = max(src.period or 60, history_period(start, now))
    dims = src.dims(group)
    if src.per_member:
        dims = [d for d in dims if d["Name"] != "InstanceId"] + [{"Name": "AutoScalingGroupName", "Value": group}]
    metric = {"Namespace": src.namespace, "MetricName": src.metric_name, "Dimensions": dims}
    pts = _history_series(clients, metric, src.stat, period, start, end, region, src.unit)
    where = ", ".join(f"{d['Name']}={d['Value']}" for d in dims)
    return {"series": pts, "resolution": float(period),
            "source": f"CloudWatch {src.namespace} {src.metric_name} {src.stat} ({where}), {period} s"}


def size_history(clients, group: str, start: float, end: float, now: float,
                 region: Optional[str] = None) -> dict:
    """The group's ``GroupDesiredCapacity`` and ``GroupInServiceInstances`` over the
    period (``AWS/AutoScaling``, ``Average``); not found when CloudWatch has none
    (group metrics collection was off)."""
    period = history_period(start, now)
    dims = [{"Name": "AutoScalingGroupName", "Value": group}]
    got = {name: _history_series(clients, {"Namespace": "AWS/AutoScaling", "MetricName": name, "Dimensions": dims},
                                 "Average", period, start, end, region)
           for name in (GROUP_DESIRED, GROUP_IN_SERVICE)}
    if not got[GROUP_DESIRED]:
        raise ProviderError(ErrorKind.NOT_FOUND, f"CloudWatch has no {GROUP_DESIRED} of {group} in the period: "
                            "turn on the group's metrics collection (EnableMetricsCollection) to record it",
                            operation="GetMetricData")
    return {"desired": got[GROUP_DESIRED], "serving": got[GROUP_IN_SERVICE] or None, "resolution": float(period),
            "source": f"CloudWatch AWS/AutoScaling {GROUP_DESIRED}/{GROUP_IN_SERVICE}, {period} s"}

