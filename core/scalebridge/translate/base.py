"""The translator contract: one native autoscaler format that ``render --to``,
``import --from`` and ``apply`` reach through the plugin registry.

A plugin registers a :class:`Translator` instance with the
``scalebridge_register_translators`` hook (:mod:`scalebridge.hookspecs`); the five
built-in ones (``kubernetes``, ``gce``, ``azure``, ``aws``, ``keda``) are registered the same way,
through this distribution's entry points. docs/plugins.md, "A translator", shows one.
"""
from __future__ import annotations

import difflib
import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Optional

from ..errors import ScalebridgeError
from ..policy import Policy
from .common import Losses, NativeError
from .metrics import MetricNames

__all__ = ["Translator", "TargetKey", "TranslatorFailure", "check_target", "valid_metric_sources"]


class TranslatorFailure(ScalebridgeError):
    """A translator raised something other than a :class:`NativeError` (bad native
    input) or a :class:`ScalebridgeError`: a bug in it, or in the plugin that registered
    it, never the input's fault. The CLI prints it as one line and exits 1."""


@dataclass(frozen=True)
class TargetKey:
    """One key ``--target`` takes: what it is (for the messages and ``--help``), and a
    check returning what would be valid when a value is not (None when it is)."""

    what: str
    check: Optional[Callable[[Any], Optional[str]]] = None


def pattern(regex: str, valid: str) -> Callable[[Any], Optional[str]]:
    """A :attr:`TargetKey.check` accepting strings that match ``regex`` in full;
    ``valid`` says what would be valid."""
    compiled = re.compile(regex)

    def check(v: Any) -> Optional[str]:
        return None if isinstance(v, str) and compiled.fullmatch(v) else f"{valid}, got {json.dumps(v, default=str)}"
    return check


#: ``--target``'s ``metrics`` key: the run configuration target's ``metrics:`` mapping
#: (docs/run.md), where each policy metric's samples come from in the provider's own terms;
#: a translator reads there what the native configuration names (an object, a namespace)
METRICS_KEY = "metrics"


class Translator(ABC):
    """A native autoscaler format.

    - ``name``: what ``--to`` and ``--from`` select (``kubernetes``, ``toy``).
    - ``provider``: the provider (``scalebridge_register_providers``) whose targets
      ``apply`` configures with this format, or None. A provider declaring
      :attr:`scalebridge.providers.Capability.TRANSLATE` has a translator with its name
      here, and that translator implements :meth:`apply`.
    - ``summary``: one line for ``scalebridge plugins`` and ``render --help``.
    - ``target_keys``: what ``--target`` takes (the run configuration's ``ref`` keys of
      that provider, and whatever else the native configuration needs, such as a
      location). An unknown key, or a value a key's check refuses, is refused before
      :meth:`render` is called.
    - ``metric_names``: the provider's metric for each neutral metric name.

    Every method may raise :class:`NativeError` for bad input (one line naming the
    field, exit 2). Anything else escaping a method is reported as this translator's
    bug, naming its plugin (exit 1).
    """

    name: ClassVar[str]
    provider: ClassVar[Optional[str]] = None
    summary: ClassVar[str] = ""
    target_keys: ClassVar[Mapping[str, TargetKey]] = {}
    #: which of its provider's metrics stands for each neutral metric (``cpu``…): render writes
    #: a neutral name as the provider's metric, and every translator's import reads the
    #: provider's metric back as the neutral name (:mod:`scalebridge.translate.metrics`)
    metric_names: ClassVar[MetricNames] = MetricNames()
    #: what ``import --parameters`` means for this format (a template's parameters), or "" when
    #: it takes none; a translator that takes them has ``import_all(text, parameters=...)``
    #: (:class:`~scalebridge.translate.common.Parameters`)
    parameters: ClassVar[str] = ""

    @abstractmethod
    def render(self, policy: Policy, target: Mapping[str, Any]) -> tuple[Any, Losses]:
        """The native configuration of ``policy`` and what it loses.

        ``target`` holds the ``--target`` keys given (checked against
        :attr:`target_keys`). For a field the configuration needs and neither the
        policy nor ``target`` gives, write the placeholder that
        ``losses.placeholder(field, how)`` returns: it prints a ``note:`` naming the field
        and how to fill it (``pass --target name``), and ``render --strict`` fails while
        one is left. For each policy feature the format cannot express, ``losses.add(
        where, why)``: a ``lost:`` line. ``losses.note(where, text)`` says anything else."""

    def dump(self, native: Any) -> str:
        """``native`` as the text ``render`` writes (JSON by default)."""
        return json.dumps(native, indent=2) + "\n"

    def import_all(self, text: str) -> list[tuple[dict, Losses]]:
        """Every autoscaler of the native input, each as a policy dict (with this
        provider's ``semantics`` and, where the input names it, its ``name``) and what
        it loses. Loss lines start with the JSON path of what they speak of."""
        raise NativeError("--from", f"the {self.name} translator renders only; it does not import")

    def apply(self, name: str, target: Any, policy: Policy, dry_run: bool, say: Callable[[str], None],
              metrics: Mapping[str, Any]) -> bool:
        """``apply`` for one target of the run configuration: create or update
        its native autoscaler through the provider plugin's client (``target`` is what
        the provider's ``target(ref)`` returned; ``metrics`` the target's ``metrics:``
        sources). ``say`` one line per change (``web: PutScalingPolicy web-metric-0: …``),
        or ``NAME: unchanged``; write nothing when ``dry_run``. Returns whether anything
        changed (or would). Raise a :class:`ScalebridgeError` for what the provider
        refused; anything else is reported as this translator's bug."""
        raise NativeError("apply", f"the {self.name} translator cannot apply")

    @classmethod
    def can(cls, method: str) -> bool:
        """Whether this translator implements ``import_all`` or ``apply``."""
        return getattr(cls, method) is not getattr(Translator, method)


