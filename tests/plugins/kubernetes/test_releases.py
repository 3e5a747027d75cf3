"""What an API server of each Kubernetes release keeps of an HPA, on the local server
with the real kubernetes client, and what ``render``/``apply --native`` say of it.

- pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go, ``dropDisabledFields``:
  without ``HPAConfigurableTolerance`` (beta, on by default from 1.35; alpha 1.33-1.34) a
  per-direction ``tolerance`` is silently dropped, unless the old object used one.
- pkg/apis/autoscaling/validation/validation.go: ``minReplicas`` at least 1 without
  ``HPAScaleToZero`` (beta, on from 1.37), at least 0 with it or when the old object
  already had 0 (``validationOptionsForHorizontalPodAutoscaler``); whatever the gate, 0
  needs an Object or External metric (``validateMetrics``).
"""
from __future__ import annotations

import pytest

from scalebridge.cli import main
from scalebridge.providers import ProviderError
from scalebridge_kubernetes.client import KubeClient
from scalebridge_kubernetes.fake_server import KubernetesServer

QUEUE = {"type": "External", "external": {"metric": {"name": "queue"},
                                          "target": {"type": "AverageValue", "averageValue": "5"}}}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}


def hpa(min_replicas=1, metrics=(QUEUE,), tolerance=None):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": min_replicas, "maxReplicas": 10, "metrics": list(metrics)}
    if tolerance is not None:
        spec["behavior"] = {"scaleUp": {"tolerance": tolerance}}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": spec}


@pytest.fixture
def server(tmp_path):
    with KubernetesServer(token="t") as s:
        s.client = KubeClient(kubeconfig=str(s.kubeconfig(tmp_path / "kubeconfig")), qps=1000, burst=1000)
        yield s


def create(s, body):
    c = s.client
    return c.call("create HorizontalPodAutoscaler", c.autoscaling.create_namespaced_horizontal_pod_autoscaler,
                  "shop", body)


def stored(s):
    return s.store[("autoscaling", "horizontalpodautoscalers", "shop")]["web"]


def test_the_server_says_its_release_and_the_client_reads_it_once(server):
    server.git_version = "v1.36.2-gke.1200"
    assert server.client.release() == "1.36"
    assert server.client.release() == "1.36"
    assert sum(r.path == "/version" for r in server.requests) == 1


def test_min_replicas_zero_with_only_resource_metrics_is_forbidden_whatever_the_release(server):
    with pytest.raises(ProviderError, match="must specify at least one Object or External metric to support "
                                            "scaling to zero replicas"):
        create(server, hpa(0, metrics=(CPU,)))


def test_min_replicas_zero_needs_the_scale_to_zero_gate_before_1_37(server):
    server.git_version = "v1.36.0"
    with pytest.raises(ProviderError, match="spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"):
        create(server, hpa(0))
    server.feature_gates = {"HPAScaleToZero": True}
    create(server, hpa(0))
    assert stored(server)["spec"]["minReplicas"] == 0


def test_an_hpa_already_at_min_zero_may_be_updated_with_the_gate_off(server):
    server.put("autoscaling", "horizontalpodautoscalers", "shop", hpa(0))
    server.git_version = "v1.36.0"
    c = server.client
    body = dict(hpa(0), metadata={"name": "web", "resourceVersion": stored(server)["metadata"]["resourceVersion"]})
    body["spec"]["maxReplicas"] = 12
    c.call("replace HorizontalPodAutoscaler", c.autoscaling.replace_namespaced_horizontal_pod_autoscaler,
           "web", "shop", body)
    assert stored(server)["spec"]["maxReplicas"] == 12


@pytest.mark.parametrize("version, kept", [("v1.34.3", False), ("v1.35.0", True), ("v1.37.0", True)])
def test_a_tolerance_is_dropped_by_an_api_server_without_the_configurable_tolerance_gate(server, version, kept):
    server.git_version = version
    create(server, hpa(1, tolerance="0.05"))
    assert ("tolerance" in stored(server)["spec"]["behavior"]["scaleUp"]) is kept


POLICY = """\
min_replicas: 0
max_replicas: 10
metrics:
- {type: external, name: queue, target: {type: AverageValue, average_value: 5}}
behavior:
  scale_up: {tolerance: 0.05}
"""


@pytest.mark.parametrize("version, lost", [
    ("1.34", ["behavior.tolerance: dropped by the API server of Kubernetes 1.34",
              "spec.minReplicas: 0 is refused by the API server of Kubernetes 1.34"]),
    ("1.36", ["spec.minReplicas: 0 is refused by the API server of Kubernetes 1.36"]),
    ("1.37", []),
])
def test_render_for_a_release_says_what_its_api_server_will_not_keep(tmp_path, capsys, version, lost):
    f = tmp_path / "p.yaml"
    f.write_text(POLICY)
    target = f'{{name: web, kind: Deployment, namespace: shop, kubernetes_version: "{version}"}}'
    code = main(["render", "--to", "kubernetes", "--strict", str(f), "--target", target])
    err = capsys.readouterr().err
    said = [line.split("lost: ", 1)[1] for line in err.splitlines() if "lost: " in line]
    assert [any(line.startswith(want) for line in said) for want in lost] == [True] * len(lost)
    assert len(said) == len(lost)
    assert (code == 0) is (not lost)


