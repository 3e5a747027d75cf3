"""A small PromQL: the part of the language a policy's metric queries use, parsed
and evaluated over in-memory series, for the local Prometheus server
(:mod:`scalebridge_prometheus.fake_server`).

Supported, with Prometheus 2.x's semantics (``promql/engine.go``, ``promql/functions.go``):

- instant vector selectors ``name{label="v", label!="v", label=~"re", label!~"re"}``
  — the newest sample at or before the evaluation time within the 5-minute
  lookback (``lookbackDelta``), closed at both ends as 2.x is;
- range vector selectors ``sel[5m]`` — the samples in ``[t − 5m, t]``; at the
  top of an instant query they answer a matrix, in a range query they are the
  error Prometheus gives (``invalid expression type "range vector" for range
  query, must be Scalar or instant Vector``);
- ``rate``, ``increase`` (``extrapolatedRate``: counter resets, extrapolation to
  the range's edges within 1.1 average intervals), ``irate``, ``delta``,
  ``avg_over_time``, ``sum_over_time``, ``min_over_time``, ``max_over_time``,
  ``count_over_time``, ``last_over_time``; ``abs``, ``ceil``, ``floor``,
  ``clamp_min``, ``clamp_max``, ``scalar``, ``vector``;
- ``sum``, ``avg``, ``min``, ``max``, ``count`` with ``by (…)`` or ``without (…)``
  before or after the argument;
- ``+ - * / % ^`` between numbers, a vector and a number, or two vectors matched
  one-to-one on their labels (less ``__name__``); unary minus; parentheses.

Anything else a real Prometheus parses (``offset``, ``@``, subqueries,
comparison operators, ``on``/``ignoring``, ``histogram_quantile`` …) is a
``bad_data`` error saying the local server does not implement it — never a
silently different answer. A syntax error is ``bad_data`` with Prometheus's
``LINE:COLUMN: parse error: …`` form.

Evaluation is vectorized over the evaluation times: a node evaluates to one
array per series (NaN where the series has no sample), so a 40,000-step range
query over thousands of series stays fast.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

import numpy as np

__all__ = ["PromQLError", "Store", "Series", "parse", "evaluate", "LOOKBACK_SECONDS"]

#: Prometheus's default ``--query.lookback-delta``
LOOKBACK_SECONDS = 300.0


class PromQLError(ValueError):
    """A query Prometheus answers with ``bad_data`` (HTTP 400); the message is its ``error``."""


@dataclass
class Series:
    """One stored series: its labels (``__name__`` among them) and samples by time."""
    labels: dict[str, str]
    times: np.ndarray
    values: np.ndarray


@dataclass
class Store:
    """The series a local server answers from."""
    series: list[Series] = field(default_factory=list)

    def select(self, matchers: Sequence[tuple[str, str, str]]) -> list[Series]:
        """The matching series, ordered by their label sets as the TSDB returns them."""
        out = [s for s in self.series
               if all(_matches(s.labels.get(name, ""), op, value) for name, op, value in matchers)]
        return sorted(out, key=lambda s: sorted(s.labels.items()))


def _matches(have: str, op: str, want: str) -> bool:
    if op == "=":
        return have == want
    if op == "!=":
        return have != want
    full = re.fullmatch(want, have) is not None   # Prometheus anchors regular expressions
    return full if op == "=~" else not full


# ----------------------------------------------------------------------------- parsing

_DURATION = re.compile(r"(\d+(?:ms|s|m|h|d|w|y))+")
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<op>=~|!~|!=|==|>=|<=|[-+*/%^(){}\[\],=<>@])
""", re.X)
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
AGGREGATIONS = ("sum", "avg", "min", "max", "count")
OVER_TIME = ("avg_over_time", "sum_over_time", "min_over_time", "max_over_time", "count_over_time",
             "last_over_time")
RATES = ("rate", "increase", "irate", "delta")
SIMPLE = ("abs", "ceil", "floor")
CLAMPS = ("clamp_min", "clamp_max")
#: functions and keywords Prometheus knows that this server does not evaluate
KNOWN_ELSEWHERE = ("absent", "absent_over_time", "changes", "clamp", "day_of_month", "day_of_week", "days_in_month",
                   "deriv", "exp", "holt_winters", "hour", "histogram_quantile", "idelta", "label_join",
                   "label_replace", "ln", "log10", "log2", "minute", "month", "predict_linear", "quantile_over_time",
                   "resets", "round", "sgn", "sort", "sort_desc", "sqrt", "stddev_over_time", "stdvar_over_time",
                   "time", "timestamp", "year", "topk", "bottomk", "quantile", "stddev", "stdvar", "count_values",
                   "group", "present_over_time", "offset", "bool", "on", "ignoring", "group_left", "group_right",
                   "and", "or", "unless")


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int


