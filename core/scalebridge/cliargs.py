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

__all__ = ["EXIT_BAD_INPUT", "Parser", "say", "parsed", "number", "DURATION_MORE_THAN_ZERO",
           "DURATION_ZERO_OR_MORE"]

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


#: where :func:`say` sends its lines instead of stderr (set by ``run --log-format json``)
SAY_HOOK: Optional[Callable[[str, str], None]] = None


def _bad_value(e: argparse.ArgumentError) -> bool:
    """Whether argparse refused a flag's value — its type refused the text (the
    type's exception is the context of argparse's), or it is not one of the
    flag's ``choices`` — rather than the flag's place or count."""
    converting = isinstance(e.__context__, (argparse.ArgumentTypeError, TypeError, ValueError))
    return e.argument_name is not None and (converting or e.message.startswith("invalid choice"))


class Parser(argparse.ArgumentParser):
    """argparse's parser (its sub-commands' too), saying a bad flag value in one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("exit_on_error", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Optional[Sequence[str]] = None,
                         namespace: Optional[argparse.Namespace] = None) -> tuple[argparse.Namespace, list[str]]:
        try:
            return super().parse_known_args(args, namespace)
        except argparse.ArgumentError as e:
            if _bad_value(e):
                sys.stdout.flush()
                self.exit(EXIT_BAD_INPUT, f"{self.prog}: {e.argument_name}: {e.message}\n")
            self.error(str(e))


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
