"""The controller's commands: ``scalebridge run``, ``observe``, ``state show|reset``;
and run configurations in ``validate`` and ``schema``.

Bad input (a configuration, a flag, a state file) is one line per problem naming
where (``file:line:column: key``), exit 2, never a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

from ..cliargs import DURATION_MORE_THAN_ZERO, EXIT_BAD_INPUT, number, say as _say
from ..errors import ScalebridgeError

__all__ = ["add_controller_commands"]

_port = number(int, lambda v: 0 <= v <= 65535, "a port number 0-65535")
_keep = number(int, lambda v: 1 <= v <= 1000, "a number of files from 1 to 1000")
#: ``--audit-max-bytes``, ``--audit-keep`` defaults (scalebridge.controller.audit)
DEFAULT_AUDIT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_AUDIT_KEEP = 5


def _parse_bytes(text: str) -> int:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    value = float(t[:-1] if scale != 1 else t)
    if not (0 <= value * scale < 1 << 62):
        raise ValueError(text)
    return int(value * scale)


_bytes = number(_parse_bytes, lambda v: v >= 0, "a size in bytes, or with K, M, G (100M); 0: never")
_workers = number(int, lambda v: 1 <= v <= 256, "a number of targets from 1 to 256")
_processes = number(int, lambda v: 1 <= v <= 64, "a number of processes from 1 to 64")
#: what ``--processes`` says now that every target is synced in one process
PROCESSES_NO_LONGER_USED = "--processes is no longer used: every target is synced in the controller's process"


def _problems(command: str, e: ScalebridgeError) -> int:
    for line in getattr(e, "problems", None) or str(e).splitlines():
        _say(command, line)
    return EXIT_BAD_INPUT


# ----------------------------------------------------------------------------- run


def cmd_run(args) -> int:
    from .logs import configure, unconfigure
    if args.until is not None and args.clock != "virtual":
        _say("run", "--until needs --clock virtual (real time runs until SIGTERM or SIGINT)")
        return EXIT_BAD_INPUT
    if args.clock == "virtual" and args.until is None and not args.once:
        _say("run", "--clock virtual needs --until DURATION (the position in simulated time to run to, from the "
                    "start of the load: 6h, 2d)")
        return EXIT_BAD_INPUT
    configure(args.log_format)
    try:
        return _run(args)
    finally:
        unconfigure()


@contextlib.contextmanager
def _no_collection():
    """The cycle collector off while a run configuration is built: a build makes only
    objects that live as long as it (10,000 targets: ~0.8 s of full collections that
    find nothing)."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _run(args) -> int:
    from .configfile import ConfigError
    from .logs import log
    from .audit import AuditError
    from .loop import build_controller
    from .store import NotAStateFile, StoreClaimed, StoreError
    metrics = None
    if args.metrics_port is not None:
        from .metrics import Metrics
        metrics = Metrics()
    import gc
    with _no_collection():
        try:
            controller = build_controller(args.config, clock=args.clock, state=args.state, dry_run=args.dry_run,
                                          audit=args.audit, metrics=metrics, leader_elect=args.leader_elect,
                                          until=args.until, seed=args.seed, workers=args.workers,
                                          audit_options={"max_bytes": args.audit_max_bytes,
                                                         "keep": args.audit_keep})
        except ConfigError as e:
            return _problems("run", e)
        except StoreClaimed as e:
            _say("run", f"{e}; {_claimed_advice(args)}")
            return 1
        except NotAStateFile as e:
            _say("run", str(e))
            return EXIT_BAD_INPUT
        except StoreError as e:
            _say("run", f"the state store failed: {e}")
            return 1
        except AuditError as e:
            _say("run", str(e))
            return 1
        except ScalebridgeError as e:
            return _problems("run", e)
        except OSError as e:
            _say("run", f"{getattr(e, 'filename', None) or args.config}: {e.strerror or e}")
            return EXIT_BAD_INPUT
    gc.freeze()   # what was built lives as long as the run: later collections skip it (a reload unfreezes)
    previous: dict = {}
    gc_was_on = False

    def stop(signum, frame) -> None:
        log(20, "stopping", signal=signal.Signals(signum).name)
        controller.request_stop()

    def reload(signum, frame) -> None:
        log(20, "reloading the configuration at the next sync", signal="SIGHUP")
        controller.request_reload()

    def reopen(signum, frame) -> None:   # logrotate's postrotate: the file was moved away
        if controller.audit is not None:
            log(20, "reopening the audit log at the next write", signal="SIGUSR1", file=controller.audit.where)
            controller.audit.reopen()

    for sig, handler in ((signal.SIGTERM, stop), (signal.SIGINT, stop), (signal.SIGHUP, reload),
                         (getattr(signal, "SIGUSR1", None), reopen)):
        if sig is None:
            continue
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, AttributeError):   # not the main thread (an embedding program); no SIGHUP
            pass
    try:
        if metrics is not None:
            address = args.metrics_address or controller.runtime.loaded.config.metrics_address
            try:
                port = metrics.serve(args.metrics_port, address)
            except OSError as e:
                _say("run", f"--metrics-port {args.metrics_port} on {address}: {e.strerror or e}")
                return EXIT_BAD_INPUT
            log(20, "serving metrics", address=address, port=port, path="/metrics")
        from .build import ignored_parts
        for line in ignored_parts(controller.runtime):
            log(30, "the semantics ignores part of the policy", warning=line)
        if args.processes is not None:
            log(30, PROCESSES_NO_LONGER_USED, processes=args.processes)
        log(20, "running", targets=len(controller.runs), period=controller.period, clock=args.clock,
            dry_run=args.dry_run or None)
        if args.once:   # one sync, then the process ends: none of what it allocates is worth a collection
            gc_was_on = gc.isenabled()
            gc.disable()
        code = controller.run(once=args.once)
        if args.once and controller.last_report is not None:
            for name, why in controller.last_report.failed:
                _say("run", f"target {name!r} failed: {why}")
        left = controller.left_in_flight
        if left:
            names = ", ".join(repr(n) for n in left)
            _say("run", f"stopped after the {controller.grace_seconds:g} s shutdown grace with "
                        f"{len(left)} write{'s' if len(left) != 1 else ''} still in flight (target"
                        f"{'s' if len(left) != 1 else ''} {names}), left to the next start: "
                        + ("its intent is persisted and the next start resolves it by observing the target"
                           if len(left) == 1 else "their intents are persisted and the next start resolves each by "
                                                  "observing its target"))
        return code
    finally:
        controller.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        gc.unfreeze()   # an embedding program calling main() again collects what this run built
        if args.once and gc_was_on:
            gc.enable()


