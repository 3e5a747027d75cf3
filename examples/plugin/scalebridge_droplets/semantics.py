"""The ``proportional`` semantics: replicas proportional to a total load.

    desired = ceil(load / per_replica), bounded by [min_replicas, max_replicas]

for every metric with an ``AverageValue`` target (a queue's length, requests a
second), the highest proposal winning; no stabilization, no tolerance. It is
registered by this package's ``scalebridge_register_semantics`` hook
(``__init__.py``), exactly as the built-in semantics are, and checked with
``scalebridge.testing.check_semantics("proportional")``.
"""
from __future__ import annotations

import math

from scalebridge.semantics import Context, Decision, MetricResult, Semantics
from scalebridge.units import exact


class ProportionalSemantics(Semantics):
    """``ceil(total load / per-replica target)`` per metric, the highest winning, bounded."""

    name = "proportional"
    summary = "ceil(total load / per-replica target), no stabilization (example plugin)"

    def decide(self, ctx: Context) -> Decision:
        p = ctx.policy
        lo = p.min_replicas if p.min_replicas is not None else 1
        hi = p.max_replicas if p.max_replicas is not None else max(lo, ctx.current)
        results, best = [], None
        for m in p.metrics or []:
            obs = ctx.obs.metrics.get(m.name)
            if m.target.type != "AverageValue" or obs is None:
                results.append(MetricResult(m.name, error="needs an AverageValue target and an observation"))
                continue
            total = sum(exact(v) for v in obs.values) if obs.values else exact(obs.value)
            n = math.ceil(total / exact(m.target.average_value))
            results.append(MetricResult(m.name, n, value=float(total)))
            best = n if best is None else max(best, n)
        if best is None:
            return Decision(ctx.current, ctx.current, "InvalidMetrics", [r.to_dict() for r in results],
                            error="no usable metric")
        desired = min(max(best, lo), hi)
        reason = "TooFewReplicas" if best < lo else "TooManyReplicas" if best > hi else "DesiredWithinRange"
        ctx.note("proportional", ctx.current, desired, "ceil(load / per-replica target), bounded")
        return Decision(desired, desired, reason, [r.to_dict() for r in results])
