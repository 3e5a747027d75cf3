"""What a run configuration builds, without calling any cloud: every provider instance
(``factory(**options)``), every target handle (:meth:`Provider.target`), each target's
policy, semantics, settings and metric queries.

Every problem — an unknown provider, a missing SDK, duplicate target names, a policy
path that does not exist, a ``ref`` missing a key, ``--clock virtual`` on a provider that
cannot run on it — is a :class:`~.configfile.ConfigError` line
``file:line:column: key: message`` that says what would be valid.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import os
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError
from pydantic_core import to_json

from ..errors import PolicyError, RequestError, ScalebridgeError
from .. import controls
from ..compiled import CompiledPolicy
from ..policy import Policy, parse_policy, policy_json
from ..protocol import Settings, parse_settings
from ..providers import Capability, MissingExtra, Provider, RefError, provider_semantics
from .configfile import ConfigError, LoadedConfig, resolve_paths
from .runtime import Limits, Runtime, TargetSpec, take_limits
from .sources import build_metric_sources, check_target_sources, close_metric_sources

__all__ = ["build", "ignored_parts", "policy_hash", "NO_LONGER_USED"]


def _import_factory(spec: str):
    module, _, attr = spec.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ScalebridgeError(f"cannot import the provider factory {spec!r}: {e}") from None
    if not callable(obj):
        raise ScalebridgeError(f"{spec!r} is not callable; a provider factory is called with the options")
    return obj


def _secret_options(factory: Any, options: dict, loc: tuple, loaded: "LoadedConfig",
                    problems: list[str]) -> Optional[dict]:
    """The options with each secret option the provider declares
    (``Provider.secret_options``: ``credential.client_secret``) given as
    ``<option>_file`` read from that file (relative to the configuration file), and
    each checked to be a string — never shown (None: problems were reported)."""
    from ..secrets import read_secret_file, remember, shown
    out = dict(options)
    ok = True
    for dotted in sorted(getattr(factory, "secret_options", ()) or ()):
        *parents, key = dotted.split(".")
        holder: Any = out
        for part in parents:
            child = holder.get(part) if isinstance(holder, dict) else None
            if not isinstance(child, dict):
                holder = None
                break
            child = dict(child)
            holder[part] = child
            holder = child
        if holder is None:
            continue
        where = loaded.where(*loc, *parents, key)
        file_key = f"{key}_file"
        if file_key in holder:
            path = holder.pop(file_key)
            if key in holder:
                problems.append(f"{loaded.where(*loc, *parents, file_key)}: give {key} or {file_key}, not both")
                ok = False
                continue
            if not isinstance(path, str) or not path:
                problems.append(f"{loaded.where(*loc, *parents, file_key)}: expected a file path, got {shown(key, path)}")
                ok = False
                continue
            file = Path(os.path.expanduser(path))
            if not file.is_absolute():
                file = loaded.path.parent / file
            try:
                holder[key] = read_secret_file(file)
            except ValueError as e:
                problems.append(f"{loaded.where(*loc, *parents, file_key)}: {e}")
                ok = False
                continue
        if key in holder:
            value = holder[key]
            if not isinstance(value, str) or not value:
                problems.append(f"{where}: expected a string (or {file_key}: a file holding it), got "
                                f"{shown(key, value)}")
                ok = False
            else:
                remember(value)
    return out if ok else None


def _resolve_ref_paths(provider: Any, ref: Any, base: Path) -> Any:
    """A target's ``ref`` with the keys its provider declares as file paths
    (``Provider.ref_path_keys``: the ``sim`` provider's ``trace``) read from the
    configuration's directory, as the options' are (:func:`_resolve_paths`)."""
    keys = getattr(provider, "ref_path_keys", None)
    if not isinstance(ref, dict) or not keys:
        return ref
    if not any(k in ref for k in keys):
        return dict(ref)   # what _resolve_paths gives a ref with none of them, without a class per target
    return resolve_paths(type("_Keys", (), {"path_options": keys}), ref, base)


def _factory(type_name: str):
    from .. import registry
    if ":" in type_name:   # an extension for plugin authors and tests: a `module:attr` factory
        return _import_factory(type_name)
    return registry.provider_factory(type_name)


def _registered(name: str) -> bool:
    from .. import registry
    return name in registry.current().providers


def policy_hash(policy: Policy, semantics: str) -> str:
    """The content hash of a policy (with the semantics that runs it): a changed one
    starts from empty state, as the decision protocol says of ``state``. What the policy
    states beyond its defaults counts, so that writing a default out changes nothing."""
    body = to_json({"policy": policy_json(policy, exclude_defaults=True), "semantics": semantics})
    return hashlib.sha256(body).hexdigest()[:16]


def build(loaded: LoadedConfig, *, clock: str = "real") -> Runtime:
    """Every provider instance and target handle of the configuration; every problem
    at once (:class:`ConfigError`). Calls no cloud."""
    from ..engine import check_policy, resolve_semantics
    cfg = loaded.config
    problems: list[str] = []
    providers: dict[str, Provider] = {}
    limits: dict[str, Limits] = {}

    def make_provider(key: str, options: dict, loc: tuple) -> Optional[Provider]:
        options = dict(options)
        taken = take_limits(options, loc, loaded, problems)
        if taken is None:
            return None
        limits[key] = taken
        type_name = options.pop("type", None)
        explicit = type_name is not None
        if type_name is None:
            if not _registered(key) and ":" not in key:
                from .. import registry
                installed = ", ".join(sorted(registry.current().providers)) or "none"
                problems.append(f"{loaded.where(*loc)}: {key!r} is not a registered provider name, so it needs "
                                f"`type:` (installed providers are: {installed})")
                return None
            type_name = key
        if not isinstance(type_name, str):
            problems.append(f"{loaded.where(*loc, 'type')}: expected a provider name, got {type_name!r}")
            return None
        try:
            factory = _factory(type_name)
            options = _secret_options(factory, options, loc, loaded, problems)
            if options is None:
                return None
            return factory(**resolve_paths(factory, options, loaded.path.parent))
        except MissingExtra as e:
            problems.append(f"{loaded.where(*loc)}: {e}")
        except RefError as e:
            problems.append(f"{loaded.where(*loc, *e.key.split('.'))}: {e.message}")
        except ScalebridgeError as e:
            problems.append(f"{loaded.where(*loc, 'type') if explicit else loaded.where(*loc)}: {e}")
        except TypeError as e:   # an option the factory does not take
            problems.append(f"{loaded.where(*loc)}: the {type_name} provider does not take these options: {e}")
        return None

    for key, options in cfg.providers.items():
        p = make_provider(key, options or {}, ("providers", key))
        if p is not None:
            providers[key] = p

    instances = build_metric_sources(loaded, problems)
    policies: dict[str, CompiledPolicy] = {}
    for key, body in cfg.policies.items():
        pol = _policy(loaded, body, ("policies", key), problems)
        if pol is not None:
            policies[key] = pol

    specs: list[TargetSpec] = []
    seen: dict[str, int] = {}
    no_settings = Settings()   # read only: a target with settings of its own gets a copy (below)
    delayed: dict[float, Settings] = {}   # no_settings with each provider's metric delay
    for i, t in enumerate(cfg.targets):
        loc = ("targets", i)
        if t.name in seen:
            problems.append(f"{loaded.where(*loc, 'name')}: duplicate target name {t.name!r} "
                            f"(also targets[{seen[t.name]}]); each target's name is the key of its persisted state")
            continue
        seen[t.name] = i
        provider = providers.get(t.provider)
        if provider is None:
            if t.provider in cfg.providers:
                continue   # its problem is already reported
            if not _registered(t.provider):
                from .. import registry
                configured = ", ".join(sorted(cfg.providers)) or "none"
                installed = ", ".join(sorted(registry.current().providers)) or "none"
                problems.append(f"{loaded.where(*loc, 'provider')}: unknown provider {t.provider!r}; "
                                f"configured providers: {configured}; installed providers are: {installed}")
                continue
            provider = make_provider(t.provider, {}, loc + ("provider",))
            if provider is None:
                continue
            providers[t.provider] = provider
        if isinstance(t.policy, str) and t.policy in policies:
            policy = policies[t.policy]
        elif isinstance(t.policy, str) and t.policy in cfg.policies:
            continue   # its problem is already reported
        else:
            policy = _policy(loaded, t.policy, loc + ("policy",), problems, named=set(cfg.policies))
            if policy is None:
                continue
        sem_name = t.semantics or policy.semantics or provider_semantics(provider)
        try:
            sem = resolve_semantics(sem_name, path="semantics")
            check_policy(sem, policy)   # once per (shared) policy and semantics
        except RequestError as e:
            where = loaded.where(*loc, "semantics") if t.semantics else loaded.where(*loc, "policy")
            problems.append(f"{where}: {e.message}")
            continue
        if t.settings:
            try:
                settings = parse_settings(t.settings)
            except ValidationError as e:
                from ..engine import describe_validation_error
                path, msg = describe_validation_error(e)
                problems.append(f"{loaded.where(*loc, 'settings', *path.lstrip('$.').split('.'))}: {msg}")
                continue
        else:
            settings = no_settings
        try:
            sem.check_settings(settings)
        except RequestError as e:
            problems.append(f"{loaded.where(*loc, 'settings', *e.path.lstrip('$.').split('.')[1:])}: {e.message}")
            continue
        if clock == "virtual" and Capability.VIRTUAL_CLOCK not in getattr(provider, "capabilities", ()):
            problems.append(f"{loaded.where(*loc, 'provider')}: --clock virtual needs a provider that declares "
                            f"Capability.VIRTUAL_CLOCK (the sim provider does); provider {t.provider!r} "
                            f"({getattr(provider, 'name', type(provider).__name__)}) does not run on a virtual clock")
            continue
        try:
            handle = provider.target(_resolve_ref_paths(provider, t.ref, loaded.path.parent))
        except RefError as e:
            key = tuple(e.key.split("."))
            if key and key[0] == "ref":
                key = key[1:]
            problems.append(f"{loaded.where(*loc, 'ref', *key)}: {e.message}")
            continue
        except MissingExtra as e:
            problems.append(f"{loaded.where(*loc, 'provider')}: {e}")
            continue
        except ScalebridgeError as e:
            problems.append(f"{loaded.where(*loc, 'ref')}: {e}")
            continue
        if settings.metric_delay_seconds is None:   # the provider's own, unless the target says
            delay = float(handle.metric_delay_seconds or 0.0)
            if settings is no_settings:   # shared: settings are never changed once built
                settings = delayed.get(delay) or delayed.setdefault(
                    delay, dataclasses.replace(settings, metric_delay_seconds=delay))
            else:
                settings = dataclasses.replace(settings, metric_delay_seconds=delay)
        sources = {name: m.source for name, m in t.metrics.items()}
        if sources:
            queries, names, digest = _queries(policy, sem.name, sources)
        else:   # every metric from the provider: what the policy's other targets read too
            queries, names, digest = _of_policy(policy, ("queries", sem.name),
                                                lambda: _queries(policy, sem.name, sources))
        queries = list(queries)   # the queries themselves are frozen; the list is the target's
        unknown = sorted(set(sources) - set(names))
        if unknown:
            problems.append(f"{loaded.where(*loc, 'metrics', unknown[0])}: the policy reads no metric "
                            f"{unknown[0]!r}; its metrics are: {', '.join(names) or 'none'}")
            continue
        routes = check_target_sources(loaded, loc, sources, instances, problems)
        check = getattr(provider, "check_metric_source", None)
        bad = routes is None
        for name, source in sources.items():
            if routes is None or name in routes:
                continue
            try:
                if check is not None:
                    check(name, source)
            except RefError as e:
                key = tuple(e.key.split("."))
                if key[:1] != ("metrics",):
                    key = ("metrics", name, "source") + key
                problems.append(f"{loaded.where(*loc, *key)}: {e.message}")
                bad = True
        if bad:
            continue
        specs.append(TargetSpec(t.name, t.provider, provider, handle, policy, digest,
                                sem.name, settings, bool(t.dry_run), queries, routes, t.backtest,
                                bool(t.paused), limits.get(t.provider) or Limits()))
    if cfg.leader_election is not None and cfg.leader_election.provider is not None \
            and cfg.leader_election.provider not in providers:
        problems.append(f"{loaded.where('leader_election', 'provider')}: no provider instance "
                        f"{cfg.leader_election.provider!r}; configured: {', '.join(sorted(providers)) or 'none'}")
    if isinstance(cfg.state, dict):
        name = cfg.state.get("provider")
        if not isinstance(name, str) or name not in providers:
            problems.append(f"{loaded.where('state', 'provider')}: a `state:` mapping names a provider instance "
                            f"(`provider: NAME`); configured: {', '.join(sorted(providers)) or 'none'}")
    if problems:
        for p in providers.values():
            try:
                p.close()
            except Exception:  # noqa: BLE001
                pass
        close_metric_sources(instances)
        raise ConfigError(problems)
    return Runtime(loaded, providers, specs, float(cfg.sync_period_seconds), cfg.state, metric_sources=instances)


#: keys a configuration may still set that no longer do anything, and why
NO_LONGER_USED = {
    "processes": "no longer used: every target is synced in the controller's process (one process syncs "
                 "10,000 in-process targets in about a second, inside a 15-s period; the shard processes "
                 "it chose were removed)",
}


def ignored_parts(runtime: Runtime) -> list[str]:
    """``file:line:column: KEY: warning: …`` for each key that no longer does anything
    (:data:`NO_LONGER_USED`) and for each part of a target's policy its semantics does
    not read (:meth:`~scalebridge.semantics.Semantics.ignored_parts`), for ``validate``
    and the start of ``run``."""
    from ..engine import resolve_semantics
    from ..errors import json_path
    from ..policy import fraction_targets
    loaded = runtime.loaded
    out = [f"{loaded.where(key)}: warning: {why}" for key, why in NO_LONGER_USED.items()
           if getattr(loaded.config, key) is not None]
    by_name = {t.name: i for i, t in enumerate(runtime.loaded.config.targets)}
    for spec in runtime.targets:
        # (the release a target's settings name changes what its semantics reads of a policy)
        lines = _of_policy(spec.policy, ("ignored parts", spec.semantics, repr(spec.settings)),
                           lambda spec=spec: [f"{json_path(loc, root='policy')}: {message}" for loc, message in
                                              fraction_targets(spec.policy.source)] +
                           resolve_semantics(spec.semantics).ignored_parts(spec.policy.source,
                                                                            parse_settings(spec.settings)))
        if lines:
            where = runtime.loaded.where("targets", by_name[spec.name], "policy")
            out.extend(f"{where}: warning: target {spec.name!r} under {spec.semantics}: {line}" for line in lines)
    return out


def _queries(policy: CompiledPolicy, semantics: str, sources: dict) -> tuple[list, list, str]:
    """A target's metric queries, the names of the metrics its policy reads, and the
    policy's hash under ``semantics``."""
    from .queries import metric_names, queries_for
    queries = queries_for(policy, semantics, sources)
    names = list(dict.fromkeys(metric_names(policy.source) + [q.name for q in queries]))
    return queries, names, policy_hash(policy.source, semantics)


def _of_policy(policy: CompiledPolicy, key: tuple, make: Any) -> Any:
    """What the controller derives from a policy alone (``make()``), once per policy:
    kept with the compiled policy as the semantics keep theirs, under ``("controller",
    *key)`` (10,000 targets name a few policies)."""
    return policy.derived(("controller", *key), lambda _: make())


def _policy(loaded: LoadedConfig, body: Any, loc: tuple, problems: list[str],
            named: Optional[set] = None) -> Optional[CompiledPolicy]:
    """A policy given as a path (relative to the configuration file) or inline, compiled
    (every target naming it decides with this one compiled policy)."""
    policy = _policy_as_written(loaded, body, loc, problems, named)
    return None if policy is None else controls.compile(policy)


def _policy_as_written(loaded: LoadedConfig, body: Any, loc: tuple, problems: list[str],
                       named: Optional[set] = None) -> Optional[Policy]:
    from ..engine import read_policy_file
    from ..policyfile import validation_problems
    if isinstance(body, str):
        path = Path(body).expanduser()
        if not path.is_absolute():
            path = loaded.path.parent / path
        if not path.is_file():
            known = f"; named policies: {', '.join(sorted(named))}" if named else ""
            problems.append(f"{loaded.where(*loc)}: the policy file {str(path)!r} does not exist (a policy is a key "
                            f"of `policies:`, a policy file's path relative to {loaded.path.name}, or the policy "
                            f"inline{known})")
            return None
        try:
            return read_policy_file(path)
        except PolicyError as e:
            problems.extend(f"{p} (policy of {loaded.where(*loc)})" for p in e.problems)
            return None
    try:
        return parse_policy(body)
    except ValidationError as e:
        for p in validation_problems(e, str(loaded.path), loaded.positions, prefix=loc):
            problems.append(p.replace(": policy.", ": ", 1))
        return None