def _claimed_advice(args) -> str:
    """What to do about a state file another controller holds: ``--leader-elect`` only
    where it would work — a configured provider holds leases (the kubernetes one) — and
    the run is not on a virtual clock."""
    from .build import _factory
    from .configfile import load_config
    from .election import _elects
    elects = False
    if args.clock != "virtual" and not args.leader_elect:
        try:
            cfg = load_config(args.config).config
        except ScalebridgeError:
            cfg = None
        if cfg is not None:
            kinds = {(o or {}).get("type", k) for k, o in cfg.providers.items()} | {t.provider for t in cfg.targets}
            for kind in kinds:
                try:
                    elects = elects or (isinstance(kind, str) and _elects(_factory(kind)))
                except Exception:  # noqa: BLE001 — a key of `providers:`, not a type: said by its own type
                    pass
    stand_by = "run this one with --leader-elect to stand by until it stops, " if elects else ""
    return f"stop it first, {stand_by}or give this one its own --state"


# ----------------------------------------------------------------------------- observe


def _observe_one(spec, now: float) -> dict:
    from ..protocol import as_json
    from ..providers import ProviderError
    from .reconcile import plugin_failed
    from .sources import read_metrics
    out: dict[str, Any] = {"target": spec.name, "provider": spec.provider_key, "ref": spec.target.name,
                           "semantics": spec.semantics, "current_replicas": None, "status_replicas": None,
                           "in_flight": None, "managed_by": None, "members": None, "metrics": None,
                           "details": None, "error": None, "paused": None}
    t = spec.target
    if spec.paused:
        out["paused"] = {"by": "paused: true in the configuration", "replicas": None}
    try:
        obs = t.observe(now)
        out.update(current_replicas=obs.current_replicas, status_replicas=obs.status_replicas, in_flight=obs.in_flight,
                   members=None if obs.members is None else [as_json(m) for m in obs.members],
                   details=obs.details or None)
        if obs.settings:    # what the provider knows of the autoscaler it stands for (its release)
            out["settings"] = dict(obs.settings)
        if obs.paused and out["paused"] is None:
            out["paused"] = {"by": obs.paused, "replicas": obs.paused_replicas}
        out["managed_by"] = t.managed_by()
        out["metrics"] = {k: as_json(o, exclude_none=True) for k, o in read_metrics(spec, now, obs).items()} \
            if spec.queries else {}
        if obs.forecast is not None:
            out["forecast"] = as_json(obs.forecast, exclude_none=True)
    except ProviderError as e:
        out["error"] = str(e)
        out["error_kind"] = e.kind.value
    except Exception as e:  # noqa: BLE001 — one target's bug never hides the others
        out["error"] = plugin_failed(spec, e)
    return out


