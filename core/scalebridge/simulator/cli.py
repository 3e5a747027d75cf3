"""``scalebridge simulate`` and ``scalebridge compare``: replay a load through
policies under several semantics, score them against the oracle.

Bad input never shows a traceback: a trace problem exits 2 with the
TraceError line (file and line number), a policy file error with the
PolicyError lines, a bad flag or scenario key with one line.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any, Optional

from ..cliargs import (DURATION_ZERO_OR_MORE, EXIT_BAD_INPUT, OUTPUT_FORMATS, deprecated, number, parsed,
                       say as _say)
from ..errors import PolicyError, ScalebridgeError
from .fleet import FleetModel
from .batch import compare, registered_semantics
from .comparison import Comparison
from .scenario import Scenario, ScenarioError, Workload, load_scenario, parse_scale
from .traces import FILL_MODES, TraceError
from .workloads import WORKLOADS

__all__ = ["add_simulate_commands", "cmd_simulate", "write_output", "write_timeline", "print_table"]

PROGRESS_MIN_TICKS = 20_000   # show a progress bar (on a terminal) from this many simulated ticks
#: without --jobs, runs of fewer simulated ticks in all (about a second of decisions) stay in
#: this process: starting workers and sending the series back would cost more than it saves
PARALLEL_MIN_TICKS = 50_000

_positive = number(float, lambda v: 0 < v < float("inf"), "a positive number")
_price = number(float, lambda v: 0 <= v < float("inf"), "a price of 0 or more")
_scale = parsed(parse_scale)
_jobs = number(int, lambda v: v >= 1, "a number of processes, 1 or more (1: in this process)")


def _param(text: str) -> tuple[str, Any]:
    import yaml
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key.strip(), yaml.safe_load(value)
    except yaml.YAMLError:
        return key.strip(), value


def _add_arguments(p: argparse.ArgumentParser, several: bool) -> None:
    if several:
        p.add_argument("policies", nargs="*", metavar="POLICY", help="policy files (YAML); or `policies:` in --scenario")
    else:
        p.add_argument("policies", nargs="?", metavar="POLICY", help="a policy file (YAML); or `policies:` in --scenario")
    src = p.add_argument_group("load (one of --trace, --workload, or a --scenario file that names one)")
    src.add_argument("--trace", metavar="FILE", help="a 'timestamp,value' CSV, resampled to the tick")
    src.add_argument("--workload", metavar="NAME", choices=sorted(WORKLOADS),
                     help=f"a seeded built-in generator: {', '.join(sorted(WORKLOADS))}")
    src.add_argument("--scenario", metavar="FILE", help="a YAML scenario file; flags override its keys")
    src.add_argument("--scale", type=_scale, metavar="X",
                     help="multiply trace values by X (a number or a fraction: 1/60 turns per-minute counts into per-second rates)")
    src.add_argument("--unit", metavar="LABEL", help="the load's unit after --scale, for display (e.g. requests/s)")
    src.add_argument("--fill", choices=FILL_MODES, help="repair gaps in the trace instead of rejecting it")
    src.add_argument("--offset", type=DURATION_ZERO_OR_MORE, metavar="DURATION", help="skip this much of the load's start (90, 5m, 2d)")
    src.add_argument("--duration", type=DURATION_ZERO_OR_MORE, metavar="DURATION", help="replay only this much of the load")
    src.add_argument("--seed", type=int, metavar="N", help="seed of the workload's noise and of startup draws (default 0)")
    src.add_argument("--peak", type=_positive, metavar="X", help="a generated workload's nominal peak (default 1000); for a trace, scale it so "
                          "its replayed peak is X (instead of --scale)")
    src.add_argument("--param", type=_param, action="append", default=[], metavar="KEY=VALUE",
                     help="a generator parameter, e.g. surge=20 or at_seconds=3600 (repeatable)")

    fleet = p.add_argument_group("fleet")
    fleet.add_argument("--capacity", type=_positive, metavar="C", help="the load one member serves, in the load's unit (required)")
    fleet.add_argument("--startup", metavar="SECONDS",
                       help="request to ready: seconds, or uniform:LOW,HIGH or normal:MEAN,SD (seeded) (required)")
    fleet.add_argument("--tick", type=DURATION_ZERO_OR_MORE, metavar="SECONDS", help="simulation grid (default 15)")
    fleet.add_argument("--sync-period", type=DURATION_ZERO_OR_MORE, metavar="SECONDS",
                       help="the autoscaler runs every this often, a multiple of the tick (default: the multiple nearest 15)")
    fleet.add_argument("--metric-lag", type=DURATION_ZERO_OR_MORE, metavar="SECONDS", help="metric collection lag (default 15)")
    fleet.add_argument("--metric-window", type=DURATION_ZERO_OR_MORE, metavar="SECONDS",
                       help="per-member samples average this long (default: one tick)")
    fleet.add_argument("--series-grain", type=DURATION_ZERO_OR_MORE, metavar="SECONDS",
                       help="grain of the group series rules read (default 60)")
    fleet.add_argument("--drain", type=DURATION_ZERO_OR_MORE, metavar="SECONDS", help="a removed member serves this long before it goes (default 0)")
    fleet.add_argument("--initial", type=int, metavar="N",
                       help="members ready at the start (default: what the policy holds for the first tick's load)")

    run = p.add_argument_group("runs and output")
    run.add_argument("--semantics", "-s", metavar="LIST",
                     help="comma-separated semantics, or 'all' (kubernetes,gce,azure,aws,scalebridge and any plugin's); "
                          + ("default: all" if several else "default: the policy's, else scalebridge"))
    run.add_argument("--price", type=_price, metavar="PER_HOUR", help="price of one instance-hour: adds cost columns")
    run.add_argument("--output", "-o", metavar="FORMAT", default=None,
                     help="the scores on stdout: text (the table, the default), json (the whole comparison) or csv "
                          "(one row per run); a file is --out")
    run.add_argument("--out", metavar="FILE.json|FILE.csv", help="also write the scores to a file: JSON (the whole "
                                                                 "comparison) or CSV (one row per run), by its suffix")
    run.add_argument("--timeline", metavar="FILE.csv", help="write per-tick load, need, oracle and each run's sizes")
    run.add_argument("--plot", metavar="FILE.png", help="write the comparison plot (needs matplotlib)")
    run.add_argument("--title", help="the plot's title")
    run.add_argument("--jobs", "-j", dest="jobs", type=_jobs, metavar="N",
                     help="run the (policy, semantics) pairs in N worker processes, each pair a replay of its "
                          "own; the output is the same as with 1, which runs them one after another in this "
                          "process (default: the CPUs this process may use; 1 for a replay of fewer than "
                          f"{PARALLEL_MIN_TICKS:,} ticks in all)")
    run.add_argument("--workers", dest="old_jobs", type=_jobs, metavar="N",
                     help="deprecated: --jobs (--workers is run's targets synced at once)")
    run.add_argument("--scheduler", metavar="ADDRESS",
                     help="run pairs on the Dask cluster at ADDRESS (tcp://host:8786; needs scalebridge[dask])")
    run.add_argument("--quiet", "-q", action="store_true", help="no table on stdout")
    if several:
        run.add_argument("--frontier", action="store_true",
                         help="also run the reactive frontier (kubernetes at CPU targets 60, 70, 80, 90%% within "
                              "the first policy's bounds) and report every run's iso-risk cost ratio against it")


def add_simulate_commands(sub: Any) -> None:
    """Register ``simulate`` and ``compare`` on the main parser's subparsers."""
    s = sub.add_parser(
        "simulate", help="replay a trace or workload through a policy; score it against the oracle",
        description="Replay a load trace (or a built-in workload) through a policy under one or more semantics, "
                    "on a simulated fleet (capacity per member, startup time, metric lag), and score cost and "
                    "shortfall against the clairvoyant oracle. Exit 2 on a bad trace, policy or flag.")
    _add_arguments(s, several=False)
    s.set_defaults(func=cmd_simulate, several=False)
    c = sub.add_parser(
        "compare", help="simulate with several semantics (default: all) and policy files side by side",
        description="Like simulate, with every semantics by default and any number of policy files; "
                    "each (policy, semantics) pair runs on the same load.")
    _add_arguments(c, several=True)
    c.set_defaults(func=cmd_simulate, several=True)


