"""What an azure decision reports: the state and response shape, mode OFF reporting its
recommendation, a disabled rule reported and ignored, and the explanation's stages."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    AZURE_NOW as NOW, azure_request as request, azure_rule as rule, azure_series as series)


def test_state_and_response_shape():
    rules = [rule("cpu", "GreaterThan", 70, "Increase", cooldown=600, name="cpu-high")]
    r = decide(request(3, rules, {"cpu": series(90)}))
    assert r["metrics"] == [{"name": "cpu-high", "replicas": 4, "utilization": None, "value": 90,
                             "error": None, "triggered": True}]
    assert r["state"]["last_scale"] == {"time": NOW, "direction": "Increase", "cause": "rule",
                                        "cooldown_seconds": 600}
    assert r["state"]["scale_up_events"] == [{"time": NOW, "change": 1, "cause": "rule"}]
    assert r["recommended_replicas"] == r["desired_replicas"] == 4


def test_mode_off_reports_the_recommendation():
    """Protocol: the setting disabled (A17, mode OFF) → no change, recommendation still reported."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase")]
    r = decide(request(3, rules, {"cpu": series(90)}, mode="OFF"))
    assert (r["recommended_replicas"], r["desired_replicas"], r["reason"]) == (4, 3, "ScalingDisabled")


def test_disabled_rule_is_reported_and_ignored():
    rules = [rule("cpu", "GreaterThan", 70, "Increase", enabled=False), rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(3, rules, {"cpu": series(90)}))
    assert r["desired_replicas"] == 3 and r["metrics"][0]["triggered"] is False
    r = decide(request(3, rules, {}))   # a disabled rule's metric is not read: only the enabled one fails
    assert r["reason"] == "ProfileDefault" and "1 of 1 rules" in r["error"]


def test_explain_names_each_stage():
    rules = [rule("cpu", "GreaterThan", 50, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    r = decide(request(2, rules, {"cpu": series(28)}), explain=True)
    stages = [e["stage"] for e in r["explain"]]
    assert stages == ["rules", "flapping"]
    assert "56" in r["explain"][1]["why"]
