"""The reactive frontier: how much each level of safety costs a reactive autoscaler.

One reactive policy is no yardstick for a predictive one: a reactive
autoscaler buys safety with headroom. The frontier is the ``kubernetes``
semantics (the HPA with its default behavior: 300 s downscale stabilization,
the default rate policies) at CPU utilization targets of 60, 70, 80 and 90%
between a policy's own bounds — a higher target is cheaper and short more
often. A policy is then judged by its **iso-risk cost ratio**: its
instance-hours over the frontier's at the same under-provisioned fraction.

:func:`iso_risk_reference` reads the frontier at a fraction ``f``: linear
interpolation between neighbouring targets; safer than the 60% run, the 60%
run; riskier than the 90% run, the 90% run; where several targets are as safe
as ``f`` or safer, the cheapest of them (a reactive autoscaler buys that
safety for that price).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from ..engine import load_policy
from ..policy import Policy
from .bounds import bounds

if TYPE_CHECKING:   # a comparison holds the frontier's runs; the frontier only reads them
    from .comparison import Comparison

__all__ = ["FRONTIER_SEMANTICS", "FRONTIER_TARGETS", "Frontier", "frontier_policies", "iso_risk_reference"]

FRONTIER_TARGETS: tuple[int, ...] = (60, 70, 80, 90)
FRONTIER_SEMANTICS = "kubernetes"


def frontier_policies(policy: Policy, targets: Sequence[int] = FRONTIER_TARGETS) -> list[tuple[str, Policy]]:
    """``(label, policy)`` for each target: CPU utilization at ``target``% of a
    member, between ``policy``'s bounds (its own, else its profiles' loosest;
    a policy without a maximum gets 10× its minimum or 100), no behavior."""
    lo, hi = bounds(policy)
    if hi is None:
        hi = max(10 * lo, 100)
    out = []
    for target in targets:
        if not 0 < target <= 100:
            raise ValueError(f"a frontier target is a CPU utilization in (0, 100], not {target!r}")
        label = f"frontier {target}%"
        out.append((label, load_policy({
            "name": label, "min_replicas": lo, "max_replicas": hi,
            "metrics": [{"type": "resource", "name": "cpu",
                         "target": {"type": "Utilization", "average_utilization": target}}]})))
    return out


def iso_risk_reference(points: Sequence[tuple[float, float]], f: float) -> float:
    """The frontier's instance-hours at under-provisioned fraction ``f``.

    ``points`` are ``(fraction, instance_hours)`` in target order, the safest
    target first (see the module docstring for the rule)."""
    if not points:
        raise ValueError("the frontier has no points")
    candidates = [c for fi, c in points if fi <= f]
    for (f0, c0), (f1, c1) in zip(points, points[1:]):
        lo, hi = min(f0, f1), max(f0, f1)
        if lo < f < hi:
            candidates.append(c0 + (c1 - c0) * (f - f0) / (f1 - f0))
    if candidates:
        return min(candidates)
    return points[0][1]


@dataclass(frozen=True)
class Frontier:
    """The frontier's runs in a :class:`~.comparison.Comparison` (by policy label, in
    target order) and what it says of every other run."""

    labels: tuple[str, ...]

    def points(self, result: Comparison) -> list[tuple[float, float]]:
        by_label = {r.run.policy: r.scores for r in result.results if r.run.semantics == FRONTIER_SEMANTICS}
        return [(by_label[label].underprovisioned_fraction, by_label[label].instance_hours)
                for label in self.labels if label in by_label]

    def ratios(self, result: Comparison) -> list[Optional[float]]:
        """The iso-risk cost ratio of each run (None for the frontier's own runs,
        or when the frontier could not run)."""
        points = self.points(result)
        out: list[Optional[float]] = []
        for r in result.results:
            if not points or (r.run.semantics == FRONTIER_SEMANTICS and r.run.policy in self.labels):
                out.append(None)
                continue
            ref = iso_risk_reference(points, r.scores.underprovisioned_fraction)
            out.append(r.scores.instance_hours / ref if ref > 0 else None)
        return out
