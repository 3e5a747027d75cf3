"""CloudWatch reads: GetMetricData batched per target, per member or per group,
datapoints stamped at their period's end, missing datapoints missing.

GetMetricData: "You can ... retrieve up to 500 different metrics in a single
request" and a Timestamp is the start of its period
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html);
the protocol stamps a period's point at its end (docs/protocol.md)."""
from __future__ import annotations

import time

import pytest

from scalebridge.providers import ErrorKind, MetricQuery, ProviderError
from scalebridge_aws.metrics import DEFAULT_CPU, parse_source

SERIES = frozenset({"series", "member_series"})


def cpu_query(window=900.0, shapes=SERIES, source=None):
    return MetricQuery("cpu", "resource", {"type": "resource", "name": "cpu"}, window, 60.0, shapes, source)


def test_cpu_per_instance_by_default(world, provider, proxy):
    ids = world.group("web", desired=2)
    now = time.time()
    world.put_cpu(ids[0], [40, 50, 60], now)
    world.put_cpu(ids[1], [70, 80, 90], now)
    t = provider().target({"auto_scaling_group": "web"})
    obs = t.observe(now)
    m = t.read_metrics(now, obs, [cpu_query()])
    ms = m["cpu"].member_series
    assert [v for _, v in ms[ids[0]]] == [40, 50, 60] and [v for _, v in ms[ids[1]]] == [70, 80, 90]
    end = (now - 60) // 60 * 60
    assert [t for t, _ in ms[ids[0]]] == [end - 120, end - 60, end]     # each period's end
    assert proxy.count("GetMetricData") == 1
    call = next(c for c in proxy.calls if c.action == "GetMetricData")
    stats = [q["MetricStat"] for q in call.params["MetricDataQueries"]]
    assert {s["Metric"]["Namespace"] for s in stats} == {"AWS/EC2"}
    assert {s["Metric"]["MetricName"] for s in stats} == {"CPUUtilization"}
    assert {s["Stat"] for s in stats} == {"Average"} and {s["Period"] for s in stats} == {60}
    assert sorted(s["Metric"]["Dimensions"][0]["Value"] for s in stats) == sorted(ids)


def test_missing_datapoints_are_missing_never_zero(world, provider):
    ids = world.group("web", desired=3)
    now = time.time()
    world.put_cpu(ids[0], [55], now)
    t = provider().target({"auto_scaling_group": "web"})
    m = t.read_metrics(now, t.observe(now), [cpu_query()])
    assert set(m["cpu"].member_series) == {ids[0]}
    assert t.read_metrics(now, t.observe(now), [MetricQuery(
        "queue", "external", {}, 300.0, 60.0, frozenset({"values"}),
        {"namespace": "AWS/SQS", "metric_name": "ApproximateNumberOfMessagesVisible",
         "dimensions": {"QueueName": "jobs"}})]) == {}


def test_a_group_metric_with_dimensions_and_a_statistic(world, provider, proxy):
    world.group("web", desired=2)
    now = time.time()
    end = (now - 60) // 60 * 60
    world.put("AWS/SQS", "ApproximateNumberOfMessagesVisible", [(end - 90, 100), (end - 30, 300), (end - 20, 200)],
              {"QueueName": "jobs"})
    t = provider().target({"auto_scaling_group": "web"})
    q = MetricQuery("queue_depth", "external", {}, 300.0, 60.0, frozenset({"values", "series"}),
                    {"namespace": "AWS/SQS", "metric_name": "ApproximateNumberOfMessagesVisible",
                     "dimensions": {"QueueName": "jobs"}, "statistic": "Maximum"})
    m = t.read_metrics(now, t.observe(now), [q])["queue_depth"]
    assert m.series == [[end - 60, 100], [end, 300]]
    assert m.values == [300] and m.timestamp == end


def test_the_group_token_in_dimensions(world, provider, proxy):
    world.group("web", desired=2)
    now = time.time()
    end = (now - 60) // 60 * 60
    world.put("Shop", "Backlog", [(end - 30, 7)], {"AutoScalingGroupName": "web"})
    t = provider().target({"auto_scaling_group": "web"})
    q = MetricQuery("backlog", "external", {}, 120.0, 60.0, frozenset({"series"}),
                    {"namespace": "Shop", "metric_name": "Backlog",
                     "dimensions": {"AutoScalingGroupName": "{auto_scaling_group}"}, "statistic": "Sum"})
    assert t.read_metrics(now, t.observe(now), [q])["backlog"].series == [[end, 7]]


