"""The run configuration of ``scalebridge run`` (YAML), and what it builds.

:func:`load_config` reads the file with the policy files' positioned YAML loader
and validates it (pydantic); :func:`build` then makes every provider instance
(``factory(**options)``) and every target handle (:meth:`Provider.target`)
without calling any cloud. Every problem — of the file's shape, an unknown
provider, a missing SDK, duplicate target names, a policy path that does not
exist, a ``ref`` missing a key, ``--clock virtual`` on a provider that cannot
run on it — is a :class:`ConfigError` line ``file:line:column: key: message``
that says what would be valid.
"""
from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_json

from ..errors import PolicyError, RequestError, ScalebridgeError, json_path, normalize_errors
from ..policy import Bool, Duration, Int, Policy
from ..protocol import Settings
from ..providers import Capability, MetricQuery, MissingExtra, Provider, RefError, Target, provider_semantics

__all__ = ["ConfigError", "RunConfig", "LoadedConfig", "TargetSpec", "Runtime", "load_config", "build",
           "DEFAULT_SYNC_PERIOD_SECONDS", "DEFAULT_STATE_PATH", "DEFAULT_WORKERS", "DEFAULT_METRICS_ADDRESS",
           "is_run_config"]

#: the HPA's default ``--horizontal-pod-autoscaler-sync-period`` (15 s),
#: https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/
DEFAULT_SYNC_PERIOD_SECONDS = 15.0
#: targets synced at once: kube-controller-manager's ``--concurrent-horizontal-pod-autoscaler-syncs``
#: default (5), https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/
DEFAULT_WORKERS = 5
#: the embedded default state file, in the working directory
DEFAULT_STATE_PATH = "scalebridge-state.db"
#: where ``/metrics`` listens: every interface, as an exporter does in a pod
DEFAULT_METRICS_ADDRESS = "0.0.0.0"