def cmd_observe(args) -> int:
    import time
    from pydantic_core import to_json
    from ..engine import Decider
    from ..providers import Capability
    from .configfile import load_config
    from .build import build
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
        pauses = _pauses_of(runtime, args.config)
        results = []
        for spec in specs:
            d = Decider(spec.policy, spec.semantics, spec.settings)
            spec.target.use_policy(d.policy, d.settings)
            # a target on a virtual clock of its own (a simulated load) is observed where it starts
            now_t = spec.target.start_time if spec.target.start_time is not None and \
                Capability.VIRTUAL_CLOCK in getattr(spec.provider, "capabilities", ()) else now
            result = _observe_one(spec, now_t)
            p = pauses.get(spec.name)
            if p is not None:
                result["paused"] = {"by": "scalebridge pause", "since": p.since, "replicas": p.replicas}
            results.append(result)
        bad = any(r["error"] or r["managed_by"] for r in results)
        if args.output == "json":
            from ..secrets import redact
            sys.stdout.write(redact(to_json(results, indent=2, fallback=str).decode()) + "\n")
        else:
            for r in results:
                _print_observed(r)
        return 1 if bad else 0
    finally:
        runtime.close()


def _pauses_of(runtime: Any, config: str) -> dict:
    """The pauses recorded in the configuration's state file, read-only (observe
    never creates or changes a state file)."""
    from .store import SQLiteStore, StoreError, state_path
    if isinstance(runtime.state, dict):
        return {}
    path = state_path(runtime.state, runtime.loaded.path.parent)
    if not path.is_file():
        return {}
    try:
        store = SQLiteStore(path, readonly=True)
    except StoreError:
        return {}
    try:
        return store.pauses()
    except StoreError:
        return {}
    finally:
        store.close()


def _out(text: str) -> None:
    from ..secrets import redact
    print(redact(text))


def _print_observed(r: dict) -> None:
    head = f"{r['target']} ({r['provider']}: {r['ref']})"
    if r["error"]:
        _out(f"{head}: error: {r['error']}")
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
    if r.get("settings"):
        line += ", " + ", ".join(f"{k} {v}" for k, v in r["settings"].items())
    if r["managed_by"]:
        line += f", REFUSED: already managed by {r['managed_by']}"
    if r.get("paused"):
        held = r["paused"].get("replicas")
        line += f", PAUSED by {r['paused']['by']}" + (f" at {held} replicas" if held is not None else "")
    _out(line)
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
        _out(f"  {name}: {', '.join(parts) or 'no samples'}")


# ----------------------------------------------------------------------------- state


def _state_file(args, command: str) -> Path:
    """The state file a command reads: ``--state PATH``, else the ``state:`` of
    ``--config CONFIG``, else the embedded default."""
    from .store import state_path
    if getattr(args, "state", None):
        return Path(args.state)
    config = getattr(args, "config", None)
    if config:
        from .configfile import load_config
        loaded = load_config(config)
        state = loaded.config.state
        if isinstance(state, dict):
            from .store import StoreError
            raise StoreError(f"{config}: its state is kept by provider {state.get('provider')!r}, not in a file; "
                             f"`scalebridge {command}` reads SQLite state files")
        return state_path(state, loaded.path.parent)
    return state_path(None)