def _semantics(spec: Optional[list[str] | str], several: bool, policy_semantics: Optional[str]) -> list[str]:
    from ..engine import DEFAULT_SEMANTICS, builtin_semantics
    if spec is None:
        if not several:
            return [policy_semantics or DEFAULT_SEMANTICS]
        spec = "all"   # every registered semantics, plugins' included, as --help says
    names = [x.strip() for x in spec.split(",")] if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for name in names:
        if not name:
            continue
        if name == "all":
            for extra in list(builtin_semantics()) + registered_semantics():
                if extra not in out:
                    out.append(extra)
        elif name not in out:
            out.append(name)
    if not out:
        raise ScenarioError("--semantics names no semantics")
    return out


def _load_policies(paths: list[str], command: str = "simulate"):
    from ..engine import read_policy_file
    out = []
    seen: set[str] = set()
    for path in paths:
        warnings: list[str] = []
        policy = read_policy_file(path, warnings)
        for line in warnings:
            _say(command, line)
        label = policy.name or Path(path).stem
        base, i = label, 2
        while label in seen:
            label, i = f"{base}#{i}", i + 1
        seen.add(label)
        out.append((label, policy))
    return out


def _output_flags(args: argparse.Namespace) -> None:
    """``-o/--output`` is the format on stdout and ``--out FILE`` a file, as in every
    command; the former spellings — ``--output FILE.json|FILE.csv``, ``--output -`` (JSON
    on stdout), ``--workers N`` — still work this release, each with its deprecation line."""
    command = args.command
    if args.old_jobs is not None:
        deprecated(command, "--workers", "use --jobs N (or -j N): processes; --workers is run's targets synced "
                                         "at once")
        args.jobs = args.jobs if args.jobs is not None else args.old_jobs
    out = args.output
    if out is None or out in OUTPUT_FORMATS:
        args.output = out or "text"
        return
    if out == "-":
        deprecated(command, "--output -", "use -o json (-o/--output is the format on stdout: text, json, csv)")
        args.output = "json"
        return
    if Path(out).suffix.lower() in (".json", ".csv"):
        deprecated(command, f"--output {out}", f"use --out {out} (-o/--output is the format on stdout: "
                                               "text, json, csv)")
        if args.out is None:
            args.out = out
        args.output = "text"
        return
    raise ScenarioError(f"--output {out}: the format on stdout is text, json or csv; a file is --out "
                        "FILE.json|FILE.csv")


