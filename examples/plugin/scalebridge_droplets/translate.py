"""A policy as a pool's own autoscaler, and back: the ``droplets`` translator
(``scalebridge render --to droplets``, ``import --from droplets``, ``apply``).

The native document is a pool as ``GET /v1/pools/{pool}`` answers it, less what the
autoscaler does not hold::

    {"name": "web",
     "autoscaler": {"enabled": true, "min": 2, "max": 20, "target_cpu_percent": 60, "cooldown_seconds": 300}}

``autoscaler`` is the body of ``PUT /v1/pools/{pool}/autoscaler`` (client.py documents
its fields). Import reads that document, a whole ``GET /v1/pools/{pool}`` answer, a bare
autoscaler (``GET /v1/pools/{pool}/autoscaler``), or a JSON list of them.

The autoscaler is the ``scalebridge`` semantics with four settings, so a policy maps
field for field: ``mode`` OFF ↔ ``enabled: false``; ``min_replicas`` ↔ ``min`` (1 when
the policy says none, the semantics' default); ``max_replicas`` ↔ ``max``; the ``cpu``
metric's Utilization target ↔ ``target_cpu_percent`` (60 when the policy has no CPU
metric, the semantics' default); ``behavior.scale_down.stabilization_window_seconds``
↔ ``cooldown_seconds`` (600 when unset, the semantics' default). Everything else the
policy may say is a ``lost:`` line: other metrics, rules, profiles, schedules,
predictive scaling, rate policies, a scale-up window, a tolerance or an initialization
period other than the autoscaler's fixed 10 % and 60 s, scale-in controls, the neutral
controls.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional

from scalebridge import constants as C
from scalebridge.policy import Metric, Policy
from scalebridge.translate.base import TargetKey, Translator, pattern
from scalebridge.translate.common import (Losses, NativeError, Reader, drop_controls, drop_unexpressed,
                                          json_document, path, resources)
from scalebridge.translate.metrics import MetricNames, provider_metric

from .provider import CPU, POOL_NAME

__all__ = ["PoolAutoscalerTranslator", "render", "import_all", "METRIC_NAMES", "TARGET_KEYS"]

#: the neutral metrics as the API names them: CPU is the only one it serves
METRIC_NAMES = MetricNames(
    neutral={"cpu": CPU, "network_in": None, "network_out": None, "memory": None},
    missing={n: "the droplets API serves CPU only" for n in ("network_in", "network_out", "memory")})

TARGET_KEYS: dict[str, TargetKey] = {
    "pool": TargetKey("the pool's name", pattern(POOL_NAME.pattern, "a pool name: lowercase letters, digits and '-'")),
}

#: the autoscaler's fields, each with its range (client.py)
FIELDS = ("enabled", "min", "max", "target_cpu_percent", "cooldown_seconds")
MAX_COOLDOWN_SECONDS = 3600
#: a pool document's fields (``GET /v1/pools/{pool}``)
POOL_FIELDS = frozenset({"name", "size", "max_size", "droplets", "resizing", "autoscaler"})
#: what the autoscaler does without saying so: the ``scalebridge`` semantics' defaults
DEFAULT_MIN = C.K8S_MIN_REPLICAS
DEFAULT_TARGET_CPU_PERCENT = round(C.GCE_DEFAULT_CPU_UTILIZATION * 100)
DEFAULT_COOLDOWN_SECONDS = int(C.NEUTRAL_DOWNSCALE_STABILIZATION)
FIXED_TOLERANCE = C.NEUTRAL_TOLERANCE
FIXED_INITIALIZATION_SECONDS = C.GCE_INITIALIZATION_PERIOD
SEMANTICS = "scalebridge"


def render(p: Policy, target: Mapping[str, Any]) -> tuple[dict, Losses]:
    """The pool document of ``p`` and what it loses; ``target`` the ``--target`` keys given."""
    losses = Losses()
    if p.max_replicas is None or p.max_replicas < 1:
        raise NativeError("max_replicas", "a pool's autoscaler needs a max of 1 or more; the policy has "
                                          f"{'none' if p.max_replicas is None else p.max_replicas}")
    if p.semantics is not None and p.semantics != SEMANTICS:
        losses.add("semantics", f"a pool's autoscaler decides as the {SEMANTICS} semantics does, not as "
                                f"{p.semantics}; dropped")
    if p.mode in ("ONLY_SCALE_OUT", "ONLY_SCALE_IN"):
        losses.add("mode", f"a pool's autoscaler has no {p.mode} mode; written as enabled (it scales both ways)")
    autoscaler = {"enabled": p.mode != "OFF",
                  "min": p.min_replicas if p.min_replicas is not None else DEFAULT_MIN,
                  "max": p.max_replicas,
                  "target_cpu_percent": _target_cpu(p.metrics or [], losses),
                  "cooldown_seconds": _cooldown(p, losses)}
    _behavior_losses(p, losses)
    if p.tolerance is not None and p.tolerance != FIXED_TOLERANCE:
        losses.add("tolerance", f"a pool's autoscaler has a fixed tolerance of {FIXED_TOLERANCE:g}; dropped")
    if p.initialization_period_seconds is not None and p.initialization_period_seconds != FIXED_INITIALIZATION_SECONDS:
        losses.add("initialization_period_seconds", "a pool's autoscaler leaves droplets younger than "
                                                    f"{FIXED_INITIALIZATION_SECONDS:g} s out of a scale-out; dropped")
    if p.predictive is not None and p.predictive.mode not in (None, "Disabled"):
        losses.add("predictive", "a pool's autoscaler does not forecast; dropped")
    drop_unexpressed(p, losses, {
        "rules": "a pool's autoscaler has no threshold rules; dropped",
        "profiles": "a pool's autoscaler has no instance profiles; dropped",
        "schedules": "a pool's autoscaler has no scaling schedules; dropped",
        "default_replicas": "a pool's autoscaler keeps the size when it cannot read CPU; dropped",
        "allowed_replicas": "a pool takes any size; dropped",
        "scale_in_control": "a pool's autoscaler has no scale-in control (cooldown_seconds holds scale-in); dropped"})
    drop_controls(p, losses, "a pool's autoscaler")
    name = target.get("pool") or losses.placeholder("name", "pass --target pool (the pool's name)")
    return {"name": name, "autoscaler": autoscaler}, losses


def _target_cpu(metrics: list[Metric], losses: Losses) -> int:
    """``target_cpu_percent`` from the first enabled CPU Utilization metric; every other
    metric is a loss line."""
    target: Optional[int] = None
    for i, m in enumerate(metrics):
        at = path("metrics", i)
        if m.type == "formula":
            continue   # drop_controls says it
        native, none_because = provider_metric(m.name, METRIC_NAMES, "droplets")
        t = m.target
        if none_because is not None:
            losses.add(at, f"{none_because}; dropped")
        elif not m.enabled:
            losses.add(at, "a pool's autoscaler has no disabled metric; dropped")
        elif native != CPU or m.type != "resource" or t.type != "Utilization" or t.rate is not None:
            losses.add(at, f"a pool's autoscaler scales on its droplets' CPU utilization only, not {m.name!r} "
                           f"({m.type}, target {t.type}{', ' + t.rate if t.rate else ''}); dropped")
        elif target is not None:
            losses.add(at, "a pool's autoscaler has one CPU target; dropped")
        else:
            if m.disable_scale_in:
                losses.add(path(at, "disable_scale_in"), "a pool's autoscaler always scales in; dropped")
            if m.initialization_period_seconds is not None:
                losses.add(path(at, "initialization_period_seconds"), "a pool's autoscaler has a fixed "
                                                                      "initialization period of 60 s; dropped")
            target = _percent(t.average_utilization, path(at, "target", "average_utilization"), losses)
    return DEFAULT_TARGET_CPU_PERCENT if target is None else target


def _percent(value: Optional[float], at: str, losses: Losses) -> int:
    if value is None:
        return DEFAULT_TARGET_CPU_PERCENT
    kept = min(100, max(1, round(value)))
    if kept != value:
        losses.add(at, f"a pool's autoscaler takes a whole percent from 1 to 100; {value:g} written as {kept}")
    return kept


def _cooldown(p: Policy, losses: Losses) -> int:
    down = p.behavior.scale_down if p.behavior is not None else None
    window = down.stabilization_window_seconds if down is not None else None
    if window is None:
        return DEFAULT_COOLDOWN_SECONDS
    kept = min(MAX_COOLDOWN_SECONDS, int(window))
    if kept != window:
        losses.add("behavior.scale_down.stabilization_window_seconds",
                   f"a pool's cooldown_seconds is a whole number of seconds up to {MAX_COOLDOWN_SECONDS}; "
                   f"{window:g} written as {kept}")
    return kept


def _behavior_losses(p: Policy, losses: Losses) -> None:
    """What of ``behavior`` a pool's autoscaler has not: rate policies, a scale-up
    window, another select policy, per-direction tolerances."""
    for side in ("scale_up", "scale_down"):
        rules = getattr(p.behavior, side) if p.behavior is not None else None
        if rules is None:
            continue
        at = path("behavior", side)
        if side == "scale_up" and rules.stabilization_window_seconds:
            losses.add(path(at, "stabilization_window_seconds"), "a pool's autoscaler adds droplets at once; dropped")
        for k, _ in enumerate(rules.policies or []):
            losses.add(path(at, "policies", k), "a pool's autoscaler has no rate policies; dropped")
        if rules.select_policy not in (None, "Max"):
            losses.add(path(at, "select_policy"), f"a pool's autoscaler has no select policy; {rules.select_policy} "
                                                  "dropped")
        if rules.tolerance is not None and rules.tolerance != FIXED_TOLERANCE:
            losses.add(path(at, "tolerance"), f"a pool's autoscaler has a fixed tolerance of {FIXED_TOLERANCE:g}; "
                                              "dropped")


# ----------------------------------------------------------------------------- import


def import_all(text: Any) -> list[tuple[dict, Losses]]:
    """Every autoscaler of the input, each as a ``scalebridge`` policy (named after its
    pool where the input names it)."""
    found = resources(json_document(text), _autoscaler_document, _nothing_inside)
    if not found:
        raise NativeError("$", "no pool autoscaler in the input: a pool (GET /v1/pools/{pool}), an autoscaler "
                               "(GET /v1/pools/{pool}/autoscaler) or what `render --to droplets` writes")
    return [_import_one(doc, root) for root, doc in found]


def _autoscaler_document(obj: dict) -> Optional[dict]:
    """``obj`` when it is a pool document (``{"name", "autoscaler", …}``) or a bare
    autoscaler, else None."""
    return obj if "autoscaler" in obj or "target_cpu_percent" in obj else None


def _nothing_inside(obj: dict) -> Iterable[tuple[str, Any]]:
    return ()


def _import_one(doc: dict, root: str) -> tuple[dict, Losses]:
    losses = Losses()
    rd = Reader(losses, root)
    bare = "autoscaler" not in doc
    at: tuple = () if bare else ("autoscaler",)
    if not bare:
        rd.unknown(doc, set(POOL_FIELDS))
    a = doc if bare else doc["autoscaler"]
    if a is None:
        raise NativeError(rd.where(*at), "the pool has no autoscaler (null)")
    a = rd.mapping(a, *at)
    rd.unknown(a, set(FIELDS), *at)
    for key in FIELDS:
        if key not in a:
            raise NativeError(rd.where(*at, key), "required field is missing")
    if not isinstance(a["enabled"], bool):
        raise NativeError(rd.where(*at, "enabled"), f"expected true or false, got {a['enabled']!r}")
    lo = _integer(rd, a["min"], 0, None, *at, "min")
    hi = _integer(rd, a["max"], 1, None, *at, "max")
    rd.ordered(lo, hi, at + ("min",), at + ("max",))
    policy: dict = {"semantics": SEMANTICS}
    name = None if bare else doc.get("name")
    if name is not None:
        policy["name"] = rd.string(name, "name")
    if not a["enabled"]:
        policy["mode"] = "OFF"
    policy.update(min_replicas=lo, max_replicas=hi,
                  metrics=[{"type": "resource", "name": CPU,
                            "target": {"type": "Utilization",
                                       "average_utilization": _integer(rd, a["target_cpu_percent"], 1, 100, *at,
                                                                       "target_cpu_percent")}}],
                  behavior={"scale_down": {"stabilization_window_seconds":
                                           _integer(rd, a["cooldown_seconds"], 0, MAX_COOLDOWN_SECONDS, *at,
                                                    "cooldown_seconds")}})
    return policy, losses


def _integer(rd: Reader, v: Any, lo: int, hi: Optional[int], *parts: object) -> int:
    """An integer field of the autoscaler, in ``lo..hi`` as the API takes it."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise NativeError(rd.where(*parts), f"expected an integer, got {v!r}")
    if v < lo or (hi is not None and v > hi):
        raise NativeError(rd.where(*parts), f"{v} is outside {lo}..{hi}" if hi is not None else
                          f"{v} is less than {lo}")
    return v


class PoolAutoscalerTranslator(Translator):
    """``--to droplets``: a pool's own autoscaler (JSON, the module docstring); its
    ``apply`` writes it with ``PUT /v1/pools/{pool}/autoscaler``."""

    name = "droplets"
    provider = "droplets"
    summary = "a droplet pool's own autoscaler (JSON); imports GET /v1/pools/{pool} answers"
    target_keys = TARGET_KEYS
    metric_names = METRIC_NAMES

    def render(self, policy: Policy, target: Mapping[str, Any]) -> tuple[Any, Losses]:
        return render(policy, target)

    def import_all(self, text: str) -> list[tuple[dict, Losses]]:
        return import_all(text)

    def apply(self, name: str, target: Any, policy: Policy, dry_run: bool, say: Callable[[str], None],
              metrics: Mapping[str, Any]) -> bool:
        from .apply import apply_native
        return apply_native(name, target, policy, dry_run, say)
