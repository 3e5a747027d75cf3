"""Translate a policy to each provider's native autoscaler configuration and back:
``render(policy, to)`` and ``import_native(text, from_)``, each with its loss report
(docs/translate.md)."""
from __future__ import annotations

from importlib import import_module
from typing import Any, Optional, Union

from ..policy import Policy
from .common import Losses, NativeError, PLACEHOLDER

PROVIDERS = ("kubernetes", "gce", "azure", "aws")

__all__ = ["PROVIDERS", "Losses", "NativeError", "PLACEHOLDER", "render", "import_native", "import_all", "dump"]


def _module(name: str):
    if name not in PROVIDERS:
        raise NativeError("--to/--from", f"unknown provider {name!r}; one of {', '.join(PROVIDERS)}")
    return import_module(f"{__name__}.{name}")


def render(policy: Union[Policy, dict], to: str, target_ref: Optional[dict] = None) -> tuple[Any, Losses]:
    """The native configuration of ``policy`` for provider ``to``, and what it loses."""
    return _module(to).render(policy, target_ref)


def import_native(text_or_obj: Any, from_: str) -> tuple[dict, Losses]:
    """A policy dict (with the provider's semantics) from native configuration, and what it loses:
    the first (usually only) autoscaler of the input; :func:`import_all` for every one."""
    return import_all(text_or_obj, from_)[0]


def import_all(text_or_obj: Any, from_: str) -> list[tuple[dict, Losses]]:
    """Every autoscaler in the input (several HPAs in one YAML stream, an ARM template's settings)."""
    return _module(from_).import_all(text_or_obj)


def dump(native: Any, to: str) -> str:
    return _module(to).dump(native)
