"""Flapping prevention: skip or shrink a scale-in its own estimate says would scale out again.

Azure (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-flapping):
"Autoscale evaluates a pending scale-in action to see if it would cause
flapping. In cases where flapping could occur, autoscale may skip the scale
action and reevaluate at the next run, or autoscale may scale by less than the
specified number of resource instances." — "checking for potential flapping
doesn't occur for scale-out events." — "the autoscale engine estimates the CPU
usage for instance counts above 20 until it finds an instance count where all
metrics are with in the defined thresholds" — "If autoscale can't find a
suitable number of instances, it will skip the scale in event and reevaluate
during the next cycle."

The estimate (best-practices page, 2022): "60 x 3 (current instance count) =
180 / 2 (final number of instances when scaled down) = 90. So autoscale does
not scale-in" — each scale-out rule's value ``v`` projected to ``n`` instances
is ``v × current / n``; ``n`` flaps when any scale-out rule would fire on its
projection.

Search (see docs/semantics/azure.md): the target clamped to ``[min, max]``
first, then upward ``target + 1 … current − 1`` (never above max); the first
count that does not flap is taken (``FlappingReduced``); none → the scale-in
is skipped (``FlappingPrevented``). The documentation's 30 → 27 example is off
by one: 65 % × 30 / 27 = 72.2 % would still fire a > 70 % rule; the first
count that does not is 28.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .rules import RuleValue, compare

__all__ = ["Projection", "FlappingResult", "scale_out_projections", "would_scale_out", "prevent_flapping"]


@dataclass(frozen=True, slots=True)
class Projection:
    """A scale-out trigger to re-check at other instance counts: its value at
    ``current`` instances (after any per-instance division), operator and threshold."""
    value: RuleValue
    operator: str
    threshold: object
    name: str = ""


@dataclass(slots=True)
class FlappingResult:
    count: int                  # the count to carry out: target, a reduced count, or current (skipped)
    reason: Optional[str]       # None, "FlappingReduced" or "FlappingPrevented"
    target: int                 # the scale-in target after clamping to [min, max]
    why: str


def scale_out_projections(evals: Sequence) -> list[Projection]:
    """The triggers a scale-in is checked against: every scale-out rule of ``evals``
    (:class:`~.rules.RuleEvaluation`) whose metric could be read, fired or not
    ("the autoscale engine estimates the CPU usage … until it finds an instance
    count where all metrics are with in the defined thresholds")."""
    return [Projection(e.value, e.rule.operator, e.rule.threshold, e.rule.name or e.rule.metric)
            for e in evals if e.increase and e.value is not None]


def would_scale_out(projections: Sequence[Projection], current: int, n: int) -> Optional[Projection]:
    """The first scale-out trigger that would fire at ``n`` instances when each
    value is projected as ``value × current / n`` (None: no flapping)."""
    for p in projections:
        if compare(p.operator, p.value, p.threshold, current, n):
            return p
    return None


def prevent_flapping(current: int, target: int, minimum: int, maximum: int,
                     projections: Sequence[Projection]) -> FlappingResult:
    """Check a pending scale-in from ``current`` to ``target`` (see the module
    docstring). When the (clamped) target does not flap, ``target`` itself is
    returned, unclamped: the caller's bounds stage clamps it and says so.
    Scale-outs and non-moves pass through unchanged."""
    t = min(max(target, minimum), maximum)
    if t >= current or not projections:
        return FlappingResult(target, None, t, "")
    first = would_scale_out(projections, current, t)
    if first is None:
        return FlappingResult(target, None, t, f"estimates at {t} fire no scale-out rule")
    est = first.value.approx * current / t if t else float("inf")
    why = (f"at {t} the estimate {first.value.approx:g} x {current} / {t} = {est:.4g} would fire "
           f"scale-out rule {first.name or '?'} ({first.operator} {first.threshold})")
    for n in range(t + 1, min(current, maximum + 1)):
        if would_scale_out(projections, current, n) is None:
            return FlappingResult(n, "FlappingReduced", t, why + f"; {n} is the nearest count that would not")
    return FlappingResult(current, "FlappingPrevented", t, why + "; no count between would not: scale-in skipped")
