"""The stage functions the ``azure`` semantics composes (profiles, rules,
cooldown, flapping), tested on their own — the neutral semantics reuses them —
and the bad input the azure semantics must reject with exit status 2."""
from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest

from scalebridge.policy import Policy, Rule, RuleAction
from scalebridge.protocol import MetricObservation
from scalebridge.stages.cooldown import (MEMO_KEY, cooldown_until, forget_expired_rule_action,
                                         last_rule_action, remember_rule_action, rule_cooldown_until)
from scalebridge.stages.flapping import Projection, prevent_flapping, would_scale_out
from scalebridge.stages.profiles import (ProfileTimeline, active_profile, recurrence_last_start,
                                         recurrence_next_start)
from scalebridge.stages.rules import (RuleValue, action_result, aggregate, aggregate_exact, combine_rules,
                                      compare, evaluate_rule, percent_change, rule_value, window_points)
from scalebridge.state import DecisionState, TimeLog


NOW = 1768384800.0   # Wednesday 2026-01-14 10:00 UTC


def mk_rule(op="GreaterThan", threshold=70, direction="Increase", **kw) -> Rule:
    action = kw.pop("action", {"direction": direction, "type": "ChangeCount", "value": 1})
    return Rule.model_validate({"metric": "cpu", "operator": op, "threshold": threshold, "action": action, **kw})


# ----------------------------------------------------------------------------- profiles


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


# ----------------------------------------------------------------------------- rules


def test_window_points_shapes():
    obs = MetricObservation.model_validate({"series": [[NOW - 300, 1], [NOW - 240, 2], [NOW, None], [NOW - 60, 3]]})
    assert window_points(obs, "Average", 60, NOW - 300, NOW) == [(NOW - 240, 2), (NOW - 60, 3)]
    ms = MetricObservation.model_validate({"member_series": {
        "a": [[NOW - 61, 10], [NOW - 30, 20]], "b": [[NOW - 59, 30], [NOW, 50]]}})
    # grains (NOW-120, NOW-60] and (NOW-60, NOW]
    assert window_points(ms, "Max", 60, NOW - 300, NOW) == [(NOW - 60, 10), (NOW, 50)]
    assert window_points(ms, "Sum", 60, NOW - 300, NOW) == [(NOW - 60, 10), (NOW, 100)]
    assert window_points(ms, "Count", 60, NOW - 300, NOW) == [(NOW - 60, 1), (NOW, 3)]
    pct = MetricObservation.model_validate({"member_series": {f"m{i}": [[NOW, i]] for i in range(1, 11)}})
    assert window_points(pct, "Percentile90", 60, NOW - 60, NOW) == [(NOW, 9)]
    assert window_points(pct, "Percentile100", 60, NOW - 60, NOW) == [(NOW, 10)]
    snap = MetricObservation.model_validate({"members": {"a": "500m", "b": 1.5}, "timestamp": NOW - 10})
    assert window_points(snap, "Sum", 60, NOW - 60, NOW) == [(NOW - 10, 2.0)]
    assert window_points(MetricObservation.model_validate({"value": 7}), "Average", 60, NOW - 60, NOW) == []
    assert window_points(None, "Average", 60, NOW - 60, NOW) == []


def test_aggregates_float_and_exact():
    pts = [(1, 0.1), (2, 0.2), (3, 0.3)]
    assert aggregate_exact(pts, "Average") == Fraction(1, 5)
    assert aggregate_exact(pts, "Sum") == Fraction(3, 5)
    assert aggregate(pts, "Count") == aggregate_exact(pts, "Count") == 3
    assert aggregate([(3, 1), (1, 9)], "Last") == 1
    assert aggregate(pts, "Max") == 0.3 and aggregate(pts, "Min") == 0.1


