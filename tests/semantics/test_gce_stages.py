"""The stages the gce semantics composes: proposals, schedules, scale-in controls."""
from __future__ import annotations

import datetime as dt
import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalebridge.cron import CronSchedule
from scalebridge.policy import Policy, ScaleInControl
from scalebridge.protocol import Member
from scalebridge.stages.proposals import (ProposalError, assignment_proposal, average_proposal, ceil_ratio,
                                          counter_rates, initializing_members, total_proposal)
from scalebridge.stages.scale_in_control import limit_scale_in, scale_in_floor
from scalebridge.stages.schedules import compile_schedules, next_start, schedule_floor
from scalebridge.state import TimeLog

NOW = 1768410000.0


def members(n, requests="1", prefix="vm", **kw):
    return [Member(name=f"{prefix}-{i}", requests={"cpu": requests} if requests is not None else None, **kw)
            for i in range(n)]


# ----------------------------------------------------------------------------- proposals

decimals = st.decimals(min_value="0", max_value="5000", places=4, allow_nan=False, allow_infinity=False)
positive = st.decimals(min_value="0.0001", max_value="5000", places=4, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 200), st.lists(decimals, min_size=1, max_size=12), positive,
       st.sampled_from(["float", "str"]))
def test_average_proposal_is_the_exact_ceiling(n, values, target, kind):
    conv = float if kind == "float" else str
    samples = {f"m{i}": conv(v) for i, v in enumerate(values)}
    p = average_proposal(n, samples, conv(target))
    exact_avg = sum(Fraction(str(conv(v))) for v in values) / len(values)
    want = math.ceil(n * exact_avg / Fraction(str(conv(target))))
    assert p.replicas == want
    assert p.ratio == exact_avg / Fraction(str(conv(target)))


def test_utilization_against_requests():
    ms = members(2) + members(1, requests="500m", prefix="half")
    p = average_proposal(3, {"vm-0": "300m", "vm-1": 0.9, "half-0": "250m"}, 60, members=ms,
                         resource="cpu", utilization=True)
    # (30 % + 90 % + 50 %) / 3 = 56.67 % → ceil(3 × 56.67 / 60) = 3
    assert p.utilization == 56 and p.replicas == 3
    assert p.ratio == Fraction(170, 3) / 60
    assert p.value == pytest.approx((0.3 + 0.9 + 0.25) / 3)


def test_samples_of_unknown_members_are_ignored():
    p = average_proposal(2, {"vm-0": 1, "vm-1": 1, "ghost": 100}, 1, members=members(2))
    assert p.replicas == 2
    with pytest.raises(ProposalError, match="matched known members"):
        average_proposal(2, {"ghost": 1}, 1, members=members(2))


def test_initializing_modes():
    ms = members(4)
    young = frozenset({"vm-2", "vm-3"})
    hot = {"vm-0": 50, "vm-1": 50, "vm-2": 100, "vm-3": 100}
    # GCE: initializing data cannot cause a scale-out
    assert average_proposal(4, hot, 60, members=ms, initializing=young).replicas == 4
    assert average_proposal(4, hot, 60, members=ms, initializing=young, ignore_initializing="never").replicas == 5
    # AWS-style: always left out (the caller scales from its own n)
    p = average_proposal(2, hot, 60, members=ms, initializing=young, ignore_initializing="always")
    assert p.replicas == 2 and p.excluded == 2
    # GCE: a scale-out the settled members ask for uses their average on the whole group
    busy = {"vm-0": 90, "vm-1": 90, "vm-2": 10, "vm-3": 10}
    p = average_proposal(4, busy, 60, members=ms, initializing=young)
    assert p.replicas == 6 and p.excluded == 2
    # GCE: a scale-in uses everyone's data
    idle = {"vm-0": 30, "vm-1": 30, "vm-2": 0, "vm-3": 0}
    assert average_proposal(4, idle, 60, members=ms, initializing=young).replicas == 1


def test_initializing_members():
    ms = [Member(name="a", ready_transition_time=NOW - 59, start_time=NOW - 1000),
          Member(name="b", ready_transition_time=None, start_time=NOW - 10),
          Member(name="c", ready_transition_time=NOW - 60),
          Member(name="d")]
    assert initializing_members(ms, NOW, 60) == {"a", "b"}
    assert initializing_members(ms, NOW, 0) == frozenset()
    assert initializing_members(None, NOW, 60) == frozenset()


def test_total_and_assignment_proposals():
    assert total_proposal(4, 100, 80, utilization=True).replicas == 5
    assert total_proposal(10, 40, 60).replicas == 7
    p = assignment_proposal([95], 10)
    assert p.replicas == 10 and p.ratio == Fraction(19, 2)
    assert assignment_proposal([0, None], 10).replicas == 0
    assert assignment_proposal(["1.5k", 500], "0.5k").replicas == 4
    with pytest.raises(ProposalError):
        assignment_proposal([None], 10)


def test_ceil_ratio_exact():
    assert ceil_ratio(3, 0.8, 0.8) == 3
    assert ceil_ratio(10, 1100, 1000) == 11
    assert ceil_ratio(3, 0.2, 0.6) == 1


def test_within_tolerance_is_exact():
    p = average_proposal(10, {"a": 110}, 100)          # ratio exactly 1.1
    assert p.within(0.1, 0.1) and not p.within(0.1, 0.09)
    p = average_proposal(10, {"a": 90}, 100)           # ratio exactly 0.9
    assert p.within(0.1, 0) and not p.within(0.0999, 0)


def test_counter_rates():
    series = {"a": [[0, 100], [60, 700]], "b": [[0, 0], [30, 10], [60, 5]], "c": [[0, 1]],
              "d": [[0, 0], [120, 1200]]}
    r = counter_rates(series, "per_second", until=60)
    assert r == {"a": 10, "b": Fraction(15, 60)}
    assert counter_rates(series, "per_minute")["d"] == 600


# ----------------------------------------------------------------------------- schedules

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


# ----------------------------------------------------------------------------- scale-in controls


def test_scale_in_floor_fixed_and_percent():
    sizes = TimeLog([(NOW - 1300, 90, None), (NOW - 900, 50, None), (NOW - 60, 30, None)])
    fixed = ScaleInControl.model_validate({"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200})
    assert scale_in_floor(sizes, NOW, fixed) == 40
    pct = ScaleInControl.model_validate({"max_scaled_in_replicas": {"percent": 15}, "time_window_seconds": 1200})
    assert scale_in_floor(sizes, NOW, pct) == 43                       # 50 − floor(7.5)
    pct = ScaleInControl.model_validate({"max_scaled_in_replicas": {"percent": 29}, "time_window_seconds": 1200})
    assert scale_in_floor(TimeLog([(NOW - 1, 100, None)]), NOW, pct) == 71   # exact: 100 × 29 % is 29
    assert scale_in_floor(TimeLog(), NOW, fixed) is None
    assert limit_scale_in(sizes, NOW, 20, fixed) == (40, True)
    assert limit_scale_in(sizes, NOW, 45, fixed) == (45, False)
    assert limit_scale_in(sizes, NOW, 20, fixed, max_replicas=35) == (35, True)
    assert limit_scale_in(sizes, NOW, 20, None) == (20, False)
