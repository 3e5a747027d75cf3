"""Durations and quantities as the protocol writes them.

Durations: a number of seconds, ``"90s"``, ``"5m"``, ``"1h30m"``, ``"2d"`` or
ISO-8601 (``"PT5M"``, ``"P1DT2H"``). Quantities: a JSON number or a Kubernetes
quantity string (``"500m"``, ``"2"``, ``"1Gi"``, ``"1e3"``), parsed exactly as
``k8s.io/apimachinery/pkg/api/resource`` does (suffixes n u m k M G T P E and
Ki Mi Gi Ti Pi Ei; decimal exponents).

Both are bounded before anything is expanded, so that parsing costs the same for
any text (docs/protocol.md, limits): a quantity has at most
:data:`MAX_QUANTITY_DIGITS` digits before and as many after its decimal point and
a decimal exponent of at most two digits; a duration is at most
:data:`MAX_DURATION_TEXT` characters long and at most :data:`MAX_DURATION_SECONDS`.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "MAX_NUMBER", "MAX_INT", "MAX_QUANTITY_DIGITS", "MAX_QUANTITY_EXPONENT", "MAX_DURATION_SECONDS", "MAX_DURATION_TEXT",
    "parse_duration", "parse_quantity", "milli_value", "exact", "decimal_pair", "format_milli",
    "format_number", "ceil_exact",
]

MAX_NUMBER = 1e100
"""The largest magnitude of a JSON number with a fraction or an exponent."""
MAX_INT = 2**63 - 1
"""The largest magnitude of a JSON integer: int64, as the providers' APIs carry counts and sizes."""
MAX_QUANTITY_DIGITS = 40
"""Digits of a quantity string's integer part, and of its fractional part."""
MAX_QUANTITY_EXPONENT = 99
"""The largest decimal exponent of a quantity string (``"1e99"``, ``"1e-99"``)."""
MAX_DURATION_SECONDS = 1e11
"""The longest duration: about 3,170 years, past any window or period a provider has."""
MAX_DURATION_TEXT = 64
"""The longest duration string."""

