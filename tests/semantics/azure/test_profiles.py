"""The azure semantics' profiles in time: recurrence (days, hours and minutes as starts,
across midnight and the week, daylight saving time in the profile's zone), fixed
dates winning over recurrences, the default profile, and every REST time zone.

Sources: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile,
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings,
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started,
https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update
(timeZone)."""
from __future__ import annotations

import copy
import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from scalebridge import decide
from scalebridge.testing.requests import AZURE_NOW as NOW, azure_rule as rule, azure_series as series

SETTINGS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings"
MULTI_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-multiprofile"
REST_URL = "https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update"
GS_URL = "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started"


BUSINESS_HOURS = {
    "profiles": [
        {"name": "default", "capacity": {"minimum": 1, "maximum": 5, "default": 2},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]},
        {"name": "business hours", "capacity": {"minimum": 4, "maximum": 20, "default": 6},
         "recurrence": {"time_zone": "Pacific Standard Time",
                        "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                        "hours": [8], "minutes": [0]},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase", 2), rule("cpu", "LessThan", 30, "Decrease")]},
        {"name": "evening", "capacity": {"minimum": 1, "maximum": 5, "default": 2},
         "recurrence": {"time_zone": "Pacific Standard Time",
                        "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                        "hours": [18], "minutes": [0]},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 30, "Decrease")]},
    ]}


TUESDAY_10_PST = 1768327200.0   # 2026-01-13 10:00 PST = 18:00 UTC


def _at(now: float, current: int, cpu) -> dict:
    req = {"semantics": "azure", "now": now, "current_replicas": current, "policy": copy.deepcopy(BUSINESS_HOURS),
           "observations": {"metrics": {} if cpu is None else {"cpu": series(cpu, now)}}}
    return decide(req)


def test_profile_minimum_maximum_default_by_time_of_day():
    """MULTI_URL: "Autoscale transitions between profiles based on their start times. The end time for a
    given profile is determined by the start time of the following profile." A business-hours profile
    (Mon–Fri 08:00 Pacific, 4..20, default 6) and an evening copy (18:00, 1..5, default 2)."""
    t = TUESDAY_10_PST
    assert _at(t, 2, 50)["profile"] == "business hours"
    assert _at(t, 2, 50)["desired_replicas"] == 4                  # its minimum takes effect
    assert _at(t, 8, 90)["desired_replicas"] == 10                 # its rule: +2
    evening = t + 9 * 3600                                         # 19:00 PST
    r = _at(evening, 8, 50)
    assert (r["profile"], r["desired_replicas"], r["reason"]) == ("evening", 5, "TooManyReplicas")
    # default capacity when metrics cannot be read: max(current, default) within the profile's range
    assert _at(t, 2, None)["desired_replicas"] == 6
    assert _at(t, 2, None)["reason"] == "ProfileDefault"
    assert _at(evening, 1, None)["desired_replicas"] == 2
    assert _at(evening, 4, None)["desired_replicas"] == 4
    # Saturday: the latest start is Friday 18:00 — the evening profile, not the default
    saturday = t + 4 * 86400
    assert _at(saturday, 3, 50)["profile"] == "evening"


def test_weekend_profile_multiprofile_arm_template():
    """MULTI_URL ARM template: Weekday profile Monday 04:00, Weekend profile Saturday 00:01, E. Europe
    Standard Time: "the weekend profile starts on Saturday morning at one minute passed midnight and end
    on Monday morning at 04:00"."""
    policy = {"profiles": [
        {"name": "Weekday profile", "capacity": {"minimum": 3, "maximum": 20, "default": 3},
         "recurrence": {"time_zone": "E. Europe Standard Time", "days": ["Monday"], "hours": [4], "minutes": [0]},
         "rules": []},
        {"name": "Weekend profile", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
         "recurrence": {"time_zone": "E. Europe Standard Time", "days": ["Saturday"], "hours": [0], "minutes": [1]},
         "rules": []}]}
    saturday_0001 = 1768600860.0          # 2026-01-17 00:01 UTC+2
    for now, want in [(saturday_0001 - 1, "Weekday profile"), (saturday_0001, "Weekend profile"),
                      (saturday_0001 + 2 * 86400 + 4 * 3600 - 61, "Weekend profile"),
                      (saturday_0001 + 2 * 86400 + 4 * 3600 - 60, "Weekday profile")]:
        r = decide({"semantics": "azure", "now": now, "current_replicas": 3, "policy": policy})
        assert r["profile"] == want, now


