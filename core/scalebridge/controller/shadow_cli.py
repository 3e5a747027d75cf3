"""``scalebridge shadow report CONFIG [--since 24h] [--audit FILE] [--output text|json]
[--plot FILE] [TARGET...]`` (:mod:`.shadow_report`). Bad input is one line naming where,
exit 2; no shadow record for any target, exit 1."""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from ..cliargs import DURATION_MORE_THAN_ZERO, EXIT_BAD_INPUT, say

__all__ = ["add_shadow_command"]


def cmd_shadow_report(args) -> int:
    from .configfile import ConfigError, load_config
    from .shadow_report import plot_shadow, read_audit, render_text, summaries
    try:
        loaded = load_config(args.config)
    except ConfigError as e:
        for line in e.problems:
            say("shadow report", line)
        return EXIT_BAD_INPUT
    except OSError as e:
        say("shadow report", f"{args.config}: {e.strerror or e}")
        return EXIT_BAD_INPUT
    names = [t.name for t in loaded.config.targets]
    for name in args.targets:
        if name not in names:
            say("shadow report", f"{args.config}: no target {name!r}; its targets are: {', '.join(names)}")
            return EXIT_BAD_INPUT
    audit = args.audit
    if audit is None:
        if not loaded.config.audit:
            say("shadow report", f"{args.config}: no audit to read: give --audit FILE (what `run --audit` wrote), "
                                 "or `audit:` in the configuration")
            return EXIT_BAD_INPUT
        audit = str(loaded.path.parent / os.path.expanduser(loaded.config.audit))
    try:
        from ..inputfile import InputFileError, check_stream
        if audit != "-":
            check_stream(audit)
        stream = sys.stdin if audit == "-" else open(audit, encoding="utf-8", errors="replace")
    except InputFileError as e:
        say("shadow report", f"--audit {audit}: {e.reason}")
        return EXIT_BAD_INPUT
    except OSError as e:
        say("shadow report", f"--audit {audit}: {e.strerror or e}")
        return EXIT_BAD_INPUT
    with stream:
        records, bad = read_audit(stream)
    if bad:
        say("shadow report", f"{audit}: {bad} line{'s' if bad != 1 else ''} that {'are' if bad != 1 else 'is'} not "
                             "a JSON object skipped")
    items = summaries(records, list(args.targets) or names, args.since)
    if args.output == "json":
        print(json.dumps({"audit": audit, "since_seconds": args.since, "targets": [s.to_json() for s in items]},
                         indent=2))
    else:
        render_text(items, sys.stdout)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            say("shadow report", "--plot needs matplotlib: pip install 'scalebridge[plot]'")
            return EXIT_BAD_INPUT
        try:
            plot_shadow(items, args.plot)
        except OSError as e:
            say("shadow report", f"--plot {args.plot}: {e.strerror or e}")
            return EXIT_BAD_INPUT
    if not any(s.records for s in items):
        say("shadow report", f"{audit}: no shadow record of {'these targets' if len(items) != 1 else items[0].target}"
                             " (run them with `shadow: true` or `run --shadow`, with --audit)")
        return 1
    return 0


def add_shadow_command(sub: Any) -> None:
    """``scalebridge shadow report``."""
    s = sub.add_parser("shadow", help="shadow mode's records: how scalebridge compared with the native autoscaler",
                       description="Read what a shadow run (targets with `shadow: true`, or `run --shadow`) "
                                   "recorded in its audit. Reference: docs/shadow.md")
    ss = s.add_subparsers(dest="shadow_command", metavar="COMMAND")
    s.set_defaults(func=lambda a: (s.print_help(), EXIT_BAD_INPUT)[1])
    r = ss.add_parser("report", help="per target: agreement, differences, reasons and cost against the native one",
                      description="Per target of the run configuration, from the audit of its shadow run: the share "
                                  "of syncs where scalebridge decided what the native autoscaler decided, the mean "
                                  "and worst difference, the stages at which scalebridge departed (most frequent "
                                  "first), whether the native autoscaler's inputs matched, and the instance-hours "
                                  "each would have used. Exit 0; 1 when no target has a shadow record; 2 for bad "
                                  "input. Reference: docs/shadow.md")
    r.add_argument("config", metavar="CONFIG", help="the run configuration of the shadow run (YAML)")
    r.add_argument("targets", nargs="*", metavar="TARGET", help="the targets to report, by name (default: all)")
    r.add_argument("--since", type=DURATION_MORE_THAN_ZERO, default=None, metavar="DURATION",
                   help="only the last DURATION of records (24h, 7d), counted back from the audit's latest record")
    r.add_argument("--audit", metavar="FILE|-", default=None,
                   help="the audit the shadow run wrote (default: the configuration's `audit:`)")
    r.add_argument("--output", choices=("text", "json"), default="text", help="for a person, or JSON for scripts")
    r.add_argument("--plot", metavar="FILE.png", default=None,
                   help="draw both sizes over time with the load, per target (needs matplotlib)")
    r.set_defaults(func=cmd_shadow_report, command="shadow report")
