"""How the kubernetes semantics computes each metric's replica count and combines them:
desired = ceil(current × usage / target) for resource, pods, object and external
metrics; utilization truncated to a whole percent before the ratio; the tolerance (per
direction, exact at its edge); members without a request; the external running sum's
overflow guard at MaxInt64; the highest proposal winning, an invalid metric blocking
a scale-down only, and the error wording. Includes upstream unit tests of
replica_calculator_test.go that are not among the conformance cases.

Sources: https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details; kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go (GetResourceReplicas,
GetMetricReplicas, GetExternalMetricReplicas, GetExternalPerPodMetricReplicas),
metrics/utilization.go, and horizontal.go (computeReplicasForMetrics, computeReplicasForMetric)."""
from __future__ import annotations

from fractions import Fraction

import pytest

from scalebridge import decide
from scalebridge.testing.requests import cpu_request, NOW, pods


def avg_value_request(current, usage, target, *, tolerance_up=None, metric="cpu", resource=True):
    members = pods(current)
    behavior = {"scale_up": {"tolerance": tolerance_up}} if tolerance_up is not None else None
    policy = {"min_replicas": 1, "max_replicas": 100,
              "metrics": [{"type": "resource" if resource else "pods", "name": metric,
                           "target": {"type": "AverageValue", "average_value": target}}]}
    if behavior:
        policy["behavior"] = behavior
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": current, "policy": policy,
            "observations": {"members": members,
                             "metrics": {metric: {"members": {m["name"]: usage for m in members},
                                                  "timestamp": NOW - 10, "window": 30}}}}


def test_200m_against_100m_doubles():
    """"if the current metric value is 200m, and the desired value is 100m, the number
    of replicas will be doubled, since 200.0 / 100.0 == 2.0"."""
    r = decide(avg_value_request(3, "200m", "100m", metric="requests", resource=False))
    assert r["metrics"][0]["replicas"] == 6 and r["desired_replicas"] == 6


def test_50m_against_100m_halves():
    """"If the current value is instead 50m, you'll halve the number of replicas, since 50.0 / 100.0 == 0.5"."""
    r = decide(avg_value_request(4, "50m", "100m", metric="requests", resource=False))
    assert r["metrics"][0]["replicas"] == 2
    # first sight: the controller seeds its recommendations with the current count, so the
    # default 300 s scale-down stabilization holds the first scale-down back…
    assert r["desired_replicas"] == 4 and r["reason"] == "ScaleDownStabilized"
    # …and a history of low recommendations older than the window lets it through
    r = decide({**avg_value_request(4, "50m", "100m", metric="requests", resource=False),
                "state": {"recommendations": [{"time": NOW - 400, "replicas": 4}]}})
    assert r["desired_replicas"] == 2


@pytest.mark.parametrize("usage,expected", [("105Mi", 4), ("106Mi", 5), ("104Mi", 4), ("100Mi", 4)])
def test_memory_scale_up_tolerance_5_percent(usage, expected):
    """"for a memory target of 100MiB with a scale-up tolerance of 5%, the HPA scales up
    only if the memory usage exceeds 105MiB" (Configurable tolerance)."""
    r = decide(avg_value_request(4, usage, "100Mi", tolerance_up=0.05, metric="memory"))
    assert r["desired_replicas"] == expected


def test_ratio_within_default_tolerance_holds():
    # 4 pods at 54% of a 50% target: ratio 1.08 ≤ 1.1
    r = decide(cpu_request(4, "540m"))
    assert r["desired_replicas"] == 4 and r["reason"] == "WithinTolerance"
    r = decide(cpu_request(4, "560m"))   # ratio 1.12 → ceil(4 × 1.12) = 5
    assert r["desired_replicas"] == 5


def test_utilization_truncated_before_ratio():
    """Kubernetes truncates utilization to an integer percent before the ratio
    (metrics/utilization.go GetResourceUtilizationRatio): 3 pods at 599m of 1 CPU is
    59%, not 59.9%; against a 50% target, ceil(3 × 59/50) = ceil(3.54) = 4."""
    r = decide(cpu_request(3, "599m", policy={"tolerance": 0}))
    assert r["metrics"][0]["utilization"] == 59
    assert r["metrics"][0]["replicas"] == 4


