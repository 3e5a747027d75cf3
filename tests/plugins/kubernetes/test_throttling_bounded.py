"""A ``Retry-After`` of a day is heard, audited as throttling with the server's value
and counted in ``/metrics`` — and honoured up to a bound: the provider's
``max_retry_after_seconds`` (default 300 s), never less than three sync periods.
Before, a 429 with ``Retry-After: 100000`` held every target of the provider for
the whole 100,000 s, and the audit called it "no read left at its pacing".

The API server answers 429 (API Priority and Fairness, with a ``Retry-After``:
https://kubernetes.io/docs/concepts/cluster-administration/flow-control/); the
``Retry-After`` is delay-seconds or an HTTP date (RFC 9110, section 10.2.3). The
controller runs in process on a virtual clock over the local API server."""
from __future__ import annotations

import email.utils
import json
import time

import pytest
import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.controller.metrics import Metrics, value
from scalebridge.controller.runtime import DEFAULT_MAX_RETRY_AFTER_SECONDS

T0 = 1796150000.0
POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 10,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization",
                                                                     "average_utilization": 60}}]}
N = 4


def _controller(k8s, kubeconfig, tmp_path, **options):
    # list_scope target: each target reads its own scale (the per-target path these tests
    # throttle); the batched lists are throttled in the last test
    options.setdefault("list_scope", "target")
    for i in range(N):
        k8s.add_deployment("shop", f"web-{i}", replicas=2)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "sync_period_seconds": 1,
        "providers": {"kubernetes": {"kubeconfig": str(kubeconfig), "qps": 1000, "burst": 1000, **options}},
        "policies": {"p": POLICY},
        "targets": [{"name": f"web-{i}", "provider": "kubernetes", "policy": "p",
                     "ref": {"kind": "Deployment", "namespace": "shop", "name": f"web-{i}"}} for i in range(N)]}))
    metrics = Metrics()
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), clock=VirtualClock(T0), state=str(tmp_path / "s.db"), audit=str(audit),
                         metrics=metrics, seed=1, workers=1)
    return c, metrics, audit


def _scale_reads(k8s) -> int:
    return sum(1 for r in k8s.requests if r.method == "GET" and "/scale" in r.path)


@pytest.mark.parametrize("options,held", [({"max_retry_after_seconds": 10}, 10.0),
                                          ({}, DEFAULT_MAX_RETRY_AFTER_SECONDS)],
                         ids=["max_retry_after_seconds", "default"])
def test_a_retry_after_of_a_day_holds_the_provider_at_most_its_bound(k8s, kubeconfig, tmp_path, options, held):
    c, metrics, audit = _controller(k8s, kubeconfig, tmp_path, **options)
    try:
        c.sync(T0)
        k8s.inject(429, method="GET", path_contains="/web-0/scale", retry_after=100000)
        throttled = c.sync(T0 + 1).records
        [rec] = [r for r in throttled if r["target"] == "web-0"]
        assert rec["action"] == "failed" and rec["error_kind"] == "throttled"
        # the server's value, as it sent it, and the hold the controller applied
        assert rec["throttled"]["retry_after"] == 100000.0 and rec["throttled"]["held_seconds"] == held
        assert value(metrics, "scalebridge_throttle_retry_after_seconds", {"provider": "kubernetes"}) == 100000.0
        assert value(metrics, "scalebridge_provider_errors_total", {"provider": "kubernetes", "kind": "throttled"}) == 1
        reads = _scale_reads(k8s)
        t = T0 + 2
        while t < T0 + 1 + held - 1e-6:      # held: no target of the provider is read
            recs = c.sync(t).records
            assert {r["action"] for r in recs} == {"paced"}, recs
            assert all(r["throttled"]["retry_after"] == 100000.0 for r in recs)
            assert all("is throttled: its server asked to wait 100000 s (Retry-After)" in r["note"] for r in recs)
            t += 1 if held < 60 else 30
        assert _scale_reads(k8s) == reads
        assert value(metrics, "scalebridge_throttled_syncs_total", {"provider": "kubernetes"}) >= N
        assert value(metrics, "scalebridge_throttle_hold_seconds", {"provider": "kubernetes"}) > 0
        recs = c.sync(T0 + 1 + held + 1).records   # past the bound: every target read again
        assert all(r["action"] != "paced" for r in recs), recs
        assert _scale_reads(k8s) == reads + N
        assert value(metrics, "scalebridge_throttle_hold_seconds", {"provider": "kubernetes"}) == 0
    finally:
        c.close()
    lines = [json.loads(x) for x in audit.read_text().splitlines()]
    assert not any("no read left at its pacing" in (r.get("note") or "") for r in lines)


def test_a_retry_after_as_an_http_date_is_read_as_the_delay_to_that_date(k8s, kubeconfig, tmp_path):
    c, metrics, _ = _controller(k8s, kubeconfig, tmp_path, max_retry_after_seconds=10)
    date = email.utils.formatdate(time.time() + 86400, usegmt=True)
    try:
        k8s.inject(429, method="GET", path_contains="/web-0/scale", retry_after=date)
        [rec] = [r for r in c.sync(T0).records if r["target"] == "web-0"]
        assert rec["error_kind"] == "throttled"
        assert rec["throttled"]["retry_after"] == pytest.approx(86400, abs=5)
        assert rec["throttled"]["held_seconds"] == 10.0
    finally:
        c.close()


def test_a_bound_below_three_periods_holds_three_periods(k8s, kubeconfig, tmp_path):
    c, _, _ = _controller(k8s, kubeconfig, tmp_path, max_retry_after_seconds=0.5)
    try:
        k8s.inject(429, method="GET", path_contains="/web-0/scale", retry_after=100000)
        [rec] = [r for r in c.sync(T0).records if r["target"] == "web-0"]
        assert rec["throttled"]["held_seconds"] == 3.0    # three 1-s periods
    finally:
        c.close()


def test_a_bad_bound_is_a_configuration_error(k8s, kubeconfig, tmp_path, capsys):
    from scalebridge.cli import main
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"kubernetes": {"kubeconfig": str(kubeconfig), "max_retry_after_seconds": -5}},
        "policies": {"p": POLICY},
        "targets": [{"name": "web", "provider": "kubernetes", "policy": "p",
                     "ref": {"kind": "Deployment", "namespace": "shop", "name": "web"}}]}))
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "providers.kubernetes.max_retry_after_seconds" in err and "more than 0 seconds" in err


def test_a_throttled_batched_list_fails_every_target_it_stood_for_and_holds_the_provider(k8s, kubeconfig, tmp_path):
    c, metrics, _ = _controller(k8s, kubeconfig, tmp_path, max_retry_after_seconds=10, list_scope="namespace")
    try:
        c.sync(T0)
        k8s.inject(429, method="GET", path_contains="/apis/apps/v1/namespaces/shop/deployments", retry_after=100000)
        recs = c.sync(T0 + 1).records
        assert {r["action"] for r in recs} == {"failed"} and {r["error_kind"] for r in recs} == {"throttled"}
        before = len(k8s.requests)
        recs = c.sync(T0 + 2).records          # held: nothing is read, no target one by one either
        assert all(r["action"] == "paced" for r in recs), recs
        assert len(k8s.requests) == before
    finally:
        c.close()