def test_apply_native_says_what_the_servers_release_drops(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with KubernetesServer(token="t", git_version="v1.34.1") as s:
        s.add_deployment("shop", "web")
        f = tmp_path / "run.yaml"
        f.write_text(f"""\
providers:
  kubernetes: {{kubeconfig: "{s.kubeconfig(tmp_path / 'kubeconfig')}"}}
policies:
  web:
    min_replicas: 1
    max_replicas: 10
    metrics:
      - {{type: external, name: queue, target: {{type: AverageValue, average_value: 5}}}}
    behavior:
      scale_up: {{tolerance: 0.05}}
targets:
  - {{name: web, provider: kubernetes, policy: web, ref: {{kind: Deployment, namespace: shop, name: web}}}}
""")
        assert main(["apply", str(f), "--native"]) == 0
        out = capsys.readouterr().out
        assert "web: lost: behavior.tolerance: dropped by the API server of Kubernetes 1.34" in out
        assert "tolerance" not in stored(s)["spec"]["behavior"]["scaleUp"]
        # quantities go as the typed client and the server write them: a second apply changes nothing
        assert stored(s)["spec"]["metrics"][0]["external"]["target"]["averageValue"] == "5"
        assert main(["apply", str(f), "--native"]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == "web: unchanged"


@pytest.mark.parametrize("value, canonical", [(0.05, "50m"), (1000, "1k"), (1500, "1500"), (1.5, "1500m"),
                                              (5, "5"), (0, "0"), (2_000_000, "2M"), (1e-10, "1n")])
def test_a_number_is_written_as_the_api_server_writes_a_quantity_back(value, canonical):
    # resource.Quantity CanonicalizeBytes, decimal SI: the largest suffix with a whole mantissa,
    # rounded up to nano (k8s.io/apimachinery/pkg/api/resource/quantity.go)
    from scalebridge_kubernetes.apply import canonical_quantity
    assert canonical_quantity(value) == canonical


KEDA_POLICY = """\
min_replicas: 1
max_replicas: 10
metrics:
- {type: external, name: queue, target: {type: AverageValue, average_value: 5}}
behavior:
  scale_up: {tolerance: 0.05}
"""


def test_render_to_keda_says_what_the_hpa_keda_creates_loses_on_a_release(tmp_path, capsys):
    # KEDA feeds advanced.horizontalPodAutoscalerConfig.behavior to the HPA it creates
    # (keda-docs 2.20 reference/scaledobject-spec, "horizontalPodAutoscalerConfig")
    f = tmp_path / "p.yaml"
    f.write_text(KEDA_POLICY)
    target = '{name: web, namespace: shop, kubernetes_version: "1.34"}'
    assert main(["render", "--to", "keda", "--strict", str(f), "--target", target]) == 1
    out, err = capsys.readouterr()
    assert "lost: behavior.tolerance: dropped by the API server of Kubernetes 1.34" in err
    assert "tolerance" not in out


def test_min_replicas_zero_with_only_resource_metrics_is_no_hpa_either_way(tmp_path, capsys):
    # validateMetrics: "must specify at least one Object or External metric to support scaling
    # to zero replicas" — render says so and writes 1; import refuses such an HPA in those words
    f = tmp_path / "p.yaml"
    f.write_text("min_replicas: 0\nmax_replicas: 10\nmetrics:\n- {type: resource, name: cpu, "
                 "target: {type: Utilization, average_utilization: 60}}\n")
    main(["render", "--to", "kubernetes", str(f), "--target", "{name: web, kind: Deployment, namespace: shop}"])
    out, err = capsys.readouterr()
    assert "lost: min_replicas: 0 needs an Object or External metric in an HPA" in err
    assert "minReplicas: 1" in out
    native = tmp_path / "hpa.yaml"
    native.write_text(out.replace("minReplicas: 1", "minReplicas: 0"))
    assert main(["import", "--from", "kubernetes", str(native)]) == 2
    assert "must specify at least one Object or External metric to support scaling to zero replicas" in \
        capsys.readouterr().err


def test_a_tolerance_read_back_from_the_api_server_in_canonical_form_is_the_policys(tmp_path, capsys):
    # HPAScalingRules.tolerance is a resource.Quantity (KEP-4951): the server answers "50m"
    hpa_yaml = tmp_path / "hpa.yaml"
    hpa_yaml.write_text("""\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: External
    external: {metric: {name: queue}, target: {type: AverageValue, averageValue: "5"}}
  behavior:
    scaleUp: {tolerance: 50m}
""")
    assert main(["import", "--from", "kubernetes", str(hpa_yaml)]) == 0
    import yaml
    policy = yaml.safe_load(capsys.readouterr().out)
    assert policy["behavior"]["scale_up"]["tolerance"] == 0.05