def test_missing_request_errors_with_upstream_wording():
    members = pods(2, cpu_request=None)
    r = decide(cpu_request(2, "500m", members=members))
    assert r["desired_replicas"] == 2
    assert "missing request for cpu" in r["error"]
    assert r["reason"] == "InvalidMetrics"


def test_highest_metric_wins_and_invalid_blocks_scale_down_only():
    req = cpu_request(4, "900m")
    req["policy"]["metrics"].append({"type": "pods", "name": "qps", "target": {"type": "AverageValue", "average_value": 10}})
    # qps missing entirely → invalid; cpu says scale up → proceed
    r = decide(req)
    assert r["desired_replicas"] == 8 and r["error"] is not None
    # cpu says scale down, qps invalid → no change (computeReplicasForMetrics)
    req = cpu_request(4, "100m", state={"recommendations": []})
    req["policy"]["metrics"].append({"type": "pods", "name": "qps", "target": {"type": "AverageValue", "average_value": 10}})
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics"


MAX_INT64 = 2**63 - 1


MAX_INT32 = 2**31 - 1


def _external_request(target, values, *, current=3, status=None, max_r=100):
    members = [{"name": f"p{i}", "phase": "Running", "ready": True} for i in range(current)]
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": current,
            "policy": {"min_replicas": 1, "max_replicas": max_r,
                       "metrics": [{"type": "external", "name": "q", "target": target}]},
            "observations": {"status_replicas": current if status is None else status,
                             "members": members, "metrics": {"q": {"values": values}}}}


def _milli(v):
    from scalebridge.units import milli_value
    return milli_value(v)


def test_external_per_pod_sum_wrapping_past_int64_is_read_as_max_int64():
    """replica_calculator.go ``GetExternalPerPodMetricReplicas``: the values are summed as
    ``usage = usage + val; if usage < 0 { usage = math.MaxInt64; break }``, an overflow
    guard: two values of 6e15 (6e18 milli-units each) wrap the int64 sum below zero, so
    the usage is MaxInt64, the proposal is clamped to MaxInt32 and the reported usage is
    MaxInt64 (``float64(usage) >= float64(math.MaxInt64)``)."""
    r = decide(_external_request({"type": "AverageValue", "average_value": 10}, [6 * 10**15, 6 * 10**15]))
    m = r["metrics"][0]
    assert m["replicas"] == MAX_INT32
    assert _milli(m["value"]) == MAX_INT64
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleUpLimit"   # max(2*3, 4)


@pytest.mark.parametrize("values", [[-5, 20], [20, -25]])
def test_a_negative_external_value_is_an_invalid_metric_not_the_overflow_guard(values):
    """Upstream would read a negative running sum as MaxInt64 and scale at the maximum
    rate; a negative reading of a metric the HPA scales in proportion to is an impossible
    input (scalebridge.stages.impossible), so the guard stays for what upstream computes
    from valid values, and this metric proposes nothing."""
    r = decide(_external_request({"type": "AverageValue", "average_value": 10}, values))
    m = r["metrics"][0]
    assert m["replicas"] is None and m["error"].startswith("invalid observation: negative value")
    assert r["desired_replicas"] == 3


def test_external_value_sum_stops_at_the_cap():
    """replica_calculator.go ``GetExternalMetricReplicas``: ``if val > 0 && usage >
    math.MaxInt64-val { usage = math.MaxInt64; break }``: once capped, later values are
    not added."""
    half = "4611686018427387904m"
    r = decide(_external_request({"type": "Value", "value": 10}, [half, half, "1"]))
    assert _milli(r["metrics"][0]["value"]) == MAX_INT64