def cmd_state(args) -> int:
    from .store import SQLiteStore, StoreError
    command = f"state {args.state_command}"
    try:
        path = _state_file(args, command)
        store = SQLiteStore(path, readonly=True) if args.state_command == "show" else None
        if store is None:
            if not path.is_file():
                raise StoreError(f"{path}: no such state file")
            store = SQLiteStore(path)
    except StoreError as e:
        _say(command, str(e))
        return EXIT_BAD_INPUT
    except ScalebridgeError as e:
        return _problems(command, e)
    try:
        if args.state_command == "show":
            return _show(store, path, args.target)
        return _reset(store, path, args.target)
    except StoreError as e:
        _say(command, str(e))
        return 1
    finally:
        store.close()


def _show(store, path: Path, target) -> int:
    from .reconcile import row_problem
    rows = store.load_all()
    pauses = store.pauses()
    if target is not None and target not in rows and target not in pauses:
        _say("state show", f"{path}: no state for target {target!r}; targets with state: {', '.join(rows) or 'none'}")
        return EXIT_BAD_INPUT
    out = {}
    for name in sorted(set(rows) | set(pauses)):
        if target is not None and name != target:
            continue
        r = rows.get(name)
        entry: dict[str, Any] = {}
        problem = row_problem(r) if r is not None else None
        if r is not None and r.problem is not None:
            entry["problem"] = r.problem
        elif r is not None:
            entry = {"policy_hash": r.policy_hash, "updated_at": r.updated_at, "state": r.state,
                     "pending_write": None if r.intent_size is None else
                     {"size": r.intent_size, "decided_at": (r.intent_meta or {}).get("time"),
                      "state": r.intent_state}}
            if r.applied is not None:
                entry["last_applied"] = r.applied
            if problem is not None:
                entry["problem"] = problem
        if name in pauses:
            p = pauses[name]
            entry["paused"] = {"since": p.since, "replicas": p.replicas}
        out[name] = entry
    holder = store.holder()
    if holder is not None:
        print(f"scalebridge state show: {path} is held by a running controller ({holder.describe()})",
              file=sys.stderr)
    print(json.dumps(out[target] if target is not None else out, indent=2))
    return 0


def _reset(store, path: Path, target: str) -> int:
    """Forget one target's state: at once when no controller holds the file (holding
    its claim meanwhile, so that none starts halfway), else by the holder at its
    next sync — a controller keeps its targets' state in memory and would write it
    back."""
    from .store import Holder
    holder = store.claim(Holder.this_process())
    if holder is not None:
        store.request_reset(target)
        print(f"{target}: reset requested; the controller holding {path} ({holder.describe()}) forgets its state "
              "at its next sync")
        return 0
    if not store.delete(target):
        _say("state reset", f"{path}: no state for target {target!r}; targets with state: "
                            f"{', '.join(store.names()) or 'none'}")
        return EXIT_BAD_INPUT
    print(f"{target}: state forgotten; its next sync starts from empty state")
    return 0


# ----------------------------------------------------------------------------- pause / resume


_replicas = number(int, lambda v: 0 <= v <= 2**31 - 1, "a count of replicas (0 or more)")


def cmd_pause(args) -> int:
    """``scalebridge pause|resume CONFIG TARGET…``: recorded in the state store, which
    a running controller reads every sync (it need not be told otherwise); without
    a controller running, the next one honours it."""
    import time
    from .configfile import load_config
    from .store import SQLiteStore, StoreError
    command = args.command
    try:
        loaded = load_config(args.config)
        path = _state_file(args, command)
    except ScalebridgeError as e:
        return _problems(command, e)
    configured = {t.name: t for t in loaded.config.targets}
    unknown = [n for n in args.targets if n not in configured]
    if unknown:
        import difflib
        close = difflib.get_close_matches(unknown[0], list(configured), n=1)
        _say(command, f"no target {unknown[0]!r} in {args.config}" + (f"; did you mean {close[0]!r}?" if close else "")
             + f"; its targets are: {', '.join(configured)}")
        return EXIT_BAD_INPUT
    try:
        store = SQLiteStore(path)
    except StoreError as e:
        _say(command, str(e))
        return 1
    try:
        holder = store.holder()
        when = "at its next sync" if holder is not None else "when it next runs"
        for name in args.targets:
            if command == "pause":
                store.set_pause(name, args.replicas, time.time())
                size = f" at {args.replicas} replicas" if args.replicas is not None else " at its current size"
                print(f"{name}: paused{size}; the controller on {path} holds it {when}")
            else:
                if configured[name].paused:
                    _say(command, f"{name} is paused in {args.config} (paused: true): remove that, then reload the "
                                  "controller (SIGHUP)")
                    continue
                if store.clear_pause(name):
                    print(f"{name}: resumed; the controller on {path} decides it again {when}")
                else:
                    print(f"{name}: was not paused")
        return 0
    except StoreError as e:
        _say(command, str(e))
        return 1
    finally:
        store.close()


