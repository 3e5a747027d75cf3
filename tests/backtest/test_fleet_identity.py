"""A fleet back-test gives identical results in one process, with --workers 2,
and on a ``distributed.LocalCluster`` of two worker processes (the benchmark,
benchmarks/backtest.py, runs the full 1,000 targets × 7 days)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from scalebridge_prometheus.fake_server import PrometheusServer
from tests.backtest.conftest import TRACE, config, run

TARGETS = 6
HOURS = 6


def _fleet(prom: PrometheusServer) -> tuple[str, float, float]:
    from scalebridge.simulator.traces import read_trace
    tr = read_trace(TRACE, scale=1 / 60)
    n = HOURS * 60
    times = tr.times[:n]
    targets = ""
    for i in range(TARGETS):
        # each target its own day of the week of the trace, at its own size
        values = np.roll(tr.values, -i * 1440)[:n] * (0.5 + 0.25 * i)
        prom.add_arrays({"__name__": "rps", "job": f"web-{i}"}, times, values)
        targets += f"""\
  - name: web-{i}
    provider: sim
    policy: policy.yaml
    ref: {{workload: step, capacity: 10, startup: 60}}
    metrics:
      rps: {{source: {{metric_source: prom, query: 'sum(rps{{job="web-{i}"}})'}}}}
"""
    return targets, float(times[0]), float(times[0]) + n * 60


@pytest.mark.slow
def test_one_process_two_workers_and_a_dask_cluster_agree(tmp_path):
    distributed = pytest.importorskip("distributed", reason="the dask extra: pip install 'scalebridge[dask]'")
    with PrometheusServer(retention="100y") as prom:
        targets, start, end = _fleet(prom)
        path = config(tmp_path, prom.url, targets)
        args = ("backtest", str(path), "--start", f"{start:.0f}", "--end", f"{end:.0f}", "--capacity", "10",
                "--startup", "60", "--output", "json")
        outs = {}
        code, outs["one process"] = run(*args, "--jobs", "1")
        assert code == 0
        code, outs["two workers"] = run(*args, "--jobs", "2")   # simulate's name for it; --workers 1 above
        assert code == 0
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=50) as cluster:
            code, outs["dask"] = run(*args, "--scheduler", cluster.scheduler_address)
        assert code == 0
    results = {k: json.loads(v) for k, v in outs.items()}
    for r in results.values():
        assert list(r["targets"]) == [f"web-{i}" for i in range(TARGETS)] and r["failed"] == {}
        for t in r["targets"].values():
            for run_ in t["runs"]:
                run_.pop("elapsed_seconds")
    one = results["one process"]
    assert len({json.dumps(r["targets"], sort_keys=True) for r in results.values()}) == 1
    assert len({json.dumps(r["fleet"], sort_keys=True) for r in results.values()}) == 1
    # and it is a real fleet: every target scaled, differently
    hours = {t: r["instance_hours"] for t, x in one["targets"].items() for r in x["runs"] if r["semantics"] == "aws"}
    assert len(set(hours.values())) == TARGETS