def _tokens(text: str) -> list[_Tok]:
    out, i = [], 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise _error(text, i, f"unexpected character: {text[i]!r}")
        kind = m.lastgroup
        if kind != "ws":
            out.append(_Tok(kind, m.group(), i))
        i = m.end()
    out.append(_Tok("eof", "", len(text)))
    return out


def _error(text: str, pos: int, message: str) -> PromQLError:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return PromQLError(f"{line}:{col}: parse error: {message}")


# the tree: tuples, first item the node kind
Node = tuple


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self, text: Optional[str] = None, kind: Optional[str] = None) -> _Tok:
        t = self.peek()
        if (text is not None and t.text != text) or (kind is not None and t.kind != kind):
            want = repr(text) if text else kind
            got = "<EOF>" if t.kind == "eof" else repr(t.text)
            raise _error(self.text, t.pos, f"unexpected {got}, expected {want}")
        self.i += 1
        return t

    def unsupported(self, t: _Tok, what: str) -> PromQLError:
        return _error(self.text, t.pos, f"{what} is not implemented by scalebridge's local Prometheus server "
                                        "(scalebridge_prometheus.promql)")

    def parse(self) -> Node:
        if self.peek().kind == "eof":
            raise _error(self.text, 0, "no expression found in input")
        node = self.expr(0)
        t = self.peek()
        if t.kind != "eof":
            if t.text in ("offset", "@"):
                raise self.unsupported(t, f"the {t.text!r} modifier")
            if t.text in ("==", "!=", ">", "<", ">=", "<=") or t.text in KNOWN_ELSEWHERE:
                raise self.unsupported(t, f"the operator {t.text!r}")
            raise _error(self.text, t.pos, f"unexpected {t.text!r}")
        return node

    _PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "^": 3}

    def expr(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            t = self.peek()
            prec = self._PREC.get(t.text)
            if t.kind != "op" or prec is None or prec < min_prec:
                return left
            self.i += 1
            if self.peek().text in ("bool", "on", "ignoring", "group_left", "group_right"):
                raise self.unsupported(self.peek(), f"vector matching with {self.peek().text!r}")
            right = self.expr(prec if t.text == "^" else prec + 1)   # ^ is right-associative
            left = ("binary", t.text, left, right)

    def unary(self) -> Node:
        t = self.peek()
        if t.text in ("-", "+"):
            self.i += 1
            operand = self.unary()
            return ("binary", "*", ("number", -1.0), operand) if t.text == "-" else operand
        node = self.primary()
        if self.peek().text == "[":
            open_ = self.take("[")
            d = self.peek()
            if d.kind == "op" and d.text == ":":
                raise self.unsupported(d, "a subquery")
            text = ""
            while self.peek().kind in ("number", "ident"):
                text += self.take().text
            if not _DURATION.fullmatch(text):
                raise _error(self.text, open_.pos + 1, f"bad duration syntax: {text!r}")
            if self.peek().text == ":":
                raise self.unsupported(self.peek(), "a subquery")
            self.take("]")
            if node[0] != "selector":
                raise _error(self.text, open_.pos, "ranges only allowed for vector selectors")
            node = ("matrix", node, _seconds(text))
        return node

    def primary(self) -> Node:
        t = self.peek()
        if t.kind == "number":
            self.i += 1
            return ("number", float(int(t.text, 16)) if t.text.lower().startswith("0x") else float(t.text))
        if t.text == "(":
            self.take("(")
            node = self.expr(0)
            self.take(")")
            return ("paren", node)
        if t.text == "{":
            return self.selector(None, t)
        if t.kind == "ident":
            name = t.text
            lower = name.lower()
            if lower in ("inf", "nan"):
                self.i += 1
                return ("number", math.inf if lower == "inf" else math.nan)
            if name in AGGREGATIONS:
                return self.aggregation()
            if self.toks[self.i + 1].text == "(":
                return self.call()
            if name in KNOWN_ELSEWHERE and name not in ("offset", "bool", "on", "ignoring", "group_left",
                                                         "group_right", "and", "or", "unless", "time"):
                raise self.unsupported(t, f"the aggregation {name!r}")
            self.i += 1
            return self.selector(name, t)
        got = "<EOF>" if t.kind == "eof" else repr(t.text)
        raise _error(self.text, t.pos, f"unexpected {got}")

    def selector(self, name: Optional[str], at: _Tok) -> Node:
        matchers: list[tuple[str, str, str]] = []
        if name is not None:
            matchers.append(("__name__", "=", name))
        if self.peek().text == "{":
            self.take("{")
            while self.peek().text != "}":
                label = self.take(kind="ident")
                op = self.peek()
                if op.text not in ("=", "!=", "=~", "!~"):
                    raise _error(self.text, op.pos, f"unexpected {op.text!r} in label matching, expected one of "
                                                    "\"=\", \"!=\", \"=~\" or \"!~\"")
                self.i += 1
                value = self.take(kind="string")
                v = _unquote(value.text)
                if op.text in ("=~", "!~"):
                    try:
                        re.compile(v)
                    except re.error as e:
                        raise _error(self.text, value.pos, f"error parsing regexp: {e}") from None
                matchers.append((label.text, op.text, v))
                if self.peek().text == ",":
                    self.take(",")
                elif self.peek().text != "}":
                    t = self.peek()
                    raise _error(self.text, t.pos, f"unexpected {t.text or '<EOF>'!r} in label matching, "
                                                   "expected \",\" or \"}\"")
            self.take("}")
        if not any(op in ("=", "=~") and not _matches("", op, v) for _, op, v in matchers):
            raise _error(self.text, at.pos, "vector selector must contain at least one non-empty matcher")
        return ("selector", tuple(matchers))

    def grouping(self) -> tuple[str, tuple[str, ...]]:
        kind = self.take(kind="ident").text
        self.take("(")
        labels = []
        while self.peek().text != ")":
            labels.append(self.take(kind="ident").text)
            if self.peek().text == ",":
                self.take(",")
        self.take(")")
        return kind, tuple(labels)

    def aggregation(self) -> Node:
        op = self.take(kind="ident").text
        group = None
        if self.peek().text in ("by", "without"):
            group = self.grouping()
        self.take("(")
        arg = self.expr(0)
        if self.peek().text == ",":
            raise self.unsupported(self.peek(), f"a parameter of {op}")
        self.take(")")
        if group is None and self.peek().text in ("by", "without"):
            group = self.grouping()
        return ("aggregate", op, group, arg)

    def call(self) -> Node:
        t = self.take(kind="ident")
        name = t.text
        if name not in OVER_TIME + RATES + SIMPLE + CLAMPS + ("scalar", "vector"):
            if name in KNOWN_ELSEWHERE:
                raise self.unsupported(t, f"the function {name!r}")
            raise _error(self.text, t.pos, f'unknown function with name "{name}"')
        self.take("(")
        args = []
        while self.peek().text != ")":
            args.append(self.expr(0))
            if self.peek().text == ",":
                self.take(",")
            elif self.peek().text != ")":
                raise _error(self.text, self.peek().pos, f"unexpected {self.peek().text!r} in call to {name}")
        self.take(")")
        want = 2 if name in CLAMPS else 1
        if len(args) != want:
            raise _error(self.text, t.pos, f"expected {want} argument(s) in call to \"{name}\", got {len(args)}")
        if name in OVER_TIME + RATES:
            if args[0][0] != "matrix":
                raise _error(self.text, t.pos, f"expected type range vector in call to function \"{name}\", "
                                               f"got {_type(args[0])}")
        elif name == "vector":
            if _type(args[0]) != "scalar":
                raise _error(self.text, t.pos, f"expected type scalar in call to function \"vector\", "
                                               f"got {_type(args[0])}")
        elif _type(args[0]) != "instant vector":
            raise _error(self.text, t.pos, f"expected type instant vector in call to function \"{name}\", "
                                           f"got {_type(args[0])}")
        return ("call", name, tuple(args))


def _unquote(text: str) -> str:
    if text[0] == "`":
        return text[1:-1]
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}.get(m.group(1),
                                                                                            "\\" + m.group(1)), body)


