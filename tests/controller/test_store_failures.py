"""Failures of the state store are failed syncs of the targets they touch — audited
(action ``failed``, ``error_kind: store``), counted, retried with backoff — never a
crash, and never a write made without its intent persisted: a full disk, a read-only
file, a database locked past the wait, a malformed row (which fails its own target
only)."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from scalebridge.controller import store as store_module
from scalebridge.controller.loop import BACKOFF_CAP_PERIODS, build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE, fill

PERIOD = 15.0


def _targets(n: int = 3, load: float = 6.0) -> list[dict]:
    return [{"name": f"t{i}", "ref": {"name": f"t{i}", "size": 2, "load": load}} for i in range(n)]


def _fill(where: Path) -> Path:
    return fill(where)


def test_a_full_disk_after_the_writes_audits_them_and_keeps_their_state(write_config, tmpfs, tmp_path):
    """The issue's case: the error came after the writes, so that sync's writes were
    never audited. Now they are, the sync counts as failed, and the state reaches the
    store with the next sync that can write."""
    path = write_config(_targets(), providers={"fake": {"type": FAKE}}, sync_period_seconds=PERIOD)
    metrics = Metrics()
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(path), state=str(tmpfs / "s.db"), audit=str(audit), metrics=metrics)
    fake = c.runtime.providers["fake"]
    target = c.runs[0].spec.target
    original = target.set_size
    filled: list[Path] = []

    def write_then_fill(size):   # the disk fills between the writes and the final persist
        change = original(size)
        if not filled:
            filled.append(_fill(tmpfs))
        return change

    target.set_size = write_then_fill
    try:
        report = c.sync(DEFAULT_START)
        assert sum(fake.writes(f"t{i}") for i in range(3)) == 3, "the intents were persisted: the writes made"
        recs = {r["target"]: r for r in report.records}
        assert all(r["action"] == "applied" for r in recs.values()), [(r["action"], r["error"]) for r in recs.values()]
        assert all(r["error_kind"] == "store" and "disk is full" in r["error"] for r in recs.values())
        assert sorted(n for n, _ in report.failed) == ["t0", "t1", "t2"]
        assert value(metrics, "scalebridge_store_errors_total", {"operation": "persist the state"}) == 1
        lines = audit.read_text().splitlines()
        assert len(lines) == 3, "every write of the sync is audited"
        # the targets back off; once the disk has room the next sync saves their state, nothing lost
        filled[0].unlink()
        later = c.sync(DEFAULT_START + 1)
        assert sorted(later.skipped) == ["t0", "t1", "t2"]
        rows = SQLiteStore(tmpfs / "s.db", readonly=True).load_all()
        assert all(rows[f"t{i}"].intent_size is None for i in range(3))
        assert all(rows[f"t{i}"].state["scale_up_events"][0]["time"] == DEFAULT_START for i in range(3))
    finally:
        c.close()


def test_a_full_disk_before_the_writes_makes_none(write_config, tmpfs, tmp_path):
    path = write_config(_targets(), providers={"fake": {"type": FAKE}}, sync_period_seconds=PERIOD)
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(path), state=str(tmpfs / "s.db"), audit=str(audit))
    fake = c.runtime.providers["fake"]
    try:
        filler = _fill(tmpfs)
        report = c.sync(DEFAULT_START)
        assert fake.total_writes == 0, "no write without its intent persisted"
        assert all(r["action"] == "failed" and r["error_kind"] == "store" and "the size was not set" in r["error"]
                   for r in report.records)
        assert len(audit.read_text().splitlines()) == 3
        filler.unlink()
        report = c.sync(DEFAULT_START + (BACKOFF_CAP_PERIODS + 1) * PERIOD)
        assert not report.failed and fake.total_writes == 3
    finally:
        c.close()


def test_a_start_on_a_full_disk_is_one_line_naming_the_store(write_config, tmpfs, scalebridge):
    path = write_config(_targets(1), providers={"fake": {"type": FAKE}})
    state = tmpfs / "s.db"
    _fill(tmpfs)
    code, _, err = scalebridge("run", path, "--once", "--state", state)
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert str(state) in err and "disk is full" in err


def test_a_state_file_turned_read_only_fails_the_syncs_not_the_controller(write_config, tmp_path):
    """A file system cannot be remounted read-only under an open database; SQLite's
    ``query_only`` makes the controller's own connection refuse writes exactly as a
    read-only file does (SQLITE_READONLY, "attempt to write a readonly database")."""
    path = write_config(_targets(2), providers={"fake": {"type": FAKE}}, sync_period_seconds=PERIOD)
    c = build_controller(str(path), state=str(tmp_path / "s.db"))
    fake = c.runtime.providers["fake"]
    try:
        c.sync(DEFAULT_START)
        writes = fake.total_writes
        c.store._db.execute("PRAGMA query_only = ON")
        report = c.sync(DEFAULT_START + PERIOD)
        assert all(r["action"] == "failed" for r in report.records)
        assert all(r.get("error_kind") == "store" and "read-only" in r["error"] for r in report.records)
        assert fake.total_writes == writes
        c.store._db.execute("PRAGMA query_only = OFF")
        report = c.sync(DEFAULT_START + (BACKOFF_CAP_PERIODS + 2) * PERIOD)
        assert not report.failed, report.failed
    finally:
        c.close()


def test_a_state_file_read_only_from_the_start_is_one_line(write_config, tmpfs, scalebridge):
    path = write_config(_targets(1), providers={"fake": {"type": FAKE}})
    state = tmpfs / "s.db"
    assert scalebridge("run", path, "--once", "--state", state)[0] == 0
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    code, _, err = scalebridge("run", path, "--once", "--state", state)
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "read-only" in err and str(state) in err


def test_a_database_locked_past_the_wait_fails_the_writes_and_recovers(write_config, tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "LOCK_WAIT_SECONDS", 0.2)
    path = write_config(_targets(2), providers={"fake": {"type": FAKE}}, sync_period_seconds=PERIOD)
    state = tmp_path / "s.db"
    c = build_controller(str(path), state=str(state))
    fake = c.runtime.providers["fake"]
    other = sqlite3.connect(state, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")   # another process holds the write lock (a sqlite3 shell)
        report = c.sync(DEFAULT_START)
        assert fake.total_writes == 0
        assert all(r["action"] == "failed" and r["error_kind"] == "store" for r in report.records)
        assert all("locked for more than 0.2 s" in r["error"] for r in report.records)
        other.execute("ROLLBACK")
        report = c.sync(DEFAULT_START + (BACKOFF_CAP_PERIODS + 1) * PERIOD)
        assert not report.failed and fake.total_writes == 2
    finally:
        other.close()
        c.close()


def _corrupt(state: Path, sql: str, *args) -> None:
    db = sqlite3.connect(state, isolation_level=None)
    try:
        db.execute(sql, args)
    finally:
        db.close()


@pytest.mark.parametrize("column,value,says", [
    ("state", "not json", "column state: not JSON"),
    ("intent_meta", "[1, 2]", "column intent_meta: expected a JSON object, got list"),
    ("state", '{"recommendations": "soon"}', "column state"),
])
def test_a_malformed_row_fails_its_own_target_only(write_config, tmp_path, scalebridge, column, value, says):
    path = write_config(_targets(3), providers={"fake": {"type": FAKE}})
    state = tmp_path / "s.db"
    assert scalebridge("run", path, "--once", "--state", state)[0] == 0
    if column == "intent_meta":
        _corrupt(state, "UPDATE targets SET intent_size = 5, intent_state = state, intent_meta = ? WHERE name = 't1'",
                 value)
    else:
        _corrupt(state, f"UPDATE targets SET {column} = ? WHERE name = 't1'", value)
    # a stale row of a target no longer configured, malformed too: ignored
    _corrupt(state, "INSERT INTO targets (name, policy_hash, state, updated_at) VALUES ('gone', 'h', 'x{', 0)")
    code, out, err = scalebridge("run", path, "--once", "--state", state, "--audit", "-")
    assert code == 1 and "Traceback" not in err
    assert "target 't1' failed" in err and says in err and "state reset t1" in err
    assert "t0" not in err.replace("'t0'", "") or "target 't0' failed" not in err
    assert "gone" not in err
    import json
    recs = {r["target"]: r for r in map(json.loads, out.splitlines())}
    assert recs["t1"]["action"] == "failed" and recs["t1"]["error_kind"] == "store"
    assert recs["t0"]["action"] != "failed" and recs["t2"]["action"] != "failed"
    # state show shows it, without a traceback; a reset makes the target sync again
    code, out, err = scalebridge("state", "show", "--state", state)
    assert code == 0 and says in json.loads(out)["t1"]["problem"]
    assert scalebridge("state", "reset", "t1", "--state", state)[0] == 0
    assert scalebridge("run", path, "--once", "--state", state)[0] == 0


def test_a_file_that_is_no_database_is_one_line(write_config, tmp_path, scalebridge):
    path = write_config(_targets(1), providers={"fake": {"type": FAKE}})
    state = tmp_path / "s.db"
    state.write_bytes(uuid.uuid4().bytes * 300)
    code, _, err = scalebridge("run", path, "--once", "--state", state)
    assert code in (1, 2) and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "not a scalebridge state file" in err