# ----------------------------------------------------------------------------- validate / schema


def _validate_with_run_configs(original):
    """``validate``: run configurations (a YAML mapping with ``targets:``) are
    validated and built — providers and targets made, no cloud called —; other
    files go to the policy validation."""
    def cmd(args) -> int:
        from .configfile import ConfigError, is_run_config, load_config, read_yaml
        from .build import build
        policies, configs = [], []
        read: dict = {}   # each run configuration parsed once (10,000 targets: seconds of YAML)
        for path in args.files:
            try:
                with _no_collection():
                    data, pos = read_yaml(path)
            except ConfigError:
                policies.append(path)   # the policy validation reports it
                continue
            if is_run_config(data):
                configs.append(path)
                read[path] = (data, pos)
            else:
                policies.append(path)
        code = 0
        if policies:
            code = original(argparse.Namespace(**{**vars(args), "files": policies}))
        for path in configs:
            # what is built is dropped before the collector is back on: enabled over a
            # live 10,000-target build, its first collection walks every object of it
            with _no_collection():
                try:
                    runtime = build(load_config(path, read.pop(path, None)))
                except ScalebridgeError as e:
                    from ..secrets import redact
                    for line in getattr(e, "problems", None) or [str(e)]:
                        print(redact(line), file=sys.stderr)
                    code = EXIT_BAD_INPUT
                    continue
                from .build import ignored_parts
                lines = ignored_parts(runtime)
                for line in lines:
                    print(line, file=sys.stderr)
                n, k = len(runtime.targets), len(runtime.providers)
                runtime.close()
                del runtime
            print(f"{path}: ok (run configuration: {n} target{'s' if n != 1 else ''} with their policies and "
                  f"{k} provider instance{'s' if k != 1 else ''}, built without calling a cloud)")
            if lines and getattr(args, "strict", False) and code == 0:
                code = 1
        return code
    return cmd


