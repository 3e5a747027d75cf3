"""A negative resource usage sample is an impossible observation: the kubernetes
semantics treats that pod as one without a sample (missing), with the damping the
HPA gives missing pods — on a scale-up they count as 0 usage, on a scale-down as
using their whole request — so the sample never drives the ratio.

Source: the HPA's replica calculator
(kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go,
GetResourceReplicas and groupPods: a pod without a metric is "missing"), and
https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details
("if any pod is missing metrics ... assume those pods were consuming 100% of the
desired value in case of a scale down, and 0% in case of a scale up")."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import cpu_request, pods


def _with_samples(samples: list) -> dict:
    """Pods requesting 1 core each, CPU target 50 %; a None sample is a pod without one."""
    req = cpu_request(len(samples), ["1"] * len(samples), semantics="kubernetes", members=pods(len(samples), "1"))
    cpu = req["observations"]["metrics"]["cpu"]["members"]
    for name, v in zip(list(cpu), samples):
        if v is None:
            del cpu[name]
        else:
            cpu[name] = v
    return req


def test_a_negative_sample_is_a_missing_pod_on_a_scale_up():
    # without the negative pod: (900+900)/2 = 900m = 90 % against 50 % (a scale-up); the
    # missing pod then counts as 0: 1800m/3 = 60 %, ratio 1.2 -> ceil(3 x 1.2) = 4
    r = decide(_with_samples(["-400", "900m", "900m"]))
    assert r["desired_replicas"] == 4
    assert r["metrics"][0]["utilization"] == 90
    assert r["desired_replicas"] == decide(_with_samples([None, "900m", "900m"]))["desired_replicas"]


def test_a_negative_sample_is_a_missing_pod_on_a_scale_down():
    # without it: 200m = 20 % (a scale-down); the missing pod counts as its whole request:
    # (200+200+1000)/3 = 466m = 46 %, ratio 0.93, within tolerance 0.1 -> stays at 3
    r = decide(_with_samples(["-1", "200m", "200m"]))
    assert r["metrics"][0]["replicas"] == 3
    assert r["desired_replicas"] == decide(_with_samples([None, "200m", "200m"]))["desired_replicas"]
    # the negative sample is not read as a low one: three low samples propose 2
    assert decide(_with_samples(["200m", "200m", "200m"]))["metrics"][0]["replicas"] == 2


def test_every_sample_negative_is_no_metric_at_all():
    r = decide(_with_samples([-1, "-400", -0.5]))
    assert r["desired_replicas"] == 3
    assert r["able_to_scale"] is False
    assert "did not receive metrics for targeted pods" in r["metrics"][0]["error"]
