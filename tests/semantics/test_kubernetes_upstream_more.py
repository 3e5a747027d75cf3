"""More kubernetes/kubernetes HPA unit tests ported to the decision protocol.

These upstream cases are neither in ``tests/conformance/kubernetes/*.json`` nor listed in
``tests/conformance/kubernetes/NOT_PORTED.md``. They come from

- ``pkg/controller/podautoscaler/metrics/utilization_test.go`` (``GetResourceUtilizationRatio``
  and ``GetMetricUsageRatio``), reached through the replica calculator, whose
  ``GetResourceReplicas`` / ``GetMetricReplicas`` return the ratio's utilization and raw
  average unchanged; the replica count each test asserts is ``ceil(ratio * readyPodCount)``
  (replica_calculator.go) of the upstream ratio, as noted per test;
- ``pkg/controller/podautoscaler/replica_calculator_test.go`` at revisions before the
  ``TestReplicaCalcResourceScale`` refactor, which removed ``TestReplicaCalcScaleUpCMExternal``
  and ``TestReplicaCalcScaleUpCMExternalNoLabels`` without folding them anywhere.

Conventions are NOT_PORTED.md's: ``now`` 1767225600, upstream zero start/transition times as
``now-3600``, samples stamped ``now-15`` with a 60 s window, the upstream test settings
(tolerance 0.1, CPU initialization period 2 m, initial readiness delay 10 s, downscale
stabilization 5 m). ``utilization_test.go`` works on raw milli-values per pod, so a member's
``requests`` and sample are that figure directly.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from scalebridge import decide

NOW = 1767225600
SETTINGS = {
    "tolerance": 0.1,
    "cpu_initialization_period_seconds": 120,
    "initial_readiness_delay_seconds": 10,
    "downscale_stabilization_seconds": 300,
}


def _member(name, cpu_request=None):
    m = {"name": name, "phase": "Running", "ready": True,
         "ready_transition_time": NOW - 3600, "start_time": NOW - 3600, "deleting": False}
    if cpu_request is not None:
        m["requests"] = {"cpu": cpu_request}
    return m


def _request(current, metric, members, samples, *, status_replicas=None):
    return {
        "semantics": "kubernetes",
        "now": NOW,
        "current_replicas": current,
        "policy": {"min_replicas": 1, "max_replicas": 1000, "metrics": [metric]},
        "settings": dict(SETTINGS),
        "observations": {
            "status_replicas": current if status_replicas is None else status_replicas,
            "members": members,
            "metrics": {metric["name"]: {"members": samples, "timestamp": NOW - 15, "window": 60}},
        },
    }


def _cpu(target):
    return {"type": "resource", "name": "cpu",
            "target": {"type": "Utilization", "average_utilization": target}}


def _qps(average_value):
    return {"type": "pods", "name": "qps",
            "target": {"type": "AverageValue", "average_value": average_value}}


def _milli(q):
    """A response quantity (number or Kubernetes quantity string) as an exact Fraction."""
    if isinstance(q, (int, float)):
        return Fraction(q)
    q = q.strip()
    if q.endswith("m"):
        return Fraction(q[:-1]) / 1000
    return Fraction(q)


def _metric0(resp):
    metrics = resp.get("metrics") or []
    assert metrics, f"no per-metric proposals in {resp!r}"
    return metrics[0]


# -- replica_calculator_test.go (pre-refactor revisions) --------------------------------------

def test_replica_calc_scale_up_cm_external():
    """replica_calculator_test.go ``TestReplicaCalcScaleUpCMExternal`` (revisions before
    ``TestReplicaCalcResourceScale``). Despite its name the case is ``metricType: podMetric``
    (the label selector is unused by ``GetMetricReplicas``): one ready pod at 8.6 qps against a
    4.4 average target -> ratio 1.95 -> 2 replicas, usage 8600m."""
    resp = decide(_request(1, _qps("4400m"), [_member("test-pod-0")], {"test-pod-0": "8600m"}))
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert m.get("replicas") == 2, m
    assert _milli(m["value"]) == Fraction(86, 10), m
    assert resp["desired_replicas"] == 2, resp


def test_replica_calc_scale_up_cm_external_no_labels():
    """replica_calculator_test.go ``TestReplicaCalcScaleUpCMExternalNoLabels`` (revisions
    before ``TestReplicaCalcResourceScale``): the same pods metric without a selector; the
    selector never reaches the decision, so the request is the previous one -> 2 replicas,
    usage 8600m."""
    resp = decide(_request(1, _qps("4.4"), [_member("test-pod-0")], {"test-pod-0": "8.6"}))
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert m.get("replicas") == 2, m
    assert _milli(m["value"]) == Fraction(86, 10), m


# -- metrics/utilization_test.go ---------------------------------------------------------------

def _utilization_case(members, samples, current):
    return decide(_request(current, _cpu(50), members, samples))


def test_get_resource_utilization_ratio_base_case():
    """metrics/utilization_test.go ``TestGetResourceUtilizationRatioBaseCase``: usage 50m and
    76m against 100m requests, target 50% -> ratio 1.26, utilization 63, raw average 63m.
    Through replica_calculator.go: ``ceil(1.26 * 2)`` = 3 replicas."""
    resp = _utilization_case([_member("test-pod-0", "100m"), _member("test-pod-1", "100m")],
                             {"test-pod-0": "50m", "test-pod-1": "76m"}, 2)
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert m.get("utilization") == 63, m
    assert _milli(m["value"]) == Fraction(63, 1000), m
    assert m.get("replicas") == 3, m


def test_get_resource_utilization_ratio_ignore_pods_with_no_request():
    """metrics/utilization_test.go ``TestGetResourceUtilizationRatioIgnorePodsWithNoRequest``:
    a 100m sample for ``test-pod-no-request``, which has no request entry, is skipped. In the
    protocol that pod is not a member (a member without a request is an error upstream,
    ``missing request for``); the ratio stays 1.26, utilization 63, raw average 63m, and the
    replica count ``ceil(1.26 * 2)`` = 3."""
    resp = _utilization_case([_member("test-pod-0", "100m"), _member("test-pod-1", "100m")],
                             {"test-pod-0": "50m", "test-pod-1": "76m",
                              "test-pod-no-request": "100m"}, 2)
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert m.get("utilization") == 63, m
    assert _milli(m["value"]) == Fraction(63, 1000), m
    assert m.get("replicas") == 3, m


def test_get_resource_utilization_ratio_extra_request():
    """metrics/utilization_test.go ``TestGetResourceUtilizationRatioExtraRequest``: a 500m
    request for ``test-pod-extra-request``, which has no sample, does not enter the ratio:
    utilization 63, raw average 63m. Through replica_calculator.go that member is a missing
    pod: the ratio 1.26 is a scale-up, the missing pod counts as 0 usage, the recomputed
    ratio 126/700/0.5 = 0.36 flips direction, so ``GetResourceReplicas`` keeps the current 3
    while still returning utilization 63 and raw 63m from the first pass."""
    resp = _utilization_case([_member("test-pod-0", "100m"), _member("test-pod-1", "100m"),
                              _member("test-pod-extra-request", "500m")],
                             {"test-pod-0": "50m", "test-pod-1": "76m"}, 3)
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert m.get("utilization") == 63, m
    assert _milli(m["value"]) == Fraction(63, 1000), m
    assert m.get("replicas") == 3, m


def test_get_resource_utilization_ratio_no_requests():
    """metrics/utilization_test.go ``TestGetResourceUtilizationRatioNoRequests``: samples for
    test-pod-0/1 but no request for either -> error ``no metrics returned matched known
    pods``. The only way the controller reaches this with pods present is samples that name
    no listed pod (an empty pod list fails earlier with ``no pods returned by selector``), so
    the members here are two other pods with requests."""
    resp = _utilization_case([_member("other-pod-0", "100m"), _member("other-pod-1", "100m")],
                             {"test-pod-0": "50m", "test-pod-1": "76m"}, 2)
    err = resp.get("error") or ""
    assert "no metrics returned matched known pods" in err, resp
    m = _metric0(resp)
    assert "no metrics returned matched known pods" in (m.get("error") or ""), m


def test_get_metric_usage_ratio_base_case():
    """metrics/utilization_test.go ``TestGetMetricUsageRatioBaseCase``: pod values 5 and 10
    against a 10 average target -> ratio 0.75, current usage 7500m. Through
    replica_calculator.go ``GetMetricReplicas``: ``ceil(0.75 * 2)`` = 2 replicas."""
    resp = decide(_request(2, _qps("10"), [_member("test-pod-0"), _member("test-pod-1")],
                           {"test-pod-0": "5000m", "test-pod-1": "10000m"}))
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert _milli(m["value"]) == Fraction(75, 10), m
    assert m.get("replicas") == 2, m
