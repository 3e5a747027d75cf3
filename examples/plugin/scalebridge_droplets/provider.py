"""The ``droplets`` provider: a pool of droplets' size, through the API that
:mod:`scalebridge_droplets.client` documents and speaks.

- options (run configuration ``providers:``): ``endpoint`` (the API's base URL,
  required), ``token`` (required, a secret: ``token_file`` reads it from a file,
  ``${VAR}`` from the environment, and it is never shown), ``timeout_seconds``
  (per request, default 10);
- ``ref``: ``{pool: NAME}``, a lowercase DNS label;
- observe: ``GET /v1/pools/{pool}``. The size is the pool's ``size``; each droplet not
  archived is a member — ``new`` is pending and not ready, ``active`` running and ready
  when ``healthy``, ``off`` deleting — started at its ``created_at``, with a request of
  one CPU (``requests.cpu: 1``: the API measures a droplet's CPU against its own). A pool
  whose ``resizing`` is true has an operation in flight; ``max_size`` is its largest size;
- read_metrics (``Capability.METRICS``): a policy metric or rule named ``cpu`` reads
  ``GET /v1/pools/{pool}/metrics/cpu`` once for every such query of a sync, over the
  longest window asked: per droplet, ``members`` (its average over the query's window, as
  the CPU in use against its request of 1: 90 % is 0.9, as the ``gce`` provider gives
  vCPUs in use) and ``member_series`` (percent), and the pool's average each minute in
  percent (``series``, its last point as ``value``), as rules compare with thresholds.
  A metric of another name is left out: the API has CPU only (read others from a metric
  source);
- set_size: ``PUT /v1/pools/{pool}/size``, absolute; the answer's ``resizing`` says
  whether the change is still in flight;
- refuse (``managed_by``): a pool whose own autoscaler is enabled
  (``GET /v1/pools/{pool}/autoscaler``), which is also what the API answers a resize of
  such a pool with (409 ``autoscaler_enabled``);
- pacing: the API's rate limits per token (reads 5 a second, bursts of 50; writes 1 a
  second, bursts of 10).
"""
from __future__ import annotations

import datetime as _dt
import math
import re
from typing import Any, Mapping, Optional

from scalebridge.protocol import Member, MetricObservation
from scalebridge.providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider,
                                   ProviderError, RefError, SizeChange, Target, TargetRefused)
from scalebridge.secrets import shown

from .client import DEFAULT_TIMEOUT_SECONDS, ApiError, DropletsClient

__all__ = ["DropletsProvider", "PoolTarget", "PACING", "POOL_NAME", "CPU"]

#: the API's rate limits per token (client.py), as the controller's token buckets
PACING = Pacing(writes_per_second=1.0, write_burst=10, reads_per_second=5.0, read_burst=50)
#: a pool's name as the API takes it: a lowercase DNS label
POOL_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
#: the one metric the API serves, by the name a policy gives it
CPU = "cpu"
#: the API's CPU samples: one a droplet a minute
SAMPLE_SECONDS = 60.0
OPTIONS = frozenset({"endpoint", "token", "timeout_seconds"})


class DropletsProvider(Provider):
    """A droplets API account (an endpoint and a token); see the module docstring."""

    name = "droplets"
    semantics = "scalebridge"      # the pool's own autoscaler is the neutral semantics (client.py)
    capabilities = frozenset({Capability.METRICS, Capability.TRANSLATE})
    pacing = PACING
    ref_keys = frozenset({"pool"})
    secret_options = frozenset({"token"})

    def __init__(self, **options: Any):
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise RefError(unknown[0], f"unknown option of the droplets provider; it takes {', '.join(sorted(OPTIONS))}")
        token = options.get("token")
        if not isinstance(token, str) or not token:
            raise RefError("token", f"required: the API token, as token_file (a file holding it) or ${{VAR}}, got "
                                    f"{shown('token', token)}")
        timeout = options.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 300:
            raise RefError("timeout_seconds", f"a number of seconds above 0 and at most 300, got {timeout!r}")
        self.client = DropletsClient(options.get("endpoint"), token, timeout=float(timeout))

    def target(self, ref: Mapping[str, Any]) -> "PoolTarget":
        ref = dict(ref or {})
        unknown = sorted(set(ref) - self.ref_keys)
        if unknown:
            raise RefError(f"ref.{unknown[0]}", "unknown key; a droplets target takes pool")
        pool = ref.get("pool")
        if not isinstance(pool, str) or not pool:
            raise RefError("ref.pool", "is required: the pool's name (ref: {pool: web})")
        if not POOL_NAME.fullmatch(pool):
            raise RefError("ref.pool", f"{pool!r} is not a pool name (lowercase letters, digits and '-', at most 63)")
        return PoolTarget(self.client, pool)

    def check_metric_source(self, name: str, source: Optional[Mapping[str, Any]]) -> None:
        """The API has one metric and no choice of source: any ``source:`` is refused."""
        if source is not None:
            raise RefError(f"metrics.{name}.source", "the droplets provider reads its pools' CPU only (a policy "
                                                     f"metric named {CPU!r}) and takes no source; read another "
                                                     "metric from a metric source ({metric_source: NAME, …})")


