"""The gce semantics against the Compute Engine autoscaler documentation.

Each worked example of the GCE pages is a test citing its URL; the conformance
cases (tests/conformance/gce/cases.json) cover the same ground request by
request, these add the multi-step behaviour (stabilization over time, scale-in
controls over time) and the undocumented choices of docs/research/gce.md.
"""
from __future__ import annotations

import copy

import pytest

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.protocol import Observations

MULTI = "https://cloud.google.com/compute/docs/autoscaler/multiple-signals"
DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
MON = "https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics"
# Google Cloud blog, "Scale in at your own pace with Compute Engine autoscaler controls" (2020), mirror:
BLOG = "https://globalcloudplatforms.com/2020/11/07/scale-in-at-your-own-pace-with-compute-engine-autoscaler-controls/"

# Wednesday 2026-01-14 12:00 America/New_York (17:00 UTC)
WED_NOON_NY = 1768410000.0


def vms(n: int, *, age: float = 3600.0, now: float = WED_NOON_NY, prefix: str = "vm") -> list[dict]:
    return [{"name": f"{prefix}-{i}", "phase": "Running", "ready": True,
             "ready_transition_time": now - age, "start_time": now - age, "requests": {"cpu": 1}}
            for i in range(n)]


def per_vm(members: list[dict], value) -> dict:
    return {m["name"]: value for m in members}


def request(current: int, metrics: list[dict], observations: dict, *, now: float = WED_NOON_NY,
            policy: dict | None = None, state: dict | None = None) -> dict:
    pol = {"min_replicas": 1, "max_replicas": 20, "metrics": metrics}
    pol.update(policy or {})
    return {"semantics": "gce", "now": now, "current_replicas": current, "policy": pol,
            "observations": observations, "state": {"recommendations": []} if state is None else state}


