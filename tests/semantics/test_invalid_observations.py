"""Impossible observations never drive a decision: a negative resource usage sample,
or a member whose request is zero (utilization is usage over request), makes the
metric error as a missing metric does, in every semantics that reads per-member usage
(kubernetes too: the response names the member, and the HPA's missing-pod damping is
never applied to an impossible sample; tests/core/test_impossible_observations.py).

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


@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "aws", "scalebridge"])
@pytest.mark.parametrize("bad", ["-400", -1, -0.001])
def test_a_negative_usage_sample_errors_the_metric_and_the_size_stays(semantics, bad):
    req = _request(semantics, [bad, "100m", "100m", "100m"])
    member = next(iter(req["observations"]["metrics"]["cpu"]["members"]))
    r = decide(req)
    assert r["desired_replicas"] == 4
    assert r["able_to_scale"] is False
    shown = repr(bad) if isinstance(bad, str) else f"{bad:g}"
    assert r["metrics"][0]["error"] == f"invalid observation: negative value {shown} for member {member}"


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