def _seconds(text: str) -> float:
    return float(sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text)))


def _type(node: Node) -> str:
    kind = node[0]
    if kind == "number":
        return "scalar"
    if kind == "matrix":
        return "range vector"
    if kind == "paren":
        return _type(node[1])
    if kind == "call":
        return "scalar" if node[1] == "scalar" else "instant vector"
    if kind == "binary":
        return "scalar" if _type(node[2]) == _type(node[3]) == "scalar" else "instant vector"
    return "instant vector"


def parse(text: str) -> Node:
    """The tree of ``text``; raises :class:`PromQLError` (``bad_data``)."""
    node = _Parser(text).parse()
    if node[0] == "binary":
        _check_binary(node, text)
    return node


def _check_binary(node: Node, text: str) -> None:
    for child in node[2:]:
        if child[0] == "matrix":
            raise PromQLError("1:1: parse error: binary expression must contain only scalar and instant "
                              "vector types")
        if child[0] == "binary":
            _check_binary(child, text)


def value_type(node: Node) -> str:
    """``scalar``, ``instant vector`` or ``range vector``: Prometheus's documented type of the expression."""
    return _type(node)


# ----------------------------------------------------------------------------- evaluation

Vector = list[tuple[dict, np.ndarray]]          # (labels, value per evaluation time; NaN: absent)


