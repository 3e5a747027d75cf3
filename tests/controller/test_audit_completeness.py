"""The audit log is complete: a write carried out before a crash is audited at the
next start (the intent's time, sizes and decision, action ``applied``,
``recovered: true``) on the real clock too; an audit sink that fails — a closed
pipe, a full disk — stops the controller with exit 1 and one line, after the state
is persisted."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from scalebridge.controller.audit import AuditLog
from scalebridge.controller.loop import build_controller
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE

REF = {"name": "web", "size": 3, "load": 4.2}   # 3 members far above 60 %: 3 -> 7


def _cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=60, **kw)


def test_a_kill_between_the_write_and_its_audit_record_on_the_real_clock(write_config, tmp_path):
    world = tmp_path / "world.json"
    audit = tmp_path / "audit.jsonl"
    state = tmp_path / "s.db"
    killing = write_config([{"name": "web", "ref": REF}],
                           providers={"fake": {"type": FAKE, "world": str(world), "kill_after_write": [1]}})
    before = time.time()
    killed = _cli("run", killing, "--once", "--state", state, "--audit", audit)
    assert killed.returncode == -9
    assert not audit.exists() or not audit.read_text().strip(), "the kill came before the audit record"
    path = write_config([{"name": "web", "ref": REF}], providers={"fake": {"type": FAKE, "world": str(world)}})
    again = _cli("run", path, "--once", "--state", state, "--audit", audit)
    assert again.returncode == 0, again.stderr
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    recovered = [r for r in records if r.get("recovered")]
    assert len(recovered) == 1
    [r] = recovered
    assert r["action"] == "applied" and r["target"] == "web"
    assert (r["current_replicas"], r["desired_replicas"]) == (3, 7)
    assert before <= r["time"] < records[-1]["time"], "the intent's own time, not the restart's"
    assert records[-1]["action"] == "unchanged" and records[-1]["current_replicas"] == 7
    # once audited, it is not audited again
    third = _cli("run", path, "--once", "--state", state, "--audit", audit)
    assert third.returncode == 0
    assert sum(1 for line in audit.read_text().splitlines() if json.loads(line).get("recovered")) == 1


class _Killed(BaseException):
    """Stands for the process dying between the persist and the audit write."""


class _DiesWriting(AuditLog):
    def write(self, records):
        raise _Killed()


def test_a_crash_after_the_persist_before_the_audit_is_audited_at_the_next_start(write_config, tmp_path):
    path = write_config([{"name": "web", "ref": REF}], providers={"fake": {"type": FAKE,
                                                                          "world": str(tmp_path / "w.json")}})
    state = str(tmp_path / "s.db")
    c = build_controller(str(path), state=state, audit=_DiesWriting(str(tmp_path / "lost.jsonl")))
    try:
        with pytest.raises(_Killed):
            c.sync(DEFAULT_START)
        assert SQLiteStore(state, readonly=True).load("web").intent_size is None, "the write was persisted"
    finally:
        c.store.close()   # what dying leaves: no audit record, the claim released by the OS
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(path), state=state, audit=str(audit))
    try:
        first = c.sync(DEFAULT_START + 15).records
        assert [r["action"] for r in first] == ["applied", "unchanged"]
        assert first[0]["recovered"] is True and first[0]["time"] == DEFAULT_START
        assert (first[0]["current_replicas"], first[0]["desired_replicas"]) == (3, 7)
        assert "recovered" not in c.sync(DEFAULT_START + 30).records[0]
    finally:
        c.close()


def _persisted(state) -> dict:
    return SQLiteStore(state, readonly=True).load_all()


def test_a_closed_audit_pipe_stops_the_controller_with_exit_1(write_config, tmp_path):
    """The issue: with ``--audit -`` and a reader that goes away, the controller exited
    0 with no line, so a supervisor would not restart it."""
    path = write_config([{"name": "web", "ref": REF}], providers={"fake": {"type": FAKE}}, sync_period_seconds=1)
    state = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state", str(state),
                             "--audit", "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert json.loads(first)["action"] == "applied"
        proc.stdout.close()            # the reader goes away (`| head -1`)
        err = proc.stderr.read()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert "Traceback" not in err and "Exception ignored" not in err
    said = [line for line in err.splitlines() if line.startswith("scalebridge run:")]
    assert len(said) == 1 and "the audit log failed" in said[0] and "standard output" in said[0]
    assert _persisted(state)["web"].state["sizes"], "the state was persisted before it stopped"


def test_an_audit_file_on_a_full_disk_stops_the_controller_with_exit_1(write_config, tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here (Linux's always-full device)")
    path = write_config([{"name": "web", "ref": REF}], providers={"fake": {"type": FAKE}})
    state = tmp_path / "s.db"
    done = _cli("run", path, "--once", "--state", state, "--audit", "/dev/full")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("scalebridge run:")]
    assert len(said) == 1 and "/dev/full" in said[0] and "No space left on device" in said[0]
    row = _persisted(state)["web"]
    assert row.intent_size is None and row.state["scale_up_events"], "the write and its state were persisted"
