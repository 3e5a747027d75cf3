"""Which targets the controller syncs on its worker pool: those of a provider whose
calls wait on a cloud (``Provider.blocking``, the default), ``workers`` at a time, as
the HPA controller's ``--concurrent-horizontal-pod-autoscaler-syncs`` workers; an
in-process provider's (``blocking = False``: the ``sim`` provider, the fake) on the
controller's own thread, where a pool would add thread switches and overlap nothing."""
from __future__ import annotations

import threading
import time

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.testing.fake import DEFAULT_START

SLOW = "tests.controller.stub_providers:SlowFake"


def _controller(write_config, tmp_path, providers, targets, workers=4):
    path = write_config(targets, providers=providers)
    return build_controller(str(path), state=str(tmp_path / "s.db"), clock=VirtualClock(DEFAULT_START),
                            workers=workers)


def test_a_blocking_providers_targets_overlap_on_the_pool_and_an_in_process_ones_stay_on_the_thread(
        write_config, tmp_path):
    providers = {"cloud": {"type": SLOW, "observe_seconds": 0.3, "blocking": True},
                 "local": {"type": SLOW, "observe_seconds": 0.0}}
    targets = [{"name": f"cloud-{k}", "provider": "cloud", "ref": {"name": f"cloud-{k}", "size": 2, "load": 3.0}}
               for k in range(4)]
    targets += [{"name": f"local-{k}", "provider": "local", "ref": {"name": f"local-{k}", "size": 2, "load": 3.0}}
                for k in range(3)]
    c = _controller(write_config, tmp_path, providers, targets)
    try:
        t0 = time.perf_counter()
        report = c.sync(DEFAULT_START)
        took = time.perf_counter() - t0
        cloud, local = c.runtime.providers["cloud"], c.runtime.providers["local"]
        assert len(report.records) == 7 and not report.failed
        assert all(name.startswith("scalebridge-sync-") for name in cloud.threads.values()), cloud.threads
        assert set(local.threads.values()) == {threading.current_thread().name}
        # four 0.3 s observes on four workers: about 0.3 s, not the 1.2 s one after another
        assert took < 0.9, took
    finally:
        c.close()


def test_only_in_process_targets_start_no_pool(write_config, tmp_path):
    targets = [{"name": f"t{k}", "ref": {"name": f"t{k}", "size": 2, "load": 3.0}} for k in range(5)]
    c = _controller(write_config, tmp_path, None, targets)
    try:
        assert c._pool is None
        assert c.run(once=True) == 0
        assert {r["action"] for r in c.last_report.records} == {"applied"}
    finally:
        c.close()


def test_workers_one_syncs_blocking_targets_one_after_another_on_one_worker(write_config, tmp_path):
    """Even one worker, even one target: a cloud target's sync runs on a worker, where
    its calls have a deadline and a stop its grace (on the loop's own thread, a
    13-s write kept a stop 12.8 s, past its 10-s grace)."""
    providers = {"cloud": {"type": SLOW, "observe_seconds": 0.0, "blocking": True}}
    for n in (3, 1):
        targets = [{"name": f"c{k}", "provider": "cloud", "ref": {"name": f"c{k}", "size": 2, "load": 3.0}}
                   for k in range(n)]
        c = _controller(write_config, tmp_path, providers, targets, workers=1)
        try:
            c.sync(DEFAULT_START)
            assert c._pool is not None and c._pool.workers == 1
            threads = set(c.runtime.providers["cloud"].threads.values())
            assert len(threads) == 1 and threads != {threading.current_thread().name}, threads
        finally:
            c.close()
