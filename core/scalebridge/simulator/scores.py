"""Score a replay: cost, shortfall and churn from per-tick arrays.

Inputs are aligned per-tick arrays: ``load`` (a rate, in the unit capacity is
given in), ``ready`` and ``paid`` member counts, optionally ``desired`` (the
size the policy asked for; defaults to ``paid``) and the oracle's ``paid``
(:func:`~scalebridge.simulator.oracle.oracle_sizes`). A tick is
*under-provisioned* when ``ready < need = ceil(load / capacity)``, with
:func:`~scalebridge.simulator.oracle.members_needed`'s float guard, which
is the oracle's own criterion, so the oracle always scores zero here.

Definitions (keys of :meth:`Scores.as_dict`, a contract):

- ``instance_hours``: ``sum(paid) * tick / 3600``; ``cost`` multiplies it by
  ``price_per_instance_hour`` (None without a price).
- ``oracle_instance_hours`` the same for the oracle; ``oracle_ratio`` is
  ``instance_hours / oracle_instance_hours`` (>= 1 for any never-short
  series; None without an oracle; inf if the oracle pays nothing and we do).
- ``underprovisioned_seconds`` / ``_minutes``: under-provisioned ticks × tick;
  ``underprovisioned_fraction``: their share of all ticks.
- ``unserved_load``: ``sum(max(0, load - ready * capacity)) * tick``, in load
  unit × seconds (requests if load is requests per second).
- ``peak_overload``: ``max(load / (ready * capacity)) - 1`` over the
  under-provisioned ticks, 0 if there are none, inf if load arrives while no
  member is ready. 0.5 means the worst tick carried 50 % more than capacity.
  Relative, so comparable across traces of any scale.
- ``scaling_actions``: ticks at which ``desired`` differs from the tick before
  (at tick 0, from ``initial``, the size the replay started with, when given).
- ``reversals``: consecutive actions of opposite direction (up then down or
  down then up) at most ``reversal_window_seconds`` (600) apart: flapping.
- ``time_to_recover_seconds``: the longest under-provisioned episode (a
  maximal run of under-provisioned ticks, which starts when load steps above
  ready capacity) × tick, 0 if none; an episode still open at the end counts
  up to the end. ``mean_time_to_recover_seconds`` is the mean episode and
  ``underprovisioned_episodes`` their number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .oracle import members_needed

__all__ = ["REVERSAL_WINDOW_SECONDS", "SCORE_KEYS", "Scores", "compute_scores"]

REVERSAL_WINDOW_SECONDS = 600.0


@dataclass(frozen=True)
class Scores:
    """One replay's scores; see the module docstring for each definition."""

    instance_hours: float
    oracle_instance_hours: float | None
    underprovisioned_seconds: float
    underprovisioned_fraction: float
    unserved_load: float
    peak_overload: float
    scaling_actions: int
    reversals: int
    cost: float | None
    oracle_ratio: float | None
    underprovisioned_minutes: float
    time_to_recover_seconds: float
    mean_time_to_recover_seconds: float
    underprovisioned_episodes: int

    def as_dict(self) -> dict[str, float | int | None]:
        """The scores under their contract key names, as plain Python numbers."""
        return asdict(self)


SCORE_KEYS: tuple[str, ...] = tuple(Scores.__dataclass_fields__)


def _episodes(under: np.ndarray) -> np.ndarray:
    """Lengths, in ticks, of the maximal runs of True in ``under``."""
    edges = np.diff(np.concatenate([[0], under.astype(np.int8), [0]]))
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def _reversals(sizes: np.ndarray, tick_seconds: float, window_seconds: float) -> tuple[int, int]:
    """(scaling actions, reversals) of a size series."""
    change = np.diff(sizes)
    at = np.flatnonzero(change)
    direction = np.sign(change[at])
    flips = (direction[1:] != direction[:-1]) & ((at[1:] - at[:-1]) * tick_seconds <= window_seconds)
    return int(at.size), int(np.count_nonzero(flips))


def compute_scores(
    load: np.ndarray,
    ready: np.ndarray,
    paid: np.ndarray,
    *,
    tick_seconds: float,
    capacity: float,
    price_per_instance_hour: float | None = None,
    oracle_paid: np.ndarray | None = None,
    desired: np.ndarray | None = None,
    reversal_window_seconds: float = REVERSAL_WINDOW_SECONDS,
    initial: int | None = None,
) -> Scores:
    """Score aligned per-tick arrays (see the module docstring)."""
    load = np.asarray(load, dtype=np.float64)
    ready = np.asarray(ready, dtype=np.float64)
    paid = np.asarray(paid, dtype=np.float64)
    sizes = paid if desired is None else np.asarray(desired, dtype=np.float64)
    n = load.size
    if n == 0 or not all(a.shape == load.shape for a in (ready, paid, sizes)) or load.ndim != 1:
        raise ValueError("load, ready, paid (and desired) must be non-empty 1-d arrays of equal length")
    if not (tick_seconds > 0 and capacity > 0):
        raise ValueError("tick_seconds and capacity must be positive")

    hours = float(paid.sum()) * tick_seconds / 3600
    oracle_hours = ratio = None
    if oracle_paid is not None:
        oracle_paid = np.asarray(oracle_paid, dtype=np.float64)
        if oracle_paid.shape != load.shape:
            raise ValueError("oracle_paid must be as long as load")
        oracle_hours = float(oracle_paid.sum()) * tick_seconds / 3600
        ratio = hours / oracle_hours if oracle_hours else (1.0 if hours == 0 else float("inf"))

    under = members_needed(load, capacity) > ready
    served = ready * capacity
    unserved = float(np.where(under, np.maximum(load - served, 0.0), 0.0).sum()) * tick_seconds
    if under.any():
        with np.errstate(divide="ignore"):
            peak = float(np.max(load[under] / served[under])) - 1.0
    else:
        peak = 0.0
    episodes = _episodes(under) * float(tick_seconds)
    # the first decision's change counts too: from the size the replay started with
    actions, reversals = _reversals(sizes if initial is None else np.concatenate(([float(initial)], sizes)),
                                    tick_seconds, reversal_window_seconds)
    under_seconds = float(np.count_nonzero(under)) * tick_seconds
    return Scores(
        instance_hours=hours,
        oracle_instance_hours=oracle_hours,
        underprovisioned_seconds=under_seconds,
        underprovisioned_fraction=float(np.count_nonzero(under)) / n,
        unserved_load=unserved,
        peak_overload=max(peak, 0.0),
        scaling_actions=actions,
        reversals=reversals,
        cost=None if price_per_instance_hour is None else hours * price_per_instance_hour,
        oracle_ratio=ratio,
        underprovisioned_minutes=under_seconds / 60,
        time_to_recover_seconds=float(episodes.max()) if episodes.size else 0.0,
        mean_time_to_recover_seconds=float(episodes.mean()) if episodes.size else 0.0,
        underprovisioned_episodes=int(episodes.size),
    )
