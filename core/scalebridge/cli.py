"""The ``scalebridge`` command.

Bad input never shows a traceback: a malformed request exits 2 with one line
naming its JSON path; a policy file error names file, line, column and field.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

from pydantic_core import from_json, to_json
from typing import IO, Iterator, Optional

from . import __version__
from .cliargs import EXIT_BAD_INPUT, Parser, say
from .engine import builtin_semantics, decide, decide_all
from .errors import PolicyError, RequestError, ScalebridgeError, SemanticsFailure
from .protocol import MAX_DEPTH, check_json_value


def _dumps(obj) -> str:
    return to_json(obj).decode()


_REFUSED_BY_PARSER = re.compile(r"^(recursion limit exceeded|number out of range|lone leading surrogate|"
                                r"lone trailing surrogate|invalid unicode code point)[^\n]* at line (\d+) column (\d+)$")
_BIG_INT = re.compile(r"\d{%d,}" % 4301)


def _position(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def _loads(text: str):
    """Parse with pydantic-core's JSON parser (several times faster than ``json``,
    and bounded: at most :data:`~scalebridge.protocol.MAX_DEPTH` levels, integers of at
    most 4,300 digits, no lone surrogates); on another failure, let ``json`` produce
    the line/column message (or accept what only it reads, NaN, which validation then
    refuses by its JSON path). Raises :class:`json.JSONDecodeError` with the place."""
    try:
        return from_json(text)
    except ValueError as e:
        m = _REFUSED_BY_PARSER.match(str(e))
        if m:
            what = {"recursion limit exceeded": f"nested deeper than {MAX_DEPTH} levels of objects and arrays",
                    "number out of range": "a number with more than 4,300 digits"}.get(
                        m.group(1), "not Unicode text: a lone surrogate")
            raise json.JSONDecodeError(what, text, _position(text, int(m.group(2)), int(m.group(3)))) from None
    try:
        obj = json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels of objects and arrays", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:   # an integer literal past Python's 4,300-digit conversion limit
        m = _BIG_INT.search(text)
        raise json.JSONDecodeError("a number with more than 4,300 digits", text, m.start() if m else 0) from None
    check_json_value(obj)
    return obj


def _open(path: str) -> IO[str]:
    """Requests are a stream (a file, ``-``, a FIFO or ``<(cmd)``), never a device or a
    directory; a FIFO is opened without waiting for a writer (none: no request)."""
    if path == "-":
        return sys.stdin
    from .inputfile import InputFileError, check_stream
    try:
        check_stream(path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        os.set_blocking(fd, True)
        return open(fd, encoding="utf-8")
    except InputFileError as e:
        raise RequestError("$", f"cannot read {path}: {e.reason}") from None
    except OSError as e:
        raise RequestError("$", f"cannot read {path}: {e.strerror or e}") from None


def iter_requests(stream: IO[str]) -> Iterator[tuple[object, object]]:
    """Requests from one JSON object (possibly spread over lines), a JSON array,
    or JSON Lines; yields (where, request): ``where`` is the line number (an int)
    or ``"request [i]"`` for an array's items. A JSON Lines line that is not JSON
    is yielded as a :class:`RequestError` in place of its request, so that the
    lines after it are still decided (nothing lost on bad input)."""
    first = ""
    first_no = 0
    for no, line in enumerate(stream, start=1):
        if line.strip():
            first, first_no = line, no
            break
    if not first:
        raise RequestError("$", "no request: the input is empty")
    try:
        obj = _loads(first.rstrip("\r\n"))
        single_line = True
    except json.JSONDecodeError:
        single_line = False
    if not single_line:   # one document spread over several lines
        text = first + stream.read()
        try:
            obj = _loads(text)
        except json.JSONDecodeError as e:
            lines = _json_lines_after_bad_first(text, first_no)
            if lines is None:
                raise RequestError("$", f"invalid JSON at line {first_no + e.lineno - 1}, column {e.colno}: "
                                        f"{e.msg}") from None
            yield from lines
            return
        if isinstance(obj, list):
            for i, r in enumerate(obj):
                yield f"request [{i}]", r
        else:
            yield first_no, obj
        return
    if isinstance(obj, list):   # a JSON array on one line
        for i, r in enumerate(obj):
            yield f"request [{i}]", r
    else:
        yield first_no, obj
    for no, line in enumerate(stream, start=first_no + 1):
        if not line.strip():
            continue
        try:
            obj = _loads(line.rstrip("\r\n"))
        except json.JSONDecodeError as e:
            obj = RequestError("$", f"invalid JSON at column {e.colno}: {e.msg}")
        except RequestError as e:
            obj = e
        yield no, obj


_JSON_LINES_PROBE = 1000


def _json_lines_after_bad_first(text: str, first_no: int) -> Optional[list]:
    """JSON Lines whose first line is not JSON: each line's request, or its error
    for a line that is not JSON — or None when no line is a JSON object (one
    broken multi-line document, reported as such; so too when none of the first
    :data:`_JSON_LINES_PROBE` lines is one, which bounds what a file that is not JSON
    at all costs)."""
    out: list = []
    requests = 0
    for k, line in enumerate(text.splitlines(), start=first_no):
        if not line.strip():
            continue
        if not requests and len(out) >= _JSON_LINES_PROBE:
            return None
        try:
            obj = _loads(line)
        except json.JSONDecodeError as e:
            out.append((f"line {k}", RequestError("$", f"invalid JSON at column {e.colno}: {e.msg}")))
            continue
        except RequestError as e:
            out.append((f"line {k}", e))
            continue
        if not isinstance(obj, dict):
            return None
        requests += 1
        out.append((k, obj))
    return out if requests else None


def _where(where: object, file: str) -> str:
    if isinstance(where, str):
        return f"{where}: "
    return f"line {where}: " if where and (file != "-" or where > 1) else ""


def _each_request(stream: IO[str], file: str, command: str, handle) -> int:
    """``handle(request)`` for every request; a malformed one is reported as one
    line on stderr naming where it is (line, JSON path) and the others still run.
    Exit status 2 when any request was malformed."""
    failed = internal = False

    def report(where: object, message: str) -> None:
        sys.stdout.flush()
        print(f"scalebridge {command}: {_where(where, file)}{message}", file=sys.stderr)
        sys.stderr.flush()

    try:
        for where, req in iter_requests(stream):
            try:
                if isinstance(req, RequestError):
                    raise req
                handle(req)
            except RequestError as e:
                failed = True
                report(where, str(e))
            except SemanticsFailure as e:   # a plugin's (or a built-in's) bug, named
                internal = True
                report(where, str(e))
            except OverflowError as e:
                # numbers a request holds that no float survives (1e308 members' worth)
                failed = True
                report(where, f"a number in the request is out of range ({e})")
            except Exception as e:   # a bug: one line, not a traceback, and the next request runs
                internal = True
                report(where, f"internal error, please report it: {type(e).__name__}: {e}")
    except UnicodeDecodeError:
        failed = True
        report(None, f"{file}: not a UTF-8 text file")
    return EXIT_BAD_INPUT if failed else (1 if internal else 0)


def _unknown_semantics_flag(args, command: str) -> bool:
    """An unknown ``--semantics`` is the flag's problem, said once before any input
    is read — not each request's (``$.semantics``), which it would otherwise be."""
    if not args.semantics or args.semantics == "all":
        return False
    from .engine import resolve_semantics
    try:
        resolve_semantics(args.semantics, path="--semantics")
    except RequestError as e:
        print(f"scalebridge {command}: {e}", file=sys.stderr)
        return True
    return False


