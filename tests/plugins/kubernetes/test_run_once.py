"""End to end through ``scalebridge run --once``: a run configuration whose
``kubernetes`` provider reads a kubeconfig pointing at the test API server, the
real CLI, the real ``kubernetes`` client.

Expected results from the documentation: the HPA's
``desiredReplicas = ceil[currentReplicas × (currentMetricValue / desiredMetricValue)]``
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#algorithm-details):
4 pods using 450m of 500m requested are at 90 % against 60 % → ceil(4 × 1.5) = 6;
an external metric with an AverageValue target is divided by the pods' count,
ceil(300 / 50) = 6, and a pods metric averages, ceil(4 × 15 / 10) = 6
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale-walkthrough/#autoscaling-on-multiple-metrics-and-custom-metrics);
an object metric with a Value target is the ratio times the ready pods,
ceil(4 × 1500 / 1000) = 6. Each is within the default scale-up of max(+4 pods,
+100 %) per 15 s (#default-behavior).
"""
from __future__ import annotations

import json
import time

import pytest
import yaml

from scalebridge.cli import main

CPU_POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 60}}]}


class Runner:
    def __init__(self, tmp_path, kubeconfig):
        self.tmp, self.kubeconfig = tmp_path, kubeconfig
        self.audit = tmp_path / "audit.jsonl"
        self.seen = 0

    def __call__(self, ref, *flags, policy=CPU_POLICY, metrics=None):
        target = {"name": "web", "provider": "kubernetes", "policy": "p", "ref": ref}
        if metrics:
            target["metrics"] = metrics
        path = self.tmp / "run.yaml"
        path.write_text(yaml.safe_dump({"providers": {"kubernetes": {"kubeconfig": str(self.kubeconfig)}},
                                        "policies": {"p": policy}, "targets": [target]}))
        rc = main(["run", str(path), "--once", "--audit", str(self.audit), "--state", str(self.tmp / "state.db"),
                   *flags])
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        new, self.seen = [json.loads(x) for x in lines[self.seen:]], len(lines)
        return rc, new


@pytest.fixture
def run(tmp_path, kubeconfig):
    return Runner(tmp_path, kubeconfig)


def long_running(k8s, add, *args, **kw):
    """Create a workload whose pods started an hour ago (past the CPU initialization period)."""
    k8s.clock = lambda: time.time() - 3600
    try:
        return add(*args, **kw)
    finally:
        k8s.clock = time.time


WEB = {"kind": "Deployment", "namespace": "shop", "name": "web"}


def test_4_pods_at_450m_of_500m_against_60_percent_go_to_6(k8s, run):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    rc, [rec] = run(WEB)
    assert rc == 0, rec
    assert rec["action"] == "applied" and rec["current_replicas"] == 4 and rec["desired_replicas"] == 6
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6
    assert len(k8s.list("", "pods", "shop", "app=web")) == 6


def test_dry_run_leaves_4(k8s, run):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    rc, [rec] = run(WEB, "--dry-run")
    assert rc == 0 and rec["action"] == "dry_run" and rec["desired_replicas"] == 6
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 4
    assert not [r for r in k8s.requests if r.method in ("PUT", "PATCH", "POST")]


def test_an_external_metric_of_300_at_50_a_pod_goes_to_6(k8s, run):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_external_metric("shop", "queue_messages_ready", [({"queue": "worker_tasks"}, 300),
                                                             ({"queue": "other"}, 5000)])
    policy = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "external", "name": "queue_messages_ready",
                           "target": {"type": "AverageValue", "average_value": 50}}]}
    metrics = {"queue_messages_ready": {"source": {"selector": {"matchLabels": {"queue": "worker_tasks"}}}}}
    rc, [rec] = run(WEB, policy=policy, metrics=metrics)
    assert rc == 0 and rec["desired_replicas"] == 6, rec
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6


def test_a_pods_metric_of_15_a_pod_at_10_goes_to_6(k8s, run):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    pods = [p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web")]
    k8s.set_custom_pod_metric("shop", "packets-per-second", {p: "15" for p in pods})
    policy = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "pods", "name": "packets",
                           "target": {"type": "AverageValue", "average_value": 10}}]}
    metrics = {"packets": {"source": {"metric_name": "packets-per-second"}}}
    rc, [rec] = run(WEB, policy=policy, metrics=metrics)
    assert rc == 0 and rec["desired_replicas"] == 6, rec
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6


