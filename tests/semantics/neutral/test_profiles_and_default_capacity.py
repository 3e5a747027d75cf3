"""The neutral ``scalebridge`` semantics' profiles and default capacity: profile rules
and capacities, fixed dates, the default capacity when nothing can be read (clamped,
the profile's own, at profile boundaries, held by the window).

Sources: docs/semantics.md (the neutral pipeline and its defaults), docs/policy.md, and the
providers' pages each stage reproduces. Azure: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings."""

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    neutral_in_rule as in_rule, neutral_out_rule as out_rule, neutral_request as neutral,
    neutral_rules_request as rules_request, NOW, series_points as series)


def test_default_capacity_when_nothing_can_be_read():
    req = neutral(3, "500m", policy={"default_replicas": 5})
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 5 and r["reason"] == "ProfileDefault"


def test_default_fallback_when_every_metric_failed_even_with_a_lower_schedule():
    # the protocol (Response.error): "set, with desired_replicas == current_replicas, when no decision
    # can be made (every metric failed; ...) — unless the semantics has a documented fallback
    # count"; docs/semantics.md (no data, scalebridge): "`max(current, default)` if a default
    # exists, else no change".
    sched = [{"name": "low", "schedule": "0 * * * *", "time_zone": "UTC", "duration_seconds": 3600,
              "min_required_replicas": 3}]
    req = neutral(4, "500m", policy={"default_replicas": 6, "schedules": sched})
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 6 and r["reason"] == "ProfileDefault"


def test_profile_rules_replace_top_level_rules():
    # the protocol (profiles): "its `rules` replace the top-level ones"
    def rule(v):
        return [{"metric": "q", "operator": "GreaterThan", "threshold": 10, "time_window_seconds": 120,
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": v}}]
    profiles = [{"name": "d", "capacity": {"minimum": 1, "maximum": 20, "default": 2}, "rules": rule(1)}]
    req = neutral(4, "500m", policy={"profiles": profiles, "rules": rule(3)})
    req["observations"]["metrics"]["q"] = {"series": series([50, 50])}
    r = decide(req)
    assert r["profile"] == "d" and r["desired_replicas"] == 5


def test_fixed_date_profile_capacity_and_iso_strings():
    # the protocol: "The active profile's capacity replaces `min_replicas`/`max_replicas`/...";
    # "`fixed_date.start/end` may also be ISO-8601 strings without offset, read in `time_zone`"
    fixed = {"name": "fx", "capacity": {"minimum": 5, "maximum": 20, "default": 5},
             "fixed_date": {"start": "2025-12-31T23:00:00", "end": "2026-01-01T01:00:00", "time_zone": "UTC"}}
    default = {"name": "d", "capacity": {"minimum": 1, "maximum": 20, "default": 2}}
    r = decide(neutral(4, "500m", policy={"profiles": [fixed, default]}))
    assert r["profile"] == "fx" and r["desired_replicas"] == 5 and r["reason"] == "TooFewReplicas"
    fixed["fixed_date"] = {"start": NOW - 1000, "end": NOW - 100, "time_zone": "UTC"}
    r = decide(neutral(4, "500m", policy={"profiles": [fixed, default]}))
    assert r["profile"] == "d" and r["desired_replicas"] == 4


def test_every_metric_failed_without_default_is_an_error():
    # the protocol: "`error`: set, with `desired_replicas == current_replicas`, when no decision can be
    # made (every metric failed; ...)"
    req = neutral(4, "500m")
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 4 and r["error"] and r["reason"] == "InvalidMetrics"
    assert r["able_to_scale"] is False


def test_default_fallback_is_clamped_and_profile_default_wins():
    # the protocol: "`default_replicas`: the count to use when metrics cannot be read ... for a policy
    # without profiles"; "The active profile's capacity replaces ... `default_replicas`";
    # (azure) "`max(current, default)`, then clamped to the active profile's range, reason `ProfileDefault`"
    req = neutral(3, "500m", policy={"default_replicas": 6, "max_replicas": 5})
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 5 and r["reason"] == "ProfileDefault"
    assert r["state"]["last_scale"]["cause"] == "default"
    profiles = [{"name": "d", "capacity": {"minimum": 1, "maximum": 10, "default": 7}}]
    req = neutral(3, "500m", policy={"profiles": profiles, "default_replicas": 2})
    del req["policy"]["max_replicas"]
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert r["desired_replicas"] == 7 and r["profile"] == "d"


def test_rules_only_policy_nothing_readable_falls_back_to_default():
    # docs/semantics.md (pipeline, 2): "when no metric or rule can be read at all the policy's default
    # capacity is the fallback (`max(current, default)`, ...)"; table: "no data | ... `scalebridge`:
    # `max(current, default)` if a default exists". (The azure semantics answers 5 ProfileDefault here.)
    req = rules_request(3, [out_rule(), in_rule()], {}, {"default_replicas": 5})
    r = decide(req)
    assert r["metrics"][0]["error"]          # both rules report "cannot be read"
    assert r["desired_replicas"] == 5 and r["reason"] == "ProfileDefault"


@pytest.mark.parametrize("offset, profile, desired", [(-1, "eve", 8), (0, "night", 4), (1, "night", 4)])
def test_default_capacity_follows_the_profile_in_force_at_its_boundary(offset, profile, desired):
    # the protocol (profiles): "a recurrence profile runs until the next profile starts"; "The active
    # profile's capacity replaces `min_replicas`/`max_replicas`/`default_replicas`"
    profiles = [{"name": "night", "capacity": {"minimum": 1, "maximum": 12, "default": 3},
                 "recurrence": {"days": ["Thursday"], "hours": [0], "minutes": [0], "time_zone": "UTC"}},
                {"name": "eve", "capacity": {"minimum": 1, "maximum": 12, "default": 8},
                 "recurrence": {"days": ["Wednesday"], "hours": [18], "minutes": [0], "time_zone": "UTC"}}]
    req = neutral(4, "500m", policy={"profiles": profiles})      # NOW is Thursday 00:00 UTC
    req["now"] = NOW + offset
    req["observations"]["metrics"] = {}
    r = decide(req)
    assert (r["profile"], r["desired_replicas"], r["reason"]) == (profile, desired, "ProfileDefault")


def test_default_raised_by_old_profile_is_held_by_the_window_after_the_boundary():
    # docs/semantics.md (3): "stabilization over recorded recommendations in both directions"
    profiles = [{"name": "night", "capacity": {"minimum": 1, "maximum": 12, "default": 3},
                 "recurrence": {"days": ["Thursday"], "hours": [0], "minutes": [0], "time_zone": "UTC"}},
                {"name": "eve", "capacity": {"minimum": 1, "maximum": 12, "default": 8},
                 "recurrence": {"days": ["Wednesday"], "hours": [18], "minutes": [0], "time_zone": "UTC"}}]
    req = neutral(8, "100m", policy={"profiles": profiles}, state={"recommendations": [{"time": NOW - 60, "replicas": 8}]})
    r = decide(req)
    assert (r["profile"], r["desired_replicas"], r["reason"]) == ("night", 8, "ScaleDownStabilized")
