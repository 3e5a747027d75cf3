"""Translate a policy to each provider's native autoscaler configuration and back:
``render(policy, to)`` and ``import_native(text, from_)``, each with its loss report
(docs/translate.md).

Every format is a :class:`Translator` registered through the plugin registry
(``scalebridge_register_translators``): the built-in ones are registered by the built-in
provider plugins (``plugins/scalebridge_<cloud>/``) exactly as a third-party plugin's would be.
Nothing here knows a format.
"""
from __future__ import annotations

from typing import Any, Optional, Union

from .. import moved
from ..errors import ScalebridgeError
from ..policy import Policy
from .base import TargetKey, Translator, TranslatorFailure, check_target
from .common import Losses, NativeError, PLACEHOLDER, as_policy

moved.install()   # scalebridge.translate.kubernetes and the other old names still import

__all__ = ["Losses", "NativeError", "PLACEHOLDER", "TargetKey", "Translator", "TranslatorFailure",
           "render", "import_native", "import_all", "dump", "translator", "call"]


def translator(name: str) -> Translator:
    """The translator registered as ``name``; an unknown one is a :class:`NativeError`
    listing the registered ones."""
    return _entry(name).obj


def _entry(name: str):
    from .. import registry
    try:
        return registry.translator(name)
    except ScalebridgeError as e:
        raise NativeError("--to/--from", str(e)) from None


def call(entry: Any, method: str, *args: Any) -> Any:
    """``entry.obj.method(*args)`` for a registered translator: a :class:`NativeError`
    or other :class:`ScalebridgeError` is the input's (or the provider's) and passes;
    anything else is the translator's bug, a :class:`TranslatorFailure` naming its
    plugin, the hook that registered it and the method."""
    try:
        return getattr(entry.obj, method)(*args)
    except ScalebridgeError:
        raise
    except Exception as e:
        raise TranslatorFailure(
            f"plugin {entry.plugin!r} (scalebridge_register_translators, translator {entry.name!r}) raised "
            f"{type(e).__name__} in {method}: {e}") from e


def render(policy: Union[Policy, dict], to: str, target_ref: Optional[dict] = None) -> tuple[Any, Losses]:
    """The native configuration of ``policy`` for translator ``to``, and what it loses;
    ``target_ref`` is ``--target`` (its keys checked against the translator's)."""
    entry = _entry(to)
    target = check_target(entry.obj, target_ref)
    return call(entry, "render", as_policy(policy), target)


def import_native(text_or_obj: Any, from_: str) -> tuple[dict, Losses]:
    """A policy dict (with the provider's semantics) from native configuration, and what it loses:
    the first (usually only) autoscaler of the input; :func:`import_all` for every one."""
    return import_all(text_or_obj, from_)[0]


def import_all(text_or_obj: Any, from_: str, parameters: Any = None) -> list[tuple[dict, Losses]]:
    """Every autoscaler in the input (several HPAs in one YAML stream, an ARM template's settings);
    ``parameters`` (:class:`~scalebridge.translate.common.Parameters`, ``import --parameters``)
    for a translator that takes a template's parameters, a :class:`NativeError` for one that takes none."""
    entry = _entry(from_)
    if not parameters:
        return call(entry, "import_all", text_or_obj)
    if not type(entry.obj).parameters:
        raise NativeError("--parameters", f"the {entry.name} translator takes no parameters (its input has no "
                                          "template parameters to set)")
    try:
        return entry.obj.import_all(text_or_obj, parameters=parameters)
    except ScalebridgeError:
        raise
    except Exception as e:
        raise TranslatorFailure(
            f"plugin {entry.plugin!r} (scalebridge_register_translators, translator {entry.name!r}) raised "
            f"{type(e).__name__} in import_all: {e}") from e


def dump(native: Any, to: str) -> str:
    return call(_entry(to), "dump", native)