class ConfigError(ScalebridgeError):
    """One or more problems in a run configuration, each ``file:line:column: key: message``."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


#: the bounds of ``sync_period_seconds``: a second (the HPA's own sync period is a
#: flag of whole seconds and more) to a day (a controller that syncs less often than
#: that acts on nothing any provider's windows still hold)
MIN_SYNC_PERIOD_SECONDS = 1.0
MAX_SYNC_PERIOD_SECONDS = 86400.0


def _sync_period(v: float) -> float:
    if not MIN_SYNC_PERIOD_SECONDS <= v <= MAX_SYNC_PERIOD_SECONDS:
        raise ValueError(f"must be from {MIN_SYNC_PERIOD_SECONDS:g} s to {MAX_SYNC_PERIOD_SECONDS:g} s (a day), "
                         f"got {v:g}")
    return v


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricSource(_Model):
    """Where one policy metric's samples come from, in the provider's own terms."""
    source: dict[str, Any] = Field(description="the provider's metric source (documented by each plugin)")


def _startup(v: Any) -> Any:
    from ..simulator.fleet import parse_startup
    parse_startup(v)   # ValueError: its message says what is valid
    return v


class BacktestOptions(_Model):
    """The fleet options ``scalebridge backtest`` replays this target with (``simulate``'s)."""
    capacity: Optional[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(
        None, description="the load one member serves, in the demand's unit")
    startup: Optional[Annotated[Union[str, float], AfterValidator(_startup)]] = Field(
        None, description="request to ready: seconds, or uniform:LOW,HIGH or normal:MEAN,SD")
    size_source: Optional[dict[str, Any]] = Field(
        None, description="extension: where the size the target had is recorded, {metric_source, query}")


class TargetConfig(_Model):
    name: str = Field(min_length=1, description="unique; the key of the target's persisted state")
    provider: str = Field(min_length=1, description="a key of `providers:`, or a registered provider name")
    policy: Union[str, dict[str, Any]] = Field(description="a key of `policies:`, a policy file path, or a policy")
    semantics: Optional[str] = Field(None, description="default: the policy's `semantics`, else the provider's own")
    ref: dict[str, Any] = Field(default_factory=dict, description="what the provider needs to find the target")
    metrics: dict[str, MetricSource] = Field(default_factory=dict,
                                             description="per policy metric name: its `source`")
    settings: Optional[dict[str, Any]] = Field(None, description="extension: the decision protocol's `settings`")
    dry_run: Bool = Field(False, description="decide and report, never write this target")
    paused: Bool = Field(False, description="make no decision and no write for this target (its size is held); "
                                            "`scalebridge pause` does the same without editing the file")
    backtest: Optional[BacktestOptions] = Field(None, description="the fleet options `backtest` replays with")


class LeaderElection(_Model):
    namespace: str = "scalebridge"
    name: str = "scalebridge-controller"
    provider: Optional[str] = Field(None, description="extension: the provider instance that holds the lease "
                                                      "(default: the one of type kubernetes)")
    identity: Optional[str] = Field(None, description="extension: this replica's identity (default: host name "
                                                      "and process id)")


class RunConfig(_Model):
    """The whole run configuration (keys fixed by the run-config contract)."""
    sync_period_seconds: Annotated[Duration, AfterValidator(_sync_period)] = DEFAULT_SYNC_PERIOD_SECONDS
    state: Union[str, dict[str, Any], None] = Field(
        None, description="the SQLite file, or {provider: NAME, ...} for a provider's own store")
    leader_election: Optional[LeaderElection] = None
    providers: dict[str, Optional[dict[str, Any]]] = Field(default_factory=dict)
    metric_sources: dict[str, Optional[dict[str, Any]]] = Field(
        default_factory=dict, description="named metric-source instances: {type: NAME, ...options}")
    policies: dict[str, Union[str, dict[str, Any]]] = Field(default_factory=dict)
    targets: list[TargetConfig] = Field(min_length=1)
    workers: Optional[Annotated[Int, Field(ge=1, le=256)]] = Field(
        None, description="extension: targets synced at once (default 5, the HPA controller's)")
    processes: Optional[Annotated[Int, Field(ge=1, le=64)]] = Field(
        None, description="no longer used (every target is synced in the controller's process); accepted, with a "
                          "warning, so that a configuration that sets it still runs")
    metrics_address: str = Field(DEFAULT_METRICS_ADDRESS, min_length=1,
                                 description="the address /metrics listens on with --metrics-port (default 0.0.0.0, "
                                             "every interface, as an exporter in a pod); --metrics-address overrides")


@dataclass
class LoadedConfig:
    """A validated run configuration and where each of its keys is in the file."""
    path: Path
    config: RunConfig
    positions: Any   #: path → (line, column): a dict, or _Positions (found when first asked for)

    def where(self, *loc: object) -> str:
        """``file:line:column: key`` of the deepest key of ``loc`` the file has."""
        for n in range(len(loc), -1, -1):
            p = self.positions.get(tuple(loc[:n]))
            if p is not None:
                break
        else:
            p = (1, 1)
        return f"{self.path}:{p[0]}:{p[1]}: {_key(loc)}"


def _key(loc: tuple) -> str:
    return json_path(loc, root="").lstrip(".") or "(top level)"


@dataclass
class TargetSpec:
    """One target as built: its handle, policy, semantics and settings."""
    name: str
    provider_key: str
    provider: Provider
    target: Target
    policy: Policy
    policy_hash: str
    semantics: str
    settings: Settings
    dry_run: bool
    queries: list[MetricQuery]
    #: metric name → (its query, the metric-source instance) for the metrics read from
    #: one (``controller.sources``); empty: every metric from the provider
    metric_sources: dict = field(default_factory=dict)
    backtest: Optional[BacktestOptions] = None
    paused: bool = False


@dataclass
class Runtime:
    """Everything ``scalebridge run`` works with, built from a configuration."""
    loaded: LoadedConfig
    providers: dict[str, Provider]
    targets: list[TargetSpec]
    sync_period_seconds: float
    state: Union[str, dict[str, Any], None]
    notes: list[str] = field(default_factory=list)
    metric_sources: dict = field(default_factory=dict)

    def close(self) -> None:
        from .sources import close_metric_sources
        close_metric_sources(self.metric_sources)
        for spec in self.targets:
            try:
                spec.target.close()
            except Exception:  # noqa: BLE001 — closing never fails a run
                pass
        for p in self.providers.values():
            try:
                p.close()
            except Exception:  # noqa: BLE001
                pass


# ----------------------------------------------------------------------------- loading


def is_run_config(data: Any) -> bool:
    """A YAML document that is a run configuration (it has ``targets:``), not a policy."""
    return isinstance(data, dict) and "targets" in data


def read_yaml(path: str | Path) -> tuple[Any, dict]:
    from ..policyfile import load_yaml, read_text_file
    try:
        text = read_text_file(path)
        if not text.strip():
            raise ConfigError([f"{path}:1:1: the file is empty; a run configuration is a mapping "
                               "(sync_period_seconds, providers, policies, targets)"])
        return _load_yaml_fast(text, str(path)) if _CLOADER is not None else load_yaml(text, str(path))
    except PolicyError as e:
        raise ConfigError(e.problems) from None


try:   # libyaml composes a 10,000-target configuration in a fraction of pure Python's time
    from yaml import CSafeLoader as _CSafeLoader

    class _CLOADER(_CSafeLoader):   # type: ignore[no-redef]
        """libyaml's safe loader, each distinct plain scalar's tag resolved once per
        document (PyYAML's resolver matches regular expressions in Python for every
        scalar; a 10,000-target configuration holds a few thousand distinct ones)."""

        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self._tags: dict = {}

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            # a pure function of (value, implicit) for scalars: the safe loader has no
            # path resolvers (yaml.add_path_resolver is never called here)
            if kind is _ScalarNode and not self.yaml_path_resolvers:
                key = (value, implicit)
                tag = self._tags.get(key)
                if tag is None:
                    tag = self._tags[key] = _CSafeLoader.resolve(self, kind, value, implicit)
                return tag
            return _CSafeLoader.resolve(self, kind, value, implicit)

    from yaml import ScalarNode as _ScalarNode
except ImportError:  # pragma: no cover - PyYAML without libyaml
    _CLOADER = None


def _load_yaml_fast(text: str, file: str, positions: bool = False) -> tuple[Any, Any]:
    """The loader of policy files (``scalebridge.policyfile``: duplicate keys refused,
    the same values), on nodes libyaml composed; the positions are
    :class:`_Positions`, found when first asked for (``positions``: now, a dict)."""
    import yaml
    from ..policyfile import _construct, load_yaml
    try:
        node = yaml.compose(text, Loader=_CLOADER)
    except yaml.YAMLError:
        return load_yaml(text, file)   # its message names the line and column
    if node is None:
        return load_yaml(text, file)
    pos: Optional[dict] = {} if positions else None
    try:
        data = _construct(node, (), pos, file)
    except yaml.constructor.ConstructorError:
        return load_yaml(text, file)
    return data, pos if positions else _Positions(text, file)


class _Positions:
    """Where each value of a run configuration is (``path`` → ``(line, column)``, as
    ``policyfile.load_yaml``'s dict; only :meth:`get`), found by parsing the text
    again the first time one is asked for: a configuration with nothing to report
    never needs one, and 10,000 targets hold about 190,000 of them."""
    __slots__ = ("_text", "_file", "_pos")

    def __init__(self, text: str, file: str) -> None:
        self._text: Optional[str] = text
        self._file = file
        self._pos: Optional[dict] = None

    def get(self, key: tuple, default: Any = None) -> Any:
        if self._pos is None:
            assert self._text is not None
            self._pos = _load_yaml_fast(self._text, self._file, positions=True)[1]
            self._text = None
        return self._pos.get(key, default)


def load_config(path: str | Path, read: Optional[tuple[Any, dict]] = None) -> LoadedConfig:
    """The run configuration at ``path``, with ``${NAME}`` expanded from the
    environment (:func:`scalebridge.secrets.expand`), validated (raises
    :class:`ConfigError`). ``read``: what :func:`read_yaml` returned for ``path``
    (a caller that has read it already does not parse it twice)."""
    from ..secrets import expand
    data, pos = read if read is not None else read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError([f"{path}:1:1: a run configuration is a mapping (sync_period_seconds, providers, "
                           "policies, targets), not a list or a value"])
    unset: list[tuple] = []
    data = expand(data, lambda loc, message: unset.append((loc, message)))
    if unset:
        loaded = LoadedConfig(Path(path), RunConfig.model_construct(), pos)
        raise ConfigError([f"{loaded.where(*loc)}: {message}" for loc, message in unset])
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_problems(e, str(path), pos)) from None
    return LoadedConfig(Path(path), config, pos)


def _problems(err: ValidationError, file: str, pos: dict) -> list[str]:
    import difflib
    out = []
    for loc, kind, msg, inp in normalize_errors(err.errors(include_url=False)):
        if kind == "extra_forbidden":
            names = list(_model_at(loc[:-1]).model_fields)
            close = difflib.get_close_matches(str(loc[-1]), names, n=1)
            msg = f"unknown key {loc[-1]!r}" + (f"; did you mean {close[0]!r}?" if close else "") + \
                f" valid keys here: {', '.join(names)}"
            p = pos.get(("__key__",) + loc)
        elif kind == "missing":
            msg = "required key is missing"
            p = None
        else:
            from ..secrets import is_secret_key, redact, shown
            if any(is_secret_key(part) for part in loc if isinstance(part, str)):
                msg = redact(msg) + (f" (got {shown('secret', inp)})" if "got " not in msg else "")
            elif "got " not in msg and not isinstance(inp, (dict, list)):
                msg += f" (got {inp!r})"
            p = None
        if p is None:
            for n in range(len(loc), -1, -1):
                p = pos.get(tuple(loc[:n]))
                if p is not None:
                    break
            else:
                p = (1, 1)
        out.append((p, f"{file}:{p[0]}:{p[1]}: {_key(loc)}: {msg}"))
    out.sort(key=lambda x: x[0])
    return list(dict.fromkeys(m for _, m in out))


def _model_at(loc: tuple) -> type[BaseModel]:
    model: Any = RunConfig
    fields = {"targets": TargetConfig, "leader_election": LeaderElection, "metrics": MetricSource,
              "backtest": BacktestOptions}
    for part in loc:
        if isinstance(part, str) and part in fields:
            model = fields[part]
    if loc and loc[-1] == "metrics":
        return TargetConfig
    return model


# ----------------------------------------------------------------------------- building


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


def _resolve_paths(factory: Any, options: dict, base: Path) -> dict:
    """The options a provider declares as file paths (``Provider.path_options``:
    ``kubeconfig``, ``ca_bundle``, a key file), relative to the configuration file
    when that file exists there — the run configuration's rule for relative paths.
    ``~`` is expanded; a value that names no file there (``default``) is left as it is."""
    keys = getattr(factory, "path_options", None) or ()
    out = dict(options)
    for key in keys:
        value = out.get(key)
        if not isinstance(value, str) or not value:
            continue
        expanded = os.path.expanduser(value)
        if os.path.isabs(expanded):
            out[key] = expanded
            continue
        candidate = base / expanded
        if candidate.exists():
            out[key] = str(candidate)
    return out


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
    return _resolve_paths(type("_Keys", (), {"path_options": keys}), ref, base)


def _factory(type_name: str):
    from .. import plugins
    if ":" in type_name:   # an extension for plugin authors and tests: a `module:attr` factory
        return _import_factory(type_name)
    return plugins.provider_factory(type_name)


def _registered(name: str) -> bool:
    from .. import plugins
    return name in plugins.registry().providers


def policy_hash(policy: Policy, semantics: str) -> str:
    """The content hash of a policy (with the semantics that runs it): a changed one
    starts from empty state, as the decision protocol says of ``state``."""
    body = to_json({"policy": policy.model_dump(mode="json", exclude_unset=True), "semantics": semantics})
    return hashlib.sha256(body).hexdigest()[:16]


def build(loaded: LoadedConfig, *, clock: str = "real") -> Runtime:
    """Every provider instance and target handle of the configuration; every problem
    at once (:class:`ConfigError`). Calls no cloud."""
    from ..engine import check_policy, resolve_semantics
    from .sources import build_metric_sources, check_target_sources
    cfg = loaded.config
    problems: list[str] = []
    providers: dict[str, Provider] = {}

    def make_provider(key: str, options: dict, loc: tuple) -> Optional[Provider]:
        options = dict(options)
        type_name = options.pop("type", None)
        explicit = type_name is not None
        if type_name is None:
            if not _registered(key) and ":" not in key:
                from .. import plugins
                installed = ", ".join(sorted(plugins.registry().providers)) or "none"
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
            return factory(**_resolve_paths(factory, options, loaded.path.parent))
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
    policies: dict[str, Policy] = {}
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
                from .. import plugins
                configured = ", ".join(sorted(cfg.providers)) or "none"
                installed = ", ".join(sorted(plugins.registry().providers)) or "none"
                extra = ""
                if t.provider in plugins.BUILTIN_PROVIDER_EXTRAS:
                    extra = (" (install it with: pip install "
                             f"'scalebridge[{plugins.BUILTIN_PROVIDER_EXTRAS[t.provider]}]')")
                problems.append(f"{loaded.where(*loc, 'provider')}: unknown provider {t.provider!r}{extra}; "
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
                settings = Settings.model_validate(t.settings)
            except ValidationError as e:
                from ..engine import describe_validation_error
                path, msg = describe_validation_error(e)
                problems.append(f"{loaded.where(*loc, 'settings', *path.lstrip('$.').split('.'))}: {msg}")
                continue
        else:
            settings = no_settings
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
        if "metric_delay_seconds" not in settings.model_fields_set:
            delay = float(handle.metric_delay_seconds or 0.0)
            if settings is no_settings:   # shared: settings are never changed once built
                settings = delayed.get(delay) or delayed.setdefault(
                    delay, settings.model_copy(update={"metric_delay_seconds": delay}))
            else:
                settings = settings.model_copy(update={"metric_delay_seconds": delay})
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
                                bool(t.paused)))
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
        from .sources import close_metric_sources
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
    loaded = runtime.loaded
    out = [f"{loaded.where(key)}: warning: {why}" for key, why in NO_LONGER_USED.items()
           if getattr(loaded.config, key) is not None]
    by_name = {t.name: i for i, t in enumerate(runtime.loaded.config.targets)}
    for spec in runtime.targets:
        lines = _of_policy(spec.policy, ("ignored parts", spec.semantics),
                           lambda spec=spec: resolve_semantics(spec.semantics).ignored_parts(spec.policy))
        if lines:
            where = runtime.loaded.where("targets", by_name[spec.name], "policy")
            out.extend(f"{where}: warning: target {spec.name!r} under {spec.semantics}: {line}" for line in lines)
    return out


