"""Instance profiles: which profile is in force at ``now`` (Azure Monitor autoscale).

Azure (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings):
"Each time the autoscale service runs, the profiles are evaluated in the
following order: 1. Fixed-date profiles 2. Recurring profiles 3. Default
profile. The first suitable profile that's found is used." — and "The end of
date and time for a recurring profile is set by the start time of the
following profile" (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile).

So, at ``now``:

1. a fixed-date profile with ``start <= now <= end`` (read in its time zone)
   wins; several → the first in the list;
2. else the recurrence profile whose latest start (every day × hour × minute
   combination, wall-clock in its time zone, DST included) is the most
   recent at or before ``now``; equal starts → the first in the list;
3. else the default profile (neither recurrence nor fixed date);
4. else ``None`` (the caller falls back to the policy's top-level fields).

A local start that does not exist (spring forward) is read with zoneinfo's
``fold=0`` (02:30 → 03:30 daylight time); a repeated one at its first
occurrence.

The choice only changes at a recurrence start, a fixed-date start or just
after a fixed-date end, so :class:`ProfileTimeline` caches the profile in force
together with the next instant it can change: a simulator asking every tick
pays for the calendar arithmetic once per change, not once per call.
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from typing import Optional, Sequence

from ..decision import Context
from ..policy import Profile, Recurrence
from ..timezones import resolve_zone, to_epoch

__all__ = ["ProfileTimeline", "Scope", "scope_in_force", "active_profile", "recurrence_last_start",
           "recurrence_next_start", "fixed_date_window"]

_DAYS = {"Monday": 0, "Tuesday": 1, "Wednesday": 2, "Thursday": 3, "Friday": 4, "Saturday": 5, "Sunday": 6}


def _local_epoch(date: _dt.date, hour: int, minute: int, zone) -> float:
    # fold=0: a nonexistent wall time takes the offset in force before the gap,
    # a repeated one its first occurrence.
    return _dt.datetime(date.year, date.month, date.day, hour, minute, tzinfo=zone).timestamp()


def _times(rec: Recurrence) -> list[tuple[int, int]]:
    return sorted({(h, m) for h in rec.hours for m in rec.minutes})


def recurrence_last_start(rec: Recurrence, now: float) -> Optional[float]:
    """The latest start of ``rec`` at or before ``now`` (epoch seconds)."""
    zone = resolve_zone(rec.time_zone)
    days = {_DAYS[d] for d in rec.days}
    times = _times(rec)
    today = _dt.datetime.fromtimestamp(now, tz=zone).date()
    for back in range(0, 9):   # a week back, and a day either side for DST offsets
        d = today - _dt.timedelta(days=back)
        if d.weekday() not in days:
            continue
        best = None
        for h, m in times:
            t = _local_epoch(d, h, m, zone)
            if t <= now and (best is None or t > best):
                best = t
        if best is not None:
            return best
    return None


def recurrence_next_start(rec: Recurrence, now: float) -> Optional[float]:
    """The earliest start of ``rec`` strictly after ``now``."""
    zone = resolve_zone(rec.time_zone)
    days = {_DAYS[d] for d in rec.days}
    times = _times(rec)
    today = _dt.datetime.fromtimestamp(now, tz=zone).date()
    for ahead in range(-1, 9):
        d = today + _dt.timedelta(days=ahead)
        if d.weekday() not in days:
            continue
        best = None
        for h, m in times:
            t = _local_epoch(d, h, m, zone)
            if t > now and (best is None or t < best):
                best = t
        if best is not None:
            return best
    return None


def fixed_date_window(profile: Profile) -> tuple[float, float]:
    """``(start, end)`` of a fixed-date profile in epoch seconds; both inclusive."""
    fd = profile.fixed_date
    assert fd is not None
    return to_epoch(fd.start, fd.time_zone), to_epoch(fd.end, fd.time_zone)


@dataclass(slots=True)
class _Choice:
    profile: Optional[Profile]
    since: float     # valid for since <= now < until
    until: float
    why: str


class ProfileTimeline:
    """The profiles of one policy, answering "which is in force at ``now``?".

    Build it once per policy (keep it with the compiled policy); :meth:`at`
    is O(1) while ``now`` stays inside the span the last answer holds for."""
    __slots__ = ("profiles", "fixed", "recurring", "default", "_last")

    def __init__(self, profiles: Sequence[Profile]):
        self.profiles = list(profiles)
        self.fixed = [(p, *fixed_date_window(p)) for p in self.profiles if p.fixed_date is not None]
        self.recurring = [p for p in self.profiles if p.recurrence is not None]
        defaults = [p for p in self.profiles if p.recurrence is None and p.fixed_date is None]
        self.default = defaults[0] if defaults else None
        self._last: Optional[_Choice] = None

    def at(self, now: float) -> tuple[Optional[Profile], str]:
        """The profile in force at ``now`` and why (for ``explain``)."""
        c = self._last
        if c is not None and c.since <= now < c.until:
            return c.profile, c.why
        c = self._choose(now)
        self._last = c
        return c.profile, c.why

    def _choose(self, now: float) -> _Choice:
        until = math.inf
        chosen: Optional[Profile] = None
        why = ""
        for p, start, end in self.fixed:
            if start > now:
                until = min(until, start)
            elif now <= end:
                until = min(until, math.nextafter(end, math.inf))
                if chosen is None:
                    fd = p.fixed_date
                    chosen, why = p, f"fixed date {fd.start} .. {fd.end} ({fd.time_zone}) in force"
        best_start = -math.inf
        best: Optional[Profile] = None
        for p in self.recurring:
            last = recurrence_last_start(p.recurrence, now)
            nxt = recurrence_next_start(p.recurrence, now)
            if nxt is not None:
                until = min(until, nxt)
            if last is not None and last > best_start:
                best_start, best = last, p
        if chosen is None:
            if best is not None:
                chosen = best
                when = _dt.datetime.fromtimestamp(best_start, tz=resolve_zone(best.recurrence.time_zone))
                why = f"recurrence started {when.strftime('%A %H:%M')} ({best.recurrence.time_zone}), the latest start"
            elif self.default is not None:
                chosen, why = self.default, "no fixed date or recurrence in force: the default profile"
            else:
                why = "no profile in force"
        return _Choice(chosen, now, until, why)


@dataclass(slots=True)
class Scope:
    """What one profile, or the policy's own fields when none is in force, puts in
    force: the capacity (minimum, maximum, default) and the rules, which replace the
    policy's ("Autoscale only processes one profile at a time", Azure best practices,
    2022). ``name`` is the profile's (None: the policy's fields); ``rules`` holds
    ``(index, Rule)`` of every rule, in order. A semantics builds one per profile once
    per policy."""
    name: Optional[str]
    minimum: int
    maximum: int
    default: Optional[int]
    rules: tuple


def scope_in_force(ctx: Context, timeline: ProfileTimeline, scopes: dict, top: Optional[Scope]) -> Optional[Scope]:
    """The scope in force at ``ctx.now``: the one ``scopes`` holds (by the profile's
    ``id``) for the profile ``timeline`` chooses (see the module docstring), else ``top``
    (the policy's own fields; None when it has none). ``explain`` notes which and why."""
    prof, why = timeline.at(ctx.now)
    scope = scopes[id(prof)] if prof is not None else top
    if ctx.trace is not None:
        ctx.note("profile", None, scope.name if scope is not None else None, why)
    return scope


def active_profile(profiles: Sequence[Profile], now: float,
                   cache: Optional[dict] = None) -> Optional[Profile]:
    """The profile in force at ``now`` (see the module docstring), or None.

    ``cache``: a dict kept between calls (with the compiled policy) holding the timeline."""
    if not profiles:
        return None
    if cache is None:
        return ProfileTimeline(profiles).at(now)[0]
    tl = cache.get("profile-timeline")
    if tl is None:
        tl = cache["profile-timeline"] = ProfileTimeline(profiles)
    return tl.at(now)[0]
