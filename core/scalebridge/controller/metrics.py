"""Prometheus metrics of the controller (prometheus-client), served on
``/metrics`` with ``--metrics-port N``. Names are fixed by the run-config contract:

- ``scalebridge_desired_replicas{target}``, ``scalebridge_current_replicas{target}``
- ``scalebridge_decisions_total{target,reason}``
- ``scalebridge_scale_actions_total{target,direction,result}``
- ``scalebridge_provider_errors_total{provider,kind}``
- ``scalebridge_sync_duration_seconds`` (histogram, one observation per target sync)
- ``scalebridge_leader`` (1 when this replica may write)
- ``scalebridge_paused{target}``, ``scalebridge_fallback_active{target}`` (0/1)
- extension: ``scalebridge_store_errors_total{operation}`` (failures of the state store)
- extension, throttling: ``scalebridge_throttle_retry_after_seconds{provider}`` (the
  ``Retry-After`` the provider's server sent last, as sent),
  ``scalebridge_throttle_hold_seconds{provider}`` (what is left of the hold on its
  calls, bounded by ``max_retry_after_seconds``; 0 when not held),
  ``scalebridge_throttled_syncs_total{provider}`` (target syncs held back by it)

Each controller has its own registry, so several in one process (tests) do not
share counters.
"""
from __future__ import annotations

from typing import Optional

__all__ = ["Metrics"]


class Metrics:
    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.desired = Gauge("scalebridge_desired_replicas", "The size the last decision asked for", ["target"],
                             registry=r)
        self.current = Gauge("scalebridge_current_replicas", "The size the provider held at the last sync",
                             ["target"], registry=r)
        self.decisions = Counter("scalebridge_decisions_total", "Decisions made, by the decision's reason",
                                 ["target", "reason"], registry=r)
        self.scale_actions = Counter("scalebridge_scale_actions_total",
                                     "Writes of a target's size, by direction (up, down) and result "
                                     "(applied, failed)", ["target", "direction", "result"], registry=r)
        self.provider_errors = Counter("scalebridge_provider_errors_total", "Errors providers reported, by kind",
                                       ["provider", "kind"], registry=r)
        self.sync_duration = Histogram("scalebridge_sync_duration_seconds", "Seconds one sync of one target took",
                                       registry=r, buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                                                            5, 10, 30))
        self.store_errors = Counter("scalebridge_store_errors_total",
                                    "Failures of the state store, by what the controller was doing "
                                    "(persist the intents, persist the state, read the requests …)",
                                    ["operation"], registry=r)
        self.paused = Gauge("scalebridge_paused", "1 while the target is paused (scalebridge pause, paused: true, "
                            "a pause annotation on the workload)", ["target"], registry=r)
        self.fallback_active = Gauge("scalebridge_fallback_active", "1 while the decision uses the policy's "
                                     "fallback (its metrics failed failure_threshold syncs in a row)", ["target"],
                                     registry=r)
        self.retry_after = Gauge("scalebridge_throttle_retry_after_seconds",
                                 "The Retry-After the provider's server asked for last, as it sent it (seconds)",
                                 ["provider"], registry=r)
        self.throttle_hold = Gauge("scalebridge_throttle_hold_seconds",
                                   "Seconds left of the hold on the provider's calls after a Retry-After (at most its "
                                   "max_retry_after_seconds); 0 when its calls are not held", ["provider"], registry=r)
        self.throttled_syncs = Counter("scalebridge_throttled_syncs_total",
                                       "Target syncs held back because their provider's server asked to wait "
                                       "(Retry-After)", ["provider"], registry=r)
        self.leader = Gauge("scalebridge_leader", "1 when this replica holds the leader election (may write)",
                            registry=r)
        self._server = None

    def serve(self, port: int, addr: str = "0.0.0.0") -> int:
        """Serve ``/metrics`` on ``addr:port`` (0: any free port); the port it listens
        on. One thread, idle connections closed, connections bounded
        (:mod:`scalebridge.controller.exporter`)."""
        from .exporter import Exporter
        self._server = Exporter(self.registry)
        return self._server.start(port, addr)

    def text(self) -> str:
        from prometheus_client import generate_latest
        return generate_latest(self.registry).decode()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None


def value(metrics: Metrics, name: str, labels: Optional[dict] = None) -> Optional[float]:
    """One sample's value (tests and ``observe``)."""
    return metrics.registry.get_sample_value(name, labels or {})
