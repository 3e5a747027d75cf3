"""``scalebridge render``, ``scalebridge import`` and ``scalebridge apply``: the argparse wiring.

Native configuration goes to standard output, the loss report to standard error
(one ``lost:`` line per feature, ``note:`` for placeholders and what a policy does
not hold); bad input exits 2 with one line naming the field, ``render --strict``
exits 1 while anything is lost or left a placeholder, and a translator that fails
(a bug in it) is one line naming its plugin, exit 1.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Optional

import yaml

from . import NativeError, TranslatorFailure, dump, import_all, render
from .common import read_parameters, yaml_document

EXIT_INCOMPLETE = 1
EXIT_TRANSLATOR_FAILED = 1
EXIT_BAD_INPUT = 2
_FORMATS = "a registered translator's name (`scalebridge plugins` lists them: the built-in providers' and plugins')"


def _format(name: str) -> str:
    """``--to``/``--from``: a registered translator's name (the registry is read only
    when the flag is given); any other is argparse's one-line refusal, exit 2."""
    from .. import registry
    if name not in registry.current().translators:
        raise argparse.ArgumentTypeError(f"invalid choice: {name!r} ({registry.translator_choices(name)})")
    return name


def add_translate_commands(sub: Any) -> None:
    """Register ``render``, ``import`` and ``apply`` on the main parser's subparsers."""
    r = sub.add_parser(
        "render", help="write a policy as a provider's native autoscaler configuration; what it loses on stderr",
        description="Writes POLICY as the native autoscaler of --to: an autoscaling/v2 HorizontalPodAutoscaler "
                    "(YAML), a Compute Autoscaler resource (JSON), a Microsoft.Insights/autoscalesettings ARM "
                    "resource (JSON), the Auto Scaling and CloudWatch requests keyed by operation (JSON), or a "
                    "plugin's format. One stderr line per policy feature the target cannot express (lost:) and "
                    "per value left a placeholder (note: naming the --target key that fills it). "
                    "docs/translate.md")
    r.add_argument("policy", metavar="POLICY", help="a policy file (- for standard input)")
    r.add_argument("--to", required=True, metavar="FORMAT", type=_format, help=f"the translator: {_FORMATS}")
    r.add_argument("--strict", action="store_true",
                   help="exit 1 when anything is lost or left a placeholder")
    r.add_argument("--target", metavar="REF", default=None,
                   help="inline YAML or JSON: the run configuration's `ref` for that provider, e.g. "
                        "'{kind: Deployment, namespace: shop, name: web}', plus what else the native configuration "
                        "needs (azure location; aws region and account) and, as `metrics`, the target's metric "
                        "sources; a key it does not take is refused with the ones it does")
    r.set_defaults(func=cmd_render)
    i = sub.add_parser(
        "import", help="read a provider's native autoscaler configuration as scalebridge policies",
        description="Reads FILE (an HPA YAML stream, a Compute Autoscaler JSON, an ARM template or autoscale "
                    "setting, Auto Scaling requests, a DescribePolicies response or a CloudFormation template) "
                    "and writes one policy per autoscaler in it, named after it, with the provider's semantics: "
                    "a YAML stream of policy documents on stdout, or one file per policy with --out. What each "
                    "loses on stderr, naming the policy. Exit 2, writing nothing, when a policy would not be "
                    "valid (`scalebridge validate --semantics PROVIDER` accepts every policy an import writes).")
    i.add_argument("file", metavar="FILE", help="the native configuration (- for standard input)")
    i.add_argument("--from", dest="from_", required=True, metavar="FORMAT", type=_format,
                   help=f"the translator: {_FORMATS}")
    i.add_argument("--out", metavar="DIR", help="write each policy to DIR/NAME.yaml (one file per autoscaler; the "
                                                "paths on stdout) instead of a YAML stream on stdout")
    i.add_argument("--parameters", "-p", action="append", default=[], metavar="FILE|KEY=VALUE",
                   help="a template parameter's value, as `az deployment group create --parameters` takes them: "
                        "KEY=VALUE (read as the parameter's declared type) or a parameters file (FILE or @FILE, "
                        "its parameters' {\"value\": …}); repeat it, a later one wins. Without it a parameter "
                        "is its defaultValue (formats with template parameters: ARM)")
    i.set_defaults(func=cmd_import)
    a = sub.add_parser(
        "apply", help="create or update each target's native autoscaler from its policy",
        description="For every target of the run configuration, render its policy for its provider and create or "
                    "update that native autoscaler through the provider plugin's client (a provider declaring "
                    "Capability.TRANSLATE, with a translator registered for it): the cloud's own autoscaler "
                    "then does the work. --dry-run prints the difference with what is there and writes nothing. "
                    "Exit 1 when a target failed.")
    a.add_argument("config", metavar="CONFIG", help="the run configuration (YAML)")
    a.add_argument("--native", action="store_true",
                   help="deprecated: apply is always native (the cloud's own autoscaler does the work)")
    a.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    a.add_argument("--state", metavar="PATH", help="the run state to check (default: the configuration's `state:`, "
                                                   "else scalebridge-state.db): a target in it is refused")
    a.set_defaults(func=_apply)


