"""A target's history, read from its sources and rebuilt as the simulator's demand.

For one target over ``[start, end)`` at the replay's tick:

1. **The demand metric** is the first metric the policy names (its metrics,
   then its rules, then its predictive metric: :func:`~scalebridge.controller.queries.metric_names`;
   ``cpu`` for a policy without any), read from its metric source (a range query
   at the tick, :meth:`~scalebridge.metric_sources.MetricSource.read_history`) or
   from the provider's own monitoring (:meth:`~scalebridge.providers.Target.read_history`:
   CloudWatch ``GetMetricData``, Cloud Monitoring ``ListTimeSeries``, Azure Monitor
   metrics with a timespan).
2. **The size the target had**, where it is recorded: the provider's
   :meth:`~scalebridge.providers.Target.size_history` (CloudWatch
   ``GroupDesiredCapacity`` / ``GroupInServiceInstances``, Cloud Monitoring
   ``instance_group/size``), or a metric source's answer to
   ``backtest.size_source`` or to the provider's
   :meth:`~scalebridge.providers.Target.size_history_query` (kube-state-metrics'
   replicas through Prometheus).
3. **The demand**, the way the simulator models it
   (:mod:`scalebridge.simulator.world`): the load the members served, in the
   unit of the fleet's ``capacity``. A metric the simulator publishes as the
   group's total (``object``, ``external``, a rule's or the predictive metric) is
   the load itself (several series are summed, as an external metric's values
   are); a per-member metric (``pods``) is summed over the members where it is
   read per member, else its average × the size that served it; ``cpu`` and a
   ``load_balancing`` metric are utilization in percent of a member's capacity:
   ``percent / 100 × capacity`` per member, summed the same way.

Each series holds from its point until the next (the simulator's step-hold
traces): it is put on the tick grid with :func:`scalebridge.simulator.traces.resample`,
so a history equal to a trace gives exactly the load ``simulate --trace`` replays.
A tick with no sample holds the one before it (counted in ``filled_ticks``); a
period with no sample at all, a source that cannot be reached, a query that is
not valid there, a series that names no member, and a period longer than the
source's retention are a :class:`HistoryError` naming the metric and why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..errors import ScalebridgeError
from ..metric_sources import RangeSeries, SourceQuery, match_members, parse_source_query
from ..providers import MetricQuery, ProviderError, RefError

if TYPE_CHECKING:
    from ..controller.runtime import TargetSpec
    from .recorded import Recorded

__all__ = ["HistoryError", "TargetHistory", "read_history", "demand_query", "demand_kind", "on_grid", "parse_time"]

#: how the demand is rebuilt from each metric type (see the module docstring)
_UTILIZATION = frozenset({"resource", "container_resource", "load_balancing"})
_PER_MEMBER = frozenset({"pods"})


class HistoryError(ScalebridgeError):
    """A target's history cannot be read or rebuilt; ``str()`` names the metric and why."""


@dataclass
class TargetHistory:
    """What one target's replay needs, on the tick grid from ``start``."""
    name: str
    metric: str                       #: the demand metric's name
    source: str                       #: where it was read (``prom: sum(rate(…))``, ``CloudWatch``)
    load: np.ndarray                  #: the demand per tick, in the capacity's unit
    start: float
    tick: float
    recorded_desired: Optional[np.ndarray] = None   #: the size the target had, per tick (None: not recorded)
    recorded_serving: Optional[np.ndarray] = None   #: the members serving, per tick
    recorded_source: Optional[str] = None
    filled_ticks: int = 0             #: ticks without a sample, holding the one before
    notes: list[str] = field(default_factory=list)


def parse_time(text: str, now: float) -> float:
    """An RFC 3339 time (``2024-05-10T00:00:00Z``), Unix seconds, ``now``, or a time
    relative to now (``-7d``, ``-36h``, ``-90m``, ``now-7d``). Raises ValueError."""
    from ..units import parse_duration
    t = text.strip()
    if t == "now":
        return now
    if _is_number(t):
        return float(t)
    if t.startswith("now-"):   # Grafana's and Prometheus' form of the same
        t = t[len("now"):]
    if t.startswith("-"):
        try:
            return now - parse_duration(t[1:])
        except ValueError:
            raise ValueError(f"not a time: {text!r} (relative times are a duration before now: -7d, -36h, "
                             "-90m, now-7d)") from None
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a time: {text!r} (RFC 3339 such as 2024-05-10T00:00:00Z, Unix seconds, now, "
                         "or relative such as -7d)") from None
    if dt.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone: give one (Z, +02:00), as RFC 3339 does")
    return dt.timestamp()