def _with_policy_file(args, command: str, handle):
    """``handle`` with ``--policy FILE`` put into every request (None: the file is bad,
    already reported)."""
    if not getattr(args, "policy", None):
        return handle
    from .engine import read_policy_file
    from .policy import policy_json
    warnings: list[str] = []
    try:
        policy = policy_json(read_policy_file(args.policy, warnings), exclude_defaults=True)
    except PolicyError as e:
        for problem in e.problems:
            print(f"scalebridge {command}: {problem}", file=sys.stderr)
        return None
    for line in warnings:
        print(f"scalebridge {command}: {line}", file=sys.stderr)

    def with_policy(req) -> None:
        if isinstance(req, dict):
            req = {**req, "policy": policy}
        handle(req)
    return with_policy


def _needs_policy(handle):
    """``handle`` of a request that has a policy; one without is said as such (not as
    the first field the empty policy lacks)."""
    def checked(req) -> None:
        if isinstance(req, dict) and req.get("policy") is None:
            raise RequestError("$.policy", "no policy: the request has none and no --policy FILE was given (pass "
                                           "--policy POLICY.yaml, or put the policy in the request)")
        handle(req)
    return checked


def _decide_each(args, command: str, handle) -> int:
    """``handle`` every request of ``args.file`` (``--policy`` put into each), after
    ``--semantics`` and ``--policy`` are known good."""
    if _unknown_semantics_flag(args, command):
        return EXIT_BAD_INPUT
    if not getattr(args, "policy", None):
        handle = _needs_policy(handle)
    handle = _with_policy_file(args, command, handle)
    if handle is None:
        return EXIT_BAD_INPUT
    with _open(args.file) as stream:
        return _each_request(stream, args.file, command, handle)


