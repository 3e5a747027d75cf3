#!/usr/bin/env python3
"""Fleet back-test throughput: targets per second of ``scalebridge backtest`` in one
process, with ``--workers N``, and on a ``distributed.LocalCluster`` of N worker
processes — the same fleet each time, the results checked identical.

The fleet: TARGETS targets, each reading its own request rate from a local
Prometheus-API server (a day of the shared Azure LLM trace rolled per target,
scaled per target), DAYS days at the 15 s tick, replayed under SEMANTICS. The
issue's size is 1,000 targets × 7 days under every semantics (the default);
history is read in threads, replays are CPU: on this 2-core machine the full size
takes hours, so smaller runs are reported with their size.

    .venv/bin/python benchmarks/backtest.py [--targets 1000] [--days 7] [--semantics all] [--workers 2]
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "azure_llm_code_2024-05-10_16.csv"
if not TRACE.is_file():
    TRACE = Path("/work/shared/traces/azure_llm_code_2024-05-10_16.csv")
POLICY = ROOT / "examples" / "backtest" / "policy.yaml"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=1000)
    ap.add_argument("--days", type=float, default=7)
    ap.add_argument("--semantics", default="all")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    from distributed import LocalCluster
    from scalebridge.cli import main as cli
    from scalebridge.simulator.traces import read_trace
    from scalebridge_prometheus.fake_server import PrometheusServer

    tr = read_trace(TRACE, scale=1 / 60)
    n = int(a.days * 1440)
    reps = -(-n // tr.values.size)
    values = np.tile(tr.values, reps + 1)
    times = tr.times[0] + np.arange(n) * 60.0
    with PrometheusServer(retention="100y") as prom, tempfile.TemporaryDirectory() as tmp:
        targets = []
        for i in range(a.targets):
            prom.add_arrays({"__name__": "rps", "job": f"web-{i}"}, times,
                            values[(i % 7) * 1440:(i % 7) * 1440 + n] * (0.5 + (i % 10) / 10))
            targets.append(f"  - {{name: web-{i}, provider: sim, policy: {POLICY}, ref: {{workload: step, capacity: 10, "
                           f"startup: 60}}, metrics: {{rps: {{source: {{metric_source: prom, "
                           f"query: 'sum(rps{{job=\"web-{i}\"}})'}}}}}}}}")
        cfg = Path(tmp) / "run.yaml"
        cfg.write_text(f"metric_sources:\n  prom: {{type: prometheus, url: '{prom.url}'}}\ntargets:\n"
                       + "\n".join(targets) + "\n")
        args = ["backtest", str(cfg), "--start", f"{times[0]:.0f}", "--end", f"{times[0] + n * 60:.0f}",
                "--capacity", "10", "--startup", "60", "--semantics", a.semantics, "--output", "json"]
        results = {}
        cluster = None
        for label, extra in (("one process", ["--workers", "1"]), (f"--workers {a.workers}", ["--workers", str(a.workers)]),
                             (f"LocalCluster({a.workers} processes)", None)):
            if extra is None:
                cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
                extra = ["--scheduler", cluster.scheduler_address]
            out = io.StringIO()
            t0 = time.perf_counter()
            with redirect_stdout(out):
                code = cli(args + extra)
            seconds = time.perf_counter() - t0
            assert code == 0, out.getvalue()[-2000:]
            got = json.loads(out.getvalue())
            for t in got["targets"].values():
                for r in t["runs"]:
                    r.pop("elapsed_seconds")
            results[label] = json.dumps(got["targets"], sort_keys=True)
            print(f"{label:<28} {a.targets} targets × {a.days:g} d × {a.semantics}: {seconds:7.1f} s, "
                  f"{a.targets / seconds:7.2f} targets/s", flush=True)
        if cluster is not None:
            cluster.close()
        same = len(set(results.values())) == 1
        print(f"identical results: {same}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
