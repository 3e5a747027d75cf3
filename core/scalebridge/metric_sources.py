"""The metric-source contract: a plugin kind of its own, beside providers.

A metric source reads a policy's metric from a monitoring system that is the
same whatever the target runs on (Prometheus for a Deployment, a MIG, a scale
set and an Auto Scaling group alike), instead of the provider's own monitoring.
A plugin registers a *factory* per source type::

    from scalebridge.hookspecs import hookimpl

    @hookimpl
    def scalebridge_register_metric_sources(register):
        register("prometheus", PrometheusSource)     # PrometheusSource(**options) -> MetricSource

A run configuration names instances at its top level (``metric_sources: {prom:
{type: prometheus, url: …}}``) and a target's metric reads from one with
``metrics.<name>.source: {metric_source: prom, query: PROMQL, member_label: LABEL}``
(:class:`SourceQuery`).

A source implements two reads, in Prometheus's HTTP API terms — an *instant*
query (a vector at one time) and a *range* query (a matrix over a period at a
step) — and, where it knows them, its retention and the most points one range
request may return. The contract's reads are built on them here, once for every
source:

- :meth:`MetricSource.read_value` — one number (an instant vector of one series);
- :meth:`MetricSource.read_members` — one number per member (``member_label``
  maps a series to a member);
- :meth:`MetricSource.read_window` — a window of samples at a time (a range
  query at the rule's grain: Azure's time window, an AWS alarm's periods);
- :meth:`MetricSource.read_history` — a range of history (``scalebridge
  backtest``), in requests of at most :attr:`MetricSource.max_points` points.

:func:`observe` turns them into the decision protocol's observation of one
:class:`~scalebridge.providers.MetricQuery` (``members``, ``value``, ``values``,
``series``, ``member_series``). Every failure is a
:class:`~scalebridge.providers.ProviderError` of the providers' kinds
(``throttled`` with ``retry_after``, ``transient``, ``forbidden``,
``not_found``, ``invalid``): the controller backs off and reports it as it does
a provider's.
"""
from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Optional, Sequence

from .providers import ErrorKind, MetricQuery, ProviderError, RefError

__all__ = ["MetricSource", "SourceQuery", "Sample", "RangeSeries", "observe", "parse_source_query",
           "is_metric_source_query", "SOURCE_QUERY_KEYS", "match_members", "parse_prometheus_duration"]

#: the keys of a target's ``metrics.<name>.source`` that reads from a metric source
SOURCE_QUERY_KEYS = ("metric_source", "query", "member_label")

Points = list[list[float]]   # [[t, v], ...], the protocol's series form


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels and its value."""
    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True)
class RangeSeries:
    """One series of a range query's matrix: its labels and ``[[t, v], ...]`` by time."""
    labels: Mapping[str, str]
    points: Points


@dataclass(frozen=True)
class SourceQuery:
    """A target's ``metrics.<name>.source`` naming a metric source: the instance
    (``metric_source``), the query in its language (``query``), and the label
    whose value is a member's name (``member_label``), for a metric read per member."""
    metric: str
    metric_source: str
    query: str
    member_label: Optional[str] = None


def is_metric_source_query(source: Optional[Mapping[str, Any]]) -> bool:
    """Whether a ``metrics.<name>.source`` reads from a metric source (it has
    ``metric_source``) rather than from the provider's own monitoring."""
    return isinstance(source, Mapping) and "metric_source" in source


