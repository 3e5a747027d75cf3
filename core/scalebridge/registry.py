"""The registry: entry points → what every plugin registered (semantics, providers,
metric sources, forecasters, translators), with the plugin that registered each.

Built-in semantics are entry points of this distribution in the same
``scalebridge`` group a third-party plugin uses; nothing is special-cased.
"""
from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from typing import Any, Optional

import pluggy

from . import hookspecs
from .errors import ScalebridgeError
from .semantics.base import Semantics


#: this distribution, whose own entry points (the built-ins) load first
DISTRIBUTION = hookspecs.PROJECT


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
    translators: dict[str, Registered] = field(default_factory=dict)
    plugins: list[tuple[str, str]] = field(default_factory=list)   # (name, where from)
    #: plugin name -> (the distribution that installed it, as its wheel names it — ``scalebridge_proportional`` —
    #: and its version, or None for a module registered in-process; the module)
    origins: dict[str, tuple[Optional[str], Optional[str], str]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)         # entry point → why it failed to load

    @property
    def builtin_semantics(self) -> tuple[str, ...]:
        """The semantics this distribution's own plugins registered, in the order they
        registered them (``--semantics all``)."""
        return tuple(name for name, entry in self.semantics.items()
                     if (self.origins.get(entry.plugin) or (None,))[0] == DISTRIBUTION)


def distribution_name(name: str) -> str:
    """A distribution's name as its wheel and ``.dist-info`` spell it (PEP 427/503
    normalized, ``-`` and ``.`` as ``_``): ``scalebridge-proportional`` ->
    ``scalebridge_proportional``, what ``pip show``/``pip uninstall`` accept too."""
    import re
    return re.sub(r"[-_.]+", "_", name).lower()


def _plugin_name(pm: pluggy.PluginManager, plugin: object) -> str:
    return pm.get_name(plugin) or getattr(plugin, "__name__", repr(plugin))


_HOOK_TABLES = ("scalebridge_register_semantics", "semantics"), ("scalebridge_register_providers", "providers"), \
    ("scalebridge_register_metric_sources", "metric_sources"), ("scalebridge_register_forecasters", "forecasters"), \
    ("scalebridge_register_translators", "translators")


def _check_registered(table: str, name: object, obj: object, plugin_name: str) -> None:
    if not isinstance(name, str) or not name:
        raise ScalebridgeError(f"plugin {plugin_name!r} registered an object without a name: {obj!r}")
    if table == "semantics":
        if not isinstance(obj, Semantics):
            raise ScalebridgeError(f"plugin {plugin_name!r} registered {name!r} as {obj!r}, not an instance of "
                                   "scalebridge.semantics.base.Semantics")
    elif table == "translators":
        # the contract is scalebridge.translate.Translator, a layer above this one: checked by what it does
        if not callable(getattr(obj, "render", None)) or isinstance(obj, type):
            raise ScalebridgeError(f"plugin {plugin_name!r} registered {name!r} as {obj!r}, not a translator "
                                   "(an instance of scalebridge.translate.Translator)")
    elif not callable(obj):
        raise ScalebridgeError(f"plugin {plugin_name!r} registered {name!r} with a factory that is not callable")


