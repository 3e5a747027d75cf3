"""One target of a cloud provider whose server answers a throttled call with a
``Retry-After`` of a day, run through the controller in process on a virtual clock:
what each provider's tests check is the same on every provider — throttling audited
as such with the server's value, the provider's calls held for its
``max_retry_after_seconds`` and no longer (``tests/plugins/*/test_*throttl*``)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Optional

import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.controller.metrics import Metrics, value

#: the bound the tests give (``max_retry_after_seconds``)
CAP = 60.0
DAY = 86400.0
POLICY = {"min_replicas": 1, "max_replicas": 10,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization",
                                                                     "average_utilization": 60}}]}


def throttled_syncs(tmp_path: Path, provider: dict, ref: dict, inject: Callable[[], None],
                    period: float = 15.0) -> tuple[list[list[dict]], Optional[float]]:
    """Three syncs of two targets (of the same ``ref``) on ``provider`` (its options,
    with ``type``) after ``inject()`` queued one throttled answer: the throttled sync,
    one inside the bound and one after it; each sync's audit records, and the
    Retry-After gauge."""
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "sync_period_seconds": period,
        "providers": {"cloud": {**provider, "max_retry_after_seconds": CAP}}, "policies": {"p": POLICY},
        "targets": [{"name": name, "provider": "cloud", "policy": "p", "ref": ref} for name in ("a", "b")]}))
    metrics = Metrics()
    t0 = time.time()
    c = build_controller(str(config), clock=VirtualClock(t0), state=str(tmp_path / "s.db"), metrics=metrics,
                         seed=1, workers=1)
    try:
        inject()
        records = [c.sync(t0).records, c.sync(t0 + CAP / 2).records, c.sync(t0 + CAP + 1).records]
    finally:
        c.close()
    return records, value(metrics, "scalebridge_throttle_retry_after_seconds", {"provider": "cloud"})


def check_bounded(records: list[list[dict]], gauge: Optional[float], retry_after: Optional[float]) -> None:
    """What every provider shows of a throttled call with ``retry_after`` (None: no hint)."""
    first, held, after = records
    # one throttled call: the target that made it, or every target a batched read stood for
    every_failed = [r for r in first if r["action"] == "failed"]
    assert every_failed, first
    failed = every_failed[0]
    assert failed["error_kind"] == "throttled", failed
    assert failed["throttled"]["operation"], "the audit names the API call"
    if retry_after is None:   # no hint: the target backs off, the provider is not held
        assert failed["throttled"]["retry_after"] is None and failed["throttled"]["held_seconds"] is None
        assert gauge is None
        assert all(r["action"] != "paced" for r in held)
    else:
        assert abs(failed["throttled"]["retry_after"] - retry_after) < 5
        assert failed["throttled"]["held_seconds"] == CAP
        assert gauge is not None and abs(gauge - retry_after) < 5
        # the throttled target backs off as long as the hold; its neighbour on the provider is held
        assert [r["target"] for r in held] == [r["target"] for r in first if r not in every_failed]
        assert all(r["action"] == "paced" and "is throttled" in r["note"] and r["throttled"]["held_seconds"] == CAP
                   for r in held), held
    assert len(after) == 2 and all(r["action"] != "paced" and r["current_replicas"] is not None for r in after), after