def check_target(translator: Translator, ref: Optional[Mapping[str, Any]]) -> dict:
    """``ref`` checked against ``translator.target_keys``: an unknown key (with the
    closest valid one) or a refused value is a :class:`NativeError` naming it."""
    if ref is None:
        return {}
    if not isinstance(ref, Mapping):
        raise NativeError("--target", f"expected a mapping such as {example(translator)}")
    keys = translator.target_keys
    for k, v in ref.items():
        if k not in keys:
            key, sep, value = str(k).partition(":")
            if sep and v is None and key.strip():
                # `{kind:Deployment}`: flow YAML reads a colon without a space after it as part of the key
                raise NativeError(f"--target.{k}", f"read as one key with no value: YAML needs a space after the "
                                                     f"colon ('{{{key.strip()}: {value.strip()}}}')")
            close = difflib.get_close_matches(str(k), list(keys), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ";"
            raise NativeError(f"--target.{k}", f"unknown key{hint} valid keys for --to {translator.name}: "
                                                 f"{', '.join(keys) or 'none'}")
        why = keys[k].check(v) if keys[k].check is not None and v is not None else None
        if why is not None:
            raise NativeError(f"--target.{k}", f"{keys[k].what}: {why}")
    return dict(ref)


def example(translator: Translator) -> str:
    """``'{a: A, b: B}'``: the ``--target`` keys of ``translator``, as a user types them."""
    keys = [k for k in translator.target_keys if k != METRICS_KEY]
    return "'{" + ", ".join(f"{k}: {k.upper()}" for k in keys) + "}'"


def valid_metric_sources(source_keys: frozenset[str], provider: str) -> Callable[[Any], Optional[str]]:
    """The check of ``--target``'s ``metrics`` key: ``{NAME: {source: {KEY: …}}}`` as the
    run configuration's target ``metrics:`` holds it, with ``source_keys`` the keys the
    ``provider`` plugin's metric sources take (docs/run.md)."""

    def check(v: Any) -> Optional[str]:
        if not isinstance(v, Mapping):
            return "expected {NAME: {source: {…}}}, as a run configuration target's metrics:"
        for name, entry in v.items():
            if not isinstance(entry, Mapping) or set(entry) - {"source"} or not isinstance(entry.get("source"),
                                                                                           Mapping):
                return f"{name}: expected {{source: {{…}}}}, as a run configuration target's metrics:"
            for key in entry["source"]:
                if key not in source_keys:
                    close = difflib.get_close_matches(str(key), sorted(source_keys), n=1)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    return (f"{name}.source.{key}: not a key of a {provider} metric source; {hint}"
                            f"valid: {', '.join(sorted(source_keys))}")
        return None
    return check


def source_of(target: Mapping[str, Any], metric: str) -> Mapping[str, Any]:
    """The ``--target`` metric source of policy metric ``metric`` ({} when none)."""
    entry = (target.get(METRICS_KEY) or {}).get(metric) or {}
    return entry.get("source") or {}
