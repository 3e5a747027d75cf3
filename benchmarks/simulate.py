#!/usr/bin/env python3
"""The fleet simulator's speed: a 30-day trace at 15-second ticks (172,800
decisions) through every semantics, on one core.

Goals (issue "Replay and compare"): <= 10 s in total for the five semantics
and <= 300 MB peak memory. Reports, per semantics, the wall time
(time.perf_counter; also the process's CPU time, steadier on a shared
machine) and microseconds per decision, the simulator's own
overhead (the same loop, the fleet moving as in the first semantics' run, with
decisions that cost nothing; and the same world stepped sync by sync from
outside, as the sim provider steps it), and the peak
resident memory (resource.getrusage maxrss; with --tracemalloc also the peak
of Python allocations, which slows the run).

The load is the World Cup 98 trace (shared/traces beside the repository, read
as requests per second), its first 30 days; without it, a 30-day synthetic
diurnal workload.

    .venv/bin/python benchmarks/simulate.py [--semantics kubernetes,gce] [--days 30]
                                            [--profile] [--tracemalloc] [--synthetic]
                                            [--instructions]

``--instructions``: instead, each semantics' instructions per decision (valgrind's
callgrind, the figure the machine's load does not move): a replay of 2 days less one
of 1 day, over the second day's 5,760 decisions; and the simulator's own instructions
per tick, ``(overhead)`` (``--semantics overhead`` for that line alone): the same
difference for a replay whose decisions cost nothing, replaying kubernetes' sizes as
the in-process overhead line does.

``--bytecodes N``: instead, where each semantics' decisions spend their work, by function,
in Python bytecodes (``bytecodes.py``: a count the machine's load does not move): the
world stepped sync by sync from outside for its first 2,000 ticks, then ``N`` decisions
traced (the world's own steps between them are not).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TRACE = next((p for p in (REPO.parent / "shared" / "traces" / "worldcup98_day46-78.csv",
                          Path("/work/shared/traces/worldcup98_day46-78.csv")) if p.is_file()),
             REPO.parent / "shared" / "traces" / "worldcup98_day46-78.csv")
POLICY = REPO / "examples" / "simulate" / "policy.yaml"
TICK = 15.0
SEMANTICS = "kubernetes,gce,azure,aws,scalebridge"
GOAL_SECONDS = 10.0
GOAL_MB = 300.0


def load(days: float, synthetic: bool) -> tuple[np.ndarray, float, str]:
    from scalebridge.simulator import make_workload, read_trace, resample

    if TRACE.is_file() and not synthetic:
        trace = read_trace(TRACE, scale=1 / 60)
        values = resample(trace, TICK, trace.start, trace.start + days * 86400)
        return values, trace.start, f"{TRACE.name}, first {days:g} days, requests/s"
    w = make_workload("diurnal", seed=0, duration_seconds=days * 86400, tick_seconds=TICK, peak=3000.0,
                      weekly_dip=0.3)
    return w.values, 0.0, f"synthetic diurnal, {days:g} days"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: kilobytes


def _free_decisions(sizes: list[int], start: float) -> None:
    """Make every ``Decider.step`` cost (almost) nothing: it replays ``sizes``."""
    from scalebridge.engine import Decider
    from scalebridge.semantics.base import Decision

    def replay(self, now, current, obs, trace=None, checked=False):
        size = sizes[int(round((now - start) / TICK))]
        return Decision(size, size, "Replayed")

    Decider.step = replay  # type: ignore[method-assign]


def _replay_child(name: str, days: float, args: argparse.Namespace) -> int:
    """(run under valgrind) one semantics' replay of the first ``days`` days; ``overhead``:
    the replay of ``--sizes``' sizes by decisions that cost nothing."""
    from scalebridge.policyfile import load_policy_file
    from scalebridge.simulator import FleetModel, simulate

    values, start, _ = load(days, args.synthetic)
    if name == "overhead":
        _free_decisions(np.load(args.sizes).tolist(), start)
        name = "kubernetes"
    simulate(load_policy_file(POLICY), values, FleetModel(capacity=args.capacity, startup=args.startup),
             semantics=name, start_time=start)
    return 0


