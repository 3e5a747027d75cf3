"""``scalebridge apply CONFIG``: create or update each target's native
autoscaler from its policy, through the translator its provider plugin registered for it
(``Translator.apply``, which makes every call with the plugin's own client), and what
those translators share: the field-by-field difference with what is there (:func:`diff`,
:func:`said_diff`) and :class:`ApplyError`. ``--dry-run`` reads what is there and prints
the difference, writing nothing. A target that ``scalebridge run`` actuates (it has
decision state) is refused: a target is actuated or translated, never both.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterator, Optional

from ..errors import ScalebridgeError


class ApplyError(ScalebridgeError):
    """What the provider's native autoscaler API refused or lacks (a group not found, an
    operation not done): the target failed, not the translator."""


def _flat(obj: Any, at: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flat(v, f"{at}.{k}" if at else k)
    elif isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        for i, v in enumerate(obj):
            yield from _flat(v, f"{at}[{i}]")
    else:
        yield at, obj


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def diff(desired: dict, current: dict, skip: tuple = ()) -> list[str]:
    """``key: old -> new`` for every field of ``desired`` that ``current`` does not hold."""
    have = dict(_flat(current))
    return [f"{k}: {have.get(k)!r} -> {v!r}" for k, v in _flat(desired)
            if k not in skip and not _same(have.get(k), v)]


def said_diff(say: Callable[[str], None], name: str, op: str, key: str, body: dict, have: Optional[dict],
               skip: tuple = ()) -> list[str]:
    """What ``op`` of ``body`` would change over ``have`` (None: it creates the
    resource), each change said as a line."""
    d = diff(body, have or {}, skip=skip)
    if have is None:
        say(f"{name}: {op} {key}: create")
    else:
        for line in d:
            say(f"{name}: {op} {key}: {line}")
    return d


def cmd_apply(args: Any) -> int:
    """Apply every target of the run configuration natively, through the translator
    registered for its provider; exit 1 when any target failed, its provider declares
    no ``Capability.TRANSLATE`` or a translator failed, 2 for a bad configuration."""
    from .. import registry
    from ..controller.configfile import load_config
    from ..controller.build import build
    from ..providers import Capability
    from . import call
    loaded = load_config(args.config)
    runtime = build(loaded)
    failed = 0

    def say(line: str) -> None:
        print(line, file=sys.stdout)

    def refuse(spec: Any, why: str) -> None:
        nonlocal failed
        print(f"scalebridge apply: {spec.name}: {why}", file=sys.stderr)
        failed += 1

    actuated = _actuated(loaded, runtime, getattr(args, "state", None))
    try:
        for spec in runtime.targets:
            if spec.name in actuated:
                refuse(spec, f"refused: `scalebridge run` actuates this target (it has decision state in "
                             f"{actuated[spec.name]}); a target is actuated or translated, never both "
                             "(`scalebridge state reset` forgets it)")
                continue
            kind = spec.provider.name
            entry = registry.translator_for_provider(kind)
            if Capability.TRANSLATE not in spec.provider.capabilities:
                refuse(spec, f"apply is not available for {kind} targets: the {kind} provider does not declare "
                             f"Capability.TRANSLATE (providers that do: {', '.join(_translating()) or 'none'})")
                continue
            if entry is None or not type(entry.obj).can("apply"):
                refuse(spec, f"the {kind} provider declares Capability.TRANSLATE, but no translator registered for "
                             f"it can apply (scalebridge_register_translators: a translator with provider = {kind!r} "
                             "and an apply method)")
                continue
            metrics = {q.name: {"source": dict(q.source)} for q in spec.queries if q.source}
            try:
                call(entry, "apply", spec.name, spec.target, spec.policy, args.dry_run, say, metrics)
            except ScalebridgeError as e:   # a provider's refusal or error: this target failed, the others go on
                refuse(spec, str(e))
    finally:
        runtime.close()
    return 1 if failed else 0


def _translating() -> list[str]:
    """The registered providers that declare ``Capability.TRANSLATE``."""
    from .. import registry
    from ..providers import Capability
    return sorted(name for name, r in registry.current().providers.items()
                  if Capability.TRANSLATE in getattr(r.obj, "capabilities", ()))


def _actuated(loaded: Any, runtime: Any, override: Any) -> dict[str, str]:
    """Targets with decision state in the run configuration's store, by name (where).
    A state file that does not exist yet holds none (and is not created)."""
    from pathlib import Path

    from ..controller.configfile import DEFAULT_STATE_PATH
    from ..controller.store import SQLiteStore, open_store
    state = override if override is not None else runtime.state
    if isinstance(state, dict):
        store = open_store(state, runtime.providers, base=loaded.path.parent)
        where = f"the {state.get('provider')} store"
    else:
        p = Path(state or DEFAULT_STATE_PATH).expanduser()
        if override is None and state and not p.is_absolute():
            p = loaded.path.parent / p
        if not p.exists():
            return {}
        store, where = SQLiteStore(p, readonly=True), str(p)
    try:
        return {name: where for name in store.load_all()}
    finally:
        store.close()
