"""State times ahead of ``now`` — a state written while the host's clock was two
hours ahead, read once the clock is corrected, or held in memory across a step back
of the wall clock — are clamped to ``now`` where the controller loads the state,
with a warning naming the target; never inside the pure decision.

Before, an Azure rule cooldown of 10 s started two hours "in the future" never
ended (no scale action in the whole run), and a stabilization window whose
recommendations lay ahead looked empty (every semantics reads an entry after
``now`` as outside its window: docs/protocol.md, "a sample at t is inside a window
of length w ending at now when now − w < t ≤ now").
"""
from __future__ import annotations

import logging
import math

import pytest

from scalebridge.controller.clamp import TIMED, UNTIMED, clamp_future
from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE
from .test_clock_steps import _Stepping, _run

PERIOD = 15.0
AHEAD = 7200.0
AZURE = {"semantics": "azure", "min_replicas": 1, "max_replicas": 20,
         "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70, "time_window_seconds": 60,
                    "action": {"direction": "Increase", "type": "ChangeCount", "value": 1,
                               "cooldown_seconds": 10}}]}
CPU = {"min_replicas": 1, "max_replicas": 20,
       "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}]}


def _config(write_config, policy, semantics=None, load=3.0, size=2):
    target = {"name": "web", "ref": {"name": "web", "size": size, "load": load}}
    if semantics:
        target["semantics"] = semantics
    return write_config([target], providers={"fake": {"type": FAKE}}, policies={"web": policy},
                        sync_period_seconds=PERIOD)


def _times(value, out):
    if isinstance(value, dict):
        for v in value.values():
            _times(v, out)
    elif isinstance(value, list):
        for v in value:
            _times(v, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1e9:
        out.append(value)
    return out


def test_an_azure_rule_cooldown_written_two_hours_ahead_ends(write_config, tmp_path, caplog):
    path = _config(write_config, AZURE)
    state = tmp_path / "s.db"
    ahead = build_controller(str(path), state=str(state), clock=VirtualClock(DEFAULT_START + AHEAD))
    try:
        [rec] = ahead.sync().records
        assert rec["action"] == "applied" and rec["desired_replicas"] == 3, rec    # the rule fired, 10 s cooldown
    finally:
        ahead.close()
    # the clock corrected: two hours back; the load still above the threshold
    caplog.set_level(logging.WARNING, logger="scalebridge.controller")
    c = build_controller(str(path), state=str(state), clock=VirtualClock(DEFAULT_START))
    try:
        loaded = c.runs[0].decider.state.to_protocol()
        assert max(_times(loaded, [])) <= DEFAULT_START, "no time of the loaded state is ahead of now"
        actions = [c.sync(DEFAULT_START + k * PERIOD).records[0]["action"] for k in range(1, 8)]
    finally:
        c.close()
    assert "applied" in actions, actions   # the cooldown counted from now, 10 s, and ended
    [warning] = [r for r in caplog.records if "times ahead of now" in r.getMessage()]
    assert warning.fields["target"] == "web" and "last_scale.time" in warning.fields["clamped"]
    assert "2 h ahead" in warning.fields["clamped"]
    # and what is persisted is clamped: the next start reads what this one decided on
    row = SQLiteStore(state, readonly=True).load("web")
    assert max(_times(row.state, [])) < DEFAULT_START + AHEAD


@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "scalebridge"])
def test_a_stabilization_window_written_ahead_still_holds_a_scale_in(write_config, tmp_path, semantics):
    state = tmp_path / "s.db"
    high = _config(write_config, CPU, semantics, load=6.0, size=4)     # 150 % of 60 %: up to 10
    ahead = build_controller(str(high), state=str(state), clock=VirtualClock(DEFAULT_START + AHEAD))
    try:
        for k in range(3):
            ahead.sync(DEFAULT_START + AHEAD + k * PERIOD)
        scaled = ahead.runs[0].spec.target.state.size
        assert scaled > 4
    finally:
        ahead.close()
    low = _config(write_config, CPU, semantics, load=1.0, size=scaled)   # the demand falls away
    c = build_controller(str(low), state=str(state), clock=VirtualClock(DEFAULT_START))
    try:
        [rec] = c.sync(DEFAULT_START).records
    finally:
        c.close()
    # the high recommendations, clamped to now, hold the scale-in for the window (5 or 10 min)
    assert rec["desired_replicas"] == scaled, rec


