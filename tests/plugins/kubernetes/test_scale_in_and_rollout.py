"""Scale-in of chosen pods and scaling during a rollout, against the test API server
with the real ``kubernetes`` client.

- The server's workload controller removes pods in the ReplicaSet controller's order,
  ``getPodsToDelete`` → ``ActivePodsWithRanks.Less`` (kubernetes/kubernetes
  ``pkg/controller/replicaset/replica_set.go`` and ``pkg/controller/controller_utils.go``):
  unassigned, then Pending < Unknown < Running, not ready, then the lower
  ``controller.kubernetes.io/pod-deletion-cost``
  (https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#pod-deletion-cost),
  more co-located pods, ready for less time (log2 buckets), more restarts, newer.
- A scale-in whose policy chooses who leaves lowers the chosen pods' deletion cost,
  then ``spec.replicas``: the pods the controller removes are the chosen ones.
- A scale-up during a Deployment's rollout is written while the rollout is still in
  progress (the HPA writes ``spec.replicas`` without waiting, and the Deployment
  controller spreads it across ReplicaSets: #proportional-scaling).
"""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.cli import main
from scalebridge_kubernetes.fake_server import POD_DELETION_COST, deletion_cost, format_time, pods_to_delete

from .test_run_once import CPU_POLICY, WEB, long_running

NOW = 1_767_225_600.0


def _pod(name, *, node="n1", phase="Running", ready=True, cost=None, ready_at=NOW - 3600, created=NOW - 3600,
         restarts=0, uid=None):
    meta = {"name": name, "uid": uid or name, "creationTimestamp": format_time(created)}
    if cost is not None:
        meta["annotations"] = {POD_DELETION_COST: cost}
    status = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                              "lastTransitionTime": format_time(ready_at)}],
              "containerStatuses": [{"name": "app", "restartCount": restarts}]}
    return {"metadata": meta, "spec": {"nodeName": node}, "status": status}


def _order(pods):
    """The pods a scale-down by all but one removes, in order (the last pod is kept)."""
    return [p["metadata"]["name"] for p in pods_to_delete(pods, pods, len(pods) - 1, NOW)]


def test_the_replicaset_order_puts_each_upstream_key_before_the_next():
    # 1. unassigned before assigned, even with a higher cost
    assert _order([_pod("a"), _pod("b", node="", cost="100"), _pod("c")])[0] == "b"
    # 2. Pending < Unknown < Running
    assert _order([_pod("r"), _pod("u", phase="Unknown"), _pod("p", phase="Pending"), _pod("s")])[:2] == ["p", "u"]
    # 3. not ready before ready, even with a higher cost
    assert _order([_pod("a", cost="-5"), _pod("b", ready=False, cost="9"), _pod("c")])[0] == "b"
    # 4. the lower deletion cost first, before how long it has been ready
    assert _order([_pod("young", ready_at=NOW - 10), _pod("old", ready_at=NOW - 86400, cost="-1"),
                   _pod("x")])[0] == "old"
    # 5. doubled up (more active pods of the set on its node) first
    assert "alone" not in _order([_pod("alone", node="n2"), _pod("a", node="n1"), _pod("b", node="n1")])
    # 6. ready for less time first, by log2 buckets of nanoseconds
    assert _order([_pod("day", ready_at=NOW - 86400), _pod("min", ready_at=NOW - 60), _pod("hour")])[0] == "min"
    # 7. more restarts first (same ready time)
    assert _order([_pod("calm"), _pod("crashy", restarts=3), _pod("x")])[0] == "crashy"
    # 8. newer first
    assert _order([_pod("old", created=NOW - 7200), _pod("new", created=NOW - 60), _pod("x", created=NOW - 7200)]
                  )[0] == "new"


def test_a_deletion_cost_is_read_as_the_api_helper_reads_it():
    # helper.GetDeletionCostFromPodAnnotations: an int32, anything else counts as 0
    assert [deletion_cost({"metadata": {"annotations": {POD_DELETION_COST: v}}})
            for v in ("-7", "12", "+10", "008", "2147483648", "x")] == [-7, 12, 0, 0, 0, 0]
    assert deletion_cost({"metadata": {}}) == 0


POLICY = {"semantics": "scalebridge", "min_replicas": 1, "max_replicas": 10,
          "metrics": [{"type": "pods", "name": "connections",
                       "target": {"type": "AverageValue", "average_value": 100}}],
          "behavior": {"scale_down": {"stabilization_window_seconds": 0}},
          "scale_in": {"select": "least_loaded", "metric": "connections"}}


