"""The plugin manager: entry points → registries of semantics, providers, …

Built-in semantics are entry points of this distribution in the same
``scalebridge`` group a third-party plugin uses; nothing is special-cased.
"""
from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import pluggy

from . import hookspecs
from .errors import ScalebridgeError


@dataclass
class Registered:
    name: str
    obj: Any
    plugin: str        # the entry point or module that registered it


@dataclass
class Registry:
    semantics: dict[str, Registered] = field(default_factory=dict)
    providers: dict[str, Registered] = field(default_factory=dict)
    metric_sources: dict[str, Registered] = field(default_factory=dict)
    forecasters: dict[str, Registered] = field(default_factory=dict)
    plugins: list[tuple[str, str]] = field(default_factory=list)   # (name, where from)
    failures: dict[str, str] = field(default_factory=dict)         # entry point → why it failed to load


def _plugin_name(pm: pluggy.PluginManager, plugin: object) -> str:
    return pm.get_name(plugin) or getattr(plugin, "__name__", repr(plugin))


def build(extra_plugins: Optional[list] = None, load_entry_points: bool = True) -> Registry:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    reg = Registry()
    if load_entry_points:
        for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT):
            try:
                module = ep.load()
            except Exception as e:  # a broken plugin must not take the others down
                reg.failures[ep.name] = f"{ep.value}: {type(e).__name__}: {e}"
                continue
            if pm.is_registered(module):
                continue
            pm.register(module, name=ep.name)
            dist = getattr(ep, "dist", None)
            reg.plugins.append((ep.name, f"{ep.value} ({dist.name} {dist.version})" if dist else ep.value))
    for p in extra_plugins or []:
        pm.register(p)
        reg.plugins.append((_plugin_name(pm, p), getattr(p, "__name__", repr(p))))

    def registrar(table: dict, plugin_name: str) -> Callable:
        def register(obj_or_name, factory=None):
            if factory is None:
                name, obj = getattr(obj_or_name, "name", None), obj_or_name
            else:
                name, obj = obj_or_name, factory
            if not name:
                raise ScalebridgeError(f"plugin {plugin_name!r} registered an object without a name")
            if name in table:
                raise ScalebridgeError(
                    f"{name!r} is registered twice: by {table[name].plugin!r} and by {plugin_name!r}")
            table[name] = Registered(name, obj, plugin_name)
        return register

    for hook, table in (("scalebridge_register_semantics", reg.semantics),
                        ("scalebridge_register_providers", reg.providers),
                        ("scalebridge_register_metric_sources", reg.metric_sources),
                        ("scalebridge_register_forecasters", reg.forecasters)):
        caller = getattr(pm.hook, hook)
        for impl in caller.get_hookimpls():
            impl.function(register=registrar(table, impl.plugin_name))
    return reg


_REGISTRY: Optional[Registry] = None


def registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = build()
    return _REGISTRY


def reset(extra_plugins: Optional[list] = None) -> Registry:
    """Rebuild the registry (tests; a program that registers plugins in-process)."""
    global _REGISTRY
    _REGISTRY = build(extra_plugins)
    return _REGISTRY


def semantics(name: str):
    reg = registry()
    table = reg.semantics
    try:
        return table[name].obj
    except KeyError:
        why = f" (plugin {name!r} failed to load: {reg.failures[name]})" if name in reg.failures else ""
        raise ScalebridgeError(
            f"unknown semantics {name!r}{why}: available are "
            f"{', '.join(sorted(table)) or 'none (is scalebridge installed?)'}") from None
