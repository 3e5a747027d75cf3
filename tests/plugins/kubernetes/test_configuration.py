"""How the provider finds its API server, in client-go's order: an explicit
``kubeconfig`` (and ``context``) wins; else the in-cluster service account
(``rest.InClusterConfig``: the token and CA under
/var/run/secrets/kubernetes.io/serviceaccount and ``KUBERNETES_SERVICE_HOST``)
when mounted; else the default kubeconfig. Bad options and refs name their key."""
from __future__ import annotations

import pytest
import yaml

from scalebridge.providers import RefError


@pytest.fixture
def two_contexts(k8s, tmp_path):
    """A kubeconfig whose current context points nowhere and whose ``test``
    context points at the test server."""
    path = tmp_path / "kubeconfig"
    k8s.kubeconfig(path)
    doc = yaml.safe_load(path.read_text())
    doc["clusters"].append({"name": "prod", "cluster": {"server": "http://127.0.0.1:9"}})
    doc["contexts"].append({"name": "prod", "context": {"cluster": "prod", "user": "test"}})
    doc["current-context"] = "prod"
    path.write_text(yaml.safe_dump(doc))
    return path


def service_account(tmp_path, token="sa-token"):
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(token)
    (sa / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    return sa


def test_the_context_selects_the_cluster(k8s, two_contexts):
    from scalebridge_kubernetes.client import KubeClient
    k8s.add_deployment("shop", "web", replicas=2)
    c = KubeClient(kubeconfig=str(two_contexts), context="test")
    assert c.configuration.host == k8s.url
    assert c.mode == f"kubeconfig {two_contexts} context test"
    assert c.call("get", c.apps.read_namespaced_deployment_scale, "web", "shop").spec.replicas == 2
    assert KubeClient(kubeconfig=str(two_contexts)).configuration.host == "http://127.0.0.1:9"


def test_an_unknown_context_names_the_key(two_contexts):
    from scalebridge_kubernetes.client import KubeClient
    with pytest.raises(RefError) as e:
        KubeClient(kubeconfig=str(two_contexts), context="staging")
    assert e.value.key == "context"


def test_a_missing_kubeconfig_names_the_key(tmp_path):
    from scalebridge_kubernetes.client import KubeClient
    with pytest.raises(RefError) as e:
        KubeClient(kubeconfig=str(tmp_path / "nope"))
    assert e.value.key == "kubeconfig" and "no such file" in e.value.message


def test_in_cluster_when_the_service_account_is_mounted(tmp_path):
    from scalebridge_kubernetes.client import KubeClient
    sa = service_account(tmp_path)
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    c = KubeClient(service_account_dir=str(sa), environ=env)
    assert c.mode == "in-cluster"
    assert c.configuration.host == "https://10.96.0.1:443"
    assert c.configuration.ssl_ca_cert == str(sa / "ca.crt")
    assert c.configuration.api_key == {"BearerToken": "bearer sa-token"}


def test_an_explicit_kubeconfig_wins_over_the_mounted_service_account(k8s, kubeconfig, tmp_path):
    from scalebridge_kubernetes.client import KubeClient
    sa = service_account(tmp_path)
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    c = KubeClient(kubeconfig=kubeconfig, in_cluster=True, service_account_dir=str(sa), environ=env)
    assert c.configuration.host == k8s.url and c.mode.startswith("kubeconfig")


def test_in_cluster_asked_for_outside_a_pod_names_the_key(tmp_path):
    from scalebridge_kubernetes.client import KubeClient
    with pytest.raises(RefError) as e:
        KubeClient(in_cluster=True, service_account_dir=str(tmp_path / "none"), environ={})
    assert e.value.key == "in_cluster"


def test_the_default_kubeconfig_from_KUBECONFIG(k8s, kubeconfig, tmp_path):
    from scalebridge_kubernetes.client import KubeClient
    c = KubeClient(service_account_dir=str(tmp_path / "none"), environ={"KUBECONFIG": kubeconfig})
    assert c.configuration.host == k8s.url and c.mode == "kubeconfig (default)"


def test_pacing_defaults_are_client_gos(kubeconfig):
    from scalebridge_kubernetes import KubernetesProvider
    from scalebridge_kubernetes.client import KubeClient
    assert (KubernetesProvider.pacing.writes_per_second, KubernetesProvider.pacing.write_burst) == (5.0, 10)
    c = KubeClient(kubeconfig=kubeconfig)
    assert (c.limiter.qps, c.limiter.burst) == (5.0, 10)


def test_the_rate_limiter_lets_a_burst_through_then_paces():
    from scalebridge_kubernetes.client import TokenBucket
    now = [0.0]
    slept = []
    bucket = TokenBucket(5, 10, clock=lambda: now[0], sleep=lambda s: (slept.append(s), now.__setitem__(0, now[0] + s)))
    for _ in range(10):
        bucket.acquire()
    assert slept == []
    for _ in range(5):
        bucket.acquire()
    assert slept == pytest.approx([0.2] * 5)       # 5 per second after the burst of 10
    assert now[0] == pytest.approx(1.0)


@pytest.mark.parametrize("options, key", [({"qps": 0}, "qps"), ({"kubeconfig": "/nonexistent/kc"}, "kubeconfig"), ({"burst": "ten"}, "burst"),
                                          ({"in_cluster": "yes"}, "in_cluster"), ({"kube_config": "x"}, "kube_config"),
                                          ({"context": ""}, "context")])
def test_bad_options_name_their_key(options, key):
    from scalebridge_kubernetes import KubernetesProvider
    with pytest.raises(RefError) as e:
        KubernetesProvider(**options)
    assert e.value.key == key


@pytest.mark.parametrize("ref, key", [
    ({"name": "web"}, "ref.kind"), ({"kind": "Deployment"}, "ref.name"),
    ({"kind": "Deployment", "name": "web", "namespcae": "shop"}, "ref.namespcae"),
    ({"kind": "Deployment", "name": "web", "api_version": "apps/v1beta2"}, "ref.api_version"),
    ({"kind": "Worker", "name": "web"}, "ref.api_version"),
    ({"kind": "Worker", "name": "web", "api_version": "example.com/v1"}, "ref.resource"),
    ({"kind": "Deployment", "name": 3}, "ref.name")])
def test_bad_refs_name_their_key_without_calling_the_api(ref, key):
    from scalebridge_kubernetes import KubernetesProvider
    p = KubernetesProvider(context="nowhere")     # never loaded: target() does not call the cluster
    with pytest.raises(RefError) as e:
        p.target(ref)
    assert e.value.key == key


def test_the_plugin_registers_without_importing_the_sdk():
    import subprocess
    import sys
    code = ("import sys, scalebridge_kubernetes as k; from scalebridge.registry import *; "
            "print('kubernetes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_context_the_kubeconfig_lacks_fails_the_call_as_invalid(kubeconfig):
    from scalebridge.providers import ErrorKind, ProviderError
    from scalebridge_kubernetes import KubernetesProvider
    p = KubernetesProvider(kubeconfig=kubeconfig, context="staging")
    with pytest.raises(ProviderError) as e:
        p.target({"kind": "Deployment", "name": "web"}).observe(0.0)
    assert e.value.kind is ErrorKind.INVALID and "context" in str(e.value)
