"""``scalebridge backtest CONFIG [TARGET…] --start TIME --end TIME``: what each
target's policy would have done over its own history, under each semantics.

Exit 0 when every target was replayed; 1 when any could not be (one line per
such target on stderr, naming the metric and why; the others are still
reported); 2 for bad input (a configuration, a flag, a time).
"""
from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path
from typing import Any, Optional

from ..cliargs import (DURATION_MORE_THAN_ZERO, EXIT_BAD_INPUT, OUTPUT_FORMATS, deprecated, number, parsed,
                       say as _say)
from ..errors import ScalebridgeError
from ..simulator.scenario import parse_scale
from ..simulator.traces import FILL_MODES
from .recorded import parse_history

__all__ = ["add_backtest_command", "cmd_backtest"]

_positive = number(float, lambda v: 0 < v < float("inf"), "a positive number")
_workers = number(int, lambda v: 1 <= v <= 256, "a number of processes from 1 to 256")


def add_backtest_command(sub: Any) -> None:
    b = sub.add_parser(
        "backtest", help="replay a policy on recorded history under every semantics; score it against the oracle "
                         "and what actually happened",
        description="Replay what a policy would have done on its own recorded traffic. CONFIG is a run "
                    "configuration — for each of its targets (or the ones named), read its policy's metric over the "
                    "period from its source (a metric source such as Prometheus, or the provider's monitoring), and "
                    "the size it had where its provider records it — or a policy file, whose metric's history "
                    "--history gives (a timestamp,value CSV: no cloud, no Prometheus). Rebuild the demand as the "
                    "simulator models it; replay it under each semantics on the simulated fleet; report "
                    "instance-hours, time under-provisioned, scale actions, and the ratios to the oracle and to "
                    "what happened. Exit 0 when every target was replayed, 1 when any could not be, 2 for bad "
                    "input. Reference: docs/backtest.md")
    b.add_argument("config", metavar="CONFIG|POLICY",
                   help="a run configuration (YAML), or a policy file back-tested on --history files")
    b.add_argument("targets", nargs="*", metavar="TARGET", help="only these targets (default: every one)")
    b.add_argument("--history", action="append", default=[], type=parsed(parse_history), metavar="METRIC=FILE.csv",
                   help="the recorded history of the policy metric METRIC: a timestamp,value CSV (simulate's "
                        "trace format), read in place of its source (repeatable)")
    b.add_argument("--recorded", metavar="FILE.csv",
                   help="the size the target had, a timestamp,value CSV of member counts: the recorded row and "
                        "×actual")
    b.add_argument("--scale", type=parsed(parse_scale), metavar="X",
                   help="multiply the --history values by X (1/60: counts per minute as a rate per second)")
    b.add_argument("--fill", choices=FILL_MODES, help="repair gaps in the --history and --recorded files instead "
                                                      "of refusing them")
    b.add_argument("--start", metavar="TIME", help="RFC 3339, Unix seconds, or relative to now (-7d, now-7d); "
                                                   "default with --history: where its files start")
    b.add_argument("--end", metavar="TIME", help="RFC 3339, Unix seconds, now, or relative (-1d); default with "
                                                 "--history: where its files end")
    b.add_argument("--semantics", "-s", metavar="LIST",
                   help="comma-separated semantics, or 'all' (default: all, plugins' included)")
    b.add_argument("--capacity", type=_positive, metavar="C",
                   help="the load one member serves, in the demand's unit (a target's backtest.capacity wins)")
    b.add_argument("--startup", metavar="SECONDS",
                   help="request to ready: seconds, or uniform:LOW,HIGH or normal:MEAN,SD (a target's "
                        "backtest.startup wins)")
    b.add_argument("--tick", type=DURATION_MORE_THAN_ZERO, metavar="SECONDS", help="the replay's grid (default 15)")
    b.add_argument("--output", "-o", choices=OUTPUT_FORMATS, default="text", help="the format on stdout")
    b.add_argument("--out", metavar="FILE.json|FILE.csv", help="also write the results to a file (by its suffix)")
    b.add_argument("--plot", metavar="FILE.png", help="each semantics' size against the recorded one (matplotlib)")
    b.add_argument("--timeline", metavar="DIR",
                   help="extension: DIR/TARGET.csv per target, with simulate's --timeline columns and the recorded size")
    b.add_argument("--jobs", "-j", dest="workers", type=_workers, metavar="N",
                   help="replay in N local processes (default: the CPUs), as simulate's and compare's --jobs")
    b.add_argument("--workers", dest="old_workers", type=_workers, metavar="N",
                   help="deprecated: --jobs (--workers is run's targets synced at once)")
    b.add_argument("--scheduler", metavar="ADDRESS",
                   help="replay on the Dask cluster at ADDRESS (tcp://host:8786; needs scalebridge[dask])")
    b.dash_values = frozenset({"--start", "--end"})
    b.set_defaults(func=cmd_backtest)


