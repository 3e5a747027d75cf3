"""Review of the gce semantics against the Compute Engine autoscaler documentation (2026-04 pages).

Each test cites the page and quotes the sentence it checks. The first four were
divergences the review found, now fixed (G-GAP-7, G-GAP-9, G-GAP-12 and the cron
ranges in docs/semantics/gce.md); the rest are documented behaviours not covered
elsewhere that scalebridge already followed.
Pages were read in the crawled copies of docs.cloud.google.com (same text as
cloud.google.com/compute/docs/autoscaler/...).
"""
from __future__ import annotations

import datetime as dt

import pytest

from scalebridge import decide
from scalebridge.errors import RequestError

DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
CPU = "https://cloud.google.com/compute/docs/autoscaler/scaling-cpu"
MON = "https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics"
SCHED = "https://cloud.google.com/compute/docs/autoscaler/scaling-schedules"
PRED = "https://cloud.google.com/compute/docs/autoscaler/predictive-autoscaling"

from tests.semantics.test_gce_documented import WED_NOON_NY as NOW  # Wednesday 2026-01-14 17:00 UTC
from tests.semantics.test_gce_documented import cpu, request, vms


def ts(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def group(name: str = "queue", assignment: float = 10) -> dict:
    return {"type": "external", "name": name, "target": {"type": "AverageValue", "average_value": assignment}}


def schedule_request(cron: str, now: float, *, tz: str = "UTC", duration: float = 3600, replicas: int = 8) -> dict:
    """A queue asking for 1 VM and one schedule asking for ``replicas``."""
    sched = {"name": "s", "schedule": cron, "time_zone": tz, "duration_seconds": duration,
             "min_required_replicas": replicas}
    return request(2, [group()], {"metrics": {"queue": {"values": [10]}}}, now=now, policy={"schedules": [sched]})


# ============================================================================ divergences (fixed)


def test_any_per_instance_signal_prevents_scale_to_zero():
    """DECIDE (Autoscale a MIG to zero instances): "The autoscaling policy must not use any of
    the following metrics that depend on running instances. If the policy includes these
    metrics, then the autoscaler requires at least one instance in the group to obtain a
    signal, and the group won't scale in to zero instances." (Average CPU utilization is listed.)"""
    m = vms(1)
    r = decide(request(1, [cpu(60), group()],
                       {"members": m, "metrics": {"cpu": {"members": {"vm-0": 0}}, "queue": {"values": [0]}}},
                       policy={"min_replicas": 0}))
    assert r["recommended_replicas"] == 1
    assert r["desired_replicas"] == 1


def test_cron_mon_sun_means_every_day():
    """SCHED (Cron expressions): "When using ranges ( - ), you cannot use 0-7 or Sun-Sun for
    the day of the week field—to specify every day of the week, use * , 0-6 , 1-7 , Sun-Sat ,
    or Mon-Sun instead." Wednesday 2026-01-14 17:00 UTC is inside "0 9 * * Mon-Sun" for 24 h."""
    r = decide(schedule_request("0 9 * * Mon-Sun", NOW, duration=86400))
    assert r["desired_replicas"] == 8
    for every_day in ("*", "0-6", "1-7", "Sun-Sat", "sun-sat", "Mon-Sun"):
        assert decide(schedule_request(f"0 9 * * {every_day}", NOW, duration=86400))["desired_replicas"] == 8
    # "you cannot use 0-7 or Sun-Sun": refused with the field named, not read as every day
    for refused in ("0-7", "Sun-Sun"):
        with pytest.raises(RequestError, match="0-7 or Sun-Sun"):
            decide(schedule_request(f"0 9 * * {refused}", NOW, duration=86400))


def test_heavy_cpu_utilization_adds_at_most_50_percent():
    """CPU (How autoscaler handles heavy CPU utilization): "During periods of heavy CPU
    utilization, if utilization is close to 100%, the autoscaler estimates that the group might
    already be heavily overloaded. In these cases, the autoscaler increases the number of
    virtual machines by 50% at most." (The page adds: "This behavior might change in the
    future. Google recommends that you not rely on this behavior.")"""
    m = vms(4)
    r = decide(request(4, [cpu(50)], {"members": m, "metrics": {"cpu": {"members": {x["name"]: 1 for x in m}}}}))
    assert r["recommended_replicas"] <= 6


def test_first_configuration_starts_from_the_current_size():
    """DECIDE (Scale-in controls with autoscaler mode > Configure autoscaler for the first time):
    "When you have a non-autoscaled MIG and you configure autoscaling from scratch, the
    autoscaler uses the current MIG size as a starting point. Before scaling in, the autoscaler
    uses the stabilization period and then it uses scale-in controls to constrain the scale-in
    rate". A group of 50 whose queue needs 20 VMs, scale-in controls 10 VMs / 20 minutes."""
    pol = {"max_replicas": 60,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200}}
    req = request(50, [group()], {"metrics": {"queue": {"values": [200]}}}, policy=pol, state={})
    first = decide(req)
    assert first["desired_replicas"] == 50          # held: the starting point is in the stabilization period
    later = request(50, [group()], {"metrics": {"queue": {"values": [200]}}}, policy=pol,
                    now=NOW + 610, state=first["state"])
    assert decide(later)["desired_replicas"] == 40  # then at most 10 below the peak size (50) of the window


