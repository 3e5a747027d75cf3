"""``scalebridge demo``, part 2: the five semantics on the built-in flash crowd.

The example policy (CPU utilization target 60 %, 1..200 members) replays a
6-hour flash crowd (a baseline of 100 requests/s surging tenfold within two
minutes, then decaying with a 30-minute half-life) on members serving 10
requests/s each that take 60 s to start. Prints the score table, writes the
plot and the scores to ``output_dir``. A semantics that is not registered is
skipped with a one-line note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["DEMO_POLICY", "run_simulation_demo"]

DEMO_POLICY = """\
name: web
min_replicas: 1
max_replicas: 200
metrics:
  - type: resource
    name: cpu
    target:
      type: Utilization
      average_utilization: 60
"""
"""The policy of examples/simulate/policy.yaml (used when the file is not around)."""

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "simulate" / "policy.yaml"
WORKLOAD = "flash_crowd"
CAPACITY = 10.0      # requests/s one member serves
STARTUP = 60.0       # seconds from request to ready
SEED = 0


def _policy():
    from ..policyfile import load_policy_file, parse_policy_text

    if EXAMPLE.is_file():
        return load_policy_file(EXAMPLE), str(EXAMPLE.relative_to(EXAMPLE.parents[2]))
    return parse_policy_text(DEMO_POLICY, "<demo policy>"), "the embedded demo policy"


def policy_summary(policy: Any) -> str:
    """What a policy scales on, in one line, for a person: its target metrics, its threshold
    rules (its own and its profiles') and its bounds — so that a demo section says which policy
    it runs and why a semantics reading only rules (azure) or only metrics does what it does."""
    parts = []
    for m in policy.metrics or ():
        t = m.target
        if t is not None and t.type == "Utilization":
            parts.append(f"{m.name} utilization target {t.average_utilization:g} %")
        else:
            parts.append(f"{m.type} metric {m.name}")
    rules = len(policy.rules or ()) + sum(len(p.rules or ()) for p in policy.profiles or ())
    if rules:
        where = " in a profile" if not policy.rules else ""
        parts.append(f"{rules} threshold rule{'s' if rules != 1 else ''}{where} (what azure scales on)")
    else:
        parts.append("no threshold rules (azure, which scales on rules only, never scales on it)")
    lo = policy.min_replicas if policy.min_replicas is not None else "?"
    return f"{', '.join(parts)}; {lo}–{policy.max_replicas} members"


def run_simulation_demo(console: Any, output_dir: str = "out") -> int:
    """Compare the five semantics on the flash crowd; 0 when at least one ran."""
    try:
        return _demo(console, Path(output_dir))
    except Exception as e:  # the demo reports, it never crashes
        console.print(f"[red]simulation demo failed:[/red] {type(e).__name__}: {e}")
        return 1


def _demo(console: Any, out: Path) -> int:
    from ..engine import builtin_semantics
    from .cli import print_table, write_output
    from .fleet import FleetModel, Startup
    from .batch import compare, registered_semantics
    from .scenario import load_workload

    policy, where = _policy()
    workload = load_workload(workload=WORKLOAD, seed=SEED, unit="requests/s")
    model = FleetModel(capacity=CAPACITY, startup=Startup("constant", STARTUP), seed=SEED)
    registered = set(registered_semantics())
    names = [n for n in builtin_semantics() if n in registered]
    missing = [n for n in builtin_semantics() if n not in registered]
    console.print(f"[bold]Replay:[/bold] policy {policy.name or 'web'!r} of {where} — not the main job's: "
                  f"{policy_summary(policy)} — on the built-in {WORKLOAD} workload "
                  f"(6 h, 100 → 1,000 requests/s), {CAPACITY:g} requests/s per member, {STARTUP:g} s startup")
    if missing:
        console.print(f"[yellow]not registered yet, skipped:[/yellow] {', '.join(missing)}")
    if not names:
        console.print("[red]no semantics registered: nothing to simulate[/red]")
        return 1
    result = compare([(policy.name or "web", policy)], names, workload.load, model,
                     start_time=workload.start_time, workload=workload.describe())
    for s in result.skipped:
        console.print(f"[yellow]skipped {s['semantics']}:[/yellow] {s['reason']}")
    if not result.results:
        return 1
    print_table(result, workload, console)   # with the note on any semantics that never scaled
    out.mkdir(parents=True, exist_ok=True)
    write_output(result, str(out / "simulation.json"))
    try:
        from .plot import plot_comparison
    except ImportError:
        console.print("plot skipped: matplotlib is not installed (pip install 'scalebridge[plot]')")
    else:
        plot_comparison(result, out / "simulation.png", unit=workload.unit,
                        title="Flash crowd, CPU target 60 %: ready members per semantics vs the oracle")
        console.print(f"plot: {out / 'simulation.png'}")
    console.print(f"scores: {out / 'simulation.json'}  (how to read them: docs/simulation.md)")
    console.print("the same from the command line: [bold]scalebridge compare examples/simulate/policy.yaml "
                  f"--workload {WORKLOAD} --capacity {CAPACITY:g} --startup {STARTUP:g} --plot out/simulation.png[/bold]\n")
    return 0
