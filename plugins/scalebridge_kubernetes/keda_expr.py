"""KEDA's ``scalingModifiers.formula`` (the ``expr`` language) to and from a policy
formula's CEL, for the subset both can say.

KEDA evaluates ``advanced.scalingModifiers.formula`` with github.com/expr-lang/expr
(https://keda.sh/docs/2.20/reference/scaledobject-spec/#scalingmodifiersformula;
language: https://expr-lang.org/docs/language-definition), "internally wrapped with
float cast" (https://keda.sh/docs/2.20/concepts/scaling-deployments/#scaling-modifiers);
a policy's formula is CEL (docs/policy.md, :mod:`scalebridge.cel`). The two agree on
numbers, names, ``+ - * /``, comparisons, ``&& || !``, ``c ? a : b`` and list
literals, with three differences this module bridges:

- CEL is typed and has no implicit numeric conversion (``queue * 2`` is refused:
  the metrics are doubles); expr's ``/`` always divides as floats. CEL written from
  expr makes every number a double, except where it meets an integer (the size of a
  list): ``count(...) > 1`` stays an int comparison.
- expr's predicates, ``count(list, {# > 1})``, ``all``, ``any``, ``none``, ``one``,
  ``filter``, are CEL's macros ``list.filter(x, x > 1.0).size()``, ``list.all(x, …)``,
  ``list.exists(x, …)``, ``!list.exists(x, …)``, ``list.exists_one(x, …)``,
  ``list.filter(x, …)``; ``and``/``or``/``not`` are ``&&``/``||``/``!``; ``max``,
  ``min`` and ``abs`` are written as conditionals; ``float``/``len`` are CEL's
  ``double``/``size``.
- expr's ``??`` (nil-coalescing) means something only where a trigger can be ``nil``:
  under ``fallback.behavior: scalingModifiers`` (KEDA 2.20: a trigger failing past
  ``failureThreshold`` is ``nil`` in the formula, pkg/scaling/modifiers/formula.go
  ``scalingModifierTriggerValue``), a policy's ``fallback.behavior: formula``, whose
  metrics are CEL's nullable doubles (:mod:`scalebridge.cel`). There a chain
  ``a ?? b ?? 8`` is ``a != null ? a : (b != null ? b : 8.0)`` and back; each operand but
  the last must be a trigger's name (what can be ``nil``).
- What has no counterpart is refused with :class:`Untranslatable` (the caller
  reports a loss line): ``??`` without that fallback, ``nil`` elsewhere,
  ``**``/``^``, ``%`` on floats, strings, other builtins; CEL's integer division.
"""
from __future__ import annotations

import re
from typing import Optional

__all__ = ["Untranslatable", "expr_to_cel", "cel_to_expr"]


class Untranslatable(ValueError):
    """The formula uses what the other language cannot say (the message says what)."""


_TOKEN = re.compile(r"\s*(?:(?P<num>\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
                    r"|(?P<op>\?\?|\*\*|==|!=|<=|>=|&&|\|\||[-+*/%^<>!?:()\[\]{},.#]))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Untranslatable(f"cannot read {text[pos:].strip()[:20]!r} (at column {pos + 1})")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


# precedence, loosest first (both languages' orders agree on these)
_BINARY = [("??",), ("||", "or"), ("&&", "and"), ("==", "!=", "<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%"),
           ("**", "^")]
_CANON = {"or": "||", "and": "&&", "not": "!"}
_PREC = {op: i for i, ops in enumerate(_BINARY) for op in ops}


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> Optional[tuple[str, str]]:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, value: Optional[str] = None) -> tuple[str, str]:
        t = self.peek()
        if t is None or (value is not None and t[1] != value):
            raise Untranslatable(f"expected {value or 'more'}, got {t[1] if t else 'the end'}")
        self.i += 1
        return t

    def at(self, *values: str) -> bool:
        t = self.peek()
        return t is not None and t[0] in ("op", "name") and t[1] in values

    def parse(self):
        node = self.ternary()
        if self.peek() is not None:
            raise Untranslatable(f"unexpected {self.peek()[1]!r}")
        return node

    def ternary(self):
        cond = self.binary(0)
        if self.at("?"):
            self.take("?")
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return ("cond", cond, a, b)
        return cond

    def binary(self, level: int):
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.at(*_BINARY[level]):
            tok = self.take()[1]
            op = _CANON.get(tok, tok)
            right = self.binary(level + 1) if op not in ("**", "^") else self.binary(level)
            left = ("bin", op, left, right)
        return left

    def unary(self):
        if self.at("-", "!", "not"):
            tok = self.take()[1]
            op = _CANON.get(tok, tok)
            return ("un", op, self.unary())
        return self.postfix(self.primary())

    def postfix(self, node):
        while self.at("."):
            self.take(".")
            name = self.take()[1]
            args = self.args() if self.at("(") else None
            if args is None:
                raise Untranslatable(f"field selection .{name}")
            node = ("method", node, name, args)
        return node

    def args(self) -> list:
        self.take("(")
        return self.items(")")

    def items(self, close: str) -> list:
        """Comma-separated expressions up to ``close`` (taken): call arguments, list items."""
        out = []
        while not self.at(close):
            out.append(self.ternary())
            if not self.at(close):
                self.take(",")
        self.take(close)
        return out

    def primary(self):
        t = self.take()
        kind, v = t
        if kind == "num":
            return ("num", v)
        if kind == "str":
            raise Untranslatable("strings")
        if kind == "name":
            if v in ("true", "false"):
                return ("bool", v)
            if v in ("nil", "null"):
                return ("null", v)
            if self.at("("):
                return ("call", v, self.args())
            return ("var", v)
        if v == "(":
            node = self.ternary()
            self.take(")")
            return node
        if v == "[":
            return ("list", self.items("]"))
        if v == "{":
            body = self.ternary()
            self.take("}")
            return ("pred", body)
        if v == "#":
            return ("elem",)
        raise Untranslatable(f"unexpected {v!r}")