def _count_instructions(args: argparse.Namespace) -> int:
    # OpenBLAS's idle threads spin a time-dependent number of instructions: one thread, counts that repeat
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from children import instructions   # benchmarks/ is the script's directory (its ENV copies os.environ)

    day = int(86400 / TICK)
    base = [sys.executable, __file__, f"--capacity={args.capacity}", f"--startup={args.startup}"] + \
        (["--synthetic"] if args.synthetic else [])
    names = [n.strip() for n in args.semantics.split(",") if n.strip()]
    for name in names:
        if name == "overhead":
            continue
        two, one = (instructions(base + ["--count-child", f"{name}:{d}"]) for d in (2, 1))
        print(f"  {name:<12} {(two - one) / day:>9,.0f} instructions/decision (the second day's {day:,})",
              flush=True)
    if "overhead" in names or args.semantics == SEMANTICS:
        import tempfile
        from scalebridge.policyfile import load_policy_file
        from scalebridge.simulator import FleetModel, simulate

        values, start, _ = load(2, args.synthetic)
        run = simulate(load_policy_file(POLICY), values, FleetModel(capacity=args.capacity, startup=args.startup),
                       semantics="kubernetes", start_time=start)
        with tempfile.TemporaryDirectory() as d:
            path = str(Path(d) / "sizes.npy")
            np.save(path, run.desired)
            two, one = (instructions(base + ["--sizes", path, "--count-child", f"overhead:{d}"]) for d in (2, 1))
        print(f"  {'(overhead)':<12} {(two - one) / day:>9,.0f} instructions/tick (the second day's {day:,}): the "
              "simulator alone, kubernetes' sizes replayed by decisions that cost nothing", flush=True)
    return 0