class PoolTarget(Target):
    """One pool. ``client`` and ``pool`` are what ``apply`` writes the pool's
    autoscaler with (:mod:`scalebridge_droplets.apply`)."""

    def __init__(self, client: DropletsClient, pool: str):
        self.client = client
        self.pool = pool
        self.name = pool

    def observe(self, now: float) -> Observation:
        p = self.client.pool(self.pool)
        try:
            members = [member(d) for d in p["droplets"] if d["status"] != "archive"]
            size, max_size, resizing = int(p["size"]), int(p["max_size"]), bool(p["resizing"])
        except (KeyError, TypeError, ValueError) as e:
            raise _undocumented(f"GET /v1/pools/{self.pool}", e) from None
        live = sum(1 for m in members if not m.deleting)
        return Observation(current_replicas=size, status_replicas=live, members=members,
                           in_flight=f"pool {self.pool} is resizing to {size}" if resizing else None,
                           min_size=0, max_size=max_size,
                           details={"max_size": max_size, "autoscaler": p.get("autoscaler")})

    def read_metrics(self, now: float, observation: Observation,
                     queries: list[MetricQuery]) -> dict[str, MetricObservation]:
        wanted = [q for q in queries if q.name == CPU and q.type in ("resource", "rule")]
        if not wanted:
            return {}
        end = math.floor(now - self.metric_delay_seconds)
        window = max(max(q.window_seconds, SAMPLE_SECONDS) for q in wanted)
        answer = self.client.cpu(self.pool, rfc3339(end - window - SAMPLE_SECONDS), rfc3339(end))
        names = {m.name for m in observation.members} if observation.members is not None else None
        try:
            samples = {d["id"]: sorted((parse_time(s["time"]), float(s["percent"])) for s in d["samples"])
                       for d in answer["droplets"] if names is None or d["id"] in names}
        except (KeyError, TypeError, ValueError) as e:
            raise _undocumented(f"GET /v1/pools/{self.pool}/metrics/cpu", e) from None
        return {q.name: MetricObservation(**obs) for q in wanted if (obs := cpu_observation(q, samples, end))}

    def set_size(self, size: int) -> SizeChange:
        try:
            p = self.client.resize(self.pool, size)
        except ApiError as e:
            if e.code == "autoscaler_enabled":
                manager = f"pool {self.pool}'s own autoscaler"
                raise TargetRefused(manager, f"already managed by {manager} ({e.message})") from None
            raise
        return SizeChange(size=size, in_flight=bool(p.get("resizing")) if isinstance(p, dict) else False)

    def managed_by(self) -> Optional[str]:
        a = self.client.autoscaler(self.pool)
        if isinstance(a, dict) and a.get("enabled"):
            return (f"pool {self.pool}'s own autoscaler (enabled: {a.get('min')} to {a.get('max')} droplets at "
                    f"{a.get('target_cpu_percent')} % CPU)")
        return None


def member(droplet: Mapping[str, Any]) -> Member:
    """A droplet as a protocol member: the core's own type, made from what was checked here
    (the controller takes it as it is; a dict in the protocol's shape is validated instead)."""
    status = droplet["status"]
    if status not in ("new", "active", "off"):
        raise ValueError(f"droplet status {status!r}")
    if not isinstance(droplet["id"], str) or not isinstance(droplet["healthy"], bool):
        raise TypeError(f"droplet id {droplet['id']!r}, healthy {droplet['healthy']!r}")
    return Member(name=droplet["id"], phase="Pending" if status == "new" else "Running",
                  ready=status == "active" and droplet["healthy"], deleting=status == "off",
                  start_time=parse_time(droplet["created_at"]), requests={"cpu": 1})


def cpu_observation(query: MetricQuery, samples: Mapping[str, list[tuple[float, float]]], end: float) -> dict:
    """The protocol observation of the CPU ``query`` from each droplet's samples (percent,
    stamped at the end of their minute), for the window ``(end - window, end]``; {} when
    no droplet has a sample there (missing, never 0)."""
    window = max(query.window_seconds, SAMPLE_SECONDS)
    inside = {d: [(t, v) for t, v in pts if end - window < t <= end] for d, pts in samples.items()}
    inside = {d: pts for d, pts in inside.items() if pts}
    if not inside:
        return {}
    obs: dict[str, Any] = {"timestamp": end, "window": window}
    if "members" in query.shapes:   # CPU in use against a request of 1
        obs["members"] = {d: sum(v for _, v in pts) / len(pts) / 100 for d, pts in inside.items()}
    if "member_series" in query.shapes:
        obs["member_series"] = {d: [[t, v] for t, v in pts] for d, pts in inside.items()}
    by_time: dict[float, list[float]] = {}
    for pts in inside.values():
        for t, v in pts:
            by_time.setdefault(t, []).append(v)
    series = [[t, sum(vs) / len(vs)] for t, vs in sorted(by_time.items())]
    if query.shapes & {"series", "value", "values"}:
        obs["series"] = series
        obs["value"] = series[-1][1]
        obs["values"] = [series[-1][1]]
    return obs


def rfc3339(t: float) -> str:
    """Seconds since the epoch as the API takes a time (UTC, whole seconds)."""
    return _dt.datetime.fromtimestamp(math.floor(t), _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: Any) -> float:
    """An RFC 3339 time of the API as seconds since the epoch."""
    if not isinstance(text, str):
        raise TypeError(f"a time is an RFC 3339 string, got {text!r}")
    t = _dt.datetime.fromisoformat(text)
    if t.tzinfo is None:
        raise ValueError(f"a time without its offset: {text!r}")
    return t.timestamp()


def _undocumented(operation: str, e: Exception) -> ProviderError:
    """An answer the API does not document (a missing field, a wrong type): the API's
    fault, worth retrying, never a crash of the sync."""
    return ProviderError(ErrorKind.TRANSIENT, f"{operation}: an answer the API does not document "
                                              f"({type(e).__name__}: {e})", operation=operation)
