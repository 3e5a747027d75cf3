"""The controller's commands: ``scalebridge run``, ``observe``, ``state show|reset``;
and run configurations in ``validate`` and ``schema``.

Bad input (a configuration, a flag, a state file) is one line per problem naming
where (``file:line:column: key``), exit 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from ..cliargs import DURATION_MORE_THAN_ZERO, EXIT_BAD_INPUT, number, say as _say
from ..errors import ScalebridgeError

__all__ = ["add_controller_commands"]

_port = number(int, lambda v: 0 <= v <= 65535, "a port number 0-65535")
_workers = number(int, lambda v: 1 <= v <= 256, "a number of targets from 1 to 256")
_processes = number(int, lambda v: 1 <= v <= 64, "a number of processes from 1 to 64")


def _problems(command: str, e: ScalebridgeError) -> int:
    for line in getattr(e, "problems", None) or str(e).splitlines():
        _say(command, line)
    return EXIT_BAD_INPUT


# ----------------------------------------------------------------------------- run


def cmd_run(args) -> int:
    from .config import ConfigError
    from .logs import configure, log
    from .loop import build_controller
    if args.until is not None and args.clock != "virtual":
        _say("run", "--until needs --clock virtual (real time runs until SIGTERM or SIGINT)")
        return EXIT_BAD_INPUT
    if args.clock == "virtual" and args.until is None and not args.once:
        _say("run", "--clock virtual needs --until DURATION (how much simulated time to run: 6h, 2d)")
        return EXIT_BAD_INPUT
    configure(args.log_format)
    metrics = None
    if args.metrics_port is not None:
        from .metrics import Metrics
        metrics = Metrics()
    try:
        controller = build_controller(args.config, clock=args.clock, state=args.state, dry_run=args.dry_run,
                                      audit=args.audit, metrics=metrics, leader_elect=args.leader_elect,
                                      until=args.until, seed=args.seed, workers=args.workers,
                                      processes=args.processes)
    except ConfigError as e:
        return _problems("run", e)
    except ScalebridgeError as e:
        return _problems("run", e)
    except OSError as e:
        _say("run", f"{getattr(e, 'filename', None) or args.config}: {e.strerror or e}")
        return EXIT_BAD_INPUT
    previous: dict = {}

    def stop(signum, frame) -> None:
        log(20, "stopping", signal=signal.Signals(signum).name)
        controller.request_stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            previous[sig] = signal.signal(sig, stop)
        except ValueError:   # not the main thread (an embedding program)
            pass
    try:
        if metrics is not None:
            try:
                port = metrics.serve(args.metrics_port)
            except OSError as e:
                _say("run", f"--metrics-port {args.metrics_port}: {e.strerror or e}")
                return EXIT_BAD_INPUT
            log(20, "serving metrics", port=port, path="/metrics")
        shards = controller._shards
        log(20, "running", targets=len(controller.runs) + sum(len(s.names) for s in shards),
            processes=len(shards) + 1 if shards else None, period=controller.period, clock=args.clock,
            dry_run=args.dry_run or None)
        code = controller.run(once=args.once)
        if args.once:
            for name, why in controller.last_report.failed:
                _say("run", f"target {name!r} failed: {why}")
        return code
    finally:
        controller.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# ----------------------------------------------------------------------------- observe


def _observe_one(spec, now: float) -> dict:
    from ..providers import ProviderError
    from .sources import read_metrics
    out: dict[str, Any] = {"target": spec.name, "provider": spec.provider_key, "ref": spec.target.name,
                           "semantics": spec.semantics, "current_replicas": None, "status_replicas": None,
                           "in_flight": None, "managed_by": None, "members": None, "metrics": None,
                           "details": None, "error": None}
    t = spec.target
    try:
        obs = t.observe(now)
        out.update(current_replicas=obs.current_replicas, status_replicas=obs.status_replicas,
                   in_flight=obs.in_flight, members=obs.members, details=obs.details or None)
        out["managed_by"] = t.managed_by()
        out["metrics"] = read_metrics(spec, now, obs) if spec.queries else {}
        if obs.forecast is not None:
            out["forecast"] = obs.forecast
    except ProviderError as e:
        out["error"] = str(e)
        out["error_kind"] = e.kind.value
    except Exception as e:  # noqa: BLE001 — one target's bug never hides the others
        out["error"] = f"internal error, please report it: {type(e).__name__}: {e}"
    return out


def cmd_observe(args) -> int:
    import time
    from pydantic_core import to_json
    from ..engine import Decider
    from .config import build, load_config
    try:
        runtime = build(load_config(args.config))
    except ScalebridgeError as e:
        return _problems("observe", e)
    try:
        specs = runtime.targets
        if args.targets:
            names = {s.name for s in specs}
            unknown = [n for n in args.targets if n not in names]
            if unknown:
                _say("observe", f"no target {unknown[0]!r} in {args.config}; its targets are: "
                                f"{', '.join(s.name for s in specs)}")
                return EXIT_BAD_INPUT
            specs = [s for s in specs if s.name in set(args.targets)]
        now = time.time()
        results = []
        for spec in specs:
            d = Decider(spec.policy, spec.semantics, spec.settings)
            spec.target.use_policy(d.policy, d.settings)
            now_t = spec.target.start_time if spec.target.start_time is not None and \
                getattr(spec.provider, "name", "") == "sim" else now
            results.append(_observe_one(spec, now_t))
        bad = any(r["error"] or r["managed_by"] for r in results)
        if args.output == "json":
            sys.stdout.write(to_json(results, indent=2, fallback=str).decode() + "\n")
        else:
            for r in results:
                _print_observed(r)
        return 1 if bad else 0
    finally:
        runtime.close()


def _print_observed(r: dict) -> None:
    head = f"{r['target']} ({r['provider']}: {r['ref']})"
    if r["error"]:
        print(f"{head}: error: {r['error']}")
        return
    members = r["members"] or []
    # an entry may stand for several identical members (the protocol's `count` extension)
    total = sum(int(m.get("count", 1) or 1) for m in members)
    ready = sum(int(m.get("count", 1) or 1) for m in members
                if m.get("ready") is not False and not m.get("deleting"))
    line = f"{head}: size {r['current_replicas']}"
    if r["status_replicas"] is not None:
        line += f", {r['status_replicas']:g} present"
    line += f", {total} members ({ready} ready)"
    if r["in_flight"]:
        line += f", in flight: {r['in_flight']}"
    if r["managed_by"]:
        line += f", REFUSED: already managed by {r['managed_by']}"
    print(line)
    for name, obs in (r["metrics"] or {}).items():
        parts = []
        if obs.get("members") is not None:
            vals = obs["members"]
            parts.append(f"{len(vals)} member samples" + (f" (e.g. {next(iter(vals))}={next(iter(vals.values()))})"
                                                          if vals else ""))
        for k in ("value", "values"):
            if obs.get(k) is not None:
                parts.append(f"{k} {obs[k]}")
        for k in ("series", "member_series"):
            if obs.get(k) is not None:
                parts.append(f"{k} of {len(obs[k])}")
        print(f"  {name}: {', '.join(parts) or 'no samples'}")


# ----------------------------------------------------------------------------- state


def cmd_state(args) -> int:
    from .config import DEFAULT_STATE_PATH
    from .store import SQLiteStore, StoreError
    path = args.state or DEFAULT_STATE_PATH
    try:
        store = SQLiteStore(path, readonly=True) if args.state_command == "show" else None
        if store is None:
            if not Path(path).is_file():
                raise StoreError(f"{path}: no such state file")
            store = SQLiteStore(path)
    except StoreError as e:
        _say(f"state {args.state_command}", str(e))
        return EXIT_BAD_INPUT
    try:
        if args.state_command == "show":
            rows = store.load_all()
            if args.target is not None and args.target not in rows:
                _say("state show", f"{path}: no state for target {args.target!r}; targets with state: "
                                   f"{', '.join(rows) or 'none'}")
                return EXIT_BAD_INPUT
            out = {}
            for name, r in rows.items():
                if args.target is not None and name != args.target:
                    continue
                out[name] = {"policy_hash": r.policy_hash, "updated_at": r.updated_at, "state": r.state,
                             "pending_write": None if r.intent_size is None else
                             {"size": r.intent_size, "decided_at": (r.intent_meta or {}).get("time"),
                                                "state": r.intent_state}}
            print(json.dumps(out[args.target] if args.target is not None else out, indent=2))
            return 0
        if not store.delete(args.target):
            _say("state reset", f"{path}: no state for target {args.target!r}; targets with state: "
                                f"{', '.join(store.names()) or 'none'}")
            return EXIT_BAD_INPUT
        print(f"{args.target}: state forgotten; its next sync starts from empty state")
        return 0
    finally:
        store.close()


# ----------------------------------------------------------------------------- validate / schema


def _validate_with_run_configs(original):
    """``validate``: run configurations (a YAML mapping with ``targets:``) are
    validated and built — providers and targets made, no cloud called —; other
    files go to the policy validation."""
    def cmd(args) -> int:
        from .config import ConfigError, build, is_run_config, load_config, read_yaml
        policies, configs = [], []
        for path in args.files:
            try:
                data, _ = read_yaml(path)
            except ConfigError:
                policies.append(path)   # the policy validation reports it
                continue
            (configs if is_run_config(data) else policies).append(path)
        code = 0
        if policies:
            code = original(argparse.Namespace(**{**vars(args), "files": policies}))
        for path in configs:
            try:
                runtime = build(load_config(path))
            except ScalebridgeError as e:
                for line in getattr(e, "problems", None) or [str(e)]:
                    print(line, file=sys.stderr)
                code = EXIT_BAD_INPUT
                continue
            n = len(runtime.targets)
            runtime.close()
            print(f"{path}: ok (run configuration: {n} target{'s' if n != 1 else ''})")
        return code
    return cmd


def _schema_with_run_config(original):
    def cmd(args) -> int:
        if getattr(args, "run_config", False):
            from .config import RunConfig
            schema = RunConfig.model_json_schema()
            schema["title"] = "scalebridge run configuration"
            print(json.dumps(schema, indent=2))
            return 0
        return original(args)
    return cmd


# ----------------------------------------------------------------------------- wiring


def add_controller_commands(sub: Any) -> None:
    """Register ``run``, ``observe`` and ``state`` on the main parser's subparsers,
    and teach ``validate`` and ``schema`` run configurations."""
    r = sub.add_parser("run", help="carry decisions out: observe, decide and set every target's size each sync period",
                       description="Every sync period, observe each target of the run configuration through its "
                                   "provider, decide with its policy and semantics, set its size, persist its "
                                   "state. Exit 0 when stopped (SIGTERM, SIGINT); with --once 0 when every target "
                                   "synced, 1 when any failed; 2 for a bad configuration. Reference: docs/run.md")
    r.add_argument("config", metavar="CONFIG", help="the run configuration (YAML)")
    r.add_argument("--once", action="store_true", help="one sync of every target, then exit")
    r.add_argument("--dry-run", action="store_true", help="decide and report, never write a target")
    r.add_argument("--state", metavar="PATH", help="the SQLite state file (default: the configuration's "
                                                   "`state:`, else scalebridge-state.db)")
    r.add_argument("--audit", metavar="FILE|-", help="append one JSON object per decision to FILE (- : stdout)")
    r.add_argument("--metrics-port", type=_port, metavar="N", help="serve Prometheus metrics on /metrics")
    r.add_argument("--leader-elect", action="store_true", help="only the holder of the lease writes targets")
    r.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines on stderr")
    r.add_argument("--clock", choices=("real", "virtual"), default="real",
                   help="virtual: simulated time, no sleeping (sim targets only); needs --until")
    r.add_argument("--until", type=DURATION_MORE_THAN_ZERO, metavar="DURATION",
                   help="with --clock virtual: how much simulated time to run (6h, 2d)")
    r.add_argument("--seed", type=int, default=None, help="seed of the backoff jitter (reproducible runs)")
    r.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="targets synced at once (default 5, the HPA controller's concurrent syncs)")
    r.add_argument("--processes", type=_processes, default=None, metavar="N",
                   help="processes the in-process (sim) targets are synced in (default: the configuration's "
                        "processes:, else 1)")
    r.set_defaults(func=cmd_run)

    o = sub.add_parser("observe", help="read each target once and print what its provider saw; never writes",
                       description="Observe each target (or the ones named) once: size, members, metric samples. "
                                   "Exit 0 when every target was observed, 1 when any failed or was refused.")
    o.add_argument("config", metavar="CONFIG")
    o.add_argument("targets", nargs="*", metavar="TARGET")
    o.add_argument("--output", choices=("text", "json"), default="text")
    o.set_defaults(func=cmd_observe)

    s = sub.add_parser("state", help="the persisted decision state: show, reset")
    ss = s.add_subparsers(dest="state_command", metavar="show|reset", required=True)
    show = ss.add_parser("show", help="the persisted state as JSON")
    show.add_argument("target", nargs="?", metavar="TARGET")
    show.add_argument("--state", metavar="PATH", help="the state file (default: scalebridge-state.db)")
    show.set_defaults(func=cmd_state)
    reset = ss.add_parser("reset", help="forget one target's history")
    reset.add_argument("target", metavar="TARGET")
    reset.add_argument("--state", metavar="PATH", help="the state file (default: scalebridge-state.db)")
    reset.set_defaults(func=cmd_state)

    choices = getattr(sub, "choices", {})
    v = choices.get("validate")
    if v is not None:
        v.set_defaults(func=_validate_with_run_configs(v.get_default("func")))
        v.description = (v.description or "") + " A run configuration (with `targets:`) is validated too, its " \
                                                "providers and targets built without calling any cloud."
    sc = choices.get("schema")
    if sc is not None:
        sc.add_argument("--run-config", action="store_true", help="the schema of a run configuration instead")
        sc.set_defaults(func=_schema_with_run_config(sc.get_default("func")))
