"""The size is read and written through the autoscaling/v1 Scale subresource only,
with its resourceVersion (optimistic concurrency:
https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions); a
409 re-reads and retries once and never overwrites a newer size."""
import pytest

from scalebridge.providers import ErrorKind, ProviderError


def writes(k8s):
    return [(r.method, r.resource, r.subresource) for r in k8s.requests if r.method in ("PUT", "PATCH", "POST")]


def test_observe_reads_the_scale_and_set_size_writes_only_the_scale(k8s, provider):
    k8s.add_deployment("shop", "web", replicas=4, requests={"cpu": "500m"})
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    obs = t.observe(0.0)
    assert obs.current_replicas == 4 and obs.status_replicas == 4 and obs.in_flight is None
    assert len(obs.members) == 4
    k8s.requests.clear()
    change = t.set_size(6)
    assert change.size == 6
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6
    assert writes(k8s) == [("PUT", "deployments", "scale")]


def test_the_write_carries_the_observed_resource_version(k8s, provider):
    k8s.add_deployment("shop", "web", replicas=4)
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.observe(0.0)
    # another writer changes the size after the observe: the write must not win blindly
    obj = k8s.get("apps", "deployments", "shop", "web")
    obj["spec"]["replicas"] = 9
    k8s.put("apps", "deployments", "shop", obj)
    with pytest.raises(ProviderError) as e:
        t.set_size(6)
    assert e.value.kind is ErrorKind.CONFLICT
    assert "from 4 to 9" in str(e.value)
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 9


def test_a_conflict_that_left_the_size_alone_is_retried_once(k8s, provider):
    k8s.add_deployment("shop", "web", replicas=4)
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.observe(0.0)
    obj = k8s.get("apps", "deployments", "shop", "web")     # a label change: new resourceVersion, same size
    obj["metadata"]["labels"]["team"] = "shop"
    k8s.put("apps", "deployments", "shop", obj)
    k8s.requests.clear()
    assert t.set_size(6).size == 6
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6
    scale_calls = [(r.method, r.status) for r in k8s.requests if r.subresource == "scale"]
    assert scale_calls == [("PUT", 409), ("GET", 200), ("PUT", 200)]


def test_a_second_conflict_is_reported_not_retried_again(k8s, provider):
    k8s.add_deployment("shop", "web", replicas=4)
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.observe(0.0)
    k8s.inject(409, method="PUT", path_contains="/scale", times=2)
    with pytest.raises(ProviderError) as e:
        t.set_size(6)
    assert e.value.kind is ErrorKind.CONFLICT
    assert [r.method for r in k8s.requests if r.subresource == "scale"][-3:] == ["PUT", "GET", "PUT"]
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 4


def test_a_statefulset_scales_through_its_scale(k8s, provider):
    k8s.add_statefulset("db", "pg", replicas=3, requests={"cpu": "1"})
    t = provider.target({"kind": "StatefulSet", "namespace": "db", "name": "pg"})
    obs = t.observe(0.0)
    assert obs.current_replicas == 3
    assert sorted(m.name for m in obs.members) == ["pg-0", "pg-1", "pg-2"]
    t.set_size(5)
    assert k8s.get("apps", "statefulsets", "db", "pg")["spec"]["replicas"] == 5


def test_a_custom_resource_with_a_scale_subresource(k8s, provider):
    k8s.add_custom_kind("example.com", "v1", "workers", "Worker")
    k8s.add_custom("example.com", "workers", "jobs", "crunch", replicas=2, requests={"cpu": "250m"})
    t = provider.target({"kind": "Worker", "api_version": "example.com/v1", "resource": "workers",
                         "namespace": "jobs", "name": "crunch"})
    obs = t.observe(0.0)
    assert obs.current_replicas == 2 and len(obs.members) == 2
    assert obs.members[0].requests == {"cpu": "250m"}
    t.set_size(3)
    assert k8s.get("example.com", "workers", "jobs", "crunch")["spec"]["replicas"] == 3
    assert writes(k8s)[-1] == ("PUT", "workers", "scale")


def test_a_rollout_is_reported_and_never_in_flight(k8s, provider):
    k8s.auto_reconcile = False
    k8s.add_deployment("shop", "web", replicas=4)
    k8s.reconcile()
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    obs = t.observe(0.0)
    assert obs.in_flight is None and obs.rollout is None
    t.set_size(6)
    obs = t.observe(0.0)        # a size not yet carried out is no rollout, and not waited on
    assert obs.current_replicas == 6 and obs.status_replicas == 4 and obs.in_flight is None and obs.rollout is None
    obj = k8s.get("apps", "deployments", "shop", "web")
    obj["status"].update({"replicas": 7, "updatedReplicas": 2})     # a new version surging in
    k8s.put("apps", "deployments", "shop", obj)
    obs = t.observe(0.0)
    assert obs.in_flight is None
    assert obs.rollout.updated_replicas == 2 and "updatedReplicas 2 < status.replicas 7" in obs.rollout.reason
    k8s.reconcile()
    assert t.observe(0.0).rollout is None


def test_a_missing_workload_is_not_found(k8s, provider):
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "nope"})
    with pytest.raises(ProviderError) as e:
        t.observe(0.0)
    assert e.value.kind is ErrorKind.NOT_FOUND and "deployments/scale" in str(e.value)