def _is_int(text: str) -> bool:
    return text.isdigit()


def _paren(text: str, prec: int, parent: int) -> str:
    return f"({text})" if prec < parent else text


_ATOM = 100
_UNARY = 50
_TERNARY = -1


# ----------------------------------------------------------------------------- expr -> CEL


def expr_to_cel(formula: str, names: tuple = (), nullable: bool = False) -> str:
    """KEDA's ``formula`` as a CEL expression over doubles; :class:`Untranslatable` when
    it uses what CEL cannot say. ``names`` (the triggers' names) keep the comprehension
    variable clear of them; ``nullable``: the triggers may be ``nil`` (``fallback.behavior:
    scalingModifiers``), so ``??`` has a meaning."""
    var = next(v for v in ("x", "x_", "elem", "elem_") if v not in names)
    text, _, _ = _cel(_coalesced(_Parser(formula).parse(), nullable), var, None)
    return text


def _coalesced(node, nullable: bool):
    """``node`` with each chain of ``??`` as one ``("coalesce", operands)``."""
    if not isinstance(node, tuple):
        return node
    if node[0] == "bin" and node[1] == "??":
        if not nullable:
            raise Untranslatable("expr's ?? (nil-coalescing) needs fallback.behavior scalingModifiers, under which "
                                 "a failing trigger is nil; without it no trigger is nil")
        operands: list = []

        def flatten(n):
            if isinstance(n, tuple) and n[0] == "bin" and n[1] == "??":
                flatten(n[2])
                flatten(n[3])
            else:
                operands.append(_coalesced(n, nullable))
        flatten(node)
        for o in operands[:-1]:
            if o[0] != "var":
                raise Untranslatable("?? after something that is not a trigger's name (only a trigger can be nil)")
        return ("coalesce", operands)
    return tuple(_coalesced(x, nullable) if isinstance(x, tuple) else
                 [_coalesced(y, nullable) for y in x] if isinstance(x, list) else x for x in node)


def _as_double(text: str, typ: str, prec: int, node) -> tuple[str, str, int]:
    if typ == "double":
        return text, typ, prec
    if typ == "int":
        if node[0] == "num":
            return text + ".0", "double", _ATOM
        return f"double({text})", "double", _ATOM
    raise Untranslatable(f"a {typ} where a number is needed")