def _run(tmp_path, kubeconfig, policy, ref=WEB, metrics=None):
    target = {"name": "web", "provider": "kubernetes", "policy": "p", "ref": ref}
    if metrics:
        target["metrics"] = metrics
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"providers": {"kubernetes": {"kubeconfig": str(kubeconfig)}},
                                    "policies": {"p": policy}, "targets": [target]}))
    audit = tmp_path / "audit.jsonl"
    seen = len(audit.read_text().splitlines()) if audit.exists() else 0
    rc = main(["run", str(path), "--once", "--audit", str(audit), "--state", str(tmp_path / "state.db")])
    return rc, [json.loads(x) for x in audit.read_text().splitlines()[seen:]]


def test_the_pods_whose_deletion_cost_was_lowered_are_the_ones_the_replicaset_removes(k8s, kubeconfig, tmp_path):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=6, requests={"cpu": "500m"})
    pods = [p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web")]
    # 255 connections against 100 a pod: 3 pods; the least loaded are the last three created,
    # which the controller's own order (all else equal: the first listed) would keep
    load = dict(zip(pods, ("90", "80", "70", "10", "2", "3")))
    k8s.set_custom_pod_metric("shop", "connections", load)
    rc, [rec] = _run(tmp_path, kubeconfig, POLICY)
    assert rc == 0, rec
    assert rec["action"] == "applied" and (rec["current_replicas"], rec["desired_replicas"]) == (6, 3), rec
    chosen = rec["scale_in"]["members"]
    assert chosen == [pods[4], pods[5], pods[3]] and rec["scale_in"]["how"] == "delete_members"
    left = {p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web")}
    assert left == set(pods[:3]), "the ReplicaSet removed exactly the chosen pods"
    patched = [r for r in k8s.requests if r.method == "PATCH" and r.resource == "pods"]
    assert sorted(r.name for r in patched) == sorted(chosen)


def test_without_a_selection_the_replicaset_chooses_by_its_own_order(k8s, kubeconfig, tmp_path):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=6, requests={"cpu": "500m"})
    pods = [p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web")]
    k8s.set_custom_pod_metric("shop", "connections", dict(zip(pods, ("90", "80", "70", "10", "2", "3"))))
    policy = {k: v for k, v in POLICY.items() if k != "scale_in"}
    rc, [rec] = _run(tmp_path, kubeconfig, policy)
    assert rc == 0 and rec["desired_replicas"] == 3 and "scale_in" not in rec
    left = {p["metadata"]["name"] for p in k8s.list("", "pods", "shop", "app=web")}
    assert left != set(pods[:3]), "all else equal the controller keeps other pods: the cost made the difference"
    assert not [r for r in k8s.requests if r.method == "PATCH" and r.resource == "pods"]


def _rollout(k8s, surge: int, updated: int) -> dict:
    """A new version rolling out: the template changed (generation bumped, observed), a
    surge of new pods beside the old ones, the controller not reconciling yet."""
    k8s.auto_reconcile = False
    obj = k8s.get("apps", "deployments", "shop", "web")
    obj["spec"]["template"]["metadata"]["labels"]["version"] = "v2"
    obj["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    obj = k8s.put("apps", "deployments", "shop", obj)
    for i in range(surge):
        k8s.add_pod("shop", f"web-v2-{i}", labels={"app": "web", "version": "v2"}, requests={"cpu": "500m"},
                    start_time=time.time() - 3600)
    obj["status"].update({"replicas": obj["spec"]["replicas"] + surge, "updatedReplicas": updated,
                          "observedGeneration": obj["metadata"]["generation"]})
    return k8s.put("apps", "deployments", "shop", obj)


def test_a_scale_up_during_a_rollout_is_written_while_the_rollout_is_in_progress(k8s, kubeconfig, tmp_path):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    _rollout(k8s, surge=1, updated=1)
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})     # 90 % of the request against 60 %
    rc, [rec] = _run(tmp_path, kubeconfig, CPU_POLICY)
    assert rc == 0, rec
    assert rec["action"] == "applied" and rec["current_replicas"] == 4 and rec["desired_replicas"] > 4, rec
    obj = k8s.get("apps", "deployments", "shop", "web")
    assert obj["spec"]["replicas"] == rec["desired_replicas"]
    assert obj["status"]["updatedReplicas"] < obj["status"]["replicas"], "the rollout is still in progress"