def _bad(text: str) -> int:
    _say("backtest", text)
    return EXIT_BAD_INPUT


def _unused_flags(args, specs: list, recorded) -> list[str]:
    """A warning for each flag that changes nothing for a target it applies to, naming both."""
    from .history import demand_kind, demand_query
    out = []
    for spec in specs:
        opts = spec.backtest
        if args.capacity is not None:
            if opts is not None and opts.capacity is not None:
                out.append(f"--capacity {args.capacity:g} has no effect on target {spec.name!r}: its "
                           f"backtest.capacity ({opts.capacity:g}) wins")
            else:
                try:
                    q = demand_query(spec, recorded)
                except ScalebridgeError:
                    q = None
                if q is not None and demand_kind(q) == "utilization":
                    out.append(f"--capacity {args.capacity:g} has no effect on target {spec.name!r}: its demand "
                               f"metric {q.name!r} is a utilization (a percent of a member's capacity), so any "
                               "capacity replays the same members")
        if args.startup is not None and opts is not None and opts.startup is not None:
            given = f"{opts.startup:g}" if isinstance(opts.startup, (int, float)) else opts.startup
            out.append(f"--startup {args.startup} has no effect on target {spec.name!r}: its backtest.startup "
                       f"({given}) wins")
    if args.scale is not None and not args.history:
        out.append(f"--scale {args.scale:g} has no effect: it multiplies the --history files' values, and none is "
                   "given")
    return out


