"""The gce semantics' predictive autoscaling: a forecast only raises the real-time
recommendation, is bounded by the maximum, is held by the stabilization period and
limited by scale-in controls, and is ignored when predictive autoscaling is off.

Source: https://cloud.google.com/compute/docs/autoscaler/predictive-autoscaling."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing.requests import (
    average_value as group, cpu, GCE_NOW as NOW, gce_request as request, GceChain, per_vm,
    vm_cpu_observations as cpu_obs, vms)

DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
CPU = "https://cloud.google.com/compute/docs/autoscaler/scaling-cpu"
PRED = "https://cloud.google.com/compute/docs/autoscaler/predictive-autoscaling"
PREDICT = "https://cloud.google.com/compute/docs/autoscaler/predictive-autoscaling"


def test_forecast_joins_by_max_and_never_scales_in():
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.6)}}, "forecast": {"replicas": 9}}
    r = decide(request(4, [cpu(60)], obs, policy={"predictive": {"mode": "ForecastAndScale"}}))
    assert r["desired_replicas"] == 9 and r["reason"] == "ForecastFloor"
    obs["forecast"]["replicas"] = 1
    assert decide(request(4, [cpu(60)], obs, policy={"predictive": {}}))["desired_replicas"] == 4
    obs["forecast"]["replicas"] = 9
    assert decide(request(4, [cpu(60)], obs, policy={"predictive": {"mode": "ForecastOnly"}}))["desired_replicas"] == 4


def test_forecast_is_bounded_by_max():
    """PRED (Configuring predictive autoscaling): "the predictive autoscaler works to maintain all
    instances at the target utilization level that you set, within the minimum and maximum bounds
    of the group, in the same way that a real-time autoscaler does." """
    r = decide(request(4, [group()], {"metrics": {"queue": {"values": [40]}}, "forecast": {"replicas": 30}},
                       policy={"predictive": {"mode": "ForecastAndScale"}}))
    assert r["recommended_replicas"] == 20


def test_real_time_signal_above_forecast_takes_priority():
    """PRED (Real-time usage data): "If the current value of a real-time signal is greater than
    the prediction, the current value of the signal takes priority over the prediction." """
    r = decide(request(4, [group()], {"metrics": {"queue": {"values": [120]}}, "forecast": {"replicas": 6}},
                       policy={"predictive": {"mode": "ForecastAndScale"}}))
    assert r["recommended_replicas"] == 12


PREDICTIVE = {"predictive": {"mode": "ForecastAndScale"}}


def test_forecast_only_raises_the_real_time_recommendation():
    """PREDICT: "With predictive autoscaling enabled, the autoscaler works with real-time
    data as well as with historical data to cover both the current and forecasted load."
    A forecast of 9 over a real-time 4 → 9; a forecast of 2 under it leaves 4."""
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.6)}}}
    r = decide(request(4, [cpu(60)], {**obs, "forecast": {"replicas": 9}}, policy=PREDICTIVE))
    assert r["desired_replicas"] == 9 and r["reason"] == "ForecastFloor"
    r = decide(request(4, [cpu(60)], {**obs, "forecast": {"replicas": 2}}, policy=PREDICTIVE))
    assert r["desired_replicas"] == 4


def test_forecast_is_ignored_without_predictive_autoscaling():
    """REST predictiveMethod NONE: "No predictive method is used. The autoscaler scales the
    group to meet current demand based on real-time metrics"."""
    members = vms(4)
    r = decide(request(4, [cpu(60)], {"members": members, "forecast": {"replicas": 9},
                                      "metrics": {"cpu": {"members": per_vm(members, 0.6)}}}))
    assert r["desired_replicas"] == 4


def test_forecast_peak_is_held_by_the_stabilization_period():
    """DECIDE: the autoscaler "sets the group's recommended size to the number of virtual
    machine (VM) instances that are required in order to serve peak load over the
    stabilization period" and "If you enable predictive autoscaling, then the autoscaler
    uses historical CPU utilization patterns to forecast future load, and it sets the
    group's recommended size based on its prediction." A forecast of 9 five minutes ago
    still holds 9 now that both the forecast and the load ask for 3."""
    members = vms(9)
    state = {"recommendations": [{"time": NOW - 300, "replicas": 9}], "sizes": [{"time": NOW - 300, "replicas": 9}]}
    r = decide(request(9, [cpu(60)], {"members": members, "forecast": {"replicas": 3},
                                      "metrics": {"cpu": {"members": per_vm(members, 0.2)}}},
                       policy=PREDICTIVE, state=state))
    assert r["desired_replicas"] == 9 and r["reason"] == "ScaleDownStabilized"


def test_scale_in_after_a_forecast_is_limited_by_scale_in_controls():
    """DECIDE: "If your autoscaling policy includes scale-in controls, then the recommended
    size is further constrained by your scale-in controls." After the forecast peak of 9
    leaves the stabilization period, at most 2 VMs may go within 20 minutes → 7."""
    members = vms(9)
    state = {"recommendations": [{"time": NOW - 700, "replicas": 9}], "sizes": [{"time": NOW - 700, "replicas": 9}]}
    policy = {**PREDICTIVE, "scale_in_control": {"max_scaled_in_replicas": {"fixed": 2}, "time_window_seconds": 1200}}
    r = decide(request(9, [cpu(60)], {"members": members, "forecast": {"replicas": 3},
                                      "metrics": {"cpu": {"members": per_vm(members, 0.2)}}},
                       policy=policy, state=state))
    assert r["desired_replicas"] == 7 and r["reason"] == "ScaleInControlled"


T0 = NOW


MIN = 60.0


def test_forecast_raises_ahead_of_load_then_stabilization_holds_it():
    """DECIDE: "If predictive autoscaling is enabled, the autoscaler forecasts future
    load based on historical CPU utilization and sets the recommended size based on the
    prediction"; REST predictiveMethod OPTIMIZE_AVAILABILITY: "scaling out ahead of
    anticipated demand". The forecast rises to 9 before the load does; when it falls back,
    the 9 is a peak of the stabilization period like any other."""
    pol = {"predictive": {"mode": "ForecastAndScale"}}
    c = GceChain([cpu(60)], policy=pol, current=3)
    # the load stays 3 VMs' worth: 3 VMs at 60 %, then 9 VMs at 20 %
    seq = [(0, 0.6, 3), (1, 0.6, 9), (2, 0.2, 9)] + [(k, 0.2, 3) for k in range(3, 14)]
    for minute, util, fc in seq:
        now = T0 + minute * MIN
        obs = cpu_obs(now, c.current, util) | {"forecast": {"replicas": fc}}
        c.step(now, obs)
    d = {k: (c.log[k * MIN]["desired_replicas"], c.log[k * MIN]["reason"]) for k in range(14)}
    assert d[0][0] == 3
    assert d[1] == (9, "ForecastFloor")               # ahead of the (real-time) load
    assert d[3] == (9, "ScaleDownStabilized") and d[11] == (9, "ScaleDownStabilized")
    assert d[12] == (3, "DesiredWithinRange")       # the 9 of minute 2 left at minute 12
