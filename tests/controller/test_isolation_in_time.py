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


@pytest.mark.slow
def test_100_targets_keep_their_period_through_a_clock_step_a_hanging_target_and_a_throttled_provider(
        write_config, tmp_path):
    """All three at once, for 30 s of real time at a 1-s period: the wall clock steps an
    hour back after 10 s and two forward after 20 s; one target's every call hangs 5 s;
    the other provider's server answers 429 with ``Retry-After: 100000``. Every other
    target syncs once a period, counted in the audit file."""
    from scalebridge.controller.audit import read_records
    from scalebridge.controller.clock import SteppedClock

    cloud = [{"name": f"t{i:03d}", "provider": "cloud", "ref": {"name": f"t{i:03d}", "size": 2, "load": 2.0}}
             for i in range(90)]
    throttled = [{"name": f"h{i}", "provider": "busy", "ref": {"name": f"h{i}", "size": 2, "load": 2.0}}
                 for i in range(10)]
    path = write_config(cloud + throttled, sync_period_seconds=PERIOD, providers={
        "cloud": {"type": FAKE, "blocking": True, "hang": [{"target": "t000", "seconds": 5.0}]},
        "busy": {"type": FAKE, "blocking": True,
                 "script": [{"target": "h0", "call": "observe", "nth": 1, "kind": "throttled_retry_after",
                             "retry_after": 100000}]}})
    audit = tmp_path / "audit.jsonl"
    clock = SteppedClock()
    c = build_controller(str(path), state=str(tmp_path / "s.db"), audit=str(audit), clock=clock)
    steps = [threading.Timer(10.0, clock.step, (-3600.0,)), threading.Timer(20.0, clock.step, (7200.0,))]
    for t in steps:
        t.start()
    try:
        _syncs(c, 30.0)
    finally:
        for t in steps:
            t.cancel()
        c.close()
    records = list(read_records(str(audit)))
    by_target: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_target[r["target"]].append(r)
    kept = {f"t{i:03d}": len(by_target[f"t{i:03d}"]) for i in range(1, 90)}
    assert min(kept.values()) >= 28, sorted(kept.items(), key=lambda kv: kv[1])[:5]   # 30 s at a 1-s period
    assert not [r for name in kept for r in by_target[name] if r["action"] == "failed"]
    # the decisions are stamped with the stepped wall time: an hour back, then two forward
    times = [r["time"] for r in by_target["t001"]]
    jumps = [b - a for a, b in zip(times, times[1:])]
    assert min(jumps) < -3500 and max(jumps) > 7100, jumps
    # the hanging target fails alone, at its deadline
    hung = by_target["t000"]
    assert hung and all(r["action"] == "failed" for r in hung)
    assert any("deadline" in (r["error"] or "") for r in hung)
    # the throttled provider: held up to its cap (300 s by default), its targets audited as throttled
    first, *rest = by_target["h0"]
    assert first["action"] == "failed" and first["error_kind"] == "throttled"
    assert all(r["action"] == "paced" for r in rest)   # h0 itself backs off: skipped, not audited, meanwhile
    for name in (f"h{i}" for i in range(1, 10)):   # after the 429 (the first sync ran them all at once)
        after = by_target[name][1:]
        assert after and all(r["action"] == "paced" for r in after), (name, after[:2])
    hints = [first["throttled"]] + [r["throttled"] for i in range(1, 10) for r in by_target[f"h{i}"][1:]]
    assert all(h["retry_after"] == 100000 and h["held_seconds"] == 300 for h in hints), hints[:2]
    print(f"\n100 targets, 30 s at a 1-s period: syncs per kept target min {min(kept.values())}, "
          f"max {max(kept.values())}, mean {sum(kept.values()) / len(kept):.2f}; t000 {len(hung)} (failed); "
          f"h* {len(held := [r for i in range(10) for r in by_target[f'h{i}']])} records, "
          f"{sum(r['action'] == 'paced' for r in held)} paced")