def test_default_capacity_is_not_applied_on_profile_activation():
    """A-GAP-14: the REST reference's "The default is only used if the current instance count is lower than
    the default" when metrics are unavailable — a profile becoming active does not jump to its default."""
    r = _at(TUESDAY_10_PST, 5, 50)
    assert (r["profile"], r["desired_replicas"]) == ("business hours", 5)


@pytest.mark.parametrize("zone", ["Türkiye Standard Time", "Kamchatka Standard Time"])
def test_rest_reference_time_zones_are_accepted(zone):
    """REST_URL, TimeWindow.timeZone / RecurrentSchedule.timeZone: "Some examples of valid time zones are:
    ... E. Europe Standard Time, South Africa Standard Time, FLE Standard Time, Türkiye Standard Time,
    Israel Standard Time, ... Fiji Standard Time, Kamchatka Standard Time, Tonga Standard Time ..." Both
    names were rejected as unknown (exit 2); timezones.WINDOWS_TO_IANA now maps them."""
    policy = {"profiles": [
        {"name": "default", "capacity": {"minimum": 1, "maximum": 10, "default": 2}},
        {"name": "event", "capacity": {"minimum": 4, "maximum": 10, "default": 4},
         "fixed_date": {"start": "2026-01-14T00:00:00", "end": "2026-01-14T23:59:00", "time_zone": zone}}]}
    r = decide({"semantics": "azure", "now": NOW, "current_replicas": 2, "policy": policy})
    assert (r["desired_replicas"], r["profile"]) == (4, "event")


# E. Europe Standard Time (CLDR: Europe/Chisinau) is UTC+2 in January.
SAT_0000_EET = 1768600800.0   # Saturday 2026-01-17 00:00 EET (22:00 UTC Friday)


HOUR = 3600.0


def _weekend_setting(now: float, current: int) -> dict:
    ee = "E. Europe Standard Time"
    profiles = [
        {"name": "Weekend profile", "capacity": {"minimum": 1, "maximum": 2, "default": 1}, "rules": [],
         "recurrence": {"frequency": "Week", "time_zone": ee, "days": ["Saturday", "Sunday"],
                        "hours": [6], "minutes": [0]}},
        {"name": '{"name":"Auto created default scale condition","for":"Weekend profile"}',
         "capacity": {"minimum": 4, "maximum": 10, "default": 4}, "rules": [],
         "recurrence": {"frequency": "Week", "time_zone": ee, "days": ["Saturday", "Sunday"],
                        "hours": [19], "minutes": [0]}},
    ]
    return decide({"semantics": "azure", "now": now, "current_replicas": current,
                   "policy": {"profiles": profiles}, "observations": {}})


@pytest.mark.parametrize("hours_after_saturday_midnight, profile", [
    (5.99, "default"),      # Saturday 05:59 EET: the copy that started Sunday 19:00
    (6.0, "Weekend profile"),
    (18.99, "Weekend profile"),
    (19.0, "default"),
    (24 + 3, "default"),    # Sunday 03:00: the copy that started Saturday 19:00
    (24 + 7, "Weekend profile"),
    (48 + 10, "default"),   # Monday 10:00
])
def test_settings_page_weekend_recurrence_06_to_19(hours_after_saturday_midnight, profile):
    """settings: "The partial schema example here shows a recurring profile. It starts
    at 06:00 and ends at 19:00 on Saturdays and Sundays. The default profile has been
    modified to start at 19:00 on Saturdays and Sundays." and "The end of date and
    time for a recurring profile is set by the start time of the following profile."
    (SETTINGS_URL). Weekend capacity [1, 2], default [4, 10]; 3 instances."""
    r = _weekend_setting(SAT_0000_EET + hours_after_saturday_midnight * HOUR, 3)
    if profile == "default":
        assert r["profile"].startswith('{"name":"Auto created default scale condition"')
        assert r["desired_replicas"] == 4
    else:
        assert r["profile"] == "Weekend profile"
        assert r["desired_replicas"] == 2


