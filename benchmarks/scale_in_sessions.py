#!/usr/bin/env python3
"""What each scale-in selection costs a service of long-lived sessions, and what a
rollout does to the size under ``kubernetes`` and the neutral semantics.

**Sessions** (the seed's websocket service): a trace's requests per minute (a
``timestamp,value`` CSV of ``../shared/traces``) become new sessions per minute
(``--sessions-per-request``, default 10). Sessions last ``--mean-minutes`` on average
(exponential). A load balancer hands new sessions round-robin to the ready members
(``--balance round_robin``: the expected value, deterministic; the newest member is then
always the least loaded) or each to a member drawn at random (``--balance random``,
seeded: members' loads then differ by more than their age), each holding at most 25,000
(``--cap``); a session beyond every member's cap is refused (the shortfall). The neutral
semantics decides every minute on the members' connections (a ``pods`` metric,
``AverageValue`` 20,000) with the seed's slow scale-in (5 % a minute after a 5-minute
window); a new member is ready a minute after it is added. On a scale-in the policy's
``scale_in.select`` names who leaves (:func:`scalebridge.stages.scale_in.select_members`,
exactly what the controller carries out); every session on a member that leaves is cut
and reconnects the next minute. Scores per strategy: sessions cut, member-minutes (the
cost), sessions refused, the peak size.

**Rollout** (:func:`rollout`): 10 pods holding 210,000 long-lived sessions, steady,
then a rolling update (``maxSurge`` 25 %) whose new pods start empty. The size is
written during the rollout (the kubernetes provider no longer waits). Under
``kubernetes`` the HPA averages over every ready pod, surge included, so the empty
surge pulls the average out of the tolerance band and the count is multiplied by the
inflated pod count (kubernetes/kubernetes#72775); once raised, the size sits within the
tolerance and stays. The neutral semantics judges the demand against the intended size.
Scores: the peak size, the size at the end of the rollout, the final one (the load
needs 10) and pod-minutes.

    .venv/bin/python benchmarks/scale_in_sessions.py ../shared/traces/azure_llm_code_2024-05-10_16.csv \\
        --plot out/scale_in_sessions.png
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

from scalebridge.engine import Decider, decide
from scalebridge.stages.scale_in import select_members

STRATEGIES = ("least_loaded", "oldest", "newest", "unready_first", "zone_balanced")
ZONES = ("a", "b", "c")


def load_trace(path: str) -> list[tuple[float, float]]:
    with open(path, newline="") as f:
        return [(float(r["timestamp"]), float(r["value"])) for r in csv.DictReader(f)]


def policy(select: str) -> dict:
    p = {"min_replicas": 2, "max_replicas": 200,
         "metrics": [{"type": "pods", "name": "connections",
                      "target": {"type": "AverageValue", "average_value": 20000}}],
         "behavior": {"scale_down": {"stabilization_window_seconds": 300,
                                     "policies": [{"type": "Percent", "value": 5, "period_seconds": 60}]},
                      "scale_up": {"stabilization_window_seconds": 0,
                                   "policies": [{"type": "Percent", "value": 100, "period_seconds": 60}]}}}
    if select != "provider":
        p["scale_in"] = {"select": select, "metric": "connections"} if select in ("least_loaded", "zone_balanced") \
            else {"select": select}
    return p


def sessions(trace: list[tuple[float, float]], select: str, *, per_request: float, mean_minutes: float,
             cap: float, balance: str = "round_robin", seed: int = 1) -> dict:
    keep = math.exp(-1.0 / mean_minutes)
    rng = None
    if balance == "random":
        import numpy as np
        rng = np.random.default_rng(seed)
    t0 = trace[0][0]
    members: dict[str, dict] = {}     # name -> {"start", "ready", "zone", "c"}
    serial = 0

    def add(now: float, ready: bool) -> None:
        nonlocal serial
        members[f"m-{serial}"] = {"start": now, "ready": ready, "zone": ZONES[serial % 3], "c": 0.0}
        serial += 1

    for _ in range(4):
        add(t0 - 3600, True)
    decider = Decider(policy(select), "scalebridge")
    cut = refused = cost = 0.0
    peak = len(members)
    reconnect = 0.0
    for now, value in trace:
        for m in members.values():
            m["c"] = float(rng.binomial(int(m["c"]), keep)) if rng is not None else m["c"] * keep
            m["ready"] = m["ready"] or now - m["start"] >= 60
        ready = [m for m in members.values() if m["ready"]]
        arriving = value * per_request + reconnect
        reconnect = 0.0
        if rng is not None and ready:   # each session to a member drawn at random (an L4 balancer, DNS)
            got = rng.multinomial(int(round(arriving)), [1.0 / len(ready)] * len(ready))
            arriving = 0.0
            for m, n in zip(ready, got):
                took = min(float(n), cap - m["c"])
                m["c"] += took
                arriving += n - took
        # round-robin: an equal share to each ready member, what one cannot hold to the others
        while arriving > 1e-9 and ready:
            room = [m for m in ready if m["c"] < cap]
            if not room:
                break
            share = arriving / len(room)
            arriving = 0.0
            for m in room:
                took = min(share, cap - m["c"])
                m["c"] += took
                arriving += share - took
        refused += arriving
        obs = {"members": [{"name": n, "ready": m["ready"], "phase": "Running" if m["ready"] else "Pending",
                            "start_time": m["start"], "zone": m["zone"]} for n, m in members.items()],
               "metrics": {"connections": {"members": {n: m["c"] for n, m in members.items() if m["ready"]},
                                           "timestamp": now, "window": 60}}}
        current = len(members)
        d = decider.step(now, current, obs)
        desired = d.desired
        if desired > current:
            for _ in range(desired - current):
                add(now, False)
        elif desired < current:
            sel = (d.extra or {}).get("scale_in")
            names = list(sel["members"]) if sel else []
            # a partial selection's rest: the newest (a ReplicaSet's own order, all else equal)
            rest = sorted((n for n in members if n not in names), key=lambda n: -members[n]["start"])
            for n in (names + rest)[:current - desired]:
                cut += members[n]["c"]
                reconnect += members[n]["c"]
                del members[n]
        cost += len(members)
        peak = max(peak, len(members))
    return {"select": select, "sessions_cut": cut, "member_minutes": cost, "refused": refused, "peak": peak}


def rollout(semantics: str, *, minutes: int = 60, start: int = 5, per_pod: float = 21_000.0,
            min_ready_minutes: int = 1) -> dict:
    """10 pods of the old version holding ``per_pod`` sessions each (210,000: 10.5 pods'
    worth at 20,000 a pod, within the 10 % tolerance of 10), steady. From ``start``, a
    rolling update (``maxSurge`` 25 %, ``maxUnavailable`` 0, ``minReadySeconds`` 60): the
    Deployment controller adds new-version pods up to spec + surge (empty: a long-lived
    session stays where it is), ready a minute later and available one more minute later;
    then it removes old pods so that spec available pods remain, and their sessions
    reconnect, spread equally over the ready pods that stay. When no old pod is left the
    new ReplicaSet is scaled to spec. The autoscaler decides every minute on the ready
    pods' sessions (``pods`` metric, ``AverageValue`` 20,000); its size is written during
    the rollout."""
    t0 = 1_767_225_600.0
    pods = [{"name": f"old-{i}", "new": False, "c": per_pod, "start": t0 - 7200} for i in range(10)]
    spec, serial, cost, sizes, ended = 10, 0, 0, [], None
    decider = Decider({"min_replicas": 2, "max_replicas": 60,
                       "metrics": [{"type": "pods", "name": "connections",
                                    "target": {"type": "AverageValue", "average_value": 20000}}]}, semantics)

    def age(p, now):
        return (now - p["start"]) / 60

    def remove(victims, now):
        for v in victims:
            pods.remove(v)
            stay = [q for q in pods if age(q, now) >= 1]
            for q in stay:
                q["c"] += v["c"] / len(stay)

    def add(n, now):
        nonlocal serial
        for _ in range(n):
            pods.append({"name": f"new-{serial}", "new": True, "c": 0.0, "start": now})
            serial += 1

    for minute in range(minutes):
        now = t0 + 60 * minute
        old = [p for p in pods if not p["new"]]
        rolling = minute >= start and bool(old)
        if rolling:
            available = [p for p in pods if age(p, now) >= 1 + min_ready_minutes]
            remove(old[:max(0, len(available) - spec)], now)
            if [p for p in pods if not p["new"]]:
                add(max(0, spec + math.ceil(0.25 * spec) - len(pods)), now)
            elif len(pods) > spec:   # the last old pod gone: the new ReplicaSet to spec at once
                remove(sorted(pods, key=lambda p: -p["start"])[:len(pods) - spec], now)
        else:
            if ended is None and minute >= start:
                ended = minute
            extra = len(pods) - spec
            if extra > 0:         # the newest first (a ReplicaSet's order, all else equal)
                remove(sorted(pods, key=lambda p: -p["start"])[:extra], now)
            else:
                add(-extra, now)
        rolling = bool([p for p in pods if not p["new"]]) and minute >= start
        ready = [p for p in pods if age(p, now) >= 1]
        obs = {"status_replicas": len(pods),
               "members": [{"name": p["name"], "ready": age(p, now) >= 1,
                            "phase": "Running" if age(p, now) >= 1 else "Pending", "start_time": p["start"]}
                           for p in pods],
               "metrics": {"connections": {"members": {p["name"]: p["c"] for p in ready},
                                           "timestamp": now, "window": 60}}}
        if rolling:
            obs["rollout"] = {"updated_replicas": sum(1 for p in pods if p["new"])}
        spec = decider.step(now, spec, obs).desired    # written during the rollout
        sizes.append(spec)
        cost += len(pods)
    return {"semantics": semantics, "peak": max(sizes), "at_end_of_rollout": sizes[ended] if ended else None,
            "final": sizes[-1], "pod_minutes": cost, "sizes": sizes, "rollout_minutes": (start, ended)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--sessions-per-request", type=float, default=10.0)
    ap.add_argument("--mean-minutes", type=float, default=30.0)
    ap.add_argument("--cap", type=float, default=25_000.0)
    ap.add_argument("--minutes", type=int, default=0, help="only the first N minutes of the trace")
    ap.add_argument("--balance", choices=("round_robin", "random"), default="round_robin",
                    help="round_robin: an equal share of the new sessions to each ready member (the model is the "
                         "expected value); random: each session to a member drawn at random, sessions ending at "
                         "random (seeded)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plot", help="a PNG of sessions cut per strategy and the rollout's sizes")
    a = ap.parse_args(argv)
    if not Path(a.trace).is_file():
        print(f"scale_in_sessions: {a.trace}: no such file", file=sys.stderr)
        return 2
    trace = load_trace(a.trace)
    if a.minutes:
        trace = trace[:a.minutes]
    rows = [sessions(trace, s, per_request=a.sessions_per_request, mean_minutes=a.mean_minutes, cap=a.cap,
                     balance=a.balance, seed=a.seed)
            for s in ("provider", *STRATEGIES)]
    best = min(r["sessions_cut"] for r in rows if r["select"] == "least_loaded")
    print(f"sessions on {a.trace} ({len(trace)} minutes; {a.sessions_per_request:g} sessions a request, "
          f"mean {a.mean_minutes:g} min, cap {a.cap:g} a member, {a.balance} balancing)")
    print(f"{'select':<15}{'sessions cut':>14}{'x least_loaded':>16}{'member-min':>12}{'refused':>10}{'peak':>6}")
    for r in rows:
        ratio = r["sessions_cut"] / best if best else float("inf")
        print(f"{r['select']:<15}{r['sessions_cut']:>14,.0f}{ratio:>16.3f}{r['member_minutes']:>12,.0f}"
              f"{r['refused']:>10,.0f}{r['peak']:>6}")
    ro = [rollout(s) for s in ("kubernetes", "scalebridge")]
    print(f"rollout: 10 pods holding 210,000 sessions (needs 10 within the 10 % tolerance), maxSurge 25 %, "
          f"from minute {ro[0]['rollout_minutes'][0]}")
    print(f"{'semantics':<15}{'peak':>6}{'at end':>8}{'final':>7}{'pod-min':>9}  rollout ends")
    for r in ro:
        print(f"{r['semantics']:<15}{r['peak']:>6}{r['at_end_of_rollout']:>8}{r['final']:>7}{r['pod_minutes']:>9}"
              f"  minute {r['rollout_minutes'][1]}")
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        ax1.bar([r["select"] for r in rows], [r["sessions_cut"] / best for r in rows])
        ax1.set_ylim(0.95, max(r["sessions_cut"] / best for r in rows) * 1.02)
        ax1.set_ylabel("sessions cut by scale-in, x least_loaded")
        ax1.tick_params(axis="x", rotation=30)
        for r in ro:
            ax2.plot(r["sizes"], label=r["semantics"])
        ax2.axvspan(ro[0]["rollout_minutes"][0], ro[0]["rollout_minutes"][1] or len(ro[0]["sizes"]), alpha=0.15,
                    label="rollout")
        ax2.axhline(10, linestyle=":", label="the load's need")
        ax2.set_xlabel("minute")
        ax2.set_ylabel("spec.replicas")
        ax2.legend()
        fig.tight_layout()
        Path(a.plot).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(a.plot, dpi=90)
        print(f"plot: {a.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
