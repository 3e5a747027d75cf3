#!/usr/bin/env python3
"""The controller with 10,000 ``sim`` targets (issue #29): what a user of
``scalebridge validate`` and ``scalebridge run --clock virtual`` waits for.

Lines of the table (each measured ``--repeat`` times; median and range printed):

- ``validate``: ``scalebridge validate RUN.yaml`` from a shell (goal <= 1 s);
- ``run start``: ``scalebridge run RUN.yaml --clock virtual --once`` from a
  shell — load, build, the first sync, exit: the issue's "start and the first
  sync" — wall time and the process's peak RSS (goal <= 3 s, <= 500 MB); and
  ``--until 15s`` (the line earlier measurements of this table used: the same
  one sync, at 0 s — the run ends when its clock reaches 15 s, before the sync
  due then — without ``--once``'s collector left off);
- ``steady``: in process, ``build_controller`` then ``--syncs`` syncs 15 s apart;
  the median of the syncs after the first (goal <= 1.5 s); ``--profile``
  prints cProfile's view of one steady sync (or, with ``--profile-start``, of
  the build and first sync).

Each target is a ``flash_crowd`` fleet (capacities 10..16, seeds 0..12) under
kubernetes, gce or scalebridge in turn (the semantics whose policy reads every
part of the benchmark's policy: no warnings), one policy (CPU at 60 %).

    .venv/bin/python benchmarks/run_sim.py [--targets 10000] [--repeat 3] [--syncs 8]
                                           [--only validate,run,steady] [--profile] [--profile-start]
                                           [--instructions]
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "core"))
SEMANTICS = ("kubernetes", "gce", "scalebridge")
POLICY = {"min_replicas": 2, "max_replicas": 20,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}],
          "behavior": {"scale_down": {"stabilization_window_seconds": 300}}}


def write_config(directory: Path, n: int) -> Path:
    import yaml
    targets = [{"name": f"t{k:05d}", "provider": "sim", "policy": "web", "semantics": SEMANTICS[k % len(SEMANTICS)],
                "ref": {"workload": "flash_crowd", "capacity": 10 + k % 7, "startup": 60, "seed": k % 13}}
               for k in range(n)]
    path = directory / "run.yaml"
    path.write_text(yaml.safe_dump({"providers": {"sim": {}}, "policies": {"web": POLICY}, "targets": targets},
                                   sort_keys=False))
    return path


from children import instructions, scalebridge, timed_child  # noqa: E402 (benchmarks/ is the script's directory)


def summary(xs: list[float], unit: str = "s") -> str:
    return f"median {statistics.median(xs):.2f} {unit} (range {min(xs):.2f}–{max(xs):.2f}, n={len(xs)})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--syncs", type=int, default=8, help="in-process syncs after the first")
    ap.add_argument("--only", default="validate,run,steady")
    ap.add_argument("--profile", action="store_true", help="profile one steady sync")
    ap.add_argument("--profile-start", action="store_true", help="profile the build and the first sync")
    ap.add_argument("--instructions", action="store_true",
                    help="also count the instructions of one validate and one run (valgrind's callgrind; "
                         "minutes): the figures the machine's load does not move")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    directory = Path(tempfile.mkdtemp(prefix="scalebridge-bench-sim-"))
    try:
        config = write_config(directory, args.targets)
        print(f"{args.targets} sim targets ({', '.join(SEMANTICS)}), {config.stat().st_size / 1e6:.1f} MB of YAML")
        if only & {"validate", "run"}:
            timed_child([scalebridge(), "validate", str(config)])   # warm: bytecode and page caches
        if "validate" in only:
            rows = [timed_child([scalebridge(), "validate", str(config)]) for _ in range(args.repeat)]
            print(f"  scalebridge validate: wall {summary([r[0] for r in rows])}; "
                  f"cpu {summary([r[1] for r in rows])}  (goal <= 1 s)")
            if args.instructions:
                print(f"  scalebridge validate: {instructions([scalebridge(), 'validate', str(config)]):,} instructions")
        if "run" in only:
            for span, what, goal in ((["--once"], "start + the first sync", "  (goal <= 3 s, <= 500 MB)"),
                                     (["--until", "15s"], "start + the sync at 0 s, up to 15 s of simulated time", "")):
                rows = [timed_child([scalebridge(), "run", str(config), "--clock", "virtual", *span,
                                     "--state", str(directory / f"cli{k}.db")]) for k in range(args.repeat)]
                for f in directory.glob("cli*.db*"):
                    f.unlink()
                print(f"  scalebridge run --clock virtual {' '.join(span)} ({what}): "
                      f"wall {summary([r[0] for r in rows])}; cpu {summary([r[1] for r in rows])}; "
                      f"peak RSS {summary([r[2] for r in rows], 'MB')}{goal}")
                if args.instructions:
                    cmd = [scalebridge(), "run", str(config), "--clock", "virtual", *span,
                           "--state", str(directory / "counted.db")]
                    count = instructions(cmd, between=lambda: [f.unlink() for f in directory.glob("counted.db*")])
                    print(f"  scalebridge run --clock virtual {' '.join(span)}: {count:,} instructions "
                          "(from an empty state, as the timed runs)")
        if "steady" in only:
            from scalebridge.controller.loop import build_controller
            profile = cProfile.Profile() if (args.profile or args.profile_start) else None
            if args.profile_start:
                profile.enable()
            t0 = time.perf_counter()
            controller = build_controller(str(config), clock="virtual", state=str(directory / "state.db"),
                                          until=1e9, seed=1)
            build = time.perf_counter() - t0
            start = controller.start_time
            rows = []
            try:
                for k in range(1 + args.syncs):
                    if args.profile and k == 1 + args.syncs // 2:
                        profile.enable()
                    t0, c0 = time.perf_counter(), time.process_time()
                    report = controller.sync(start + 15.0 * k)
                    rows.append((time.perf_counter() - t0, time.process_time() - c0))
                    if profile is not None and (k == 0 and args.profile_start or args.profile and
                                                k == 1 + args.syncs // 2):
                        profile.disable()
                    assert len(report.records) == args.targets
            finally:
                controller.close()
            steady = [w for w, _ in rows[1:]]
            print(f"  in process: build {build:.2f} s, first sync {rows[0][0]:.2f} s (cpu {rows[0][1]:.2f} s), "
                  f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
            print(f"  steady sync: {summary(steady)}; cpu {summary([c for _, c in rows[1:]])}  (goal <= 1.5 s)")
            if profile is not None:
                for order in ("cumulative", "tottime"):
                    out = io.StringIO()
                    pstats.Stats(profile, stream=out).sort_stats(order).print_stats(30)
                    print(out.getvalue())
        return 0
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
