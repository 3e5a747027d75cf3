"""The schedule stage (scalebridge.stages.schedules): whether a cron schedule is in
force in its time zone (checked against a brute-force search), overlapping
schedules, and the next start.

Source: https://cloud.google.com/compute/docs/autoscaler/scaling-schedules."""
from __future__ import annotations

import datetime as dt
import math
import random

import pytest

from scalebridge.cron import CronSchedule
from scalebridge.policy import Policy
from scalebridge.stages.schedules import compile_schedules, next_start, schedule_floor


ZONES = ["UTC", "America/New_York", "Europe/Paris", "Australia/Lord_Howe", "Pacific Standard Time"]


CRONS = ["0 9 * * MON-FRI", "30 2 * * *", "*/20 * * * *", "0 0 1 * *", "15 1 * 3,11 SUN", "30 14 20 1 * 2026",
         "0 0 29 2 *"]


def _brute_active(cron: str, zone: str, duration: float, now: float) -> bool:
    return CronSchedule.parse(cron).last_start(now, zone, duration) is not None


@pytest.mark.parametrize("cron", CRONS)
@pytest.mark.parametrize("zone", ZONES)
def test_schedule_cache_agrees_with_last_start(cron, zone):
    """The cached answer (active until start + duration, inactive until the next
    start) equals an uncached cron evaluation at every instant, forwards and
    out of order, across DST changes."""
    rng = random.Random(hash((cron, zone)) & 0xFFFF)
    duration = rng.choice([300, 1800, 7200, 28800, 86400])
    pol = Policy.model_validate({"schedules": [{"name": "s", "schedule": cron, "time_zone": zone,
                                                "duration_seconds": duration, "min_required_replicas": 5}]})
    start = 1772000000.0   # 2026-02-25: spans the March DST changes
    times = [start + k * 293.0 for k in range(0, 3000)]                   # ~10 days, forwards
    times += [start + rng.uniform(0, 60 * 86400) for _ in range(300)]     # then anywhere
    for now in times:
        want = 5 if _brute_active(cron, zone, duration, now) else None
        assert schedule_floor(pol, now)[0] == want, (cron, zone, duration, now)


def test_overlapping_schedules_greatest_and_disabled_ignored():
    pol = Policy.model_validate({"schedules": [
        {"name": "a", "schedule": "0 8 * * *", "duration_seconds": 36000, "min_required_replicas": 8},
        {"name": "b", "schedule": "0 9 * * *", "duration_seconds": 7200, "min_required_replicas": 12},
        {"name": "c", "schedule": "0 9 * * *", "duration_seconds": 7200, "min_required_replicas": 50,
         "disabled": True}]})
    ten = dt.datetime(2026, 1, 14, 10, tzinfo=dt.timezone.utc).timestamp()
    assert schedule_floor(pol, ten) == (12, "b")
    assert schedule_floor(pol, ten + 2 * 3600) == (8, "a")
    assert schedule_floor(pol, ten + 9 * 3600) == (None, None)
    assert len(compile_schedules(pol.schedules).schedules) == 2


def test_next_start():
    c = CronSchedule.parse("0 9 * * MON-FRI")
    fri_10 = dt.datetime(2026, 1, 16, 10, tzinfo=dt.timezone.utc).timestamp()
    mon_9 = dt.datetime(2026, 1, 19, 9, tzinfo=dt.timezone.utc).timestamp()
    assert next_start(c, fri_10, "UTC") == mon_9
    assert next_start(CronSchedule.parse("30 14 20 1 * 2026"), mon_9, "UTC") == \
        dt.datetime(2026, 1, 20, 14, 30, tzinfo=dt.timezone.utc).timestamp()
    assert next_start(CronSchedule.parse("30 14 20 1 * 2025"), mon_9, "UTC") == math.inf
