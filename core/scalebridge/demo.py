"""``scalebridge demo``: the main job on the embedded default, no cloud account.

1. A decision table with an expected number per row (4 replicas, CPU target 60%,
   min 2, max 8: ``ceil(4 × u / 60)`` within [2, 8]) piped
   through ``scalebridge decide --semantics kubernetes`` as JSON Lines, printed
   with the raw formula and the applied number.
2. The main job: one policy carried out on five simulated fleets, each decided
   with a different provider's semantics, by ``scalebridge run --clock virtual``
   on ``examples/run/demo.yaml`` — a live progress display on a terminal, then a
   table of what each target did, checked sync for sync against
   ``scalebridge simulate`` on the same policy, load and fleet.
3. The five semantics compared on the built-in flash-crowd workload (when the
   simulator is available): the score table and a plot.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


RUN_CONFIG = Path(__file__).resolve().parents[2] / "examples" / "run" / "demo.yaml"
RUN_UNTIL = "6h"


def _policies_shown(spec: dict, where: object) -> str:
    """``policy 'web' of examples/run/demo.yaml (cpu utilization target 60 %, …)``: the policy (or
    policies) the run configuration's targets use, named with what each scales on."""
    from .engine import load_policy
    from .simulator.demo import policy_summary

    named = spec.get("policies") or {}
    used = sorted({t.get("policy") for t in spec.get("targets", ()) if isinstance(t.get("policy"), str)})
    shown = []
    for name in used:
        raw = named.get(name)
        try:
            summary = policy_summary(load_policy(raw)) if isinstance(raw, dict) else "from its file"
        except Exception:   # the run reports a bad policy itself
            summary = "see the configuration"
        shown.append(f"policy {name!r} of {where} ({summary})")
    return "; ".join(shown) if shown else "one policy"


def run_controller_demo(console: Console, config: Path = RUN_CONFIG, until: str = RUN_UNTIL) -> bool:
    """``scalebridge run CONFIG --clock virtual --until UNTIL --audit -`` in a
    subprocess (a fresh state file): its audit records drive a progress bar per
    target on a terminal; then one row per target, and whether its desired sizes
    are, sync for sync, those ``simulate`` gives on its policy, load and fleet."""
    import yaml

    from .units import parse_duration

    if not config.is_file():
        console.print(f"[yellow]controller demo skipped:[/yellow] {config} is not there")
        return True
    spec = yaml.safe_load(config.read_text(encoding="utf-8"))
    targets = spec["targets"]
    period = float(spec.get("sync_period_seconds", 15))
    syncs = int(round(parse_duration(until) / period))
    shown = config.relative_to(config.parents[2]) if config.is_relative_to(RUN_CONFIG.parents[2]) else config
    command = ["run", str(shown), "--clock", "virtual", "--until", until, "--audit", "-"]
    console.print(f"[bold]The main job:[/bold] {_policies_shown(spec, shown)}, {len(targets)} simulated fleets, "
                  "each decided with another provider's semantics, carried out by the controller on its virtual "
                  "clock:")
    console.print(f"[bold]scalebridge {' '.join(command)}[/bold]")
    records: dict[str, list[dict]] = {t["name"]: [] for t in targets}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="scalebridge-demo-") as tmp:
        argv = [sys.executable, "-m", "scalebridge.cli", "run", str(config), "--clock", "virtual", "--until", until,
                "--audit", "-", "--state", str(Path(tmp) / "state.db"), "--log-format", "json"]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            _follow(console, proc, records, syncs)
            stderr = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0:
            last = stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
            console.print(f"[red]scalebridge run failed:[/red] {last[0]}")
            return False
    elapsed = time.perf_counter() - started
    replayed = _replayed(spec, config)
    t = Table(title=f"What the controller did — {until} of simulated time, a sync every {period:g} s",
              title_justify="left")
    for col in ("target", "semantics", "syncs", "scale actions", "peak", "final", "member-hours",
                "= simulate"):
        t.add_column(col, justify="left" if col in ("target", "semantics") else "right")
    ok = True
    for target in targets:
        name = target["name"]
        recs = records[name]
        desired = [r["desired_replicas"] for r in recs]
        failed = [r for r in recs if r["action"] not in ("applied", "unchanged")]
        same = replayed.get(name)
        match = same is not None and same == desired and not failed
        ok &= match
        t.add_row(name, target.get("semantics", "—"), f"{len(recs):,}",
                  str(sum(r["action"] == "applied" for r in recs)),
                  str(max(desired, default=0)), str(desired[-1] if desired else "—"),
                  f"{sum(desired) * period / 3600:,.1f}",
                  "[green]✓[/green]" if match else "[red]✗[/red]" if same is not None else "—")
    console.print(t)
    note = f"{sum(len(r) for r in records.values()):,} decisions"
    if console.is_terminal:   # wall-clock time only where nobody records the output
        note += f" in {elapsed:.1f} s"
    console.print(f"{note}; member-hours: the desired size summed over the syncs. "
                  "= simulate: every sync's desired size is the one `scalebridge simulate` gives on the same "
                  "policy, load and fleet\n")
    return ok


def _follow(console: Console, proc: subprocess.Popen, records: dict[str, list[dict]], syncs: int) -> None:
    """Read the audit records as the controller writes them; on a terminal, a bar per target."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    stream = proc.stdout
    assert stream is not None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[size]}"), console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        tasks = {name: bar.add_task(f"{name:<20}", total=syncs, size="") for name in records}
        for n, line in enumerate(stream, start=1):
            try:
                rec = json.loads(line)
            except ValueError:   # the audit is JSON Lines: say what is not, never skip it silently
                console.print(f"[yellow]audit line {n} is not a JSON record, left out:[/yellow] {line.strip()[:120]!r}")
                continue
            if not isinstance(rec, dict):
                console.print(f"[yellow]audit line {n} is not a JSON object, left out:[/yellow] {line.strip()[:120]!r}")
                continue
            name = rec.get("target")
            if name not in records:
                continue
            records[name].append(rec)
            bar.update(tasks[name], advance=1, size=f"{rec.get('desired_replicas')} members")


def _replayed(spec: dict, config: Path) -> dict[str, list[int]]:
    """Each target's desired size at each sync tick, replayed by ``simulate`` on the
    target's policy, load and fleet (the sim provider reads its ``ref``)."""
    from . import registry
    from .engine import load_policy
    from .simulator import simulate

    out: dict[str, list[int]] = {}
    factory = registry.provider_factory("sim")
    for target in spec["targets"]:
        body = target["policy"]
        if isinstance(body, str) and body in (spec.get("policies") or {}):
            body = spec["policies"][body]
        if isinstance(body, str):
            from .policyfile import load_policy_file
            policy = load_policy_file(config.parent / body)
        else:
            policy = load_policy(body)
        sim = factory().target(target["ref"])
        run = simulate(policy, sim.workload.load, sim.model, semantics=target.get("semantics"),
                       start_time=sim.start_time)
        out[target["name"]] = run.desired[::sim.model.sync_ticks].tolist()
    return out


def run_demo(args) -> int:
    console = Console(width=max(110, Console().width))
    ok = run_seed_table(console)
    if not getattr(args, "quick", False):
        ok &= run_controller_demo(console)
        try:
            from .simulator.demo import run_simulation_demo
        except ImportError:
            pass
        else:
            ok &= run_simulation_demo(console, args.output_dir) == 0
    return 0 if ok else 1
