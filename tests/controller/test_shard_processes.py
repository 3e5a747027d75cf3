"""``processes: N``: the in-process targets synced in forked shard processes decide,
persist and audit exactly what one process does; a shard that dies stops the
controller with an error, its targets persisted up to their last sync; targets that
share a file (the fake's world on disk) stay in the controller."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import ShardError, build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="shards are forked")

SEMANTICS = ("kubernetes", "gce", "azure", "aws", "scalebridge")
POLICY = {"min_replicas": 1, "max_replicas": 30,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}],
          "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 75, "time_window_seconds": 300,
                     "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}},
                    {"metric": "cpu", "operator": "LessThan", "threshold": 30, "time_window_seconds": 300,
                     "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}


def config(tmp: Path, n: int = 40, processes: int | None = None, **fake) -> Path:
    targets = [{"name": f"t{k:03d}", "provider": "fake", "policy": "web", "semantics": SEMANTICS[k % 5],
                "ref": {"name": f"t{k:03d}", "size": 3,
                        "load": {"base": 1.0 + (k * 37 % 100) / 20.0, "amplitude": 1.0, "period": 1800.0,
                                 "phase": float(k * 13 % 1800)}}}
               for k in range(n)]
    doc = {"sync_period_seconds": 15, "policies": {"web": POLICY}, "targets": targets,
           "providers": {"fake": {"type": "scalebridge.testing.fake:FakeProvider", "settle_observes": 1, **fake}}}
    if processes is not None:
        doc["processes"] = processes
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run_syncs(tmp: Path, processes: int, syncs: int = 30, metrics=None) -> tuple[list, dict]:
    c = build_controller(str(config(tmp)), clock=VirtualClock(DEFAULT_START), state=str(tmp / "state.db"),
                         audit=str(tmp / "audit.jsonl"), seed=1, processes=processes, metrics=metrics)
    try:
        assert len(c._shards) == processes - 1
        reports = [c.sync(DEFAULT_START + 15 * k) for k in range(syncs)]
    finally:
        c.close()
    per_sync = [sorted((r["target"], r["current_replicas"], r["desired_replicas"], r["reason"], r["action"])
                       for r in rep.records) for rep in reports]
    store = SQLiteStore(tmp / "state.db", readonly=True)
    try:
        rows = {name: (row.state, row.intent_size) for name, row in store.load_all().items()}
    finally:
        store.close()
    return per_sync, rows


def test_three_processes_decide_persist_and_audit_what_one_does(tmp_path):
    one, three = tmp_path / "one", tmp_path / "three"
    one.mkdir(), three.mkdir()
    a, rows_a = run_syncs(one, 1)
    b, rows_b = run_syncs(three, 3)
    assert a == b
    assert rows_a == rows_b
    acted = sum(1 for sync in a for rec in sync if rec[4] == "applied")
    assert acted > 40   # the loads move every target: the comparison covers writes, not only holds
    lines = lambda d: sorted(json.dumps({k: v for k, v in json.loads(x).items()}, sort_keys=True)  # noqa: E731
                             for x in (d / "audit.jsonl").read_text().splitlines())
    assert lines(one) == lines(three)


def test_the_controller_counts_the_shards_decisions_in_its_metrics(tmp_path):
    m = Metrics()
    run_syncs(tmp_path, 2, syncs=3, metrics=m)
    # every target, the shard's (odd ones) too, has its gauges and its decisions counted
    for name in ("t000", "t001", "t038", "t039"):
        assert value(m, "scalebridge_current_replicas", {"target": name}) is not None
        total = sum(s.value for metric in m.registry.collect() if metric.name == "scalebridge_decisions"
                    for s in metric.samples if s.labels.get("target") == name and s.name.endswith("_total"))
        assert total == 3


def test_a_dead_shard_stops_the_controller_with_its_targets_persisted(tmp_path):
    c = build_controller(str(config(tmp_path)), clock=VirtualClock(DEFAULT_START), state=str(tmp_path / "state.db"),
                         seed=1, processes=2)
    try:
        c.sync(DEFAULT_START)
        shard = c._shards[0]
        os.kill(shard.pid, signal.SIGKILL)
        os.waitpid(shard.pid, 0)
        with pytest.raises(ShardError, match="shard process"):
            c.sync(DEFAULT_START + 15)
    finally:
        c.close()
    store = SQLiteStore(tmp_path / "state.db", readonly=True)
    try:
        rows = store.load_all()
    finally:
        store.close()
    assert sorted(rows) == [f"t{k:03d}" for k in range(40)]   # the shard's first sync is on disk
    assert all(row.state.get("sizes") for row in rows.values())


def test_run_exits_1_naming_the_dead_shard(tmp_path):
    """Through ``scalebridge run``: the shard is killed from outside between syncs."""
    path = config(tmp_path, processes=2)
    script = (
        "import os, signal, sys\n"
        "from scalebridge.controller import loop\n"
        "from scalebridge.cli import main\n"
        "orig = loop.Controller._sync\n"
        "def _sync(self, now):\n"
        "    if self.syncs == 2:\n"
        "        os.kill(self._shards[0].pid, signal.SIGKILL)\n"
        "    return orig(self, now)\n"
        "loop.Controller._sync = _sync\n"
        "sys.exit(main(['run', sys.argv[1], '--clock', 'virtual', '--until', '10m', '--state', sys.argv[2]]))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "s.db")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "shard process" in proc.stderr and "Traceback" not in proc.stderr


def test_a_fake_with_a_world_on_disk_stays_in_one_process(tmp_path):
    c = build_controller(str(config(tmp_path, world=str(tmp_path / "world.json"))), clock=VirtualClock(DEFAULT_START),
                         state=str(tmp_path / "state.db"), seed=1, processes=4)
    try:
        assert c._shards == [] and len(c.runs) == 40
    finally:
        c.close()


def test_a_stop_during_a_sharded_sync_persists_what_both_processes_did(tmp_path):
    """SIGTERM's path (``request_stop``) reaches the shard: both stop after the target
    they are on, persist, and the report lists what was skipped."""
    import threading
    c = build_controller(str(config(tmp_path, n=40, pause_after_write=0.05)), clock=VirtualClock(DEFAULT_START),
                         state=str(tmp_path / "state.db"), seed=1, processes=2)
    try:
        timer = threading.Timer(0.3, c.request_stop)
        timer.start()
        report = c.sync(DEFAULT_START)
        timer.join()
    finally:
        c.close()
    done = {r["target"] for r in report.records if r["action"] == "applied"}
    assert report.skipped and done
    assert any(int(name[1:]) % 2 for name in done) and any(int(name[1:]) % 2 == 0 for name in done)
    store = SQLiteStore(tmp_path / "state.db", readonly=True)
    try:
        rows = store.load_all()
    finally:
        store.close()
    for name in done:   # carried out and committed: no intent left pending
        assert rows[name].intent_size is None and rows[name].state["sizes"]


def test_processes_in_the_configuration_is_checked(tmp_path):
    from scalebridge.controller.config import ConfigError, load_config
    path = config(tmp_path, processes=0)
    with pytest.raises(ConfigError, match="processes"):
        load_config(str(path))


def test_scalebridge_run_with_sim_targets_in_two_processes_audits_what_one_process_does(tmp_path):
    """Through the command line, on the virtual clock: the sim provider's targets
    (one per semantics) in two processes give the same audit, record for record."""
    ref = {"workload": "flash_crowd", "seed": 3, "duration": "1h", "capacity": 10, "startup": 60}
    doc = {"sync_period_seconds": 15, "policies": {"web": {k: v for k, v in POLICY.items()}},
           "targets": [{"name": s, "provider": "sim", "policy": "web", "semantics": s, "ref": ref} for s in SEMANTICS]}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    audits = []
    for processes in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", "run", "run.yaml", "--clock", "virtual",
                               "--until", "1h", "--processes", processes, "--state", f"s{processes}.db",
                               "--audit", f"a{processes}.jsonl"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        audits.append(sorted((tmp_path / f"a{processes}.jsonl").read_text().splitlines()))
    assert audits[0] == audits[1]
    assert len(audits[0]) == 5 * 240
    assert any('"applied"' in line for line in audits[0])
