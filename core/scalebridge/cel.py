"""CEL (the Common Expression Language, https://github.com/google/cel-spec) for formula metrics.

A formula metric's ``expression`` is compiled once per policy, type-checked with
every other metric of the policy declared as a ``double`` variable, and evaluated
once per decision with the metrics' values.

Which implementation, and why — correctness first, then speed, measured by
``benchmarks/controls.py`` (its first table; the other two installed in a scratch
virtualenv: ``pip install common-expression-language cel-python``) on this
project's 2-core machine, 20,000 evaluations each of KEDA's count example and an
average, and 8 checks of CEL's numeric rules (int, uint and double kept apart,
errors on overflow and division by zero, NaN unequal to itself):

    implementation               import ms  compile µs  count µs  average µs  checks
    cel-expr-python                    4.5       261.5      13.6         9.3  8/8
    common-expression-language       288.8       133.8       9.9         3.8  8/8
    cel-python                       113.4       735.0     964.1       274.4  5/8

- ``cel-expr-python`` (the CEL project's Python binding of cel-cpp, the C++
  implementation that runs the cel-spec conformance suite) — chosen, for its
  **type checker**: an unknown name or a mixed-type operation (``a + 1`` with
  ``a`` a double: CEL has no implicit numeric conversions, langdef "Numeric
  Values") is refused when the policy is loaded, with its line and column,
  which is what ``scalebridge validate`` reports; int, uint and double stay
  distinct (``7 / 2`` is 3, ``7 / 2.0`` is refused, ``-7 / 2`` is -3), integer
  overflow and division or modulus by zero are errors, ``1.0 / 0.0`` is +Inf. An
  evaluation never raises: a runtime error is a value of type error. Its ~10 µs
  an evaluation is a few percent of a decision (``Decider.step`` takes 50-250 µs,
  the second table of the benchmark), and importing it costs ~5 ms, once.
- ``common-expression-language`` (cel-rust bindings): as conformant on the
  numeric checks and a few µs faster to evaluate, but it has no type checker —
  ``compile("queu * 2.0")`` and ``compile("queue / 2")`` both succeed and fail
  only when evaluated ("Undefined variable or function: 'queu'"), so
  ``validate`` could not name an unknown metric without evaluating the
  expression on made-up values, and its static ``variables()`` lists
  comprehension variables too; and ``import cel`` loads its command line
  (typer, prompt-toolkit): ~0.3 s the first formula would pay.
- ``cel-python`` (pure Python): ``7 / 2.0`` evaluates to 3 and ``1u + 1`` to 2
  (both are errors in CEL), NaN compares equal to itself, and an evaluation takes
  0.3-1 ms, some 30-70 times longer.

The binding is imported lazily (:func:`_cel`): ``import scalebridge`` and a
policy without formulas never load it.

**Nullable metrics** (a policy whose ``fallback.behavior`` is ``formula``: KEDA 2.20's
``scalingModifiers`` fallback, where a trigger failing past its threshold is ``nil`` in the
formula): the metrics are declared ``google.protobuf.DoubleValue``, CEL's nullable double
(langdef "Wrapper types"), so the checker accepts ``queue != null ? queue : backup`` —
KEDA's ``queue ?? backup`` (expr's nil-coalescing) — and refuses what it refuses for a
double (``queue * 2``). The binding takes no null for a wrapper-typed variable, so the
checked expression is evaluated by a program declaring the same names ``dyn``, with a null
metric bound to ``None``: arithmetic on a null is then a runtime error ("no matching
overload", as expr's on a nil), and an expression that is null evaluates to ``None``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Optional

__all__ = ["CelError", "Compiled", "compile_formula", "IDENTIFIER"]

IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
"""A CEL identifier (langdef "Syntax": IDENT ::= [_a-zA-Z][_a-zA-Z0-9]* - RESERVED)."""
_RESERVED = frozenset("true false null in as break const continue else for function if import let loop "
                      "package namespace return var void while".split())
_POSITION = re.compile(r"<input>:(\d+):(\d+): ")


class CelError(ValueError):
    """An expression CEL refuses: the message says what and where (line and column)."""


_MODULE = None


def _cel():
    global _MODULE
    if _MODULE is None:
        try:
            from cel_expr_python import cel   # lazy: only a policy with a formula pays for it
        except ImportError as e:   # pragma: no cover - a dependency of scalebridge
            raise CelError("formula metrics need the cel-expr-python package (pip install cel-expr-python)") from e
        _MODULE = cel
    return _MODULE


def usable_name(name: str) -> bool:
    """Whether a metric named ``name`` can be written in an expression."""
    return bool(IDENTIFIER.match(name)) and name not in _RESERVED


def _message(text: str) -> str:
    """cel-cpp's ``INVALID_ARGUMENT: ERROR: <input>:1:3: msg\\n | expr\\n | ..^`` as one line:
    ``msg (line 1, column 3)``; several errors are joined with ``; ``."""
    out = []
    for part in text.split("ERROR: ")[1:] or [text]:
        first = part.strip().splitlines()[0] if part.strip() else part
        m = _POSITION.match(first)
        if m:
            where = f"column {m.group(2)}" if m.group(1) == "1" else f"line {m.group(1)}, column {m.group(2)}"
            first = f"{first[m.end():].strip()} (at {where} of the expression)"
        out.append(first.replace(" (in container '')", ""))
    return "; ".join(out)


@dataclass(frozen=True)
class Compiled:
    """A type-checked expression and the metric names it references."""
    expression: str
    names: tuple            # every metric name declared to it, in policy order
    references: frozenset   # the declared names the expression uses
    _program: object
    nullable: bool = False  # the metrics may be null (module docstring, "Nullable metrics")

    def evaluate(self, values: Mapping[str, Optional[float]]) -> Optional[float]:
        """The expression's value for ``values`` (every referenced name bound to a
        float; a nullable formula's may be None, CEL's null). Raises :class:`CelError`
        for a runtime error (division by zero, overflow, arithmetic on a null) or a
        result that is not a finite number; None: a nullable formula evaluated to null."""
        cel = _cel()
        try:
            if self.nullable:
                data = {k: None if values[k] is None else float(values[k]) for k in self.references}
            else:
                data = {k: float(values[k]) for k in self.references}   # type: ignore[arg-type]
            v = self._program.eval(data=data)  # type: ignore[attr-defined]
        except Exception as e:   # noqa: BLE001 - the binding's own failures are this formula's
            raise CelError(_message(str(e))) from None
        t = v.type()
        if t == cel.Type.ERROR:
            raise CelError(_message(str(v.value())).replace("INVALID_ARGUMENT: ", "").replace("OUT_OF_RANGE: ", "")
                           .replace("UNKNOWN: ", ""))
        if self.nullable and t == cel.Type.NULL:
            return None
        x = v.value()
        if type(x) is bool or not isinstance(x, (int, float)):
            raise CelError(f"the expression evaluated to {t.name()} {x!r}, not a number")
        x = float(x)
        if not math.isfinite(x):
            raise CelError(f"the expression evaluated to {x}, not a finite number")
        return x


@lru_cache(maxsize=256)
def compile_formula(expression: str, names: tuple, nullable: bool = False) -> Compiled:
    """Parse and type-check ``expression`` with each of ``names`` a ``double``
    variable (``nullable``: a nullable double, module docstring). Raises
    :class:`CelError` naming the first problem and its position: a syntax error, a
    name it does not know (with the names it does), an operation with no overload
    for its types, a result that is not a number."""
    cel = _cel()
    usable = tuple(n for n in names if usable_name(n))
    declared_as = cel.Type(_NULLABLE_DOUBLE) if nullable else cel.Type.DOUBLE

    def check(declared: tuple):
        env = cel.NewEnv(variables={n: declared_as for n in declared})
        return env.compile(expression)

    try:
        program = check(usable)
    except Exception as e:   # noqa: BLE001 - cel-cpp raises RuntimeError with its checker's report
        msg = _message(str(e))
        if "undeclared reference" in msg:
            known = ", ".join(usable) if usable else "none"
            msg += f"; the metrics it can name: {known}"
        raise CelError(msg) from None
    rt = program.return_type()
    if rt not in (cel.Type.DOUBLE, cel.Type.INT, cel.Type.UINT, cel.Type.DYN) and \
            not (nullable and rt.name() in (_NULLABLE_DOUBLE, "double_wrapper", "wrapper(double)")):
        raise CelError(f"the expression is of type {rt.name().lower()}; a formula computes a number (double)")
    # the names it references: those without which it no longer type-checks
    refs = []
    for n in usable:
        try:
            check(tuple(x for x in usable if x != n))
        except Exception:   # noqa: BLE001
            refs.append(n)
    if nullable:   # checked as nullable doubles; run where a name may be bound to null
        program = cel.NewEnv(variables={n: cel.Type.DYN for n in usable}).compile(expression)
    return Compiled(expression, usable, frozenset(refs), program, nullable)


#: CEL's nullable double (a wrapper type), which a null metric is declared as
_NULLABLE_DOUBLE = "google.protobuf.DoubleValue"

