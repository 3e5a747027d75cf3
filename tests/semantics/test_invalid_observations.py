"""Impossible observations never drive a decision: a negative resource usage sample,
or a member whose request is zero (utilization is usage over request), makes the
metric error as a missing metric does, in every semantics that reads per-member usage
(gce, aws, scalebridge; kubernetes treats the pod as missing:
tests/semantics/kubernetes/test_invalid_samples.py).

Sources: a utilization is "the percentage of the requested resource"
(https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details);
GCE: a signal that cannot be computed is not used
(https://cloud.google.com/compute/docs/autoscaler/multiple-signals);
AWS target tracking: with missing data the alarm is INSUFFICIENT_DATA and no scaling
happens (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html)."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import cpu_request, pods


def _request(semantics: str, samples: list, request: str = "1") -> dict:
    """Members requesting ``request`` cores each, CPU target 50 %."""
    return cpu_request(len(samples), samples, semantics=semantics, members=pods(len(samples), request))


@pytest.mark.parametrize("semantics", ["gce", "aws", "scalebridge"])
@pytest.mark.parametrize("bad", ["-400", -1, -0.001])
def test_a_negative_usage_sample_errors_the_metric_and_the_size_stays(semantics, bad):
    r = decide(_request(semantics, [bad, "100m", "100m", "100m"]))
    assert r["desired_replicas"] == 4
    assert r["able_to_scale"] is False
    assert "invalid observation: negative cpu usage" in r["metrics"][0]["error"]


@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "aws", "scalebridge"])
def test_a_zero_cpu_request_is_an_error_in_every_semantics(semantics):
    r = decide(_request(semantics, ["400m", "400m", "400m"], request="0"))
    assert r["desired_replicas"] == 3
    assert r["able_to_scale"] is False
    assert r["metrics"][0]["error"]


@pytest.mark.parametrize("semantics", ["gce", "aws", "scalebridge"])
def test_valid_samples_still_decide(semantics):
    # the same request without the impossible sample scales out: the refusal above is the sample's
    r = decide(_request(semantics, ["900m", "900m", "900m", "900m"]))
    assert r["metrics"][0]["error"] is None
    assert r["desired_replicas"] > 4
