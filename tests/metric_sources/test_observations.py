"""The metric-source contract's reads in the decision protocol's shapes
(:func:`scalebridge.metric_sources.observe`), on an in-memory source: one value,
every value, a sample per member by ``member_label`` (``host:port`` matched to a
member), a window at the query's grain, and the errors that name what is wrong."""
from __future__ import annotations

import pytest

from scalebridge.metric_sources import (MetricSource, RangeSeries, Sample, SourceQuery, observe,
                                        parse_prometheus_duration, parse_source_query)
from scalebridge.providers import ErrorKind, MetricQuery, ProviderError, RefError


class Memory(MetricSource):
    """Series given as {labels tuple: {t: v}}; an instant read is the newest sample at or before t."""
    type = "memory"

    def __init__(self, series):
        self.series = series
        self.calls = []

    def _at(self, pts, t):
        older = [x for x in pts if x <= t]
        return pts[max(older)] if older else None

    def instant(self, query, at):
        self.calls.append(("instant", query, at))
        return [Sample(dict(k), v) for k, pts in self.series.items() if (v := self._at(pts, at)) is not None]

    def range(self, query, start, end, step):
        self.calls.append(("range", query, start, end, step))
        out = []
        for k, pts in self.series.items():
            n = int(round((end - start) / step)) + 1
            vals = [[start + i * step, v] for i in range(n) if (v := self._at(pts, start + i * step)) is not None]
            if vals:
                out.append(RangeSeries(dict(k), vals))
        return out


def mq(name="m", type_="pods", shapes=("members",), window=60.0, grain=60.0):
    return MetricQuery(name, type_, {}, window, grain, frozenset(shapes))


PODS = {(("pod", "web-0"),): {100: 1.0, 160: 2.0}, (("pod", "web-1"),): {100: 3.0, 160: 4.0},
        (("pod", "gone-7"),): {100: 9.0}}


def test_members_by_member_label_leave_out_a_series_naming_a_member_gone():
    sq = SourceQuery("m", "mem", "q", "pod")
    got = observe(Memory(PODS), sq, mq(), 170, ["web-0", "web-1"])
    assert got == {"members": {"web-0": 2.0, "web-1": 4.0}, "timestamp": 170, "window": 60.0}


def test_an_instance_label_with_a_port_names_its_member():
    src = Memory({(("instance", "i-0abc:9100"),): {0: 50.0}})
    got = observe(src, SourceQuery("cpu", "mem", "q", "instance"), mq("cpu", "resource"), 10, ["i-0abc"])
    assert got["members"] == {"i-0abc": 50.0}


def test_a_series_without_the_member_label_is_an_error_naming_it():
    src = Memory({(("__name__", "conns"), ("instance", "a:1")): {0: 1.0}})
    with pytest.raises(ProviderError) as e:
        observe(src, SourceQuery("conns", "mem", "conns", "pod"), mq(), 10, ["web-0"])
    assert e.value.kind is ErrorKind.INVALID
    assert "has no label 'pod' to name its member: conns{instance=\"a:1\"}" in e.value.message


def test_no_series_naming_any_member_is_an_error_naming_both_sides():
    with pytest.raises(ProviderError, match=r"no series of 'q' names a member of the target by its label 'pod' "
                                            r"\(pod is gone-7, web-0, web-1; the members are x-1\)"):
        observe(Memory(PODS), SourceQuery("m", "mem", "q", "pod"), mq(), 170, ["x-1"])


def test_a_value_needs_one_series_and_values_take_them_all():
    two = Memory({(("queue", "a"),): {0: 3.0}, (("queue", "b"),): {0: 4.0}})
    assert observe(two, SourceQuery("q", "mem", "q"), mq("q", "external", ("values",)), 5, None)["values"] == [3.0, 4.0]
    with pytest.raises(ProviderError, match="returns 2 series where one value is needed"):
        observe(two, SourceQuery("q", "mem", "q"), mq("q", "object", ("value",)), 5, None)


def test_a_per_member_shape_without_member_label_says_to_give_one():
    with pytest.raises(ProviderError, match="give member_label"):
        observe(Memory(PODS), SourceQuery("m", "mem", "q"), mq(), 170, ["web-0"])


def test_a_window_is_a_range_query_at_the_grain_ending_at_the_sync_less_the_delay():
    src = Memory({(): {t: float(t) for t in range(0, 1000, 60)}})
    got = observe(src, SourceQuery("r", "mem", "q"), mq("r", "rule", ("series",), window=300, grain=60), 650, None)
    assert src.calls == [("range", "q", 300.0, 600.0, 60.0)]
    assert got == {"series": [[300.0, 300.0], [360.0, 360.0], [420.0, 420.0], [480.0, 480.0], [540.0, 540.0],
                              [600.0, 600.0]]}


def test_no_sample_is_a_missing_metric_never_zero():
    assert observe(Memory({}), SourceQuery("m", "mem", "q"), mq("m", "external", ("values",)), 5, None) is None


def test_history_past_the_retention_names_both():
    class Short(Memory):
        def retention_seconds(self):
            return 86400.0
    with pytest.raises(ProviderError, match="the period is 2d, longer than the source's retention of 1d"):
        Short({}).read_history(SourceQuery("m", "mem", "q"), 0, 2 * 86400, 60)


@pytest.mark.parametrize("text, seconds", [("15d", 15 * 86400), ("1h30m", 5400), ("500ms", 0.5), ("1y", 365 * 86400),
                                           ("2w", 14 * 86400)])
def test_prometheus_durations(text, seconds):
    assert parse_prometheus_duration(text) == seconds


@pytest.mark.parametrize("source, key", [({"metric_source": "p", "query": "q", "member_lable": "pod"},
                                          "metrics.m.source.member_lable"),
                                         ({"metric_source": "p"}, "metrics.m.source.query"),
                                         ({"metric_source": "p", "query": "q", "member_label": "a-b"},
                                          "metrics.m.source.member_label")])
def test_a_bad_source_query_names_its_key(source, key):
    with pytest.raises(RefError) as e:
        parse_source_query("m", source)
    assert e.value.key == key
