"""Durations and quantities as the protocol writes them.

Durations: a number of seconds, ``"90s"``, ``"5m"``, ``"1h30m"``, ``"2d"`` or
ISO-8601 (``"PT5M"``, ``"P1DT2H"``). Quantities: a JSON number or a Kubernetes
quantity string (``"500m"``, ``"2"``, ``"1Gi"``, ``"1e3"``), parsed exactly as
``k8s.io/apimachinery/pkg/api/resource`` does (suffixes n u m k M G T P E and
Ki Mi Gi Ti Pi Ei; decimal exponents).
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "parse_duration", "parse_quantity", "milli_value", "exact", "format_milli",
    "format_number", "ceil_exact",
]

_UNIT_SECONDS = {"ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIMPLE = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:ms|s|m|h|d|w))+\s*$")
_SIMPLE_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h|d|w)")
_ISO = re.compile(
    r"^P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


@lru_cache(maxsize=4096)
def _parse_duration_text(text: str) -> float:
    t = text.strip()
    if not t:
        raise ValueError("empty duration")
    try:
        return float(Decimal(t))
    except InvalidOperation:
        pass
    if _SIMPLE.match(t):
        total = Fraction(0)
        for num, unit in _SIMPLE_PART.findall(t):
            total += Fraction(num) * _UNIT_SECONDS[unit]
        return float(total)
    m = _ISO.match(t.upper())
    if m and t.upper() not in ("P", "PT") and not t.upper().endswith("T"):
        parts = {k: Fraction(v) if v else Fraction(0) for k, v in m.groupdict().items()}
        return float(parts["w"] * 604800 + parts["d"] * 86400 + parts["h"] * 3600
                     + parts["m"] * 60 + parts["s"])
    raise ValueError(
        f"invalid duration {text!r}: use seconds (90), a unit string (\"90s\", \"5m\", \"1h\") "
        "or ISO-8601 (\"PT5M\")")


def parse_duration(value: object) -> float:
    """Seconds from a number, a unit string or an ISO-8601 duration."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string like \"5m\", not a boolean")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError("a duration must be finite")
        return float(value)
    if isinstance(value, str):
        return _parse_duration_text(value)
    raise ValueError(f"a duration must be seconds or a string like \"5m\", got {type(value).__name__}")


_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$"
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
    m = _QUANTITY.match(text.strip())
    if not m:
        raise ValueError(
            f"invalid quantity {text!r}: expected a number or a Kubernetes quantity such as "
            "\"500m\", \"2\", \"1.5\", \"100Mi\", \"1Gi\"")
    num = Fraction(m.group("num"))
    if m.group("exp"):
        return num * Fraction(10) ** int(m.group("exp")[1:])
    return num * _SUFFIX[m.group("suffix")]


@lru_cache(maxsize=65536)
def _exact_float(x: float) -> Fraction:
    # The decimal the JSON text meant (0.29 is 29/100, not the binary double).
    return Fraction(repr(x))


def exact(value: object) -> Fraction | int:
    """The exact rational value of a protocol number or quantity."""
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


@lru_cache(maxsize=65536)
def _milli_cached(value: object) -> int:
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
