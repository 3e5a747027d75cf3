"""A scale-in whose policy chooses who leaves (``scale_in``) is carried out by
removing the chosen members (``Target.delete_members``) on a provider that declares
``Capability.DELETE_MEMBERS``; the intent names them before the write, so a process
SIGKILLed between the intent and the write is finished by the next start — exactly
the members decided, no more — and one killed after the write removes no one again.
A provider without the capability sets the size (one warning at start)."""
from __future__ import annotations

import json
import subprocess
import sys

from scalebridge.controller.loop import build_controller
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START, FakeProvider

from .conftest import CPU_POLICY, FAKE

# 6 members at 10 % of a 60 % target, no scale-down window: the neutral semantics
# scales in at the first sync; the fake's own order removes the
# last members, so "oldest" (the first ones) is a different choice from the fake's
REF = {"name": "web", "size": 6, "load": 0.6}
POLICY = {**CPU_POLICY, "behavior": {"scale_down": {"stabilization_window_seconds": 0}},
          "scale_in": {"select": "oldest"}}


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def _world(path) -> dict:
    return json.loads(path.read_text())["targets"]["web"]


def _sync_once(path, state, now=DEFAULT_START):
    c = build_controller(str(path), state=str(state))
    try:
        c.sync(now)
        return c
    finally:
        c.store.close()


def test_a_scale_in_removes_the_members_the_policy_chose(write_config, tmp_path):
    path = write_config([{"name": "web", "ref": REF}], policies={"web": POLICY})
    c = build_controller(str(path), state=str(tmp_path / "s.db"), audit=str(tmp_path / "a.jsonl"))
    try:
        c.sync(DEFAULT_START)
        fake = c.runtime.providers["fake"] if hasattr(c, "runtime") else None
    finally:
        c.store.close()
    [rec] = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert rec["action"] == "applied" and rec["current_replicas"] == 6
    removed = 6 - rec["desired_replicas"]
    assert removed > 0
    sel = rec["scale_in"]
    assert sel["how"] == "delete_members" and sel["select"] == "oldest"
    assert sel["members"] == [f"web-{i}" for i in range(removed)], "the oldest first (ties by name)"
    if fake is not None:
        assert fake.deleted("web") == sel["members"]


def test_without_the_capability_the_size_is_set_and_the_provider_chooses(write_config, tmp_path, scalebridge):
    path = write_config([{"name": "web", "ref": REF}], policies={"web": POLICY},
                        providers={"fake": {"type": FAKE, "capabilities": ["metrics"]}})
    audit = tmp_path / "a.jsonl"
    code, out, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", audit)
    assert code == 0, err
    assert err.count("cannot remove chosen members") == 1, err
    [rec] = [json.loads(x) for x in audit.read_text().splitlines()]
    assert rec["action"] == "applied" and rec["scale_in"]["how"] == "set_size"


def _kill_before_delete(write_config, tmp_path, name: str) -> tuple:
    """Run once in a new process with ``kill_at_call`` on the delete_members call."""
    world = tmp_path / f"{name}.json"
    # managed_by, observe, read_metrics, then delete_members: the fourth call of the world
    cfg = write_config([{"name": "web", "ref": REF}], policies={"web": POLICY},
                       providers={"fake": {"type": FAKE, "world": str(world), "kill_at_call": [4]}})
    state, audit = tmp_path / f"{name}.db", tmp_path / f"{name}.jsonl"
    killed = _cli("run", cfg, "--once", "--state", state, "--audit", audit)
    return world, state, audit, killed


def test_a_kill_between_the_intent_and_the_write_then_a_restart_removes_exactly_the_decided_members(
        write_config, tmp_path):
    world, state, audit, killed = _kill_before_delete(write_config, tmp_path, "k")
    assert killed.returncode == -9, killed.stderr
    row = SQLiteStore(str(state), readonly=True).load("web")
    assert row.intent_size is not None, "the intent was persisted before the write"
    decided = json.loads(row.intent_meta)["members"] if isinstance(row.intent_meta, str) else row.intent_meta["members"]
    assert _world(world)["deleted"] == [] and _world(world)["size"] == 6, "the kill came before the write"
    again = write_config([{"name": "web", "ref": REF}], policies={"web": POLICY},
                         providers={"fake": {"type": FAKE, "world": str(world)}})
    done = _cli("run", again, "--once", "--state", state, "--audit", audit)
    assert done.returncode == 0, done.stderr
    w = _world(world)
    removed = [n for _, names in w["deleted"] for n in names]
    assert removed == decided, "exactly the members decided"
    assert w["size"] == row.intent_size == 6 - len(decided)
    assert len([m for m in w["members"] if not m[3]]) == w["size"], "no member beyond the decided ones left"
    # and a further start removes no one
    third = _cli("run", again, "--once", "--state", state, "--audit", audit)
    assert third.returncode == 0
    assert [n for _, names in _world(world)["deleted"] for n in names] == decided


def test_a_kill_after_the_write_removes_no_one_again_at_the_restart(write_config, tmp_path):
    world = tmp_path / "w.json"
    cfg = write_config([{"name": "web", "ref": REF}], policies={"web": POLICY},
                       providers={"fake": {"type": FAKE, "world": str(world), "kill_after_write": [1]}})
    state, audit = tmp_path / "s.db", tmp_path / "a.jsonl"
    assert _cli("run", cfg, "--once", "--state", state, "--audit", audit).returncode == -9
    first = [n for _, names in _world(world)["deleted"] for n in names]
    assert first
    again = write_config([{"name": "web", "ref": REF}], policies={"web": POLICY},
                         providers={"fake": {"type": FAKE, "world": str(world)}})
    assert _cli("run", again, "--once", "--state", state, "--audit", audit).returncode == 0
    assert [n for _, names in _world(world)["deleted"] for n in names] == first
    assert _world(world)["size"] == 6 - len(first)
