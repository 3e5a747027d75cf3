"""What every ``scalebridge`` command shares on its command line: the parser,
flag types that check a value's range, and the one-line error.

A flag's bad value (``--tick 1e99``, ``--workload tsunami``) is one line on
stderr, ``scalebridge simulate: --tick: why``, exit 2 — the shape of every other
bad-input line of the commands. A flag argparse cannot place (unknown, missing,
without its value) keeps argparse's usage block and message: there the usage is
the answer (https://docs.python.org/3/library/argparse.html#exiting-methods).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Optional, Sequence, TypeVar

from .units import parse_duration

__all__ = ["EXIT_BAD_INPUT", "Parser", "say", "deprecated", "parsed", "number", "DURATION_MORE_THAN_ZERO",
           "DURATION_ZERO_OR_MORE", "OUTPUT_FORMATS"]

T = TypeVar("T")

EXIT_BAD_INPUT = 2


def say(command: str, text: str) -> None:
    """One line on stderr, ``scalebridge COMMAND: text``, after what stdout holds so
    far; a secret in it is masked (:func:`scalebridge.secrets.redact`). Under
    ``run --log-format json`` the line is a JSON log record instead (:data:`SAY_HOOK`)."""
    from .secrets import redact
    text = redact(text)
    if SAY_HOOK is not None:
        SAY_HOOK(command, text)
        return
    sys.stdout.flush()
    print(f"scalebridge {command}: {text}", file=sys.stderr)


def deprecated(command: str, old: str, new: str) -> None:
    """The one line an old spelling of a flag earns: it still works for this release,
    and says what to write instead."""
    say(command, f"{old} is deprecated and will be removed in the next release: {new}")


#: what ``-o/--output`` takes, in every command that prints results: the format on stdout
#: (a file is ``--out FILE``)
OUTPUT_FORMATS = ("text", "json", "csv")


#: where :func:`say` sends its lines instead of stderr (set by ``run --log-format json``)
SAY_HOOK: Optional[Callable[[str, str], None]] = None


def _bad_value(e: argparse.ArgumentError) -> bool:
    """Whether argparse refused a flag's value — its type refused the text (the
    type's exception is the context of argparse's), or it is not one of the
    flag's ``choices`` — rather than the flag's place or count."""
    converting = isinstance(e.__context__, (argparse.ArgumentTypeError, TypeError, ValueError))
    return e.argument_name is not None and (converting or e.message.startswith("invalid choice"))


class Parser(argparse.ArgumentParser):
    """argparse's parser (its sub-commands' too), saying a bad flag value in one line.

    ``dash_values``: the flags whose value may start with ``-`` as written (``--start
    -7d``, a time relative to now): argparse takes ``-7d`` for a flag of its own
    (https://docs.python.org/3/library/argparse.html#arguments-containing), so such a
    value is joined to its flag (``--start=-7d``) before parsing."""

    dash_values: frozenset[str] = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("exit_on_error", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Optional[Sequence[str]] = None,
                         namespace: Optional[argparse.Namespace] = None) -> tuple[argparse.Namespace, list[str]]:
        if args is not None and self.dash_values:
            args = _join_dash_values(list(args), self.dash_values, set(self._option_string_actions))
        try:
            return super().parse_known_args(args, namespace)
        except argparse.ArgumentError as e:
            if _bad_value(e):
                sys.stdout.flush()
                self.exit(EXIT_BAD_INPUT, f"{self.prog}: {e.argument_name}: {e.message}\n")
            self.error(str(e))


def _join_dash_values(args: list[str], flags: frozenset[str], options: set[str]) -> list[str]:
    """``--start -7d`` as ``--start=-7d``: a value after one of ``flags`` that starts
    with ``-`` but is none of the parser's own options (nor ``--``)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        nxt = args[i + 1] if i + 1 < len(args) else None
        if a in flags and nxt is not None and nxt.startswith("-") and nxt != "--" and nxt.split("=")[0] not in options:
            out.append(f"{a}={nxt}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def parsed(parse: Callable[[str], T], accept: Callable[[T], bool] = lambda v: True,
           refusal: str = "") -> Callable[[str], T]:
    """A flag type: ``parse(text)``, whose ValueError says what is wrong; a value
    that ``accept`` refuses is refused with ``refusal``."""
    def flag(text: str) -> T:
        try:
            value = parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not accept(value):
            raise argparse.ArgumentTypeError(refusal)
        return value
    return flag


def number(convert: Callable[[str], T], accept: Callable[[T], bool], expected: str) -> Callable[[str], T]:
    """A flag type: ``convert(text)`` (``int``, ``float``) that ``accept`` takes,
    else ``expected {expected}, got 'text'``."""
    def flag(text: str) -> T:
        try:
            value = convert(text)
            ok = accept(value)
        except ValueError:
            ok = False
        if not ok:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value
    return flag


#: a duration flag (90, 5m, PT1H) of more than 0 seconds
DURATION_MORE_THAN_ZERO = parsed(parse_duration, lambda v: v > 0, "must be more than 0 seconds")
#: a duration flag of 0 seconds or more
DURATION_ZERO_OR_MORE = parsed(parse_duration, lambda v: v >= 0, "must be zero or more seconds")
