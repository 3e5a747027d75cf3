"""Metric samples from Cloud Monitoring ListTimeSeries in the protocol's shapes.
CPU utilization is a fraction of the instance's allocated vCPUs
(https://cloud.google.com/monitoring/api/metrics_gcp_c#gcp-compute), and GCE
scales on the utilization of the group's total vCPUs
(https://cloud.google.com/compute/docs/autoscaler/scaling-cpu)."""
from __future__ import annotations

import pytest

from scalebridge.engine import decide
from scalebridge.providers import ErrorKind, MetricQuery, ProviderError
from tests.plugins.gce.conftest import CPU, QUEUE, ZONE, cpu_series

CPU_Q = MetricQuery("cpu", "resource", {"type": "resource", "name": "cpu",
                                        "target": {"type": "Utilization", "average_utilization": 60}}, 60.0)


def _observe(provider, name="web"):
    return provider.target({"zone": ZONE, "instance_group_manager": name})


def test_cpu_per_instance_is_vcpus_in_use_against_the_instances_vcpus(compute, monitoring, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=2, machine_type="n1-standard-4")
    cpu_series(monitoring, mig, [0.9, 0.5], now)
    target = _observe(provider)
    obs = target.observe(now)
    got = target.read_metrics(now, obs, [CPU_Q])["cpu"]
    assert got.members == {mig.vms[0].name: pytest.approx(3.6), mig.vms[1].name: pytest.approx(2.0)}
    # the gce semantics then reads 70% of the group's vCPUs: ceil(2 × 70 / 60) = 3
    r = decide({"semantics": "gce", "now": now, "current_replicas": 2,
                "policy": {"min_replicas": 1, "max_replicas": 10, "metrics": [dict(CPU_Q.spec)]},
                "observations": {"members": obs.members, "metrics": {"cpu": got}}})
    assert r["metrics"][0]["utilization"] == 70 and r["desired_replicas"] == 3


def test_mixed_machine_types_weigh_by_vcpus(compute, monitoring, provider, now):
    """Σ usage / Σ vCPUs: a 2-vCPU VM at 100% and an 8-vCPU VM at 25% is 40%, not 62.5%."""
    mig = compute.add_mig("web", zone=ZONE, size=2)
    mig.vms[0].machine_type, mig.vms[1].machine_type = "n1-standard-2", "n1-standard-8"
    cpu_series(monitoring, mig, [1.0, 0.25], now)
    target = _observe(provider)
    obs = target.observe(now)
    got = target.read_metrics(now, obs, [CPU_Q])
    r = decide({"semantics": "gce", "now": now, "current_replicas": 2,
                "policy": {"min_replicas": 1, "max_replicas": 10, "metrics": [dict(CPU_Q.spec)]},
                "observations": {"members": obs.members, "metrics": got}})
    assert r["metrics"][0]["utilization"] == 40


def test_an_instance_without_datapoints_is_missing_not_zero(compute, monitoring, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=3)
    cpu_series(monitoring, mig, [0.8, None, 0.6], now)
    target = _observe(provider)
    got = target.read_metrics(now, target.observe(now), [CPU_Q])["cpu"].members
    assert set(got) == {mig.vms[0].name, mig.vms[2].name}


def test_no_series_at_all_leaves_the_metric_out(compute, monitoring, provider, now):
    compute.add_mig("web", zone=ZONE, size=2)
    target = _observe(provider)
    assert target.read_metrics(now, target.observe(now), [CPU_Q]) == {}


def test_series_of_other_instances_are_ignored(compute, monitoring, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=1)
    other = compute.add_mig("other", zone=ZONE, size=1)
    cpu_series(monitoring, mig, [0.5], now)
    cpu_series(monitoring, other, [0.99], now)
    target = _observe(provider)
    got = target.read_metrics(now, target.observe(now), [CPU_Q])["cpu"].members
    assert list(got) == [mig.vms[0].name]
    flt = monitoring.requests[-1].filter
    assert f'resource.labels.instance_id = one_of("{mig.vms[0].id}")' in flt and f'metric.type = "{CPU}"' in flt