def _say(command: str, kind: str, lines: list[str], label: Optional[str] = None) -> None:
    for line in lines:
        print(f"scalebridge {command}: {kind}: {label + ': ' if label else ''}{line}", file=sys.stderr)


def _failed(command: str, e: TranslatorFailure) -> int:
    print(f"scalebridge {command}: {e}", file=sys.stderr)
    return EXIT_TRANSLATOR_FAILED


def _target(text: str) -> dict:
    ref = yaml_document(text, "--target", "YAML or JSON")
    if not isinstance(ref, dict):
        raise NativeError("--target", "expected a mapping such as '{kind: Deployment, namespace: shop, name: web}'")
    return ref


def cmd_render(args: argparse.Namespace) -> int:
    from ..engine import read_policy_file
    from ..policy import fraction_targets
    from .common import path
    ref = _target(args.target) if args.target is not None else None
    policy = read_policy_file(args.policy)
    try:
        native, losses = render(policy, args.to, ref)
        text = dump(native, args.to)
    except TranslatorFailure as e:
        return _failed("render", e)
    sys.stdout.write(text)
    # rendered as written (a provider takes it), but most likely not what was meant
    _say("render", "note", [f"{path(*loc)}: {message}" for loc, message in fraction_targets(policy)])
    _say("render", "note", losses.notes)
    _say("render", "lost", losses.lines)
    return EXIT_INCOMPLETE if args.strict and losses.incomplete else 0


def _apply(args: argparse.Namespace) -> int:
    from ..cliargs import deprecated
    from .apply import cmd_apply
    if args.native:
        deprecated("apply", "--native", "apply is always native; leave the flag out")
    return cmd_apply(args)


def _read(path: str) -> str:
    from ..inputfile import InputFileError, read_text
    try:
        return read_text(path)
    except InputFileError as e:
        raise NativeError(path, e.reason) from None


def _invalid(policy: dict) -> Optional[str]:
    """Why ``validate --semantics SEMANTICS`` would refuse ``policy`` (the policy's own
    semantics), or None."""
    from ..engine import load_policy, resolve_semantics
    from ..errors import RequestError
    try:
        resolve_semantics(policy.get("semantics"), path="$.semantics").check(load_policy(policy))
    except RequestError as e:
        return str(e)
    return None


def _labels(results: list[tuple[dict, Any]]) -> list[Optional[str]]:
    """What each imported policy's lines are prefixed with: its name, or its place in
    the input when it has none (nothing for a lone unnamed one)."""
    if len(results) == 1:
        return [results[0][0].get("name")]
    return [p.get("name") or f"object {k + 1}" for k, (p, _) in enumerate(results)]


def _file_names(results: list[tuple[dict, Any]], stem: str) -> list[str]:
    """``NAME.yaml`` for each policy (its name made a file name; the input's stem for
    one without), unique."""
    out: list[str] = []
    for k, (policy, _) in enumerate(results):
        base = re.sub(r"[^A-Za-z0-9._-]+", "-", policy.get("name") or "").strip(".-") or \
            (stem if len(results) == 1 else f"{stem}-{k + 1}")
        name, n = f"{base}.yaml", 2
        while name in out:
            name, n = f"{base}-{n}.yaml", n + 1
        out.append(name)
    return out


def cmd_import(args: argparse.Namespace) -> int:
    try:
        results = import_all(_read(args.file), args.from_, read_parameters(args.parameters))
    except TranslatorFailure as e:
        return _failed("import", e)
    labels = _labels(results)
    invalid = 0
    for (policy, losses), label in zip(results, labels):
        _say("import", "note", losses.notes, label)
        _say("import", "lost", losses.lines, label)
        why = _invalid(policy)
        if why is not None:
            invalid += 1
            print(f"scalebridge import: {args.file}: {label + ': ' if label else ''}the imported policy would not "
                  f"be valid ({why}): what the input left out is on the lost: lines above; nothing written",
                  file=sys.stderr)
    if invalid:
        return EXIT_BAD_INPUT
    docs = [policy for policy, _ in results]
    if args.out is None:
        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False))
        return 0
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        stem = Path(args.file).stem if args.file != "-" else "policy"
        for policy, name in zip(docs, _file_names(results, stem)):
            (out / name).write_text(yaml.safe_dump(policy, sort_keys=False, default_flow_style=False),
                                    encoding="utf-8")
            print(out / name)
    except OSError as e:
        raise NativeError(str(args.out), f"cannot write: {e.strerror or e}") from None
    return 0
