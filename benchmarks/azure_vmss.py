#!/usr/bin/env python3
"""The azure provider at fleet size: API calls per target per sync, and syncs per
second, for N scale sets (default 200) of M instances each, against the local
HTTPS ARM server with the real azure-mgmt-compute / azure-mgmt-monitor clients and
the real ClientSecretCredential.

The controller syncs every target (``Controller.sync``) on a stepped clock: the
first sync also lists the subscription's autoscale settings (once, for all scale
sets), then the steady syncs read each scale set, its instances and its
``Percentage CPU`` series (the documented rules: out by 1 above 70 %, in by 1
below 30 %), and resize those whose rules fire.

The server runs in this process and shares its 2 cores with the clients, so the
rate is a floor for what the provider itself costs, not ARM's latency. (Named
``azure_vmss.py``: a script named ``azure.py`` would shadow the ``azure`` package.)

    .venv/bin/python benchmarks/azure_vmss.py [--sets 200] [--instances 3] [--syncs 3] [--workers 16]
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

SUB = "00000000-0000-0000-0000-000000000001"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--syncs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()

    import yaml

    from scalebridge.controller.clock import VirtualClock
    from scalebridge.controller.loop import build_controller
    from scalebridge_azure.fake_server import ArmServer

    def rule(op, threshold, direction):
        return {"metric": "Percentage CPU", "statistic": "Average", "time_grain_seconds": 60,
                "time_window_seconds": 300, "time_aggregation": "Average", "operator": op, "threshold": threshold,
                "action": {"direction": direction, "type": "ChangeCount", "value": 1, "cooldown_seconds": 300}}

    policy = {"semantics": "azure", "profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 20,
                                                                                  "default": 2},
                                                  "rules": [rule("GreaterThan", 70, "Increase"),
                                                            rule("LessThan", 30, "Decrease")]}]}
    now0 = float(int(time.time()) // 60 * 60)
    T = [now0]
    with ArmServer(clock=lambda: T[0], update_polls=0) as arm, tempfile.TemporaryDirectory() as tmp:
        targets = []
        for i in range(args.sets):
            name = f"web{i:04d}"
            arm.add_scale_set(SUB, "shop", name, capacity=args.instances)
            rid = arm.scale_set_id(SUB, "shop", name)
            load = 90.0 if i % 4 == 0 else 50.0      # a quarter of them scale out
            for iid in range(args.instances):
                arm.put_metric(rid, "Percentage CPU", [(now0 - 60 * k, load) for k in range(1, 30)],
                               vm=f"{name}_{iid}")
            targets.append({"name": name, "provider": "azure", "policy": "p",
                            "ref": {"resource_group": "shop", "scale_set": name}})
        options = {"subscription_id": SUB, "arm_endpoint": arm.url, "ca_bundle": arm.ca_file,
                   "credential": {"tenant_id": arm.tenant_id, "client_id": "bench", "client_secret": "secret",
                                  "authority": arm.authority}}
        config = os.path.join(tmp, "run.yaml")
        with open(config, "w") as f:
            yaml.safe_dump({"sync_period_seconds": 15, "workers": args.workers,
                            "providers": {"azure": options}, "policies": {"p": policy}, "targets": targets}, f)
        c = build_controller(config, clock=VirtualClock(now0), state=os.path.join(tmp, "s.db"))
        try:
            rows = []
            for k in range(args.syncs):
                T[0] = now0 + 15 * k
                before = len(arm.calls)
                t0 = time.perf_counter()
                report = c.sync(T[0])
                dt = time.perf_counter() - t0
                calls = arm.calls[before:]
                kinds = collections.Counter(_kind(m, p) for m, p, _ in calls)
                rows.append((k, dt, len(calls), kinds, report.actions() if hasattr(report, "actions") else {}))
        finally:
            c.close()
    print(f"{args.sets} scale sets x {args.instances} instances, {args.workers} workers")
    print("| sync | seconds | targets/s | API calls | calls/target | by call | actions |")
    print("|---|---|---|---|---|---|---|")
    for k, dt, n, kinds, actions in rows:
        by = ", ".join(f"{a} {b}" for a, b in sorted(kinds.items()))
        print(f"| {k} | {dt:.2f} | {args.sets / dt:.0f} | {n} | {n / args.sets:.2f} | {by} | {actions} |")


def _kind(method: str, path: str) -> str:
    p = path.lower()
    if "/oauth2/" in p or "well-known" in p:
        return "token"
    if p.endswith("/metrics"):
        return "metrics.list"
    if p.endswith("/autoscalesettings"):
        return "autoscaleSettings.list"
    if p.endswith("/virtualmachines"):
        return "vms.list"
    if method == "PATCH":
        return "vmss.update"
    return "vmss.get"


if __name__ == "__main__":
    main()
