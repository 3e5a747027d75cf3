"""Azure Monitor metrics through azure-mgmt-monitor's ``metrics.list``, in the decision
protocol's shapes (https://learn.microsoft.com/rest/api/monitor/metrics/list).

A rule reads the scale set's series at its time grain, aggregated across instances by
its statistic (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings:
"The ARM statistic property combines metric values from multiple resource instances
into each sample"); Azure Monitor stamps a point at its grain's start, the protocol at
its end.
"""
from __future__ import annotations

import math

import pytest

from scalebridge.providers import ErrorKind, MetricQuery, Observation, ProviderError

from .conftest import SUB

NOW = math.floor(1767225600.0 / 60) * 60 + 30.0   # half a minute into a grain


def _setup(arm, provider, per_vm):
    arm.clock = lambda: NOW
    arm.add_scale_set(SUB, "shop", "web", capacity=len(per_vm))
    rid = arm.scale_set_id(SUB, "shop", "web")
    for vm, value in per_vm.items():
        if value is not None:
            arm.put_metric(rid, "Percentage CPU", [(NOW - 60 * k, value) for k in range(1, 12)], vm=vm)
    return provider.target({"resource_group": "shop", "scale_set": "web"}), rid


def _rule_query(statistic="Average", window=300, grain=60):
    spec = {"metric": "Percentage CPU", "statistic": statistic, "time_grain_seconds": grain,
            "time_window_seconds": window, "time_aggregation": "Average", "operator": "GreaterThan",
            "threshold": 70}
    return MetricQuery(name="Percentage CPU", type="rule", spec=spec, window_seconds=window, grain_seconds=grain,
                       shapes=frozenset({"series", "member_series"}))


def _cpu_query():
    spec = {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}
    return MetricQuery(name="cpu", type="resource", spec=spec, window_seconds=60, shapes=frozenset({"members"}))


def test_a_rule_reads_the_scale_sets_series_at_its_grain(arm, provider):
    t, rid = _setup(arm, provider, {"web_0": 80.0, "web_1": 100.0})
    obs = t.read_metrics(NOW, Observation(current_replicas=2), [_rule_query()])["Percentage CPU"]
    # one point per complete minute, stamped at the minute's end; the open minute is left out
    times = [p[0] for p in obs.series]
    assert all(t_ % 60 == 0 and t_ <= NOW for t_ in times)
    inside = [v for t_, v in obs.series if NOW - 300 < t_ <= NOW]
    assert inside == [90.0] * 5          # the scale set's Average across both instances
    (call,) = [c for c in arm.calls if c[1].endswith("/providers/Microsoft.Insights/metrics")]
    q = call[2]
    assert q["interval"] == "PT1M" and q["aggregation"] == "Average" and q["metricnames"] == "Percentage CPU"
    assert "$filter" not in q           # a group series: no split by instance


@pytest.mark.parametrize("statistic, aggregation, expected", [
    ("Max", "Maximum", 100.0), ("Min", "Minimum", 80.0), ("Sum", "Total", 180.0)])
def test_the_rule_statistic_is_azure_monitors_aggregation(arm, provider, statistic, aggregation, expected):
    t, _ = _setup(arm, provider, {"web_0": 80.0, "web_1": 100.0})
    obs = t.read_metrics(NOW, Observation(current_replicas=2), [_rule_query(statistic)])["Percentage CPU"]
    assert obs.series[-1][1] == expected
    assert [c for c in arm.calls if "metrics" in c[1]][-1][2]["aggregation"] == aggregation


def test_a_percentile_statistic_reads_each_instance(arm, provider):
    t, _ = _setup(arm, provider, {"web_0": 80.0, "web_1": 100.0})
    obs = t.read_metrics(NOW, Observation(current_replicas=2), [_rule_query("Percentile95")])["Percentage CPU"]
    assert set(obs.member_series) == {"web_0", "web_1"}
    assert [c for c in arm.calls if "metrics" in c[1]][-1][2]["$filter"] == "VMName eq '*'"


def test_cpu_members_are_each_instances_percent(arm, provider):
    t, _ = _setup(arm, provider, {"web_0": 45.0, "web_1": 75.0})
    obs = t.read_metrics(NOW, Observation(current_replicas=2), [_cpu_query()])["cpu"]
    assert obs.members == {"web_0": 45.0, "web_1": 75.0}
    assert obs.window == 60 and obs.timestamp == NOW


def test_an_instance_without_datapoints_is_missing_not_zero(arm, provider):
    t, _ = _setup(arm, provider, {"web_0": 45.0, "web_1": None})
    obs = t.read_metrics(NOW, Observation(current_replicas=2), [_cpu_query()])["cpu"]
    assert obs.members == {"web_0": 45.0}


def test_a_metric_of_another_resource_comes_from_its_source(arm, provider):
    # e.g. a storage queue's message count (run-config: metrics.<name>.source)
    t, _ = _setup(arm, provider, {"web_0": 45.0})
    queue = ("/subscriptions/%s/resourceGroups/shop/providers/Microsoft.Storage/storageAccounts/jobs/"
             "queueServices/default" % SUB)
    arm.put_metric(queue, "QueueMessageCount", [(NOW - 60 * k, 300.0) for k in range(1, 6)])
    q = MetricQuery(name="queue_depth", type="external",
                    spec={"type": "external", "name": "queue_depth",
                          "target": {"type": "AverageValue", "average_value": 50}},
                    window_seconds=60, shapes=frozenset({"values", "value"}),
                    source={"resource_uri": queue, "metric_name": "QueueMessageCount", "aggregation": "Average"})
    obs = t.read_metrics(NOW, Observation(current_replicas=1), [q])["queue_depth"]
    assert obs.value == 300.0 and obs.values == [300.0]


def test_an_unknown_metric_is_an_invalid_request(arm, provider):
    t, _ = _setup(arm, provider, {"web_0": 45.0})
    q = MetricQuery(name="nosuch", type="pods", spec={}, window_seconds=60, shapes=frozenset({"members"}))
    with pytest.raises(ProviderError) as e:
        t.read_metrics(NOW, Observation(current_replicas=1), [q])
    assert e.value.kind is ErrorKind.INVALID and "nosuch" in e.value.message


@pytest.mark.parametrize("source, key", [
    ({"metric_nmae": "x"}, "metrics.q.source.metric_nmae"),
    ({"aggregation": "Mean"}, "metrics.q.source.aggregation"),
])
def test_a_bad_source_names_its_key_without_calling_azure(arm, provider, source, key):
    from scalebridge.providers import RefError
    with pytest.raises(RefError) as e:
        provider.check_metric_source("q", source)
    assert e.value.key == key and not arm.calls


def test_every_instance_of_a_scale_set_past_10_has_its_sample(arm, provider):
    """Split by ``VMName``, Azure Monitor returns ``top`` series, 10 unless asked
    (https://learn.microsoft.com/rest/api/monitor/metrics/list: "Valid only if filter is
    specified. Defaults to 10."): a scale set of 12 needs every instance's."""
    per_vm = {f"web_{i}": 40.0 + i for i in range(12)}
    t, _ = _setup(arm, provider, per_vm)
    obs = t.read_metrics(NOW, Observation(current_replicas=12), [_cpu_query()])["cpu"]
    assert obs.members == per_vm
    query = [c for c in arm.calls if "metrics" in c[1]][-1][2]
    assert int(query["top"]) >= 12
