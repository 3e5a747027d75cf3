"""The run configuration file of ``scalebridge run`` (YAML): its schema, the loader with
positions, and its error lines.

:func:`load_config` reads the file with the policy files' positioned YAML loader and
validates it (pydantic) into a :class:`LoadedConfig`; every problem of the file's shape is
a :class:`ConfigError` line ``file:line:column: key: message`` that says what would be
valid. What the file builds (providers, targets, policies) is :mod:`.build`'s.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ..errors import PolicyError, ScalebridgeError, json_path, normalize_errors
from ..policy import Bool, Duration, Int

__all__ = ["ConfigError", "RunConfig", "LoadedConfig", "load_config", "read_yaml", "is_run_config", "resolve_paths",
           "DEFAULT_SYNC_PERIOD_SECONDS", "DEFAULT_STATE_PATH", "DEFAULT_WORKERS", "DEFAULT_METRICS_ADDRESS",
           "DEFAULT_SHUTDOWN_GRACE_SECONDS"]

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
#: how long a stop (SIGTERM, SIGINT) waits for the target syncs already running — a
#: write in flight — before it leaves them to the next start; Kubernetes gives a pod 30 s
#: (``terminationGracePeriodSeconds``) between SIGTERM and SIGKILL, room for this and the
#: final persist
DEFAULT_SHUTDOWN_GRACE_SECONDS = 10.0
MAX_SHUTDOWN_GRACE_SECONDS = 3600.0


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


def _grace(v: float) -> float:
    if not 0 <= v <= MAX_SHUTDOWN_GRACE_SECONDS:
        raise ValueError(f"must be from 0 s to {MAX_SHUTDOWN_GRACE_SECONDS:g} s, got {v:g}")
    return v


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
    shutdown_grace_seconds: Annotated[Duration, AfterValidator(_grace)] = Field(
        DEFAULT_SHUTDOWN_GRACE_SECONDS,
        description="extension: how long a stop (SIGTERM, SIGINT) waits for the target syncs running — a write in "
                    "flight — before leaving them to the next start (their intents are persisted)")
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


def resolve_paths(factory: Any, options: dict, base: Path) -> dict:
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