def test_an_object_metric_of_1500_against_1000_goes_to_6(k8s, run):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_object_metric("shop", "ingresses.networking.k8s.io", "main-route", "requests-per-second", "1500")
    policy = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "object", "name": "rps", "target": {"type": "Value", "value": 1000}}]}
    metrics = {"rps": {"source": {"metric_name": "requests-per-second", "described_object": {
        "api_version": "networking.k8s.io/v1", "kind": "Ingress", "name": "main-route"}}}}
    rc, [rec] = run(WEB, policy=policy, metrics=metrics)
    assert rc == 0 and rec["desired_replicas"] == 6, rec
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6


def test_a_statefulset_goes_to_6(k8s, run):
    long_running(k8s, k8s.add_statefulset, "db", "pg", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("db", "pg", {"cpu": "450m"})
    rc, [rec] = run({"kind": "StatefulSet", "namespace": "db", "name": "pg"})
    assert rc == 0 and rec["desired_replicas"] == 6, rec
    assert k8s.get("apps", "statefulsets", "db", "pg")["spec"]["replicas"] == 6
    assert sorted(p["metadata"]["name"] for p in k8s.list("", "pods", "db")) == [f"pg-{i}" for i in range(6)]


def test_a_custom_resource_with_a_scale_subresource_goes_to_6(k8s, run):
    k8s.add_custom_kind("example.com", "v1", "workers", "Worker")
    long_running(k8s, k8s.add_custom, "example.com", "workers", "jobs", "crunch", replicas=4,
                 requests={"cpu": "500m"})
    for i in range(4):
        k8s.set_pod_metrics("jobs", f"crunch-{i}", {"app": {"cpu": "450m"}})
    rc, [rec] = run({"kind": "Worker", "api_version": "example.com/v1", "resource": "workers",
                     "namespace": "jobs", "name": "crunch"})
    assert rc == 0 and rec["desired_replicas"] == 6, rec
    assert k8s.get("example.com", "workers", "jobs", "crunch")["spec"]["replicas"] == 6


def test_an_hpa_on_the_deployment_refuses_the_target_and_leaves_it(k8s, run):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": 1, "maxReplicas": 10}})
    rc, recs = run(WEB)
    assert rc == 1
    assert recs and recs[-1]["action"] == "refused"
    assert "HorizontalPodAutoscaler shop/web" in (recs[-1]["error"] or "")
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 4
    assert not [r for r in k8s.requests if r.method in ("PUT", "PATCH", "POST")]


def test_observe_prints_what_the_provider_saw_and_never_writes(k8s, run, tmp_path, capsys):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    run(WEB, "--dry-run")       # writes the run configuration
    k8s.requests.clear()
    capsys.readouterr()
    rc = main(["observe", str(tmp_path / "run.yaml"), "--output", "json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    seen = json.loads(out)
    text = json.dumps(seen)
    assert "450m" in text and '"current_replicas": 4' in text
    assert not [r for r in k8s.requests if r.method in ("PUT", "PATCH", "POST")]


def _annotate(k8s, annotations: dict) -> None:
    obj = k8s.get("apps", "deployments", "shop", "web")
    obj["metadata"].setdefault("annotations", {}).update(annotations)
    k8s.put("apps", "deployments", "shop", obj)


@pytest.mark.parametrize("prefix", ["autoscaling.keda.sh", "scalebridge.io"])
def test_a_paused_replicas_annotation_sets_that_size_once_and_holds_it(k8s, run, prefix):
    """KEDA's pause annotations (https://keda.sh/docs/latest/concepts/scaling-deployments/#pause-autoscaling),
    honoured on the workload: paused-replicas scales to N and stops; paused: "true"
    holds the current size."""
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})      # would go to 6
    _annotate(k8s, {f"{prefix}/paused-replicas": "2"})
    rc, [rec] = run(WEB)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 2, rec
    assert f"{prefix}/paused-replicas=2" in rec["note"]
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 2
    writes = len([r for r in k8s.requests if r.method in ("PUT", "PATCH")])
    rc, [rec] = run(WEB)
    assert rc == 0 and rec["action"] == "paused"
    assert len([r for r in k8s.requests if r.method in ("PUT", "PATCH")]) == writes, "held, not written again"
    obj = k8s.get("apps", "deployments", "shop", "web")
    del obj["metadata"]["annotations"][f"{prefix}/paused-replicas"]
    obj["metadata"]["annotations"][f"{prefix}/paused"] = "true"
    k8s.put("apps", "deployments", "shop", obj)
    rc, [rec] = run(WEB)
    assert rec["action"] == "paused" and rec["desired_replicas"] == 2
    _annotate(k8s, {f"{prefix}/paused": "false"})    # not "true": scaling again
    rc, [rec] = run(WEB)
    assert rec["action"] != "paused" and rec["recommended_replicas"] is not None
