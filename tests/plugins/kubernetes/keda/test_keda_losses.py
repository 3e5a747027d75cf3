"""What KEDA cannot say, each way, is a loss line; what it says in its own way is native."""
from __future__ import annotations

import pytest

from scalebridge.translate import NativeError, import_native, render

from .keda_cases import ext, target

KAFKA = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: orders}
spec:
  scaleTargetRef: {name: consumer}
  minReplicaCount: 1
  maxReplicaCount: 12
  triggers:
  - type: kafka
    metadata: {bootstrapServers: "kafka:9092", consumerGroup: orders, topic: orders, lagThreshold: "50",
               activationLagThreshold: "10"}
  - type: rabbitmq
    metadata: {host: "amqp://rabbit", queueName: q}
"""


def test_an_unknown_scaler_is_kept_as_an_external_metric_with_a_loss_line():
    policy, losses = import_native(KAFKA, "keda")
    assert policy["metrics"] == [
        {"type": "external", "name": "kafka_0", "target": {"type": "AverageValue", "average_value": 50},
         "activation_threshold": 10},
        {"type": "external", "name": "rabbitmq_1", "target": {"type": "AverageValue", "average_value": 1}}]
    assert losses.lines == [
        "$.spec.triggers[0]: scalebridge has no kafka metric source: kept as external metric 'kafka_0' (target from "
        "metadata.lagThreshold), to be read from a source of your own (the run configuration's "
        "metrics.kafka_0.source)",
        "$.spec.triggers[1]: scalebridge has no rabbitmq metric source: kept as external metric 'rabbitmq_1' with "
        "target 1 (no target in its metadata), to be read from a source of your own (the run configuration's "
        "metrics.rabbitmq_1.source)"]


def test_a_formula_cel_cannot_say_is_dropped_with_a_loss_line_and_the_triggers_kept():
    so = KAFKA.replace("  triggers:", "  advanced: {scalingModifiers: {formula: 'kafka_0 ?? 8', target: '2'}}\n"
                                      "  triggers:").replace("type: kafka\n", "type: kafka\n    name: kafka_0\n")
    policy, losses = import_native(so, "keda")
    assert [m["type"] for m in policy["metrics"]] == ["external", "external"]
    assert any(line.startswith("$.spec.advanced.scalingModifiers.formula: not expressible as a CEL formula "
                               "(expr's ?? (nil-coalescing") for line in losses.lines)


def test_triggers_a_formula_does_not_name_are_disabled_as_keda_replaces_them():
    so = KAFKA.replace("  triggers:", "  advanced: {scalingModifiers: {formula: 'kafka_0 * 2', target: '2'}}\n"
                                      "  triggers:").replace("type: kafka\n", "type: kafka\n    name: kafka_0\n")
    policy, _ = import_native(so, "keda")
    assert policy["metrics"][1]["enabled"] is False and "enabled" not in policy["metrics"][0]
    assert policy["metrics"][2]["expression"] == "kafka_0 * 2.0"


def test_render_names_what_keda_cannot_say():
    policy = {"name": "web", "min_replicas": 1, "max_replicas": 9, "default_replicas": 2,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 60}, "activation_threshold": 3},
                          ext("requests", 10), {"type": "pods", "name": "conn",
                                                "target": {"type": "AverageValue", "average_value": 100}},
                          {"type": "load_balancing", "name": "lb", "target": {"type": "Utilization"}}],
              "fallback": {"replicas": 4},
              "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 90,
                         "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]}
    native, losses = render(policy, "keda", target("conn"))
    assert [t["type"] for t in native["spec"]["triggers"]] == ["cpu", "prometheus", "prometheus"]
    where = [line.split(":")[0] for line in losses.lines]
    assert where == ["metrics[0].activation_threshold", "metrics[2].type", "metrics[3]", "fallback", "rules[0]",
                     "default_replicas"]
    assert "except CPU & memory" in losses.lines[3]


def test_a_formula_expr_cannot_say_is_dropped_on_render():
    policy = {"name": "w", "min_replicas": 1, "max_replicas": 9,
              "metrics": [ext("a"), {"type": "formula", "name": "composite-metric", "expression": "int(a) / 2",
                                     "target": {"type": "Value", "value": 3}}]}
    native, losses = render(policy, "keda", target("a"))
    assert "advanced" not in native["spec"]
    assert losses.lines == ["metrics[1].expression: not expressible as KEDA's expr formula (CEL's integer division "
                            "truncates; expr's / divides as floats); the formula is dropped"]


def test_modes_and_pauses_are_keda_annotations():
    base = {"name": "w", "min_replicas": 1, "max_replicas": 9, "metrics": [ext("a")]}
    off, losses = render({**base, "mode": "OFF"}, "keda", target("a"))
    assert off["metadata"]["annotations"] == {"autoscaling.keda.sh/paused": "true"} and not losses.lines
    up, _ = render({**base, "mode": "ONLY_SCALE_OUT"}, "keda", target("a"))
    assert up["metadata"]["annotations"] == {"autoscaling.keda.sh/paused-scale-in": "true"}
    held, _ = render(base, "keda", {**target("a"), "paused_replicas": 2})
    assert held["metadata"]["annotations"] == {"autoscaling.keda.sh/paused-replicas": "2"}
    policy, losses = import_native(held, "keda")
    assert policy["mode"] == "OFF" and "scalebridge pause CONFIG TARGET --replicas 2" in losses.lines[0]


def test_keda_defaults_fill_what_a_scaled_object_leaves_out():
    so = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "d"},
          "spec": {"scaleTargetRef": {"name": "x"}, "pollingInterval": 10,
                   "triggers": [{"type": "gcp-stackdriver", "metadata": {
                       "projectId": "p1", "filter": 'metric.type="storage.googleapis.com/x" AND resource.type="b"'}}]}}
    policy, losses = import_native(so, "keda")
    assert (policy["min_replicas"], policy["max_replicas"], policy["scale_to_zero_delay_seconds"]) == (0, 100, 300)
    assert policy["metrics"][0]["target"] == {"type": "AverageValue", "average_value": 5}   # targetValue default 5
    assert any("sync_period_seconds: 10" in n for n in losses.notes)
    assert any("metric_type: storage.googleapis.com/x, filter: resource.type=\"b\"" in n for n in losses.notes)


@pytest.mark.parametrize("spec,where", [
    ({"triggers": [{"type": "cpu", "metadata": {"value": "50"}}]}, "$.spec.triggers[0].metricType"),
    ({"triggers": [{"type": "prometheus", "metadata": {"query": "q", "threshold": "1"}}]},
     "$.spec.triggers[0].metadata.serverAddress"),
    ({"triggers": []}, "$.spec.triggers"),
    ({"minReplicaCount": 2, "idleReplicaCount": 2, "triggers": [{"type": "cpu", "metricType": "Utilization",
                                                                 "metadata": {"value": "50"}}]},
     "$.spec.idleReplicaCount"),
    ({"fallback": {"replicas": 2}, "triggers": [{"type": "cpu", "metricType": "Utilization",
                                                 "metadata": {"value": "50"}}]}, "$.spec.fallback.failureThreshold"),
    ({"advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleUp": {"selectPolicy": "Most"}}}},
      "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}]},
     "$.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp.selectPolicy"),
])
def test_what_keda_refuses_is_one_error_naming_the_field(spec, where):
    so = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "bad"},
          "spec": {"scaleTargetRef": {"name": "x"}, **spec}}
    with pytest.raises(NativeError) as e:
        import_native(so, "keda")
    assert e.value.where == where