class _PolicyWarnings:
    """What ``validate`` warns of a policy — each part a semantics does not read
    (:meth:`~scalebridge.semantics.base.Semantics.ignored_parts`), a utilization target
    written as a fraction — said once each on stderr by ``decide`` and ``explain``,
    after the response of the first request that shows it. ``label`` names where the
    policy came from (the ``--policy`` file, whose own warnings were said as it was
    read, with their lines; else the requests' input)."""

    def __init__(self, command: str, label: str, from_file: bool):
        self.command, self.label, self.from_file = command, label, from_file
        self.said: set[str] = set()

    def __call__(self, req: object, names: list[str]) -> None:
        if not isinstance(req, dict) or req.get("policy") is None:
            return
        from .engine import compile_policy, resolve_semantics
        from .policy import fraction_targets
        compiled = compile_policy(req["policy"])
        lines: list[str] = []
        if not self.from_file:
            from .errors import json_path
            lines += [f"{json_path(('policy',) + loc)}: warning: {message}"
                      for loc, message in compiled.derived(("cli", "fractions"), lambda c: fraction_targets(c.source))]
        for n in names:
            lines += [f"warning: {n}: {line}" for line in compiled.derived(
                ("cli", "ignored parts", n), lambda c, n=n: resolve_semantics(n).ignored_parts(c.source))]
        for line in lines:
            if line not in self.said:
                self.said.add(line)
                sys.stdout.flush()
                print(f"scalebridge {self.command}: {self.label}: {line}", file=sys.stderr)


def _warnings(args, command: str) -> _PolicyWarnings:
    label = args.policy or ("<stdin>" if args.file == "-" else args.file)
    return _PolicyWarnings(command, label, bool(args.policy))


def cmd_decide(args) -> int:
    write = sys.stdout.write
    many = args.semantics == "all"
    names = builtin_semantics()
    warn = _warnings(args, "decide")

    def handle(req) -> None:
        if many:
            resps = decide_all(req, names)
        else:
            resps = [decide(req, args.semantics)]
        write("".join(_dumps(resp) + "\n" for resp in resps))
        warn(req, [r["semantics"] for r in resps])

    return _decide_each(args, "decide", handle)


def cmd_explain(args) -> int:
    from .explain import render
    names = builtin_semantics() if args.semantics == "all" else (args.semantics,)
    warn = _warnings(args, "explain")

    def handle(req) -> None:
        resps = [decide(req, name, explain=True) for name in names]
        for resp in resps:
            render(resp, sys.stdout)
        warn(req, [r["semantics"] for r in resps])

    return _decide_each(args, "explain", handle)


def cmd_validate(args) -> int:
    if _unknown_semantics_flag(args, "validate"):
        return EXIT_BAD_INPUT
    from .engine import read_policy_file, resolve_semantics
    failed = warned = False
    for path in args.files:
        fractions: list[str] = []
        try:   # the semantics the file names must be registered, as decide requires
            policy = read_policy_file(path, fractions)
        except PolicyError as e:
            failed = True
            for p in e.problems:
                print(p, file=sys.stderr)
            continue
        refused = False
        if args.semantics:   # every semantics that cannot run it, not only the first
            names = builtin_semantics() if args.semantics == "all" else (args.semantics,)
            for n in names:
                try:
                    resolve_semantics(n).check(policy)
                except RequestError as e:
                    refused = True
                    print(f"{path}: {n}: {e}" if len(names) > 1 else f"{path}: {e}", file=sys.stderr)
        if refused:
            failed = True
            continue
        names = (builtin_semantics() if args.semantics == "all" else (args.semantics,)) if args.semantics else \
            ((policy.semantics,) if policy.semantics else ())
        lines = fractions + [f"{path}: warning: {n}: {line}" for n in names
                             for line in resolve_semantics(n).ignored_parts(policy)]
        for line in lines:
            print(line, file=sys.stderr)
        warned = warned or bool(lines)
        against = f"; runs under {', '.join(names)}" if names else ""
        print(f"{path}: ok (policy file: policy {policy.name or '(unnamed)'!r}{against})")
    if failed:
        return EXIT_BAD_INPUT
    return 1 if warned and getattr(args, "strict", False) else 0