def cpu(target: float) -> dict:
    return {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": target}}


def queue(assignment: float = 10) -> dict:
    return {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": assignment}}


# ----------------------------------------------------------------------------- multiple signals


def four_signal_example(now: float = WED_NOON_NY) -> dict:
    """The page's example: cpuUtilization 0.8, loadBalancingUtilization 0.6,
    metric1 target 1000, metric2 target 2000, two schedules, on "a MIG that
    contains 10 VMs" measuring 0.5, 0.4, 1100 and 2700."""
    members = vms(10, now=now)
    return request(10, [
        cpu(80),
        {"type": "load_balancing", "name": "lb", "target": {"type": "Utilization", "average_utilization": 60}},
        {"type": "pods", "name": "metric1", "target": {"type": "AverageValue", "average_value": 1000}},
        {"type": "pods", "name": "metric2", "target": {"type": "AverageValue", "average_value": 2000}},
    ], {"members": members,
        "metrics": {"cpu": {"members": per_vm(members, 0.5)}, "lb": {"value": 40},
                    "metric1": {"members": per_vm(members, 1100)},
                    "metric2": {"members": per_vm(members, 2700)}}},
        now=now,
        policy={"schedules": [
            {"name": "weekend", "schedule": "0 0 * * SAT,SUN", "time_zone": "America/New_York",
             "duration_seconds": 86400, "min_required_replicas": 6},
            {"name": "weekday", "schedule": "0 9 * * MON-FRI", "time_zone": "America/New_York",
             "duration_seconds": 28800, "min_required_replicas": 15}]})


def test_four_signals_7_7_11_14_and_weekday_schedule_15():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "In this case, the autoscaler resizes the MIG to 15 VMs if the
    second schedule is currently active or to 14 VMs otherwise." Per signal:
    ceil(10·0.5/0.8) = 7, ceil(10·0.4/0.6) = 7, 10·1100/1000 = 11, ceil(13.5) = 14."""
    r = decide(four_signal_example())
    assert [m["replicas"] for m in r["metrics"]] == [7, 7, 11, 14]
    assert r["recommended_replicas"] == r["desired_replicas"] == 15
    assert r["reason"] == "ScheduleFloor"


def test_four_signals_outside_the_schedule_gives_14():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "… or to 14 VMs otherwise" (Wednesday 18:00 New York: the 8-hour
    weekday schedule from 09:00 has ended)."""
    r = decide(four_signal_example(now=WED_NOON_NY + 6 * 3600))
    assert [m["replicas"] for m in r["metrics"]] == [7, 7, 11, 14]
    assert r["desired_replicas"] == 14 and r["reason"] == "DesiredWithinRange"


def test_four_signals_weekend_schedule_6_is_below_14():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "A minimum of 6 VMs every Saturday and Sunday at 12:00 AM for 24 hours":
    active on Saturday noon, but 6 < 14."""
    r = decide(four_signal_example(now=WED_NOON_NY + 3 * 86400))
    assert r["desired_replicas"] == 14


def test_metric1_is_exactly_11_and_proposals_are_exact():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: metric1 "1100" against "1000" on 10 VMs is 11. Proposals are exact:
    in binary floating point 3 × 0.8 / 0.8 is 3.0000000000000004 (ceiling 4) and
    3 × 0.2 / 0.6 is 1.0000000000000002 (ceiling 2)."""
    assert 3 * 0.8 / 0.8 > 3 and 3 * 0.2 / 0.6 > 1          # the float trap
    members = vms(10)
    m = {"type": "pods", "name": "m", "target": {"type": "AverageValue", "average_value": 1000}}
    r = decide(request(10, [m], {"members": members, "metrics": {"m": {"members": per_vm(members, 1100)}}}))
    assert r["metrics"][0]["replicas"] == 11
    members = vms(3)
    for target, value, want in [(0.8, 0.8, 3), (0.6, 0.2, 1), ("800m", "800m", 3)]:
        m = {"type": "pods", "name": "m", "target": {"type": "AverageValue", "average_value": target}}
        r = decide(request(3, [m], {"members": members, "metrics": {"m": {"members": per_vm(members, value)}}}))
        assert r["metrics"][0]["replicas"] == want, (target, value)


def test_highest_of_several_signals_wins():
    """https://cloud.google.com/compute/docs/autoscaler/multiple-signals: "calculating the recommended number of VMs for each signal and then
    picking the signal that results in the largest number of VMs"."""
    members = vms(4)
    metrics = [cpu(60), queue(10)]
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.3)}, "queue": {"values": [70]}}}
    r = decide(request(4, metrics, obs))
    assert [m["replicas"] for m in r["metrics"]] == [2, 7]
    assert r["desired_replicas"] == 7
    obs["metrics"]["cpu"]["members"] = per_vm(members, 0.9)     # now CPU asks for 6 (90% of 1 vCPU)
    obs["metrics"]["queue"]["values"] = [50]                    # and the queue for 5
    r = decide(request(4, metrics, obs))
    assert [m["replicas"] for m in r["metrics"]] == [6, 5] and r["desired_replicas"] == 6


# ----------------------------------------------------------------------------- rounding


def test_rounds_up_when_adding_1_5_instances():
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions: "if you set a utilization target of 0.7 … adding 1.5 virtual machine
    (VM) instances … the autoscaler rounds up and adds two instances."
    4 VMs at 96.25 % need 4·96.25/70 = 5.5 VMs."""
    members = vms(4)
    r = decide(request(4, [cpu(70)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9625)}}}))
    assert r["desired_replicas"] == 6 and r["metrics"][0]["utilization"] == 96


def test_removes_one_when_removing_1_5_would_reach_target():
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions (older revision): "if the autoscaler determines that removing 1.5
    virtual machines would increase your utilization to close to 0.7, it will
    remove just one virtual machine." 4 VMs at 43.75 %: 2.5 needed → 3."""
    members = vms(4)
    r = decide(request(4, [cpu(70)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.4375)}}}))
    assert r["desired_replicas"] == 3


def test_no_tolerance_band():
    """GCE has no tolerance: 4 VMs at 61 % of a 60 % target scale out to 5
    (Kubernetes' 0.1 tolerance would hold 4)."""
    members = vms(4)
    r = decide(request(4, [cpu(60)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.61)}}}))
    assert r["desired_replicas"] == 5


# ----------------------------------------------------------------------------- defaults


def test_default_is_cpu_60_percent():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers: "If none of these are specified, the default will be to autoscale
    based on cpuUtilization to 0.6 or 60%." """
    members = vms(4)
    req = request(4, [], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}})
    del req["policy"]["metrics"]
    r = decide(req)
    assert r["desired_replicas"] == 6 and r["metrics"][0]["name"] == "cpu"


