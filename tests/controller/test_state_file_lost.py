"""A state file or lock file deleted or replaced under a running controller is
noticed at the next sync (an inode check) and handled loudly: a deleted state file
is written again from the controller's memory with an error line, a deleted lock
file is locked again, a state file replaced by another file stops the controller
(exit 1, one line naming it). One writer holds without the lock file: the claim
also rests on an abstract Unix socket, which no one can delete. Before, a deleted
state file went unnoticed (its history was gone at the next start), and with its
``.lock`` deleted too a second controller started on the same ``--state`` and both
wrote the same targets."""
from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from scalebridge.controller.loop import build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.controller.store import Holder, SQLiteStore, StoreLost
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE

PERIOD = 15.0
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the claim's abstract Unix socket is Linux's; elsewhere the lock file alone")


def _targets(n: int = 3) -> list[dict]:
    return [{"name": f"t{i}", "ref": {"name": f"t{i}", "size": 2, "load": 6.0}} for i in range(n)]


def _states(path) -> dict:
    return {name: row.state for name, row in SQLiteStore(path, readonly=True).load_all().items()}


@pytest.mark.parametrize("with_its_log", [False, True], ids=["the .db", "the .db, -wal and -shm"])
def test_a_state_file_deleted_under_the_controller_is_written_again_from_memory(write_config, tmp_path, caplog,
                                                                                with_its_log):
    path = write_config(_targets(), providers={"fake": {"type": FAKE}})
    state = tmp_path / "s.db"
    metrics = Metrics()
    c = build_controller(str(path), state=str(state), metrics=metrics)
    try:
        c.sync(DEFAULT_START)
        c.ctx.pauses = {}
        first = _states(state)
        assert set(first) == {"t0", "t1", "t2"} and all(s["scale_up_events"] for s in first.values())
        for suffix in ("", "-wal", "-shm") if with_its_log else ("",):
            os.unlink(f"{state}{suffix}")
        caplog.set_level(logging.ERROR, logger="scalebridge.controller")
        c.sync(DEFAULT_START + PERIOD)
        [said] = [r for r in caplog.records if "state file was deleted" in r.getMessage()]
        assert said.levelno == logging.ERROR and said.fields["file"] == str(state) and said.fields["targets"] == 3
        assert value(metrics, "scalebridge_store_errors_total", {"operation": "state file deleted"}) == 1
        after = _states(state)
        # the history made before the deletion is in the new file: the first sync's scale-up
        # (its rate-limit event, its recommendations) and this sync's
        for name, s in after.items():
            assert s["scale_up_events"] == first[name]["scale_up_events"]
            assert first[name]["recommendations"] == s["recommendations"][:len(first[name]["recommendations"])]
            assert any(r["time"] == DEFAULT_START + PERIOD for r in s["recommendations"])
        c.sync(DEFAULT_START + 2 * PERIOD)   # and written to from then on, said once
        assert len([r for r in caplog.records if "state file was deleted" in r.getMessage()]) == 1
        assert any(r["time"] == DEFAULT_START + 2 * PERIOD for r in _states(state)["t0"]["recommendations"])
    finally:
        c.close()


def test_a_deleted_lock_file_is_locked_again(write_config, tmp_path, caplog):
    path = write_config(_targets(1), providers={"fake": {"type": FAKE}})
    state = tmp_path / "s.db"
    c = build_controller(str(path), state=str(state))
    try:
        c.sync(DEFAULT_START)
        os.unlink(f"{state}.lock")
        caplog.set_level(logging.ERROR, logger="scalebridge.controller")
        c.sync(DEFAULT_START + PERIOD)
        assert any("lock file was deleted" in r.getMessage() for r in caplog.records)
        fd = os.open(f"{state}.lock", os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):   # held again, and it names its holder
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            assert json.loads(os.pread(fd, 4096, 0))["pid"] == os.getpid()
        finally:
            os.close(fd)
    finally:
        c.close()


def test_a_state_file_replaced_by_another_stops_the_controller_naming_it(write_config, tmp_path, capsys):
    path = write_config(_targets(1), providers={"fake": {"type": FAKE}})
    state = tmp_path / "s.db"
    c = build_controller(str(path), state=str(state))
    try:
        c.sync(DEFAULT_START)
        other = tmp_path / "restored.db"
        SQLiteStore(other).close()   # a backup put back, say: not the file the controller writes
        os.replace(other, state)
        with pytest.raises(StoreLost):
            c.sync(DEFAULT_START + PERIOD)
        capsys.readouterr()
        assert c.run(once=True) == 1
        err = capsys.readouterr().err
        [line] = [x for x in err.splitlines() if x.startswith("scalebridge run:")]
        assert str(state) in line and "replaced by another file" in line
    finally:
        c.close()
    # not written over (read once the controller's connection is closed: until then the
    # old file's write-ahead log lies beside the new file, as with any SQLite file replaced
    # under an open connection)
    assert _states(state) == {}


@linux_only
def test_the_holder_is_named_with_its_lock_file_gone(tmp_path):
    state = tmp_path / "s.db"
    holder = SQLiteStore(state)
    try:
        assert holder.claim(Holder.this_process()) is None
        os.unlink(f"{state}.lock")
        other = SQLiteStore(state)
        try:
            assert other.holder().pid == os.getpid()          # what `state show`, `state reset` ask
            assert other.claim(Holder("elsewhere", 1, 0.0)).pid == os.getpid()
            assert not os.path.exists(f"{state}.lock") or other._claim_fd is None
        finally:
            other.close()
    finally:
        holder.close()
    again = SQLiteStore(state)   # released with its holder
    try:
        assert again.claim(Holder.this_process()) is None
    finally:
        again.close()


@linux_only
@pytest.mark.slow
def test_a_second_controller_is_refused_when_the_state_and_its_lock_were_deleted(write_config, tmp_path):
    path = write_config(_targets(2), providers={"fake": {"type": FAKE}}, sync_period_seconds=1)
    state, audit = tmp_path / "s.db", tmp_path / "audit.jsonl"
    first = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state", str(state),
                              "--audit", str(audit)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (audit.exists() and audit.read_text().count("\n") >= 2):
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        for f in (state, f"{state}.lock"):
            os.unlink(f)
        second = subprocess.run([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--once", "--state",
                                 str(state), "--audit", str(tmp_path / "second.jsonl")],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 1, second.stderr
        assert f"pid {first.pid}" in second.stderr and "held by another scalebridge controller" in second.stderr
        assert not (tmp_path / "second.jsonl").exists() or not (tmp_path / "second.jsonl").read_text()
        while not state.exists():   # the first writes its state again at its next sync
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        time.sleep(0.3)
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=20)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err
    assert "the state file was deleted while the controller ran: written again" in err
    assert set(_states(state)) == {"t0", "t1"} and all(s["scale_up_events"] for s in _states(state).values())