def cmd_backtest(args) -> int:
    from ..controller.configfile import ConfigError, is_run_config, load_config, read_yaml
    from ..controller.build import build
    from ..simulator.cli import _semantics
    from ..simulator.fleet import parse_startup
    from ..simulator.scenario import MAX_TICKS
    from ..simulator.traces import TraceError
    from .history import parse_time
    from .recorded import policy_target, read_recorded
    from .run import run_backtest

    if args.old_workers is not None:
        deprecated("backtest", "--workers", "use --jobs N (or -j N): replay processes; --workers is run's "
                                            "targets synced at once")
        args.workers = args.workers if args.workers is not None else args.old_workers
    if args.out and Path(args.out).suffix.lower() not in (".json", ".csv"):
        return _bad(f"--out {args.out}: use a .json or .csv file name")
    try:
        recorded = read_recorded(args.history, args.recorded, args.scale, args.fill)
    except TraceError as e:
        return _bad(str(e))
    except (ScalebridgeError, OSError) as e:
        return _bad(f"{getattr(e, 'filename', None) or ''}: {e.strerror}" if isinstance(e, OSError) else str(e))
    try:
        data, _ = read_yaml(args.config)
        run_config = is_run_config(data)
    except ConfigError:
        run_config = True   # the run configuration's loader says what is wrong with it
    if not run_config and not recorded.metrics:
        try:
            policy_target(args.config, recorded)
        except ScalebridgeError as e:
            for line in getattr(e, "problems", None) or str(e).splitlines():
                _say("backtest", line)
            return EXIT_BAD_INPUT
    now = time.time()
    if args.start is None or args.end is None:
        if not recorded.metrics:
            missing = " and ".join(f for f, v in (("--start", args.start), ("--end", args.end)) if v is None)
            return _bad(f"{missing}: required (the period to replay), unless --history files give it")
        first, last = recorded.span()
    try:
        start = parse_time(args.start, now) if args.start is not None else first
        end = parse_time(args.end, now) if args.end is not None else last
    except ValueError as e:
        return _bad(f"--start/--end: {e}")
    if not end > start:
        return _bad(f"--end ({args.end or _iso(end)}) must be after --start ({args.start or _iso(start)})"
                    + (": the --history files cover no common period" if args.start is None and args.end is None
                       else ""))
    tick = args.tick if args.tick is not None else 15.0
    if (end - start) / tick > MAX_TICKS:
        return _bad(f"the period is more than {MAX_TICKS:,} ticks of {tick:g} s: give a longer --tick")
    if args.startup is not None:
        try:
            parse_startup(args.startup)
        except ValueError as e:
            return _bad(f"--startup: {e}")
    try:
        semantics = _semantics(args.semantics, True, None)
    except ScalebridgeError as e:
        return _bad(str(e))
    runtime = None
    try:
        if run_config:
            runtime = build(load_config(args.config))
            specs = runtime.targets
        else:
            if args.targets:
                return _bad(f"{args.config} is a policy file: it is one target, named after the policy; give no "
                            "TARGET")
            specs = [policy_target(args.config, recorded)]
    except ScalebridgeError as e:
        for line in getattr(e, "problems", None) or str(e).splitlines():
            _say("backtest", line)
        return EXIT_BAD_INPUT
    except OSError as e:
        return _bad(f"{getattr(e, 'filename', None) or args.config}: {e.strerror or e}")
    try:
        if args.targets:
            names = {s.name for s in specs}
            unknown = [n for n in args.targets if n not in names]
            if unknown:
                return _bad(f"no target {unknown[0]!r} in {args.config}; its targets are: "
                            f"{', '.join(s.name for s in specs)}")
            specs = [s for s in specs if s.name in set(args.targets)]
        if recorded.metrics:
            from ..controller.queries import metric_names
            read = {n for s in specs for n in metric_names(s.policy.source)}
            unread = [n for n in recorded.metrics if n not in read]
            if unread:
                return _bad(f"--history {unread[0]}: no target's policy reads a metric {unread[0]!r}; they read "
                            f"{', '.join(sorted(read)) or 'none'}")
        for line in _unused_flags(args, specs, recorded):
            _say("backtest", f"warning: {line}")
        keep = bool(args.plot or args.timeline)
        kwargs = dict(capacity=args.capacity, startup=args.startup, tick=args.tick, workers=args.workers,
                      scheduler=args.scheduler, keep_series=keep, recorded=recorded)
        try:
            if sys.stderr.isatty():
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
                with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TimeRemainingColumn(), console=Console(stderr=True), transient=True) as bar:
                    read_task = bar.add_task("reading history", total=len(specs))
                    rep = bar.add_task("replaying", total=len(specs))
                    result = run_backtest(runtime, specs, start, end, semantics,
                                          progress=lambda phase, n: bar.advance(read_task if phase == "history"
                                                                                else rep, n),
                                          **kwargs)
            else:
                result = run_backtest(runtime, specs, start, end, semantics, **kwargs)
        except ScalebridgeError as e:   # the Dask scheduler cannot be reached
            return _bad(str(e))
    finally:
        if runtime is not None:
            runtime.close()
    if args.output == "json":
        json.dump(result.to_dict(), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.output == "csv":
        write_csv(result, sys.stdout)
    elif result.targets:   # a table of no rows says nothing the lines below do not
        print_text(result)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            if Path(args.out).suffix.lower() == ".json":
                json.dump(result.to_dict(), f, indent=2, allow_nan=False)
                f.write("\n")
            else:
                write_csv(result, f)
    if args.timeline and result.targets:
        write_timelines(result, Path(args.timeline))
    if args.plot and result.targets:
        try:
            from .plot import plot_backtest
        except ImportError:
            return _bad("--plot needs matplotlib: pip install 'scalebridge[plot]'")
        plot_backtest(result, args.plot)
        if args.output == "text":
            print(f"plot written to {args.plot}")
    for name, why in result.failed.items():
        _say("backtest", f"target {name!r}: {why}")
    return 1 if result.failed else 0


def _iso(t: float) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fmt(x: Optional[float], digits: int = 2) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def print_text(result, console: Any = None) -> None:
    """One row per target and semantics (the recorded size first, where there is
    one), then the fleet's totals per semantics."""
    from datetime import datetime, timezone
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)

    def when(t: float) -> str:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M")

    t = Table(title=f"Back-test {when(result.start)} → {when(result.end)} UTC, tick {result.tick_seconds:g} s "
                    "(×oracle, ×actual: instance-hours over the oracle's, over what happened)",
              title_justify="left", box=None, pad_edge=False)
    for col in ("target", "semantics", "inst-h", "×oracle", "×actual", "short-min", "short-%", "actions"):
        t.add_column(col, justify="left" if col in ("target", "semantics") else "right", no_wrap=True)
    for name, r in result.targets.items():
        rec = r["recorded"]
        if rec is not None:
            t.add_row(name, "recorded", _fmt(rec["instance_hours"], 1), _fmt(rec["oracle_ratio"]), "1.00",
                      _fmt(rec["underprovisioned_seconds"] / 60, 1), _fmt(100 * rec["underprovisioned_fraction"]),
                      str(rec["scaling_actions"]), style="dim")
        for run in r["runs"]:
            t.add_row(name, run["semantics"], _fmt(run["instance_hours"], 1),
                      _fmt(run["oracle_ratio"]), _fmt(run["actual_ratio"]),
                      _fmt(run["underprovisioned_seconds"] / 60, 1), _fmt(100 * run["underprovisioned_fraction"]),
                      str(run["scaling_actions"]))
        for s in r["skipped"]:
            t.add_row(name, s["semantics"], "skipped:", s["reason"], "", "", "", "")
    console.print(t)
    fleet = result.fleet
    if len(result.targets) > 1 and fleet:
        f = Table(title=f"Fleet: {len(result.targets)} targets", title_justify="left", box=None,
                  pad_edge=False)
        for col in ("semantics", "inst-h", "×oracle", "×actual", "short-%", "actions"):
            f.add_column(col, justify="left" if col == "semantics" else "right", no_wrap=True)
        for s in fleet.values():
            f.add_row(s["semantics"], _fmt(s["instance_hours"], 1), _fmt(s["oracle_ratio"]), _fmt(s["actual_ratio"]),
                      _fmt(100 * s["underprovisioned_fraction"]), str(s["scaling_actions"]))
        console.print(f)
    for name, r in result.targets.items():
        d = r["demand"]
        for note in d["notes"]:
            console.print(f"[yellow]{name}[/yellow]: {note}")
        if r["recorded"] is None:
            console.print(f"[dim]{name}: no recorded size (× actual is —): its provider records none for this "
                          "target; --recorded FILE.csv gives the size it had (docs/backtest.md)[/dim]")


