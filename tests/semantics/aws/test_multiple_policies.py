"""The aws semantics with several scaling policies: scale-out wins over scale-in, a
scale-in waits for a scale-out in progress (not the other way round), and a clamp
to the bounds without any policy is a boundary event.

Source: https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scale-based-on-demand.html#multiple-scaling-policy-resolution."""

from scalebridge import decide
from scalebridge.testing.requests import (
    aws_request as request, AWS_STEP_IN as STEP_IN, AWS_STEP_OUT as STEP_OUT, instances, NOW)

UG = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/"


def test_scale_out_wins_over_scale_in():
    """UG as-scale-based-on-demand.html#multiple-scaling-policy-resolution: the largest capacity wins."""
    low = {**STEP_IN, "metric": "queue", "steps": [{"lower": None, "upper": 0, "adjustment": -50}]}
    req = request(10, 70, rules=[STEP_OUT, low])
    req["observations"]["metrics"]["queue"] = {"series": [[NOW, 0]]}
    assert decide(req)["desired_replicas"] == 13


def test_scale_in_waits_while_a_scale_out_is_in_progress_but_scale_out_does_not():
    members = instances(10) + [{"name": "p", "phase": "Pending", "ready": False}]
    r = decide(request(11, 30, rules=[STEP_OUT, STEP_IN], members=members))
    assert (r["desired_replicas"], r["reason"]) == (11, "ActivityInProgress")
    assert decide(request(11, 70, rules=[STEP_OUT, STEP_IN], members=members))["desired_replicas"] == 13


def test_clamp_without_any_policy_is_a_boundary_event():
    """UG asg-capacity-limits.html: "All requests to change the Auto Scaling group's desired
    capacity … must fall within these limits"; W2: no policies, no scaling."""
    r = decide(request(12, 50, max_replicas=10))
    assert (r["desired_replicas"], r["reason"]) == (10, "TooManyReplicas")
    assert r["state"]["last_scale"]["cause"] == "boundary"
    r = decide(request(5, 50, max_replicas=10))
    assert (r["desired_replicas"], r["reason"], r["metrics"]) == (5, "DesiredWithinRange", [])