def test_a_step_back_of_the_wall_clock_clamps_the_state_in_memory(write_config, tmp_path, caplog):
    """An external metric (its samples do not hang on the members' start times, which
    a step back puts in the future too): 12 messages at 1 a replica, then 2."""
    from scalebridge.testing.fake import Load
    caplog.set_level(logging.WARNING, logger="scalebridge.controller")
    clock = _Stepping(DEFAULT_START)
    queue = {"min_replicas": 1, "max_replicas": 20,
             "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 1}}]}
    path = write_config([{"name": "web", "semantics": "kubernetes",
                          "ref": {"name": "web", "size": 4, "metrics": {"queue": {"load": 12, "as": "total"}}}}],
                        providers={"fake": {"type": FAKE}}, policies={"web": queue}, sync_period_seconds=PERIOD)
    c = build_controller(str(path), state=str(tmp_path / "s.db"), clock=clock)
    fake = c.runtime.providers["fake"]
    try:
        seen = _run(c, clock, 3, {})
        scaled = fake.size("web")
        fake.targets["web"].metric_loads["queue"] = (Load(base=2.0), "total")
        c.stop_event.clear()
        clock.step(-3600.0)
        _run(c, clock, 4, {})
        state = c.runs[0].decider.state.to_protocol()
    finally:
        c.close()
    assert len(seen) == 3 and scaled > 4
    assert fake.size("web") == scaled, "the window still holds the scale-in after the step back"
    assert max(_times(state, [])) <= clock.wall
    assert any("stepped back 1h" in r.getMessage() for r in caplog.records)
    assert any("times ahead of now" in r.getMessage() for r in caplog.records)


def test_every_time_of_every_key_is_clamped():
    now = 1_800_000_000.0
    t = now + AHEAD
    state = {"recommendations": [{"time": now - 10, "replicas": 3}, {"time": t, "replicas": 4}],
             "sizes": [{"time": t, "replicas": 4}],
             "scale_up_events": [{"time": t, "change": 1, "cause": "rule"}],
             "scale_down_events": [{"time": t + 5, "change": 1, "cause": "metric"}],
             "last_scale": {"time": t, "direction": "Increase", "cause": "rule", "completed_at": t + 30},
             "azure.last_rule_scale": {"time": t, "cause": "rule", "cooldown_seconds": 10},
             "activation.last_active": t,
             "aws.alarm_invoked": {"high": t},
             "aws.alarm_states": {"high": "ALARM"}, "aws.max_capacity": 12, "fallback.failures": {"cpu": 2},
             "kubernetes.scale_up_order": [t, now - 100],
             "plugin.own": {"window": [{"until_time": t}], "started_at": t, "count": 2_000_000_000}}
    out, changed = clamp_future(state, now)
    assert max(_times(out, [])) == 2_000_000_000     # a count, not a time: left alone
    assert max(x for x in _times(out, []) if x != 2_000_000_000) == now
    assert out["recommendations"][0]["time"] == now - 10, "times not ahead are kept"
    assert out["kubernetes.scale_up_order"] == [now, now - 100]
    assert len(changed) == 12 and all(ahead >= AHEAD for _, ahead in changed)
    assert clamp_future(out, now) == (out, [])
    assert state["sizes"][0]["time"] == t, "the state given is not changed"


def test_every_key_a_semantics_writes_is_known_to_the_clamp():
    """Every key any semantics or control writes into ``state`` (over the examples, every
    semantics, three decisions each) is one whose times the clamp knows, or one known
    to hold none: a new key must be classified (controller/clamp.py)."""
    import json
    from pathlib import Path
    from scalebridge.engine import decide
    from scalebridge.registry import current
    root = Path(__file__).resolve().parents[2] / "examples"
    keys: set[str] = set()
    semantics = sorted(current().semantics)
    for f in sorted([*root.glob("requests/*.json"), *root.glob("situations/*.json"), *root.glob("controls/*.json")]):
        req = json.loads(f.read_text())
        if not isinstance(req, dict) or "now" not in req:
            continue
        for s in semantics:
            r = dict(req, semantics=s)
            for _ in range(3):
                try:
                    resp = decide(r)
                except Exception:   # noqa: BLE001 — a request a semantics refuses: nothing written
                    break
                st = resp.get("state") if isinstance(resp, dict) else None
                if not st:
                    break
                keys |= set(st)
                r = dict(r, now=r["now"] + 60, state=st, current_replicas=resp.get("desired_replicas",
                                                                                   r["current_replicas"]))
    assert keys, "the examples wrote some state"
    unknown = {k for k in keys if k not in TIMED and k not in UNTIMED}
    assert not unknown, f"state keys the clamp does not know: {sorted(unknown)}"
    assert math.isfinite(len(keys))
