"""Shadow mode beside a real-shaped HPA, and Kubernetes Events for scalebridge's scale
actions, through the real ``kubernetes`` client against the test API server.

The HPA's status and Events are written as its controller writes them
(pkg/controller/podautoscaler/horizontal.go: ``setStatus``/``updateStatus``, and
``SuccessfulRescale`` "New size: %d; reason: %s" recorded with client-go's
``tools/record``, core/v1); scalebridge's Events are events.k8s.io/v1 in the same words,
aggregated as client-go's ``tools/events`` recorder aggregates (a series from the second
isomorphic event, flushed after 6 idle minutes)."""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.controller.loop import build_controller
from scalebridge.providers import ScaleNotice

from .test_run_once import CPU_POLICY, WEB, long_running

HPA = {"metadata": {"name": "web"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                    "type": "Utilization", "averageUtilization": 60}}}]}}
RESCALE = "New size: 5; reason: cpu resource utilization (percentage of request) above target"


def _config(tmp_path, kubeconfig, **target) -> str:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({
        "providers": {"kubernetes": {"kubeconfig": str(kubeconfig)}}, "policies": {"p": CPU_POLICY},
        "targets": [{"name": "web", "provider": "kubernetes", "policy": "p", "ref": WEB, **target}]}))
    return str(path)


def _writes(k8s) -> list:
    return [(r.method, r.group, r.resource, r.subresource) for r in k8s.requests if r.method != "GET"]


def _hpa_decides(k8s, *, utilization: int, desired: int, current: int, limited: bool) -> None:
    """The HPA's controller after one evaluation: its status, its Event, the workload scaled."""
    now = time.time()
    k8s.set_hpa_status("shop", "web", {
        "currentReplicas": current, "desiredReplicas": desired,
        "lastScaleTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": utilization, "averageValue": "450m"}}}],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "reason": "SucceededRescale",
             "message": f"the HPA controller was able to update the target scale to {desired}"},
            {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
             "message": "the HPA was able to successfully calculate a replica count from cpu resource "
                        "utilization (percentage of request)"},
            {"type": "ScalingLimited", "status": "True" if limited else "False",
             "reason": "ScaleUpLimit" if limited else "DesiredWithinRange",
             "message": "the desired replica count is increasing faster than the maximum scale rate"
             if limited else "the desired count is within the acceptable range"}]})
    k8s.add_event("shop", {"kind": "HorizontalPodAutoscaler", "name": "web", "apiVersion": "autoscaling/v2"},
                  "SuccessfulRescale", RESCALE, at=now)
    d = k8s.get("apps", "deployments", "shop", "web")
    d["spec"]["replicas"] = desired
    k8s.put("apps", "deployments", "shop", d)


def test_an_hpas_status_and_events_are_read_and_compared_naming_the_first_differing_stage(
        k8s, kubeconfig, tmp_path):
    # 4 pods at 450m of 500m (90 %) against 60 %: the kubernetes semantics decide ceil(4 × 1.5) = 6
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", HPA)
    audit = tmp_path / "audit.jsonl"
    c = build_controller(_config(tmp_path, kubeconfig, shadow=True), state=str(tmp_path / "s.db"),
                         audit=str(audit))
    try:
        assert c.run(once=True) == 0        # decides 6 from 4; the HPA has not decided yet
        # the HPA, on the same 90 %, went to 5 only: a scale-up rate limit held it (ScalingLimited)
        _hpa_decides(k8s, utilization=90, desired=5, current=4, limited=True)
        assert c.run(once=True) == 0
    finally:
        c.close()
    first, second = [json.loads(x) for x in audit.read_text().splitlines()]
    assert first["action"] == "shadow" and first["desired_replicas"] == 6
    assert first["shadow"]["compared"] is False
    s = second["shadow"]
    assert s["native_autoscaler"] == "HorizontalPodAutoscaler shop/web"
    assert (s["scalebridge_replicas"], s["native_replicas"], s["native_current"]) == (6, 5, 4)
    assert s["compared"] is True and s["agree"] is False and s["difference"] == 1
    assert s["native_stage"] == "limits" and s["native_reason"] == "ScaleUpLimit"
    # the kubernetes semantics' trace (no behavior): metrics 6, stabilization 6, limits 6 — the HPA's gave 5
    assert s["stage"] == "limits" and s["detail"].endswith("; native 5")
    assert s["inputs_match"] is True and s["inputs"]["cpu"] == {"native": 90.0, "scalebridge": 90.0, "match": True}
    assert [a["to"] for a in s["native_actions"]] == [5]
    # never written: no write to the workload or its scale, only scalebridge's own Events
    assert all(g == "events.k8s.io" for _, g, _, _ in _writes(k8s)), _writes(k8s)


