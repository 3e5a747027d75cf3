"""Policy files: YAML (safe loading only) holding the neutral policy.

Every problem is reported at once, each as ``file:line:column: path: message``
with what would be valid, by mapping pydantic's error locations back to the
YAML nodes they came from.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import ValidationError

from .errors import PolicyError, _type_name, json_path, normalize_errors
from .policy import Policy

Positions = dict[tuple, tuple[int, int]]


def _construct(node: yaml.Node, path: tuple, pos: Positions, file: Optional[str] = None) -> Any:
    pos[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        for k, v in node.value:
            key = yaml.SafeLoader.construct_scalar(_LOADER, k) if isinstance(k, yaml.ScalarNode) else str(k.value)
            if key in out:
                raise PolicyError([f"{_where(file, k)}: {json_path(path + (key,), root='policy')}: duplicate key"])
            pos[("__key__",) + path + (key,)] = (k.start_mark.line + 1, k.start_mark.column + 1)
            out[key] = _construct(v, path + (key,), pos, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(v, path + (i,), pos, file) for i, v in enumerate(node.value)]
    if isinstance(node, yaml.ScalarNode) and node.style is None:
        # YAML 1.1 reads `mode: ON` / `mode: OFF` (and yes/no) as booleans and an
        # unquoted `2026-01-01T08:00:00` as a datetime; a policy file holds the
        # protocol's JSON values, so only true/false are booleans and times stay
        # the ISO-8601 strings the protocol allows (fixed_date.start/end).
        if node.tag == _BOOL_TAG and node.value.lower() not in ("true", "false"):
            return node.value
        if node.tag == _TIMESTAMP_TAG:
            return node.value
    return _LOADER.construct_object(node, deep=True)


_BOOL_TAG = "tag:yaml.org,2002:bool"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    pass


_LOADER = _Loader("")


def _where(file: Optional[str], node: yaml.Node) -> str:
    return f"{file or '<policy>'}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def load_yaml(text: str, file: str = "<policy>") -> tuple[Any, Positions]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        problem = getattr(e, "problem", None) or str(e)
        raise PolicyError([f"{where}: invalid YAML: {problem}"]) from None
    if node is None:
        raise PolicyError([f"{file}:1:1: the file is empty; a policy is a mapping (min_replicas, max_replicas, metrics, …)"])
    pos: Positions = {}
    try:
        data = _construct(node, (), pos, file)
    except yaml.constructor.ConstructorError as e:   # e.g. a !!python/object tag: never built
        mark = getattr(e, "problem_mark", None)
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        raise PolicyError([f"{where}: invalid YAML: {getattr(e, 'problem', None) or e}"]) from None
    return data, pos


def _position(pos: Positions, loc: tuple) -> tuple[int, int]:
    for n in range(len(loc), -1, -1):
        p = pos.get(tuple(loc[:n]))
        if p is not None:
            return p
    return (1, 1)


def validation_problems(err: ValidationError, file: str, pos: Positions, prefix: tuple = ()) -> list[str]:
    problems = []
    for loc, kind, msg, inp in normalize_errors(err.errors(include_url=False)):
        loc = prefix + loc
        if kind == "extra_forbidden":
            msg = f"unknown field {loc[-1]!r}" + _suggest(loc, err)
        elif kind == "missing":
            msg = "required field is missing"
        elif kind not in ("quantity",) and not isinstance(inp, (dict, list)) and "got " not in msg:
            msg += f" (got {inp!r})"
        e = {"type": kind}
        key_pos = pos.get(("__key__",) + loc) if e["type"] == "extra_forbidden" else None
        line, col = key_pos or _position(pos, loc)
        problems.append((line, col, f"{file}:{line}:{col}: {json_path(loc, root='policy')}: {msg}"))
    problems.sort(key=lambda p: (p[0], p[1]))
    return list(dict.fromkeys(p[2] for p in problems))


def _suggest(loc: tuple, err: ValidationError) -> str:
    import difflib
    field = str(loc[-1])
    model: Any = Policy
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        f = getattr(model, "model_fields", {}).get(part)
        if f is None:
            return ""
        model = _inner_model(f.annotation)
        if model is None:
            return ""
    names = list(getattr(model, "model_fields", {}))
    close = difflib.get_close_matches(field, names, n=1)
    if close:
        return f"; did you mean {close[0]!r}? valid fields here: {', '.join(names)}"
    return f"; valid fields here: {', '.join(names)}"


def _inner_model(annotation: Any) -> Any:
    import typing
    from pydantic import BaseModel
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        m = _inner_model(arg)
        if m is not None:
            return m
    return None


def parse_policy_text(text: str, file: str = "<policy>") -> Policy:
    data, pos = load_yaml(text, file)
    if not isinstance(data, dict):
        raise PolicyError([f"{file}:1:1: a policy is a mapping (min_replicas, max_replicas, metrics, …), not {_type_name(data)}"])
    try:
        return Policy.model_validate(data)
    except ValidationError as e:
        raise PolicyError(validation_problems(e, file, pos)) from None


def load_policy_file(path: str | Path) -> Policy:
    """A policy file; ``-`` is standard input."""
    if str(path) == "-":
        import sys
        try:
            text = sys.stdin.read()
        except UnicodeDecodeError:
            raise PolicyError(["<stdin>: not a UTF-8 text file"]) from None
        return parse_policy_text(text, "<stdin>")
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise PolicyError([f"{path}: cannot read: {e.strerror or e}"]) from None
    except UnicodeDecodeError:
        raise PolicyError([f"{path}: not a UTF-8 text file"]) from None
    return parse_policy_text(text, str(path))
