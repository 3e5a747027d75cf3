"""The kubernetes semantics' bounds: a size of zero with a minimum disables scaling; a
current size above the maximum or below the minimum is brought within them.

Source: kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go (reconcileAutoscaler,
convertDesiredReplicasWithRules)."""

from scalebridge import decide
from scalebridge.testing.requests import cpu_request


def test_zero_current_with_min_disables_scaling():
    r = decide(cpu_request(0, "900m", members=[]))
    assert r["desired_replicas"] == 0 and r["reason"] == "ScalingDisabled"


def test_current_above_max_and_below_min():
    r = decide(cpu_request(12, "100m", policy={"max_replicas": 10}))
    assert r["desired_replicas"] == 10 and r["reason"] == "TooManyReplicas"
    r = decide(cpu_request(1, "100m", policy={"min_replicas": 3}))
    assert r["desired_replicas"] == 3 and r["reason"] == "TooFewReplicas"