def _is_number(t: str) -> bool:
    try:
        return math.isfinite(float(t))
    except ValueError:
        return False


def demand_query(spec: "TargetSpec", recorded: Optional["Recorded"] = None) -> MetricQuery:
    """The query of the demand metric: the first of the policy's metric names the
    target reads (its ``queries``) that ``--history`` gives, else the first it reads,
    else its first query."""
    from ..controller.queries import metric_names
    by_name = {q.name: q for q in spec.queries}
    given = [n for n in metric_names(spec.policy) if recorded is not None and n in recorded.metrics]
    for name in given + metric_names(spec.policy) + ["cpu"]:
        if name in by_name:
            return by_name[name]
    if spec.queries:
        return spec.queries[0]
    raise HistoryError("the policy reads no metric to rebuild the demand from (a schedule-only policy)")


def on_grid(points: list, resolution: float, start: float, end: float, tick: float) -> tuple[np.ndarray, int]:
    """Step-hold ``points`` (``[[t, v], …]``, each holding for ``resolution`` or until
    the next) on the tick grid of ``[start, end)``, as ``simulate`` resamples a trace.
    A span without a point holds the value before it (the first value before the
    first point); returns the values and how many ticks had no sample. Raises
    ValueError when there is no point in the period."""
    from ..simulator.traces import Trace, _fill_gaps, resample
    pts = sorted((float(t), float(v)) for t, v in points if start - resolution < float(t) < end)
    if not pts:
        raise ValueError("no samples")
    times = np.array([p[0] for p in pts])
    values = np.array([p[1] for p in pts])
    # the ticks no sample covers: before the first, after the last's hold, inside gaps
    n = max(1, int(math.ceil((end - start) / tick - 1e-9)))
    grid = start + np.arange(n) * tick
    idx = np.searchsorted(times, grid, side="right") - 1
    covered = (idx >= 0) & (grid < times[np.maximum(idx, 0)] + resolution - 1e-9)
    filled = int(n - np.count_nonzero(covered))
    if times[0] > start:   # hold the first value back to the start
        times = np.concatenate(([start], times))
        values = np.concatenate(([values[0]], values))
    if times[-1] + resolution < end:
        times = np.concatenate((times, [end - resolution]))
        values = np.concatenate((values, [values[-1]]))
    times, values = _fill_gaps(times, values, resolution, "previous")   # simulate's --fill previous
    return resample(Trace(times, values, resolution=resolution), tick, start, end), filled


def _sum_series(series: list[list]) -> list:
    if len(series) == 1:
        return series[0]
    acc: dict[float, float] = {}
    for pts in series:
        for t, v in pts:
            acc[t] = acc.get(t, 0.0) + v
    return [[t, acc[t]] for t in sorted(acc)]


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _from_source(sq: SourceQuery, source: Any, start: float, end: float, tick: float,
                 kind: str) -> tuple[list, bool]:
    """(points, summed over members) of a metric-source query's history."""
    got: list[RangeSeries] = source.read_history(sq, start, end, tick)
    if sq.member_label:
        match_members(sq, [s.labels for s in got], None)   # every series names its member
        return _sum_series([s.points for s in got]) if got else [], True
    if kind == "total" or len(got) <= 1:
        return (_sum_series([s.points for s in got]) if got else []), False
    raise HistoryError(f"{sq.metric_source}: {sq.query!r} returns {len(got)} series: a per-member metric needs "
                       "their average (avg(…)) or member_label to read one per member")


def demand_kind(q: MetricQuery) -> str:
    """How the demand is rebuilt from the metric of ``q``: ``utilization`` (percent of a
    member's capacity), ``per_member`` (an average per member) or ``total`` (the group's)."""
    return "utilization" if q.type in _UTILIZATION else "per_member" if q.type in _PER_MEMBER else "total"