def _without_name(labels: dict) -> dict:
    return {k: v for k, v in labels.items() if k != "__name__"}


def _windows(s: Series, times: np.ndarray, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    lo = np.searchsorted(s.times, times - seconds, side="left")
    hi = np.searchsorted(s.times, times, side="right")
    return lo, hi


def _extrapolated_rate(t: np.ndarray, v: np.ndarray, start: float, end: float, seconds: float,
                       counter: bool, rate: bool) -> float:
    """``extrapolatedRate`` of promql/functions.go (Prometheus 2.x)."""
    if t.size < 2:
        return math.nan
    result = float(v[-1] - v[0])
    if counter:
        drops = v[1:] < v[:-1]
        result += float(v[:-1][drops].sum())
    to_start = t[0] - start
    to_end = end - t[-1]
    sampled = float(t[-1] - t[0])
    average = sampled / (t.size - 1)
    if counter and result > 0 and v[0] >= 0:
        to_zero = sampled * (v[0] / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    factor = interval / sampled
    if rate:
        factor /= seconds
    return result * factor


def _range_function(name: str, series: list[Series], times: np.ndarray, seconds: float) -> Vector:
    out: Vector = []
    for s in series:
        lo, hi = _windows(s, times, seconds)
        n = hi - lo
        vals = np.full(times.size, np.nan)
        has = n > 0
        if name == "count_over_time":
            vals[has] = n[has]
        elif name == "last_over_time":
            vals[has] = s.values[hi[has] - 1]
        else:
            for k in np.flatnonzero(has):
                a, b = lo[k], hi[k]
                tt, vv = s.times[a:b], s.values[a:b]
                if name == "sum_over_time":
                    vals[k] = float(sum(vv.tolist()))
                elif name == "avg_over_time":   # funcAvgOverTime: the incremental mean, in order
                    mean, count = 0.0, 0.0
                    for x in vv.tolist():
                        count += 1
                        mean += x / count - mean / count
                    vals[k] = mean
                elif name == "min_over_time":
                    vals[k] = vv.min()
                elif name == "max_over_time":
                    vals[k] = vv.max()
                elif name == "irate":
                    if b - a >= 2:
                        dv = vv[-1] - vv[-2]
                        if dv < 0:
                            dv = vv[-1]
                        vals[k] = dv / (tt[-1] - tt[-2])
                else:
                    vals[k] = _extrapolated_rate(tt, vv, times[k] - seconds, times[k], seconds,
                                                 counter=name != "delta", rate=name == "rate")
        if not np.all(np.isnan(vals)):
            out.append((_without_name(s.labels), vals))
    return out


def _binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "%":
            return np.fmod(a, b)
        return np.power(a, b)


def _eval(node: Node, store: Store, times: np.ndarray) -> Union[np.ndarray, Vector]:
    kind = node[0]
    if kind == "number":
        return np.full(times.size, node[1])
    if kind == "paren":
        return _eval(node[1], store, times)
    if kind == "selector":
        out: Vector = []
        for s in store.select(node[1]):
            idx = np.searchsorted(s.times, times, side="right") - 1
            ok = idx >= 0
            vals = np.full(times.size, np.nan)
            fresh = ok.copy()
            fresh[ok] = s.times[idx[ok]] >= times[ok] - LOOKBACK_SECONDS
            vals[fresh] = s.values[idx[fresh]]
            if not np.all(np.isnan(vals)):
                out.append((dict(s.labels), vals))
        return out
    if kind == "call":
        name, args = node[1], node[2]
        if name in OVER_TIME + RATES:
            sel, seconds = args[0][1], args[0][2]
            return _range_function(name, store.select(sel[1]), times, seconds)
        if name == "vector":
            return [({}, _eval(args[0], store, times))]
        vec = _eval(args[0], store, times)
        if name == "scalar":   # the single element's value, NaN unless there is exactly one
            if not vec:
                return np.full(times.size, np.nan)
            m = np.vstack([v for _, v in vec])
            return np.where((~np.isnan(m)).sum(axis=0) == 1, np.nansum(m, axis=0), np.nan)
        if name in CLAMPS:
            bound = _eval(args[1], store, times)
            fn = np.maximum if name == "clamp_min" else np.minimum
            return [(_without_name(lab), fn(v, bound)) for lab, v in vec]
        fn = {"abs": np.abs, "ceil": np.ceil, "floor": np.floor}[name]
        return [(_without_name(lab), fn(v)) for lab, v in vec]
    if kind == "aggregate":
        op, group, arg = node[1], node[2], node[3]
        vec = _eval(arg, store, times)
        if not isinstance(vec, list):
            raise PromQLError("expected type instant vector in aggregation expression, got scalar")
        groups: dict[tuple, tuple[dict, list[np.ndarray]]] = {}
        for lab, v in vec:
            if group is None:
                key_labels: dict = {}
            elif group[0] == "by":
                key_labels = {k: lab[k] for k in group[1] if k in lab}
            else:
                key_labels = {k: x for k, x in lab.items() if k not in group[1] and k != "__name__"}
            key = tuple(sorted(key_labels.items()))
            groups.setdefault(key, (key_labels, []))[1].append(v)
        out = []
        for key_labels, arrays in groups.values():
            m = np.vstack(arrays)
            present = (~np.isnan(m)).sum(axis=0)
            with np.errstate(all="ignore"):
                if op == "sum":   # in order, as Go adds them (numpy's nansum sums pairwise)
                    vals = np.zeros(times.size)
                    for row in m:
                        vals = vals + np.nan_to_num(row, nan=0.0)
                elif op == "avg":   # aggregation(): the incremental mean over the series in order
                    vals = np.zeros(times.size)
                    count = np.zeros(times.size)
                    for row in m:
                        ok = ~np.isnan(row)
                        count[ok] += 1
                        vals[ok] += row[ok] / count[ok] - vals[ok] / count[ok]
                elif op == "count":
                    vals = present.astype(float)
                elif op == "min":
                    vals = np.where(present > 0, np.nanmin(np.where(np.isnan(m), np.inf, m), axis=0), np.nan)
                else:
                    vals = np.where(present > 0, np.nanmax(np.where(np.isnan(m), -np.inf, m), axis=0), np.nan)
            vals = np.where(present > 0, vals, np.nan)
            out.append((key_labels, vals))
        return out
    if kind == "binary":
        op, left, right = node[1], _eval(node[2], store, times), _eval(node[3], store, times)
        if isinstance(left, np.ndarray) and isinstance(right, np.ndarray):
            return _binary(op, left, right)
        if isinstance(left, np.ndarray):
            return [(_without_name(lab), _binary(op, left, v)) for lab, v in right]
        if isinstance(right, np.ndarray):
            return [(_without_name(lab), _binary(op, v, right)) for lab, v in left]
        by_labels: dict[tuple, np.ndarray] = {}
        for lab, v in right:
            key = tuple(sorted(_without_name(lab).items()))
            if key in by_labels:
                raise PromQLError("found duplicate series for the match group on the right hand-side of the "
                                  "operation: many-to-many matching not allowed: matching labels must be unique on "
                                  "one side")
            by_labels[key] = v
        out = []
        for lab, v in left:
            key = tuple(sorted(_without_name(lab).items()))
            if key in by_labels:
                vals = _binary(op, v, by_labels[key])
                vals[np.isnan(v) | np.isnan(by_labels[key])] = np.nan
                out.append((_without_name(lab), vals))
        return out
    raise PromQLError(f"cannot evaluate {kind}")


def evaluate(node: Node, store: Store, times: Sequence[float]) -> Union[np.ndarray, Vector]:
    """``node`` at each of ``times``: a scalar (one value per time) or a vector
    (labels and one value per time per series, NaN where absent). A range vector
    is not evaluated here (see :func:`matrix`)."""
    return _eval(node, store, np.asarray(times, dtype=np.float64))


def matrix(node: Node, store: Store, at: float) -> list[tuple[dict, list[tuple[float, float]]]]:
    """A range vector selector at ``at``: each series' samples in ``[at − range, at]``."""
    sel, seconds = node[1], node[2]
    out = []
    for s in store.select(sel[1]):
        lo, hi = _windows(s, np.array([at]), seconds)
        pts = list(zip(s.times[lo[0]:hi[0]].tolist(), s.values[lo[0]:hi[0]].tolist()))
        if pts:
            out.append((dict(s.labels), pts))
    return out
