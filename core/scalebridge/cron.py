"""unix-cron schedules with an optional year field, as GCE scaling schedules use
(https://cloud.google.com/compute/docs/autoscaler/scaling-schedules#cron_expressions).

Fields: minute hour day-of-month month day-of-week [year]; ``*``, lists, ranges,
steps, month and day names (JAN, MON-FRI). When both day fields are restricted,
a day matches if either does (Vixie cron, which unix-cron follows).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import lru_cache

from .timezones import resolve_zone

_MONTHS = {m: i for i, m in enumerate(
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], start=1)}
_DAYS = {d: i for i, d in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}
_FIELDS = [("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}),
           ("month", 1, 12, _MONTHS), ("day of week", 0, 7, _DAYS), ("year", 1970, 2199, {})]


def _value(tok: str, lo: int, hi: int, names: dict, field: str) -> int:
    t = tok.upper()
    if t in names:
        return names[t]
    if not t.isdigit():
        raise ValueError(f"invalid {field} {tok!r} in cron schedule")
    v = int(t)
    if not lo <= v <= hi:
        raise ValueError(f"{field} {v} out of range {lo}-{hi} in cron schedule")
    return v


def _parse_field(text: str, lo: int, hi: int, names: dict, field: str) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    restricted = text != "*"
    for part in text.split(","):
        if not part:
            raise ValueError(f"empty item in cron {field} field {text!r}")
        step = 1
        if "/" in part:
            part, step_s = part.split("/", 1)
            if not step_s.isdigit() or int(step_s) == 0:
                raise ValueError(f"invalid step {step_s!r} in cron {field} field")
            step = int(step_s)
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a_s, b_s = part.split("-", 1)
            a, b = _value(a_s, lo, hi, names, field), _value(b_s, lo, hi, names, field)
            if names is _DAYS and b == 0 and b_s.upper() == "SUN":
                # "to specify every day of the week, use *, 0-6, 1-7, Sun-Sat, or Mon-Sun"
                # (scaling-schedules): SUN closing a range is day 7, as the number 7 is
                b = 7
            if names is _DAYS and (a, b) == (0, 7):
                raise ValueError(f"range {part!r} in cron {field} field: GCE does not accept 0-7 or Sun-Sun; "
                                 "for every day use *, 0-6, 1-7, Sun-Sat or Mon-Sun")
            if a > b:
                raise ValueError(f"range {part!r} runs backwards in cron {field} field")
        else:
            a = _value(part, lo, hi, names, field)
            b = hi if step > 1 else a
        values.update(range(a, b + 1, step))
    return frozenset(values), restricted


@dataclass(frozen=True)
class CronSchedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]   # 0 = Sunday
    years: frozenset[int] | None
    dom_restricted: bool
    dow_restricted: bool

    @staticmethod
    @lru_cache(maxsize=256)
    def parse(text: str) -> "CronSchedule":
        parts = text.split()
        if len(parts) not in (5, 6):
            raise ValueError(
                f"invalid cron schedule {text!r}: expected 5 fields (minute hour day-of-month month "
                "day-of-week) and an optional year, e.g. \"0 9 * * MON-FRI\"")
        parsed = [_parse_field(p, lo, hi, names, f) for p, (f, lo, hi, names) in zip(parts, _FIELDS)]
        weekdays = frozenset(d % 7 for d in parsed[4][0])
        return CronSchedule(parsed[0][0], parsed[1][0], parsed[2][0], parsed[3][0], weekdays,
                            parsed[5][0] if len(parts) == 6 else None, parsed[2][1], parsed[4][1])

    def matches_day(self, d: _dt.date) -> bool:
        if d.month not in self.months or (self.years is not None and d.year not in self.years):
            return False
        dom = d.day in self.days
        dow = (d.isoweekday() % 7) in self.weekdays
        if self.dom_restricted and self.dow_restricted:
            return dom or dow
        return dom and dow

    def last_start(self, now: float, zone: str, lookback_seconds: float) -> float | None:
        """The latest start time ``s`` with ``now - lookback < s <= now``, or None."""
        tz = resolve_zone(zone)
        local_now = _dt.datetime.fromtimestamp(now, tz=tz)
        earliest = now - lookback_seconds
        day = local_now.date()
        hours = sorted(self.hours, reverse=True)
        minutes = sorted(self.minutes, reverse=True)
        for _ in range(int(lookback_seconds // 86400) + 3):
            if self.matches_day(day):
                for h in hours:
                    for m in minutes:
                        t = _dt.datetime(day.year, day.month, day.day, h, m, tzinfo=tz).timestamp()
                        if earliest < t <= now:
                            return t
            day -= _dt.timedelta(days=1)
            if _dt.datetime(day.year, day.month, day.day, 23, 59, tzinfo=tz).timestamp() <= earliest:
                break
        return None