def test_external_per_pod_reported_usage_at_max_int64_is_not_divided():
    """replica_calculator.go ``GetExternalPerPodMetricReplicas``: ``if float64(usage) >=
    float64(math.MaxInt64) { usage = math.MaxInt64 } else { usage = int64(math.Ceil(
    float64(usage) / float64(statusReplicas))) }``: a total at MaxInt64 is reported as
    is, not divided by the 2 status replicas. Ratio MaxInt64/(MaxInt64*2) = 0.5 ->
    ceil(MaxInt64/MaxInt64) = 1 replica."""
    big = f"{MAX_INT64}m"
    r = decide(_external_request({"type": "AverageValue", "average_value": big}, [big],
                                 current=2))
    m = r["metrics"][0]
    assert m["replicas"] == 1
    assert _milli(m["value"]) == MAX_INT64


def test_resource_metric_error_is_wrapped_as_computeReplicasForMetric_does():
    """horizontal.go ``computeReplicasForMetric`` wraps a Resource metric's error as
    ``failed to get %s resource metric value: %v`` around ``computeStatusForResourceMetricGeneric``'s
    ``failed to get %s utilization: %v``."""
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "resource", "name": "cpu",
                                   "target": {"type": "Utilization", "average_utilization": 50}}]},
           "observations": {"metrics": {}}}
    r = decide(req)
    assert r["error"] == ("invalid metrics (1 invalid out of 1), first error is: failed to get cpu "
                          "resource metric value: failed to get cpu utilization: unable to get metrics "
                          "for resource cpu: no metrics returned from resource metrics API")


def test_external_metric_error_is_wrapped_as_computeReplicasForMetric_does():
    """horizontal.go: ``failed to get %s external metric value: %v`` around
    ``computeStatusForExternalMetric``'s ``failed to get %s external metric: %v`` (AverageValue)."""
    req = _external_request({"type": "AverageValue", "average_value": 10}, [])
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert "failed to get q external metric value: failed to get q external metric: " in r["error"]


def test_object_value_without_pods_error_wording():
    """replica_calculator.go ``getUsageRatioReplicaCount``: a failing ``getReadyPodsCount``
    is returned as ``unable to calculate ready pods: %s``."""
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "object", "name": "rps",
                                   "target": {"type": "Value", "value": 10}}]},
           "observations": {"members": [], "metrics": {"rps": {"value": 100}}}}
    r = decide(req)
    assert ("failed to get object metric value: unable to calculate ready pods: no pods returned "
            "by selector while calculating replica count") in r["error"]


def _external(target, total, current, *, metrics=None, min_r=1, max_r=100, behavior=None, state=None):
    policy = {"min_replicas": min_r, "max_replicas": max_r,
              "metrics": metrics or [{"type": "external", "name": "q", "target": target}]}
    if behavior is not None:
        policy["behavior"] = behavior
    req = {"semantics": "kubernetes", "now": NOW, "current_replicas": current, "policy": policy,
           "observations": {"metrics": {"q": {"values": [total]}}},
           "state": {"recommendations": []} if state is None else state}
    return decide(req)


def test_invalid_metric_with_proposal_equal_to_current_still_reconciles():
    """horizontal.go ``computeReplicasForMetrics``: the no-decision signal (-1) is returned
    only when ``invalidMetricsCount > 0 && replicas < specReplicas``; a valid proposal equal
    to the current size goes on through normalization (its recommendation is recorded)
    with the error kept."""
    metrics = [{"type": "external", "name": "q", "target": {"type": "Value", "value": 10}},
               {"type": "external", "name": "r", "target": {"type": "Value", "value": 10}}]
    r = _external(None, 10, 3, metrics=metrics, behavior={})
    assert r["desired_replicas"] == 3
    assert r["error"].startswith("invalid metrics (1 invalid out of 2), first error is: ")
    assert [e["replicas"] for e in r["state"]["recommendations"]] == [3]


def test_external_value_exactly_at_lower_tolerance_holds():
    """replica_calculator.go ``Tolerances.isWithin``: ``(1 - 0.1) <= ratio`` is inclusive;
    a total of 27 against a Value target of 30 (ratio 0.9) keeps the size."""
    r = _external({"type": "Value", "value": 30}, 27, 4)
    assert r["desired_replicas"] == 4
    assert r["metrics"][0]["replicas"] == 4


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


