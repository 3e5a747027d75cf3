"""Metric sources in a run: the named instances of ``metric_sources:``, and one
sync's metric reads routed between them and the provider.

:func:`build_metric_sources` makes each instance (``factory(**options)``, the
options that are file paths read from the configuration's directory), every
problem a ``file:line:column: key: message`` line; :func:`check_target_sources`
checks a target's ``metrics.<name>.source`` that names one (``metric_source``,
``query``, ``member_label``) and gives its route; :func:`read_metrics` is what
one sync reads: the queries whose source names a metric source from that
instance (:func:`scalebridge.metric_sources.observe`, windows ending at the sync
time less the decision's ``metric_delay_seconds``), the others from the
provider's :meth:`~scalebridge.providers.Target.read_metrics`, merged. A target
that routes nothing calls the provider exactly as before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..errors import ScalebridgeError
from ..metric_sources import MetricSource, SourceQuery, is_metric_source_query, observe, parse_source_query
from ..protocol import METRIC_OBSERVATION, MetricObservation, member_name
from ..providers import ErrorKind, MetricQuery, Observation, ProviderError, RefError
from .configfile import resolve_paths
from .runtime import Limits, take_limits

if TYPE_CHECKING:
    from .configfile import LoadedConfig
    from .runtime import TargetSpec

__all__ = ["build_metric_sources", "check_target_sources", "read_metrics", "Route", "close_metric_sources"]

Route = tuple[SourceQuery, MetricSource]


def build_metric_sources(loaded: "LoadedConfig", problems: list[str]) -> dict[str, MetricSource]:
    """Every instance of the configuration's ``metric_sources:``; problems appended."""
    from .. import registry
    out: dict[str, MetricSource] = {}
    for key, options in (loaded.config.metric_sources or {}).items():
        loc = ("metric_sources", key)
        options = dict(options or {})
        limits = take_limits(options, loc, loaded, problems, keys=("max_sample_age_seconds", "max_sample_skew_seconds"))
        if limits is None:
            continue
        type_name = options.pop("type", None)
        if type_name is None:
            if key not in registry.current().metric_sources:
                installed = ", ".join(sorted(registry.current().metric_sources)) or "none"
                problems.append(f"{loaded.where(*loc)}: {key!r} is not a metric source type, so it needs `type:` "
                                f"(installed metric sources are: {installed})")
                continue
            type_name = key
        try:
            factory = registry.metric_source_factory(type_name) if isinstance(type_name, str) else None
            if factory is None:
                raise ScalebridgeError(f"expected a metric source type name, got {type_name!r}")
            unknown = _unknown_options(factory, options)
            if unknown:
                import difflib
                close = difflib.get_close_matches(unknown[0], unknown[1], n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(f"{loaded.where(*loc, unknown[0])}: not an option of the {type_name} metric source"
                                f"{hint}; its options are: {', '.join(unknown[1])}")
                continue
            instance = factory(**resolve_paths(factory, options, loaded.path.parent))
        except RefError as e:
            problems.append(f"{loaded.where(*loc, *e.key.split('.'))}: {e.message}")
            continue
        except TypeError as e:   # an option the factory does not take
            problems.append(f"{loaded.where(*loc)}: the {type_name} metric source does not take these options: {e}")
            continue
        except ScalebridgeError as e:
            problems.append(f"{loaded.where(*loc, 'type')}: {e}")
            continue
        instance.name = key
        instance.limits = limits   # the controller's bounds of its samples (sources.read_metrics)
        out[key] = instance
    return out


def _unknown_options(factory: Any, options: dict) -> Optional[tuple[str, list[str]]]:
    """The first option ``factory`` does not take and the ones it takes (None: all taken)."""
    import inspect
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    names = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    extra = [k for k in options if k not in names]
    return (extra[0], names) if extra else None


def check_target_sources(loaded: "LoadedConfig", loc: tuple, sources: dict[str, Any],
                         instances: dict[str, MetricSource], problems: list[str]) -> Optional[dict[str, Route]]:
    """The routes of a target's ``metrics.<name>.source`` that name a metric source
    (metric name → its query and instance), or None when one is not valid (its
    problem appended, naming the key)."""
    routes: dict[str, Route] = {}
    ok = True
    for name, source in sources.items():
        if not is_metric_source_query(source):
            continue
        where = loc + ("metrics", name, "source")
        try:
            sq = parse_source_query(name, source)
        except RefError as e:
            problems.append(f"{loaded.where(*loc, *e.key.split('.'))}: {e.message}")
            ok = False
            continue
        instance = instances.get(sq.metric_source)
        if instance is None:
            if sq.metric_source not in (loaded.config.metric_sources or {}):
                configured = ", ".join(sorted(loaded.config.metric_sources or {})) or "none"
                problems.append(f"{loaded.where(*where, 'metric_source')}: no metric source {sq.metric_source!r} "
                                f"in `metric_sources:` (configured: {configured})")
            ok = False   # else its own problem is already reported
            continue
        try:
            instance.check_query(sq)
        except RefError as e:
            problems.append(f"{loaded.where(*loc, *e.key.split('.'))}: {e.message}")
            ok = False
            continue
        routes[name] = (sq, instance)
    return routes if ok else None


def _field(o: Any, key: str) -> Any:
    return o.get(key) if isinstance(o, dict) else getattr(o, key, None)


def _time(t: Any) -> Optional[float]:
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def _stamp(t: float) -> str:
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if -6e10 < t < 6e10 else f"t={t:g}"


def _span(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def sample_times_problem(obs: Any, now: float, end: float, grain: float, limits: Any) -> Optional[str]:
    """Why a metric observation's samples are not to be acted on, or None: a sample
    stamped more than ``max_sample_skew_seconds`` after ``now`` (a clock, or a
    pipeline, ahead), or a newest sample older than ``max_sample_age_seconds`` before
    the window's end ``end`` (``now`` less the metric delay; a series point may be one
    ``grain`` older, a point being stamped at its period's start). The times checked
    are the observation's ``timestamp``, its members' ``member_timestamps`` and the
    last point of its ``series`` and ``member_series``; an observation that gives no
    time is not checked (a provider that does not say when is not second-guessed)."""
    if obs is None or _field(obs, "error") is not None:
        return None
    newest: Optional[float] = None
    ahead: Optional[float] = None
    series_newest: Optional[float] = None

    def seen(t: Any, series: bool = False) -> None:
        nonlocal newest, ahead, series_newest
        t = _time(t)
        if t is None:
            return
        if ahead is None or t > ahead:
            ahead = t
        if series:
            if series_newest is None or t > series_newest:
                series_newest = t
        elif newest is None or t > newest:
            newest = t

    seen(_field(obs, "timestamp"))
    stamps = _field(obs, "member_timestamps")
    if stamps:
        for t in stamps.values():
            seen(t)
    series = _field(obs, "series")
    if series:
        seen(series[-1][0], True)
    member_series = _field(obs, "member_series")
    if member_series:
        for pts in member_series.values():
            if pts:
                seen(pts[-1][0], True)
    if ahead is None:
        return None
    skew = limits.max_sample_skew_seconds
    if ahead > now + skew:
        return (f"a sample is stamped {_stamp(ahead)}, {_span(ahead - now)} after now ({_stamp(now)}): more than "
                f"max_sample_skew_seconds ({skew:g} s) ahead, a clock or a metrics pipeline ahead of this one's; "
                "not acted on")
    age = limits.max_sample_age_seconds
    fresh = newest is not None and end - newest <= age
    fresh = fresh or (series_newest is not None and end - series_newest <= age + grain)
    if not fresh:
        last = max(t for t in (newest, series_newest) if t is not None)
        return (f"the newest sample is stamped {_stamp(last)}, {_span(end - last)} before the window's end "
                f"({_stamp(end)}): older than max_sample_age_seconds ({age:g} s), stale; not acted on")
    return None


def _checked(out: dict, queries: list[MetricQuery], now: float, end: float, limits: Any, source: str,
             failed: Optional[list[ProviderError]]) -> None:
    """Each observation of ``out`` whose sample times are out of bounds
    (:func:`sample_times_problem`) made a failed read: raised, or, with ``failed`` (a
    policy with ``fallback``), an observation with its ``error``."""
    for q in queries:
        obs = out.get(q.name)
        why = sample_times_problem(obs, now, end, q.grain_seconds, limits) if obs is not None else None
        if why is None:
            continue
        e = ProviderError(ErrorKind.INVALID, f"metric {q.name!r} from {source}: {why}", operation="read metrics")
        if failed is None:
            raise e
        failed.append(e)
        out[q.name] = MetricObservation(error=str(e))


def read_metrics(spec: "TargetSpec", now: float, observation: Observation,
                 queries: Optional[list[MetricQuery]] = None,
                 failed: Optional[list[ProviderError]] = None) -> dict[str, dict]:
    """The protocol's ``observations.metrics`` of one sync of ``spec``'s target:
    each query from its metric source, or from the provider. A metric source's
    failure fails the sync, its message naming the metric — unless ``failed`` is
    given (a policy with ``fallback``): then each metric that could not be read is
    an observation with its ``error`` (the decision counts its failures) and the
    errors are appended to ``failed``."""
    queries = spec.queries if queries is None else queries
    routes = spec.metric_sources
    native = [q for q in queries if q.name not in routes] if routes else queries
    end = now - float(spec.settings.metric_delay_seconds or 0.0)
    try:
        out = spec.target.read_metrics(now, observation, native) if native else {}
    except ProviderError as e:
        if failed is None:
            raise
        failed.append(e)
        out = {q.name: MetricObservation(error=str(e)) for q in native}
    else:
        if out:
            _checked(out, native, now, end, spec.limits, f"provider {spec.provider_key!r}", failed)
    if not routes:
        return out
    members = None if observation.members is None else [member_name(m) for m in observation.members]
    for q in queries:
        route = routes.get(q.name)
        if route is None:
            continue
        sq, source = route
        try:
            got = observe(source, sq, q, end, members)
        except ProviderError as e:
            named = ProviderError(e.kind, f"metric {q.name!r}: {e.message}", retry_after=e.retry_after,
                                  operation=e.operation)
            if failed is None:
                raise named from None
            failed.append(named)
            out[q.name] = MetricObservation(error=str(named))
            continue
        if got is not None:
            got = METRIC_OBSERVATION.validate_python(got)   # a metric source plugin's: the edge
            why = sample_times_problem(got, now, end, q.grain_seconds, getattr(source, "limits", None) or Limits())
            if why is not None:
                e = ProviderError(ErrorKind.INVALID, f"metric {q.name!r} from metric source "
                                  f"{getattr(source, 'name', sq.metric_source)!r}: {why}", operation="read metrics")
                if failed is None:
                    raise e
                failed.append(e)
                got = MetricObservation(error=str(e))
            out[q.name] = got
    return out


def close_metric_sources(instances: dict[str, MetricSource]) -> None:
    for s in instances.values():
        try:
            s.close()
        except Exception:  # noqa: BLE001 — closing never fails a run
            pass
