"""Forecast accuracy on the shared traces, and the per-call cost of each model.

    python benchmarks/forecast_accuracy.py                 # MAPE at a 2-minute lead
    python benchmarks/forecast_accuracy.py --lead 120 --lead 600 --guard
    python benchmarks/forecast_accuracy.py --speed         # µs per observe+forecast

Traces are read where they live (``<repo>/../shared/traces/*.csv``, header
``timestamp,value``, one row a minute); nothing is copied into the repository.
Every model is scored on the same forecasts: those made from ``--score-from-days``
(default 3, the seasonal model's warm-up, after Compute Engine) to the end.
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import numpy as np

from scalebridge.forecasting import MODELS, forecast_series, guarded, make_forecaster, mape

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TRACES = os.path.join(REPO_ROOT, "..", "shared", "traces")
DAY = 86400.0


def load_traces(directory: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (times, values) for every ``*.csv`` in ``directory``."""
    traces = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.csv"))):
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        traces[os.path.splitext(os.path.basename(path))[0]] = (data[:, 0], data[:, 1])
    return traces


def pct(x: float) -> str:
    return "-" if np.isnan(x) else f"{x:.1%}"


def scored_mask(t: np.ndarray, lead: float, score_from_days: float) -> np.ndarray:
    return (t >= t[0] + score_from_days * DAY) & (t + lead <= t[-1])


def accuracy(traces, models: list[str], leads: list[float], score_from_days: float) -> str:
    header = "| trace | lead | " + " | ".join(models) + " |"
    lines = [header, "|" + "---|" * (len(models) + 2)]
    for name, (t, v) in traces.items():
        for lead in leads:
            keep = scored_mask(t, lead, score_from_days)
            actual = np.interp(t[keep] + lead, t, v)
            row = [mape(forecast_series(m, t, v, lead)[keep], actual) for m in models]
            best = min(row)
            cells = [f"**{pct(x)}**" if x == best else pct(x) for x in row]
            lines.append(f"| {name} | {lead:g}s | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def guard_report(traces, models: list[str], lead: float, score_from_days: float) -> str:
    """Share of forecasts the guard flags, and MAPE of the trusted vs flagged ones."""
    lines = [
        "| trace | model | flagged | MAPE trusted | MAPE flagged | top reason |",
        "|---|---|---|---|---|---|",
    ]
    for name, (t, v) in traces.items():
        keep = scored_mask(t, lead, score_from_days)
        actual = np.interp(t + lead, t, v)
        for m in models:
            g = guarded(m)
            pred = np.empty(t.shape[0])
            ok = np.empty(t.shape[0], dtype=bool)
            reasons: dict[str, int] = {}
            for i, (ti, vi) in enumerate(zip(t.tolist(), v.tolist())):
                g.observe(ti, vi)
                f = g.forecast(ti, lead)
                pred[i], ok[i] = f.value, f.ok
                if not f.ok and keep[i]:
                    key = f.reason.split(":", 1)[1].split("(")[0].strip()
                    reasons[key] = reasons.get(key, 0) + 1
            top = max(reasons, key=reasons.get) if reasons else "-"
            flagged = 1.0 - ok[keep].mean()
            lines.append(
                f"| {name} | {m} | {flagged:.1%} | {pct(mape(pred[keep & ok], actual[keep & ok]))} | "
                f"{pct(mape(pred[keep & ~ok], actual[keep & ~ok]))} | {top} |"
            )
    return "\n".join(lines)


def speed(models: list[str], days: float = 30.0, tick: float = 15.0, lead: float = 120.0, repeat: int = 3) -> str:
    """Cost of one observe + one forecast, averaged over a ``days``-long replay
    at ``tick`` seconds; the best of ``repeat`` replays (each on a fresh model)."""
    n = int(days * DAY / tick)
    t = (1.7e9 + np.arange(n) * tick).tolist()
    rng = np.random.default_rng(0)
    phase = 2 * np.pi * np.arange(n) * tick / DAY
    v = (1000 + 600 * np.sin(phase) + rng.normal(0, 30, n)).tolist()
    lines = ["| model | plain µs/call | guarded µs/call |", "|---|---|---|"]
    for m in models:
        cells = []
        for build in (make_forecaster, guarded):
            best = float("inf")
            for _ in range(repeat):
                model = build(m)
                observe, forecast = model.observe, model.forecast
                start = time.perf_counter()
                for ti, vi in zip(t, v):
                    observe(ti, vi)
                    forecast(ti, lead)
                best = min(best, time.perf_counter() - start)
            cells.append(f"{best / n * 1e6:.1f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    title = f"{n} observe+forecast calls ({days:g} days at {tick:g} s ticks, lead {lead:g} s), best of {repeat}"
    return title + "\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default=DEFAULT_TRACES, help="directory of timestamp,value CSVs")
    parser.add_argument("--lead", type=float, action="append", help="lead in seconds (repeatable; default 120)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated registry names")
    parser.add_argument("--score-from-days", type=float, default=3.0)
    parser.add_argument("--guard", action="store_true", help="also report how often the guard falls back")
    parser.add_argument("--speed", action="store_true", help="only time the models (no traces needed)")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    if args.speed:
        print(speed(models))
        return 0
    traces = load_traces(args.traces)
    if not traces:
        print(f"no *.csv traces in {os.path.abspath(args.traces)}", file=sys.stderr)
        return 1
    leads = args.lead or [120.0]
    print(f"MAPE at lead, forecasts made from day {args.score_from_days:g} on (best in bold)\n")
    print(accuracy(traces, models, leads, args.score_from_days))
    if args.guard:
        print(f"\nGuard at lead {leads[0]:g}s (default thresholds)\n")
        print(guard_report(traces, models, leads[0], args.score_from_days))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