def test_get_started_scale_to_a_specific_instance_count_on_sunday():
    """gs: "Set your resource to scale to a single instance on a Sunday. ... Select Scale
    to a specific instance count. ... Enter 1 in the Instance count field. ... Select
    Repeat specific days. ... Select Sunday." and "Outside of this time range, the
    default scale condition applies." (GS_URL). A rule-less profile with capacity 1/1/1
    sets 1 instance; the default copy from 23:00 brings back its own range."""
    profiles = [
        {"name": "default", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 20, "Decrease")]},
        {"name": "Sunday", "capacity": {"minimum": 1, "maximum": 1, "default": 1}, "rules": [],
         "recurrence": {"frequency": "Week", "time_zone": "UTC", "days": ["Sunday"], "hours": [6], "minutes": [0]}},
        {"name": '{"name":"Auto created default scale condition","for":"Sunday"}',
         "capacity": {"minimum": 1, "maximum": 3, "default": 1},
         "rules": [rule("cpu", "GreaterThan", 70, "Increase"), rule("cpu", "LessThan", 20, "Decrease")],
         "recurrence": {"frequency": "Week", "time_zone": "UTC", "days": ["Sunday"], "hours": [23], "minutes": [0]}},
    ]
    sunday_noon = 1768737600.0       # Sunday 2026-01-18 12:00 UTC
    cpu = {"cpu": series(50, now=sunday_noon)}
    r = decide({"semantics": "azure", "now": sunday_noon, "current_replicas": 3,
                "policy": {"profiles": profiles}, "observations": {"metrics": cpu}})
    assert (r["profile"], r["desired_replicas"]) == ("Sunday", 1)
    later = sunday_noon + 11.5 * HOUR   # Sunday 23:30
    r = decide({"semantics": "azure", "now": later, "current_replicas": 1,
                "policy": {"profiles": profiles},
                "observations": {"metrics": {"cpu": series(90, now=later)}}})
    assert r["profile"].startswith('{"name":"Auto created default scale condition"')
    assert r["desired_replicas"] == 2


def at(wall: str, zone: str) -> float:
    """Epoch seconds of a wall-clock time in an IANA zone (the reference is independent of
    scalebridge's Windows-ID table)."""
    return dt.datetime.fromisoformat(wall).replace(tzinfo=ZoneInfo(zone)).timestamp()


def recurring(name: str, zone: str, days, hours, minutes, minimum: int) -> dict:
    return {"name": name, "capacity": {"minimum": minimum, "maximum": 20, "default": minimum}, "rules": [],
            "recurrence": {"frequency": "Week", "time_zone": zone, "days": days,
                           "hours": hours, "minutes": minutes}}


def default_profile(minimum: int = 2) -> dict:
    return {"name": "default", "capacity": {"minimum": minimum, "maximum": 20, "default": minimum}, "rules": []}


def fixed(name: str, zone: str, start: str, end: str, minimum: int) -> dict:
    return {"name": name, "capacity": {"minimum": minimum, "maximum": 20, "default": minimum}, "rules": [],
            "fixed_date": {"start": start, "end": end, "time_zone": zone}}


def profile_at(profiles: list, now: float, current: int = 1) -> str:
    r = decide({"semantics": "azure", "now": now, "current_replicas": current,
                "policy": {"profiles": profiles}, "observations": {}})
    return r["profile"]


NIGHT_DAY = [recurring("weekend", "Pacific Standard Time", ["Friday"], [22], [0], 1),
             recurring("weekday", "Pacific Standard Time", ["Monday"], [6], [0], 3)]