def cmd_simulate(args: argparse.Namespace) -> int:
    command = args.command
    try:
        _output_flags(args)
        return _simulate(args)
    except PolicyError as e:
        for line in e.problems:
            print(line, file=sys.stderr)
        return EXIT_BAD_INPUT
    except (TraceError, ScenarioError, ScalebridgeError, ValueError) as e:
        _say(command, str(e))
        return EXIT_BAD_INPUT
    except BrokenPipeError:   # the reader of stdout is gone (`| head`): nothing left to say
        raise
    except OSError as e:
        _say(command, f"{getattr(e, 'filename', None) or ''}: {e.strerror or e}".lstrip(": "))
        return EXIT_BAD_INPUT


def _scenario(args: argparse.Namespace) -> Scenario:
    base = load_scenario(args.scenario) if args.scenario else Scenario()
    params = dict(base.workload_params)
    params.update(dict(args.param))
    return base.override(
        trace=args.trace, workload=args.workload, scale=args.scale, unit=args.unit, fill=args.fill,
        offset=args.offset, duration=args.duration, capacity=args.capacity, startup=args.startup,
        tick=args.tick, sync_period=args.sync_period, metric_lag=args.metric_lag,
        metric_window=args.metric_window, series_grain=args.series_grain, drain=args.drain,
        initial=args.initial, seed=args.seed, workload_seed=args.seed, workload_peak=args.peak,
        workload_params=params or None, price=args.price)


