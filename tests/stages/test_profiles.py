"""The profile stage (scalebridge.stages.profiles): which profile is in force at a time
— recurrences and fixed dates, starts inclusive, daylight saving time — checked
against a brute-force search forwards and backwards.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile."""
from __future__ import annotations

import random

from scalebridge.decision import Context
from scalebridge.engine import compile_policy
from scalebridge.policy import Policy
from scalebridge.protocol import Observations, Settings
from scalebridge.stages.profiles import (
    active_profile, ProfileTimeline, recurrence_last_start, recurrence_next_start, Scope, scope_in_force)
from scalebridge.state import DecisionState
from scalebridge.testing.requests import AZURE_NOW as NOW


WEEK_POLICY = Policy.model_validate({"profiles": [
    {"name": "default", "capacity": {"minimum": 1, "maximum": 5, "default": 1}},
    {"name": "weekday", "capacity": {"minimum": 3, "maximum": 20, "default": 3},
     "recurrence": {"time_zone": "Pacific Standard Time", "days": ["Monday", "Tuesday", "Wednesday", "Thursday",
                                                                    "Friday"], "hours": [8, 12], "minutes": [0, 30]}},
    {"name": "night", "capacity": {"minimum": 1, "maximum": 5, "default": 1},
     "recurrence": {"time_zone": "Europe/Paris", "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                    "hours": [3]}},
    {"name": "launch", "capacity": {"minimum": 10, "maximum": 30, "default": 10},
     "fixed_date": {"start": "2026-03-08T00:00:00", "end": "2026-03-08T23:59:00",
                    "time_zone": "Pacific Standard Time"}},
]})


def _reference(profiles, now):
    """Brute force: every start of every recurrence in the 8 days before now."""
    import datetime as dt
    from scalebridge.timezones import resolve_zone
    for p in profiles:
        if p.fixed_date is not None:
            from scalebridge.timezones import to_epoch
            fd = p.fixed_date
            if to_epoch(fd.start, fd.time_zone) <= now <= to_epoch(fd.end, fd.time_zone):
                return p
    best, best_t = None, None
    for p in profiles:
        r = p.recurrence
        if r is None:
            continue
        z = resolve_zone(r.time_zone)
        day0 = dt.datetime.fromtimestamp(now, z).date()
        for back in range(0, 9):
            d = day0 - dt.timedelta(days=back)
            if d.strftime("%A") not in r.days:
                continue
            for h in r.hours:
                for m in r.minutes:
                    t = dt.datetime(d.year, d.month, d.day, h, m, tzinfo=z).timestamp()
                    if t <= now and (best_t is None or t > best_t):
                        best, best_t = p, t
    if best is not None:
        return best
    return next((p for p in profiles if p.recurrence is None and p.fixed_date is None), None)


def test_timeline_matches_brute_force_forwards_and_backwards():
    tl = ProfileTimeline(WEEK_POLICY.profiles)
    rng = random.Random(7)
    start = 1772870400.0   # 2026-03-07, across the US spring-forward and the fixed date
    times = sorted(start + rng.uniform(0, 10 * 86400) for _ in range(400))
    times += [start + k * 60.0 for k in range(0, 3 * 1440, 7)]
    times += list(reversed(times[:50]))          # going back in time must not reuse a stale answer
    for t in times:
        got, _ = tl.at(t)
        assert got is _reference(WEEK_POLICY.profiles, t), t


def test_recurrence_starts_are_inclusive_and_follow_dst():
    """A-GAP-10: a profile is in force from its start instant; wall-clock times follow DST."""
    r = WEEK_POLICY.profiles[1].recurrence
    monday_0800_pst = 1768233600.0   # 2026-01-12 08:00 PST = 16:00 UTC
    assert recurrence_last_start(r, monday_0800_pst) == monday_0800_pst
    assert recurrence_last_start(r, monday_0800_pst - 1) < monday_0800_pst - 1
    assert recurrence_next_start(r, monday_0800_pst - 1) == monday_0800_pst
    assert recurrence_next_start(r, monday_0800_pst) == monday_0800_pst + 1800
    # from Sunday 2026-03-08 17:00 PDT: Monday 08:00 PDT = 15:00 UTC (DST began on the 8th)
    assert recurrence_next_start(r, 1773014400.0) == 1773068400.0


def test_fixed_date_wins_and_end_is_inclusive():
    """A1: fixed date first; A-GAP-9: start <= now <= end."""
    from scalebridge.timezones import to_epoch
    end = to_epoch("2026-03-08T23:59:00", "Pacific Standard Time")
    cache: dict = {}
    assert active_profile(WEEK_POLICY.profiles, end, cache).name == "launch"
    assert active_profile(WEEK_POLICY.profiles, end + 0.001, cache).name != "launch"
    assert active_profile([], NOW) is None


def test_profiles_without_default_and_before_any_start():
    fixed_only = Policy.model_validate({"min_replicas": 1, "max_replicas": 3, "profiles": [
        {"name": "f", "capacity": {"minimum": 5, "maximum": 9, "default": 5},
         "fixed_date": {"start": NOW, "end": NOW + 3600}}]})
    assert active_profile(fixed_only.profiles, NOW - 1) is None
    assert active_profile(fixed_only.profiles, NOW).name == "f"


def _ctx(now: float, trace: bool = True) -> Context:
    return Context(now, 3, compile_policy(WEEK_POLICY), Settings(), Observations(), DecisionState(),
                   [] if trace else None)


def test_scope_in_force_is_the_scope_of_the_profile_in_force_and_says_why():
    timeline = ProfileTimeline(WEEK_POLICY.profiles)
    scopes = {id(p): Scope(p.name, p.capacity.minimum, p.capacity.maximum, p.capacity.default, ())
              for p in WEEK_POLICY.profiles}
    top = Scope(None, 1, 2, 1, ())
    for now in (NOW, NOW + 3 * 3600, NOW + 86400 * 2.5):
        ctx = _ctx(now)
        profile, why = timeline.at(now)
        scope = scope_in_force(ctx, timeline, scopes, top)
        assert scope is scopes[id(profile)]
        assert ctx.trace == [{"stage": "profile", "in": None, "out": profile.name, "why": why}]


def test_scope_in_force_falls_back_to_the_policy_when_no_profile_is_in_force():
    fixed = Policy.model_validate({"profiles": [
        {"name": "launch", "capacity": {"minimum": 10, "maximum": 30, "default": 10},
         "fixed_date": {"start": "2020-03-08T00:00:00", "end": "2020-03-08T23:59:00", "time_zone": "UTC"}}]})
    timeline = ProfileTimeline(fixed.profiles)
    top = Scope(None, 1, 2, 1, ())
    ctx = _ctx(NOW)
    assert scope_in_force(ctx, timeline, {}, top) is top
    assert ctx.trace == [{"stage": "profile", "in": None, "out": None, "why": "no profile in force"}]
    assert scope_in_force(ctx, timeline, {}, None) is None
    quiet = _ctx(NOW, trace=False)
    assert scope_in_force(quiet, timeline, {}, top) is top and quiet.trace is None