def test_different_inputs_are_reported_and_the_stage_found_from_scalebridges_own_trace(k8s, kubeconfig, tmp_path):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", HPA)
    audit = tmp_path / "audit.jsonl"
    c = build_controller(_config(tmp_path, kubeconfig, shadow=True), state=str(tmp_path / "s.db"),
                         audit=str(audit))
    try:
        c.run(once=True)
        # its metrics pipeline saw 70 %: ceil(4 × 70 / 60) = 5, within range
        _hpa_decides(k8s, utilization=70, desired=5, current=4, limited=False)
        c.run(once=True)
    finally:
        c.close()
    s = json.loads(audit.read_text().splitlines()[-1])["shadow"]
    assert s["inputs_match"] is False and s["inputs"]["cpu"]["native"] == 70.0
    # its conditions are not trusted across different inputs: the stage that carried scalebridge above 5
    assert s["stage"] == "metrics" and s["detail"].startswith("metrics 4 → 6")


def test_a_scale_records_an_event_on_the_workload_in_the_hpas_words(k8s, kubeconfig, tmp_path):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    c = build_controller(_config(tmp_path, kubeconfig), state=str(tmp_path / "s.db"))
    try:
        assert c.run(once=True) == 0
    finally:
        c.close()
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 6
    [e] = k8s.list("events.k8s.io", "events", "shop", field_selector="regarding.name=web")
    assert e["regarding"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
    assert (e["type"], e["reason"]) == ("Normal", "SuccessfulRescale")
    assert e["note"] == "New size: 6; reason: cpu resource utilization (percentage of request) above target"
    assert e["reportingController"] == "scalebridge.io/scalebridge" and e["eventTime"]


def test_events_are_aggregated_into_a_series_not_one_per_sync(k8s, kubeconfig, provider):
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    t = provider.target(WEB)
    t0 = 1796150000.0

    def scale(at, desired):
        t.record_event(ScaleNotice("rescaled", 4, desired, "DesiredWithinRange", t0 + at, "metric", "cpu",
                                   "resource"))

    for i, at in enumerate((0, 15, 30, 45, 60)):
        scale(at, 5 + i)
    events = k8s.list("events.k8s.io", "events", "shop")
    assert len(events) == 1
    # the second isomorphic event made it a series; the later ones are counted, not sent
    assert events[0]["series"]["count"] == 2
    assert [(r.method, r.resource) for r in k8s.requests if r.group == "events.k8s.io"] == \
        [("POST", "events"), ("PATCH", "events")]
    scale(60 + 7 * 60, 9)    # 7 idle minutes later: the series is finished with its count, a new Event starts
    events = sorted(k8s.list("events.k8s.io", "events", "shop"), key=lambda e: e["eventTime"])
    assert len(events) == 2
    assert events[0]["series"]["count"] == 5 and "series" not in events[1]
    assert events[1]["note"].startswith("New size: 9;")


def test_the_recorder_drops_events_beyond_the_spam_filters_burst():
    from scalebridge_kubernetes.events import EventRecorder
    created = []
    r = EventRecorder(lambda ns, body: created.append(body), lambda ns, name, body: None, instance="x")
    regarding = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
    for i in range(30):      # 30 different reasons at once: not isomorphic, one token each
        r.record(1000.0, regarding, "Normal", f"Reason{i}", "n")
    assert len(created) == 25 and r.dropped == 5
    r.record(1000.0 + 300.0, regarding, "Normal", "Later", "n")   # one token refilled per 300 s
    assert len(created) == 26
    r.record(1000.0 + 300.0, regarding, "Warning", "Other", "n")  # a bucket per type
    assert len(created) == 27


def test_a_shadow_target_is_never_written_when_reading_the_hpa_fails(k8s, kubeconfig, tmp_path):
    # 4 pods at 90 % against 60 %: a controller not in shadow would write 6
    long_running(k8s, k8s.add_deployment, "shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", HPA)
    k8s.inject(500, path_contains="horizontalpodautoscalers", times=None)
    audit = tmp_path / "audit.jsonl"
    c = build_controller(_config(tmp_path, kubeconfig, shadow=True), state=str(tmp_path / "s.db"),
                         audit=str(audit))
    try:
        for _ in range(3):
            assert c.run(once=True) == 0
    finally:
        c.close()
    records = [json.loads(x) for x in audit.read_text().splitlines()]
    assert [r["action"] for r in records] == ["shadow"] * 3
    assert all(r["desired_replicas"] == 6 and "native_read_error" in r["shadow"] for r in records)
    assert not [w for w in _writes(k8s) if w[1] != "events.k8s.io"]
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 4