def test_rule_value_and_compare():
    r = mk_rule("LessThan", 0.2, "Decrease", divide_per_instance=True)
    obs = MetricObservation.model_validate({"series": [[NOW - 60, 0.3], [NOW, 0.9]]})
    v = rule_value(r, obs, NOW, 3)
    assert v.approx == pytest.approx(0.2) and v.exact() == Fraction(1, 5)
    assert compare("LessThan", v, 0.2) is False and compare("LessThanOrEqual", v, 0.2) is True
    assert compare("Equals", v, 0.2) is True and compare("NotEquals", v, 0.2) is False
    # projections: value × num / den; den 0 is +infinity for a positive value
    assert compare("GreaterThanOrEqual", v, 0.6, 3, 1) is True
    assert compare("GreaterThan", v, 1e9, 3, 0) is True
    zero = RuleValue(0.0, [(NOW, 0)], "Average")
    assert compare("GreaterThan", zero, 0, 3, 0) is False
    # the window is (now - w, now]
    assert rule_value(mk_rule(time_window_seconds=60), obs, NOW + 60, 1) is None
    assert rule_value(mk_rule(time_window_seconds=60), obs, NOW + 59, 1).approx == 0.9
    # a cache shared by one decision's rules
    cache: dict = {}
    a = rule_value(r, obs, NOW, 3, cache=cache)
    b = rule_value(mk_rule("GreaterThan", 1, divide_per_instance=False), obs, NOW, 3, cache=cache)
    assert len(cache) == 1 and a.approx * 3 == pytest.approx(b.approx)


def test_actions():
    act = lambda **kw: RuleAction.model_validate(kw)   # noqa: E731
    assert action_result(act(direction="Increase", type="ChangeCount", value=3), 4) == 7
    assert action_result(act(direction="Decrease", type="ChangeCount", value=9), 4) == 0
    assert action_result(act(direction="Increase", type="PercentChangeCount", value=15), 10) == 12
    assert action_result(act(direction="Decrease", type="PercentChangeCount", value=15), 10) == 8
    assert action_result(act(direction="Decrease", type="PercentChangeCount", value=15), 10, rounding="floor") == 9
    assert action_result(act(direction="Increase", type="ExactCount", value=8), 3) == 8
    assert action_result(act(direction="Decrease", type="ExactCount", value=8), 3) == 3
    nv = act(direction="Increase", type="ServiceAllowedNextValue")
    assert action_result(nv, 5, allowed=[1, 2, 4, 8]) == 8
    assert action_result(nv, 8, allowed=[1, 2, 4, 8]) == 8
    assert action_result(act(direction="Decrease", type="ServiceAllowedNextValue"), 5, allowed=[1, 2, 4, 8]) == 4
    assert percent_change(100, 29, "floor") == 29
    assert percent_change(3, 50, "nearest") == 2 and percent_change(5, 10, "nearest") == 1
    assert percent_change(10, 1, "floor", min_magnitude=2) == 2


def test_evaluate_and_combine():
    obs = MetricObservation.model_validate({"series": [[NOW, 50]], "forecast": [[NOW + 600, 90]]})
    up = evaluate_rule(mk_rule(), 0, obs, NOW, 4)
    assert (up.fired, up.result) == (False, None)
    fup = evaluate_rule(mk_rule(), 0, obs, NOW, 4, forecast_horizon=600)
    assert (fup.fired, fup.result, fup.forecast) == (True, 5, 90)
    down1 = evaluate_rule(mk_rule("LessThan", 60, "Decrease"), 1, obs, NOW, 4)
    down2 = evaluate_rule(mk_rule("LessThan", 40, "Decrease"), 2, obs, NOW, 4)
    c = combine_rules([up, down1, down2], 4)
    assert (c.count, c.direction) == (4, None) and "1 of 2" in c.why
    c = combine_rules([up, down1], 4)
    assert (c.count, c.direction, c.winners) == (3, "Decrease", [down1])
    c = combine_rules([fup, down1], 4)
    assert (c.count, c.direction) == (5, "Increase")
    missing = evaluate_rule(mk_rule(), 0, None, NOW, 4)
    assert missing.value is None and "no observation" in missing.error


# ----------------------------------------------------------------------------- flapping


def _proj(v, op="GreaterThan", thr=70):
    return Projection(RuleValue(float(v), [(NOW, v)], "Average"), op, thr, "cpu")