def read_history(spec: "TargetSpec", start: float, end: float, tick: float, capacity: float,
                 recorded: Optional["Recorded"] = None) -> TargetHistory:
    """The demand and the recorded size of ``spec``'s target over ``[start, end)``
    (see the module docstring); ``recorded``: the ``--history`` and ``--recorded``
    files, read in place of the sources they stand for. Raises :class:`HistoryError`."""
    q = demand_query(spec, recorded)
    kind = demand_kind(q)
    notes: list[str] = []
    route = spec.metric_sources.get(q.name)
    from_file = recorded is not None and q.name in recorded.metrics
    if from_file:
        route = None   # the file stands for the metric's source, and for no other query to it
    try:
        if from_file:
            trace = recorded.metrics[q.name]
            points, summed = list(zip(trace.times.tolist(), trace.values.tolist())), False
            resolution = float(trace.resolution)
            where = f"--history {trace.source}"
        elif route is not None:
            sq, source = route
            points, summed = _from_source(sq, source, start, end, tick, kind)
            resolution = tick
            where = f"{sq.metric_source}: {sq.query}"
        else:
            got = spec.target.read_history(q, start, end, tick)
            resolution = float(got.get("resolution") or tick)
            if got.get("member_series") is not None:
                points, summed = _sum_series(list(got["member_series"].values())), True
            else:
                points, summed = got.get("series") or [], False
            where = str(got.get("source") or spec.provider_key)
    except ProviderError as e:
        raise HistoryError(f"metric {q.name!r}: {e.message}") from None
    if not points:
        raise HistoryError(f"metric {q.name!r}: no samples between {_when(start)} and {_when(end)} "
                           f"({where})")
    try:
        values, filled = on_grid(points, resolution, start, end, tick)
    except ValueError:   # samples, but none in the period
        raise HistoryError(f"metric {q.name!r}: no samples between {_when(start)} and {_when(end)} ({where})") \
            from None
    if filled:
        notes.append(f"{filled} of {values.size} ticks of {q.name!r} had no sample and held the one before")
    if recorded is not None and recorded.size is not None:
        size = recorded.size
        try:
            sizes = np.rint(on_grid(list(zip(size.times.tolist(), size.values.tolist())), float(size.resolution),
                                    start, end, tick)[0]).astype(np.int64)
        except ValueError:
            raise HistoryError(f"--recorded {size.source}: no samples between {_when(start)} and {_when(end)}") \
                from None
        desired, serving, size_where = sizes, sizes, f"--recorded {size.source}"
    else:
        desired, serving, size_where = _recorded(spec, route, start, end, tick, notes)
    if kind == "total" or summed:
        load = values if kind != "utilization" else values / 100.0 * capacity
    else:
        if serving is None:
            raise HistoryError(f"metric {q.name!r} is a per-member average: rebuilding the demand needs the size "
                               "that served it, which is not recorded for this target (give --recorded FILE.csv, "
                               "member_label to read one series per member, or backtest.size_source)")
        load = values * serving if kind == "per_member" else values / 100.0 * capacity * serving
    load = np.maximum(np.nan_to_num(load, nan=0.0, posinf=0.0), 0.0)
    return TargetHistory(spec.name, q.name, where, load, start, tick, desired, serving, size_where, filled, notes)


def _recorded(spec: "TargetSpec", route: Optional[tuple], start: float, end: float, tick: float,
              notes: list[str]) -> tuple[Optional[np.ndarray], Optional[np.ndarray], Optional[str]]:
    """The recorded (desired, serving) sizes per tick, and where they come from."""
    opts = spec.backtest
    size_source = opts.size_source if opts is not None else None
    kube_query = spec.target.size_history_query() if route is not None else None
    if size_source is not None or kube_query:
        if size_source is not None:
            try:
                sq = parse_source_query("size", size_source)
            except RefError as e:
                raise HistoryError(f"backtest.size_source: {e.message}") from None
            instance = next((s for _, s in spec.metric_sources.values() if s.name == sq.metric_source), None)
            if instance is None:
                raise HistoryError(f"backtest.size_source: the metric source {sq.metric_source!r} is not one "
                                   "this target reads a metric from")
        else:
            instance = route[1]
            sq = SourceQuery("size", instance.name, kube_query)
        try:
            got = instance.read_history(sq, start, end, tick)
        except ProviderError as e:   # the demand is replayed all the same, with nothing to compare it to
            notes.append(f"no recorded size: {sq.query!r}: {e.message}")
            return None, None, None
        if not got:
            notes.append(f"no recorded size: {sq.metric_source}: {sq.query!r} has no samples in the period")
            return None, None, None
        sizes = np.rint(on_grid(_sum_series([s.points for s in got]), tick, start, end, tick)[0]).astype(np.int64)
        return sizes, sizes, f"{sq.metric_source}: {sq.query}"
    try:
        got = spec.target.size_history(start, end, tick)
    except ProviderError as e:
        notes.append(f"no recorded size: {e.message}")
        return None, None, None
    if not got or not got.get("desired"):
        return None, None, None
    resolution = float(got.get("resolution") or tick)
    desired, _ = on_grid(got["desired"], resolution, start, end, tick)
    serving = desired
    if got.get("serving"):
        serving, _ = on_grid(got["serving"], resolution, start, end, tick)
    return (np.rint(desired).astype(np.int64), np.rint(serving).astype(np.int64),
            str(got.get("source") or spec.provider_key))
