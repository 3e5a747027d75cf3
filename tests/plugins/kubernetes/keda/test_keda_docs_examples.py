"""The ScaledObject examples of KEDA's documentation (tests/plugins/kubernetes/keda/data/docs/, each
file naming its page) import and decide as the documentation says."""
from __future__ import annotations

from pathlib import Path

import pytest

from scalebridge import decide
from scalebridge.testing.requests import NOW, pods
from scalebridge.translate import import_all, import_native

DOCS = Path(__file__).resolve().parent / "data" / "docs"


def _imported(name: str) -> list:
    results = import_all((DOCS / name).read_text(encoding="utf-8"), "keda")
    from scalebridge.translate.cli import _invalid
    for policy, _ in results:
        assert _invalid(policy) is None   # what `scalebridge validate --semantics kubernetes` says
    return results


def _decide(policy: dict, current: int, values: dict, state: dict | None = None, members=None) -> dict:
    obs: dict = {"metrics": {k: ({"value": v, "timestamp": NOW - 10} if not isinstance(v, dict) else v)
                             for k, v in values.items()}}
    if members is not None:
        obs["members"] = members
    req = {"now": NOW, "current_replicas": current, "policy": policy, "observations": obs}
    if state is not None:
        req["state"] = state
    return decide(req, "kubernetes")


def test_the_prometheus_example_scales_on_threshold_100_from_zero():
    # scalers/prometheus.md: threshold '100', AverageValue (the default metricType); minReplicaCount 0 (the
    # default): KEDA activates at a value above activationThreshold 0, then the HPA takes ceil(value / 100)
    ((policy, losses),) = _imported("prometheus-scaler.yaml")
    assert policy["min_replicas"] == 0 and policy["max_replicas"] == 100
    assert policy["metrics"] == [{"type": "external", "name": "prometheus_0",
                                  "target": {"type": "AverageValue", "average_value": 100}}]
    assert not losses.lines
    assert any("metrics.prometheus_0.source: {metric_source: prometheus, query: 'sum(rate(http_requests_total" in n
               for n in losses.notes)
    assert (r := _decide(policy, 0, {"prometheus_0": 450}))["desired_replicas"] == 1 and r["reason"] == "Activated"
    assert _decide(policy, 4, {"prometheus_0": 450})["desired_replicas"] == 5
    assert _decide(policy, 0, {"prometheus_0": 0})["reason"] == "Idle"


def test_the_metric_type_examples_compute_as_the_spec_says():
    # reference/scaledobject-spec.md, triggers.metricType: 3 replicas, a queue of 20 with threshold 5 as
    # AverageValue is "20 / 5 = 4 replicas, regardless of the current replica count"; an average time of 20
    # with threshold 5 as Value is "3 * 20 / 5 = 12" (a behavior without a rate limit: the page leaves out
    # the HPA's default one)
    so = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: queue}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  advanced:
    horizontalPodAutoscalerConfig:
      behavior: {scaleUp: {policies: [{type: Percent, value: 1000, periodSeconds: 15}]}}
  triggers:
  - {type: prometheus, name: queue, metadata: {serverAddress: "http://prometheus:9090", query: q, threshold: "5"}}
  - {type: prometheus, name: wait, metricType: Value,
     metadata: {serverAddress: "http://prometheus:9090", query: w, threshold: "5"}}
