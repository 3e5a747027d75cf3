"""The azure semantics' predictive autoscale: a forecast scale-out within the look-ahead,
never a scale-in, bounded by the maximum; a capacity forecast as a floor.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-predictive."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    AZURE_NOW as NOW, azure_request as request, azure_rule as rule, azure_series as series)

PRED_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-predictive"


def test_predictive_enabled_fires_scale_out_within_look_ahead():
    """PRED_URL: "If you want your Virtual Machine Scale Set to scale out when the CPU usage exceeds 70% and
    actual or predicted data shows that CPU usage is or will be over 70%, then a scale out will occur." and
    "Forecast only allows you to view your predicted CPU forecast without triggering the scaling action"."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    metrics = {"cpu": {**series(50), "forecast": [[NOW + 900, 85]]}}
    on = decide(request(4, rules, metrics, predictive={"mode": "Enabled", "look_ahead_seconds": 1800}))
    assert on["desired_replicas"] == 5 and on["metrics"][0]["forecast_triggered"] is True
    only = decide(request(4, rules, metrics, predictive={"mode": "ForecastOnly", "look_ahead_seconds": 1800}))
    assert only["desired_replicas"] == 4
    assert only["metrics"][0]["triggered"] is False and only["metrics"][0]["forecast_triggered"] is True
    # A-GAP-13: without look_ahead_seconds, one time grain ahead
    near = {"cpu": {**series(50), "forecast": [[NOW + 60, 85], [NOW + 120, 99]]}}
    assert decide(request(4, rules, near, predictive={"mode": "Enabled"}))["desired_replicas"] == 5
    far = {"cpu": {**series(50), "forecast": [[NOW + 120, 99]]}}
    assert decide(request(4, rules, far, predictive={"mode": "Enabled"}))["desired_replicas"] == 4


def test_predictive_never_scales_in():
    """PRED_URL: "Predictive autoscale supports scale-out only." """
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    metrics = {"cpu": {**series(50), "forecast": [[NOW + 300, 5]]}}
    r = decide(request(4, rules, metrics, predictive={"mode": "Enabled", "look_ahead_seconds": 1800}))
    assert r["desired_replicas"] == 4


def test_capacity_forecast_is_a_floor_and_proposal_replaces_rules():
    """Protocol (observations.forecast): a capacity forecast joins by max and never scales in by itself;
    it is ignored under ForecastOnly. ``observations.proposal`` replaces the rules; bounds still apply."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]
    req = request(4, rules, {"cpu": series(50)}, predictive={"mode": "ForecastAndScale"})
    req["observations"]["forecast"] = {"replicas": 7}
    r = decide(req)
    assert (r["desired_replicas"], r["reason"]) == (7, "ForecastFloor")
    assert r["state"]["scale_up_events"][-1]["cause"] == "forecast"
    req["observations"]["forecast"] = {"replicas": 2}
    assert decide(req)["desired_replicas"] == 4
    req["policy"]["predictive"] = {"mode": "ForecastOnly"}
    req["observations"]["forecast"] = {"replicas": 7}
    assert decide(req)["desired_replicas"] == 4
    req = request(4, rules, {"cpu": series(50)})
    req["observations"]["proposal"] = 30
    r = decide(req)
    assert (r["desired_replicas"], r["reason"]) == (10, "TooManyReplicas")


def test_predictive_scale_out_adheres_to_the_maximum():
    """pred: "Predictive autoscale adheres to the scaling boundaries you've set for your
    virtual machine scale set. When the system predicts that the percentage CPU load of
    your virtual machine scale set will cross your scale-out boundary, new instances are
    added according to your specifications." (PRED_URL). At the maximum, a forecast above
    the threshold adds nothing; one below the maximum adds the rule's count."""
    rules = [rule("cpu", "GreaterThan", 70, "Increase", value=2), rule("cpu", "LessThan", 30, "Decrease")]
    obs = {"cpu": {**series(50), "forecast": [[NOW + 600, 85]]}}
    pred = {"mode": "Enabled", "look_ahead_seconds": 1800}
    at_max = decide(request(4, rules, obs, min_replicas=1, max_replicas=4, predictive=pred))
    assert at_max["desired_replicas"] == 4
    below = decide(request(3, rules, obs, min_replicas=1, max_replicas=4, predictive=pred))
    assert below["desired_replicas"] == 4
    free = decide(request(2, rules, obs, min_replicas=1, max_replicas=4, predictive=pred))
    assert free["desired_replicas"] == 4 and free["metrics"][0]["forecast_triggered"] is True
