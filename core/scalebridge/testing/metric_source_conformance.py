"""The metric-source conformance checks: what a plugin author runs against their
own metric source to show it keeps the :mod:`scalebridge.metric_sources` contract::

    from scalebridge.testing import check_metric_source

    def test_my_source_keeps_the_contract(my_server):
        my_server.load(...)                 # the series of `series` below
        check_metric_source(MySource(url=my_server.url), series, provoke=my_server.fail_next)

``series`` is what the source holds (at multiples of ``step``): ``{(query, member_label or None): {member or
None: [(t, v), ...]}}`` for a few queries, with a sample every ``step`` seconds.
The checks, raising one ``AssertionError`` listing every broken promise:

- it declares itself: ``type`` a non-empty string, ``max_points`` None or positive,
  ``retention_seconds()`` None or positive;
- ``instant`` at a sample's time answers that sample (a vector of ``Sample``), and
  ``read_value`` / ``read_members`` / ``read_window`` / :func:`observe` give the
  protocol's shapes of it, member names as ``member_label`` gives them;
- ``range`` answers one point per step in ``[start, end]``, ordered by time, and
  ``read_history`` over more than ``max_points`` steps answers every step (in as
  many requests as the limit needs);
- a time with no sample in the lookback answers nothing (missing, never 0);
- every failure ``provoke(kind)`` arranges (the next request to fail as the
  monitoring system fails for ``kind``; False for a kind it cannot provoke) comes
  out as a :class:`~scalebridge.providers.ProviderError` of that kind, never an
  HTTP library's exception, with ``retry_after`` None or a non-negative number.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from ..metric_sources import MetricSource, SourceQuery, observe
from ..providers import ErrorKind, MetricQuery, ProviderError

__all__ = ["check_metric_source", "MetricSourceReport"]

FAULT_KINDS = (ErrorKind.THROTTLED, ErrorKind.TRANSIENT, ErrorKind.FORBIDDEN, ErrorKind.NOT_FOUND,
               ErrorKind.INVALID)
Series = Mapping[tuple, Mapping[Optional[str], list]]


@dataclass
class MetricSourceReport:
    passed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def check_metric_source(source: MetricSource, series: Series, *, step: float = 60.0,
                        provoke: Optional[Callable[[ErrorKind], Optional[bool]]] = None) -> MetricSourceReport:
    """Run the checks of the module docstring against ``source``."""
    failures: list[str] = []
    report = MetricSourceReport()

    def check(what: str, ok: bool, detail: str = "") -> bool:
        (report.passed.append(what) if ok else failures.append(f"{what}: {detail}" if detail else what))
        return ok

    check("type is a name", isinstance(getattr(source, "type", None), str) and bool(source.type))
    mp = source.max_points
    check("max_points is None or positive", mp is None or (isinstance(mp, int) and mp > 0), repr(mp))
    try:
        keep = source.retention_seconds()
        check("retention_seconds() is None or positive", keep is None or keep > 0, repr(keep))
    except ProviderError as e:
        failures.append(f"retention_seconds() raised {e}")
    for (query, label), by_member in series.items():
        sq = SourceQuery("m", getattr(source, "name", "source"), query, label)
        pts = {m: sorted(p) for m, p in by_member.items()}
        t_mid = pts[next(iter(pts))][len(pts[next(iter(pts))]) // 2][0]
        want = {m: dict(p)[t_mid] for m, p in pts.items() if t_mid in dict(p)}
        try:
            if label:
                got = source.read_members(sq, t_mid, list(want))
                check(f"read_members({query!r}) at a sample's time is that sample per member",
                      {m: float(v) for m, v in got.items()} == {m: float(v) for m, v in want.items()},
                      f"got {got}, want {want}")
                obs = observe(source, sq, MetricQuery("m", "pods", {}, 300.0, step, frozenset({"members"})),
                              t_mid, list(want))
                check(f"observe({query!r}) gives protocol members", obs is not None and set(obs["members"]) ==
                      set(want), repr(obs))
            else:
                v = source.read_value(sq, t_mid)
                check(f"read_value({query!r}) at a sample's time is that sample", v is not None and
                      float(v) == float(want[None]), f"got {v}, want {want.get(None)}")
                first, last = pts[None][0][0], pts[None][-1][0]
                window = source.read_window(sq, last, last - first, step)
                check(f"read_window({query!r}) has a point per step, in time order",
                      [float(t) for t, _ in window] == [float(t) for t, _ in pts[None]], repr(window[:3]))
                n = len(pts[None])
                if mp is not None and n > 2:
                    source.max_points = max(1, n // 3)   # this instance only: history in several requests
                    try:
                        hist = source.read_history(sq, first, last + step, step)
                    finally:
                        del source.max_points
                    got_pts = hist[0].points if hist else []
                    check("read_history over more than max_points steps answers every step",
                          [float(t) for t, _ in got_pts] == [float(t) for t, _ in pts[None]], f"{len(got_pts)} of {n}")
                gone = source.instant(query, first - 3600 * 24 * 365)
                check(f"{query!r} a year before its first sample is missing, never 0", gone == [], repr(gone))
        except ProviderError as e:
            failures.append(f"{query!r}: raised {e}")
    if provoke is None:
        report.skipped.append("faults: no provoke hook given")
    else:
        (query, label), _ = next(iter(series.items()))
        for kind in FAULT_KINDS:
            if provoke(kind) is False:
                report.skipped.append(f"fault {kind.value}: cannot be provoked")
                continue
            try:
                source.instant(query, 0.0)
            except ProviderError as e:
                check(f"fault {kind.value} is a ProviderError of that kind", e.kind is kind, f"got {e.kind.value}")
                ra = e.retry_after
                check(f"fault {kind.value}: retry_after is None or >= 0",
                      ra is None or (isinstance(ra, (int, float)) and math.isfinite(ra) and ra >= 0), repr(ra))
            except Exception as e:  # noqa: BLE001 — the point: nothing else may cross the contract
                failures.append(f"fault {kind.value}: raised {type(e).__name__}: {e}, not a ProviderError")
            else:
                failures.append(f"fault {kind.value}: the call succeeded")
    if failures:
        raise AssertionError("the metric source breaks its contract:\n  " + "\n  ".join(failures))
    return report
