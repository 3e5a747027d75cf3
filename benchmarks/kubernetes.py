#!/usr/bin/env python3
"""The kubernetes provider at fleet size: observe + decide + write for N
Deployments (default 1,000) per sync, against the local test API server
(scalebridge_kubernetes.fake_server) with the real ``kubernetes`` client.

The controller (scalebridge.controller.loop.build_controller) syncs every
target: the scale subresource, the Deployment (rollout in flight), the pods of
the scale's selector, their PodMetrics; the first sync also lists the
namespace's HPAs (refusal), and a target whose CPU says so gets one PUT of its
scale. Half the Deployments run hot (a write each sync while their load keeps
rising), half settle.

Reported: syncs per second (all N targets in one sync), API calls per target per
sync, by call. The server runs in this process and shares its cores with the
client, so the rates are a floor for what the provider costs, not an API
server's latency. The client's rate limit is lifted (``qps``) to measure the
plugin; at client-go's default 5 QPS the calls per target set the ceiling
(see docs/providers/kubernetes.md).

    .venv/bin/python benchmarks/kubernetes.py [--deployments 1000] [--pods 2] [--syncs 3] [--workers 16]
"""
from __future__ import annotations

import argparse
import collections
import io
import sys
import tempfile
import time
from contextlib import redirect_stderr
from pathlib import Path

# this file is named like the SDK: keep its directory off the import path, or
# ``import kubernetes`` would find this script
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import yaml  # noqa: E402

from scalebridge.controller.clock import VirtualClock  # noqa: E402
from scalebridge.controller.loop import build_controller  # noqa: E402
from scalebridge_kubernetes.fake_server import KubernetesServer  # noqa: E402

POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 50,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deployments", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=2, help="pods per Deployment at the start")
    ap.add_argument("--namespaces", type=int, default=50)
    ap.add_argument("--syncs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=16)
    a = ap.parse_args(argv)
    sys.setswitchinterval(0.0005)     # the server's threads answer sooner
    tmp = Path(tempfile.mkdtemp(prefix="scalebridge-k8s-bench-"))
    t0 = 1796150000.0
    with KubernetesServer() as k8s:
        k8s.clock = lambda: t0 - 3600
        targets = []
        for i in range(a.deployments):
            ns, name = f"ns-{i % a.namespaces}", f"web-{i}"
            k8s.add_deployment(ns, name, replicas=a.pods, requests={"cpu": "500m"})
            k8s.set_pod_usage(ns, name, {"cpu": "450m" if i % 2 == 0 else "300m"})
            targets.append({"name": name, "provider": "kubernetes", "policy": "p",
                            "ref": {"kind": "Deployment", "namespace": ns, "name": name}})
        clock = VirtualClock(t0)
        k8s.clock = clock.now
        cfg = tmp / "run.yaml"
        cfg.write_text(yaml.safe_dump({
            "providers": {"kubernetes": {"kubeconfig": k8s.kubeconfig(tmp / "kubeconfig"),
                                         "qps": 100000, "burst": 100000}},
            "policies": {"p": POLICY}, "targets": targets, "workers": a.workers}))
        with redirect_stderr(io.StringIO()):
            c = build_controller(cfg, clock=clock, state=str(tmp / "state.db"), workers=a.workers)
        rows = []
        for s in range(a.syncs):
            now = t0 + 15.0 * s
            clock.set(now)
            k8s.requests.clear()
            start = time.perf_counter()
            with redirect_stderr(io.StringIO()):
                report = c.sync(now)
            seconds = time.perf_counter() - start
            calls = collections.Counter(f"{r.verb} {r.resource}{'/' + r.subresource if r.subresource else ''}"
                                        f"{'.' + r.group if r.group else ''}"
                                        for r in k8s.requests)
            rows.append((s, seconds, sum(calls.values()), calls, report.actions()))
        c.close()
    n = a.deployments
    print(f"kubernetes: {n} Deployments × {a.pods} pods, {a.workers} workers, {a.syncs} syncs")
    print(f"{'sync':>4} {'seconds':>8} {'syncs/s':>8} {'calls':>6} {'calls/target':>12}  actions")
    for s, seconds, total, calls, actions in rows:
        print(f"{s:>4} {seconds:>8.2f} {1 / seconds:>8.3f} {total:>6} {total / n:>12.2f}  {dict(actions)}")
    s, seconds, total, calls, _ = rows[-1]
    print("calls per target in the last sync, by call:")
    for call, k in sorted(calls.items()):
        print(f"  {call:<34} {k / n:.2f}")
    print(f"at client-go's default 5 QPS: {total / 5:.0f} s of rate limit per sync of {n} targets "
          f"({5 * 15 / (total / n):.0f} targets fit a 15 s period)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
