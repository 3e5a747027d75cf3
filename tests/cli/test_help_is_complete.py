"""Every subcommand and every option of ``scalebridge`` says what it is in ``--help``: a newcomer
found ``plugins``, ``schema``, ``explain``, ``state`` and ``observe --output`` with thin or no help.
The test walks the argparse parsers the command builds."""
from __future__ import annotations

import argparse

from scalebridge.cli import build_parser


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))


def _subcommand_helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                out[choice.dest] = choice.help or ""
    return out


def test_every_subcommand_and_option_has_help():
    missing = []
    for path, parser in _walk(build_parser()):
        for name, text in _subcommand_helps(parser).items():
            if len(text.split()) < 3:
                missing.append(f"scalebridge {' '.join((*path, name))}: no help line in the command list")
        if path and len((parser.description or "").split()) < 6:
            missing.append(f"scalebridge {' '.join(path)}: no description in its --help")
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction)):
                continue
            if action.help in (None, "") or action.help == argparse.SUPPRESS:
                flag = "/".join(action.option_strings) or action.metavar or action.dest
                missing.append(f"scalebridge {' '.join(path)} {flag}: no help")
    assert not missing, "\n".join(missing)


def test_help_walk_sees_the_nested_commands():
    paths = {path for path, _ in _walk(build_parser())}
    assert {("state", "show"), ("state", "reset"), ("observe",), ("plugins",), ("schema",), ("explain",)} <= paths
