"""``scalebridge render`` and ``scalebridge import``: the argparse wiring.

Native configuration goes to standard output, the loss report to standard
error (one ``lost:`` line per feature, ``note:`` for placeholders and what a
policy does not hold); bad input exits 2 with one line naming the field,
``render --strict`` exits 1 when anything is lost.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from . import PROVIDERS, NativeError, dump, import_all, render
from .common import yaml_document

EXIT_LOST = 1


def add_translate_commands(sub: Any) -> None:
    """Register ``render``, ``import`` and ``apply`` on the main parser's subparsers."""
    r = sub.add_parser(
        "render", help="write a policy as a provider's native autoscaler configuration; what it loses on stderr",
        description="Writes POLICY as the native autoscaler of --to: an autoscaling/v2 HorizontalPodAutoscaler "
                    "(YAML), a Compute Autoscaler resource (JSON), a Microsoft.Insights/autoscalesettings ARM "
                    "resource (JSON), or the Auto Scaling and CloudWatch requests keyed by operation (JSON). "
                    "One stderr line per policy feature the target cannot express. docs/translate.md")
    r.add_argument("policy", metavar="POLICY", help="a policy file (- for standard input)")
    r.add_argument("--to", required=True, choices=PROVIDERS)
    r.add_argument("--strict", action="store_true", help="exit 1 when anything is lost")
    r.add_argument("--target", metavar="REF", default=None,
                   help="the run configuration's `ref` for that provider, inline YAML or JSON, e.g. "
                        "'{kind: Deployment, namespace: shop, name: web}'; without it, a marked placeholder")
    r.set_defaults(func=cmd_render)
    i = sub.add_parser(
        "import", help="read a provider's native autoscaler configuration as a scalebridge policy",
        description="Reads FILE (an HPA YAML stream, a Compute Autoscaler JSON, an ARM template or autoscale "
                    "setting, Auto Scaling requests, a DescribePolicies response or a CloudFormation template) "
                    "and writes a policy file with the provider's semantics; what it loses on stderr.")
    i.add_argument("file", metavar="FILE", help="the native configuration (- for standard input)")
    i.add_argument("--from", dest="from_", required=True, choices=PROVIDERS)
    i.set_defaults(func=cmd_import)
    a = sub.add_parser(
        "apply", help="create or update each target's native autoscaler from its policy (--native)",
        description="For every target of the run configuration, render its policy for its provider and create or "
                    "update that native autoscaler through the provider plugin's client; --dry-run prints the "
                    "difference with what is there and writes nothing. Exit 1 when a target failed.")
    a.add_argument("config", metavar="CONFIG", help="the run configuration (YAML)")
    a.add_argument("--native", action="store_true", required=True,
                   help="translate: the cloud's own autoscaler does the work (the only kind of apply)")
    a.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    a.add_argument("--state", metavar="PATH", help="the run state to check (default: the configuration's `state:`, "
                                                   "else scalebridge-state.db): a target in it is refused")
    a.set_defaults(func=_apply)


def _say(command: str, kind: str, lines: list[str]) -> None:
    for line in lines:
        print(f"scalebridge {command}: {kind}: {line}", file=sys.stderr)


def _target(text: str) -> dict:
    ref = yaml_document(text, "--target", "YAML or JSON")
    if not isinstance(ref, dict):
        raise NativeError("--target", "expected a mapping such as '{kind: Deployment, namespace: shop, name: web}'")
    return ref


def cmd_render(args: argparse.Namespace) -> int:
    from ..policyfile import load_policy_file
    ref = _target(args.target) if args.target is not None else None
    policy = load_policy_file(args.policy)
    native, losses = render(policy, args.to, ref)
    sys.stdout.write(dump(native, args.to))
    _say("render", "note", losses.notes)
    _say("render", "lost", losses.lines)
    return EXIT_LOST if args.strict and losses else 0


def _apply(args: argparse.Namespace) -> int:
    from .apply import cmd_apply
    return cmd_apply(args)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise NativeError(path, f"cannot read: {getattr(e, 'strerror', None) or e}") from None


def cmd_import(args: argparse.Namespace) -> int:
    from ..engine import load_policy
    from ..errors import RequestError
    results = import_all(_read(args.file), args.from_)
    docs = []
    for policy, losses in results:
        try:
            load_policy(policy)
        except RequestError as e:
            raise NativeError(args.file, f"the imported policy is not valid: {e}") from None
        docs.append(policy)
        _say("import", "note", losses.notes)
        _say("import", "lost", losses.lines)
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False))
    return 0