def build(extra_plugins: Optional[list] = None, load_entry_points: bool = True) -> Registry:
    """Load every plugin and collect what each registers. A plugin that fails — it
    does not import, its hook has the wrong signature or raises, it defines a
    ``scalebridge_*`` hook no hookspec knows (a misspelling), it registers something
    that is not what the hook asks for, or a name another plugin registered first —
    is listed in ``failures`` with the reason, none of its registrations are kept,
    and every other plugin works. Built-in entry points (this distribution's) load
    first, so a third-party name never displaces a built-in."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    reg = Registry()
    known = {n for n in dir(hookspecs) if n.startswith("scalebridge_")}

    def add(module: object, name: Optional[str], where: str, failure_key: str,
            dist: Optional[tuple[str, str]] = None) -> None:
        unknown = sorted(n for n in dir(module) if n.startswith("scalebridge_") and n not in known
                         and callable(getattr(module, n)))
        if unknown:
            reg.failures[failure_key] = (f"{where}: unknown hook(s) {', '.join(unknown)}; the hooks are "
                                         f"{', '.join(sorted(known))}")
            return
        try:
            pm.register(module, name=name)
        except Exception as e:   # e.g. a hookimpl whose arguments are not the hookspec's
            reg.failures[failure_key] = f"{where}: {type(e).__name__}: {e}"
            return
        plugin_name = _plugin_name(pm, module)
        reg.plugins.append((plugin_name, where))
        reg.origins[plugin_name] = (*(dist or (None, None)), getattr(module, "__name__", where))

    if load_entry_points:
        eps = list(importlib.metadata.entry_points(group=hookspecs.PROJECT))
        # a distribution's name and version, read once each: every read of either parses
        # its METADATA file again (importlib.metadata caches nothing), and a distribution
        # declares several entry points
        about: dict[int, tuple[Any, Optional[str], Optional[str]]] = {}

        def name_version(ep: Any) -> tuple[Optional[str], Optional[str]]:
            dist = getattr(ep, "dist", None)
            if dist is None:
                return None, None
            if id(dist) not in about:
                meta = dist.metadata
                about[id(dist)] = (dist, meta["Name"], meta["Version"])
            return about[id(dist)][1:]

        for ep in sorted(eps, key=lambda ep: name_version(ep)[0] != DISTRIBUTION):
            try:
                module = ep.load()
            except Exception as e:  # a broken plugin must not take the others down
                reg.failures[ep.name] = f"{ep.value}: {type(e).__name__}: {e}"
                continue
            if pm.is_registered(module):
                continue
            dist_name, version = name_version(ep)
            add(module, ep.name, f"{ep.value} ({dist_name} {version})" if dist_name else ep.value, ep.name,
                (distribution_name(dist_name), version) if dist_name else None)
    for p in extra_plugins or []:
        add(p, None, getattr(p, "__name__", repr(p)), getattr(p, "__name__", repr(p)))

    # each plugin's registrations, kept only if all of its hooks ran cleanly
    pending: dict[str, list[tuple[str, str, Any]]] = {}
    broken: set[str] = set()
    for hook, table in _HOOK_TABLES:
        for impl in getattr(pm.hook, hook).get_hookimpls():
            plugin_name = impl.plugin_name
            if plugin_name in broken:
                continue
            mine: list[tuple[str, str, Any]] = []

            def register(obj_or_name, factory=None, _mine=mine, _table=table, _plugin=plugin_name):
                if factory is None:
                    name, obj = getattr(obj_or_name, "name", None), obj_or_name
                else:
                    name, obj = obj_or_name, factory
                _check_registered(_table, name, obj, _plugin)
                _mine.append((_table, name, obj))

            try:
                impl.function(register=register)
            except Exception as e:
                broken.add(plugin_name)
                reg.failures[plugin_name] = f"{hook} raised {type(e).__name__}: {e}"
                pending.pop(plugin_name, None)
                continue
            pending.setdefault(plugin_name, []).extend(mine)
    for plugin_name, items in pending.items():
        clash = next(((t, n) for t, n, _ in items if n in getattr(reg, t)), None)
        if clash is None:
            seen: set = set()
            clash = next(((t, n) for t, n, _ in items if (t, n) in seen or seen.add((t, n))), None)
        if clash is not None:
            table, name = clash
            other = getattr(reg, table).get(name)
            by = f"already registered by {other.plugin!r}" if other else "registered twice by it"
            reg.failures[plugin_name] = f"{table} {name!r} is {by}; none of {plugin_name!r}'s registrations kept"
            continue
        for table, name, obj in items:
            getattr(reg, table)[name] = Registered(name, obj, plugin_name)
    return reg


_REGISTRY: Optional[Registry] = None


_HOOKS = {"semantics": "scalebridge_register_semantics", "providers": "scalebridge_register_providers",
          "metric_sources": "scalebridge_register_metric_sources", "forecasters": "scalebridge_register_forecasters",
          "translators": "scalebridge_register_translators"}


def provided_by(kind: str, name: str) -> str:
    """`` (plugin 'scalebridge_x', hook scalebridge_register_providers)`` for what
    ``kind`` (``semantics``, ``providers``…) registered as ``name``, or ``""``: how
    a plugin's bug names whose it is."""
    entry = getattr(current(), kind, {}).get(name)
    if entry is None:
        return ""
    return f" (plugin {entry.plugin!r}, hook {_HOOKS.get(kind, kind)})"


