"""``scalebridge run --once``: exit 0 when every target synced, 1 when any failed
(one line per failed target naming it and why), 2 for a bad configuration;
``--dry-run`` never writes; the audit log has the contract's fields."""
from __future__ import annotations

import json

from scalebridge.controller.loop import build_controller
from scalebridge.testing.fake import FakeProvider

from .conftest import FAKE

AUDIT_FIELDS = {"time", "target", "provider", "semantics", "current_replicas", "recommended_replicas",
                "desired_replicas", "reason", "action", "error"}


def _audit(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_once_exits_0_when_every_target_synced(write_config, scalebridge, tmp_path):
    # web: 3 members at load 4.2 (140 % of a 1-CPU request each) against a 60 % target -> more
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 4.2}},
                         {"name": "api", "ref": {"name": "api", "size": 2, "load": 0.6}}])
    audit = tmp_path / "audit.jsonl"
    code, out, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", audit)
    assert code == 0, err
    records = {r["target"]: r for r in _audit(audit)}
    assert set(records) == {"web", "api"}
    for r in records.values():
        assert AUDIT_FIELDS <= set(r)
        assert r["provider"] == "fake" and r["semantics"] == "scalebridge"
    web = records["web"]
    # the neutral semantics: ceil(3 x 140 / 60) = 7
    assert (web["current_replicas"], web["desired_replicas"], web["action"]) == (3, 7, "applied")
    assert records["api"]["action"] == "unchanged"


def test_once_exits_1_naming_each_failed_target(write_config, scalebridge, tmp_path):
    providers = {"fake": {"type": FAKE, "script": [{"target": "gone", "call": "observe", "kind": "not_found"}]}}
    path = write_config([{"name": "ok", "ref": {"name": "ok", "load": 0.6}},
                         {"name": "gone", "ref": {"name": "gone"}},
                         {"name": "hpa", "ref": {"name": "hpa", "managed_by": "HorizontalPodAutoscaler shop/web"}}],
                        providers=providers)
    audit = tmp_path / "audit.jsonl"
    code, _, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", audit)
    assert code == 1
    failed = [line for line in err.splitlines() if "failed:" in line]
    assert len(failed) == 2
    assert any("'gone'" in line and "not_found" in line for line in failed)
    assert any("'hpa'" in line and "HorizontalPodAutoscaler shop/web" in line for line in failed)
    actions = {r["target"]: r["action"] for r in _audit(audit)}
    assert actions == {"ok": "unchanged", "gone": "failed", "hpa": "refused"}


def test_a_refused_target_is_never_decided_nor_written(write_config, tmp_path):
    path = write_config([{"name": "hpa", "ref": {"name": "hpa", "size": 2, "load": 9,
                                                   "managed_by": "HorizontalPodAutoscaler shop/web"}}])
    c = build_controller(str(path), state=str(tmp_path / "s.db"))
    try:
        assert c.run(once=True) == 1
        [rec] = c.last_report.records
        assert rec["action"] == "refused" and rec["desired_replicas"] is None
        assert rec["error_kind"] == "refused"
        assert c.runtime.providers["fake"].writes() == 0
    finally:
        c.close()


def test_dry_run_writes_nothing(write_config, tmp_path):
    path = write_config([{"name": f"t{i}", "ref": {"name": f"t{i}", "size": 2, "load": 5.0}} for i in range(5)])
    c = build_controller(str(path), state=str(tmp_path / "s.db"), dry_run=True)
    try:
        assert c.run(once=True) == 0
        assert {r["action"] for r in c.last_report.records} == {"dry_run"}
        assert all(r["desired_replicas"] > r["current_replicas"] for r in c.last_report.records)
        assert c.runtime.providers["fake"].writes() == 0
        # the protocol: a decision not carried out keeps only recommendations and sizes
        state = c.store.load("t0").state
        assert state["sizes"] and state["scale_up_events"] == [] and "last_scale" not in state
    finally:
        c.close()


def test_dry_run_from_the_command_line_and_per_target(write_config, scalebridge, tmp_path):
    world = tmp_path / "world.json"
    providers = {"fake": {"type": FAKE, "world": str(world)}}
    path = write_config([{"name": "a", "ref": {"name": "a", "size": 2, "load": 5.0}},
                         {"name": "b", "ref": {"name": "b", "size": 2, "load": 5.0}, "dry_run": True}],
                        providers=providers)
    code, _, err = scalebridge("run", path, "--once", "--dry-run", "--state", tmp_path / "s.db")
    assert code == 0, err
    assert FakeProvider(world=str(world)).writes() == 0
    code, _, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db")
    assert code == 0, err
    fake = FakeProvider(world=str(world))
    assert (fake.writes("a"), fake.writes("b")) == (1, 0)
