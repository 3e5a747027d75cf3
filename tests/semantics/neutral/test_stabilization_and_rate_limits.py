"""The neutral ``scalebridge`` semantics' stabilization windows and rate policies: the
10-minute downscale window by default, an optional scale-up window, Kubernetes-style
rate policies in exact arithmetic, selectPolicy Disabled.

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces. Kubernetes: https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#configurable-scaling-behavior."""

from scalebridge import decide
from scalebridge.testing.requests import neutral_request as neutral, NOW, pods


def test_ten_minute_downscale_stabilization_by_default():
    state = {"recommendations": [{"time": NOW - 590, "replicas": 8}]}
    r = decide(neutral(8, "100m", state=state))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleDownStabilized"
    state = {"recommendations": [{"time": NOW - 600, "replicas": 8}]}   # the peak left the window
    r = decide(neutral(8, "100m", state=state))
    assert r["desired_replicas"] == 2


def test_rate_policies_in_exact_arithmetic():
    # Percent 29 of 100 is exactly 29 (float64 would also be fine here; 100 × 1.29 ceil is 129)
    policy = {"max_replicas": 1000, "behavior": {"scale_up": {"policies": [{"type": "Percent", "value": 29,
                                                                             "period_seconds": 60}]}}}
    r = decide(neutral(100, "2000m", members=pods(100), policy=policy))
    assert r["desired_replicas"] == 129 and r["reason"] == "ScaleUpLimit"


def test_select_policy_disabled_blocks_that_direction():
    # the protocol: "`select_policy` `Max`, `Min` or `Disabled`" (Kubernetes-style rate policies)
    r = decide(neutral(4, "1000m", policy={"behavior": {"scale_up": {"select_policy": "Disabled"}}}))
    assert r["desired_replicas"] == 4 and r["recommended_replicas"] == 4 and r["reason"] == "ScaleUpLimit"
    r = decide(neutral(8, "100m", members=pods(8),
                       policy={"behavior": {"scale_down": {"select_policy": "Disabled",
                                                           "stabilization_window_seconds": 0}}}))
    assert r["desired_replicas"] == 8 and r["reason"] == "ScaleDownLimit"


def test_default_scale_up_rate_and_custom_scale_down_rate():
    # docs/semantics.md: "scale-up stabilization and rate | 0 s; max(+4, +100%) per 15 s"
    r = decide(neutral(2, "5000m"))       # raw 20 → 2 + max(4, 2) = 6
    assert r["desired_replicas"] == 6 and r["reason"] == "ScaleUpLimit"
    pol = {"behavior": {"scale_down": {"stabilization_window_seconds": 0,
                                       "policies": [{"type": "Pods", "value": 1, "period_seconds": 60}]}}}
    r = decide(neutral(8, "100m", members=pods(8), policy=pol))
    assert r["desired_replicas"] == 7 and r["reason"] == "ScaleDownLimit"


def test_scale_up_stabilization_window_when_configured():
    # docs/semantics.md: "stabilization over recorded recommendations in both directions"
    r = decide(neutral(4, "1000m", policy={"behavior": {"scale_up": {"stabilization_window_seconds": 60}}},
                       state={"recommendations": [{"time": NOW - 30, "replicas": 3}]}))
    assert r["desired_replicas"] == 4 and r["reason"] == "ScaleUpStabilized"
