"""``import --from kubernetes`` reads an HPA in each version of the autoscaling API a cluster
has served: autoscaling/v2, v2beta2, v2beta1 (removed in Kubernetes 1.25, still in many
repositories) and v1, each metric as the v2 HPA that version converts to.

Sources: https://github.com/kubernetes/api/blob/master/autoscaling/v2beta1/types.go (the v2beta1
metric sources: targetAverageUtilization, targetAverageValue, targetValue, averageValue; the Object
source's object in ``target``), and the HPA walkthrough's multiple-metrics manifest as the v1.11
documentation wrote it in autoscaling/v2beta1
(https://v1-11.docs.kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale-walkthrough/)."""
from __future__ import annotations

import pytest

from scalebridge.translate import NativeError, import_native

from .test_documentation_examples import MULTIPLE_METRICS

WALKTHROUGH_V2BETA1 = """
apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata:
  name: php-apache
  namespace: default
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: php-apache
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      targetAverageUtilization: 50
  - type: Pods
    pods:
      metricName: packets-per-second
      targetAverageValue: 1k
  - type: Object
    object:
      metricName: requests-per-second
      target:
        apiVersion: extensions/v1beta1
        kind: Ingress
        name: main-route
      targetValue: 10k
"""


def test_the_v2beta1_walkthrough_is_the_v2_walkthrough():
    old, losses = import_native(WALKTHROUGH_V2BETA1, "kubernetes")
    new, _ = import_native(MULTIPLE_METRICS, "kubernetes")
    assert old == new
    assert losses.lines == []
    assert losses.notes == ["$.spec.scaleTargetRef: the scaled workload is the run configuration's `ref`, not part "
                            "of a policy",
                            "$.spec.metrics[2].object.target: the described object is the metric source's business, "
                            "not part of a policy"]


def _v2beta1(metric: str) -> str:
    return f"""
apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  maxReplicas: 5
  metrics:
  - {metric}
"""


@pytest.mark.parametrize("metric, target", [
    ("{type: Resource, resource: {name: memory, targetAverageValue: 200Mi}}",
     {"type": "AverageValue", "average_value": "200Mi"}),
    ("{type: External, external: {metricName: queue, targetAverageValue: 30}}",
     {"type": "AverageValue", "average_value": 30}),
    ("{type: External, external: {metricName: queue, targetValue: 100}}", {"type": "Value", "value": 100}),
    ("{type: Object, object: {metricName: rps, target: {kind: Service, name: web}, averageValue: 500}}",
     {"type": "AverageValue", "average_value": 500}),
    ("{type: ContainerResource, containerResource: {name: cpu, container: app, targetAverageUtilization: 60}}",
     {"type": "Utilization", "average_utilization": 60}),
])
def test_each_v2beta1_target_field_is_its_v2_target(metric, target):
    policy, _ = import_native(_v2beta1(metric), "kubernetes")
    assert policy["metrics"][0]["target"] == target


def test_a_v2beta1_metric_with_two_targets_or_a_v2_field_names_it():
    with pytest.raises(NativeError, match=r"^\$\.spec\.metrics\[0\]\.external: expected exactly one of "):
        import_native(_v2beta1("{type: External, external: {metricName: q, targetValue: 1, targetAverageValue: 2}}"),
                      "kubernetes")
    with pytest.raises(NativeError, match=r"^\$\.spec\.metrics\[0\]\.resource\.target: unknown field 'target'"):
        import_native(_v2beta1("{type: Resource, resource: {name: cpu, target: {type: Utilization}}}"), "kubernetes")
    with pytest.raises(NativeError, match=r"^\$\.spec\.behavior: unknown field 'behavior'"):
        import_native(_v2beta1("{type: Resource, resource: {name: cpu, targetAverageUtilization: 50}}")
                      + "  behavior: {scaleUp: {stabilizationWindowSeconds: 0}}\n", "kubernetes")
