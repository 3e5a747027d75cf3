"""Metric samples stamped 30 days ago, an hour ahead or a year ahead are not acted on
as current. Before, 4 pods at 450m of 500m against 60 % went to 6 under
``kubernetes`` and the neutral semantics whatever the PodMetrics' timestamps said.

The controller checks the sample times in front of the decision: a newest sample
older than the provider's ``max_sample_age_seconds`` (600 s by default) before the
window's end, or one stamped more than ``max_sample_skew_seconds`` (60 s) after
``now``, is a failed read with its reason — the sync fails and the size is held, or,
with a policy's ``fallback``, the decision counts it as a failed read. The
``kubernetes`` semantics itself is untouched: it still reads each PodMetrics'
timestamp and window as the HPA does (``groupPods``, replica_calculator.go), behind
the controller's check.

Over the local API server's ``metrics.k8s.io`` (PodMetrics with the timestamp the
test sets), through ``scalebridge run --once``."""
from __future__ import annotations

import json
import time

import pytest
import yaml

from scalebridge.cli import main

DAY = 86400.0
POLICY = {"min_replicas": 1, "max_replicas": 10,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization",
                                                                     "average_utilization": 60}}]}


def _web(k8s, offset):
    k8s.clock = lambda: time.time() - 3600          # pods an hour old: past the CPU initialization period
    try:
        k8s.add_deployment("shop", "web", replicas=4, requests={"cpu": "500m"})
    finally:
        k8s.clock = time.time
    for p in k8s.list("", "pods", "shop", "app=web"):
        k8s.set_pod_metrics("shop", p["metadata"]["name"], {"app": {"cpu": "450m"}},
                            timestamp=None if offset is None else time.time() + offset)


def _run_once(tmp_path, kubeconfig, semantics, policy=POLICY, **options):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"kubernetes": {"kubeconfig": str(kubeconfig), **options}},
        "policies": {"p": {**policy, "semantics": semantics}},
        "targets": [{"name": "web", "provider": "kubernetes", "policy": "p",
                     "ref": {"kind": "Deployment", "namespace": "shop", "name": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    rc = main(["run", str(config), "--once", "--audit", str(audit), "--state", str(tmp_path / "s.db")])
    return rc, [json.loads(x) for x in audit.read_text().splitlines()][-1]


@pytest.mark.parametrize("semantics", ["kubernetes", "scalebridge"])
def test_fresh_samples_are_acted_on(k8s, kubeconfig, tmp_path, semantics):
    _web(k8s, None)
    rc, rec = _run_once(tmp_path, kubeconfig, semantics)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 6, rec


@pytest.mark.parametrize("offset,says", [(-30 * DAY, "older than max_sample_age_seconds (600 s), stale"),
                                         (3600.0, "more than max_sample_skew_seconds (60 s) ahead"),
                                         (365 * DAY, "more than max_sample_skew_seconds (60 s) ahead")],
                         ids=["30-days-old", "1-hour-ahead", "1-year-ahead"])
@pytest.mark.parametrize("semantics", ["kubernetes", "scalebridge"])
def test_samples_from_the_past_or_the_future_are_a_failed_read(k8s, kubeconfig, tmp_path, capsys, semantics,
                                                                offset, says):
    _web(k8s, offset)
    rc, rec = _run_once(tmp_path, kubeconfig, semantics)
    assert rc == 1 and rec["action"] == "failed", rec
    assert says in rec["error"] and "metric 'cpu' from provider 'kubernetes'" in rec["error"]
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 4, "the size is held"
    assert says in capsys.readouterr().err


def test_a_fallback_counts_a_stale_sample_as_a_failed_read(k8s, kubeconfig, tmp_path):
    _web(k8s, -30 * DAY)
    policy = {**POLICY, "fallback": {"failure_threshold": 1, "replicas": 8, "behavior": "static"}}
    rc, rec = _run_once(tmp_path, kubeconfig, "kubernetes", policy=policy)
    assert "metrics not read" in rec["note"] and "stale" in rec["note"]
    assert rec["fallback"] is False and rec["desired_replicas"] == 4, "one failed read: not past the threshold"
    rc, rec = _run_once(tmp_path, kubeconfig, "kubernetes", policy=policy)   # the count is in the state
    assert rec["fallback"] is True and rec["reason"] == "Fallback" and rec["desired_replicas"] == 8, rec


def test_the_bounds_are_options_of_the_provider(k8s, kubeconfig, tmp_path):
    _web(k8s, -3 * DAY)
    rc, rec = _run_once(tmp_path, kubeconfig, "kubernetes", max_sample_age_seconds="7d")
    assert rc == 0 and rec["desired_replicas"] == 6, rec
