"""What a run configuration builds: each target as built (:class:`TargetSpec`) and the
whole of it (:class:`Runtime`) — the types the loop, the reconciler and the back-test
work with (:func:`scalebridge.controller.build.build` makes them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..compiled import CompiledPolicy
from ..protocol import Settings
from ..providers import MetricQuery, Provider, Target
from .configfile import BacktestOptions, LoadedConfig

__all__ = ["TargetSpec", "Runtime", "Limits", "LIMIT_OPTIONS", "DEFAULT_MAX_RETRY_AFTER_SECONDS",
           "RETRY_AFTER_MIN_PERIODS", "DEFAULT_MAX_SAMPLE_AGE_SECONDS", "DEFAULT_MAX_SAMPLE_SKEW_SECONDS", "take_limits"]

#: the longest a provider's ``Retry-After`` holds its calls (a provider option,
#: ``max_retry_after_seconds``): a server asking for a day is heard, and asked again
#: after five minutes — the backoff's own cap at the default 15-s period
DEFAULT_MAX_RETRY_AFTER_SECONDS = 300.0
#: a hold is never bounded below this many sync periods: held for less, a target
#: would be called again at its next sync all the same
RETRY_AFTER_MIN_PERIODS = 3
#: a metric sample older than this (before the window's end, ``now`` less the metric
#: delay) is a failed read (``max_sample_age_seconds`` of a provider or a metric
#: source): twice CloudWatch's basic 5-minute period, five times the 2-minute
#: publishing delay of Cloud Monitoring and Azure Monitor
DEFAULT_MAX_SAMPLE_AGE_SECONDS = 600.0
#: a metric sample stamped more than this after ``now`` is a failed read
#: (``max_sample_skew_seconds``): clocks NTP keeps within milliseconds, with room
#: for a sample stamped at the end of a window still open
DEFAULT_MAX_SAMPLE_SKEW_SECONDS = 60.0


@dataclass(frozen=True)
class Limits:
    """What the controller bounds for one provider instance or metric source: the
    ``Retry-After`` it honours, and how old or how far ahead of ``now`` a metric
    sample may be. Given as options of the instance in the run configuration
    (:data:`LIMIT_OPTIONS`); the controller takes them, the factory never sees them."""
    max_retry_after_seconds: float = DEFAULT_MAX_RETRY_AFTER_SECONDS
    max_sample_age_seconds: float = DEFAULT_MAX_SAMPLE_AGE_SECONDS
    max_sample_skew_seconds: float = DEFAULT_MAX_SAMPLE_SKEW_SECONDS


#: the options of a provider instance (all three) and of a metric source (the samples')
#: that the controller takes for itself
LIMIT_OPTIONS = ("max_retry_after_seconds", "max_sample_age_seconds", "max_sample_skew_seconds")


@dataclass
class TargetSpec:
    """One target as built: its handle, policy, semantics and settings."""
    name: str
    provider_key: str
    provider: Provider
    target: Target
    policy: CompiledPolicy   #: as decisions read it (``policy.source``: as written); shared by its targets
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
    #: the provider instance's limits (its ``max_retry_after_seconds``, ``max_sample_*``)
    limits: Limits = field(default_factory=Limits)


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

    def close(self, keep: tuple = ()) -> None:
        """Release every metric source, target handle and provider instance (their
        sessions, connections, files) — but the providers in ``keep``, which still
        serve something that outlives this configuration (the leader election, the
        state store)."""
        for source in self.metric_sources.values():
            try:
                source.close()
            except Exception:  # noqa: BLE001 — closing never fails a run
                pass
        for spec in self.targets:
            try:
                spec.target.close()
            except Exception:  # noqa: BLE001 — closing never fails a run
                pass
        for p in self.providers.values():
            if any(p is k for k in keep):
                continue
            try:
                p.close()
            except Exception:  # noqa: BLE001
                pass


def take_limits(options: dict, loc: tuple, loaded: LoadedConfig, problems: list[str],
                keys: tuple = LIMIT_OPTIONS) -> Optional[Limits]:
    """The controller's own options of a provider instance or metric source
    (:data:`~.runtime.LIMIT_OPTIONS`: ``max_retry_after_seconds``, ``max_sample_age_seconds``,
    ``max_sample_skew_seconds``), taken out of ``options`` — the factory never sees
    them; None when one is not valid (its problem appended)."""
    from ..units import parse_duration
    given = {}
    ok = True
    for key in keys:
        if key not in options:
            continue
        value = options.pop(key)
        try:
            seconds = parse_duration(value)
            if not (seconds > 0) or seconds == float("inf"):
                raise ValueError
        except (TypeError, ValueError):
            problems.append(f"{loaded.where(*loc, key)}: expected a duration of more than 0 seconds (a number of "
                            f"seconds, or \"5m\"), got {value!r}")
            ok = False
            continue
        given[key] = float(seconds)
    return Limits(**given) if ok else None
