"""The wall clock steps (an NTP correction, a VM resumed from a snapshot); the
monotonic clock does not. ``scalebridge run`` schedules its periods, pacing,
backoff and refusal re-checks on the monotonic clock and stamps its decisions with
wall time, so a step of an hour either way costs at most one period — where a loop
sleeping until the wall clock reaches the next sync did not sync for an hour after
a step back (and synced twice at once after a step forward).

In process, on a clock whose two readings the test moves (sleeping advances both,
at once; :meth:`_Stepping.step` moves the wall reading only); and once on a real
``scalebridge run`` whose wall clock Debian's ``faketime`` steps
(``DONT_FAKE_MONOTONIC=1``: the monotonic clock stays the kernel's)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest

from scalebridge.controller.clock import Clock
from scalebridge.controller.loop import BACKOFF_CAP_PERIODS, build_controller
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE

PERIOD = 15.0
HOUR = 3600.0


class _Stepping(Clock):
    """Wall and monotonic readings moved by the test: ``sleep`` advances both at once;
    :meth:`step` moves the wall reading only (as NTP steps a host's clock). Not
    virtual: the controller runs its real-time loop on it."""

    virtual = False

    def __init__(self, wall: float):
        self.wall = wall
        self.mono = 5000.0

    def now(self) -> float:
        return self.wall

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float, stop=None) -> bool:
        if stop is not None and stop.is_set():
            return False
        seconds = max(0.0, seconds)
        self.wall += seconds
        self.mono += seconds
        return True

    def step(self, seconds: float) -> None:
        self.wall += seconds


def _run(c, clock: _Stepping, syncs: int, steps: dict[int, float]) -> list[tuple[float, float]]:
    """``c.run()`` for ``syncs`` syncs, the wall clock stepped by ``steps[k]`` seconds
    after sync ``k`` (from 0); the (monotonic, wall) readings of every sync."""
    seen: list[tuple[float, float]] = []
    real = c.sync

    def sync(*args, **kwargs):
        seen.append((clock.mono, clock.wall))
        report = real(*args, **kwargs)
        k = len(seen) - 1
        if k in steps:
            clock.step(steps[k])
        if len(seen) >= syncs:
            c.request_stop()
        return report
    c.sync = sync
    try:
        assert c.run() == 0
    finally:
        c.sync = real
    return seen


def _controller(write_config, tmp_path, clock, *, targets=None, audit=None, **fake):
    targets = targets or [{"name": "web", "ref": {"name": "web", "size": 2, "load": 3.0}}]
    path = write_config(targets, providers={"fake": {"type": FAKE, **fake}}, sync_period_seconds=PERIOD)
    return build_controller(str(path), state=str(tmp_path / "s.db"), clock=clock, seed=3,
                            audit=None if audit is None else str(audit))


@pytest.mark.parametrize("step", [-HOUR, HOUR], ids=["back", "forward"])
def test_a_stepped_wall_clock_costs_no_period(write_config, tmp_path, step):
    clock = _Stepping(DEFAULT_START)
    audit = tmp_path / "audit.jsonl"
    c = _controller(write_config, tmp_path, clock, audit=audit)
    try:
        seen = _run(c, clock, 12, {4: step})
    finally:
        c.close()
    gaps = [b[0] - a[0] for a, b in zip(seen, seen[1:])]
    # every sync one period after the one before, on the monotonic clock, whatever the wall did
    assert gaps == pytest.approx([PERIOD] * 11), gaps
    # and the decisions are stamped with wall time: the audit steps with it
    times = [json.loads(line)["time"] for line in audit.read_text().splitlines()]
    assert times[5] - times[4] == pytest.approx(PERIOD + step)
    assert [b - a for a, b in zip(times[5:], times[6:])] == pytest.approx([PERIOD] * 6)


def test_a_backing_off_target_is_retried_on_time_after_the_clock_steps_back(write_config, tmp_path):
    clock = _Stepping(DEFAULT_START)
    c = _controller(write_config, tmp_path, clock)
    fake = c.runtime.providers["fake"]
    fake.inject("timeout", target="web", call="observe")     # the first sync fails: the target backs off
    try:
        seen = _run(c, clock, BACKOFF_CAP_PERIODS + 4, {0: -HOUR})
    finally:
        c.close()
    observed = fake.count("observe", "web")
    # one period of backoff (jittered in its upper half) after one failure: the second
    # observe is at the second or third sync, not an hour of syncs later
    assert observed >= len(seen) - 2, f"observed {observed} times in {len(seen)} syncs"


def test_pacing_refills_on_time_after_the_clock_steps_back(write_config, tmp_path):
    clock = _Stepping(DEFAULT_START)
    # one read a period: a bucket refilled on the wall clock gives none for an hour after a step back
    c = _controller(write_config, tmp_path, clock,
                    pacing={"reads_per_second": 1 / PERIOD, "read_burst": 1, "writes_per_second": 1, "write_burst": 1})
    audit: list[dict] = []
    real = c.sync

    def sync(*args, **kwargs):
        report = real(*args, **kwargs)
        audit.extend(report.records)
        return report
    c.sync = sync
    try:
        _run(c, clock, 10, {2: -HOUR})
    finally:
        c.close()
    actions = [r["action"] for r in audit]
    assert "paced" not in actions[3:], actions


def test_a_refusing_target_is_asked_again_on_time_after_the_clock_steps_back(write_config, tmp_path):
    clock = _Stepping(DEFAULT_START)
    c = _controller(write_config, tmp_path, clock)
    c.ctx.refusal_recheck_seconds = 2 * PERIOD
    fake = c.runtime.providers["fake"]
    try:
        _run(c, clock, 9, {0: -HOUR})
    finally:
        c.close()
    # asked at the first sync, then every two periods: at syncs 0, 2, 4, 6, 8
    assert fake.count("managed_by", "web") == 5


def _faketime_lib() -> Optional[str]:
    for d in ("/usr/lib/x86_64-linux-gnu/faketime", "/usr/lib/aarch64-linux-gnu/faketime", "/usr/lib/faketime"):
        p = Path(d) / "libfaketimeMT.so.1"
        if p.exists():
            return str(p)
    return None


@pytest.mark.slow
@pytest.mark.skipif(_faketime_lib() is None, reason="Debian's faketime is not installed (`apt-get install faketime`; "
                                                     ".ci/run installs it when it runs as root): the in-process "
                                                     "tests above cover the same loop")
@pytest.mark.parametrize("step", ["-3600", "+3600"], ids=["back", "forward"])
def test_a_real_process_keeps_its_period_when_its_wall_clock_steps(write_config, tmp_path, step):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 3.0}}],
                        providers={"fake": {"type": FAKE}}, sync_period_seconds=1)
    offset = tmp_path / "faketime"
    offset.write_text("+0\n")
    audit = tmp_path / "audit.jsonl"
    env = dict(os.environ, LD_PRELOAD=_faketime_lib(), FAKETIME_TIMESTAMP_FILE=str(offset), FAKETIME_NO_CACHE="1",
               DONT_FAKE_MONOTONIC="1")
    exe = shutil.which("scalebridge", path=str(Path(sys.executable).parent)) or "scalebridge"
    proc = subprocess.Popen([exe, "run", str(path), "--state", str(tmp_path / "s.db"), "--audit", str(audit)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def records() -> list[dict]:
        return [json.loads(x) for x in audit.read_text().splitlines()] if audit.exists() else []
    try:
        deadline = time.monotonic() + 30
        while len(records()) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the controller never synced"
            time.sleep(0.05)
        offset.write_text(step + "\n")
        before = len(records())
        time.sleep(5.0)
        after = records()[before:]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert 4 <= len(after) <= 6, f"{len(after)} syncs in 5 s at a 1-s period after a step of {step} s"
    assert after[-1]["time"] - records()[0]["time"] == pytest.approx(float(step), abs=20)
