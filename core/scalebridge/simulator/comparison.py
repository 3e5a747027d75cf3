"""Replays side by side: each run with its scores against the oracle, and the
reporting (JSON, the frontier's iso-risk ratios) of a comparison on one load.

The reactive frontier: how much each level of safety costs a reactive autoscaler.

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

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..engine import load_policy
from ..policy import Policy
from .bounds import bounds
from .fleet import FleetModel
from .oracle import oracle_ready, oracle_sizes
from .replay import Run
from .scores import Scores, compute_scores

__all__ = ["Comparison", "FRONTIER_SEMANTICS", "FRONTIER_TARGETS", "Frontier", "RunResult", "frontier_policies",
           "iso_risk_reference", "oracle_for", "score_run"]


def score_run(run: Run, load: np.ndarray, model: FleetModel, *, oracle_paid: Optional[np.ndarray] = None,
              price_per_instance_hour: Optional[float] = None) -> Scores:
    """:func:`~scalebridge.simulator.scores.compute_scores` of a run."""
    return compute_scores(load, run.ready, run.paid, tick_seconds=model.tick_seconds, capacity=model.capacity,
                          price_per_instance_hour=price_per_instance_hour, oracle_paid=oracle_paid,
                          desired=run.desired, initial=run.initial)


def oracle_for(load: np.ndarray, model: FleetModel, policy: Policy) -> np.ndarray:
    """The oracle's paid series within the policy's bounds, assuming the
    shortest startup the model can draw (so it stays a lower bound)."""
    lo, hi = bounds(policy)
    return oracle_sizes(load, capacity=model.capacity, startup_seconds=model.startup.minimum,
                        tick_seconds=model.tick_seconds, minimum=lo, maximum=hi)


def _finite(x: Any) -> Any:
    """JSON has no infinity: a non-finite float becomes None."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass
class RunResult:
    """A run and its scores."""

    run: Run
    scores: Scores

    def as_dict(self) -> dict:
        """The JSON ``runs[i]`` object: ``semantics``, ``policy``, every score
        key (:data:`~scalebridge.simulator.scores.SCORE_KEYS`; infinities as
        null), then decision tallies and fleet statistics."""
        r = self.run
        out: dict[str, Any] = {"semantics": r.semantics, "policy": r.policy}
        out.update({k: _finite(v) for k, v in self.scores.as_dict().items()})
        out.update({
            "decisions": r.decisions, "errors": r.errors, "first_error": r.first_error,
            "reasons": dict(sorted(r.reasons.items(), key=lambda kv: -kv[1])),
            "peak_members": int(r.paid.max()), "mean_members": float(r.paid.mean()),
            "final_members": int(r.desired[-1]), "elapsed_seconds": round(r.elapsed_seconds, 4),
            "published_metrics": r.published,
        })
        return out


@dataclass
class Comparison:
    """Runs of several (policy, semantics) pairs on one load."""

    load: np.ndarray
    model: FleetModel
    start_time: float
    results: list[RunResult]
    skipped: list[dict]
    oracles: dict[str, np.ndarray]          # policy label -> the oracle's paid series
    policies: dict[str, Policy]
    price_per_instance_hour: Optional[float] = None
    workload: dict = field(default_factory=dict)
    frontier: tuple[str, ...] = ()          # policy labels of the reactive frontier's runs (see .frontier)

    def with_runs_of(self, other: "Comparison", *, frontier: tuple[str, ...] = ()) -> "Comparison":
        """This comparison with ``other``'s runs (on the same load) after its own."""
        return Comparison(load=self.load, model=self.model, start_time=self.start_time,
                          results=self.results + other.results, skipped=self.skipped + other.skipped,
                          oracles={**self.oracles, **other.oracles}, policies={**self.policies, **other.policies},
                          price_per_instance_hour=self.price_per_instance_hour, workload=self.workload,
                          frontier=self.frontier + frontier)

    def iso_risk_ratios(self) -> list[Optional[float]]:
        """Each run's iso-risk cost ratio against the frontier's runs (None for
        those runs, and for every run when there is no frontier)."""
        if not self.frontier:
            return [None] * len(self.results)
        return Frontier(self.frontier).ratios(self)

    def oracle_dicts(self) -> list[dict]:
        """Each policy's oracle: its bounds, cost and — never short within them, but
        capped at ``maximum`` where the load needs more — its own shortfall scores."""
        out = []
        m = self.model
        for label, paid in self.oracles.items():
            lo, hi = bounds(self.policies[label])
            hours = float(paid.sum()) * m.tick_seconds / 3600
            price = self.price_per_instance_hour
            s = compute_scores(self.load, oracle_ready(paid, startup_seconds=m.startup.minimum,
                                                       tick_seconds=m.tick_seconds),
                               paid, tick_seconds=m.tick_seconds, capacity=m.capacity)
            out.append({"policy": label, "minimum": lo, "maximum": hi, "instance_hours": hours,
                        "cost": None if price is None else hours * price, "peak_members": int(paid.max()),
                        "startup_seconds": m.startup.minimum,
                        "underprovisioned_seconds": s.underprovisioned_seconds,
                        "underprovisioned_fraction": s.underprovisioned_fraction,
                        "unserved_load": s.unserved_load, "peak_overload": _finite(s.peak_overload),
                        "time_to_recover_seconds": s.time_to_recover_seconds})
        return out

    def to_dict(self) -> dict:
        from .. import __version__
        runs = [r.as_dict() for r in self.results]
        out = {"runs": runs, "workload": self.workload, "fleet": self.model.describe(),
               "oracle": self.oracle_dicts(), "skipped": self.skipped,
               "price_per_instance_hour": self.price_per_instance_hour, "scalebridge_version": __version__}
        if self.frontier:
            for run, ratio in zip(runs, self.iso_risk_ratios()):
                run["iso_risk_cost_ratio"] = ratio
            out["frontier"] = {"semantics": FRONTIER_SEMANTICS, "policies": list(self.frontier),
                               "points": [{"underprovisioned_fraction": f, "instance_hours": h}
                                          for f, h in Frontier(self.frontier).points(self)]}
        return out


# ----------------------------------------------------------------------------- the reactive frontier

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
    """The frontier's runs in a :class:`Comparison` (by policy label, in
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