def registry() -> Registry:
    """:func:`current`, under the name it had when this module was ``scalebridge.plugins``."""
    return current()


def current() -> Registry:
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
    reg = current()
    table = reg.semantics
    try:
        return table[name].obj
    except KeyError:
        if name in reg.failures:
            why = f" (plugin {name!r} failed to load: {reg.failures[name]})"
        elif reg.failures:
            why = " (plugins that failed to load: " + "; ".join(f"{k}: {v}" for k, v in reg.failures.items()) + ")"
        else:
            why = ""
        raise ScalebridgeError(
            f"unknown semantics {name!r}{why}: available are "
            f"{', '.join(sorted(table)) or 'none (is scalebridge installed?)'}") from None


def provider_factory(name: str):
    """The factory registered for provider ``name``; an unknown name lists the
    installed ones. (A registered provider whose SDK is missing names the extra to install
    when it is made: :func:`scalebridge.providers.require`.)"""
    reg = current()
    entry = reg.providers.get(name)
    if entry is not None:
        return entry.obj
    available = ", ".join(sorted(reg.providers)) or "none"
    if name in reg.failures:
        why = f" (plugin {name!r} failed to load: {reg.failures[name]})"
    else:
        why = ""
    raise ScalebridgeError(f"unknown provider {name!r}{why}; installed providers are: {available}")


def translator(name: str) -> Registered:
    """The translator registered as ``name`` (what ``render --to`` and ``import --from``
    select), with the plugin that registered it; an unknown name lists the registered
    ones, the closest first."""
    reg = current()
    entry = reg.translators.get(name)
    if entry is not None:
        return entry
    failed = f" (plugins that failed to load: {'; '.join(f'{k}: {v}' for k, v in reg.failures.items())})" \
        if reg.failures else ""
    raise ScalebridgeError(f"unknown translator {name!r}{failed}; {translator_choices(name)}")


def translator_choices(name: str) -> str:
    """``did you mean 'kubernetes'? registered translators: aws, …`` for an unknown ``name``."""
    import difflib
    names = list(current().translators)
    close = difflib.get_close_matches(name, names, n=1)
    return (f"did you mean {close[0]!r}? " if close else "") + \
        f"registered translators: {', '.join(sorted(names)) or 'none'}"


def translator_for_provider(provider: str) -> Optional[Registered]:
    """The translator whose ``provider`` is ``provider`` (``apply`` for its
    targets), or None."""
    return next((r for r in current().translators.values() if getattr(r.obj, "provider", None) == provider), None)


def metric_source_factory(name: str):
    """The factory registered for metric-source type ``name``; an unknown name
    lists the installed ones."""
    reg = current()
    entry = reg.metric_sources.get(name)
    if entry is not None:
        return entry.obj
    why = f" (plugin {name!r} failed to load: {reg.failures[name]})" if name in reg.failures else ""
    raise ScalebridgeError(f"unknown metric source type {name!r}{why}; installed metric sources are: "
                           f"{', '.join(sorted(reg.metric_sources)) or 'none'}")
