"""SIGTERM or SIGINT during a sync: no new target sync starts, the write in flight
finishes, state is persisted, exit 0 (run-config contract, "SIGTERM or SIGINT")."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from scalebridge.controller.store import SQLiteStore

from .conftest import FAKE


def _writes(world) -> int:
    try:
        return json.loads(world.read_text())["total_writes"]
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_write_lets_it_finish_persists_and_exits_0(write_config, tmp_path, sig):
    world = tmp_path / "world.json"
    targets = [{"name": f"t{i}", "ref": {"name": f"t{i}", "size": 2, "load": 3.0}} for i in range(3)]
    path = write_config(targets, providers={"fake": {"type": FAKE, "world": str(world), "pause_after_write": 1.5}})
    state = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state", str(state),
                             "--workers", "1", "--audit", str(tmp_path / "audit.jsonl")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while _writes(world) < 1:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no write happened"
            time.sleep(0.02)
        proc.send_signal(sig)           # the first write is in its 1.5 s pause: in flight
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert _writes(world) == 1, "no new target sync after the signal"
    rows = SQLiteStore(state, readonly=True).load_all()
    [written] = [r for r in rows.values() if r.state["scale_up_events"]]
    assert written.intent_size is None, "the write that finished was persisted as carried out"
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    # every target was decided before the writes began; the writes not begun are reported, not made
    assert sorted(r["action"] for r in audit) == ["applied", "failed", "failed"]
    assert all("stopped before the write" in r["error"] for r in audit if r["action"] == "failed")
    assert all(not r.state["scale_up_events"] for r in rows.values() if r is not written)