_UNIT_SECONDS = {"ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIMPLE = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:ms|s|m|h|d|w))+\s*$")
_SIMPLE_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h|d|w)")
_ISO = re.compile(
    r"^P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def _bounded_seconds(seconds: float) -> float:
    if not math.isfinite(seconds) or abs(seconds) > MAX_DURATION_SECONDS:
        raise ValueError(f"a duration must be finite and at most {MAX_DURATION_SECONDS:g} seconds")
    return seconds


@lru_cache(maxsize=4096)
def _parse_duration_text(text: str) -> float:
    t = text.strip()
    if not t:
        raise ValueError("empty duration")
    if len(t) > MAX_DURATION_TEXT:
        raise ValueError(f"a duration string is at most {MAX_DURATION_TEXT} characters long")
    try:
        d = Decimal(t)
    except InvalidOperation:
        pass
    else:
        if not d.is_finite() or d.adjusted() > 11:   # checked before any expansion
            raise ValueError(f"a duration must be finite and at most {MAX_DURATION_SECONDS:g} seconds")
        return _bounded_seconds(float(d))
    if _SIMPLE.match(t):
        total = Fraction(0)
        for num, unit in _SIMPLE_PART.findall(t):
            total += Fraction(num) * _UNIT_SECONDS[unit]
        return _bounded_seconds(float(total))
    m = _ISO.match(t.upper())
    if m and t.upper() not in ("P", "PT") and not t.upper().endswith("T"):
        parts = {k: Fraction(v) if v else Fraction(0) for k, v in m.groupdict().items()}
        return _bounded_seconds(float(parts["w"] * 604800 + parts["d"] * 86400 + parts["h"] * 3600
                                      + parts["m"] * 60 + parts["s"]))
    raise ValueError(
        f"invalid duration {text!r}: use seconds (90), a unit string (\"90s\", \"5m\", \"1h\") "
        "or ISO-8601 (\"PT5M\")")


def parse_duration(value: object) -> float:
    """Seconds from a number, a unit string or an ISO-8601 duration."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string like \"5m\", not a boolean")
    if isinstance(value, int):
        if abs(value) > MAX_DURATION_SECONDS:   # before float(): a 401-digit int overflows it
            raise ValueError(f"a duration must be finite and at most {MAX_DURATION_SECONDS:g} seconds")
        return float(value)
    if isinstance(value, float):
        return _bounded_seconds(value)
    if isinstance(value, str):
        return _parse_duration_text(value)
    raise ValueError(f"a duration must be seconds or a string like \"5m\", got {type(value).__name__}")


_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:\d{1,%(d)d}(?:\.\d{0,%(d)d})?|\.\d{1,%(d)d}))"
    r"(?:(?P<exp>[eE][+-]?\d{1,2})|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$" % {"d": MAX_QUANTITY_DIGITS}
)
_SUFFIX = {
    None: Fraction(1), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}


@lru_cache(maxsize=65536)
def _parse_quantity_text(text: str) -> Fraction:
    m = _QUANTITY.match(text.strip()) if len(text) <= 2 * MAX_QUANTITY_DIGITS + 8 else None
    if not m:
        raise ValueError(
            f"invalid quantity {text[:60]!r}: expected a number or a Kubernetes quantity such as "
            "\"500m\", \"2\", \"1.5\", \"100Mi\", \"1Gi\" (at most "
            f"{MAX_QUANTITY_DIGITS} digits each side of the point, an exponent of at most two digits)")
    num = Fraction(m.group("num"))
    if m.group("exp"):
        return num * Fraction(10) ** int(m.group("exp")[1:])
    return num * _SUFFIX[m.group("suffix")]


@lru_cache(maxsize=65536)
def decimal_pair(x: float) -> tuple[int, int]:
    """``(numerator, denominator)``, in lowest terms, of :func:`exact` of a finite
    float: an integral float is its integer; any other stands for the shortest
    decimal that reads back as it (``repr``), which is what the JSON text wrote —
    0.29 is 29/100, not the binary double (``Fraction(repr(x))``, read without the
    string parser of ``Fraction``)."""
    if not math.isfinite(x):
        raise ValueError("expected a finite number")
    if x.is_integer():
        return int(x), 1
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, digits = mantissa.partition(".")
    n, d = int(whole + digits), 10 ** len(digits)
    if exponent:
        e = int(exponent)
        if e >= 0:
            n *= 10 ** e
        else:
            d *= 10 ** -e
    g = math.gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


@lru_cache(maxsize=65536)
def _exact_float(x: float) -> Fraction:
    # The decimal the JSON text meant (0.29 is 29/100, not the binary double).
    return Fraction(*decimal_pair(x))


def exact(value: object) -> Fraction | int:
    """The exact rational value of a protocol number or quantity."""
    t = type(value)   # the validated types first, each as the chain below answers it:
    if t is str:      # ``isinstance(value, Fraction)`` is an ABC check (Python code) a string need not pay
        return _parse_quantity_text(value)
    if t is int:
        return value
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("expected a finite number")
        return int(value) if value.is_integer() else _exact_float(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, str):
        return _parse_quantity_text(value)
    raise ValueError(f"expected a number or a quantity string, got {type(value).__name__}")


parse_quantity = exact


def none_negative(values) -> bool:
    """Whether none of ``values`` (a collection, not an iterator) can be negative, found
    at C speed for the common shapes: all quantity strings, none written with a ``-``
    (only such a string can be negative), or all numbers whose least is
    not below zero (``min`` never skips a negative that comes after a first number, and a
    NaN first stays its result, which is not ``>= 0``). Any other mix (a null, a number
    beside a string, a ``-`` in a string): False, and the caller looks value by value (with :func:`exact`).
    The first value says which test to try: a ``join`` that fails on numbers raises, and a
    raised exception costs more than the test itself."""
    for first in values:
        break
    else:
        return True    # no value at all
    if type(first) is str:
        try:
            return "-" not in "".join(values)
        except TypeError:   # a string beside something else: look one by one
            return False
    try:
        return min(values) >= 0
    except TypeError:   # a mix of types: look one by one
        return False


@lru_cache(maxsize=65536)
def _milli_cached(value: object) -> int:
    if type(value) is float:
        n, d = decimal_pair(value)
        return -((-n * 1000) // d)
    q = exact(value)
    return math.ceil(q * 1000)


def milli_value(value: object) -> int:
    """``resource.Quantity.MilliValue()``: the value in milli-units, rounded up
    (apimachinery ``ScaledValue`` rounds towards +inf)."""
    if type(value) is int:
        return value * 1000
    return _milli_cached(value)


def ceil_exact(x: Fraction | int | float) -> int:
    return math.ceil(x)


_SI = ("", "k", "M", "G", "T", "P", "E")


def format_milli(milli: int) -> str:
    """A milli-value in Kubernetes' canonical DecimalSI form, as ``kubectl``
    prints HPA status values: ``450m``, ``2``, ``1500m``, ``1k``, ``262144k``."""
    if milli % 1000:
        return f"{milli}m"
    n = milli // 1000
    i = 0
    while n and n % 1000 == 0 and i < len(_SI) - 1:
        n //= 1000
        i += 1
    return f"{n}{_SI[i]}"


def format_number(x: Fraction | int | float) -> int | float:
    """An exact number as JSON: an int when integral, else a float."""
    if isinstance(x, int):
        return x
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else float(x)
    return int(x) if float(x).is_integer() else float(x)