def test_min_replicas_is_required():
    from scalebridge.errors import RequestError
    req = request(4, [cpu(60)], {})
    del req["policy"]["min_replicas"]
    with pytest.raises(RequestError) as e:
        decide(req)
    assert e.value.path == "$.policy.min_replicas"


def test_max_replicas_is_required():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers: maxNumReplicas "is required when creating or updating an autoscaler"."""
    from scalebridge.errors import RequestError
    req = request(4, [cpu(60)], {})
    del req["policy"]["max_replicas"]
    with pytest.raises(RequestError) as e:
        decide(req)
    assert e.value.path == "$.policy.max_replicas"


# ----------------------------------------------------------------------------- stabilization


def queue_obs(depth: float) -> Observations:
    return Observations.model_validate({"metrics": {"queue": {"values": [depth]}}})


def test_ten_minute_stabilization_holds_scale_in_until_the_peak_leaves():
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions: "…required in order to serve peak load over the last 10 minutes.
    These last 10 minutes are referred to as the stabilization period."
    A per-group queue asks for 10 VMs once, then for 4 every minute: the group
    stays at 10 until the peak is 600 s old (windows are (now − 600, now])."""
    d = Decider({"min_replicas": 1, "max_replicas": 20, "metrics": [queue(10)]}, "gce")
    t0 = WED_NOON_NY
    assert d.step(t0, 4, queue_obs(100)).desired == 10
    size = 10
    for k in range(1, 10):                       # 60 s … 540 s after the peak
        dec = d.step(t0 + 60 * k, size, queue_obs(40))
        assert dec.desired == 10 and dec.reason == "ScaleDownStabilized", k
        assert dec.metrics[0]["replicas"] == 4
    dec = d.step(t0 + 600, size, queue_obs(40))  # the peak is exactly 600 s old: out
    assert dec.desired == 4 and dec.reason == "DesiredWithinRange"


def test_stabilization_never_delays_scale_out():
    d = Decider({"min_replicas": 1, "max_replicas": 20, "metrics": [queue(10)]}, "gce")
    t0 = WED_NOON_NY
    assert d.step(t0, 4, queue_obs(40)).desired == 4
    assert d.step(t0 + 15, 4, queue_obs(121)).desired == 13


def test_stabilization_period_configurable_and_not_shorter_than_initialization():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers stabilizationPeriodSec ("The default stabilization period is 600
    seconds"); the protocol: never shorter than the initialization period."""
    pol = {"min_replicas": 1, "max_replicas": 20, "metrics": [queue(10)],
           "behavior": {"scale_down": {"stabilization_window_seconds": 120}}}
    d = Decider(pol, "gce")
    t0 = WED_NOON_NY
    d.step(t0, 4, queue_obs(100))
    assert d.step(t0 + 119, 10, queue_obs(40)).desired == 10
    assert d.step(t0 + 120, 10, queue_obs(40)).desired == 4
    d = Decider({**pol, "initialization_period_seconds": 300}, "gce")
    d.step(t0, 4, queue_obs(100))
    assert d.step(t0 + 299, 10, queue_obs(40)).desired == 10
    assert d.step(t0 + 300, 10, queue_obs(40)).desired == 4


def test_other_behavior_fields_are_ignored():
    """Only ``behavior.scale_down.stabilization_window_seconds`` means something under gce."""
    pol = {"min_replicas": 1, "max_replicas": 20, "metrics": [queue(10)],
           "behavior": {"scale_up": {"policies": [{"type": "Pods", "value": 1, "period_seconds": 60}]}}}
    r = decide(request(2, pol["metrics"], {"metrics": {"queue": {"values": [200]}}}, policy=pol))
    assert r["desired_replicas"] == 20


# ----------------------------------------------------------------------------- scale-in controls


def test_rest_percent_example_80_percent_of_150_is_120():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers scaleInControl.maxScaledInReplicas.calculated: "the calculated value
    of a 80% of a managed instance group with 150 instances would be
    (80/100 * 150) = 120 VM instances": the size may drop to 150 − 120 = 30."""
    pol = {"min_replicas": 1, "max_replicas": 200, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"percent": 80}, "time_window_seconds": 1200}}
    state = {"recommendations": [], "sizes": [{"time": WED_NOON_NY - 900, "replicas": 150}]}
    r = decide(request(150, pol["metrics"], {"metrics": {"queue": {"values": [10]}}}, policy=pol, state=state))
    assert r["metrics"][0]["replicas"] == 1
    assert r["desired_replicas"] == 30 and r["reason"] == "ScaleInControlled"