def test_cpu_series_for_rules_are_percent(compute, monitoring, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    cpu_series(monitoring, mig, [0.9, 0.5], now)
    target = _observe(provider)
    q = MetricQuery("cpu", "rule", {"metric": "cpu"}, 300.0, 60.0, frozenset({"series", "member_series"}))
    got = target.read_metrics(now, target.observe(now), [q])["cpu"]
    assert got.series[-1][1] == pytest.approx(70.0)
    assert got.member_series[mig.vms[0].name][-1][1] == pytest.approx(90.0)


def test_a_queue_depth_source_gives_its_values(compute, monitoring, provider, now):
    compute.add_mig("web", zone=ZONE, size=2)
    monitoring.add_series(QUEUE, resource_type="pubsub_subscription", resource_labels={"subscription_id": "jobs"},
                          points=[(now - 120, 280.0), (now - 60, 300.0)])
    monitoring.add_series(QUEUE, resource_type="pubsub_subscription", resource_labels={"subscription_id": "other"},
                          points=[(now - 60, 5000.0)])
    target = _observe(provider)
    q = MetricQuery("queue_depth", "external", {}, 60.0, shapes=frozenset({"values", "value"}),
                    source={"metric_type": QUEUE, "filter": 'resource.labels.subscription_id = "jobs"'})
    got = target.read_metrics(now, target.observe(now), [q])["queue_depth"]
    assert got.model_dump(exclude_none=True) == {"values": [300.0], "value": 300.0}
    assert monitoring.requests[-1].aggregation.alignment_period.total_seconds() == 60


def test_a_per_member_custom_metric_and_its_scale(compute, monitoring, provider, now):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    for vm, v in zip(mig.vms, [12.0, 20.0]):
        monitoring.add_series("custom.googleapis.com/connections", metric_labels={"port": "443"},
                              resource_labels={"instance_id": str(vm.id), "zone": vm.zone}, points=[(now - 60, v)])
    target = _observe(provider)
    q = MetricQuery("connections", "pods", {}, 60.0,
                    source={"metric_type": "custom.googleapis.com/connections", "scale": 1000,
                            "filter": 'metric.labels.port = "443"'})
    got = target.read_metrics(now, target.observe(now), [q])["connections"].members
    assert got == {mig.vms[0].name: 12000.0, mig.vms[1].name: 20000.0}


def test_load_balancing_utilization_is_the_rate_over_the_serving_capacity(compute, monitoring, provider, now):
    """3 serving VMs with maxRatePerInstance 100 serve 300 requests/s at capacity;
    240 requests/s is 80%."""
    compute.add_mig("web", zone=ZONE, size=3)
    monitoring.add_series("loadbalancing.googleapis.com/https/backend_request_count", resource_type="https_lb_rule",
                          resource_labels={"backend_name": "web", "backend_scope": ZONE},
                          points=[(now - 60, 240.0 * 60)])
    target = _observe(provider)
    q = MetricQuery("lb", "load_balancing", {}, 60.0, shapes=frozenset({"value"}),
                    source={"max_rate_per_instance": 100})
    got = target.read_metrics(now, target.observe(now), [q])["lb"]
    assert got.model_dump(exclude_none=True) == {"value": pytest.approx(80.0)}
    assert monitoring.requests[-1].aggregation.per_series_aligner.name == "ALIGN_RATE"


@pytest.mark.parametrize("query, key", [
    (MetricQuery("memory", "resource", {}, 60.0), "metrics.memory.source"),
    (MetricQuery("lb", "load_balancing", {}, 60.0), "metrics.lb.source.max_rate_per_instance"),
    (MetricQuery("q", "external", {}, 60.0, source={"metric_type": QUEUE, "aligner": "MEAN"}), "metrics.q.source.aligner"),
    (MetricQuery("q", "external", {}, 60.0, source={"metric": QUEUE}), "metrics.q.source.metric"),
    (MetricQuery("q", "external", {}, 60.0, source={"metric_type": 5}), "metrics.q.source.metric_type"),
])
def test_a_bad_or_missing_source_names_its_key(compute, provider, now, query, key):
    compute.add_mig("web", zone=ZONE, size=1)
    target = _observe(provider)
    with pytest.raises(ProviderError) as e:
        target.read_metrics(now, target.observe(now), [query])
    assert e.value.kind is ErrorKind.INVALID and e.value.message.startswith(key + ":")
