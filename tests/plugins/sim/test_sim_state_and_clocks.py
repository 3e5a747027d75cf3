"""A sim target survives a restart (its fleet and load position persisted with its
state, so a killed virtual-clock run decides exactly as an uninterrupted one), runs
on the real clock (its load plays from its first sync), and ends its load with one
line, holding its size."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

from scalebridge.cli import main
from scalebridge.controller.clock import Clock
from scalebridge.controller.loop import build_controller

ROOT = Path(__file__).resolve().parents[3]
POLICY = str(ROOT / "examples" / "run" / "policies" / "web.yaml")


def _config(tmp_path: Path, **ref) -> Path:
    targets = [{"name": f"web-{s}", "provider": "sim", "policy": POLICY, "semantics": s,
                "ref": {"workload": "flash_crowd", "capacity": 10, "startup": 60, **ref}}
               for s in ("kubernetes", "gce", "azure", "scalebridge")]
    path = tmp_path / "sim.yaml"
    path.write_text(yaml.safe_dump({"providers": {"sim": {}}, "targets": targets}))
    return path


def _audit(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _decisions(records: list[dict]) -> list[tuple]:
    return [(r["time"], r["target"], r["current_replicas"], r["desired_replicas"], r["action"]) for r in records]


def test_a_restarted_virtual_run_decides_as_an_uninterrupted_one(tmp_path, capsys):
    """The issue: the fleets were not persisted, so a restarted virtual-clock run came
    back at the initial size (12 applied writes against 10 in a clean run)."""
    path = _config(tmp_path)
    whole, parts = tmp_path / "whole.jsonl", tmp_path / "parts.jsonl"
    assert main(["run", str(path), "--clock", "virtual", "--until", "3h", "--state", str(tmp_path / "a.db"),
                 "--audit", str(whole)]) == 0
    for until in ("40m", "95m", "3h"):   # stopped and restarted twice, on one state file
        assert main(["run", str(path), "--clock", "virtual", "--until", until, "--state", str(tmp_path / "b.db"),
                     "--audit", str(parts)]) == 0
    a, b = _audit(whole), _audit(parts)
    assert sum(r["action"] == "applied" for r in a) >= 8
    assert _decisions(b) == _decisions(a)


def test_a_sim_target_runs_on_the_real_clock_from_its_first_sync(tmp_path, capsys):
    """The docs' first step, `run sim.yaml --once --dry-run --audit -`, failed: the
    load was placed in 1995 and the real clock is past its end."""
    path = _config(tmp_path)
    state = tmp_path / "s.db"
    assert main(["run", str(path), "--once", "--dry-run", "--state", str(state), "--audit", "-"]) == 0
    out = capsys.readouterr().out
    first = [json.loads(line) for line in out.splitlines()]
    assert len(first) == 4 and all(r["action"] in ("unchanged", "dry_run") for r in first)
    assert all(r["desired_replicas"] is not None and r["error"] is None for r in first)
    # the load's first tick is the first sync's time, persisted: a second run continues it
    assert main(["run", str(path), "--once", "--state", str(state), "--audit", "-"]) == 0
    second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all(r["error"] is None for r in second)
    from scalebridge.controller.store import SQLiteStore
    row = SQLiteStore(state, readonly=True).load("web-kubernetes")
    assert row.provider_state["origin"] == first[0]["time"], "the load still starts at the first sync"
    assert len(row.provider_state["observed"]) >= 1
    assert main(["state", "show", "web-kubernetes", "--state", str(state)]) == 0, capsys.readouterr().err
    shown = json.loads(capsys.readouterr().out)
    assert shown["state"]["sizes"]


class _Manual(Clock):
    """Real time, stepped by the test (the controller is told it is not virtual)."""

    def __init__(self, now: float):
        self._now = now

    def now(self) -> float:
        return self._now

    def sleep(self, seconds, stop=None) -> bool:
        self._now += max(0.0, seconds)
        return True


def test_the_end_of_a_load_is_said_once_and_the_size_held(tmp_path, caplog):
    path = _config(tmp_path, duration="10m")
    clock = _Manual(1_800_000_000.0)
    c = build_controller(str(path), clock=clock, state=str(tmp_path / "s.db"))
    try:
        sizes = {}
        with caplog.at_level(logging.INFO, logger="scalebridge.controller"):
            for k in range(60):   # 15 minutes of syncs: 10 of load, then 5 past it
                report = c.sync(clock.now())
                for r in report.records:
                    if r["current_replicas"] is not None:
                        sizes[r["target"]] = r["current_replicas"]
                    assert r["action"] != "failed", r
                clock._now += 15
        ended = [r for r in caplog.records if r.getMessage().startswith("target ended")]
        assert len(ended) == 4, "one line per target, not one per sync"
        assert not c.sync(clock.now()).records, "an ended target is synced no more"
        assert all(c.runs[i].spec.target.world.current == sizes[c.runs[i].spec.name] for i in range(4))
    finally:
        c.close()


def test_a_virtual_run_past_the_end_of_its_load_stops_that_target_with_one_line(tmp_path, capsys):
    path = _config(tmp_path, duration="1h")
    code = main(["run", str(path), "--clock", "virtual", "--until", "2h", "--state", str(tmp_path / "s.db"),
                 "--audit", str(tmp_path / "a.jsonl")])
    err = capsys.readouterr().err
    assert code == 0
    assert err.count("target ended") == 4 and "target failed" not in err
    records = _audit(tmp_path / "a.jsonl")
    assert max(r["time"] for r in records) < records[0]["time"] + 3600 + 1


def test_until_is_a_position_and_a_run_already_there_says_so(tmp_path, capsys):
    """The issue: re-running the same `--clock virtual --until 6h` did nothing, silently."""
    path = _config(tmp_path)
    state = str(tmp_path / "s.db")
    assert main(["run", str(path), "--clock", "virtual", "--until", "1h", "--state", state]) == 0
    capsys.readouterr()
    assert main(["run", str(path), "--clock", "virtual", "--until", "1h", "--state", state,
                 "--audit", str(tmp_path / "a.jsonl")]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("scalebridge run:")]
    assert len(said) == 1 and "already at 1h" in said[0] and "a later --until" in said[0] and state in said[0]
    assert not (tmp_path / "a.jsonl").exists() or not (tmp_path / "a.jsonl").read_text()
    assert main(["run", str(path), "--clock", "virtual", "--until", "90m", "--state", state,
                 "--audit", str(tmp_path / "a.jsonl")]) == 0   # a later position goes on from 1h
    records = _audit(tmp_path / "a.jsonl")
    assert len(records) == 4 * 120


def test_a_shadow_sim_target_is_never_written_while_its_load_asks_for_more(tmp_path, capsys):
    """Shadow mode on the sim provider, which has no native autoscaler to read
    (no ``Capability.NATIVE_DECISIONS``): each target is decided and compared with
    the size it holds, and never written — its fleet stays at its first size through a
    flash crowd it would scale out for when not in shadow."""
    path = _config(tmp_path)
    audit = tmp_path / "audit.jsonl"
    assert main(["run", str(path), "--shadow", "--clock", "virtual", "--until", "3h", "--state",
                 str(tmp_path / "s.db"), "--audit", str(audit)]) == 0
    records = _audit(audit)
    assert {r["action"] for r in records} == {"shadow"}
    for target in {r["target"] for r in records}:
        assert len({r["current_replicas"] for r in records if r["target"] == target}) == 1   # never written
    # ...though it would have been: the kubernetes semantics scales out for the crowd
    assert any(r["desired_replicas"] > r["current_replicas"] for r in records if r["target"] == "web-kubernetes")
