"""A failing target — a provider's bug, an observation the protocol rejects — is
reported with why, and never stops the other targets (run-config contract: "it
never stops the other targets")."""
from __future__ import annotations

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.testing.fake import DEFAULT_START


def test_a_plugin_bug_and_an_invalid_observation_fail_only_their_targets(write_config, tmp_path):
    targets = [{"name": n, "provider": "buggy", "ref": {"name": n, "size": 2, "load": 3.0}}
               for n in ("bug", "odd", "fine-1", "fine-2", "fine-3")]
    path = write_config(targets, providers={"buggy": {"type": "tests.controller.stub_providers:BuggyFake",
                                                       "blocking": True}})   # on the worker pool
    c = build_controller(str(path), state=str(tmp_path / "s.db"), clock=VirtualClock(DEFAULT_START), workers=3)
    try:
        assert c.run(once=True) == 1
        by = {r["target"]: r for r in c.last_report.records}
        assert by["bug"]["action"] == "failed" and "RuntimeError: plugin bug" in by["bug"]["error"]
        assert by["odd"]["action"] == "failed"
        assert "observations.members[0].phase" in by["odd"]["error"]
        assert {by[f"fine-{k}"]["action"] for k in (1, 2, 3)} == {"applied"}
        assert sorted(name for name, _ in c.last_report.failed) == ["bug", "odd"]
    finally:
        c.close()
