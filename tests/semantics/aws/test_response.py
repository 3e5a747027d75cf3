"""What an aws decision reports: capacity in weighted units, ONLY_SCALE_OUT reporting
the scale-in it does not make, per-policy metrics as written, missing observations,
a proposal replacing the policies but not the waits and bounds, and the explanation's stages.

Source: https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-mixed-instances-groups-instance-weighting.html
(capacity units)."""

from scalebridge import decide
from scalebridge.testing.requests import (
    aws_request as request, AWS_STEP_IN as STEP_IN, AWS_STEP_OUT as STEP_OUT, AWS_TT_CPU as TT_CPU,
    aws_warming_group as _warming_group, instances)

UG = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/"


def test_weighted_capacity_units():
    """UG as-scaling-simple-step.html#as-scaling-adjustment: "When instance weighting is used …
    The value is in capacity units" — bases are Σ weight."""
    members = instances(3, weight=4)
    rule = {**STEP_OUT, "adjustment_type": "ChangeInCapacity", "steps": [{"lower": 0, "upper": None, "adjustment": 2}]}
    assert decide(request(12, 60, rules=[rule], members=members))["desired_replicas"] == 14


def test_only_scale_out_mode_reports_the_scale_in():
    r = decide(request(14, 40, rules=[STEP_OUT, STEP_IN], mode="ONLY_SCALE_OUT"))
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (13, 14, "ScalingDisabled")


def test_response_metrics_follow_the_policy_and_read_as_written():
    rules = [STEP_OUT, {**STEP_IN, "enabled": False}]
    r = decide(request(10, 60, rules=rules, metrics=[TT_CPU, {**TT_CPU, "enabled": False}]))
    m = r["metrics"]
    assert [e["name"] for e in m] == ["cpu"] * 4
    assert m[0]["value"] == 60 and isinstance(m[0]["value"], int) and m[0]["utilization"] == 60
    assert m[0]["replicas"] == 12 and m[1]["error"] == "disabled"
    assert m[2]["triggered"] and m[2]["replicas"] == 11
    assert m[3] == {"name": "cpu", "replicas": None, "utilization": None, "value": None, "error": "disabled",
                    "triggered": False}
    assert r["desired_replicas"] == 12


def test_missing_observations_are_reported():
    r = decide(request(4, 60, rules=[{**STEP_OUT, "metric": "rps"}], metrics=[{**TT_CPU, "name": "mem"}]))
    assert r["metrics"][0]["error"].startswith("insufficient data")
    assert "no observations for metric 'rps'" in r["metrics"][1]["error"]
    # the protocol (Response, error): "set, with desired_replicas == current_replicas, when no
    # decision can be made (every metric failed …)" — AWS keeps the group as it is
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics"
    assert r["error"].startswith("every metric failed (2 of 2), first error is: insufficient data")


def test_a_metric_with_data_means_no_error_even_if_another_lacks_it():
    r = decide(request(4, 60, metrics=[TT_CPU, {**TT_CPU, "name": "mem"}]))
    assert r["metrics"][1]["error"].startswith("insufficient data")
    assert r["error"] is None and r["reason"] != "InvalidMetrics"


def test_a_proposal_replaces_the_policies_but_not_the_waits_and_bounds():
    """Protocol observations.proposal: "metric calculation is skipped; stabilization, rate limits,
    profiles and bounds still apply"."""
    req = request(10, 90, rules=[STEP_OUT], max_replicas=20)
    req["observations"]["proposal"] = 25
    r = decide(req)
    assert (r["desired_replicas"], r["reason"], r["metrics"]) == (20, "TooManyReplicas", [])
    req = request(11, 90, rules=[STEP_OUT], members=_warming_group())
    req["observations"]["proposal"] = 5
    assert decide(req)["reason"] == "ScaleDownStabilized"


def test_explain_names_each_stage():
    r = decide(request(11, 70, rules=[STEP_OUT, STEP_IN], members=_warming_group()), explain=True)
    stages = [e["stage"] for e in r["explain"]]
    assert "step rule" in stages and "alarm" in stages and "combine" in stages