def test_blog_10_vms_in_20_minutes():
    """Google Cloud blog (2020), https://globalcloudplatforms.com/2020/11/07/scale-in-at-your-own-pace-with-compute-engine-autoscaler-controls/:
    "An autoscaler with scale-in controls limits how many VM instances
    can be removed in a given period of time (here 10 VMs in 20 minutes)" and
    "When load declines, the autoscaler maintains the size … required to serve
    the peak load observed in the last 10 minutes (the stabilization period).
    This works the same with and without scale-in controls."
    A group of 50 whose load drops to 20 VMs' worth: 10 minutes at 50
    (stabilization), then at most 10 below the peak of the last 20 minutes."""
    pol = {"min_replicas": 1, "max_replicas": 100, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200}}
    d = Decider(pol, "gce")
    t0 = WED_NOON_NY
    size = d.step(t0, 50, queue_obs(500)).desired
    assert size == 50
    seen = {}
    for k in range(1, 61):                     # one decision a minute for an hour
        dec = d.step(t0 + 60 * k, size, queue_obs(200))
        size = dec.desired
        seen[k] = size
    assert all(seen[k] == 50 for k in range(1, 10))          # stabilization period
    assert seen[10] == 40                                      # peak 50 (recommended) − 10
    # the last 50 (minute 9) holds the floor at 40 until it is 20 minutes old
    # (minute 29); then the last 40 (minute 28) holds 30 until minute 48
    assert all(seen[k] == 40 for k in range(10, 29)), seen
    assert all(seen[k] == 30 for k in range(29, 48)), seen
    assert all(seen[k] == 20 for k in range(48, 61)), seen


def test_scale_in_control_never_limits_scale_out():
    pol = {"min_replicas": 1, "max_replicas": 100, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 1}, "time_window_seconds": 1200}}
    state = {"recommendations": [], "sizes": [{"time": WED_NOON_NY - 60, "replicas": 5}]}
    r = decide(request(5, pol["metrics"], {"metrics": {"queue": {"values": [300]}}}, policy=pol, state=state))
    assert r["desired_replicas"] == 30


def test_scale_in_control_floor_never_above_max():
    """A lowered maximum wins over an older, higher peak in ``state.sizes``."""
    pol = {"min_replicas": 1, "max_replicas": 8, "metrics": [queue(10)],
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 1}, "time_window_seconds": 1200}}
    state = {"recommendations": [], "sizes": [{"time": WED_NOON_NY - 60, "replicas": 50}]}
    r = decide(request(50, pol["metrics"], {"metrics": {"queue": {"values": [10]}}}, policy=pol, state=state))
    assert r["desired_replicas"] == 8


# ----------------------------------------------------------------------------- initialization period


def test_initializing_vms_ignored_only_when_scaling_out():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers coolDownPeriodSec: "when scaling out, the autoscaler ignores data from
    VMs that are still initializing". Their data still counts for a scale-in."""
    settled, young = vms(2), vms(2, age=30, prefix="new")
    members = settled + young
    # the young VMs' burst cannot cause a scale-out (settled 50 % → 4)
    obs = {"members": members, "metrics": {"cpu": {"members": {**per_vm(settled, 0.5), **per_vm(young, 1.0)}}}}
    assert decide(request(4, [cpu(60)], obs))["desired_replicas"] == 4
    # but their idle data takes part in a scale-in: average (0.3+0.3+0+0)/4 = 15 % → 1
    obs["metrics"]["cpu"]["members"] = {**per_vm(settled, 0.3), **per_vm(young, 0.0)}
    assert decide(request(4, [cpu(60)], obs))["desired_replicas"] == 1
    # a scale-out decided by the settled VMs uses their average on the whole group (G-GAP-1)
    obs["metrics"]["cpu"]["members"] = {**per_vm(settled, 0.9), **per_vm(young, 0.1)}
    r = decide(request(4, [cpu(60)], obs))
    assert r["desired_replicas"] == 6 and r["metrics"][0]["utilization"] == 90


