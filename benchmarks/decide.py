#!/usr/bin/env python3
"""Decisions per second: in-process (`scalebridge.decide` on dicts) and through
the CLI (`scalebridge decide` reading JSON Lines), for each semantics.

The request: 10 pods, 2 metrics (cpu utilization, a pods metric), a 5-minute
history (20 recommendations at the 15 s sync period, a few scale events).
Goals (issue #2/#3): >= 20,000/s in-process, >= 5,000/s through the CLI, one core;
issue #29: decide(dict) >= 20,000/s under kubernetes, >= 10,000/s under every built-in
semantics (``--only-dict --repeat 5``: median and range of five runs).

    .venv/bin/python benchmarks/decide.py [--semantics kubernetes,gce,...] [--seconds 2]
                                          [--repeat 5] [--only-dict] [--profile]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

NOW = 1767225600.0


def request(semantics: str, i: int = 0) -> dict:
    members = [{"name": f"web-{k}", "phase": "Running", "ready": True, "start_time": NOW - 3600,
                "ready_transition_time": NOW - 3500, "requests": {"cpu": "500m"}} for k in range(10)]
    cpu = {m["name"]: f"{300 + 7 * k + (i % 50)}m" for k, m in enumerate(members)}
    conns = {m["name"]: 18000 + 100 * k + i % 300 for k, m in enumerate(members)}
    recs = [{"time": NOW - 15 * k, "replicas": 10 + (k % 3)} for k in range(1, 21)]
    return {
        "semantics": semantics, "now": NOW, "current_replicas": 10,
        "policy": {"name": "web", "min_replicas": 2, "max_replicas": 50,
                   "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}},
                               {"type": "pods", "name": "connections", "target": {"type": "AverageValue", "average_value": 20000}}],
                   "behavior": {"scale_down": {"stabilization_window_seconds": 300}}},
        "observations": {"status_replicas": 10, "members": members,
                         "metrics": {"cpu": {"members": cpu, "timestamp": NOW - 10, "window": 30,
                                             "series": [[NOW - 60 * k, 60.0 + k] for k in range(5, 0, -1)]},
                                     "connections": {"members": conns, "timestamp": NOW - 10, "window": 30}}},
        "state": {"recommendations": recs,
                  "sizes": [{"time": NOW - 15 * k, "replicas": 10} for k in range(1, 21)],
                  "scale_up_events": [{"time": NOW - 200, "change": 1, "cause": "metric"}],
                  "scale_down_events": [{"time": NOW - 100, "change": 1, "cause": "metric"}]},
    }


def bench_in_process(semantics: str, seconds: float) -> float:
    from scalebridge import decide
    reqs = [request(semantics, i) for i in range(200)]
    for r in reqs[:20]:
        decide(r)
    n = 0
    # CPU time of this process (the loop does nothing else): on a shared machine wall
    # time counts the other processes' share of the cores too
    clock = time.process_time
    start = clock()
    while clock() - start < seconds:
        for r in reqs:
            decide(r)
        n += len(reqs)
    return n / (clock() - start)


def _count_child(semantics: str, n: int) -> None:
    """(run under valgrind) build 200 requests, decide ``n`` of them."""
    from scalebridge import decide
    reqs = [request(semantics, i) for i in range(200)]
    decide(reqs[0])
    for k in range(n):
        decide(reqs[k % len(reqs)])


def instructions_per_decision(semantics: str, n: int) -> float:
    """Instructions (valgrind's callgrind) of ``n`` decisions less those of none, per
    decision: the figure that does not move with the machine's load."""
    from children import instructions   # benchmarks/ is the script's directory

    def refs(count: int) -> int:
        return instructions([sys.executable, __file__, "--count-child", f"{semantics}:{count}"])
    return (refs(n) - refs(0)) / n


def bench_decider(semantics: str, seconds: float) -> float:
    """Steady state: one target's Decider stepping every 15 s with persistent history
    (what the controller and the simulator pay per sync period; no JSON, no validation)."""
    from scalebridge.engine import Decider, parse_request
    env, policy = parse_request(request(semantics))
    obs = [parse_request(request(semantics, i))[0].observations for i in range(50)]
    d = Decider(policy, semantics)
    now = NOW
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for o in obs:
            now += 15.0
            d.step(now, 10, o)
        n += len(obs)
    return n / (time.perf_counter() - start)


def _floor_adapter():
    """A pydantic-core validator of the benchmark request's shape with nothing a protocol
    model adds: plain TypedDicts, lax types, no bounds, no unknown-key check, no
    model instances — the least validating those ~200 values can cost in pydantic-core."""
    from typing import Any
    from pydantic import TypeAdapter
    from typing_extensions import TypedDict

    class M(TypedDict, total=False):
        name: str
        phase: str
        ready: bool
        ready_transition_time: float
        start_time: float
        requests: dict[str, Any]

    class MO(TypedDict, total=False):
        members: dict[str, Any]
        timestamp: float
        window: float
        series: list[tuple[float, float]]

    class O(TypedDict, total=False):
        status_replicas: int
        members: list[M]
        metrics: dict[str, MO]

    class TR(TypedDict):
        time: float
        replicas: int

    class EV(TypedDict, total=False):
        time: float
        change: int
        cause: str

    class S(TypedDict, total=False):
        recommendations: list[TR]
        sizes: list[TR]
        scale_up_events: list[EV]
        scale_down_events: list[EV]

    class R(TypedDict, total=False):
        semantics: str
        now: float
        current_replicas: int
        policy: dict
        observations: O
        state: S
    return TypeAdapter(R)


def phases(semantics: str, repeat: int = 7) -> dict[str, float]:
    """Microseconds per decision of each part of ``decide(dict)`` (the least CPU time of
    ``repeat`` passes over the benchmark's 200 requests): validating the request (the
    protocol's types, by pydantic-core; beside it, :func:`_floor_adapter`'s floor for the same
    values), the history into a ``DecisionState``, the semantics with the engine's
    bookkeeping, and the response (the metrics aligned, the state out)."""
    from scalebridge import decide
    from scalebridge.decision import Context
    from scalebridge.engine import parse_request, resolve_semantics, run, to_response
    from scalebridge.state import DecisionState

    reqs = [request(semantics, i) for i in range(200)]
    for r in reqs:
        decide(r)
    sem = resolve_semantics(semantics)
    parsed = [parse_request(r) for r in reqs]

    def decided(p):
        env, policy = p
        state = DecisionState.from_protocol(env.state)
        return run(sem, Context(env.now, env.current_replicas, policy, env.settings, env.observations, state)), \
            state, env, policy
    outs = [decided(p) for p in parsed]

    def least(fn, items) -> float:
        best = float("inf")
        for _ in range(repeat):
            t = time.process_time()
            for x in items:
                fn(x)
            best = min(best, time.process_time() - t)
        return best / len(items) * 1e6

    def respond(o):
        d, state, env, policy = o
        return to_response(sem.name, env.current_replicas, d, policy, state)
    out = {"decide": least(decide, reqs), "validate": least(parse_request, reqs),
           "validate floor": least(_floor_adapter().validate_python, reqs),
           "state in": least(lambda p: DecisionState.from_protocol(p[0].state), parsed)}
    out["semantics + engine"] = least(decided, parsed) - out["state in"]
    out["response"] = least(respond, outs)
    return out


def bench_cli(semantics: str, count: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for i in range(count):
            f.write(json.dumps(request(semantics, i)) + "\n")
        path = f.name
    try:
        cmd = [sys.executable, "-m", "scalebridge.cli", "decide", path]
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"CLI failed: {proc.stderr.strip()}")
        assert proc.stdout.count("\n") == count
        return count / elapsed
    finally:
        os.unlink(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--semantics", default="kubernetes,gce,azure,aws,scalebridge")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--cli-requests", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure decide(dict) this many times per semantics: median and range (issue #29)")
    ap.add_argument("--only-dict", action="store_true", help="only decide(dict) (no Decider.step, no CLI)")
    ap.add_argument("--profile", action="store_true", help="cProfile of decide(dict), the first semantics")
    ap.add_argument("--instructions", type=int, default=0, metavar="N",
                    help="also count instructions per decide(dict) over N decisions (valgrind; slow)")
    ap.add_argument("--bytecodes", type=int, default=0, metavar="N",
                    help="instead, N decide(dict) calls of each semantics traced: Python bytecodes by "
                         "function (bytecodes.py; the machine's load does not move it)")
    ap.add_argument("--phases", action="store_true",
                    help="microseconds per decision of each part of decide(dict), and the pydantic-core "
                         "floor of validating the same request (issue #29: what is left)")
    ap.add_argument("--count-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.count_child:
        name, n = args.count_child.split(":")
        _count_child(name, int(n))
        return
    if args.profile:
        import cProfile
        import pstats
        name = args.semantics.split(",")[0]
        prof = cProfile.Profile()
        prof.enable()
        bench_in_process(name, args.seconds)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    if args.bytecodes:
        from bytecodes import count, report   # benchmarks/ is the script's directory
        from scalebridge import decide
        for name in args.semantics.split(","):
            reqs = [request(name, i) for i in range(200)]
            for r in reqs:
                decide(r)
            report(name, *count((lambda r=reqs[k % len(reqs)]: decide(r)) for k in range(args.bytecodes)))
        return
    if args.phases:
        cols = ("decide", "validate", "validate floor", "state in", "semantics + engine", "response")
        print(f"{'µs per decision':<14}" + "".join(f"{c:>20}" for c in cols) + f"{'without validating':>20}")
        for name in args.semantics.split(","):
            p = phases(name)
            rest = p["state in"] + p["semantics + engine"] + p["response"]
            print(f"{name:<14}" + "".join(f"{p[c]:>20.1f}" for c in cols) +
                  f"{rest:>11.1f} ({1e6 / rest:,.0f}/s)")
        print("validate floor: the same request through plain TypedDicts (lax, unbounded, no model "
              "instances, unknown keys ignored); without validating: state in + semantics + engine + response")
        return
    from scalebridge.registry import current as registry
    available = registry().semantics
    print(f"{'semantics':<12} {'decide(dict)/s':>15} {'Decider.step/s':>15} {'CLI JSONL/s':>12}")
    for name in args.semantics.split(","):
        if name not in available:
            print(f"{name:<12} {'(not registered)':>14}")
            continue
        runs = [bench_in_process(name, args.seconds) for _ in range(max(1, args.repeat))]
        ip = statistics.median(runs)
        spread = f" (range {min(runs):,.0f}–{max(runs):,.0f}, n={len(runs)})" if len(runs) > 1 else ""
        if args.instructions:
            spread += f"; {instructions_per_decision(name, args.instructions):,.0f} instructions/decision"
        if args.only_dict:
            print(f"{name:<12} {ip:>15,.0f}{spread}")
            continue
        st = bench_decider(name, args.seconds)
        cl = bench_cli(name, args.cli_requests)
        print(f"{name:<12} {ip:>15,.0f} {st:>15,.0f} {cl:>12,.0f}{spread}")


if __name__ == "__main__":
    main()