def _cel(node, var: str, elem: Optional[str]) -> tuple[str, str, int]:
    """(text, type, precedence) of ``node`` in CEL."""
    k = node[0]
    if k == "num":
        return node[1], ("int" if _is_int(node[1]) else "double"), _ATOM
    if k == "bool":
        return node[1], "bool", _ATOM
    if k == "var":
        return node[1], "double", _ATOM
    if k == "elem":
        if elem is None:
            raise Untranslatable("# outside a predicate")
        return elem, "double", _ATOM
    if k == "null":
        raise Untranslatable(f"{node[1]} outside a ?? chain")
    if k == "coalesce":
        *heads, last = node[1]
        text, _, p = _as_double(*_cel(last, var, elem), last)
        for h in reversed(heads):
            name = h[1]
            text, p = f"{name} != null ? {name} : {_paren(text, p, _ATOM)}", _TERNARY
        return text, "double", p
    if k == "list":
        items = [_as_double(*_cel(x, var, elem), x)[0] for x in node[1]]
        return "[" + ", ".join(items) + "]", "list", _ATOM
    if k == "un":
        t, typ, p = _cel(node[2], var, elem)
        if node[1] == "-" and typ not in ("int", "double"):
            raise Untranslatable("- of a non-number")
        if node[1] == "!" and typ != "bool":
            raise Untranslatable("! of a non-boolean")
        return node[1] + _paren(t, p, _UNARY), typ, _UNARY
    if k == "bin":
        op = node[1]
        if op == "??":
            raise Untranslatable("expr's ?? (nil-coalescing: KEDA's per-trigger fallback) has no CEL counterpart")
        if op in ("**", "^"):
            raise Untranslatable(f"expr's {op} (power) has no CEL counterpart")
        prec = _PREC[op]
        a, b = _cel(node[2], var, elem), _cel(node[3], var, elem)
        if op in ("&&", "||"):
            if a[1] != "bool" or b[1] != "bool":
                raise Untranslatable(f"{op} of non-booleans")
            return f"{_paren(a[0], a[2], prec)} {op} {_paren(b[0], b[2], prec + 1)}", "bool", prec
        if a[1] not in ("int", "double") or b[1] not in ("int", "double"):
            if op in ("==", "!=") and a[1] == b[1] == "bool":
                return f"{_paren(a[0], a[2], prec + 1)} {op} {_paren(b[0], b[2], prec + 1)}", "bool", prec
            raise Untranslatable(f"{op} of non-numbers")
        if op == "%":
            raise Untranslatable("expr's % (integer modulo) on metric values, which are floats")
        if a[1] != b[1] or op == "/":   # expr's / is always a float division
            a, b = _as_double(*a, node[2]), _as_double(*b, node[3])
        typ = "bool" if prec == _PREC["=="] else a[1]
        return f"{_paren(a[0], a[2], prec)} {op} {_paren(b[0], b[2], prec + 1)}", typ, prec
    if k == "cond":
        c = _cel(node[1], var, elem)
        if c[1] != "bool":
            raise Untranslatable("a condition that is not a boolean")
        a, b = _cel(node[2], var, elem), _cel(node[3], var, elem)
        if a[1] != b[1]:
            a, b = _as_double(*a, node[2]), _as_double(*b, node[3])
        return f"{_paren(c[0], c[2], 0)} ? {_paren(a[0], a[2], 0)} : {_paren(b[0], b[2], _TERNARY)}", a[1], _TERNARY
    if k == "call":
        return _cel_call(node[1], node[2], var, elem)
    raise Untranslatable(f"{k}")


_MACROS = {"count": ("filter", ".size()", "int"), "all": ("all", "", "bool"), "any": ("exists", "", "bool"),
           "none": ("exists", "", "bool"), "one": ("exists_one", "", "bool"), "filter": ("filter", "", "list")}


def _cel_call(name: str, args: list, var: str, elem: Optional[str]) -> tuple[str, str, int]:
    if name in _MACROS:
        if len(args) != 2 or args[1][0] != "pred":
            raise Untranslatable(f"{name}() without a {{predicate}}")
        if elem is not None:
            raise Untranslatable(f"a predicate inside a predicate ({name})")
        lst = _cel(args[0], var, elem)
        if lst[1] != "list":
            raise Untranslatable(f"{name}() of a non-list")
        pred = _cel(args[1][1], var, var)
        if pred[1] != "bool":
            raise Untranslatable(f"{name}() with a predicate that is not a boolean")
        macro, tail, typ = _MACROS[name]
        text = f"{_paren(lst[0], lst[2], _ATOM)}.{macro}({var}, {pred[0]}){tail}"
        return ("!" + text, typ, _UNARY) if name == "none" else (text, typ, _ATOM)
    if name in ("max", "min") and len(args) >= 2:
        parts = [_as_double(*_cel(a, var, elem), a) for a in args]
        text, _, p = parts[0]
        cmp = ">" if name == "max" else "<"
        for t, _, q in parts[1:]:
            a, b = _paren(text, p, _ATOM), _paren(t, q, _ATOM)
            text, p = f"{a} {cmp} {b} ? {a} : {b}", _TERNARY
        return f"({text})", "double", _ATOM
    if name == "abs" and len(args) == 1:
        t, _, p = _as_double(*_cel(args[0], var, elem), args[0])
        a = _paren(t, p, _ATOM)
        return f"({a} < 0.0 ? -{a} : {a})", "double", _ATOM
    if name == "float" and len(args) == 1:
        t, typ, p = _cel(args[0], var, elem)
        return (t, typ, p) if typ == "double" else (f"double({t})", "double", _ATOM)
    if name == "int" and len(args) == 1:
        t, typ, p = _cel(args[0], var, elem)
        return (t, typ, p) if typ == "int" else (f"int({t})", "int", _ATOM)
    if name == "len" and len(args) == 1:
        t, typ, p = _cel(args[0], var, elem)
        if typ != "list":
            raise Untranslatable("len() of a non-list")
        return f"size({t})", "int", _ATOM
    raise Untranslatable(f"expr's {name}() has no CEL counterpart here")


