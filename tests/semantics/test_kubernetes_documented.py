"""Examples from the Kubernetes HPA documentation
(https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details)."""
import pytest

from scalebridge import decide
from scalebridge.testing.requests import NOW, cpu_request, pods


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


def test_zero_current_with_min_disables_scaling():
    r = decide(cpu_request(0, "900m", members=[]))
    assert r["desired_replicas"] == 0 and r["reason"] == "ScalingDisabled"


def test_current_above_max_and_below_min():
    r = decide(cpu_request(12, "100m", policy={"max_replicas": 10}))
    assert r["desired_replicas"] == 10 and r["reason"] == "TooManyReplicas"
    r = decide(cpu_request(1, "100m", policy={"min_replicas": 3}))
    assert r["desired_replicas"] == 3 and r["reason"] == "TooFewReplicas"


def test_behaviorless_scale_up_limit():
    """Without spec.behavior the controller caps scale-up at max(2 × current, 4)
    (horizontal.go calculateScaleUpLimit)."""
    r = decide(cpu_request(3, "1000m", state={"recommendations": []}))   # raw ceil(3×100/50) = 6 ≤ max(6, 4)
    assert r["desired_replicas"] == 6
    r = decide(cpu_request(3, "2000m", state={"recommendations": []}))   # raw 12 > 6
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleUpLimit"
    r = decide(cpu_request(1, "5000m", state={"recommendations": []}))   # raw 10; limit max(2, 4) = 4
    assert r["desired_replicas"] == 4


def test_state_records_recommendation_and_event():
    r = decide(cpu_request(4, "900m", state={"recommendations": []}))
    st = r["state"]
    assert st["recommendations"] == [{"time": NOW, "replicas": 8}]
    assert st["scale_up_events"] == [{"time": NOW, "change": 4, "cause": "metric"}]
    assert st["sizes"] == [{"time": NOW, "replicas": 8}]
    assert st["last_scale"]["direction"] == "Increase"


def test_first_sight_seeds_current():
    r = decide(cpu_request(4, "100m"))
    assert r["desired_replicas"] == 4 and r["reason"] == "ScaleDownStabilized"
    assert {"time": NOW, "replicas": 4} in r["state"]["recommendations"]
