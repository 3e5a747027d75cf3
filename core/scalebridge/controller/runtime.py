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

__all__ = ["TargetSpec", "Runtime"]


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
    #: shadow mode: decided and compared with the autoscaler that manages it, never written
    shadow: bool = False


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
            try:
                p.close()
            except Exception:  # noqa: BLE001
                pass
