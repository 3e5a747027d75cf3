#!/usr/bin/env python3
"""The reactive frontier and the predictive example policy, trace by trace (issue #6).

For each workload — the three shared traces and the built-in flash-crowd and
exponential-growth generators — scaled so that its peak needs about 35 members
of 25,000 (the second seed's websocket pod), with a 2-minute start-up:

- the **reactive frontier** (scalebridge.simulator.frontier, also
  `scalebridge compare --frontier`): the `kubernetes` semantics with CPU
  utilization targets of 60, 70, 80 and 90% within the example's bounds (1 to
  200 members) — how much each level of safety costs a reactive autoscaler;
- the **predictive point**: examples/predictive/policy.yaml (or `--policy`) under `scalebridge`;
- the **iso-risk cost ratio**: predictive instance-hours over the frontier's at
  the same under-provisioned fraction (linear interpolation between the
  neighbouring targets; below the 60% point the 60% run, above the 90% point
  the 90% run). Goal: <= 0.90 everywhere.

    .venv/bin/python benchmarks/frontier.py [--workloads a,b] [--markdown table.md] [--json out.json]
        [--plot docs/img/frontier.png] [--margin-quantile 0.99] [--policy examples/predictive/count-noise.yaml]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces"
CAPACITY = 25_000.0
PEAK_MEMBERS = 35
STARTUP = 120.0
TICK = 15.0
WEEK_MINUTES = 7 * 24 * 60

WORKLOADS = {
    "worldcup98": ("trace", "worldcup98_day46-78.csv"),
    "nasa_http": ("trace", "nasa_http_1995-07-01_27.csv"),
    "azure_llm_code": ("trace", "azure_llm_code_2024-05-10_16.csv"),
    "flash_crowd": ("workload", "flash_crowd"),
    "exponential_growth": ("workload", "exponential_growth"),
}


def load_of(name: str) -> tuple[np.ndarray, float]:
    """The load per tick, scaled so that its peak needs PEAK_MEMBERS members; and its start time."""
    from scalebridge.simulator import make_workload
    from scalebridge.simulator.scenario import load_workload
    kind, what = WORKLOADS[name]
    if kind == "trace":      # as `scalebridge compare --trace FILE --peak X` replays it
        w = load_workload(trace=str(TRACES / what), tick_seconds=TICK, peak=PEAK_MEMBERS * CAPACITY)
        return w.load, w.start_time
    load = np.asarray(make_workload(what, seed=0, tick_seconds=TICK).values, dtype=float)
    return load * (PEAK_MEMBERS * CAPACITY / float(load.max())), 0.0


DEFAULT_POLICY = REPO / "examples" / "predictive" / "policy.yaml"


def run_workload(name: str, margin_quantile: float | None = None, policy_path: Path = DEFAULT_POLICY) -> dict:
    from scalebridge.policyfile import load_policy_file
    from scalebridge.simulator import FleetModel
    from scalebridge.predictive import trace_forecaster
    from scalebridge.simulator.frontier import FRONTIER_SEMANTICS, FRONTIER_TARGETS, frontier_policies, iso_risk_reference
    from scalebridge.simulator.run import oracle_for, score_run, simulate
    load, start = load_of(name)
    model = FleetModel(capacity=CAPACITY, startup=STARTUP, tick_seconds=TICK)
    t0 = time.perf_counter()
    predictive_policy = load_policy_file(policy_path)
    if margin_quantile is not None:
        predictive_policy = predictive_policy.model_copy(update={
            "predictive": predictive_policy.predictive.model_copy(update={"margin_quantile": margin_quantile})})
    oracle = oracle_for(load, model, predictive_policy)
    reactive = []
    for target, (_, policy) in zip(FRONTIER_TARGETS, frontier_policies(predictive_policy)):
        run = simulate(policy, load, model, semantics=FRONTIER_SEMANTICS, start_time=start)
        s = score_run(run, load, model, oracle_paid=oracle)
        reactive.append({"target": target, "instance_hours": s.instance_hours,
                         "underprovisioned_fraction": s.underprovisioned_fraction})
    planner = trace_forecaster(predictive_policy, capacity=CAPACITY, startup_seconds=STARTUP, t0=start,
                               tick_seconds=TICK)
    run = simulate(predictive_policy, load, model, semantics="scalebridge", start_time=start, forecaster=planner)
    s = score_run(run, load, model, oracle_paid=oracle)
    points = [(r["underprovisioned_fraction"], r["instance_hours"]) for r in reactive]
    ref = iso_risk_reference(points, s.underprovisioned_fraction)
    weeks = len(load) * TICK / (7 * 86400)
    return {
        "workload": name, "ticks": len(load), "seconds": round(time.perf_counter() - t0, 1),
        "reactive": reactive,
        "predictive": {"instance_hours": s.instance_hours, "underprovisioned_fraction": s.underprovisioned_fraction,
                       "underprovisioned_minutes_per_week": s.underprovisioned_seconds / 60 / weeks,
                       "oracle_ratio": s.instance_hours / s.oracle_instance_hours,
                       "forecast_fallback_share": planner.fallbacks / max(planner.plans, 1)},
        "oracle_instance_hours": s.oracle_instance_hours,
        "frontier_instance_hours_at_same_risk": ref,
        "iso_risk_cost_ratio": s.instance_hours / ref,
    }


def markdown(results: list[dict]) -> str:
    head = ("| workload | cpu 60% | cpu 70% | cpu 80% | cpu 90% | predictive | frontier at same risk | "
            "**ratio** | × oracle | short min/week |\n|---|---|---|---|---|---|---|---|---|---|\n")
    rows = []
    for r in results:
        cells = [f"{x['instance_hours']:.0f} h / {100 * x['underprovisioned_fraction']:.3f}%" for x in r["reactive"]]
        p = r["predictive"]
        ok = "✓" if r["iso_risk_cost_ratio"] <= 0.90 else "✗"
        rows.append(f"| {r['workload']} | " + " | ".join(cells) +
                    f" | {p['instance_hours']:.0f} h / {100 * p['underprovisioned_fraction']:.3f}% | "
                    f"{r['frontier_instance_hours_at_same_risk']:.0f} h | **{r['iso_risk_cost_ratio']:.3f}** {ok} | "
                    f"{p['oracle_ratio']:.2f} | {p['underprovisioned_minutes_per_week']:.1f} |")
    return head + "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--markdown", help="write the table here")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--plot", help="write a cost/risk plot of every workload to this PNG")
    ap.add_argument("--margin-quantile", type=float,
                    help="replace the example policy's predictive.margin_quantile (e.g. 0.99)")
    ap.add_argument("--policy", type=Path, default=DEFAULT_POLICY,
                    help="the predictive policy to measure (default: examples/predictive/policy.yaml)")
    args = ap.parse_args()
    results = []
    for name in args.workloads.split(","):
        if WORKLOADS[name][0] == "trace" and not (TRACES / WORKLOADS[name][1]).exists():
            print(f"{name}: trace not found under {TRACES}", file=sys.stderr)
            continue
        r = run_workload(name, args.margin_quantile, args.policy)
        results.append(r)
        print(f"{name:<20} ratio {r['iso_risk_cost_ratio']:.3f}  predictive "
              f"{r['predictive']['instance_hours']:.0f} h / {100 * r['predictive']['underprovisioned_fraction']:.3f}%  "
              f"frontier " + "  ".join(f"{x['target']}%: {x['instance_hours']:.0f} h / "
                                       f"{100 * x['underprovisioned_fraction']:.3f}%" for x in r["reactive"])
              + f"  fallback {100 * r['predictive']['forecast_fallback_share']:.1f}% of plans  ({r['seconds']} s)",
              flush=True)
    table = markdown(results)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if args.plot and results:
        plot(results, args.plot)
    return 0


def plot(results: list[dict], path: str) -> None:
    """Instance-hours against under-provisioned time: the reactive frontier
    (cpu 60 → 90%) as a line, the predictive policy as a point."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.6), squeeze=False)
    for ax, r in zip(axes[0], results):
        fx = [100 * x["underprovisioned_fraction"] for x in r["reactive"]]
        cx = [x["instance_hours"] for x in r["reactive"]]
        ax.plot(fx, cx, "o-", color="tab:blue", label="kubernetes, cpu 60–90%")
        for x, f, c in zip(r["reactive"], fx, cx):
            ax.annotate(f"{x['target']}%", (f, c), textcoords="offset points", xytext=(4, 4), fontsize=8)
        p = r["predictive"]
        ax.plot([100 * p["underprovisioned_fraction"]], [p["instance_hours"]], "*", ms=14, color="tab:red",
                label=f"predictive (ratio {r['iso_risk_cost_ratio']:.3f})")
        ax.axhline(r["oracle_instance_hours"], color="grey", ls=":", label="oracle")
        ax.set_title(r["workload"])
        ax.set_xlabel("under-provisioned time, %")
        ax.set_ylabel("instance-hours")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
