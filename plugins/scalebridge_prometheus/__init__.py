"""The ``prometheus`` metric source: a policy's metrics read from a Prometheus
server's HTTP API (``/api/v1/query``, ``/api/v1/query_range``), on any target.

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin, with the ``scalebridge_register_metric_sources`` hook. It
needs nothing beyond the standard library (see :mod:`scalebridge_prometheus.source`).
"""
from __future__ import annotations

from scalebridge.hookspecs import hookimpl


@hookimpl
def scalebridge_register_metric_sources(register):
    from .source import PrometheusSource
    register("prometheus", PrometheusSource)
