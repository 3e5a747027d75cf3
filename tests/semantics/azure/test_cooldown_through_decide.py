"""Azure's per-rule cooldowns through ``scalebridge decide``: the requests as a caller writes
them (JSON on a file), each probe carrying the ``state`` a previous response returned.

The cooldown section of
https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings
(current revision): "After any scale action, autoscale evaluates each candidate rule by using
that rule's configured cooldown. A rule becomes eligible to initiate a scale action when its own
cooldown has elapsed since the most recent scale action." Its timeline: scale-out cooldown 60
minutes, scale-in cooldown 40 minutes, a scale-out at 10:00; at 10:30 the scale-in rule is
deferred, at 10:40 it is eligible; the scale-out rule is not eligible before 11:00.

https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-get-started: "Another
rule with a shorter cool-down period can become eligible sooner"; and, of several scale-out rules
that fire, autoscale "chooses the rule that provides the largest capacity" (settings page).
"""
from __future__ import annotations

import json

from scalebridge.cli import main

TEN = 1768384800          # 2026-01-14 10:00 UTC
MIN = 60


def _rule(metric: str, operator: str, threshold: float, direction: str, value: int, cooldown: int) -> dict:
    return {"metric": metric, "statistic": "Average", "time_grain_seconds": 60, "time_window_seconds": 300,
            "time_aggregation": "Average", "operator": operator, "threshold": threshold,
            "action": {"direction": direction, "type": "ChangeCount", "value": value, "cooldown_seconds": cooldown}}


PAGE_RULES = [_rule("cpu", "GreaterThan", 70, "Increase", 1, 3600),     # scale-out, 60 minutes
              _rule("cpu", "LessThan", 30, "Decrease", 1, 2400)]        # scale-in, 40 minutes


def _series(value: float, now: float) -> dict:
    return {"series": [[now - MIN * k, value] for k in range(4, -1, -1)]}


def _request(now: float, current: int, rules: list, metrics: dict, state: dict | None = None) -> dict:
    req = {"semantics": "azure", "now": now, "current_replicas": current,
           "policy": {"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules},
           "observations": {"metrics": {name: _series(v, now) for name, v in metrics.items()}}}
    if state is not None:
        req["state"] = state
    return req


def _decide(tmp_path, capsys, requests: list[dict]) -> list[dict]:
    """``scalebridge decide FILE`` on JSON Lines: one response per request, in order."""
    f = tmp_path / "requests.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in requests))
    capsys.readouterr()
    assert main(["decide", str(f)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(out) == len(requests)
    return out


def _scale_out_at_ten(tmp_path, capsys, rules: list, metrics: dict) -> dict:
    (r,) = _decide(tmp_path, capsys, [_request(TEN, 4, rules, metrics)])
    assert (r["desired_replicas"], r["reason"]) == (5, "DesiredWithinRange")
    assert r["state"]["last_scale"]["time"] == TEN
    return r["state"]


def test_the_pages_timeline_through_scalebridge_decide(tmp_path, capsys):
    state = _scale_out_at_ten(tmp_path, capsys, PAGE_RULES, {"cpu": 90})
    probes = [(30, 10), (40, 10), (50, 90), (60, 90)]          # minutes after 10:00, CPU %
    out = _decide(tmp_path, capsys, [_request(TEN + m * MIN, 5, PAGE_RULES, {"cpu": cpu}, state)
                                     for m, cpu in probes])
    got = [(r["desired_replicas"], r["reason"]) for r in out]
    assert got == [(5, "CooldownActive"),        # 10:30: the scale-in rule fired, deferred (40 min not over)
                   (4, "DesiredWithinRange"),    # 10:40: the scale-in rule's own 40 minutes are over
                   (5, "CooldownActive"),        # 10:50: the scale-out rule fired, deferred (60 min not over)
                   (6, "DesiredWithinRange")]    # 11:00: the scale-out rule's 60 minutes are over
    assert [[m["triggered"] for m in r["metrics"]] for r in out] == [[False, True], [False, True],
                                                                     [True, False], [True, False]]
    # the deferred probes change nothing: the state still counts from the 10:00 action
    assert out[0]["state"]["last_scale"]["time"] == TEN and out[2]["state"]["last_scale"]["time"] == TEN
    assert out[1]["state"]["last_scale"]["direction"] == "Decrease"


def test_a_scale_in_carried_out_at_10_40_restarts_the_scale_out_rules_hour(tmp_path, capsys):
    """"since the most recent scale action": once the 10:40 scale-in is carried out (its state sent
    back), the scale-out rule counts its 60 minutes from 10:40 — held at 11:00, eligible at 11:40."""
    state = _scale_out_at_ten(tmp_path, capsys, PAGE_RULES, {"cpu": 90})
    (r,) = _decide(tmp_path, capsys, [_request(TEN + 40 * MIN, 5, PAGE_RULES, {"cpu": 10}, state)])
    assert r["desired_replicas"] == 4
    out = _decide(tmp_path, capsys, [_request(TEN + m * MIN, 4, PAGE_RULES, {"cpu": 90}, r["state"])
                                     for m in (60, 99, 100)])
    assert [(x["desired_replicas"], x["reason"]) for x in out] == [
        (4, "CooldownActive"), (4, "CooldownActive"), (5, "DesiredWithinRange")]


def test_two_scale_out_rules_5_and_20_minutes_only_the_5_minute_rule_acts(tmp_path, capsys):
    rules = [_rule("cpu", "GreaterThan", 70, "Increase", 1, 300),        # 5 minutes, +1
             _rule("queue", "GreaterThan", 100, "Increase", 3, 1200)]    # 20 minutes, +3
    state = _scale_out_at_ten(tmp_path, capsys, rules, {"cpu": 90, "queue": 0})
    out = _decide(tmp_path, capsys, [_request(TEN + m * MIN, 5, rules, {"cpu": 90, "queue": 500}, state)
                                     for m in (10, 20)])
    # 10 minutes after the last action both fire; only the 5-minute rule is eligible: +1, not +3
    assert (out[0]["desired_replicas"], out[0]["reason"]) == (6, "DesiredWithinRange")
    assert [m["triggered"] for m in out[0]["metrics"]] == [True, True]
    assert out[0]["state"]["last_scale"]["cooldown_seconds"] == 300
    # 20 minutes after it both are eligible, and the largest capacity wins (+3)
    assert out[1]["desired_replicas"] == 8


def test_a_policy_update_drops_the_state_and_every_cooldown(tmp_path, capsys):
    """"Updating an autoscale setting resets the scale action timestamp and clears the cooldown state
    for all rules" (settings page): the protocol drops ``state`` when the policy changes, so the
    updated policy's first request carries none and its rule acts at once."""
    state = _scale_out_at_ten(tmp_path, capsys, PAGE_RULES, {"cpu": 90})
    updated = [_rule("cpu", "GreaterThan", 60, "Increase", 1, 3600), PAGE_RULES[1]]
    held, fresh = _decide(tmp_path, capsys, [_request(TEN + 10 * MIN, 5, updated, {"cpu": 90}, state),
                                             _request(TEN + 10 * MIN, 5, updated, {"cpu": 90})])
    assert (held["desired_replicas"], held["reason"]) == (5, "CooldownActive")
    assert (fresh["desired_replicas"], fresh["reason"]) == (6, "DesiredWithinRange")
