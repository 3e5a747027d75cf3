"""Errors that reach a user as one clear line, never as a traceback."""
from __future__ import annotations

import math

from typing import Iterable, Sequence

from .units import MAX_INT, MAX_NUMBER


def json_path(loc: Iterable[object], root: str = "$") -> str:
    """``("observations", "members", 0, "ready")`` → ``$.observations.members[0].ready``."""
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            s = str(part)
            out += f".{s}" if s.replace("_", "").replace("-", "").isalnum() else f"[{s!r}]"
    return out


class ScalebridgeError(Exception):
    """Base class for errors meant for a user."""


class RequestError(ScalebridgeError):
    """A malformed decision request: exit status 2, one line naming the JSON path."""

    def __init__(self, path: Sequence[object] | str, message: str):
        self.path = path if isinstance(path, str) else json_path(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class SemanticsFailure(ScalebridgeError):
    """A semantics raised while deciding: a bug in it (or in the plugin that provides
    it), not bad input. The message names the semantics and its plugin."""


class FieldError(ValueError):
    """A validator's complaint about one field below the model it validates:
    reported at that field's location (``loc`` relative to the model), so the
    one-line message names the field by its JSON path."""

    def __init__(self, loc: Sequence[object] | str, message: str):
        self.loc = (loc,) if isinstance(loc, (str, int)) else tuple(loc)
        super().__init__(message)


class PolicyError(ScalebridgeError):
    """One or more problems in a policy file, each with its location."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


_UNION_TAGS = {"int", "float", "str", "constrained-str", "constrained-int", "constrained-float", "bool"}
_BOUND_ERRORS = ("less_than_equal", "greater_than_equal")
QUANTITY_HINT = ("expected a number or a Kubernetes quantity such as \"500m\", \"2\", \"1.5\", "
                 "\"100Mi\", \"1Gi\"")


def _non_finite(v: object) -> str:
    """``NaN``, ``Infinity`` or ``-Infinity`` (as JSON writes them) for a float that is
    not finite, else ``""``: what a message says it received."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else "Infinity" if v > 0 else "-Infinity"
    return ""


def normalize_errors(errors: list[dict]) -> list[tuple[tuple, str, str, object]]:
    """pydantic errors as (location, error type, message, input), one per location:
    the alternatives of a number-or-quantity union collapse into one message."""
    out: list[tuple[tuple, str, str, object]] = []
    tags: dict[tuple, set] = {}
    bounds: dict[tuple, str] = {}   # a number out of range, whichever alternative said it
    for e in errors:
        loc = tuple(x for x in e["loc"] if not (isinstance(x, str) and (x.startswith("function-") or "[" in x)))
        tagged = False
        while loc and loc[-1] in _UNION_TAGS:
            tags.setdefault(loc[:-1], set()).add(loc[-1])
            loc = loc[:-1]
            tagged = True
        if tagged and e["type"] in _BOUND_ERRORS:
            bounds[loc] = e["msg"]
    seen: set[tuple] = set()
    for e in errors:
        loc = tuple(x for x in e["loc"] if not (isinstance(x, str) and (x.startswith("function-") or "[" in x)))
        while loc and loc[-1] in _UNION_TAGS:
            loc = loc[:-1]
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, FieldError):
            loc = loc + cause.loc
        if loc in seen:
            continue
        seen.add(loc)
        msg = e["msg"].removeprefix("Value error, ")
        kind = e["type"]
        inp = e.get("input")
        if kind in _DATACLASS_ERRORS:   # the policy's types are dataclasses: say it as of any object
            kind, msg = _DATACLASS_ERRORS[kind], _DATACLASS_MESSAGES.get(kind, lambda m: m)(msg)
        if loc in bounds and isinstance(inp, (int, float)) and not isinstance(inp, bool):
            kind = "number"
            limit = f"{MAX_INT}" if isinstance(inp, int) else f"{MAX_NUMBER:g}"
            msg = f"out of range: a number's magnitude is at most {limit} (got {short_repr(inp)})"
        elif loc in tags:
            if "constrained-str" in tags[loc]:
                kind = "quantity"
                msg = (f"invalid quantity {short_repr(inp)}: {QUANTITY_HINT}" if isinstance(inp, str)
                       else f"expected a finite number or a quantity string, got {_non_finite(inp)}"
                       if _non_finite(inp) else f"expected a number or a quantity string, got {_type_name(inp)}")
            else:
                kind = "number"
                msg = (f"expected a finite number, got {_non_finite(inp)}" if _non_finite(inp) else
                       f"expected a number, got {_type_name(inp)}" + (f" {inp!r}" if isinstance(inp, (str, bool)) else ""))
        elif kind in ("int_type", "float_type", "int_from_float", "bool_type", "string_type",
                      "int_parsing", "float_parsing") and not isinstance(inp, (dict, list)):
            msg = f"{msg}, got {_non_finite(inp) or f'{_type_name(inp)} {short_repr(inp)}'}"
        out.append((loc, kind, msg, inp))
    return out


#: a pydantic dataclass's errors, as the same problem of a model is named (unknown keys are
#: ``extra_forbidden`` wherever they are)
_DATACLASS_ERRORS = {"unexpected_keyword_argument": "extra_forbidden", "dataclass_type": "model_type",
                     "dataclass_exact_type": "model_type"}
_DATACLASS_MESSAGES = {
    "unexpected_keyword_argument": lambda msg: "Extra inputs are not permitted",
    "dataclass_type": lambda msg: msg.replace("Input should be a dictionary or an instance of",
                                              "Input should be a valid dictionary or instance of"),
}


def short_repr(x: object, limit: int = 60) -> str:
    """``repr(x)``, cut to ``limit`` characters (a 100,000-digit value is named, not echoed)."""
    r = repr(x) if not isinstance(x, int) or x.bit_length() < 4000 else f"<an integer of {x.bit_length()} bits>"
    return r if len(r) <= limit else r[:limit] + "…"


def _type_name(x: object) -> str:
    return {bool: "a boolean", str: "a string", int: "an integer", float: "a number", type(None): "null",
            list: "a list", dict: "an object"}.get(type(x), type(x).__name__)