@pytest.mark.parametrize("wall, want", [
    ("2026-01-16T21:59:59", "weekday"),   # Friday, before the weekend start
    ("2026-01-16T22:00:00", "weekend"),   # Friday 22:00: its start
    ("2026-01-17T03:00:00", "weekend"),   # after midnight
    ("2026-01-18T23:59:00", "weekend"),   # Sunday night
    ("2026-01-19T05:59:59", "weekend"),   # Monday, before the weekday start
    ("2026-01-19T06:00:00", "weekday"),
    ("2026-01-21T12:00:00", "weekday"),   # Wednesday
])
def test_recurrence_runs_across_midnight_until_the_next_profile_starts(wall, want):
    """MULTI_URL (ARM templates tab): "There's no specification in the template for end time. A profile
    will remain active until the next profile's start time." and the weekend example: "the weekend
    profile starts on Saturday morning at one minute passed midnight and end on Monday morning at
    04:00". A Friday 22:00 profile (Pacific Standard Time) runs through midnight and the weekend until
    the Monday 06:00 profile starts."""
    assert profile_at(NIGHT_DAY, at(wall, "America/Los_Angeles")) == want


@pytest.mark.parametrize("wall, want", [
    ("2026-01-18T19:59:00", "monday"),       # Sunday before 20:00: last week's Monday start
    ("2026-01-18T20:00:00", "sunday-evening"),
    ("2026-01-19T01:00:00", "sunday-evening"),  # Monday 01:00, across the week boundary
    ("2026-01-19T08:00:00", "monday"),
    ("2026-01-24T23:00:00", "monday"),       # Saturday: six days after the Monday start
])
def test_recurrence_runs_across_the_week_boundary(wall, want):
    """SETTINGS_URL: "The schema for a recurring profile doesn't include an end date. The end of date and
    time for a recurring profile is set by the start time of the following profile." and REST_URL,
    Recurrence.frequency: "This value must be Week, meaning each week will have the same set of
    profiles." Sunday 20:00 UTC runs into Monday until 08:00; the Monday profile runs until Sunday."""
    profiles = [recurring("sunday-evening", "UTC", ["Sunday"], [20], [0], 1),
                recurring("monday", "UTC", ["Monday"], [8], [0], 3)]
    assert profile_at(profiles, at(wall, "UTC")) == want


@pytest.mark.parametrize("wall, want", [
    ("2026-01-19T07:59:59", "evening"),   # the previous start: last Monday 17:30
    ("2026-01-19T08:00:00", "morning"),
    ("2026-01-19T11:59:59", "morning"),
    ("2026-01-19T12:00:00", "midday"),
    ("2026-01-19T17:29:59", "midday"),
    ("2026-01-19T17:30:00", "evening"),
    ("2026-01-20T09:00:00", "evening"),   # Tuesday: no start since Monday 17:30
])
def test_several_recurrence_profiles_on_the_same_day(wall, want):
    """MULTI_URL: "Autoscale transitions between profiles based on their start times. The end time for a
    given profile is determined by the start time of the following profile." Three Monday profiles
    (08:00, 12:00, 17:30, W. Europe Standard Time, listed out of order) each run until the next start,
    exactly from the start second."""
    zone = "W. Europe Standard Time"
    profiles = [recurring("morning", zone, ["Monday"], [8], [0], 1),
                recurring("evening", zone, ["Monday"], [17], [30], 2),
                recurring("midday", zone, ["Monday"], [12], [0], 3)]
    assert profile_at(profiles, at(wall, "Europe/Berlin")) == want


@pytest.mark.parametrize("wall, want", [
    ("2026-01-19T07:59:00", "listed"),    # last Monday's 20:30 start, later than its 09:00
    ("2026-01-19T08:00:00", "listed"),    # hour 8 x minute 0
    ("2026-01-19T08:59:00", "listed"),    # started 08:30
    ("2026-01-19T09:00:00", "other"),
    ("2026-01-19T19:59:00", "other"),
    ("2026-01-19T20:00:00", "listed"),
    ("2026-01-19T20:45:00", "listed"),    # started 20:30
])
def test_recurrence_hours_and_minutes_are_each_a_start(wall, want):
    """REST_URL, RecurrentSchedule: hours "A collection of hours that the profile takes effect on",
    minutes "A collection of minutes at which the profile takes effect at"; protocol: "recurrence lists
    mean every day × hour × minute combination as a start". hours [8, 20] x minutes [30, 0] on Mondays
    (08:00, 08:30, 20:00, 20:30) against another profile starting Monday 09:00."""
    profiles = [recurring("listed", "UTC", ["Monday"], [8, 20], [30, 0], 1),
                recurring("other", "UTC", ["Monday"], [9], [0], 3)]
    assert profile_at(profiles, at(wall, "UTC")) == want