def write_csv(result, out) -> None:
    """One row per (target, run): ``target``, then the run fields of ``simulate``'s JSON."""
    from .replay import RUN_FIELDS
    w = csv.writer(out)
    w.writerow(("target",) + RUN_FIELDS)
    for name, r in result.targets.items():
        rows = list(r["runs"])
        if r["recorded"] is not None:
            rows.insert(0, {"semantics": "recorded", **r["recorded"], "actual_ratio": 1.0})
        for run in rows:
            w.writerow([name] + ["" if run.get(k) is None else run.get(k) for k in RUN_FIELDS])


def write_timelines(result, directory: Path) -> None:
    """``DIR/TARGET.csv``: per tick ``time``, ``load``, ``members_needed``,
    ``oracle_paid``, each semantics' ``desired``/``paid``/``ready`` (the names
    ``simulate --timeline`` writes), and ``recorded_desired``/``recorded_serving``."""
    import numpy as np
    from ..simulator.oracle import members_needed
    directory.mkdir(parents=True, exist_ok=True)
    for name, r in result.targets.items():
        hist = result.histories[name]
        n = hist.load.size
        cols: dict[str, Any] = {"time": (hist.start + np.arange(n) * hist.tick).tolist(), "load": hist.load.tolist(),
                                "members_needed": members_needed(hist.load, r["fleet"]["capacity"]).tolist(),
                                "oracle_paid": r["series"]["oracle"]["paid"]}
        for sem, s in r["series"].items():
            if sem == "oracle":
                continue
            for k in ("desired", "paid", "ready"):
                cols[f"{sem}:{k}"] = s[k]
        if hist.recorded_desired is not None:
            cols["recorded_desired"] = hist.recorded_desired.tolist()
            cols["recorded_serving"] = hist.recorded_serving.tolist()
        with open(directory / f"{name}.csv", "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(cols)
            w.writerows(zip(*cols.values()))