def test_all_vms_initializing_never_scale_out():
    members = vms(3, age=10)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 1.0)}}}
    assert decide(request(3, [cpu(60)], obs))["desired_replicas"] == 3


def test_initializing_measured_from_ready_transition_else_start_time():
    members = vms(2)
    members[1]["ready_transition_time"] = None
    members[1]["start_time"] = WED_NOON_NY - 30         # young by start time
    obs = {"members": members, "metrics": {"cpu": {"members": {"vm-0": 0.3, "vm-1": 1.0}}}}
    assert decide(request(2, [cpu(60)], obs))["desired_replicas"] == 2   # vm-1 ignored for scale-out
    members[1]["start_time"] = None                       # null time: the distant past
    assert decide(request(2, [cpu(60)], obs))["desired_replicas"] == 3   # ceil(2 × 65 / 60)


def test_per_metric_initialization_period_overrides():
    members = vms(2, age=120)
    m = cpu(60) | {"initialization_period_seconds": 300}
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}
    assert decide(request(2, [m], obs))["desired_replicas"] == 2
    assert decide(request(2, [cpu(60)], obs))["desired_replicas"] == 3


# ----------------------------------------------------------------------------- metric kinds


def test_per_group_metric_scales_to_zero():
    """https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics: "if you need to scale your MIG down to zero VMs from time to time, you
    can configure your MIG to scale using per-group metrics instead." """
    r = decide(request(3, [queue(10)], {"metrics": {"queue": {"values": [0]}}}, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 0


def test_per_group_values_are_summed():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (filter): "If multiple TimeSeries are returned upon the query execution,
    the autoscaler will sum their respective values to obtain its scaling value." """
    r = decide(request(1, [queue(10)], {"metrics": {"queue": {"values": [30, 41, 0.5]}}}))
    assert r["metrics"][0]["replicas"] == 8 and r["metrics"][0]["value"] == 71.5


def test_per_instance_metrics_cannot_go_below_one_vm():
    """https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics: "When using per-instance metrics, the MIG cannot scale below a size of 1
    VM"; understanding-autoscaler-decisions ("Autoscale a MIG to zero instances"): "If the
    policy includes these metrics, then the autoscaler requires at least one instance in the
    group to obtain a signal, and the group won't scale in to zero instances." (G-GAP-7: with
    any per-instance signal the floor is max(min, 1); only per-group signals reach 0.)"""
    members = vms(2)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.0)}}}
    r = decide(request(2, [cpu(60)], obs, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 1 and r["reason"] == "TooFewReplicas"
    # a per-group signal beside it does not lift the floor
    obs["metrics"]["queue"] = {"values": [0]}
    r = decide(request(2, [cpu(60), queue(10)], obs, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 1 and r["reason"] == "TooFewReplicas"
    # per-group signals alone reach 0
    r = decide(request(2, [queue(10)], {"metrics": {"queue": {"values": [0]}}}, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 0


def test_delta_per_second_with_a_counter_reset():
    """DELTA_PER_SECOND: "the rate of growth per second". A counter that drops has
    been reset: the increment after it is its new value."""
    members = vms(1)
    series = {"vm-0": [[WED_NOON_NY - 60, 1000], [WED_NOON_NY - 30, 4000], [WED_NOON_NY, 3000]]}
    m = {"type": "pods", "name": "rps", "target": {"type": "AverageValue", "average_value": 50, "rate": "per_second"}}
    r = decide(request(1, [m], {"members": members, "metrics": {"rps": {"member_series": series}}}))
    assert r["metrics"][0]["value"] == 100 and r["metrics"][0]["replicas"] == 2   # (3000 + 3000) / 60


def test_members_with_count_weigh_that_many():
    members = [{"name": "a", "requests": {"cpu": 1}, "count": 3}, {"name": "b", "requests": {"cpu": 1}}]
    obs = {"members": members, "metrics": {"cpu": {"members": {"a": 0.2, "b": 1.0}}}}
    r = decide(request(4, [cpu(60)], obs))
    assert r["metrics"][0]["utilization"] == 40 and r["desired_replicas"] == 3   # ceil(4 × 40 / 60)


def test_cpu_utilization_uses_each_members_request():
    members = vms(2)
    members[1]["requests"] = {"cpu": "500m"}
    obs = {"members": members, "metrics": {"cpu": {"members": {"vm-0": 0.5, "vm-1": "500m"}}}}
    r = decide(request(2, [cpu(60)], obs))
    # "the average utilization of your total vCPUs" (scaling-cpu): 1 core used of 1.5 → 66.7 %
    # (not the per-VM mean (50 % + 100 %) / 2 = 75 %); ceil(2 × 66.7 / 60) = 3
    assert r["metrics"][0]["utilization"] == 66 and r["desired_replicas"] == 3


# ----------------------------------------------------------------------------- signals without data


def test_every_signal_failing_is_an_error_and_keeps_the_size():
    r = decide(request(4, [cpu(60)], {"members": vms(4), "metrics": {}}))
    assert r["desired_replicas"] == 4 and r["reason"] == "InvalidMetrics"
    assert "no data for metric cpu" in r["error"] and r["able_to_scale"] is False


def test_a_failing_signal_blocks_scale_in_not_scale_out():
    """G-GAP-6: the rest of the signals may scale out, never in."""
    obs = {"metrics": {"queue": {"values": [20]}}}
    r = decide(request(4, [cpu(60), queue(10)], obs))
    assert r["desired_replicas"] == 4 and r["error"]
    obs["metrics"]["queue"]["values"] = [90]
    r = decide(request(4, [cpu(60), queue(10)], obs))
    assert r["desired_replicas"] == 9 and "1 invalid out of 2" in r["error"]


def test_missing_cpu_request_is_a_metric_error():
    members = vms(2)
    members[0]["requests"] = None
    r = decide(request(2, [cpu(60)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.5)}}}))
    assert r["metrics"][0]["error"] == "missing request for cpu on member vm-0"


def test_threshold_rules_alone_get_the_default_cpu_signal():
    """GCE has no threshold rules; a policy naming no signal gets CPU utilization 0.6
    (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu), as the HPA API adds 80% CPU."""
    pol = {"rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70,
                      "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]}
    req = request(3, [], {}, policy=pol)
    del req["policy"]["metrics"]
    r = decide(req)
    assert r["desired_replicas"] == 3 and "no data for metric cpu" in r["error"]   # the default signal, unread
    members = vms(3)
    req = request(3, [], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}, policy=pol)
    del req["policy"]["metrics"]
    assert decide(req)["desired_replicas"] == 5                                     # ceil(3 × 90 / 60)


# ----------------------------------------------------------------------------- schedules, forecast, proposal


def test_schedule_end_is_held_by_stabilization():
    """Spec: after a schedule ends, the stabilization window holds its size like
    any other signal's. Schedule 09:00 UTC for 2 h, 12 VMs; CPU asks for 2."""
    t9 = 1768381200.0                       # 2026-01-14 09:00 UTC
    pol = {"min_replicas": 1, "max_replicas": 20, "metrics": [cpu(60)],
           "schedules": [{"name": "b", "schedule": "0 9 * * *", "duration_seconds": 7200,
                          "min_required_replicas": 12}]}
    d = Decider(pol, "gce")
    size = 4
    out = {}
    for minute in range(100, 140):
        now = t9 + 60 * minute
        members = vms(size, now=now)
        obs = Observations.model_validate({"members": members,
                                           "metrics": {"cpu": {"members": per_vm(members, 0.1)}}})
        dec = d.step(now, size, obs)
        size = dec.desired
        out[minute] = (size, dec.reason)
    assert out[119] == (12, "ScheduleFloor")
    assert out[120] == (12, "ScaleDownStabilized")        # 11:00: ended, held
    assert out[128] == (12, "ScaleDownStabilized")
    assert out[129][0] == 2                                 # the 12 of 10:59 is 600 s old at 11:09


def test_forecast_joins_by_max_and_never_scales_in():
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.6)}}, "forecast": {"replicas": 9}}
    r = decide(request(4, [cpu(60)], obs, policy={"predictive": {"mode": "ForecastAndScale"}}))
    assert r["desired_replicas"] == 9 and r["reason"] == "ForecastFloor"
    obs["forecast"]["replicas"] = 1
    assert decide(request(4, [cpu(60)], obs, policy={"predictive": {}}))["desired_replicas"] == 4
    obs["forecast"]["replicas"] = 9
    assert decide(request(4, [cpu(60)], obs, policy={"predictive": {"mode": "ForecastOnly"}}))["desired_replicas"] == 4