def _schema_with_run_config(original):
    def cmd(args) -> int:
        if getattr(args, "run_config", False):
            from .configfile import RunConfig
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
                                   "synced, 1 when any failed; 1 when the state file is held by another "
                                   "controller or the state store or audit log fails; 2 for a bad "
                                   "configuration. SIGHUP reloads the configuration at the next sync (one that "
                                   "does not validate is refused and the running one kept). "
                                   "Reference: docs/run.md")
    r.add_argument("config", metavar="CONFIG", help="the run configuration (YAML)")
    r.add_argument("--once", action="store_true", help="one sync of every target, then exit")
    r.add_argument("--dry-run", action="store_true", help="decide and report, never write a target")
    r.add_argument("--state", metavar="PATH", help="the SQLite state file (default: the configuration's "
                                                   "`state:`, else scalebridge-state.db)")
    r.add_argument("--audit", metavar="FILE|-", help="append one JSON object per decision to FILE (- : stdout)")
    r.add_argument("--audit-max-bytes", type=_bytes, default=DEFAULT_AUDIT_MAX_BYTES, metavar="SIZE",
                   help="rotate the audit file before it grows past SIZE (bytes, or 100M, 1G): FILE becomes FILE.1 "
                        "(default 100M; 0: never — for logrotate, which then sends SIGUSR1 to reopen it)")
    r.add_argument("--audit-keep", type=_keep, default=DEFAULT_AUDIT_KEEP, metavar="N",
                   help="rotated audit files kept, FILE.1 to FILE.N (default 5)")
    r.add_argument("--metrics-port", type=_port, metavar="N", help="serve Prometheus metrics on /metrics")
    r.add_argument("--metrics-address", metavar="ADDR", default=None,
                   help="the address /metrics listens on (default: the configuration's metrics_address:, else "
                        "0.0.0.0, every interface; 127.0.0.1 keeps it on the host)")
    r.add_argument("--leader-elect", action="store_true", help="only the holder of the lease writes targets")
    r.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines on stderr")
    r.add_argument("--clock", choices=("real", "virtual"), default="real",
                   help="virtual: simulated time, no sleeping (sim targets only); needs --until")
    r.add_argument("--until", type=DURATION_MORE_THAN_ZERO, metavar="DURATION",
                   help="with --clock virtual: the position in simulated time to run to, from the start of the "
                        "load (6h, 2d); a run resumed from its --state goes on from where it stopped to there")
    r.add_argument("--seed", type=int, default=None, help="seed of the backoff jitter (reproducible runs)")
    r.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="targets synced at once (default 5, the HPA controller's concurrent syncs)")
    r.add_argument("--processes", type=_processes, default=None, metavar="N",
                   help="no longer used: every target is synced in the controller's process (accepted, with a "
                        "warning, so that existing command lines still run)")
    r.set_defaults(func=cmd_run)

    o = sub.add_parser("observe", help="read each target once and print what its provider saw; never writes",
                       description="Observe each target (or the ones named) once: size, members, metric samples. "
                                   "Exit 0 when every target was observed, 1 when any failed or was refused.")
    o.add_argument("config", metavar="CONFIG", help="the run configuration (YAML)")
    o.add_argument("targets", nargs="*", metavar="TARGET", help="the targets to observe, by name (default: all)")
    o.add_argument("--output", "-o", choices=("text", "json"), default="text",
                   help="text: a few lines per target, for a person (default); json: a JSON array with one object per "
                        "target — its size, members, metric observations in the protocol's shapes and any "
                        "operation in flight, or its error — secrets masked")
    o.set_defaults(func=cmd_observe)

    s = sub.add_parser("state", help="the persisted decision state: show, reset",
                       description="The decision state `scalebridge run` persists (SQLite): each target's "
                                   "windows, rate periods, cooldowns and any write whose outcome is pending. "
                                   "Reference: docs/run.md (State).")
    ss = s.add_subparsers(dest="state_command", metavar="show|reset", required=True)
    state_help = "the state file (default: the --config's `state:`, else scalebridge-state.db)"
    config_help = "the run configuration whose `state:` names the file"
    show = ss.add_parser("show", help="the persisted state as JSON",
                         description="Print the persisted state as JSON: every target's, or one's. Read-only: it "
                                     "never creates or changes the file, and never waits for a running "
                                     "controller (whose host and pid it names on stderr).")
    show.add_argument("target", nargs="?", metavar="TARGET", help="one target (default: all)")
    show.add_argument("--state", metavar="PATH", help=state_help)
    show.add_argument("--config", metavar="CONFIG", help=config_help)
    show.set_defaults(func=cmd_state)
    reset = ss.add_parser("reset", help="forget one target's history",
                          description="Forget one target's decision history: its next sync starts from empty "
                                      "state, as a changed policy does. With a controller running on the file, "
                                      "the reset is recorded and that controller carries it out at its next "
                                      "sync (it keeps the state in memory and would write it back otherwise).")
    reset.add_argument("target", metavar="TARGET", help="the target whose history is forgotten, by name")
    reset.add_argument("--state", metavar="PATH", help=state_help)
    reset.add_argument("--config", metavar="CONFIG", help=config_help)
    reset.set_defaults(func=cmd_state)

    for name, what in (("pause", "pause"), ("resume", "resume")):
        desc = ("Pause targets without editing the configuration: the controller makes no decision and no write "
                "for them (audit action `paused`); with --replicas it sets that size once and holds it. Recorded "
                "in the state store; a running controller honours it at its next sync. `scalebridge resume` "
                "lifts it.") if name == "pause" else \
            "Lift a pause of `scalebridge pause`: the controller decides the targets again at its next sync."
        c = sub.add_parser(name, help=f"{what} targets (recorded in the state store; honoured at the next sync)",
                           description=desc + " Reference: docs/run.md (Pausing a target).")
        c.add_argument("config", metavar="CONFIG", help="the run configuration (its `state:` names the store)")
        c.add_argument("targets", nargs="+", metavar="TARGET", help=f"the targets to {name}, by name")
        c.add_argument("--state", metavar="PATH", help="the state file (default: the configuration's `state:`)")
        if name == "pause":
            c.add_argument("--replicas", type=_replicas, metavar="N", default=None,
                           help="set this size once, then hold it (KEDA's paused-replicas)")
        c.set_defaults(func=cmd_pause, command=name)

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