def cmd_schema(args) -> int:
    from .policy import policy_json_schema
    from pydantic import TypeAdapter

    from .protocol import Request
    if args.request:
        schema = TypeAdapter(Request).json_schema()
        schema["title"] = "scalebridge decision request"
    else:
        schema = policy_json_schema()
    print(json.dumps(schema, indent=2))
    return 0


def _table(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    """Rows as aligned columns (each as wide as its widest cell; the last column as it is)."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1]).rstrip() for r in rows]


def cmd_plugins(args) -> int:
    """What is loaded, and from where: each plugin with the distribution that installed it and its
    module; each semantics, provider, metric source, forecaster and translator with the
    distribution (and plugin) it came from."""
    from . import registry
    reg = registry.current()

    def origin(plugin: str) -> tuple[str, str]:
        dist, _, module = reg.origins.get(plugin, (None, None, plugin))
        return (f"from {dist}" if dist else "in-process", module)

    print("plugins:")
    rows = []
    for name, _ in reg.plugins:
        dist, version, module = reg.origins.get(name, (None, None, name))
        rows.append((name, module, f"{dist} {version}" if dist else "registered in-process"))
    for line in _table(rows):
        print(line)
    for kind in ("semantics", "providers", "metric_sources", "forecasters", "translators"):
        table = getattr(reg, kind)
        if not table:
            continue
        print(f"{kind.replace('_', ' ')}:")
        # a semantics by the module that defines it (one plugin may register several)
        rows = [(name, origin(r.plugin)[0], type(r.obj).__module__, getattr(r.obj, "summary", ""))
                if kind == "semantics" else (name, *origin(r.plugin), "") for name, r in sorted(table.items())]
        for line in _table(rows):
            print(line)
    if reg.failures:
        print("failed to load:")
        for line in _table([(name, why) for name, why in reg.failures.items()]):
            print(line)
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(args)


#: the commands this module implements that need none of the other command modules
#: (simulator, controller, backtest, translate: numpy, sqlite, the SDK-facing code)
_SELF_CONTAINED = ("decide", "explain")


def build_parser(full: bool = True) -> argparse.ArgumentParser:
    """The ``scalebridge`` parser; ``full=False``: only this module's commands (what
    ``decide`` and ``explain`` parse with: a shell loop of them does not import the
    simulator, numpy and the controller for nothing)."""
    p = Parser(
        prog="scalebridge",
        description="One autoscaling policy, every cloud: decide, compare and replay provider autoscaling semantics.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  scalebridge decide --semantics all examples/requests/pods.json\n"
               "  scalebridge explain --semantics gce examples/situations/scale-in-peak-7min.json\n"
               "  scalebridge validate examples/policies/web.yaml\n"
               "  scalebridge compare examples/simulate/policy.yaml --workload flash_crowd --capacity 10 --startup 60\n"
               "\nthe protocol: docs/protocol.md; policy files: docs/policy.md")
    p.add_argument("--version", action="version", version=f"scalebridge {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("decide", help="decide: protocol requests in (one object or JSON Lines), one JSON response line out per request",
                       description="Reads one request object or JSON Lines of them (FILE or - for stdin) and prints one "
                                   "response per request, in order, as JSON Lines. Exit 2 on a malformed request.")
    d.add_argument("file", nargs="?", default="-", metavar="FILE|-",
                   help="a request, a JSON array of requests, or JSON Lines; - or nothing: standard input")
    d.add_argument("--semantics", "-s", default=None,
                   help="kubernetes, gce, azure, aws, scalebridge, a plugin's name, or 'all' (one response per built-in semantics); overrides request.semantics")
    d.set_defaults(func=cmd_decide)

    d.add_argument("--policy", metavar="POLICY.yaml",
                   help="a policy file to use for every request (in place of the request's own `policy`)")
    e = sub.add_parser("explain", help="print, for a person, each stage's input and output for one decision",
                       description="Decide each request as `scalebridge decide` does and print, for a person, every "
                                   "stage of the decision: the metrics' raw proposals and how each was computed, "
                                   "then combining, stabilization, rate limits, cooldowns and bounds, each with its "
                                   "input, its output and why. Exit 2 on a malformed request, as decide. "
                                   "Reference: docs/protocol.md")
    e.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="a request (or several); - : standard input")
    e.add_argument("--semantics", "-s", default=None,
                   help="kubernetes, gce, azure, aws, scalebridge, a plugin's name, or 'all' (each built-in in "
                        "turn); overrides request.semantics")
    e.add_argument("--policy", metavar="POLICY.yaml",
                   help="a policy file to use for every request (in place of the request's own `policy`)")
    e.set_defaults(func=cmd_explain)

    v = sub.add_parser("validate", help="check policy files and run configurations; every problem with "
                                        "file:line:column, field and what would be valid",
                       description="Check each FILE: a policy file (its every problem with file:line:column, the "
                                   "field and what would be valid; with --semantics, whether each semantics can "
                                   "run it, and a warning for each part it does not read), or a run "
                                   "configuration. Each FILE that passes gets one line on stdout naming what was "
                                   "checked. Exit 0 when every file is ok, 1 with --strict and a warning, 2 on a "
                                   "problem.")
    v.add_argument("files", nargs="+", metavar="FILE",
                   help="policy files, and run configurations (a file with `targets:`), each checked whole")
    v.add_argument("--semantics", "-s", default=None,
                   help="also check that this semantics (or 'all') can run each policy, and warn about the parts of "
                        "it that semantics does not read (default: the policy's own `semantics`)")
    v.add_argument("--strict", action="store_true", help="exit 1 when there are warnings")
    v.set_defaults(func=cmd_validate)

    s = sub.add_parser("schema", help="print the JSON Schema of policy files (for editor completion)",
                       description="Print a JSON Schema on standard output: of a policy file by "
                                   "default, of a decision request with --request, of a run configuration with "
                                   "--run-config. Point an editor's YAML language server at it for completion and "
                                   "checking as you type: `scalebridge schema > policy.schema.json`.")
    s.add_argument("--request", action="store_true", help="the schema of a decision request instead")
    s.set_defaults(func=cmd_schema)

    pl = sub.add_parser("plugins", help="list the loaded plugins and what they register",
                        description="List every plugin loaded through the `scalebridge` entry-point group (the "
                                    "built-ins too) with its module and the distribution that installed it, then "
                                    "each semantics, provider, metric source, forecaster and translator with the "
                                    "distribution and module it came from, and every plugin that failed to load "
                                    "with why. Reference: docs/plugins.md")
    pl.set_defaults(func=cmd_plugins)

    dm = sub.add_parser("demo", help="the main job on the embedded default (no cloud account needed)",
                        description="Three sections, no cloud account needed: the seed decision table through "
                                    "`scalebridge decide --semantics kubernetes`; the main job — one policy on "
                                    "five simulated fleets, each decided with another provider's semantics by "
                                    "`scalebridge run --clock virtual`; then a replay of the built-in flash crowd "
                                    "through every semantics, with its scores and plot. Each section names the "
                                    "policy it runs. Reference: docs/simulation.md")
    dm.add_argument("--output-dir", default="out", help="where the demo writes its plot and scores (default: out/)")
    dm.add_argument("--quick", action="store_true", help="only the seed decision table")
    dm.set_defaults(func=cmd_demo)

    if not full:
        return p
    try:
        from .simulator.cli import add_simulate_commands
    except ImportError:  # the simulator is optional until its module lands
        pass
    else:
        add_simulate_commands(sub)
    from .controller.cli import add_controller_commands
    add_controller_commands(sub)
    from .backtest.cli import add_backtest_command
    add_backtest_command(sub)
    from .translate.cli import add_translate_commands
    add_translate_commands(sub)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    from .secrets import forget_all
    forget_all()   # each command starts with no secret known (an embedding program calls main many times)
    given = sys.argv[1:] if argv is None else argv
    # `scalebridge decide ...`: the command comes first, so no other command's parser is
    # asked for (a top-level option before it, -h or --version, builds them all)
    parser = build_parser(full=not (given and given[0] in _SELF_CONTAINED))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except ScalebridgeError as e:
        say(args.command, str(e))
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def entry() -> None:
    """The ``scalebridge`` command: :func:`main`, then the process ends without
    freeing what the command built (a run of 10,000 targets frees ~400 MB of objects,
    one at a time, and collects them once more: ~0.3 s for nothing). What an exit
    must still do is done: the ``atexit`` functions (logging's flush among them) and
    the standard streams flushed. While a thread that is not a daemon still runs, the
    process ends as usual (that thread's work is awaited)."""
    code = main()
    import os
    import threading
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    import atexit
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except (BrokenPipeError, ValueError):   # a reader gone, or a stream closed: nothing left to say
        code = code or 0
    os._exit(0 if code is None else code if isinstance(code, int) else 1)


if __name__ == "__main__":
    entry()