@pytest.mark.parametrize("utc, want", [
    ("2026-03-02T15:59:00", "off"),     # Monday 07:59 PST (UTC-8)
    ("2026-03-02T16:00:00", "business"),  # Monday 08:00 PST
    ("2026-03-09T14:59:00", "off"),     # Monday 07:59 PDT (UTC-7), the day after spring forward
    ("2026-03-09T15:00:00", "business"),  # Monday 08:00 PDT
    ("2026-11-02T15:59:00", "off"),     # Monday 07:59 PST again, the day after fall back
    ("2026-11-02T16:00:00", "business"),
])
def test_recurrence_hours_follow_daylight_saving_time_in_the_profile_time_zone(utc, want):
    """REST_URL, RecurrentSchedule.timeZone: "the timezone for the hours of the profile". A Monday 08:00
    "Pacific Standard Time" profile starts at 08:00 local time all year: 16:00 UTC in winter, 15:00 UTC
    in daylight time (protocol: a Windows time-zone ID "with daylight saving time")."""
    profiles = [recurring("business", "Pacific Standard Time", ["Monday"], [8], [0], 3),
                recurring("off", "Pacific Standard Time", ["Monday"], [18], [0], 1)]
    assert profile_at(profiles, at(utc, "UTC")) == want


def test_recurrence_in_w_europe_standard_time_across_the_spring_change():
    """REST_URL, RecurrentSchedule.timeZone: "the timezone for the hours of the profile". A Sunday 06:00
    "W. Europe Standard Time" profile starts 05:00 UTC on 2026-03-22 (CET) and 04:00 UTC on 2026-03-29
    (CEST, the clocks changed that night)."""
    profiles = [recurring("sunday", "W. Europe Standard Time", ["Sunday"], [6], [0], 3),
                recurring("saturday", "W. Europe Standard Time", ["Saturday"], [0], [0], 1)]
    assert profile_at(profiles, at("2026-03-22T04:59:00", "UTC")) == "saturday"
    assert profile_at(profiles, at("2026-03-22T05:00:00", "UTC")) == "sunday"
    assert profile_at(profiles, at("2026-03-29T03:59:00", "UTC")) == "saturday"
    assert profile_at(profiles, at("2026-03-29T04:00:00", "UTC")) == "sunday"


