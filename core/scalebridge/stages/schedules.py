"""Scaling schedules as a signal: the greatest ``min_required_replicas`` of the
schedules active at ``now``.

GCE (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers,
``scalingSchedules``): "A scaling schedule changes the minimum number of VM
instances an autoscaler can recommend, which can trigger scaling out";
"Multiple schedules can be set on an autoscaler, and they can overlap. During
overlapping periods the greatest min_required_replicas of all scaling
schedules is applied." ``schedule`` "uses the extended cron format (with an
optional year field) ... interpreted with respect to time_zone"; ``disabled``:
"If set to true, then a scaling schedule has no effect."

A schedule is active in ``[start, start + duration_seconds)`` for each cron
match ``start`` (wall-clock time in its ``time_zone``, daylight saving time
included). The value joins the other signals by max; it does not replace
min/max, and once the schedule ends the stabilization period holds its size
like any other signal's (the protocol's schedules, docs/architecture.md).

Each schedule remembers the interval over which its answer cannot change (an
active one until ``start + duration``; an inactive one until its next start),
so a simulator stepping through a day recomputes a cron match a few times per
schedule, not on every tick.
"""
from __future__ import annotations

import datetime as _dt
import math
from typing import Optional, Sequence

from ..compiled import derived
from ..cron import CronSchedule
from ..timezones import resolve_zone

__all__ = ["CompiledSchedule", "ScheduleSet", "compile_schedules", "schedule_floor", "next_start"]

_SEARCH_DAYS = 400        # how far ahead an inactive schedule looks for its next start
_COMPILED_KEY = "stages.schedules"


def next_start(cron: CronSchedule, after: float, zone: str, days: int = _SEARCH_DAYS) -> float:
    """The earliest start ``s > after`` (same wall-clock construction as
    :meth:`CronSchedule.last_start`), or — when none falls within ``days`` local
    days — a time before which there is certainly none (``inf``: never again)."""
    tz = resolve_zone(zone)
    day = _dt.datetime.fromtimestamp(after, tz=tz).date()
    if cron.years is not None and max(cron.years) < day.year:
        return math.inf
    hours = sorted(cron.hours)
    minutes = sorted(cron.minutes)
    one = _dt.timedelta(days=1)
    for _ in range(days):
        if cron.matches_day(day):
            best = math.inf
            for h in hours:
                for m in minutes:
                    t = _dt.datetime(day.year, day.month, day.day, h, m, tzinfo=tz).timestamp()
                    if after < t < best:
                        best = t
            if best < math.inf:
                return best
        day += one
        if cron.years is not None and max(cron.years) < day.year:
            return math.inf
    # every start up to (at least) `days - 2` days ahead has been examined
    return after + (days - 2) * 86400.0


class CompiledSchedule:
    """One enabled schedule with a cache of the interval its answer holds for."""
    __slots__ = ("name", "replicas", "cron", "zone", "duration", "_lo", "_hi", "_active")

    def __init__(self, name: str, replicas: int, cron: CronSchedule, zone: str, duration: float):
        self.name, self.replicas, self.cron, self.zone, self.duration = name, replicas, cron, zone, duration
        self._lo, self._hi, self._active = math.inf, -math.inf, False

    def active(self, now: float) -> bool:
        """Whether some start ``s`` has ``s <= now < s + duration``."""
        if self._lo <= now < self._hi:
            return self._active
        s = self.cron.last_start(now, self.zone, self.duration)
        if s is not None:
            # active over all of [s, s + duration): later starts only extend it
            self._lo, self._hi, self._active = s, s + self.duration, True
        else:
            # no start in (now - duration, now]: inactive until the next start
            self._lo, self._hi, self._active = now, next_start(self.cron, now, self.zone), False
        return self._active


class ScheduleSet:
    """A policy's enabled schedules, compiled once."""
    __slots__ = ("schedules",)

    def __init__(self, schedules: Sequence[CompiledSchedule]):
        self.schedules = tuple(schedules)

    def floor(self, now: float) -> tuple[Optional[int], Optional[str]]:
        """``(greatest min_required_replicas, that schedule's name)`` among the
        schedules active at ``now``; ``(None, None)`` when none is."""
        best: Optional[int] = None
        name: Optional[str] = None
        for s in self.schedules:
            if (best is None or s.replicas > best) and s.active(now):
                best, name = s.replicas, s.name
        return best, name


def compile_schedules(schedules: Sequence) -> ScheduleSet:
    """:class:`ScheduleSet` of a policy's ``schedules`` (disabled ones dropped)."""
    return ScheduleSet([CompiledSchedule(s.name, s.min_required_replicas, CronSchedule.parse(s.schedule),
                                         s.time_zone or "UTC", float(s.duration_seconds))
                        for s in schedules if not s.disabled])


def schedule_floor(policy, now: float) -> tuple[Optional[int], Optional[str]]:
    """The schedule signal of ``policy`` at ``now``: ``(replicas, schedule name)``
    or ``(None, None)``. The schedules are compiled once per compiled policy (shared by
    every semantics)."""
    if not policy.schedules:
        return None, None
    return derived(policy, _COMPILED_KEY, lambda p: compile_schedules(p.schedules)).floor(now)