def _count_bytecodes(args: argparse.Namespace) -> int:
    from bytecodes import count, report   # benchmarks/ is the script's directory
    from scalebridge.engine import Decider
    from scalebridge.policyfile import load_policy_file
    from scalebridge.protocol import Settings
    from scalebridge.simulator import FleetModel, World

    values, start, what = load(1, args.synthetic)
    model = FleetModel(capacity=args.capacity, startup=args.startup)
    skip = 2000
    print(f"load: {what}; {args.bytecodes:,} decisions traced after {skip:,} ticks")
    for name in [n.strip() for n in args.semantics.split(",") if n.strip()]:
        settings = Settings(metric_delay_seconds=model.lag_ticks * float(model.tick_seconds))
        decider = Decider(load_policy_file(POLICY), name, settings)
        world = World(decider.policy, values, model, start_time=start, settings=settings)

        def decide(k: int) -> None:   # what replay.simulate does at a sync
            d = decider.step(world.time_of(k), world.current, world.observations, checked=True)
            if d.desired != world.current:
                world.resize(d.desired)

        for k in range(skip):
            world.observe(k)
            decide(k)

        def traced():
            for k in range(skip, skip + args.bytecodes):
                world.observe(k)
                yield lambda k=k: decide(k)
        report(name, *count(traced()))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--semantics", default=SEMANTICS)
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--capacity", type=float, default=25.0, help="requests/s one member serves (default 25)")
    ap.add_argument("--startup", type=float, default=90.0)
    ap.add_argument("--profile", action="store_true", help="print cProfile's top 15 by cumulative time")
    ap.add_argument("--tracemalloc", action="store_true", help="also measure the peak of Python allocations")
    ap.add_argument("--synthetic", action="store_true", help="a synthetic diurnal load instead of the trace")
    ap.add_argument("--instructions", action="store_true",
                    help="count each semantics' instructions per decision instead (callgrind; minutes)")
    ap.add_argument("--bytecodes", type=int, default=0, metavar="N",
                    help="instead, N decisions of each semantics traced: Python bytecodes by function")
    ap.add_argument("--count-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.count_child:
        name, days = args.count_child.split(":")
        return _replay_child(name, float(days), args)
    if args.instructions:
        return _count_instructions(args)
    if args.bytecodes:
        return _count_bytecodes(args)

    from scalebridge import registry
    from scalebridge.engine import Decider
    from scalebridge.policyfile import load_policy_file
    from scalebridge.simulator import FleetModel, simulate

    values, start, what = load(args.days, args.synthetic)
    policy = load_policy_file(POLICY)
    model = FleetModel(capacity=args.capacity, startup=args.startup)
    registered = registry.current().semantics
    names = [n.strip() for n in args.semantics.split(",") if n.strip()]
    runnable = [n for n in names if n in registered]
    print(f"load: {what}: {values.size:,} ticks of {TICK:g} s; peak {values.max():,.0f}, "
          f"capacity {args.capacity:g}/member, startup {args.startup:g} s; policy {POLICY.relative_to(REPO)}")
    for n in names:
        if n not in registered:
            print(f"  {n:<12} skipped: not registered")

    profiler = cProfile.Profile() if args.profile else None
    if args.tracemalloc:
        tracemalloc.start()
    total = total_cpu = 0.0
    sizes: list[int] = []
    for name in runnable:
        if profiler:
            profiler.enable()
        t, c = time.perf_counter(), time.process_time()
        run = simulate(policy, values, model, semantics=name, start_time=start)
        elapsed, cpu = time.perf_counter() - t, time.process_time() - c
        if profiler:
            profiler.disable()
        total += elapsed
        total_cpu += cpu
        if not sizes:
            sizes = run.desired.tolist()
        print(f"  {name:<12} {elapsed:6.2f} s  {elapsed / run.decisions * 1e6:6.2f} µs/decision  "
              f"(cpu {cpu:5.2f} s)  {run.decisions:,} decisions, peak {int(run.paid.max())} members, "
              f"{run.errors} errors")
    traced = None
    if args.tracemalloc:
        traced = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    # the simulator's own cost: the same loop around decisions that cost nothing
    # but replay the first semantics' sizes, so the fleet moves exactly as it did
    if runnable:
        original = Decider.step
        _free_decisions(sizes, start)
        try:
            t = time.perf_counter()
            simulate(policy, values, model, semantics=runnable[0], start_time=start)
            overhead = time.perf_counter() - t
        finally:
            Decider.step = original  # type: ignore[method-assign]
        print(f"  {'(overhead)':<12} {overhead:6.2f} s  {overhead / values.size * 1e6:6.2f} µs/tick  "
              f"the simulator alone: {runnable[0]}'s sizes replayed by a decision that costs nothing")
        # the same world stepped from outside, sync by sync (World.observe / World.resize),
        # as the sim provider steps it from the controller's clock
        from scalebridge.simulator import World
        world = World(policy, values, model, start_time=start)
        t = time.perf_counter()
        current = world.initial
        for k in range(0, values.size, model.sync_ticks):
            current = world.observe(k)
            if sizes[k] != current:
                world.resize(sizes[k])
        world.finish()
        stepped = time.perf_counter() - t
        assert world.desired == sizes, "the stepped world moved otherwise than the replay"
        print(f"  {'(stepped)':<12} {stepped:6.2f} s  {stepped / values.size * 1e6:6.2f} µs/tick  "
              "the same world stepped sync by sync from outside (World.observe/resize, the sim provider's path)")
    rss = peak_rss_mb()
    goal = GOAL_SECONDS * len(runnable) / 5 if runnable else GOAL_SECONDS
    print(f"total: {total:.2f} s (cpu {total_cpu:.2f} s: on a shared machine the steadier number) "
          f"for {len(runnable)} semantics x {values.size:,} decisions "
          f"(goal <= {GOAL_SECONDS:g} s for five; pro rata {goal:.1f} s): {'OK' if total <= goal else 'OVER'}")
    print(f"peak memory: {rss:.0f} MB resident (maxrss)" + (f", {traced:.0f} MB Python allocations (tracemalloc)"
                                                           if traced is not None else "")
          + f" (goal <= {GOAL_MB:g} MB): {'OK' if rss <= GOAL_MB else 'OVER'}")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(15)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
