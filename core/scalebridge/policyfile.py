"""Policy files: YAML (safe loading only) holding the neutral policy.

Every problem is reported at once, each as ``file:line:column: path: message``
with what would be valid, by mapping pydantic's error locations back to the
YAML nodes they came from.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Optional

import yaml
from pydantic import ValidationError

from .errors import PolicyError, _type_name, json_path, normalize_errors, short_repr
from .policy import Policy, fraction_targets, parse_policy

Positions = dict[tuple, tuple[int, int]]


MAX_YAML_ALIAS_NODES = 100_000
"""The most values the aliases (``*name``) of a YAML document may expand to: a
"billion laughs" document (aliases of aliases) stops there instead of exhausting memory."""
MAX_YAML_DEPTH = 200
"""The deepest nesting of mappings and sequences, as :data:`scalebridge.protocol.MAX_DEPTH`."""


class _Budget:
    """What the aliases of one document have left to expand to."""
    __slots__ = ("left", "seen")

    def __init__(self) -> None:
        self.left = MAX_YAML_ALIAS_NODES
        self.seen: set[int] = set()


def _construct(node: yaml.Node, path: tuple, pos: Optional[Positions], file: Optional[str] = None,
               budget: Optional[_Budget] = None, aliased: bool = False) -> Any:
    """The plain value of ``node`` (mappings with string keys, sequences, scalars),
    recording every value's line and column in ``pos`` (``None``: none); aliases expand to at most
    :data:`MAX_YAML_ALIAS_NODES` values, and nesting is at most :data:`MAX_YAML_DEPTH` levels."""
    if budget is None:
        budget = _Budget()
        try:
            return _construct_node(node, path, pos, file, budget, aliased, {})
        finally:   # the constructor memoizes every node it built: keep none of them past this document
            _LOADER.constructed_objects.clear()
    return _construct_node(node, path, pos, file, budget, aliased, {})


def _construct_node(node: yaml.Node, path: tuple, pos: Optional[Positions], file: Optional[str], budget: _Budget,
                    aliased: bool, scalars: dict) -> Any:
    # ``scalars``: the plain scalars of the document built so far, by (tag, text): a
    # configuration of 10,000 targets repeats a few dozen values 10,000 times each
    cls = node.__class__
    scalar = cls is _SCALAR or isinstance(node, yaml.ScalarNode)
    if not scalar:
        if isinstance(node, yaml.CollectionNode):
            if not aliased and id(node) in budget.seen:   # a second visit: an alias of it
                aliased = True
            budget.seen.add(id(node))
    if aliased:
        budget.left -= 1
        if budget.left < 0:
            raise PolicyError([f"{_where(file, node)}: its aliases expand to more than {MAX_YAML_ALIAS_NODES:,} "
                               "values (aliases of aliases?); write the values out"])
    if len(path) > MAX_YAML_DEPTH:
        raise PolicyError([f"{_where(file, node)}: nested deeper than {MAX_YAML_DEPTH} levels"])
    if pos is not None:
        mark = node.start_mark
        pos[path] = (mark.line + 1, mark.column + 1)
    if scalar:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value          # what construct_yaml_str gives: the text itself
        if not node.style:   # plain: None from PyYAML's composer, "" from libyaml's
            # YAML 1.1 reads `mode: ON` / `mode: OFF` (and yes/no) as booleans and an
            # unquoted `2026-01-01T08:00:00` as a datetime; a policy file holds the
            # protocol's JSON values, so only true/false are booleans and times stay
            # the ISO-8601 strings the protocol allows (fixed_date.start/end).
            if tag == _BOOL_TAG and node.value.lower() not in ("true", "false"):
                return node.value
            if tag == _TIMESTAMP_TAG:
                return node.value
        if tag in _IMMUTABLE_TAGS:   # int, float, bool, null: the same text is the same value
            key = (tag, node.value)
            try:
                return scalars[key]
            except KeyError:
                pass
            value = scalars[key] = _construct_scalar(node, path, file)
            return value
        return _construct_scalar(node, path, file)
    if cls is _MAPPING or isinstance(node, yaml.MappingNode):
        out: dict = {}
        for k, v in node.value:
            if k.__class__ is not _SCALAR and not isinstance(k, yaml.ScalarNode):
                raise PolicyError([f"{_where(file, k)}: {json_path(path, root='policy')}: a key must be a plain "
                                   f"string, not a {'sequence' if isinstance(k, yaml.SequenceNode) else 'mapping'}"])
            key = k.value   # yaml.SafeLoader.construct_scalar of a scalar node: its text
            if key in out:
                raise PolicyError([f"{_where(file, k)}: {json_path(path + (key,), root='policy')}: duplicate key"])
            sub = path + (key,)
            if pos is not None:
                km = k.start_mark
                pos[("__key__",) + sub] = (km.line + 1, km.column + 1)
            out[key] = _construct_node(v, sub, pos, file, budget, aliased, scalars)
        return out
    if cls is _SEQUENCE or isinstance(node, yaml.SequenceNode):
        return [_construct_node(v, path + (i,), pos, file, budget, aliased, scalars) for i, v in enumerate(node.value)]
    return _construct_scalar(node, path, file)


def _construct_scalar(node: yaml.Node, path: tuple, file: Optional[str]) -> Any:
    try:
        return _LOADER.construct_object(node, deep=True)
    except ValueError:   # an integer literal past Python's 4,300-digit conversion limit
        raise PolicyError([f"{_where(file, node)}: {json_path(path, root='policy')}: "
                           "a number with more than 4,300 digits"]) from None


_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
_STR_TAG = "tag:yaml.org,2002:str"
#: tags whose value is immutable and a function of the scalar's text alone
_IMMUTABLE_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                             "tag:yaml.org,2002:null"})
_BOOL_TAG = "tag:yaml.org,2002:bool"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    pass


_LOADER = _Loader("")


try:   # libyaml's parser: events at C speed (PyYAML's scanner is quadratic in flow nesting)
    from yaml import CSafeLoader as _EVENTS_LOADER
except ImportError:  # pragma: no cover - PyYAML without libyaml
    _EVENTS_LOADER = yaml.SafeLoader  # type: ignore[misc]


def _too_deep(text: str, file: str) -> Optional[str]:
    """``file:line:column`` of the first collection nested past :data:`MAX_YAML_DEPTH`
    (None: none is), found from the parser's event stream before anything recurses.
    A syntax error is left to the composer, whose message says what it is."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_EVENTS_LOADER):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    return f"{file}:{event.start_mark.line + 1}:{event.start_mark.column + 1}"
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as e:   # libyaml's own bound on nesting (its scanner reads ahead)
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        if "nesting depth" in str(e):
            return f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else f"{file}:1:1"
    return None