def _quantity(q):
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


def test_replica_calc_scale_up_cm_external():
    """replica_calculator_test.go ``TestReplicaCalcScaleUpCMExternal`` (revisions before
    ``TestReplicaCalcResourceScale``). Despite its name the case is ``metricType: podMetric``
    (the label selector is unused by ``GetMetricReplicas``): one ready pod at 8.6 qps against a
    4.4 average target -> ratio 1.95 -> 2 replicas, usage 8600m."""
    resp = decide(_request(1, _qps("4400m"), [_member("test-pod-0")], {"test-pod-0": "8600m"}))
    m = _metric0(resp)
    assert resp.get("error") is None, resp
    assert m.get("replicas") == 2, m
    assert _quantity(m["value"]) == Fraction(86, 10), m
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
    assert _quantity(m["value"]) == Fraction(86, 10), m


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
    assert _quantity(m["value"]) == Fraction(63, 1000), m
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
    assert _quantity(m["value"]) == Fraction(63, 1000), m
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
    assert _quantity(m["value"]) == Fraction(63, 1000), m
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
    assert _quantity(m["value"]) == Fraction(75, 10), m
    assert m.get("replicas") == 2, m


@pytest.mark.parametrize("own,expected", [
    ({}, 6),                                                          # every pod at the observation's time: counted
    ({"member_timestamps": {"b": NOW - 15}}, 4),                      # b sampled before ready + window: unready
    ({"member_windows": {"b": 60}}, 4),                               # b's own window reaches past its sample
    ({"member_timestamps": {"b": NOW - 15}, "member_windows": {"b": 5}}, 6),   # a short window: b counts
])
def test_a_pods_own_sample_time_and_window_decide_its_initialization(own, expected):
    """groupPods reads each pod's ``metric.Timestamp`` and ``metric.Window`` inside the
    CPU initialization period (replica_calculator.go): a pod is unready while its
    sample predates its readiness transition plus one window. Three pods started 60 s
    ago, ready 40 s ago; a and c at 900m, b at 2 cores of 1; observation time now − 5,
    window 30 s. b unready: (900 + 900 + 0) / 3000 = 60 % of 50 → ceil(1.2 × 3) = 4;
    b counted: 126 % → 8, cut to 6 by the behavior-less scale-up limit max(2 × 3, 4)."""
    members = [{"name": n, "start_time": NOW - 60, "ready_transition_time": NOW - 40, "requests": {"cpu": "1"}}
               for n in "abc"]
    policy = {"min_replicas": 1, "max_replicas": 20,
              "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization",
                                                                         "average_utilization": 50}}]}
    obs = {"members": {"a": "900m", "b": "2", "c": "900m"}, "timestamp": NOW - 5, "window": 30, **own}
    for m in members:
        m["ready"] = True
    r = decide({"semantics": "kubernetes", "now": NOW, "current_replicas": 3, "policy": policy,
                "observations": {"members": members, "metrics": {"cpu": obs}}})
    assert r["desired_replicas"] == expected


def test_integer_division_truncates_toward_zero_as_go_does():
    """Go's int64 ``/`` truncates toward zero (``-7 / 2 == -3``), which Python's ``//``
    does only for operands of the same sign: ``trunc_div`` is Go's for every sign."""
    from hypothesis import given, strategies as st

    from scalebridge.semantics.kubernetes_replicas import trunc_div

    ints = st.integers(min_value=-2**63, max_value=2**63 - 1)

    @given(ints, ints.filter(lambda b: b != 0))
    def check(a, b):
        q = trunc_div(a, b)
        assert q == int(Fraction(a, b))             # int() of a Fraction truncates toward zero
        assert abs(q * b) <= abs(a) < abs((q + (1 if (a >= 0) == (b > 0) else -1)) * b)
    check()
    assert (trunc_div(-7, 2), trunc_div(7, -2), trunc_div(-7, -2), trunc_div(7, 2)) == (-3, -3, 3, 3)