def _simulate(args: argparse.Namespace) -> int:
    command = args.command
    scenario = _scenario(args)
    paths = (args.policies if isinstance(args.policies, list) else [args.policies] if args.policies else []) \
        or scenario.policies
    if not paths:
        raise ScenarioError("give a policy file (POLICY), or `policies:` in --scenario")
    if not args.several and len(paths) > 1:
        raise ScenarioError("simulate takes one policy file; use `scalebridge compare` for several")
    if scenario.trace is None and scenario.workload is None:
        raise ScenarioError("give the load: --trace FILE or --workload NAME (or a --scenario naming one)")
    policies = _load_policies(paths, command)
    model = scenario.fleet_model()
    workload = scenario.load()
    names = _semantics(args.semantics if args.semantics is not None else scenario.semantics, args.several,
                       policies[0][1].semantics)
    if args.out and Path(args.out).suffix.lower() not in (".json", ".csv"):
        raise ScenarioError(f"--out {args.out}: use a .json or .csv file name")
    if args.timeline and Path(args.timeline).suffix.lower() != ".csv":
        raise ScenarioError(f"--timeline {args.timeline}: use a .csv file name")

    for label, policy in policies:
        spec = policy.predictive
        if spec is not None and spec.mode != "Disabled" and spec.capacity_per_replica is not None \
                and float(spec.capacity_per_replica) != float(model.capacity):
            # the planner sizes members of capacity_per_replica; the fleet's hold --capacity
            _say(command, f"note: {label}: predictive.capacity_per_replica is {spec.capacity_per_replica:g} "
                          f"but --capacity is {model.capacity:g}: the planner's members are not the fleet's")
    result = _run(args, policies, names, model, workload, scenario)
    if getattr(args, "frontier", False):
        from .comparison import FRONTIER_SEMANTICS, frontier_policies
        front = frontier_policies(policies[0][1])
        result = result.with_runs_of(_run(args, front, [FRONTIER_SEMANTICS], model, workload, scenario),
                                     frontier=tuple(label for label, _ in front))
    for s in result.skipped:
        _say(command, f"skipped {s['semantics']} ({s['policy']}): {s['reason']}")
    if not result.results:
        hint = f"; registered: {', '.join(registered_semantics()) or 'none'}"
        raise ScenarioError(f"no semantics could run{hint}")
    table = args.output == "text" and not args.quiet
    if table:
        print_table(result, workload)
    elif args.output != "text":
        write_output(result, "-", args.output)
    if args.out:
        write_output(result, args.out)
    if args.timeline:
        write_timeline(result, args.timeline)
    if args.plot:
        try:
            from .plot import plot_comparison
        except ImportError:
            raise ScenarioError("--plot needs matplotlib: pip install 'scalebridge[plot]'") from None
        plot_comparison(result, args.plot, title=args.title or _title(workload, model), unit=workload.unit)
        if table:
            print(f"plot written to {args.plot}")
    return 0


def _title(workload: Workload, model: FleetModel) -> str:
    return (f"{Path(workload.source).name if workload.kind == 'trace' else workload.source}: "
            f"capacity {model.capacity:g} {workload.unit}/member, startup {model.startup.describe()} s")


def _run(args: argparse.Namespace, policies: list, names: list[str], model: FleetModel, workload: Workload,
         scenario: Scenario) -> Comparison:
    total = workload.load.size * len(policies) * len(names)
    jobs = args.jobs
    if jobs is None:
        from .executors import usable_cpus
        jobs = usable_cpus() if total >= PARALLEL_MIN_TICKS else 1
    kwargs = dict(start_time=workload.start_time, settings=scenario.settings or None,
                  price_per_instance_hour=scenario.price, workers=jobs, scheduler=args.scheduler,
                  workload=workload.describe(),
                  # the table's modules imported while the last runs replay, not after
                  idle=_table_modules if args.output == "text" and not args.quiet else None)
    if total < PROGRESS_MIN_TICKS or not sys.stderr.isatty():
        return compare(policies, names, workload.load, model, **kwargs)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())
    # with workers, the bar moves as runs end and refreshes then: without its refresh thread
    # the workers can be forked (executors.start_method)
    parallel = (jobs > 1 and len(policies) * len(names) > 1) or args.scheduler is not None
    with Progress(*columns, console=Console(stderr=True), transient=True, auto_refresh=not parallel) as bar:
        task = bar.add_task(f"simulating {len(policies) * len(names)} run(s)", total=total)

        def advance(ticks: int) -> None:
            bar.advance(task, ticks)
            if parallel:
                bar.refresh()

        return compare(policies, names, workload.load, model, progress=advance, **kwargs)


# -- output -------------------------------------------------------------------------------------


def _fmt(x: Optional[float], digits: int = 1) -> str:
    if x is None:
        return "—"
    if x == float("inf"):
        return "∞"
    return f"{x:,.{digits}f}"


