"""The controller's check of metric sample times, in front of every semantics
(``controller.sources.sample_times_problem``): which times of an observation it
reads, and the bounds a provider instance or a metric source is given."""
from __future__ import annotations

import pytest

from scalebridge.controller.runtime import Limits
from scalebridge.controller.sources import sample_times_problem
from scalebridge.protocol import MetricObservation

NOW = 1_800_000_000.0
L = Limits()   # 600 s old at most, 60 s ahead at most


@pytest.mark.parametrize("obs,bad", [
    ({"members": {"a": 0.5}, "timestamp": NOW - 30}, None),
    ({"members": {"a": 0.5}, "timestamp": NOW - 601}, "stale"),
    ({"members": {"a": 0.5}, "timestamp": NOW + 59}, None),
    ({"members": {"a": 0.5}, "timestamp": NOW + 61}, "ahead"),
    ({"value": 3.0}, None),                                           # no time given: not second-guessed
    ({"error": "unreadable", "timestamp": NOW - 10 ** 6}, None),      # already a failed read
    # the newest of the members' own times counts; any one ahead fails
    ({"members": {"a": 1, "b": 1}, "member_timestamps": {"a": NOW - 10 ** 6, "b": NOW - 5}}, None),
    ({"members": {"a": 1, "b": 1}, "member_timestamps": {"a": NOW - 5, "b": NOW + 3600}}, "ahead"),
    # a series point is stamped at its period's start: one grain (60 s here) older is still fresh
    ({"series": [[NOW - 3600, 1.0], [NOW - 650, 1.0]]}, None),
    ({"series": [[NOW - 3600, 1.0], [NOW - 700, 1.0]]}, "stale"),
    ({"member_series": {"a": [[NOW - 30 * 86400, 1.0]], "b": [[NOW - 120, 1.0]]}}, None),
    ({"series": [[NOW - 60, 1.0], [NOW + 365 * 86400, 1.0]]}, "ahead"),
], ids=lambda v: str(v) if isinstance(v, (str, type(None))) else "")
def test_which_times_are_read(obs, bad):
    for shape in (obs, MetricObservation(**obs)):   # a provider's dict, or the core's type
        why = sample_times_problem(shape, NOW, NOW, 60.0, L)
        if bad is None:
            assert why is None, why
        else:
            assert why is not None and bad in why


def test_the_age_counts_from_the_windows_end():
    # CloudWatch publishes late: the window ends at now - metric_delay, and a sample's age counts from there
    assert sample_times_problem({"timestamp": NOW - 900}, NOW, NOW - 600, 60.0, L) is None
    assert "stale" in sample_times_problem({"timestamp": NOW - 1300}, NOW, NOW - 600, 60.0, L)


def test_a_metric_source_takes_the_sample_bounds(write_config, tmp_path, scalebridge):
    text = """
metric_sources:
  prom: {type: prometheus, url: "http://127.0.0.1:9", max_sample_age_seconds: 2m, max_sample_skew_seconds: 5}
providers: {fake: {type: scalebridge.testing.fake:FakeProvider, max_sample_age_seconds: 1h}}
policies: {web: {min_replicas: 1, max_replicas: 5, metrics: [{type: external, name: q, target: {type: Value, value: 1}}]}}
targets:
- {name: web, provider: fake, policy: web, ref: {name: web}, metrics: {q: {source: {metric_source: prom, query: up}}}}
"""
    from scalebridge.controller.build import build
    from scalebridge.controller.configfile import load_config
    path = write_config(text)
    runtime = build(load_config(path))
    try:
        assert runtime.metric_sources["prom"].limits == Limits(max_sample_age_seconds=120.0,
                                                               max_sample_skew_seconds=5.0)
        assert runtime.targets[0].limits == Limits(max_sample_age_seconds=3600.0)
    finally:
        runtime.close()
    bad = write_config(text.replace("max_sample_skew_seconds: 5", "max_sample_skew_seconds: soon"))
    code, _, err = scalebridge("validate", bad)
    assert code == 2 and "metric_sources.prom.max_sample_skew_seconds: expected a duration" in err
