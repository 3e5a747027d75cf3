"""``scalebridge backtest`` of a target whose Prometheus history is a trace from
../shared/traces gives, under every semantics, the desired sizes tick for tick and
the scores of ``scalebridge simulate --trace`` on that CSV with the same fleet
options — over the local Prometheus-API server and over the real Prometheus."""
from __future__ import annotations

import json

import pytest

from scalebridge_prometheus.fake_server import PrometheusServer, openmetrics
from tests.backtest.conftest import (FLEET, HOURS, SIM_TARGET, assert_same_as_simulate, config, run, simulate,
                                     trace_rps)
from tests.plugins.prometheus.real import real_prometheus

KUBE_TARGET = """\
  - name: web-deploy
    provider: kubernetes
    policy: policy.yaml
    ref: {kind: Deployment, namespace: shop, name: web}
    metrics:
      rps: {source: {metric_source: prom, query: 'sum(rps{job="web"})'}}
"""
KUBE_PROVIDER = "providers:\n  kubernetes: {kubeconfig: kubeconfig.yaml}\n"
KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""


def _series():
    times, values = trace_rps()
    return [({"__name__": "rps", "job": "web"}, zip(times, values)),
            # what kube-state-metrics recorded of the Deployment: 8 replicas, then 12
            ({"__name__": "kube_deployment_spec_replicas", "namespace": "shop", "deployment": "web"},
             [(t, 8 if i < len(times) // 2 else 12) for i, t in enumerate(times)])]


def _backtest(tmp_path, url, *targets):
    (tmp_path / "kubeconfig.yaml").write_text(KUBECONFIG)
    path = config(tmp_path, url, SIM_TARGET + KUBE_TARGET, KUBE_PROVIDER)
    times, _ = trace_rps()
    code, out = run("backtest", str(path), *targets, "--start", f"{times[0]:.0f}", "--end",
                    f"{times[0] + HOURS * 3600:.0f}", *FLEET, "--output", "json", "--timeline",
                    str(tmp_path / "timeline"), "--jobs", "1")
    assert code == 0, out
    return json.loads(out)


def _check(tmp_path, got):
    sim, rows = simulate(tmp_path, tmp_path / "policy.yaml")
    for target in ("web", "web-deploy"):
        assert_same_as_simulate(got, tmp_path / "timeline" / f"{target}.csv", target, sim, rows)
    assert got["failed"] == {}
    # the sim target records no size; the Deployment's comes from kube-state-metrics through Prometheus
    assert got["targets"]["web"]["recorded"] is None
    rec = got["targets"]["web-deploy"]["recorded"]
    assert rec["instance_hours"] == pytest.approx(8 * 3 + 12 * 3)
    assert rec["scaling_actions"] == 1
    for r in got["targets"]["web-deploy"]["runs"]:
        assert r["actual_ratio"] == pytest.approx(r["instance_hours"] / 60.0)


def test_backtest_through_the_local_prometheus_server_is_simulate(tmp_path):
    with PrometheusServer(retention="100y") as prom:
        prom.load_openmetrics(openmetrics(_series()))
        got = _backtest(tmp_path, prom.url)
        # history at the replay's 15 s tick: 1,440 points, in one request (under 11,000)
        ranges = [p for path, p in prom.requests if path == "/api/v1/query_range" and "rps" in p["query"]]
        assert len(ranges) == 2 and all(p["step"] == "15" for p in ranges)
    _check(tmp_path, got)


def test_backtest_through_the_real_prometheus_is_simulate(tmp_path):
    """Debian's prometheus, backfilled with promtool from the same OpenMetrics text."""
    with real_prometheus(tmp_path, openmetrics(_series())) as url:
        got = _backtest(tmp_path, url)
    _check(tmp_path, got)
