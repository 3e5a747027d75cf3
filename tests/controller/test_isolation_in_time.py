"""One target whose API call hangs (a response slow up to the client's timeout) fails
that target only: a target's reads and decision must finish within half a sync
period of their start and its write within one period, else the target's sync is
abandoned at that deadline (audited ``failed``, its call left to return on its own
thread) and the others keep their period. Before, with 4 targets at a 1-s period
and one call hanging 4 s, the neighbours' period stretched to a mean of 1.75 s and at
most 4.0 s (the loop waited for the slowest before the next sync).

In process, on the real clock (the hang is real time), for a few seconds."""
from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest

from scalebridge.controller.loop import build_controller

from .conftest import FAKE

PERIOD = 1.0


def _syncs(c, seconds: float) -> list[dict]:
    """``c.run()`` for ``seconds`` of real time; every audit record, with ``mono``: the
    monotonic time of its sync."""
    records: list[dict] = []
    real = c.sync

    def sync(*args, **kwargs):
        t = time.monotonic()
        report = real(*args, **kwargs)
        records.extend(dict(r, mono=t) for r in report.records)
        return report
    c.sync = sync
    stopper = threading.Timer(seconds, c.request_stop)
    stopper.start()
    try:
        assert c.run() == 0
    finally:
        stopper.cancel()
    return records


def _periods(records: list[dict]) -> dict[str, list[float]]:
    at: dict[str, list[float]] = defaultdict(list)
    for r in records:
        at[r["target"]].append(r["mono"])
    return {t: [b - a for a, b in zip(ts, ts[1:])] for t, ts in at.items()}


@pytest.mark.parametrize("call", ["observe", "set_size"])
def test_a_hanging_target_fails_alone_and_the_others_keep_their_period(write_config, tmp_path, call):
    targets = [{"name": f"t{i}", "ref": {"name": f"t{i}", "size": 2, "load": 2.0 if i else 6.0}} for i in range(4)]
    path = write_config(targets, providers={"fake": {"type": FAKE, "blocking": True,
                                                     "hang": [{"target": "t0", "call": call, "seconds": 4.0}]}},
                        sync_period_seconds=PERIOD)
    c = build_controller(str(path), state=str(tmp_path / "s.db"), workers=4)
    try:
        records = _syncs(c, 6.5)
    finally:
        c.close()
    periods = _periods(records)
    for name in ("t1", "t2", "t3"):
        p = periods[name]
        assert len(p) >= 5, (name, p)
        assert sum(p) / len(p) < 1.1 and max(p) < 1.5, (name, [round(x, 2) for x in p])
    hung = [r for r in records if r["target"] == "t0"]
    assert hung and all(r["action"] == "failed" for r in hung[1 if call == "set_size" else 0:]), hung
    assert any("deadline" in (r["error"] or "") for r in hung), hung
    assert not any(r["action"] == "failed" for r in records if r["target"] != "t0")
