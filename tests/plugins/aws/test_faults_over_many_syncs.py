"""500 syncs of one group through the controller, with the proxy failing calls
the ways AWS and the network fail (throttling with a parseable body and as a
text/plain 429, 5xx, timeouts, dropped connections): no crash, every failure in
the audit log with a retryable kind, and the controller's backoff visible in the
call count during a sustained outage (exponential backoff with jitter,
https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/)."""
from __future__ import annotations

import json
import re
import time

import pytest
import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge_aws.fake_server import Fault
from tests.plugins.aws.conftest import REGION, minutes
from tests.plugins.aws.test_run_once import QUEUE_POLICY, QUEUE_SOURCE

SYNCS = 500
#: how each injected fault reads in the audit log's ``error``
AUDITED = {"throttled, parseable body": r": Throttling: Rate exceeded",
           "throttled, text/plain 429": r": Throttling: HTTP 429: Too Many Requests",
           "503": r": ServiceUnavailable: ", "500": r": InternalFailure: ",
           "timeout": r": timed out \(", "dropped connection": r": connection failed \("}
PERIOD = 15.0


@pytest.mark.slow
def test_500_syncs_with_faults(world, tmp_path):
    world.group("web", desired=2, max_size=10)
    world.put("AWS/SQS", "ApproximateNumberOfMessagesVisible", minutes([300]), {"QueueName": "jobs"})
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "sync_period_seconds": PERIOD,
        "providers": {"aws": {"region": REGION, "endpoint_url": world.url, "max_attempts": 1,
                              "read_timeout": 0.25, "connect_timeout": 0.5}},
        "policies": {"p": QUEUE_POLICY},
        "targets": [{"name": "web", "provider": "aws", "policy": "p", "ref": {"auto_scaling_group": "web"},
                     "metrics": QUEUE_SOURCE}]}))
    audit = tmp_path / "audit.jsonl"
    clock = VirtualClock(time.time())
    c = build_controller(str(config), clock=clock, state=str(tmp_path / "state.db"), audit=str(audit), seed=7)
    proxy = world.proxy
    observes: list[int] = []
    skipped = 0
    try:
        for k in range(SYNCS):
            if k == 100:      # a sustained outage: every call throttled for 100 syncs
                proxy.add(Fault.throttle(times=None))
            if k == 200:
                proxy.faults.clear()
            if k == 250:      # then a mix of every kind of fault, one call in five
                proxy.add(Fault.throttle(times=None, probability=0.05),
                          Fault.throttle_text(times=None, probability=0.05),
                          Fault.server_error(503, times=None, probability=0.04),
                          Fault.server_error(500, times=None, probability=0.03),
                          Fault.drop(times=None, probability=0.03),
                          Fault.timeout(0.5, times=None, probability=0.01))
            before = proxy.count("DescribeAutoScalingGroups")
            report = c.sync()
            skipped += "web" in report.skipped
            observes.append(proxy.count("DescribeAutoScalingGroups") - before)
            clock.advance(PERIOD)
    finally:
        c.close()
        proxy.faults.clear()
    records = [json.loads(x) for x in audit.read_text().splitlines()]
    failed = [r for r in records if r["action"] == "failed"]
    faulted = [call for call in proxy.calls if call.fault is not None]
    assert len(records) + skipped == SYNCS                 # every sync either ran (audited) or backed off
    # every failure in the audit log: one a faulted call. A batched sync reads a group's
    # metrics with its observe, before the refusal re-check (DescribePolicies): a sync whose
    # both calls were faulted is one failure, so only those may leave a faulted call unaudited
    assert len(failed) > 20
    assert 0 <= len(faulted) - len(failed) <= sum(1 for r in failed if "DescribePolicies" in r["error"])
    assert {r["error_kind"] for r in failed} == {"throttled", "transient"}
    # each kind of fault was injected and reached the audit log with its kind
    assert {call.fault for call in faulted} == {"error", "status", "drop", "delay"}
    seen = {name: {r["error_kind"] for r in failed if re.search(pattern, r["error"])}
            for name, pattern in AUDITED.items()}
    assert seen == {"throttled, parseable body": {"throttled"}, "throttled, text/plain 429": {"throttled"},
                    "503": {"transient"}, "500": {"transient"}, "timeout": {"transient"},
                    "dropped connection": {"transient"}}, seen
    assert sum(1 for r in failed if any(re.search(p, r["error"]) for p in AUDITED.values())) == len(failed)
    assert sum(observes[:100]) == 100                      # healthy: one DescribeAutoScalingGroups a sync
    assert sum(observes[100:200]) <= 15                    # the outage: backed off, not 100 calls
    assert sum(observes[200:250]) >= 40                    # recovered
    assert world.desired() == 6                            # the decision was carried out, once
    assert proxy.count("SetDesiredCapacity") - sum(1 for x in faulted if x.action == "SetDesiredCapacity") == 1