# ============================================================================ agreements


def test_single_instance_assignment_page_example_100_over_5_is_20():
    """MON: "For example, if the metric is equal to 100 and the single instance assignment is 5,
    then the autoscaler creates 20 VMs in the MIG." """
    r = decide(request(3, [group("q", 5)], {"metrics": {"q": {"value": 100}}}, policy={"max_replicas": 50}))
    assert r["desired_replicas"] == 20


def test_size_of_another_mig_one_backend_per_four_frontends_rounds_up():
    """MON (Autoscale based on size of another MIG): "If you need 1 backend VM for every 4
    frontend VMs, then set the single instance assignment to 4 in the backend MIG." 10 frontend
    VMs need ceil(10 / 4) = 3 backend VMs."""
    r = decide(request(1, [group("size", 4)], {"metrics": {"size": {"value": 10}}}))
    assert r["desired_replicas"] == 3


def test_scale_in_controls_page_example_peak_70_allows_50():
    """DECIDE (Scale-in controls): "If, in the last 30 minutes, peak size was 70 VMs and the
    maximum allowed reduction is set to 20 VMs, the autoscaler can scale in to 50 VMs. If the
    current size is 65 VMs, the autoscaler can remove only 15 VMs." """
    state = {"recommendations": [],
             "sizes": [{"time": NOW - 1500, "replicas": 70}, {"time": NOW - 300, "replicas": 65}]}
    pol = {"max_replicas": 100,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 20}, "time_window_seconds": 1800}}
    r = decide(request(65, [group()], {"metrics": {"queue": {"values": [300]}}}, policy=pol, state=state))
    assert r["recommended_replicas"] == 50 and r["reason"] == "ScaleInControlled"


def test_scale_in_controls_are_computed_while_off():
    """DECIDE (Change autoscaler mode): "When you turn autoscaler OFF, it still calculates the
    recommended instance group size based on load. Autoscaler calculations still consider
    scale-in controls. However, the autoscaler does not apply size calculations when autoscaler
    is OFF." """
    state = {"recommendations": [], "sizes": [{"time": NOW - 300, "replicas": 80}]}
    pol = {"mode": "OFF", "max_replicas": 100,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 20}, "time_window_seconds": 1800}}
    r = decide(request(80, [group()], {"metrics": {"queue": {"values": [400]}}}, policy=pol, state=state))
    assert r["recommended_replicas"] == 60
    assert r["desired_replicas"] == 80
    assert r["state"]["sizes"][-1]["replicas"] == 60   # the background calculation is what later windows see


def test_schedule_is_limited_by_max():
    """SCHED (Creating a scaling schedule): "Autoscaler never creates more than the maximum number
    of VM instances or fewer than the minimum number of VM instances configured in the MIG's
    autoscaling settings." """
    r = decide(schedule_request("0 0 * * *", NOW, duration=86400, replicas=30))
    assert r["recommended_replicas"] == 20


def test_active_schedule_scales_out_from_zero():
    """DECIDE (Condition for an autoscaler to scale out a MIG from zero): "the autoscaler can
    scale out the MIG only when a scaling signal or an active schedule requires more than zero
    instances." """
    sched = {"name": "s", "schedule": "0 0 * * *", "time_zone": "UTC", "duration_seconds": 86400,
             "min_required_replicas": 3}
    r = decide(request(0, [cpu(60)], {"members": [], "metrics": {}}, policy={"min_replicas": 0, "schedules": [sched]}))
    assert r["desired_replicas"] == 3