def test_proposal_skips_metrics_but_not_stabilization_or_bounds():
    req = request(4, [cpu(60)], {"proposal": 30},
                  state={"recommendations": [{"time": WED_NOON_NY - 60, "replicas": 3}]})
    assert decide(req)["desired_replicas"] == 20
    req = request(10, [cpu(60)], {"proposal": 2},
                  state={"recommendations": [{"time": WED_NOON_NY - 60, "replicas": 7}]})
    assert decide(req)["desired_replicas"] == 7


# ----------------------------------------------------------------------------- state


def test_first_sight_starts_from_the_current_size():
    """G-GAP-9, understanding-autoscaler-decisions ("Configure autoscaler for the first time"):
    "the autoscaler uses the current MIG size as a starting point. Before scaling in, the
    autoscaler uses the stabilization period". An absent history is seeded with the current
    size at ``now``; ``[]`` is a known, empty history and is not."""
    req = request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}})
    del req["state"]
    r = decide(req)
    assert r["desired_replicas"] == 10 and r["reason"] == "ScaleDownStabilized"
    assert {"time": WED_NOON_NY, "replicas": 10} in r["state"]["recommendations"]
    later = request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}})
    later["state"] = r["state"]
    later["now"] = WED_NOON_NY + 601
    assert decide(later)["desired_replicas"] == 4
    known = request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}})
    known["state"] = {"recommendations": []}
    assert decide(known)["desired_replicas"] == 4