def test_prevent_flapping():
    # 30 instances at 65 % CPU, target 20: 28 is the nearest count that would not fire > 70 %
    r = prevent_flapping(30, 20, 1, 60, [_proj(65)])
    assert (r.count, r.reason, r.target) == (28, "FlappingReduced", 20)
    assert prevent_flapping(2, 1, 1, 10, [_proj(28, thr=50)]).reason == "FlappingPrevented"
    assert prevent_flapping(2, 1, 1, 10, [_proj(28, thr=50)]).count == 2
    assert prevent_flapping(3, 2, 1, 10, [_proj(50, "GreaterThanOrEqual", 80)]).count == 2
    # the target is clamped to [min, max] before the estimate; the unclamped target comes back
    assert prevent_flapping(5, 1, 3, 10, [_proj(10)]) .count == 1
    assert prevent_flapping(5, 1, 3, 10, [_proj(10)]).target == 3
    # never searched above the maximum
    assert prevent_flapping(12, 8, 1, 9, [_proj(60)]).count == 12
    assert would_scale_out([_proj(60)], 12, 9) is not None
    # scale-outs pass through
    assert prevent_flapping(3, 5, 1, 10, [_proj(99)]).count == 5


# ----------------------------------------------------------------------------- cooldown


def test_cooldown_functions():
    s = DecisionState()
    assert cooldown_until(s, 300) is None
    s.last_scale = {"time": NOW, "direction": "Increase", "cause": "rule", "cooldown_seconds": 600,
                    "completed_at": NOW + 60}
    assert last_rule_action(s, 300) == (NOW + 60, 600)
    assert cooldown_until(s, 300) == NOW + 660
    assert rule_cooldown_until(s, 120, 300) == NOW + 180
    remember_rule_action(s, NOW + 100, 300)
    s.last_scale = {"time": NOW + 100, "direction": "Increase", "cause": "boundary"}
    assert cooldown_until(s, 300) == NOW + 660
    forget_expired_rule_action(s, NOW + 659, 300)
    assert MEMO_KEY in s.extra
    forget_expired_rule_action(s, NOW + 660, 300)
    assert MEMO_KEY not in s.extra
    # a logged rule event with no known cooldown
    s.scale_down_events = TimeLog([(NOW + 200, 1, "rule"), (NOW + 250, 1, "boundary")])
    assert last_rule_action(s, 300) == (NOW + 200, 300)


# ----------------------------------------------------------------------------- bad input: exit 2, one line


BAD = [
    ("unknown day",
     {"profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
                    "recurrence": {"days": ["Funday"], "hours": [8]}}]},
     "$.policy.profiles[0].recurrence.days[0]", "Funday"),
    ("profile without capacity", {"profiles": [{"name": "p"}]},
     "$.policy.profiles[0].capacity", "required field is missing"),
    ("minimum > maximum", {"profiles": [{"name": "p", "capacity": {"minimum": 5, "maximum": 3, "default": 1}}]},
     "$.policy.profiles[0].capacity", "minimum (5) is greater than maximum (3)"),
    ("min_replicas > max_replicas", {"min_replicas": 5, "max_replicas": 3},
     "$.policy", "min_replicas (5) is greater than max_replicas (3)"),
    ("unknown operator",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "Above", "threshold": 1,
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
     "$.policy.rules[0].operator", "Above"),
    ("unknown time aggregation",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1, "time_aggregation": "Median",
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
     "$.policy.rules[0].time_aggregation", "Median"),
    ("unknown statistic",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1, "statistic": "Mean",
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
     "$.policy.rules[0].statistic", "statistic must be"),
    ("unknown time zone",
     {"profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
                    "recurrence": {"time_zone": "Mars Standard Time", "days": ["Monday"]}}]},
     "$.policy.profiles[0].recurrence.time_zone", "unknown time zone 'Mars Standard Time'"),
    ("unknown fixed-date time zone",
     {"profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
                    "fixed_date": {"start": "2026-01-01T00:00:00", "end": "2026-01-02T00:00:00",
                                   "time_zone": "Nowhere/Land"}}]},
     "$.policy.profiles[0].fixed_date.time_zone", "unknown time zone"),
    ("no capacity at all", {"rules": []}, "$.policy.min_replicas", "required by the azure semantics"),
    ("step-scaling rule",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1,
                 "steps": [{"lower": 0, "adjustment": 1}]}]},
     "$.policy.rules[0].steps", "not an Azure rule"),
]


@pytest.mark.parametrize(("policy", "path", "text"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_exits_2_naming_the_path(cli, policy, path, text):
    req = {"semantics": "azure", "now": NOW, "current_replicas": 2, "policy": policy}
    p = cli("decide", stdin=json.dumps(req))
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"scalebridge decide: {path}: "), lines[0]
    assert text in lines[0]
