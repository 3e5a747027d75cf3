"""What every translation shares: the loss report, native-input errors, reading
native documents, and reading numbers and durations the way provider APIs write them."""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Union

from ..errors import ScalebridgeError, json_path
from ..policy import Policy

PLACEHOLDER = "PLACEHOLDER-set-with-target"
"""Stands where ``--target`` would give the scaled resource (HPA scaleTargetRef,
Azure targetResourceUri, the MIG, the ASG name)."""


class NativeError(ScalebridgeError):
    """Native configuration that its provider would reject: one line naming the field."""

    def __init__(self, where: str, message: str):
        self.where, self.message = where, message
        super().__init__(f"{where}: {message}")


@dataclass
class Losses:
    """The loss report: one line per feature the other side cannot express,
    saying what was done instead; ``notes`` are lines that lose nothing. A
    ``placeholder`` is a note too, and also listed in ``placeholders``: a field
    written with a stand-in value, that ``render --strict`` refuses to leave."""
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)

    def add(self, where: str, message: str) -> None:
        line = f"{where}: {message}"
        if line not in self.lines:
            self.lines.append(line)

    def note(self, where: str, message: str) -> None:
        self.notes.append(f"{where}: {message}")

    def placeholder(self, where: str, how: str, value: str = PLACEHOLDER) -> str:
        """``value`` (the marked placeholder), after a note naming the field ``where``
        and ``how`` to fill it (``pass --target name (the workload's name)``)."""
        line = f"{where}: placeholder {value!r}: {how}"
        if line not in self.placeholders:
            self.notes.append(line)
            self.placeholders.append(line)
        return value

    @property
    def incomplete(self) -> bool:
        """Something is lost or left as a placeholder: what ``render --strict`` refuses."""
        return bool(self.lines or self.placeholders)

    def __bool__(self) -> bool:
        return bool(self.lines)

    def __iter__(self):
        return iter(self.lines)


_NOTHING_LOST = {"tolerance": 0, "mode": "ON"}
"""Values of policy fields that every provider has without saying so: no tolerance
band is a tolerance of 0, and a provider's autoscaler is on."""


def drop_unexpressed(p: Policy, losses: Losses, reasons: dict[str, str]) -> None:
    """One loss line for each policy field in ``reasons`` (in that order) that ``p``
    sets, saying why the provider cannot express it; a list of rules, profiles,
    schedules or metrics loses each item on its own line."""
    for name, reason in reasons.items():
        value = getattr(p, name)
        if name in ("rules", "profiles", "schedules", "metrics"):
            for i, _ in enumerate(value or []):
                losses.add(path(name, i), reason)
        elif value is not None and value != _NOTHING_LOST.get(name):
            losses.add(name, reason)


def drop_semantics(p: Policy, losses: Losses, semantics: str, autoscaler: str) -> None:
    """A loss line when the policy names a semantics other than ``semantics``, the one
    ``autoscaler`` (the native autoscaler written) decides as: the native configuration
    is decided the provider's way whatever the policy says, and imports with that
    provider's semantics."""
    if p.semantics is not None and p.semantics != semantics:
        losses.add("semantics", f"{autoscaler} decides as the {semantics} semantics does, not as {p.semantics}; "
                                f"dropped (import reads it back as {semantics})")


def drop_controls(p: Policy, losses: Losses, provider: str) -> None:
    """One loss line for each neutral control the policy uses (docs/policy.md: KEDA's,
    which no cloud autoscaler has): fallback, formulas, the activation phase."""
    if p.fallback is not None:
        losses.add("fallback", f"{provider} has no fallback count for failing metrics; dropped")
    for i, m in enumerate(p.metrics or []):
        if m.type == "formula":
            losses.add(path("metrics", i), f"{provider} has no formula metrics; dropped")
        elif m.activation_threshold is not None:
            losses.add(path("metrics", i, "activation_threshold"), f"{provider} has no activation threshold; dropped")
    for name in ("scale_to_zero_delay_seconds", "idle_replicas", "initial_scale_to_zero_delay_seconds"):
        if getattr(p, name) is not None:
            losses.add(name, f"{provider} has no activation phase (scale to and from zero on an activation "
                             "threshold); dropped")
    if p.force_activation:
        losses.add("force_activation", f"{provider} has no activation phase to force; dropped")
    if p.invalid_values_as_zero:
        losses.add("invalid_values_as_zero", f"{provider} does not read a negative metric value as 0 (KEDA "
                                             ">= 2.20.2 does); dropped")


_MAX_DEPTH = 200   # as policy files and protocol requests (scalebridge.protocol.MAX_DEPTH)


