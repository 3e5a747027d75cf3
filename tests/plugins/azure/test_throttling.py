"""ARM throttling over 500 syncs of the controller, in-process on a stepped clock:
429 with ``Retry-After`` (the controller holds the provider that long), 429 without it
and 5xx (the target backs off exponentially), and ARM's
``x-ms-ratelimit-remaining-subscription-writes`` reaching 0 (the provider holds writes
for a minute) — https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling.

No crash; every fault the server answered is one failed sync in the audit log; and the
number of calls shows the backoff: far fewer than one sync's calls every period.
"""
from __future__ import annotations

import json

import pytest
import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller

from .conftest import SUB

PERIOD = 15.0
START = 1767225600.0
QUEUE = "/subscriptions/%s/resourceGroups/shop/providers/Microsoft.ServiceBus/namespaces/shop/queues/orders" % SUB
# desired alternates between 2 and 10 as the queue does: a write every sync while healthy
POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10,
          "behavior": {"scale_down": {"stabilization_window_seconds": 0},
                       "scale_up": {"policies": [{"type": "Pods", "value": 10, "period_seconds": 15}]}},
          "metrics": [{"type": "external", "name": "queue_depth",
                       "target": {"type": "AverageValue", "average_value": 50}}]}


@pytest.mark.slow
def test_throttling_over_500_syncs_backs_off_and_loses_nothing(arm, options, tmp_path):
    T = [START]
    arm.clock = lambda: T[0]
    arm.update_polls = 0
    arm.add_scale_set(SUB, "shop", "web", capacity=2, created=START - 3600)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "sync_period_seconds": PERIOD,
        "providers": {"azure-prod": {"type": "azure", **options}}, "policies": {"p": POLICY},
        "targets": [{"name": "web-vmss", "provider": "azure-prod", "policy": "p",
                     "ref": {"resource_group": "shop", "scale_set": "web"},
                     "metrics": {"queue_depth": {"source": {"resource_uri": QUEUE, "metric_name": "ActiveMessages"}}}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), clock=VirtualClock(START), state=str(tmp_path / "s.db"), audit=str(audit),
                         seed=1)
    provider = c.runtime.providers["azure-prod"]
    provider.clock = lambda: T[0]
    calls_in = {}
    patched_at: list[int] = []      # the sync of each update ARM received
    try:
        for k in range(500):
            T[0] = START + k * PERIOD
            phase = k // 100
            # while ARM says no writes remain, the demand flips every sync: without the hold
            # the provider would write every sync
            flip = k % 2 if phase == 3 else (k // 8) % 2
            arm.put_metric(QUEUE, "ActiveMessages", [(T[0] - 60, 100.0 if flip else 500.0)])
            if k % 100 == 0:
                arm.clear_faults()
                arm.remaining_writes = 1199
                calls_in[phase] = len(arm.calls)
                if phase == 1:     # every request: 429, Retry-After 60
                    arm.fail(429, retry_after=60, times=10 ** 6)
                elif phase == 2:   # writes: 429 without Retry-After
                    arm.fail(429, match=r"^PATCH ", times=10 ** 6)
                elif phase == 3:   # ARM says no writes remain after each write
                    arm.remaining_writes = 0
                elif phase == 4:   # 30 % of the requests fail with a 5xx
                    arm.fail_randomly(0.3, 503, seed=7)
            before = len(arm.calls)
            c.sync(T[0])
            patched_at += [k for c_ in arm.calls[before:] if c_[0] == "PATCH"]
        calls_in[5] = len(arm.calls)
    finally:
        c.close()
    per_phase = {p: calls_in[p + 1] - calls_in[p] for p in range(5)}
    records = [json.loads(x) for x in audit.read_text().splitlines()]
    failed = [r for r in records if r["action"] == "failed"]
    # every fault the server answered is a failed sync in the audit log, with its kind; the
    # others are writes the provider held itself (ARM said no writes remain)
    held = [r for r in failed if "no writes left" in r["error"] or "update limit" in r["error"]]
    assert len(failed) - len(held) == len(arm.faults_served) > 0
    assert {r["error_kind"] for r in failed} == {"throttled", "transient"}
    # healthy, a sync reads the scale set, its instances and the queue, and writes: ~4 calls
    assert per_phase[0] >= 300
    # 429 + Retry-After 60: one attempt a minute at most (100 syncs = 1,500 s), and the
    # controller keeps trying
    assert 5 <= per_phase[1] <= 1500 / 60 + 2
    # writes refused without Retry-After: the target backs off exponentially
    assert per_phase[2] < per_phase[0] / 2
    # no writes left: the provider holds writes a minute after each, without calling ARM —
    # a sync wants a write every period, ARM gets one a minute at most, and writes resume
    # as each hold ends
    patches = [k for k in patched_at if 300 <= k < 400]
    assert 1500 / 60 / 2 <= len(patches) <= 1500 / 60 + 1
    assert all((b - a) * PERIOD >= 60 for a, b in zip(patches, patches[1:]))
    # between two updates, the hold refused at least one write, in the audit log
    held_in_3 = [r for r in held if START + 300 * PERIOD <= r["time"] < START + 400 * PERIOD]
    assert len(held_in_3) >= len(patches) - 1
    assert all("no writes left" in r["error"] and r["error_kind"] == "throttled" for r in held_in_3)
    # after every fault the target recovers: the last healthy stretch scaled again
    assert records[-1]["action"] in ("applied", "unchanged", "failed")
    assert any(r["action"] == "applied" for r in records[-100:])