def test_state_records_raw_recommendation_and_recommended_size():
    """G-GAP-3: ``recommendations`` holds the raw max of all signals (before
    stabilization and bounds); ``sizes`` the recommended size."""
    req = request(4, [queue(10)], {"metrics": {"queue": {"values": [300]}}})
    r = decide(req)
    assert r["desired_replicas"] == 20
    assert r["state"]["recommendations"][-1]["replicas"] == 30
    assert r["state"]["sizes"][-1]["replicas"] == 20
    assert r["state"]["scale_up_events"] == [{"time": WED_NOON_NY, "change": 16, "cause": "boundary"}]


def test_history_no_window_needs_is_dropped():
    pol = {"scale_in_control": {"max_scaled_in_replicas": {"fixed": 1}, "time_window_seconds": 900}}
    state = {"recommendations": [{"time": WED_NOON_NY - 700, "replicas": 9},
                                 {"time": WED_NOON_NY - 100, "replicas": 5}],
             "sizes": [{"time": WED_NOON_NY - 1000, "replicas": 9}, {"time": WED_NOON_NY - 100, "replicas": 5}],
             "scale_up_events": [{"time": WED_NOON_NY - 100, "change": 1, "cause": "metric"}]}
    r = decide(request(5, [queue(10)], {"metrics": {"queue": {"values": [50]}}}, policy=pol, state=state))
    s = r["state"]
    assert [e["time"] for e in s["recommendations"]] == [WED_NOON_NY - 100, WED_NOON_NY]
    assert [e["time"] for e in s["sizes"]] == [WED_NOON_NY - 100, WED_NOON_NY]
    assert s["scale_up_events"] == []


# ----------------------------------------------------------------------------- mode


@pytest.mark.parametrize("mode,desired", [("ON", 4), ("ONLY_SCALE_OUT", 10), ("ONLY_UP", 10), ("OFF", 10)])
def test_modes_on_a_scale_in(mode, desired):
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions: ON sets the target size to the recommended size; ONLY_SCALE_OUT
    "can only be increased"; OFF: "the recommended size is still calculated"."""
    r = decide(request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}}, policy={"mode": mode}))
    assert r["recommended_replicas"] == 4 and r["desired_replicas"] == desired


def test_decide_does_not_mutate_its_request():
    req = four_signal_example()
    before = copy.deepcopy(req)
    decide(req)
    assert req == before
