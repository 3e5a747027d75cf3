"""Scale to and from zero through ``scalebridge run --once`` on the local API server,
as the HPA of the server's release does (KEP-2021,
kubernetes/enhancements ``keps/sig-autoscaling/2021-scale-from-zero/``):

- Kubernetes 1.36+ records ``ScaledToZero=True`` when the HPA itself scales a workload
  from one or more replicas to zero, and computes from zero only then; "Setting a
  Deployment to 0 by hand has always paused autoscaling, and the redesign keeps that"
  (the v1.37 blog "Scale Workloads to Zero with HorizontalPodAutoscaler"). The
  provider reads the server's release from ``GET /version``.
- Kubernetes 1.16-1.35 (``HPAScaleToZero`` alpha) compute from zero whenever
  ``minReplicas`` is 0 (horizontal.go ``reconcileAutoscaler``: scaling is disabled only
  when ``currentReplicas == 0 && minReplicas != 0``).

The external metric is 120 at an ``AverageValue`` of 50 a pod: ceil(120 / 50) = 3
(GetExternalPerPodMetricReplicas).
"""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.cli import main

QUEUE_POLICY = {"semantics": "kubernetes", "min_replicas": 0, "max_replicas": 10,
                "metrics": [{"type": "external", "name": "queue",
                             "target": {"type": "AverageValue", "average_value": 50}}],
                "behavior": {"scale_down": {"stabilization_window_seconds": 0}}}
WEB = {"kind": "Deployment", "namespace": "shop", "name": "web"}


def run_once(tmp_path, kubeconfig, settings=None):
    target = {"name": "web", "provider": "kubernetes", "policy": "p", "ref": WEB,
              "metrics": {"queue": {"source": {"metric_name": "queue"}}}}
    if settings:
        target["settings"] = settings
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"providers": {"kubernetes": {"kubeconfig": str(kubeconfig)}},
                                    "policies": {"p": QUEUE_POLICY}, "targets": [target]}))
    audit = tmp_path / "audit.jsonl"
    seen = len(audit.read_text().splitlines()) if audit.exists() else 0
    rc = main(["run", str(path), "--once", "--audit", str(audit), "--state", str(tmp_path / "state.db")])
    [rec] = [json.loads(x) for x in audit.read_text().splitlines()[seen:]]
    return rc, rec


def queue(k8s, value):
    k8s.set_external_metric("shop", "queue", [({}, value)])


def replicas(k8s):
    return k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"]


def add_web(k8s, n):
    k8s.clock = lambda: time.time() - 3600
    try:
        k8s.add_deployment("shop", "web", replicas=n, requests={"cpu": "500m"})
    finally:
        k8s.clock = time.time


def test_a_workload_scalebridge_scaled_to_zero_wakes_on_its_external_metric(k8s, kubeconfig, tmp_path):
    add_web(k8s, 2)
    queue(k8s, 0)
    rc, rec = run_once(tmp_path, kubeconfig)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 0, rec
    assert replicas(k8s) == 0
    queue(k8s, 120)
    rc, rec = run_once(tmp_path, kubeconfig)
    assert rc == 0 and rec["action"] == "applied", rec
    assert (rec["current_replicas"], rec["desired_replicas"]) == (0, 3)
    assert replicas(k8s) == 3


def test_a_workload_set_to_zero_by_hand_stays_paused_on_kubernetes_1_37(k8s, kubeconfig, tmp_path):
    add_web(k8s, 0)
    queue(k8s, 120)
    rc, rec = run_once(tmp_path, kubeconfig)
    assert rc == 0 and rec["action"] == "unchanged" and rec["reason"] == "ScalingDisabled", rec
    assert rec["note"].startswith("paused at zero: ")
    assert replicas(k8s) == 0


def test_a_workload_set_to_zero_by_hand_is_woken_by_a_kubernetes_1_35_controller(k8s, kubeconfig, tmp_path):
    k8s.git_version = "v1.35.4"
    add_web(k8s, 0)
    queue(k8s, 120)
    rc, rec = run_once(tmp_path, kubeconfig)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 3, rec
    assert replicas(k8s) == 3


def test_the_configurations_kubernetes_version_wins_over_the_servers(k8s, kubeconfig, tmp_path):
    add_web(k8s, 0)
    queue(k8s, 120)
    rc, rec = run_once(tmp_path, kubeconfig, settings={"kubernetes_version": "1.35"})
    assert rc == 0 and rec["desired_replicas"] == 3, rec
    assert any(r.path == "/version" for r in k8s.requests) is False   # never needed: the setting was given


def test_observe_says_which_release_the_server_is(k8s, kubeconfig, tmp_path, capsys):
    k8s.git_version = "v1.36.2-gke.1200"
    add_web(k8s, 2)
    queue(k8s, 10)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"providers": {"kubernetes": {"kubeconfig": str(kubeconfig)}},
                                    "policies": {"p": QUEUE_POLICY},
                                    "targets": [{"name": "web", "provider": "kubernetes", "policy": "p", "ref": WEB,
                                                 "metrics": {"queue": {"source": {"metric_name": "queue"}}}}]}))
    assert main(["observe", str(path), "--output", "json"]) == 0
    [got] = json.loads(capsys.readouterr().out)
    assert got["settings"] == {"kubernetes_version": "1.36"}
