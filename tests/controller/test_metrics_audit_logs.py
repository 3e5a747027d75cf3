"""Prometheus metrics (the run-config contract's names), the audit log, structured
logs, leader election and the virtual clock's resumed position."""
from __future__ import annotations

import json
import urllib.request

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.election import NeverLeader
from scalebridge.controller.loop import VIRTUAL_CLOCK_META, build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE


def test_metrics_count_decisions_actions_and_provider_errors(write_config, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}},
                         {"name": "bad", "ref": {"name": "bad"}}],
                        providers={"fake": {"type": FAKE, "script": [
                            {"target": "bad", "call": "observe", "kind": "forbidden"}]}})
    metrics = Metrics()
    c = build_controller(str(path), state=str(tmp_path / "s.db"), clock=VirtualClock(DEFAULT_START),
                         metrics=metrics)
    try:
        report = c.sync()
        reason = {r["target"]: r["reason"] for r in report.records}["web"]
        assert value(metrics, "scalebridge_current_replicas", {"target": "web"}) == 3
        assert value(metrics, "scalebridge_desired_replicas", {"target": "web"}) == 7
        assert value(metrics, "scalebridge_decisions_total", {"target": "web", "reason": reason}) == 1
        assert value(metrics, "scalebridge_scale_actions_total",
                     {"target": "web", "direction": "up", "result": "applied"}) == 1
        assert value(metrics, "scalebridge_provider_errors_total", {"provider": "fake", "kind": "forbidden"}) == 1
        assert value(metrics, "scalebridge_sync_duration_seconds_count") == 2
        assert value(metrics, "scalebridge_leader") == 1
        port = metrics.serve(0, addr="127.0.0.1")
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        assert 'scalebridge_desired_replicas{target="web"} 7.0' in text
    finally:
        c.close()


def test_a_replica_not_holding_the_election_decides_but_never_writes(write_config, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}}])
    metrics = Metrics()
    c = build_controller(str(path), state=str(tmp_path / "s.db"), clock=VirtualClock(DEFAULT_START),
                         elector=NeverLeader(), metrics=metrics)
    try:
        [rec] = c.sync().records
        assert (rec["desired_replicas"], rec["action"]) == (7, "standby")
        assert c.runtime.providers["fake"].writes() == 0
        assert value(metrics, "scalebridge_leader") == 0
    finally:
        c.close()


def test_leader_elect_without_a_provider_that_can_elect_is_one_line(write_config, scalebridge, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web"}}])
    code, _, err = scalebridge("run", path, "--once", "--leader-elect", "--state", tmp_path / "s.db")
    assert code == 2 and "--leader-elect" in err and "Traceback" not in err
    assert not (tmp_path / "s.db").exists()


def test_json_logs_and_the_audit_on_stdout(write_config, scalebridge, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}}])
    code, out, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", "-",
                                 "--log-format", "json")
    assert code == 0
    [rec] = [json.loads(line) for line in out.splitlines()]
    assert rec["action"] == "applied"
    logs = [json.loads(line) for line in err.splitlines()]
    scaled = [entry for entry in logs if entry["message"] == "scaled"]
    assert scaled and scaled[0]["target"] == "web" and scaled[0]["desired"] == 7


def test_the_virtual_clock_resumes_where_the_store_says(write_config, scalebridge, tmp_path):
    world = tmp_path / "world.json"
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 1.8}}],
                        providers={"fake": {"type": FAKE, "world": str(world)}})
    db = tmp_path / "s.db"
    audit = tmp_path / "audit.jsonl"
    assert scalebridge("run", path, "--clock", "virtual", "--until", "2m", "--state", db, "--audit", audit)[0] == 0
    times = [json.loads(line)["time"] for line in audit.read_text().splitlines()]
    assert times == [DEFAULT_START + 15 * k for k in range(8)]     # 2 minutes of 15 s syncs
    c = build_controller(str(path), state=str(db), clock="virtual")
    try:
        assert c.store.get_meta(VIRTUAL_CLOCK_META) == {"start": DEFAULT_START, "next": DEFAULT_START + 120}
        assert c.clock.now() == DEFAULT_START + 120
    finally:
        c.close()
    # a longer --until continues from there, never repeating a sync time
    assert scalebridge("run", path, "--clock", "virtual", "--until", "3m", "--state", db, "--audit", audit)[0] == 0
    times = [json.loads(line)["time"] for line in audit.read_text().splitlines()]
    assert times == [DEFAULT_START + 15 * k for k in range(12)]