def _where(file: Optional[str], node: yaml.Node) -> str:
    return f"{file or '<policy>'}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def load_yaml(text: str, file: str = "<policy>") -> tuple[Any, Positions]:
    too_deep = _too_deep(text, file)
    if too_deep:
        raise PolicyError([f"{too_deep}: nested deeper than {MAX_YAML_DEPTH} levels"])
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise PolicyError([f"{file}: nested deeper than {MAX_YAML_DEPTH} levels"]) from None
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
            msg += f" (got {short_repr(inp)})"
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
        f = fields_of(model).get(part)
        if f is None:
            return ""
        model = _inner_model(f.annotation)
        if model is None:
            return ""
    names = list(fields_of(model))
    close = difflib.get_close_matches(field, names, n=1)
    if close:
        return f"; did you mean {close[0]!r}? valid fields here: {', '.join(names)}"
    return f"; valid fields here: {', '.join(names)}"


def fields_of(model: Any) -> dict:
    """The fields of a policy type (a pydantic dataclass) or a pydantic model, by name."""
    return getattr(model, "__pydantic_fields__", None) or getattr(model, "model_fields", None) or {}


def _inner_model(annotation: Any) -> Any:
    import typing
    if isinstance(annotation, type) and fields_of(annotation):
        return annotation
    for arg in typing.get_args(annotation):
        m = _inner_model(arg)
        if m is not None:
            return m
    return None


def parse_policy_text(text: str, file: str = "<policy>", semantics: Optional[Collection[str]] = None,
                      warnings: Optional[list[str]] = None) -> Policy:
    """The policy of a policy file's text. ``semantics``: the registered semantics'
    names, which the file's ``semantics:`` must be one of (an unknown one is a problem
    at its line, with the closest name); ``warnings``: a list each warning about the
    policy (:func:`~scalebridge.policy.fraction_targets`) is appended to, as
    ``file:line:column: path: warning: …``."""
    data, pos = load_yaml(text, file)
    if not isinstance(data, dict):
        raise PolicyError([f"{file}:1:1: a policy is a mapping (min_replicas, max_replicas, metrics, …), not {_type_name(data)}"])
    try:
        policy = parse_policy(data)
    except ValidationError as e:
        raise PolicyError(validation_problems(e, file, pos)) from None
    if semantics is not None and policy.semantics is not None and policy.semantics not in semantics:
        import difflib
        close = difflib.get_close_matches(policy.semantics, sorted(semantics), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ";"
        line, col = _position(pos, ("semantics",))
        raise PolicyError([f"{file}:{line}:{col}: policy.semantics: unknown semantics {policy.semantics!r}{hint} "
                           f"registered are: {', '.join(sorted(semantics))}"])
    if warnings is not None:
        for loc, message in fraction_targets(policy):
            line, col = _position(pos, loc)
            warnings.append(f"{file}:{line}:{col}: {json_path(loc, root='policy')}: warning: {message}")
    return policy


def load_policy_file(path: str | Path, semantics: Optional[Collection[str]] = None,
                     warnings: Optional[list[str]] = None) -> Policy:
    """A policy file; ``-`` is standard input. ``semantics`` and ``warnings``: as
    :func:`parse_policy_text` takes them."""
    if str(path) == "-":
        from .inputfile import InputFileError, read_text
        try:
            text = read_text("-")
        except InputFileError as e:
            raise PolicyError([f"<stdin>: {e.reason}"]) from None
        return parse_policy_text(text, "<stdin>", semantics, warnings)
    return parse_policy_text(read_text_file(path), str(path), semantics, warnings)


def read_text_file(path: str | Path) -> str:
    """The UTF-8 text of a file the project reads (a policy, a run configuration): a regular file of at most :data:`~scalebridge.inputfile.MAX_CONFIG_BYTES`;
    a :class:`PolicyError` line naming the file when it cannot be read."""
    from .inputfile import InputFileError, read_text
    try:
        return read_text(f"./{path}" if str(path) == "-" else path)   # a file named "-"; stdin is load_policy_file's
    except InputFileError as e:
        raise PolicyError([f"{path}: {e.reason}"]) from None
