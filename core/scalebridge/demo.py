"""``scalebridge demo``: the main job on the embedded default, no cloud account.

1. A decision table with an expected number per row (4 replicas, CPU target 60%,
   min 2, max 8: ``ceil(4 × u / 60)`` within [2, 8]) piped
   through ``scalebridge decide --semantics kubernetes`` as JSON Lines, printed
   with the raw formula and the applied number.
2. The five semantics compared on the built-in flash-crowd workload (when the
   simulator is available): the score table and a plot.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys

from rich.console import Console
from rich.table import Table

SEED_ROWS = [90, 30, 180, 55, 0]      # average CPU utilization, percent
SEED_EXPECTED = [6, 2, 8, 4, 2]       # the table's "expected number" column
NOW = 1767225600.0


def seed_request(utilization: int, tolerance: float | None) -> dict:
    """4 ready pods requesting 1 CPU each, all at ``utilization`` percent."""
    policy: dict = {"name": "seed-table", "min_replicas": 2, "max_replicas": 8,
                    "metrics": [{"type": "resource", "name": "cpu",
                                 "target": {"type": "Utilization", "average_utilization": 60}}]}
    if tolerance is not None:
        # the table's idealized case: no stabilization and no tolerance
        policy["tolerance"] = tolerance
        policy["behavior"] = {"scale_down": {"stabilization_window_seconds": 0}}
    else:
        policy["behavior"] = {"scale_down": {"stabilization_window_seconds": 0}}
    members = [{"name": f"web-{i}", "phase": "Running", "ready": True,
                "start_time": NOW - 3600, "ready_transition_time": NOW - 3500,
                "requests": {"cpu": "1"}} for i in range(4)]
    usage = f"{utilization * 10}m"
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": 4, "policy": policy,
            "observations": {"members": members,
                             "metrics": {"cpu": {"members": {m["name"]: usage for m in members},
                                                 "timestamp": NOW - 15, "window": 60}}}}


def run_seed_table(console: Console) -> bool:
    ok = True
    for title, tol in (("tolerance 0, scale-down stabilization 0 (the seed's idealized case)", 0),
                       ("default tolerance 0.1, scale-down stabilization 0", None)):
        lines = "".join(json.dumps(seed_request(u, tol)) + "\n" for u in SEED_ROWS)
        proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", "decide", "--semantics", "kubernetes"],
                              input=lines, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            console.print(f"[red]scalebridge decide failed:[/red] {proc.stderr.strip()}")
            return False
        responses = [json.loads(l) for l in proc.stdout.splitlines()]
        t = Table(title=f"Seed decision table — {title}", title_justify="left")
        for col in ("replicas, utilization", "raw: ceil(4×u/60)", "HPA raw proposal", "applied", "reason", "seed expects"):
            t.add_column(col, justify="right" if col != "reason" else "left")
        for u, resp, expect in zip(SEED_ROWS, responses, SEED_EXPECTED):
            raw = math.ceil(4 * u / 60)
            applied = resp["desired_replicas"]
            ok &= applied == expect
            mark = "[green]✓[/green]" if applied == expect else "[red]✗[/red]"
            t.add_row(f"4, {u}%", f"ceil({4 * u / 60:.2f}) = {raw}", str(resp["metrics"][0]["replicas"]),
                      str(applied), resp["reason"], f"{expect} {mark}")
        console.print(t)
    console.print("piped as JSON Lines through: [bold]scalebridge decide --semantics kubernetes[/bold]\n")
    return ok


def run_demo(args) -> int:
    console = Console(width=max(110, Console().width))
    ok = run_seed_table(console)
    if not getattr(args, "quick", False):
        try:
            from .simulator.demo import run_simulation_demo
        except ImportError:
            pass
        else:
            ok &= run_simulation_demo(console, args.output_dir) == 0
    return 0 if ok else 1