def parse_source_query(metric: str, source: Mapping[str, Any]) -> SourceQuery:
    """A :class:`SourceQuery` from ``metrics.<metric>.source``; a bad key raises
    :class:`RefError` naming it (``metrics.rps.source.query``)."""
    where = f"metrics.{metric}.source"
    for key in source:
        if key not in SOURCE_QUERY_KEYS:
            import difflib
            close = difflib.get_close_matches(str(key), SOURCE_QUERY_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RefError(f"{where}.{key}", f"unknown key{hint}; a metric source's query takes "
                                             f"{', '.join(SOURCE_QUERY_KEYS)}")
    name, query, label = source.get("metric_source"), source.get("query"), source.get("member_label")
    if not isinstance(name, str) or not name:
        raise RefError(f"{where}.metric_source", f"the name of an instance of `metric_sources:`, got {name!r}")
    if not isinstance(query, str) or not query.strip():
        raise RefError(f"{where}.query", f"required: the query (PromQL for a prometheus source), got {query!r}")
    if label is not None and (not isinstance(label, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", label)):
        raise RefError(f"{where}.member_label", f"a label name ([A-Za-z_][A-Za-z0-9_]*), got {label!r}")
    return SourceQuery(metric, name, query, label)


_PROM_DURATION = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")


def parse_prometheus_duration(text: str) -> float:
    """Seconds of a Prometheus duration (``15d``, ``1h30m``, ``500ms``; units
    ``y`` = 365 d, ``w``, ``d``, ``h``, ``m``, ``s``, ``ms``: prometheus/common
    ``model.ParseDuration``). Raises ValueError."""
    m = _PROM_DURATION.match(text.strip())
    if not text.strip() or m is None or not any(m.groups()):
        raise ValueError(f"not a Prometheus duration: {text!r} (e.g. 15d, 1h30m, 500ms)")
    factors = (365 * 86400, 7 * 86400, 86400, 3600, 60, 1, 0.001)
    return float(sum(int(g) * f for g, f in zip(m.groups(), factors) if g))


def _invalid(sq: SourceQuery, message: str) -> ProviderError:
    return ProviderError(ErrorKind.INVALID, f"{sq.metric_source}: {message}", operation="query")


def _describe(labels: Mapping[str, str]) -> str:
    name = labels.get("__name__", "")
    rest = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{rest}}}"


def match_members(sq: SourceQuery, labels: Sequence[Mapping[str, str]],
                  members: Optional[Sequence[str]]) -> list[Optional[str]]:
    """The member each series stands for, by its ``member_label`` value: the
    member of that name, or of that name before a ``:port`` (Prometheus's
    ``instance`` label is ``host:port``). A series without the label is an
    error naming it; a value naming no member is None (a member gone since, whose
    series Prometheus still returns within its lookback) — unless no series names
    a member, which is an error naming both sides. ``members`` None: every value
    is a member (a back-test, where members come and go)."""
    label = sq.member_label
    out: list[Optional[str]] = []
    known = None if members is None else set(members)
    for lab in labels:
        value = lab.get(label)
        if not value:
            raise _invalid(sq, f"a series of {sq.query!r} has no label {label!r} to name its member: "
                               f"{_describe(lab)}; member_label names the label whose value is a member's name")
        if known is None or value in known:
            out.append(value)
        elif value.rpartition(":")[0] in known:
            out.append(value.rpartition(":")[0])
        else:
            out.append(None)
    if labels and known and all(m is None for m in out):
        values = sorted({lab.get(label, "") for lab in labels})
        shown = ", ".join(values[:3]) + (f" and {len(values) - 3} more" if len(values) > 3 else "")
        names = sorted(known)
        mine = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise _invalid(sq, f"no series of {sq.query!r} names a member of the target by its label {label!r} "
                           f"({label} is {shown}; the members are {mine})")
    return out


class MetricSource(ABC):
    """A monitoring system a policy's metrics are read from (a Prometheus server).

    Subclasses set :attr:`type` (the registered name), :attr:`path_options`
    (options that are file paths, read from the run configuration's directory),
    and implement :meth:`instant` and :meth:`range`; the contract's reads are
    built on them. Every method raises :class:`ProviderError` (never an HTTP
    library's exception). ``name`` is the instance's key in ``metric_sources:``
    (the controller sets it), used in messages."""

    type: ClassVar[str] = "metric_source"
    path_options: ClassVar[frozenset[str]] = frozenset()
    #: the most points one range request may return per series (Prometheus: 11,000),
    #: None for no limit; :meth:`read_history` splits a longer period into requests
    max_points: ClassVar[Optional[int]] = None
    name: str = "metric source"

    @abstractmethod
    def instant(self, query: str, at: float) -> list[Sample]:
        """The instant vector ``query`` evaluates to at ``at`` (a scalar is one
        sample without labels). A query that yields a range vector (a matrix) or
        a string is an ``invalid`` error saying so."""

    @abstractmethod
    def range(self, query: str, start: float, end: float, step: float) -> list[RangeSeries]:
        """The matrix of ``query`` evaluated at ``start``, ``start + step``, … ``≤ end``."""

    def retention_seconds(self) -> Optional[float]:
        """How far back the source keeps samples (Prometheus's
        ``--storage.tsdb.retention.time``), or None when it does not say."""
        return None

    def check_query(self, sq: SourceQuery) -> None:
        """Check a query without calling the source (``validate``, start-up),
        raising :class:`RefError` naming ``metrics.<name>.source.query``.
        Default: every non-empty query is accepted."""

    def close(self) -> None:
        """Release connections (default: nothing)."""

    # ------------------------------------------------------------------ the contract's reads
    def read_value(self, sq: SourceQuery, at: float) -> Optional[float]:
        """One number at ``at``: the query must yield at most one series (None: no data)."""
        got = self.instant(sq.query, at)
        if len(got) > 1:
            raise _invalid(sq, f"{sq.query!r} returns {len(got)} series where one value is needed "
                               f"({_describe(got[0].labels)}, …): aggregate them (sum(…), avg(…)) or give "
                               "member_label to read one per member")
        return got[0].value if got else None

    def read_values(self, sq: SourceQuery, at: float) -> list[float]:
        """Every series' value at ``at`` (an external metric's ``values``, summed by the semantics)."""
        return [s.value for s in self.instant(sq.query, at)]

    def read_members(self, sq: SourceQuery, at: float, members: Optional[Sequence[str]]) -> dict[str, float]:
        """One number per member at ``at``, by ``member_label`` (:func:`match_members`)."""
        got = self.instant(sq.query, at)
        out: dict[str, float] = {}
        for s, m in zip(got, match_members(sq, [s.labels for s in got], members)):
            if m is not None:
                out[m] = out.get(m, 0.0) + s.value
        return out

    def read_window(self, sq: SourceQuery, end: float, seconds: float, step: float,
                    members: Optional[Sequence[str]] = None, per_member: bool = False):
        """A window of samples ending at ``end``: points at the multiples of
        ``step`` in ``(end − seconds, end]`` (a range query at the rule's grain),
        one series (``per_member`` False) or one per member."""
        step = max(float(step), 1e-3)
        last = math.floor(end / step) * step
        first = last - math.floor(max(seconds, step) / step) * step
        series = self.range(sq.query, first, last, step)
        if per_member:
            out: dict[str, Points] = {}
            for s, m in zip(series, match_members(sq, [s.labels for s in series], members)):
                if m is not None:
                    out[m] = _add(out.get(m), s.points)
            return out
        if len(series) > 1:
            raise _invalid(sq, f"{sq.query!r} returns {len(series)} series where one series is needed "
                               f"({_describe(series[0].labels)}, …): aggregate them (sum(…), avg(…)) or give "
                               "member_label")
        return series[0].points if series else []

    def read_history(self, sq: SourceQuery, start: float, end: float, step: float) -> list[RangeSeries]:
        """Every series of ``query`` at ``start``, ``start + step``, … ``< end``, in
        requests of at most :attr:`max_points` points. A period longer than the
        source's retention is an ``invalid`` error naming both (its history
        there is gone)."""
        keep = self.retention_seconds()
        if keep is not None and end - start > keep:
            raise _invalid(sq, f"the period is {_days(end - start)}, longer than the source's retention of "
                               f"{_days(keep)}: its samples before that are gone (shorten --start)")
        count = max(1, math.ceil((end - start) / step - 1e-9))
        chunk = count if self.max_points is None else max(1, int(self.max_points))
        merged: dict[tuple, tuple[Mapping[str, str], Points]] = {}
        for i in range(0, count, chunk):
            a = start + i * step
            b = start + (min(count, i + chunk) - 1) * step
            for s in self.range(sq.query, a, b, step):
                key = tuple(sorted(s.labels.items()))
                if key in merged:
                    merged[key][1].extend(s.points)
                else:
                    merged[key] = (s.labels, list(s.points))
        return [RangeSeries(labels, points) for labels, points in merged.values()]


def _add(a: Optional[Points], b: Points) -> Points:
    if a is None:
        return list(b)
    acc = {t: v for t, v in a}
    for t, v in b:
        acc[t] = acc.get(t, 0.0) + v
    return [[t, acc[t]] for t in sorted(acc)]


def _days(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:g}d"
    if seconds >= 3600:
        return f"{seconds / 3600:g}h"
    return f"{seconds:g}s"


def observe(source: MetricSource, sq: SourceQuery, mq: MetricQuery, end: float,
            members: Optional[Sequence[str]]) -> Optional[dict]:
    """The decision protocol's observation of ``mq`` read from ``source`` with
    windows ending at ``end`` (the sync time less the decision's metric delay), in
    the shapes the semantics reads (``mq.shapes``): ``members`` and
    ``member_series`` by ``member_label``; ``value`` (one series), ``values``
    (every series) and ``series`` (one series over the window at the query's
    grain) without it. None when there are no samples (a missing metric, never 0).
    A shape that needs a sample per member with no ``member_label`` is an
    ``invalid`` error saying to give one."""
    shapes = set(mq.shapes or ()) or {"value"}
    obs: dict[str, Any] = {}
    grain = float(mq.grain_seconds or 60.0)
    window = float(mq.window_seconds or grain)
    if sq.member_label:
        if "members" in shapes or not shapes & {"member_series", "series"}:
            got = source.read_members(sq, end, members)
            if got:
                obs.update(members=got, timestamp=end, window=window)
        if "member_series" in shapes or ("series" in shapes and "members" not in shapes):
            got_series = source.read_window(sq, end, window, grain, members, per_member=True)
            if got_series:
                if "member_series" in shapes:
                    obs["member_series"] = got_series
                else:   # the group series: the average across members per point, as CloudWatch's group average
                    acc: dict[float, list[float]] = {}
                    for pts in got_series.values():
                        for t, v in pts:
                            acc.setdefault(t, []).append(v)
                    obs["series"] = [[t, sum(vs) / len(vs)] for t, vs in sorted(acc.items())]
        return obs or None
    if "members" in shapes and not shapes & {"value", "values", "series"}:
        raise _invalid(sq, f"the {mq.type} metric {mq.name!r} is read as one sample per member here: give "
                           "member_label (the label whose value names a member, such as pod or instance)")
    if "series" in shapes or "member_series" in shapes:
        pts = source.read_window(sq, end, window, grain)
        if pts:
            obs["series"] = pts
    if "values" in shapes:
        vals = source.read_values(sq, end)
        if vals:
            obs.update(values=vals, timestamp=end, window=window)
    if "value" in shapes:
        v = source.read_value(sq, end)
        if v is not None:
            obs.update(value=v, timestamp=end, window=window)
    return obs or None
