#!/usr/bin/env python3
"""The gce provider at fleet size: API calls per target per sync, and syncs per
second, for N managed instance groups (default 200) of M VMs each, against the
local Compute REST and Monitoring gRPC servers with the real clients.

Two measurements:

1. ``scalebridge run --once`` on a run configuration of N targets (the CPU
   default policy under the ``gce`` semantics): the whole command, in process —
   building the providers and clients, the first sync of every target (which also
   asks whether an autoscaler manages the group, and lists the group's unfinished
   operations), deciding, resizing the groups whose CPU says so;
2. steady state: the syncs a long-running ``scalebridge run`` makes after the
   first (observe + read_metrics per target, the provider instance kept), with
   ``--workers`` threads as the controller syncs them.

The servers run in this process and share its 2 cores with the clients, so the
rates are a floor for what the provider itself costs, not the cloud's latency
(Compute answers in tens of milliseconds; see docs/providers/gce.md for the
arithmetic against the API quotas).

    .venv/bin/python benchmarks/gce.py [--migs 200] [--vms 3] [--syncs 3] [--workers 16]
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import io
import json
import os
import sys
import tempfile
import time
from contextlib import redirect_stderr

CPU = "compute.googleapis.com/instance/cpu/utilization"
ZONES = ("europe-west1-b", "europe-west1-c", "us-central1-a", "us-central1-f")


def world(compute, monitoring, migs: int, vms: int, now: float) -> list[dict]:
    targets = []
    for i in range(migs):
        name = f"mig-{i:03d}"
        if i % 4 == 3:
            region = "europe-west1"
            m = compute.add_mig(name, region=region, size=vms)
            ref = {"region": region, "instance_group_manager": name}
        else:
            zone = ZONES[i % len(ZONES)]
            m = compute.add_mig(name, zone=zone, size=vms)
            ref = {"zone": zone, "instance_group_manager": name}
        u = 0.3 + 0.5 * (i % 7) / 6          # 30% … 80% CPU: some scale out, some hold
        for vm in m.vms:
            monitoring.add_series(CPU, resource_labels={"instance_id": str(vm.id), "zone": vm.zone},
                                  points=[(now - 120, u), (now - 60, u)], project=compute.project)
        targets.append({"name": name, "provider": "gce", "policy": "cpu", "ref": ref})
    return targets


def run_once(compute, monitoring, options: dict, targets: list[dict], workers: int) -> dict:
    import yaml
    from scalebridge.cli import main
    policy = {"semantics": "gce", "min_replicas": 1, "max_replicas": 50,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 60}}]}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "run.yaml")
        with open(cfg, "w") as f:
            yaml.safe_dump({"providers": {"gce": options}, "policies": {"cpu": policy}, "targets": targets}, f)
        audit = os.path.join(tmp, "audit.jsonl")
        c0, m0 = len(compute.calls), len(monitoring.requests)
        t0 = time.perf_counter()
        with redirect_stderr(io.StringIO()):
            rc = main(["run", cfg, "--once", "--audit", audit, "--state", os.path.join(tmp, "s.db"),
                       "--workers", str(workers)])
        dt = time.perf_counter() - t0
        with open(audit) as f:
            actions = collections.Counter(json.loads(x)["action"] for x in f)
    return {"rc": rc, "seconds": dt, "compute_calls": len(compute.calls) - c0,
            "monitoring_calls": len(monitoring.requests) - m0, "actions": dict(actions)}


def steady(compute, monitoring, options: dict, targets: list[dict], syncs: int, workers: int) -> dict:
    from scalebridge.controller.queries import queries_for
    from scalebridge.engine import load_policy
    from scalebridge_gce.provider import GceProvider
    provider = GceProvider(**options)
    policy = load_policy({"min_replicas": 1, "max_replicas": 50,
                          "metrics": [{"type": "resource", "name": "cpu",
                                       "target": {"type": "Utilization", "average_utilization": 60}}]})
    queries = queries_for(policy, "gce")
    handles = [provider.target(t["ref"]) for t in targets]

    def sync(t):
        now = time.time()
        obs = t.observe(now)
        t.read_metrics(now, obs, queries)

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(sync, handles))          # the first sync (operations listed once per target)
        compute.settle()
        c0, m0 = len(compute.calls), len(monitoring.requests)
        before = dict(provider.clients.calls)
        t0 = time.perf_counter()
        for _ in range(syncs):
            list(pool.map(sync, handles))
        dt = time.perf_counter() - t0
    after = provider.clients.calls
    per_call = {k: round((after[k] - before.get(k, 0)) / (syncs * len(handles)), 3) for k in after
                if after[k] != before.get(k, 0)}
    provider.close()
    n = syncs * len(handles)
    return {"syncs": n, "seconds": dt, "syncs_per_second": n / dt,
            "api_calls_per_target_sync": (len(compute.calls) - c0 + len(monitoring.requests) - m0) / n,
            "by_call": per_call}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--migs", type=int, default=200)
    ap.add_argument("--vms", type=int, default=3)
    ap.add_argument("--syncs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()
    from scalebridge_gce.fake_server import ComputeServer
    from scalebridge_gce.fake_monitoring import MonitoringServer
    now = time.time()
    with ComputeServer(project="bench-project") as compute, MonitoringServer(workers=8) as monitoring:
        targets = world(compute, monitoring, args.migs, args.vms, now)
        options = {"project": "bench-project", "compute_endpoint": compute.endpoint,
                   "monitoring_endpoint": monitoring.address, "monitoring_insecure": True,
                   "credentials": "anonymous", "timeout_seconds": 30, "operation_wait_seconds": 20}
        once = run_once(compute, monitoring, options, targets, args.workers)
        print(f"scalebridge run --once, {args.migs} MIGs x {args.vms} VMs: {once['seconds']:.2f} s "
              f"({args.migs / once['seconds']:.1f} targets/s), exit {once['rc']}, actions {once['actions']}")
        print(f"  API calls: {once['compute_calls']} Compute + {once['monitoring_calls']} Monitoring = "
              f"{(once['compute_calls'] + once['monitoring_calls']) / args.migs:.2f} per target (first sync)")
        compute.settle()
        st = steady(compute, monitoring, options, targets, args.syncs, args.workers)
        print(f"steady state, {st['syncs']} syncs with {args.workers} workers: {st['syncs_per_second']:.1f} syncs/s, "
              f"{st['api_calls_per_target_sync']:.2f} API calls per target per sync")
        print("  per target per sync: " + ", ".join(f"{k} {v:g}" for k, v in sorted(st["by_call"].items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
