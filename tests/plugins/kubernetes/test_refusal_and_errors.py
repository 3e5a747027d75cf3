"""A target an autoscaling/v2 HPA already scales is refused, naming the HPA; API
statuses come out as the contract's error kinds
(https://kubernetes.io/docs/reference/using-api/api-concepts/#http-status-codes),
never as an ``ApiException``."""
import time

import pytest

from scalebridge.providers import ErrorKind, ProviderError


def hpa(name, target_kind, target_name, api_version="apps/v1"):
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": api_version, "kind": target_kind, "name": target_name},
                     "minReplicas": 1, "maxReplicas": 10}}


def test_an_hpa_on_the_deployment_is_named(k8s, provider):
    k8s.add_deployment("shop", "web", replicas=4)
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", hpa("api-hpa", "Deployment", "api"))
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    assert t.managed_by() is None
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", hpa("web-hpa", "Deployment", "web"))
    assert t.managed_by() == "HorizontalPodAutoscaler shop/web-hpa"
    # the same name of another kind is another workload
    s = provider.target({"kind": "StatefulSet", "namespace": "shop", "name": "web"})
    assert s.managed_by() is None


@pytest.mark.parametrize("status, kind", [(404, ErrorKind.NOT_FOUND), (403, ErrorKind.FORBIDDEN),
                                          (401, ErrorKind.FORBIDDEN), (409, ErrorKind.CONFLICT),
                                          (422, ErrorKind.INVALID), (500, ErrorKind.TRANSIENT),
                                          (503, ErrorKind.TRANSIENT)])
def test_statuses_map_to_error_kinds(k8s, provider, status, kind):
    k8s.add_deployment("shop", "web", replicas=2)
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    k8s.inject(status, method="GET", path_contains="/scale")
    with pytest.raises(ProviderError) as e:
        t.observe(0.0)
    assert e.value.kind is kind
    assert e.value.operation == "get deployments/scale"


def test_throttling_carries_retry_after_and_is_not_slept_in_the_client(k8s, provider):
    k8s.add_deployment("shop", "web", replicas=2)
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.observe(0.0)
    k8s.inject(429, method="PUT", path_contains="/scale", retry_after=7)
    start = time.monotonic()
    with pytest.raises(ProviderError) as e:
        t.set_size(3)
    assert time.monotonic() - start < 2.0
    assert e.value.kind is ErrorKind.THROTTLED and e.value.retry_after == 7.0
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 2


def test_a_slow_api_times_out_as_transient(k8s, kubeconfig):
    from scalebridge_kubernetes import KubernetesProvider
    k8s.add_deployment("shop", "web", replicas=2)
    p = KubernetesProvider(kubeconfig=kubeconfig, request_timeout_seconds=0.2, qps=100, burst=100)
    t = p.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    k8s.inject(0, method="GET", path_contains="/scale", delay=1.0, times=2)   # the GET is retried once
    with pytest.raises(ProviderError) as e:
        t.observe(0.0)
    assert e.value.kind is ErrorKind.TRANSIENT
    p.close()


def test_an_unreachable_api_server_is_transient(tmp_path):
    import socket
    from scalebridge_kubernetes.fake_server import KubernetesServer
    from scalebridge_kubernetes import KubernetesProvider
    srv = KubernetesServer()
    path = srv.kubeconfig(tmp_path / "kc")
    srv.stop()      # nothing listens on that port any more
    p = KubernetesProvider(kubeconfig=path)
    with pytest.raises(ProviderError) as e:
        p.target({"kind": "Deployment", "name": "web"}).observe(0.0)
    assert e.value.kind is ErrorKind.TRANSIENT
    p.close()


def test_a_wrong_token_is_forbidden(k8s, tmp_path):
    from scalebridge_kubernetes import KubernetesProvider
    k8s.add_deployment("shop", "web", replicas=2)
    k8s.token = "another"
    p = KubernetesProvider(kubeconfig=k8s.kubeconfig(tmp_path / "kc"))
    k8s.token = "the-real-one"
    with pytest.raises(ProviderError) as e:
        p.target({"kind": "Deployment", "namespace": "shop", "name": "web"}).observe(0.0)
    assert e.value.kind is ErrorKind.FORBIDDEN
    p.close()
