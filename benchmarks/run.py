#!/usr/bin/env python3
"""The controller's speed: one sync of 10,000 targets on the fake provider.

Goal (issue 13, "Must show"): one sync takes <= 10% of the 15 s sync period
(<= 1.5 s) and the process stays <= 500 MB. Each target has four members, a policy
with a CPU utilization metric and a pair of threshold rules (``--no-rules``: the
metric only), a load of its own (so some scale out, some stay, some are held by stabilization),
every semantics is represented, and the fake provider is unpaced and in process
(its targets are synced on the loop's thread; ``--blocking``: on the worker pool, as
a cloud provider's), so the syncs
do all the work a real one would: observe, read metrics, decide, write (an
intent persisted before each write), persist every row in one transaction, write
the audit log, all in the controller's one process.

Reports: the configuration's load and build (start-up, not part of a sync); the
first sync (every target's Decider starts from empty state, most targets scale);
the following syncs (steady state: a few writes); per sync the wall time
(time.perf_counter; also the process's CPU time, steadier on a shared machine),
decisions per second, the actions taken; the peak resident memory
(resource.getrusage maxrss). ``--profile`` prints where a steady-state sync
spends its time (cProfile, by cumulative and by own time).

    .venv/bin/python benchmarks/run.py [--targets 10000] [--syncs 45] [--workers N]
                                       [--semantics all|kubernetes,...] [--no-rules] [--blocking] [--profile]
                                       [--keep DIR]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "core"))

from scalebridge.controller.clock import VirtualClock  # noqa: E402
from scalebridge.controller.loop import build_controller  # noqa: E402
from scalebridge.testing.fake import DEFAULT_START  # noqa: E402

PERIOD = 15.0
GOAL_SECONDS = 0.10 * PERIOD
GOAL_MB = 500.0
SEMANTICS = ("kubernetes", "gce", "azure", "aws", "scalebridge")
POLICY = {"min_replicas": 1, "max_replicas": 50,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}],
          "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 75, "time_window_seconds": 300,
                     "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}},
                    {"metric": "cpu", "operator": "LessThan", "threshold": 30, "time_window_seconds": 300,
                     "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}


def write_config(directory: Path, n: int, semantics: tuple[str, ...], rules: bool = True,
                 blocking: bool = False) -> Path:
    targets = []
    for k in range(n):
        # demand between 1 and 6.5 members' worth on 4 members: ~10% to ~160% utilization
        load = {"base": 1.0 + (k * 37 % 100) / 20.0, "amplitude": 0.5, "period": 3600.0 + k % 7 * 600,
                "phase": float(k * 13 % 3600)}
        targets.append({"name": f"t{k:05d}", "provider": "fake", "policy": "web",
                        "semantics": semantics[k % len(semantics)],
                        "ref": {"name": f"t{k:05d}", "size": 4, "load": load}})
    config = {"sync_period_seconds": PERIOD,
              "providers": {"fake": {"type": "scalebridge.testing.fake:FakeProvider", "blocking": blocking}},
              "policies": {"web": POLICY if rules else {k: v for k, v in POLICY.items() if k != "rules"}},
              "targets": targets}
    path = directory / "run.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=10_000)
    ap.add_argument("--syncs", type=int, default=45,
                    help="syncs after the first (steady state; 45 fill the longest window, 600 s at 15 s, "
                         "so the peak memory is the steady state's)")
    ap.add_argument("--workers", type=int, default=None, help="the controller's pool (default: its own)")
    ap.add_argument("--semantics", default="all")
    ap.add_argument("--no-rules", action="store_true", help="the policy's CPU metric only (no threshold rules)")
    ap.add_argument("--blocking", action="store_true",
                    help="the fake stands for a cloud provider: its targets are synced on the worker pool")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, help="write the configuration, state and audit here")
    args = ap.parse_args(argv)
    semantics = SEMANTICS if args.semantics == "all" else tuple(args.semantics.split(","))

    directory = args.keep or Path(tempfile.mkdtemp(prefix="scalebridge-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        config = write_config(directory, args.targets, semantics, rules=not args.no_rules, blocking=args.blocking)
        t0, c0 = time.perf_counter(), time.process_time()
        controller = build_controller(str(config), clock=VirtualClock(DEFAULT_START), state=str(directory / "state.db"),
                                      audit=str(directory / "audit.jsonl"), workers=args.workers, seed=1)
        start = time.perf_counter() - t0, time.process_time() - c0
        pool = controller._pool
        print(f"{args.targets} targets ({', '.join(semantics)}), "
              + (f"on a pool of {pool.workers} workers" if pool else "on the loop's thread (an in-process provider)"))
        print(f"  load + build the configuration: {start[0]:.2f} s (cpu {start[1]:.2f} s), peak RSS {peak_mb():.0f} MB")
        rows = []
        profile = cProfile.Profile() if args.profile else None
        try:
            for k in range(1 + args.syncs):
                now = DEFAULT_START + PERIOD * k
                if profile is not None and k == 1 + args.syncs // 2:
                    profile.enable()
                t0, c0 = time.perf_counter(), time.process_time()
                report = controller.sync(now)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                if profile is not None:
                    profile.disable()
                actions = Counter(r["action"] for r in report.records)
                rows.append((wall, cpu))
                label = "first sync " if k == 0 else f"sync {k + 1:<6}"
                print(f"  {label}: {wall:.3f} s (cpu {cpu:.3f} s), {len(report.records) / wall:,.0f} decisions/s, "
                      f"{dict(sorted(actions.items()))}")
        finally:
            controller.close()
        steady = [w for w, _ in rows[1:]] or [rows[0][0]]
        worst = max(w for w, _ in rows)
        mb = peak_mb()
        print(f"  steady state: median {statistics.median(steady):.3f} s, "
              f"{args.targets / statistics.median(steady):,.0f} decisions/s; slowest sync {worst:.3f} s")
        print(f"  peak RSS: {mb:.0f} MB")
        ok_time, ok_mem = worst <= GOAL_SECONDS, mb <= GOAL_MB
        print(f"  goal: every sync <= {GOAL_SECONDS:.1f} s: {'met' if ok_time else 'MISSED'}; "
              f"<= {GOAL_MB:.0f} MB: {'met' if ok_mem else 'MISSED'}")
        if profile is not None:
            for order in ("cumulative", "tottime"):
                out = io.StringIO()
                pstats.Stats(profile, stream=out).sort_stats(order).print_stats(25)
                print(out.getvalue())
        return 0 if ok_time and ok_mem else 1
    finally:
        if args.keep is None:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
