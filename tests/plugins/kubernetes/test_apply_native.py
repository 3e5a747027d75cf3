"""``scalebridge apply CONFIG`` for a kubernetes target, against the test API
server on 127.0.0.1 with the real kubernetes client: it creates the HPA, a second apply
changes nothing, a changed policy replaces it (still one HPA), ``--dry-run`` writes nothing."""
from __future__ import annotations

import pytest

from scalebridge.cli import main
from scalebridge_kubernetes.fake_server import KubernetesServer

pytestmark = pytest.mark.slow   # the kubernetes client's import and a local API server: about 9 s

CONFIG = """\
providers:
  kubernetes: {{kubeconfig: "{kubeconfig}"}}
policies:
  web:
    name: web
    min_replicas: 2
    max_replicas: 12
    metrics:
      - {{type: resource, name: cpu, target: {{type: Utilization, average_utilization: {target}}}}}
    behavior:
      scale_down: {{stabilization_window_seconds: 600}}
targets:
  - {{name: web-gke, provider: kubernetes, policy: web, ref: {{kind: Deployment, namespace: shop, name: web}}}}
"""


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # the default state file is looked for here
    with KubernetesServer(token="t") as server:
        server.add_deployment("shop", "web")
        yield server, server.kubeconfig(tmp_path / "kubeconfig")


def _hpas(server) -> dict:
    return server.store.get(("autoscaling", "horizontalpodautoscalers", "shop"), {})


def _apply(tmp_path, capsys, kubeconfig, target, *flags):
    f = tmp_path / "run.yaml"
    f.write_text(CONFIG.format(kubeconfig=kubeconfig, target=target))
    code = main(["apply", str(f), *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_apply_native_creates_then_replaces_one_hpa(cluster, tmp_path, capsys):
    server, kubeconfig = cluster
    assert _apply(tmp_path, capsys, kubeconfig, 60, "--dry-run") == \
        "web-gke: HorizontalPodAutoscaler shop/web: create\n"
    assert _hpas(server) == {}
    assert _apply(tmp_path, capsys, kubeconfig, 60) == "web-gke: HorizontalPodAutoscaler shop/web: create\n"
    hpa = _hpas(server)["web"]
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 60
    assert _apply(tmp_path, capsys, kubeconfig, 60) == "web-gke: unchanged\n"
    out = _apply(tmp_path, capsys, kubeconfig, 45, "--dry-run")
    assert out == "web-gke: HorizontalPodAutoscaler shop/web: spec.metrics[0].resource.target.averageUtilization: 60 -> 45\n"
    assert _hpas(server)["web"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 60
    _apply(tmp_path, capsys, kubeconfig, 45)
    assert list(_hpas(server)) == ["web"]
    assert _hpas(server)["web"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 45
