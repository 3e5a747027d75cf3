"""A provider that observes in batches (``Provider.observe_many``): the controller
observes all of its due targets at once before deciding them; each target's sync
uses its own entry; one target's failure in a batch is that target's alone; a
batch that breaks as a whole leaves every target to observe itself."""
from __future__ import annotations

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.testing.fake import DEFAULT_START

BATCHING = "tests.controller.stub_providers:BatchingFake"
NAMES = ("web", "api", "odd-one", "self-served")


def controller(write_config, tmp_path):
    targets = [{"name": n, "provider": "b", "ref": {"name": n, "size": 3, "load": 4.2}} for n in NAMES]
    path = write_config(targets, providers={"b": {"type": BATCHING}})
    return build_controller(str(path), clock=VirtualClock(DEFAULT_START), state=str(tmp_path / "s.db"))


def test_a_sync_observes_a_batching_providers_targets_in_one_batch(write_config, tmp_path):
    c = controller(write_config, tmp_path)
    try:
        report = c.sync()
        p = c.runtime.providers["b"]
        assert len(p.batches) == 1 and len(p.batches[0]) == 4
        by = {r["target"]: r for r in report.records}
        assert by["web"]["action"] == "applied" and by["api"]["action"] == "applied"
        assert by["self-served"]["action"] == "applied"       # observed on its own
        assert by["odd-one"]["action"] == "failed" and "odd-one is gone" in by["odd-one"]["error"]
        assert [name for name, _ in report.failed] == ["odd-one"]
    finally:
        c.close()


def test_a_batch_that_breaks_leaves_each_target_to_observe_itself(write_config, tmp_path):
    c = controller(write_config, tmp_path)
    try:
        c.runtime.providers["b"].broken = True
        report = c.sync()
        by = {r["target"]: r["action"] for r in report.records}
        assert by == {"web": "applied", "api": "applied", "odd-one": "applied", "self-served": "applied"}
        assert len(c.runtime.providers["b"].batches) == 1
    finally:
        c.close()
