"""The gce semantics' scaling schedules: cron fields (ranges, steps, day-of-month and
day-of-week union), time zones and daylight saving time, min/max, scaling out from
zero, and the stabilization period holding a schedule's size after it ends.

Sources: https://cloud.google.com/compute/docs/autoscaler/scaling-schedules,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (scalingSchedules)."""
from __future__ import annotations

import datetime as dt

import pytest

from scalebridge import decide
from scalebridge.engine import Decider
from scalebridge.errors import RequestError
from scalebridge.protocol import Observations
from scalebridge.testing.requests import (
    average_value as group, cpu, GCE_NOW as NOW, gce_request as request, GceChain, per_vm,
    vm_cpu_observations as cpu_obs, vms)

DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
CPU = "https://cloud.google.com/compute/docs/autoscaler/scaling-cpu"
SCHED = "https://cloud.google.com/compute/docs/autoscaler/scaling-schedules"


def test_schedule_end_is_held_by_stabilization():
    """The protocol: after a schedule ends, the stabilization window holds its size like
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


def ts(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def schedule_request(cron: str, now: float, *, tz: str = "UTC", duration: float = 3600, replicas: int = 8) -> dict:
    """A queue asking for 1 VM and one schedule asking for ``replicas``."""
    sched = {"name": "s", "schedule": cron, "time_zone": tz, "duration_seconds": duration,
             "min_required_replicas": replicas}
    return request(2, [group()], {"metrics": {"queue": {"values": [10]}}}, now=now, policy={"schedules": [sched]})


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


MIN = 60.0


def test_schedule_starts_runs_ends_and_stabilization_keeps_its_size():
    """REST scalingSchedules: "A scaling schedule changes the minimum number of VM
    instances an autoscaler can recommend, which can trigger scaling out"; durationSec
    "The duration of time intervals, in seconds, for which this scaling schedule is to
    run"; DECIDE: the recommended size serves "peak load observed over the
    stabilization period". A 09:00 UTC schedule of 12 VMs for 1 h; CPU alone wants 1."""
    t9 = 1768381200.0                                 # 2026-01-14 09:00 UTC
    pol = {"schedules": [{"name": "am", "schedule": "0 9 * * *", "duration_seconds": 3600,
                          "min_required_replicas": 12}]}
    c = GceChain([cpu(60)], policy=pol, current=2)
    out = {}
    for minute in range(-3, 80):
        now = t9 + minute * MIN
        r = c.step(now, cpu_obs(now, c.current, 0.05))
        out[minute] = (r["desired_replicas"], r["reason"])
    assert out[-1][0] == 1                            # before the start
    assert out[0] == (12, "ScheduleFloor")            # starts
    assert out[30] == (12, "ScheduleFloor") and out[59] == (12, "ScheduleFloor")   # runs
    assert out[60] == (12, "ScaleDownStabilized")     # ended, held
    assert out[68] == (12, "ScaleDownStabilized")
    assert out[69][0] == 1                            # the 12 of 09:59 is 600 s old at 10:09
