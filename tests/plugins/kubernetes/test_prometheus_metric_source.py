"""``scalebridge run`` with a Prometheus metric source on a Kubernetes target
decides as with the provider's own source (the external and custom metrics APIs
of the test API server) carrying the same numbers: two Deployments alike, one
reading the metrics APIs, one reading Prometheus (the local Prometheus-API
server), observe the same samples and are set to the same size."""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.cli import main
from scalebridge_prometheus.fake_server import PrometheusServer
from tests.plugins.kubernetes.test_run_once import long_running

POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 20,
          "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 50}},
                      {"type": "pods", "name": "packets", "target": {"type": "AverageValue", "average_value": 10}}]}


def test_prometheus_and_the_metrics_apis_carrying_the_same_numbers_decide_alike(k8s, kubeconfig, tmp_path, capsys):
    for name in ("web-native", "web-prom"):
        long_running(k8s, k8s.add_deployment, "shop", name, replicas=4, requests={"cpu": "500m"})
    native_pods = [p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web-native")]
    prom_pods = [p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web-prom")]
    k8s.set_external_metric("shop", "queue_messages_ready", [({"queue": "jobs"}, 300)])
    k8s.set_custom_pod_metric("shop", "packets-per-second", {p: str(12 + i) for i, p in enumerate(native_pods)})
    now = time.time()
    with PrometheusServer() as prom:
        prom.add({"__name__": "queue_messages_ready", "queue": "jobs"}, [(now - 30, 300)])
        for i, p in enumerate(prom_pods):
            prom.add({"__name__": "packets_per_second", "pod": p, "namespace": "shop"}, [(now - 30, 12 + i)])
        targets = [
            {"name": "web-native", "provider": "kubernetes", "policy": "p",
             "ref": {"kind": "Deployment", "namespace": "shop", "name": "web-native"},
             "metrics": {"queue": {"source": {"metric_name": "queue_messages_ready",
                                              "selector": {"matchLabels": {"queue": "jobs"}}}},
                         "packets": {"source": {"metric_name": "packets-per-second"}}}},
            {"name": "web-prom", "provider": "kubernetes", "policy": "p",
             "ref": {"kind": "Deployment", "namespace": "shop", "name": "web-prom"},
             "metrics": {"queue": {"source": {"metric_source": "prom", "query": 'queue_messages_ready{queue="jobs"}'}},
                         "packets": {"source": {"metric_source": "prom", "member_label": "pod",
                                                "query": 'packets_per_second{namespace="shop"}'}}}}]
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump({"metric_sources": {"prom": {"type": "prometheus", "url": prom.url}},
                                        "providers": {"kubernetes": {"kubeconfig": str(kubeconfig)}},
                                        "policies": {"p": POLICY}, "targets": targets}))
        capsys.readouterr()
        assert main(["observe", str(path), "--output", "json"]) == 0
        seen = {o["target"]: o for o in json.loads(capsys.readouterr().out)}
        audit = tmp_path / "audit.jsonl"
        assert main(["run", str(path), "--once", "--audit", str(audit), "--state", str(tmp_path / "s.db")]) == 0
    native, mine = seen["web-native"]["metrics"], seen["web-prom"]["metrics"]
    assert native["queue"]["values"] == mine["queue"]["values"] == [300]
    rename = dict(zip(prom_pods, native_pods))
    assert {rename[p]: v for p, v in mine["packets"]["members"].items()} == \
        {p: float(v) for p, v in native["packets"]["members"].items()}
    recs = {r["target"]: r for r in map(json.loads, audit.read_text().splitlines())}
    keys = ("current_replicas", "recommended_replicas", "desired_replicas", "reason", "action")
    assert {k: recs["web-prom"][k] for k in keys} == {k: recs["web-native"][k] for k in keys}
    # the pods average (12+13+14+15)/4 = 13.5 against 10: ceil(4 × 1.35) = 6; the queue's 300/50 = 6
    assert recs["web-prom"]["desired_replicas"] == 6 and recs["web-prom"]["action"] == "applied"
    assert k8s.get("apps", "deployments", "shop", "web-prom")["spec"]["replicas"] == 6