# ----------------------------------------------------------------------------- CEL -> expr


def cel_to_expr(expression: str) -> str:
    """A policy formula's CEL as KEDA's ``formula`` (expr); :class:`Untranslatable` when
    it uses what expr (or this translation) cannot say."""
    text, _, _ = _expr(_Parser(expression).parse(), None)
    return text


def _expr(node, var: Optional[str]) -> tuple[str, str, int]:
    k = node[0]
    if k == "num":
        return node[1], ("int" if _is_int(node[1]) else "double"), _ATOM
    if k == "bool":
        return node[1], "bool", _ATOM
    if k == "var":
        return ("#" if node[1] == var else node[1]), "double", _ATOM
    if k == "list":
        return "[" + ", ".join(_expr(x, var)[0] for x in node[1]) + "]", "list", _ATOM
    if k == "un":
        t, typ, p = _expr(node[2], var)
        return node[1] + _paren(t, p, _UNARY), typ, _UNARY
    if k == "bin":
        op = node[1]
        if op in ("??", "**", "^", "%"):
            raise Untranslatable(f"{op}")
        prec = _PREC[op]
        a, b = _expr(node[2], var), _expr(node[3], var)
        if op == "/" and a[1] == b[1] == "int":
            raise Untranslatable("CEL's integer division truncates; expr's / divides as floats")
        typ = "bool" if op in ("&&", "||") or prec == _PREC["=="] else ("int" if a[1] == b[1] == "int" else "double")
        return f"{_paren(a[0], a[2], prec)} {op} {_paren(b[0], b[2], prec + 1)}", typ, prec
    if k == "null":
        raise Untranslatable(f"{node[1]} outside a null test of a metric (m != null ? m : other, expr's m ?? other)")
    if k == "cond" and _null_test(node):
        rest = _expr(node[3], var)
        return f"{node[2][1]} ?? {_paren(rest[0], rest[2], _PREC['??'])}", "double", _PREC["??"]
    if k == "cond":
        c, a, b = _expr(node[1], var), _expr(node[2], var), _expr(node[3], var)
        return (f"{_paren(c[0], c[2], 0)} ? {_paren(a[0], a[2], 0)} : {_paren(b[0], b[2], _TERNARY)}",
                a[1], _TERNARY)
    if k == "method":
        return _expr_method(node, var)
    if k == "call":
        name, args = node[1], node[2]
        if name == "double" and len(args) == 1:
            return f"float({_expr(args[0], var)[0]})", "double", _ATOM
        if name == "int" and len(args) == 1:
            return f"int({_expr(args[0], var)[0]})", "int", _ATOM
        if name == "size" and len(args) == 1:
            return f"len({_expr(args[0], var)[0]})", "int", _ATOM
        raise Untranslatable(f"CEL's {name}() has no expr counterpart here")
    raise Untranslatable(f"{k}")


def _null_test(node) -> bool:
    """``m != null ? m : other`` (or ``null != m``): expr's ``m ?? other``."""
    c, a = node[1], node[2]
    if a[0] != "var" or c[0] != "bin" or c[1] != "!=":
        return False
    return (c[2] == a and c[3][0] == "null") or (c[3] == a and c[2][0] == "null")


_EXPR_MACROS = {"all": ("all", "bool"), "exists": ("any", "bool"), "exists_one": ("one", "bool"),
                "filter": ("filter", "list")}


def _expr_method(node, var: Optional[str]) -> tuple[str, str, int]:
    _, target, name, args = node
    if name == "size" and not args:
        if target[0] == "method" and target[2] == "filter":
            inner = _expr_method(target, var)
            return "count" + inner[0][len("filter"):], "int", _ATOM
        return f"len({_expr(target, var)[0]})", "int", _ATOM
    if name in _EXPR_MACROS and len(args) == 2 and args[0][0] == "var":
        if var is not None:
            raise Untranslatable("a macro inside a macro")
        fn, typ = _EXPR_MACROS[name]
        return f"{fn}({_expr(target, var)[0]}, {{{_expr(args[1], args[0][1])[0]}}})", typ, _ATOM
    raise Untranslatable(f"CEL's .{name}() has no expr counterpart here")