def _compact(x: float) -> str:
    """1,234 / 12.3k / 1.74M: a wide range in a narrow column."""
    if x == float("inf"):
        return "∞"
    if abs(x) < 10_000:
        return f"{x:,.0f}"
    if abs(x) < 1_000_000:
        return f"{x / 1000:,.1f}k"
    return f"{x / 1_000_000:,.2f}M"


def _seconds(x: float) -> str:
    if x < 600:
        return f"{x:.0f} s"
    if x < 7200:
        return f"{x / 60:.0f} min"
    return f"{x / 3600:.1f} h"


def _duration_text(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min"


_DROPPABLE = ("short %", "peak over", "recover", "unserved", "reversals")   # first dropped on a narrow terminal


def _table_modules() -> None:
    import rich.box, rich.console, rich.table   # noqa: E401, F401 (what print_table imports)


def print_table(result: Comparison, workload: Workload, console: Any = None) -> None:
    """The score table (rich), one row per run and the oracle first; on a
    narrow terminal the least essential columns are left out (the JSON
    output has them all)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)   # a pipe or file: do not squeeze the table into 80 columns
    several = len({r.run.policy for r in result.results}) > 1
    price = result.price_per_instance_hour is not None
    frontier = bool(result.frontier)
    headers = ["semantics"] + (["policy"] if several else []) + ["inst-h", "× oracle"] \
        + (["iso-risk"] if frontier else []) + (["cost"] if price else []) \
        + ["short min", "short %", "unserved", "peak over", "actions", "reversals", "recover"]
    rows: list[tuple[list[str], Optional[str], Optional[str]]] = []   # (cells, row style, style of "short min")
    for o in result.oracle_dicts() if not several else result.oracle_dicts()[:1]:
        cells = ["oracle"] + (["—"] if several else []) + [_fmt(o["instance_hours"]), "1.00"]
        cells += ["—"] if frontier else []
        cells += [_fmt(o["cost"], 2)] if price else []
        over = o["peak_overload"]
        cells += [_fmt(o["underprovisioned_seconds"] / 60), _fmt(100 * o["underprovisioned_fraction"], 2),
                  _compact(o["unserved_load"]), "∞" if over is None else f"{100 * over:,.0f} %", "—", "—",
                  _seconds(o["time_to_recover_seconds"])]
        rows.append((cells, "dim", None))
    for r, ratio in zip(result.results, result.iso_risk_ratios()):
        s = r.scores
        cells = [r.run.semantics] + ([r.run.policy] if several else [])
        cells += [_fmt(s.instance_hours), _fmt(s.oracle_ratio, 2)]
        cells += [_fmt(ratio, 3)] if frontier else []
        cells += [_fmt(s.cost, 2)] if price else []
        cells += [_fmt(s.underprovisioned_minutes), _fmt(100 * s.underprovisioned_fraction, 2),
                  _compact(s.unserved_load), "∞" if s.peak_overload == float("inf") else f"{100 * s.peak_overload:,.0f} %",
                  str(s.scaling_actions), str(s.reversals), _seconds(s.time_to_recover_seconds)]
        rows.append((cells, None, "green" if s.underprovisioned_seconds == 0 else "red"))
    keep = list(range(len(headers)))

    def width() -> int:
        return sum(max(len(headers[i]), *(len(c[i]) for c, _, _ in rows)) + 3 for i in keep)

    for name in _DROPPABLE:
        if width() <= console.width:
            break
        keep.remove(headers.index(name))
    title = "Replay scores (lower is better; × oracle ≥ 1 whenever nothing was short"
    title += "; iso-risk: cost over the frontier's at the same short %)" if frontier else ")"
    t = Table(title=title, title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False)
    for i in keep:
        t.add_column(headers[i], justify="left" if i == 0 or headers[i] == "policy" else "right", no_wrap=True)
    short_col = headers.index("short min")
    for cells, style, short in rows:
        shown = [f"[{short}]{cells[i]}[/{short}]" if i == short_col and short else cells[i] for i in keep]
        t.add_row(*shown, style=style)
    m = result.model
    source = Path(workload.source).name if workload.kind == "trace" else workload.source
    unserved = workload.unit[:-2] if workload.unit.endswith("/s") else f"{workload.unit}·s"
    from .oracle import members_needed
    peak_need = int(members_needed(workload.load[[int(workload.load.argmax())]], m.capacity)[0])
    t.caption = (f"unserved in {unserved}. {source}: {workload.load.size:,} ticks of {m.tick_seconds:g} s "
                 f"({_duration_text(workload.duration_seconds)}), peak {workload.load.max():,.4g} {workload.unit} "
                 f"(needs {peak_need:,} members); "
                 f"member capacity {m.capacity:g}, startup {m.startup.describe()} s, "
                 f"metric lag {m.lag_ticks * m.tick_seconds:g} s, sync {m.sync_period_seconds:g} s")
    capped = [o for o in result.oracle_dicts() if o["maximum"] is not None and o["maximum"] < peak_need]
    if capped:
        # every run, the oracle included, is short at the peak: say why, not only that
        t.caption += "".join(f". The peak needs {peak_need:,} members and {o['policy']!r} allows {o['maximum']:,}: "
                             "every run is capped there" for o in capped[:1])
    t.caption_justify = "left"
    console.print(t)
    print_never_scaled(result, console)


_SIGNAL_PARTS = ("metrics:", "rules:", "profiles:", "schedules:", "predictive:")


def print_never_scaled(result: Comparison, console: Any) -> None:
    """A run that never scaled can look cheapest (below the oracle) while it is short:
    say so beside the table, with the reasons it gave every sync (and, when several
    policies ran, under which)."""
    from .. import registry
    several = len({r.run.policy for r in result.results}) > 1
    for r in result.results:
        if r.scores.scaling_actions == 0:
            reasons = ", ".join(f"{k} ×{v}" for k, v in r.run.reasons.items())
            policy = result.policies.get(r.run.policy)
            sem = registry.current().semantics.get(r.run.semantics)
            ignored = [line for line in (sem.obj.ignored_parts(policy) if sem is not None and policy is not None else ())
                       if line.startswith(_SIGNAL_PARTS)]   # a signal it does not read, in its provider's terms
            why = f"; {ignored[0]}" if ignored else ""
            short = (f"; it is short {r.scores.underprovisioned_minutes:,.0f} min, so its low cost is no saving"
                     if r.scores.underprovisioned_seconds > 0 else "")
            under = f" under {r.run.policy}" if several else ""
            console.print(f"[yellow]{r.run.semantics} never scaled{under}[/yellow] ({reasons}){why}{short}")


def write_output(result: Comparison, path: str, fmt: Optional[str] = None) -> None:
    """JSON (the whole comparison) or CSV (one row per run): to the file ``path``, by
    its suffix, or on stdout for ``-`` (``fmt``: json, the default, or csv)."""
    data = result.to_dict()
    if path == "-":
        if fmt == "csv":
            _write_rows(data, sys.stdout)
        else:
            json.dump(data, sys.stdout, indent=2, allow_nan=False)
            sys.stdout.write("\n")
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if Path(path).suffix.lower() == ".json":
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, allow_nan=False)
            f.write("\n")
        return
    with open(path, "w", encoding="utf-8", newline="") as f:
        _write_rows(data, f)


def _write_rows(data: dict, f: Any) -> None:
    rows = data["runs"]
    keys = [k for k in rows[0] if not isinstance(rows[0][k], dict)] if rows else []
    w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if row[k] is None else row[k] for k in keys})


def write_timeline(result: Comparison, path: str) -> None:
    """Per tick: time, load, members needed, the oracle's paid and ready
    members, and each run's desired/paid/ready members."""
    import numpy as np
    from .oracle import members_needed, oracle_ready

    m = result.model
    n = result.load.size
    cols: dict[str, Any] = {"time": result.start_time + np.arange(n) * m.tick_seconds, "load": result.load,
                            "members_needed": members_needed(result.load, m.capacity)}
    if result.oracles:
        paid = next(iter(result.oracles.values()))
        cols["oracle_paid"] = paid
        cols["oracle_ready"] = oracle_ready(paid, startup_seconds=m.startup.minimum, tick_seconds=m.tick_seconds)
    several = len({r.run.policy for r in result.results}) > 1
    for r in result.results:
        name = f"{r.run.policy}/{r.run.semantics}" if several else r.run.semantics
        cols[f"{name}:desired"] = r.run.desired
        cols[f"{name}:paid"] = r.run.paid
        cols[f"{name}:ready"] = r.run.ready
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        columns = [c.tolist() for c in cols.values()]
        w.writerows(zip(*columns))