def _queries(policy: Policy, semantics: str, sources: dict) -> tuple[list, list, str]:
    """A target's metric queries, the names of the metrics its policy reads, and the
    policy's hash under ``semantics``."""
    from .queries import metric_names, queries_for
    queries = queries_for(policy, semantics, sources)
    names = list(dict.fromkeys(metric_names(policy) + [q.name for q in queries]))
    return queries, names, policy_hash(policy, semantics)


def _of_policy(policy: Policy, key: tuple, make: Any) -> Any:
    """What the controller derives from a policy alone (``make()``), once per policy:
    kept in ``policy.compiled()`` as the semantics keep theirs, under ``("controller",
    *key)`` (a validated policy is never changed; 10,000 targets name a few policies)."""
    cache = policy.compiled()
    key = ("controller", *key)
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _policy(loaded: LoadedConfig, body: Any, loc: tuple, problems: list[str],
            named: Optional[set] = None) -> Optional[Policy]:
    """A policy given as a path (relative to the configuration file) or inline."""
    from ..policyfile import load_policy_file, validation_problems
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
            return load_policy_file(path)
        except PolicyError as e:
            problems.extend(f"{p} (policy of {loaded.where(*loc)})" for p in e.problems)
            return None
    try:
        return Policy.model_validate(body)
    except ValidationError as e:
        for p in validation_problems(e, str(loaded.path), loaded.positions, prefix=loc):
            problems.append(p.replace(": policy.", ": ", 1))
        return None