def test_many_members_and_metrics_in_as_few_calls_as_the_limit_allows(world, provider, proxy):
    from scalebridge.protocol import Member
    from scalebridge.providers import Observation
    t = provider().target({"auto_scaling_group": "web"})
    members = [Member(name=f"i-{k:017x}", phase="Running", ready=True) for k in range(450)]
    obs = Observation(current_replicas=450, members=members)
    now = time.time()
    queries = [cpu_query(), MetricQuery("net", "rule", {}, 300.0, 60.0, SERIES,
                                        {"namespace": "AWS/EC2", "metric_name": "NetworkIn", "per_member": True,
                                         "statistic": "Sum"}),
               MetricQuery("queue", "external", {}, 300.0, 60.0, frozenset({"values"}),
                           {"namespace": "AWS/SQS", "metric_name": "Depth"})]
    assert t.read_metrics(now, obs, queries) == {}
    calls = [c for c in proxy.calls if c.action == "GetMetricData"]
    assert [len(c.params["MetricDataQueries"]) for c in calls] == [500, 401]     # 901 series


@pytest.mark.parametrize("source, key", [
    (None, "metrics.queue.source"),
    ({"metric_name": "X"}, "metrics.queue.source.namespace"),
    ({"namespace": "N"}, "metrics.queue.source.metric_name"),
    ({"namespace": "N", "metric_name": "X", "dimension": {}}, "metrics.queue.source.dimension"),
    ({"namespace": "N", "metric_name": "X", "dimensions": [["a", "b"]]}, "metrics.queue.source.dimensions"),
    ({"namespace": "N", "metric_name": "X", "statistic": "Mean"}, "metrics.queue.source.statistic"),
    ({"namespace": "N", "metric_name": "X", "extended_statistic": "avg"}, "metrics.queue.source.extended_statistic"),
    ({"namespace": "N", "metric_name": "X", "period_seconds": 45}, "metrics.queue.source.period_seconds"),
    ({"namespace": "N", "metric_name": "X", "per_member": "yes"}, "metrics.queue.source.per_member"),
])
def test_a_bad_source_names_its_key(source, key):
    with pytest.raises(ProviderError) as e:
        parse_source("queue", source)
    assert e.value.kind is ErrorKind.INVALID and str(e.value).startswith(f"invalid: {key}:")


def test_sources_cpu_default_and_extended_statistics():
    assert parse_source("cpu", None) == DEFAULT_CPU
    assert parse_source("lat", {"namespace": "N", "metric_name": "L", "statistic": "p99"}).stat == "p99"
    assert parse_source("lat", {"namespace": "N", "metric_name": "L", "extended_statistic": "tm90"}).stat == "tm90"
    assert parse_source("lat", {"namespace": "N", "metric_name": "L", "period_seconds": 300}).period == 300


def test_a_long_forecast_history_does_not_stretch_the_short_windows(world, provider, proxy):
    """A predictive metric's two days of hourly datapoints and target tracking's
    15 minutes of one-minute ones: two StartTimes, so the per-instance series
    stay 15 minutes long (GetMetricData's 100,800 datapoints a call)."""
    world.group("web", desired=2)
    now = time.time()
    t = provider().target({"auto_scaling_group": "web"})
    forecast = MetricQuery("load", "forecast", {}, 2 * 86400.0, 3600.0, frozenset({"series"}),
                           {"namespace": "Shop", "metric_name": "Requests", "statistic": "Sum"})
    t.read_metrics(now, t.observe(now), [cpu_query(), forecast])
    calls = [c for c in proxy.calls if c.action == "GetMetricData"]
    spans = sorted(c.params["EndTime"] - c.params["StartTime"] for c in calls)
    assert len(calls) == 2 and spans[0] <= 1200 and spans[1] >= 2 * 86400


def test_a_source_can_be_checked_before_the_first_sync():
    from scalebridge.providers import RefError
    from scalebridge_aws.provider import AwsProvider
    p = AwsProvider(region="us-east-1")
    p.check_metric_source("cpu", None)
    with pytest.raises(RefError) as e:
        p.check_metric_source("queue", {"namespace": "AWS/SQS", "metric_name": "X", "statistc": "Sum"})
    assert e.value.key == "metrics.queue.source.statistc" and "unknown key" in e.value.message