def json_document(text_or_obj: Any) -> Any:
    """A native JSON document parsed (an object already parsed as it is)."""
    if not isinstance(text_or_obj, str):
        return text_or_obj
    try:
        return json.loads(text_or_obj)
    except json.JSONDecodeError as e:
        raise NativeError("$", f"not JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        raise NativeError("$", f"not JSON a translator reads: nested deeper than {_MAX_DEPTH} levels") from None
    except ValueError:   # an integer literal past Python's 4,300-digit conversion limit
        raise NativeError("$", "not JSON a translator reads: a number with more than 4,300 digits") from None


def yaml_document(text: str, where: str, what: str, load: Optional[Callable[[str], Any]] = None) -> Any:
    """``text`` read by ``load`` (``yaml.safe_load``); not YAML: a :class:`NativeError` at
    ``where`` saying it is not ``what``. (yaml is imported here, not when the plugin
    registry loads this module.)"""
    import yaml

    from ..policyfile import _too_deep
    too_deep = _too_deep(text, "line")   # the policy files' bound, before anything recurses
    if too_deep:
        raise NativeError(where, f"not {what} a translator reads: nested deeper than {_MAX_DEPTH} levels "
                                 f"at {too_deep}")
    try:
        return (load or yaml.safe_load)(text)
    except yaml.YAMLError as e:
        raise NativeError(where, f"not {what}: {str(e).splitlines()[0]}") from None
    except RecursionError:
        raise NativeError(where, f"not {what} a translator reads: nested deeper than {_MAX_DEPTH} levels") from None
    except ValueError:   # an integer past Python's 4,300-digit conversion limit
        raise NativeError(where, f"not {what} a translator reads: a number with more than 4,300 digits") from None


def resources(obj: Any, as_resource: Callable[[dict], Optional[dict]],
              inside: Callable[[dict], Iterable[tuple[str, Any]]], root: str = "$") -> list[tuple[str, dict]]:
    """The native resources of a document, each with its JSON path: a list is read item
    by item; an object is the resource ``as_resource`` makes of it, or else is read at
    the ``(key path, value)`` pairs ``inside`` gives."""
    if isinstance(obj, list):
        return [found for i, x in enumerate(obj) for found in resources(x, as_resource, inside, f"{root}[{i}]")]
    if not isinstance(obj, dict):
        return []
    resource = as_resource(obj)
    if resource is not None:
        return [(root, resource)]
    return [found for key, x in inside(obj) for found in resources(x, as_resource, inside, f"{root}.{key}")]


def one_of(v: Any, options: Any) -> bool:
    """``v`` is one of the string ``options`` (a native value of any JSON type may be tested)."""
    return isinstance(v, str) and v in options


def path(*parts: object) -> str:
    """``("behavior", "scale_up", "policies", 1)`` → ``behavior.scale_up.policies[1]``; a
    string part may itself be a path (``path("metrics[0]", "target")``)."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def as_policy(policy: Union[Policy, dict]) -> Policy:
    if isinstance(policy, Policy):
        return policy
    from ..engine import load_policy
    return load_policy(policy)


_TEMPLATE = re.compile(r"^\s*\[.*\]\s*$", re.S)


def is_template(v: Any) -> bool:
    """An unresolved template expression: ARM ``"[parameters('x')]"``, or a
    CloudFormation intrinsic (``{"Ref": …}``, ``{"Fn::…": …}``)."""
    if isinstance(v, str):
        return bool(_TEMPLATE.match(v)) and not v.strip().startswith("[[")
    if isinstance(v, dict) and len(v) == 1:
        k = next(iter(v))
        return k == "Ref" or k.startswith("Fn::") or k == "Condition"
    return False


@dataclass(frozen=True)
class Parameters:
    """``import --parameters``, each as given, in order (a later one wins), as the az CLI
    takes a deployment's (``az deployment group create --parameters``): ``KEY=VALUE``
    (``text``: the value as typed, which the template's declared type reads) or a
    parameters file, ``FILE`` or ``@FILE`` (``values``: its ``parameters`` object's, each
    ``{"value": …}``). ``where`` is what an error names."""
    items: tuple = ()      # ((key, value, is_text, where), ...)

    def __bool__(self) -> bool:
        return bool(self.items)


def read_parameters(given: Iterable[str]) -> Parameters:
    """:class:`Parameters` from the ``--parameters`` arguments, in the az CLI's order of
    trying: ``KEY=VALUE``, then a file (``@`` before it optional), then inline JSON
    (azure-cli src/azure-cli/azure/cli/command_modules/resource/custom.py,
    ``_process_parameters``: ``_try_parse_key_value_object``, ``_try_load_file_object``,
    ``_try_parse_json_object``; a file's or object's ``parameters`` key if it has one).
    Raises :class:`NativeError` naming the argument."""
    from pathlib import Path
    items: list = []
    for arg in given:
        where = f"--parameters {arg}"
        key, eq, value = arg.partition("=")
        if eq and key and not key.startswith(("@", "{")):
            items.append((key, value, True, where))
            continue
        text = None
        file = Path(arg[1:] if arg.startswith("@") else arg)
        if file.is_file():
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise NativeError(where, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
        elif arg.lstrip().startswith("{"):
            text = arg
        if text is None:
            raise NativeError(where, "neither KEY=VALUE nor a parameters file that exists (FILE or @FILE)")
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise NativeError(where, f"not JSON: {e}") from None
        doc = doc.get("parameters", doc) if isinstance(doc, dict) else doc
        if not isinstance(doc, dict):
            raise NativeError(where, "expected a JSON object of parameters ({\"NAME\": {\"value\": …}})")
        for key, v in doc.items():
            if not isinstance(v, dict) or "value" not in v:
                raise NativeError(f"{where}: $.{key}", "expected {\"value\": …} (a reference to a Key Vault "
                                                       "secret needs a deployment)")
            items.append((key, v["value"], False, where))
    return Parameters(tuple(items))


class Reader:
    """Reads fields of a native document, raising :class:`NativeError` with the
    JSON path of a bad one, and reporting unresolved template expressions."""

    def __init__(self, losses: Losses, root: str = "$", hint: Optional[Callable[[Any], str]] = None):
        self.losses = losses
        self.root = root
        #: what to add to an unresolved expression's loss line (how to resolve it), or ""
        self.hint = hint

    def where(self, *parts: object) -> str:
        return json_path(parts, root=self.root)

    def template(self, v: Any, *parts: object) -> bool:
        if is_template(v):
            more = self.hint(v) if self.hint is not None else ""
            self.losses.add(self.where(*parts), f"unresolved template expression {_show(v)}; left out"
                                                + (f" ({more})" if more else ""))
            return True
        return False

    def number(self, v: Any, *parts: object, integer: bool = False) -> Optional[Union[int, float]]:
        """A number as the API takes it (JSON number or a numeric string, as
        ARM and CloudFormation write them); None for a template expression."""
        if v is None or self.template(v, *parts):
            return None
        if isinstance(v, bool):
            raise NativeError(self.where(*parts), f"expected a number, got {v!r}")
        if isinstance(v, str):
            try:
                v = float(v.strip()) if not re.fullmatch(r"\s*[+-]?\d+\s*", v) else int(v)
            except ValueError:
                raise NativeError(self.where(*parts), f"expected a number, got {v!r}") from None
        if not isinstance(v, (int, float)):
            raise NativeError(self.where(*parts), f"expected a number, got {_show(v)}")
        if isinstance(v, float) and v.is_integer() and integer:
            v = int(v)
        if integer and not isinstance(v, int):
            raise NativeError(self.where(*parts), f"expected an integer, got {v!r}")
        return v

    def count(self, v: Any, *parts: object) -> Optional[int]:
        """An instance or replica count: an integer, zero or more."""
        n = self.number(v, *parts, integer=True)
        if n is not None and n < 0:
            raise NativeError(self.where(*parts), f"a count is zero or more, got {n}")
        return n

    def ordered(self, lo: Optional[int], hi: Optional[int], lo_parts: tuple, hi_parts: tuple) -> None:
        """A minimum no greater than its maximum, as every provider's API requires of its bounds."""
        if lo is not None and hi is not None and lo > hi:
            raise NativeError(self.where(*lo_parts), f"{lo} is greater than the maximum "
                                                    f"({self.where(*hi_parts)}: {hi})")

    def mapping(self, v: Any, *parts: object) -> dict:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise NativeError(self.where(*parts), f"expected an object, got {_show(v)}")
        return v

    def listing(self, v: Any, *parts: object) -> list:
        if v is None:
            return []
        if not isinstance(v, list):
            raise NativeError(self.where(*parts), f"expected a list, got {_show(v)}")
        return v

    def string(self, v: Any, *parts: object) -> Optional[str]:
        if v is None or self.template(v, *parts):
            return None
        if not isinstance(v, str):
            raise NativeError(self.where(*parts), f"expected a string, got {_show(v)}")
        return v

    def unknown(self, obj: dict, known: set, *parts: object) -> None:
        """A field ``known`` does not hold is an error naming it, with the known field it
        is closest to (the same but for case, else one off by a letter or so)."""
        for k in obj:
            if k not in known:
                close = [f for f in known if isinstance(k, str) and f.lower() == k.lower()] or \
                    difflib.get_close_matches(str(k), sorted(known), n=1, cutoff=0.8)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise NativeError(self.where(*parts, k), f"unknown field {k!r}{hint} valid fields here: "
                                                        f"{', '.join(sorted(known))}")


def _show(v: Any) -> str:
    s = json.dumps(v, default=str)
    return s if len(s) <= 80 else s[:77] + "..."


_ISO = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def iso_duration(seconds: float) -> str:
    """Seconds as the ISO-8601 duration ARM writes (``PT5M``, ``PT1H30M``)."""
    s = int(round(seconds))
    if s == 0:
        return "PT0S"
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    out = "P" + (f"{d}D" if d else "")
    if h or m or s:
        out += "T" + (f"{h}H" if h else "") + (f"{m}M" if m else "") + (f"{s}S" if s else "")
    return out


def parse_iso_duration(text: Any, reader: Reader, *parts: object) -> Optional[float]:
    if text is None or reader.template(text, *parts):
        return None
    m = _ISO.match(text) if isinstance(text, str) else None
    if not m or text in ("P", "PT"):
        raise NativeError(reader.where(*parts), f"expected an ISO-8601 duration such as PT5M, got {_show(text)}")
    d, h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    return d * 86400 + h * 3600 + mi * 60 + s


def num(v: Any) -> Union[int, float]:
    """A policy number as JSON writes it (integral floats as integers)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v