def test_only_per_instance_signal_cannot_scale_out_from_zero():
    """DECIDE: "If the only scaling signal in the policy is based on metrics collected from each
    instance, then the MIG can't scale out from zero because no instances exist in the group to
    generate the metrics." """
    r = decide(request(0, [cpu(60)], {"members": [], "metrics": {}}, policy={"min_replicas": 0}))
    assert r["desired_replicas"] == 0


@pytest.mark.parametrize("now,active", [
    (ts("2026-03-08T07:00:00+00:00"), False),   # 03:00 EDT: the configured 02:30 never happened
    (ts("2026-03-08T07:35:00+00:00"), True),    # 03:35 EDT: started 1 hour later, at 03:30 EDT
])
def test_dst_start_in_skipped_hour_starts_one_hour_later(now, active):
    """SCHED (Daylight saving time): "Schedules that are configured to start during the skipped
    hour also start 1 hour later than their start time on days without DST transitions."
    America/New_York skips 02:00–02:59 on 2026-03-08."""
    r = decide(schedule_request("30 2 * * *", now, tz="America/New_York", duration=600))
    assert (r["desired_replicas"] == 8) is active


@pytest.mark.parametrize("now,active", [
    (ts("2026-03-08T07:59:00+00:00"), True),
    (ts("2026-03-08T08:00:00+00:00"), False),   # 04:00 EDT = 01:00 EST + 2 h: one hour after the wall-clock 03:00
])
def test_dst_schedule_active_over_skipped_hour_ends_one_hour_later(now, active):
    """SCHED: "Schedules that are active during the skipped hour still run for their entire
    duration, but to compensate for the skipped hour, these schedules end 1 hour later than their
    end time on days without DST transitions." """
    r = decide(schedule_request("0 1 * * *", now, tz="America/New_York", duration=7200))
    assert (r["desired_replicas"] == 8) is active


@pytest.mark.parametrize("now,active", [
    (ts("2026-11-01T05:32:00+00:00"), True),    # first 01:30 (EDT)
    (ts("2026-11-01T06:32:00+00:00"), False),   # repeated 01:30 (EST): no restart
])
def test_dst_start_in_repeated_hour_does_not_restart(now, active):
    """SCHED: "Schedules that are configured to start during the transition period start at their
    configured time, but they don't restart during the second, repeated occurrence of the start
    time." """
    r = decide(schedule_request("30 1 * * *", now, tz="America/New_York", duration=300))
    assert (r["desired_replicas"] == 8) is active


@pytest.mark.parametrize("now,active", [
    (ts("2026-01-12T08:30:00+00:00"), True),    # a Monday, not the 1st
    (ts("2026-01-01T08:30:00+00:00"), True),    # the 1st, a Thursday
    (ts("2026-01-13T08:30:00+00:00"), False),   # neither
])
def test_cron_day_of_month_and_week_are_a_union(now, active):
    """SCHED: "When you specify both a day of the week and a day of the month (when neither field
    is set to * ), the schedule uses the union of these values, not the intersection. For
    example, the schedule 0 8 1 * Mon starts at 8:00 AM on every Monday and on the first day of
    every month." """
    assert (decide(schedule_request("0 8 1 * Mon", now))["desired_replicas"] == 8) is active


@pytest.mark.parametrize("cron,now,active", [
    ("0 */7 * * *", ts("2026-01-13T14:30:00+00:00"), True),     # */7 hours = 0,7,14,21
    ("0 */7 * * *", ts("2026-01-13T12:30:00+00:00"), False),
    ("0 0 * */3 *", ts("2026-04-05T01:00:00+00:00"), True),     # */3 months = Jan, Apr, Jul, Oct
    ("0 0 * */3 *", ts("2026-05-05T01:00:00+00:00"), False),
    ("0 0 * * 7", ts("2026-01-11T05:00:00+00:00"), True),       # 7 = Sun
    ("0 9 * * 1-7", NOW, True),                                 # 1-7 (Mon-Sun): every day
])
def test_cron_steps_and_day_numbers(cron, now, active):
    """SCHED: "If the month field is set to */3 , then the schedule starts during the first month
    and every 3 months after that: January, April, July, and October."; "*/7 behaves the same as
    listing every valid multiple of 7 ( 0,7,14,21 )"; day of the week "0-6 (Sun-Sat) or 1-7
    (Mon-Sun) where 0 = Sun , 1 = Mon , ... 6 = Sat , 7 = Sun"."""
    duration = 86400 if cron.endswith(("*/3 *", "* * 7", "1-7")) else 3600
    assert (decide(schedule_request(cron, now, duration=duration))["desired_replicas"] == 8) is active


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