def test_fixed_date_wins_over_a_recurrence_in_force():
    """SETTINGS_URL: "Each time the autoscale service runs, the profiles are evaluated in the following
    order: 1. Fixed-date profiles 2. Recurring profiles 3. Default profile ... The first suitable profile
    that's found is used." A fixed date (Pacific Standard Time, whole day 2026-03-10, a Tuesday) beats
    the weekday recurrence that started at 08:00 that day, from its start to its end."""
    la = "America/Los_Angeles"
    profiles = [recurring("weekday", "Pacific Standard Time",
                          ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"], [8], [0], 3),
                recurring("night", "Pacific Standard Time",
                          ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"], [18], [0], 1),
                default_profile(),
                fixed("event", "Pacific Standard Time", "2026-03-10T00:00:00", "2026-03-10T23:59:00", 10)]
    assert profile_at(profiles, at("2026-03-09T23:59:59", la)) == "night"
    assert profile_at(profiles, at("2026-03-10T00:00:00", la)) == "event"
    assert profile_at(profiles, at("2026-03-10T12:00:00", la)) == "event"   # the weekday start is inside it
    assert profile_at(profiles, at("2026-03-10T23:59:00", la)) == "event"


def test_fixed_date_capacity_applies_while_in_force():
    """GS_URL: "When this scale condition becomes active, its default instance count is three." and
    SETTINGS_URL capacity.minimum: "It ensures that autoscale doesn't scale your resource below this
    number when it executes the profile". The event profile's minimum 10 lifts 1 instance to 10."""
    profiles = [default_profile(), fixed("event", "UTC", "2026-01-14T00:00:00", "2026-01-14T23:59:00", 10)]
    r = decide({"semantics": "azure", "now": NOW, "current_replicas": 1,
                "policy": {"profiles": profiles}, "observations": {}})
    assert (r["profile"], r["desired_replicas"], r["reason"]) == ("event", 10, "TooFewReplicas")


def test_fixed_date_start_and_end_are_read_in_its_time_zone_with_daylight_time():
    """REST_URL, TimeWindow.timeZone: "the timezone of the start and end times for the profile". A
    2026-07-04 00:00–23:59 "Eastern Standard Time" fixed date is in force from 04:00 UTC (EDT, UTC-4),
    not 05:00 UTC."""
    profiles = [default_profile(), fixed("july-4", "Eastern Standard Time",
                                         "2026-07-04T00:00:00", "2026-07-04T23:59:00", 10)]
    assert profile_at(profiles, at("2026-07-04T03:59:59", "UTC")) == "default"
    assert profile_at(profiles, at("2026-07-04T04:00:00", "UTC")) == "july-4"
    assert profile_at(profiles, at("2026-07-05T03:59:00", "UTC")) == "july-4"
    assert profile_at(profiles, at("2026-07-05T04:00:00", "UTC")) == "default"


def test_default_profile_outside_a_fixed_date():
    """SETTINGS_URL, fixed-date profile: "The profile runs only once, on the event's date and time. For
    all other times, autoscale uses the default profile." and MULTI_URL: "The default profile is used
    when there are no other profiles that match the current date and time." """
    profiles = [default_profile(), fixed("event", "UTC", "2026-01-14T00:00:00", "2026-01-14T23:59:00", 10)]
    assert profile_at(profiles, at("2026-01-13T12:00:00", "UTC")) == "default"
    assert profile_at(profiles, at("2026-01-14T12:00:00", "UTC")) == "event"
    assert profile_at(profiles, at("2026-01-15T12:00:00", "UTC")) == "default"


def test_portal_gap_minute_belongs_to_the_default_copy():
    """MULTI_URL: "The portal forces the end time to be one minute before the start time of the following
    profile. During this minute, the default profile becomes active." Business hours Monday 08:00–16:59
    (default copy from 16:59), an evening profile from 17:00: 16:59 is the default copy's minute."""
    copy_name = '{"name":"Auto created default scale condition","for":"business"}'
    profiles = [recurring("business", "UTC", ["Monday"], [8], [0], 3),
                recurring(copy_name, "UTC", ["Monday"], [16], [59], 2),
                recurring("evening", "UTC", ["Monday"], [17], [0], 1)]
    assert profile_at(profiles, at("2026-01-19T16:58:59", "UTC")) == "business"
    assert profile_at(profiles, at("2026-01-19T16:59:00", "UTC")) == copy_name
    assert profile_at(profiles, at("2026-01-19T16:59:59", "UTC")) == copy_name
    assert profile_at(profiles, at("2026-01-19T17:00:00", "UTC")) == "evening"


REST_TIME_ZONES = (
    "Dateline Standard Time, UTC-11, Hawaiian Standard Time, Alaskan Standard Time, Pacific Standard Time "
    "(Mexico), Pacific Standard Time, US Mountain Standard Time, Mountain Standard Time (Mexico), Mountain "
    "Standard Time, Central America Standard Time, Central Standard Time, Central Standard Time (Mexico), "
    "Canada Central Standard Time, SA Pacific Standard Time, Eastern Standard Time, US Eastern Standard Time, "
    "Venezuela Standard Time, Paraguay Standard Time, Atlantic Standard Time, Central Brazilian Standard Time, "
    "SA Western Standard Time, Pacific SA Standard Time, Newfoundland Standard Time, E. South America Standard "
    "Time, Argentina Standard Time, SA Eastern Standard Time, Greenland Standard Time, Montevideo Standard "
    "Time, Bahia Standard Time, UTC-02, Mid-Atlantic Standard Time, Azores Standard Time, Cape Verde Standard "
    "Time, Morocco Standard Time, UTC, GMT Standard Time, Greenwich Standard Time, W. Europe Standard Time, "
    "Central Europe Standard Time, Romance Standard Time, Central European Standard Time, W. Central Africa "
    "Standard Time, Namibia Standard Time, Jordan Standard Time, GTB Standard Time, Middle East Standard Time, "
    "Egypt Standard Time, Syria Standard Time, E. Europe Standard Time, South Africa Standard Time, FLE "
    "Standard Time, Turkey Standard Time, Israel Standard Time, Kaliningrad Standard Time, Libya Standard "
    "Time, Arabic Standard Time, Arab Standard Time, Belarus Standard Time, Russian Standard Time, E. Africa "
    "Standard Time, Iran Standard Time, Arabian Standard Time, Azerbaijan Standard Time, Russia Time Zone 3, "
    "Mauritius Standard Time, Georgian Standard Time, Caucasus Standard Time, Afghanistan Standard Time, West "
    "Asia Standard Time, Ekaterinburg Standard Time, Pakistan Standard Time, India Standard Time, Sri Lanka "
    "Standard Time, Nepal Standard Time, Central Asia Standard Time, Bangladesh Standard Time, N. Central "
    "Asia Standard Time, Myanmar Standard Time, SE Asia Standard Time, North Asia Standard Time, China "
    "Standard Time, North Asia East Standard Time, Singapore Standard Time, W. Australia Standard Time, "
    "Taipei Standard Time, Ulaanbaatar Standard Time, Tokyo Standard Time, Korea Standard Time, Yakutsk "
    "Standard Time, Cen. Australia Standard Time, AUS Central Standard Time, E. Australia Standard Time, AUS "
    "Eastern Standard Time, West Pacific Standard Time, Tasmania Standard Time, Magadan Standard Time, "
    "Vladivostok Standard Time, Russia Time Zone 10, Central Pacific Standard Time, Russia Time Zone 11, New "
    "Zealand Standard Time, UTC+12, Fiji Standard Time, Kamchatka Standard Time, Tonga Standard Time, Samoa "
    "Standard Time, Line Islands Standard Time").split(", ")


@pytest.mark.parametrize("zone", REST_TIME_ZONES)
def test_every_rest_reference_time_zone_is_accepted(zone):
    """REST_URL, TimeWindow.timeZone and RecurrentSchedule.timeZone: "Some examples of valid time zones
    are: Dateline Standard Time, UTC-11, Hawaiian Standard Time, ... Samoa Standard Time, Line Islands
    Standard Time" (the full list). A fixed date 2026-01-13 00:00 – 2026-01-15 23:59 local contains
    2026-01-14 12:00 UTC and not 2026-01-16 12:00 UTC for every offset from UTC-12 to UTC+14."""
    profiles = [default_profile(), fixed("event", zone, "2026-01-13T00:00:00", "2026-01-15T23:59:00", 10)]
    assert profile_at(profiles, at("2026-01-14T12:00:00", "UTC")) == "event"
    assert profile_at(profiles, at("2026-01-16T12:00:00", "UTC")) == "default"


@pytest.mark.parametrize("zone, iana", [
    ("Pacific Standard Time", "America/Los_Angeles"), ("W. Europe Standard Time", "Europe/Berlin"),
    ("UTC", "UTC"), ("AUS Eastern Standard Time", "Australia/Sydney"), ("India Standard Time", "Asia/Kolkata"),
])
@pytest.mark.parametrize("month", ["01", "07"])
def test_windows_zone_recurrence_starts_at_local_wall_time(zone, iana, month):
    """REST_URL, RecurrentSchedule.timeZone: "the timezone for the hours of the profile". A Wednesday
    09:00 start is 09:00 on the zone's wall clock, in January and in July (southern-hemisphere daylight
    time included)."""
    day = {"01": "2026-01-14", "07": "2026-07-15"}[month]          # both Wednesdays
    profiles = [recurring("wed", zone, ["Wednesday"], [9], [0], 3),
                recurring("tue", zone, ["Tuesday"], [9], [0], 1)]
    start = at(f"{day}T09:00:00", iana)
    assert profile_at(profiles, start - 1) == "tue"
    assert profile_at(profiles, start) == "wed"
