"""Metric samples read as the HPA controller reads them
(pkg/controller/podautoscaler/metrics/client.go): metrics.k8s.io PodMetrics with
containers summed, custom.metrics.k8s.io pods and object metrics,
external.metrics.k8s.io with its selector. A metric that cannot be read is left
out — missing, never 0."""
from urllib.parse import unquote

import pytest

from scalebridge.protocol import MetricObservation
from scalebridge.providers import ErrorKind, MetricQuery, ProviderError

NOW = 1796150000.0


@pytest.fixture
def web(k8s, provider):
    k8s.clock = lambda: NOW
    k8s.add_deployment("shop", "web", replicas=2, containers=[{"name": "app", "requests": {"cpu": "500m"}},
                                                             {"name": "log", "requests": {"cpu": "100m"}}])
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    return t, t.observe(NOW), sorted(p["metadata"]["name"] for p in k8s.list("", "pods", "shop"))


def q(name, type_, source=None, **spec):
    return MetricQuery(name, type_, {"type": type_, "name": name, **spec}, 60.0, source=source)


def test_pod_metrics_sum_the_containers(k8s, web):
    t, obs, pods = web
    k8s.set_pod_metrics("shop", pods[0], {"app": {"cpu": "400m"}, "log": {"cpu": "25m"}}, timestamp=NOW - 15,
                        window=30)
    # a container without the resource: the pod has no sample (getPodMetrics' "missing")
    k8s.set_pod_metrics("shop", pods[1], {"app": {"cpu": "400m"}, "log": {"memory": "10Mi"}}, timestamp=NOW - 15)
    got = t.read_metrics(NOW, obs, [q("cpu", "resource")])
    assert got == {"cpu": MetricObservation(members={pods[0]: "425m"}, timestamp=NOW - 15, window=30.0)}


def test_no_pod_metrics_at_all_is_a_missing_metric(web):
    t, obs, _ = web
    assert t.read_metrics(NOW, obs, [q("cpu", "resource")]) == {}


def test_a_pods_metric_from_the_custom_metrics_api(k8s, web):
    t, obs, pods = web
    k8s.set_custom_pod_metric("shop", "http_requests", {pods[0]: "12", pods[1]: "500m"}, labels={"verb": "GET"})
    k8s.set_custom_pod_metric("shop", "http_requests", {"elsewhere": "99"})     # not a pod of the selector
    source = {"metric_name": "http_requests", "selector": {"matchLabels": {"verb": "GET"}}}
    got = t.read_metrics(NOW, obs, [q("rps", "pods", source, target={"type": "AverageValue", "average_value": 10})])
    assert got["rps"].members == {pods[0]: 12, pods[1]: "500m"}
    assert got["rps"].window == 60.0
    # the metric's own selector filters
    other = {"metric_name": "http_requests", "selector": "verb=POST"}
    assert t.read_metrics(NOW, obs, [q("rps", "pods", other)]) == {}
    req = [r for r in k8s.requests if r.group == "custom.metrics.k8s.io"][0]
    assert unquote(req.path) == "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests"


def test_an_object_metric_describes_one_object(k8s, web):
    t, obs, _ = web
    k8s.set_object_metric("shop", "ingresses.networking.k8s.io", "main", "requests_per_second", "2400")
    src = {"described_object": {"api_version": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
           "metric_name": "requests_per_second"}
    got = t.read_metrics(NOW, obs, [q("rps", "object", src, target={"type": "Value", "value": 1000})])
    assert got["rps"].value == 2400 and got["rps"].timestamp == NOW


def test_an_object_metric_without_its_object_names_the_key(web):
    t, obs, _ = web
    with pytest.raises(ProviderError) as e:
        t.read_metrics(NOW, obs, [q("rps", "object", {"metric_name": "x"})])
    assert e.value.kind is ErrorKind.INVALID and "metrics.rps.source.described_object" in str(e.value)


def test_an_external_metric_with_its_selector(k8s, web):
    t, obs, _ = web
    k8s.set_external_metric("shop", "queue_messages_ready", [({"queue": "orders"}, "30"), ({"queue": "orders"}, "70"),
                                                             ({"queue": "billing"}, "1000")])
    src = {"selector": {"matchExpressions": [{"key": "queue", "operator": "In", "values": ["orders"]}]}}
    got = t.read_metrics(NOW, obs, [q("queue_messages_ready", "external", src)])
    assert got["queue_messages_ready"].values == [30, 70]
    assert t.read_metrics(NOW, obs, [q("absent", "external")]) == {}


def test_a_failing_metrics_api_leaves_the_metric_out_but_keeps_the_others(k8s, web):
    t, obs, pods = web
    for p in pods:
        k8s.set_pod_metrics("shop", p, {"app": {"cpu": "100m"}, "log": {"cpu": "1m"}})
    k8s.set_external_metric("shop", "queue", [({}, "5")])
    k8s.inject(503, path_contains="/apis/metrics.k8s.io/")
    got = t.read_metrics(NOW, obs, [q("cpu", "resource"), q("queue", "external")])
    assert got == {"queue": MetricObservation(values=[5], timestamp=NOW)}


def test_a_throttled_metrics_api_is_reported(k8s, web):
    t, obs, _ = web
    k8s.inject(429, path_contains="/apis/external.metrics.k8s.io/", retry_after=3)
    with pytest.raises(ProviderError) as e:
        t.read_metrics(NOW, obs, [q("queue", "external")])
    assert e.value.kind is ErrorKind.THROTTLED and e.value.retry_after == 3.0


def test_rule_series_are_not_served_by_the_metrics_apis(web):
    t, obs, _ = web
    rule = MetricQuery("cpu_avg", "rule", {"metric": "cpu_avg"}, 300.0, shapes=frozenset({"series"}))
    assert t.read_metrics(NOW, obs, [rule]) == {}