"""
    policy, _ = import_native(so, "keda")
    queue_only = {**policy, "metrics": [policy["metrics"][0]]}
    wait_only = {**policy, "metrics": [policy["metrics"][1]]}
    assert _decide(queue_only, 3, {"queue": 20})["desired_replicas"] == 4
    assert _decide(wait_only, 3, {"wait": 20})["desired_replicas"] == 12


def test_the_cpu_examples_are_resource_and_container_resource_utilization():
    # scalers/cpu.md: value "50" Utilization, of the whole pod and of container foo
    (pod, _), (container, _) = _imported("cpu-scaler.yaml")
    assert pod["metrics"] == [{"type": "resource", "name": "cpu",
                               "target": {"type": "Utilization", "average_utilization": 50}}]
    assert container["metrics"][0] == {"type": "container_resource", "name": "cpu", "container": "foo",
                                       "target": {"type": "Utilization", "average_utilization": 50}}
    # 2 pods at 100 % of their 1-core request, target 50 %: ceil(2 × 100 / 50) = 4 (the HPA's formula)
    members = pods(2)
    cpu = {"members": {m["name"]: "1" for m in members}, "timestamp": NOW - 10, "window": 30}
    assert _decide(pod, 2, {"cpu": cpu}, members=members)["desired_replicas"] == 4


def test_the_compose_average_example_averages_and_activates_above_2():
    # concepts/scaling-deployments.md, "Example: compose average value": (trig_one + trig_two)/2, target 2,
    # activationTarget 2 — "If the calculated value is <=2, the ScaledObject is not Active and it'll scale
    # to 0"; the two scalers scalebridge has no source for are kept as external metrics, each a loss line
    ((policy, losses),) = _imported("scaling-modifiers-average.yaml")
    formula = policy["metrics"][-1]
    assert formula == {"type": "formula", "name": "composite-metric", "expression": "(trig_one + trig_two) / 2.0",
                       "target": {"type": "AverageValue", "average_value": 2}, "activation_threshold": 2}
    assert [line.split(":")[0] for line in losses.lines] == ["$.spec.triggers[0]", "$.spec.triggers[1]"]
    assert "no kubernetes-workload metric source: kept as external metric 'trig_one'" in losses.lines[0]
    assert _decide(policy, 3, {"trig_one": 4, "trig_two": 6})["desired_replicas"] == 3     # ceil(5 / 2)
    assert _decide(policy, 0, {"trig_one": 1, "trig_two": 3})["reason"] == "Idle"          # 2 is not above 2
    assert _decide(policy, 0, {"trig_one": 2, "trig_two": 3})["reason"] == "Activated"


def test_the_count_example_computes_5_when_two_metrics_are_above_1():
    # "If at least 2 metrics (from the list trig_one,trig_two,trig_three) have value of more than 1, then
    # return 5, otherwise return 0"
    ((policy, losses),) = _imported("scaling-modifiers-count.yaml")
    assert not losses.lines
    assert policy["metrics"][-1]["expression"] == \
        "[trig_one, trig_two, trig_three].filter(x, x > 1.0).size() > 1 ? 5 : 0"
    r = _decide(policy, 2, {"trig_one": 2, "trig_two": 3, "trig_three": 0})
    assert r["desired_replicas"] == 3    # 5 against 2 per replica
    assert _decide(policy, 2, {"trig_one": 2, "trig_two": 0, "trig_three": 0})["desired_replicas"] == 0  # idle


def test_the_fallback_example_goes_to_6_replicas_once_failures_pass_3():
    # reference/scaledobject-spec.md, fallback: failureThreshold 3, replicas 6, static — "Once that value
    # passes the failureThreshold" the deployment goes to fallback.replicas
    ((policy, _),) = _imported("fallback.yaml")
    assert policy["fallback"] == {"failure_threshold": 3, "behavior": "static", "replicas": 6}
    failed = {"prometheus_0": {"error": "prometheus: connection refused"}}
    held = _decide(policy, 3, failed, state={"fallback.failures": {"prometheus_0": 2}})
    assert held["desired_replicas"] == 3 and held["reason"] != "Fallback"          # the 3rd failure: not past
    fell = _decide(policy, 3, failed, state={"fallback.failures": {"prometheus_0": 3}})
    assert (fell["desired_replicas"], fell["reason"]) == (6, "Fallback")            # the 4th: past 3


def test_the_pause_annotations_hold_the_size_and_say_how_to_pause_a_target():
    # concepts/scaling-deployments.md, "Pausing autoscaling": paused-replicas "0" and paused "true"
    ((policy, losses),) = _imported("pause.yaml")
    assert policy["mode"] == "OFF"
    assert any("autoscaling.keda.sh/paused-replicas" in line and "scalebridge pause CONFIG TARGET --replicas 0"
               in line for line in losses.lines)
    members = pods(5)
    cpu = {"members": {m["name"]: "1" for m in members}, "timestamp": NOW - 10, "window": 30}
    assert _decide(policy, 5, {"cpu": cpu}, members=members)["desired_replicas"] == 5


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.yaml")))
def test_every_docs_example_imports_to_a_valid_policy(name):
    for policy, losses in _imported(name):
        assert policy["semantics"] == "kubernetes"
        for line in losses.lines + losses.notes:
            assert line.startswith("$"), line
