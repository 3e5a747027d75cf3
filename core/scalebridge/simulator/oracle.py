"""The clairvoyant lower bound: the cheapest fleet that is never short.

Model (shared with the fleet loop and :mod:`.scores`), on a grid of ticks:

- ``need[t] = ceil(load[t] / capacity)`` members must be ready at tick ``t``
  (:func:`members_needed`; a load within 1e-12 relative of a multiple of
  ``capacity`` counts as that multiple, so float noise never adds a member).
- A member is paid from the tick it is requested and is ready
  ``s = ceil(startup_seconds / tick_seconds)`` ticks later
  (:func:`startup_ticks`); removal is instant and ends payment.
- When the fleet shrinks, members not yet ready go first (newest first, as
  Kubernetes deletes not-ready pods first). Then the members ready at ``t``
  are those paid throughout ``[t - s, t]``: ``ready[t] = min(paid[t-s..t])``
  (:func:`ready_members`).
- Warm start: members paid at tick 0 are already ready (the fleet existed
  before the window), i.e. ``paid[t] = paid[0]`` for ``t < 0``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["members_needed", "oracle_ready", "oracle_sizes", "ready_members", "startup_ticks"]

_REL_EPS = 1e-12
_LOWEST = np.iinfo(np.int64).min


def members_needed(load: np.ndarray, capacity: float) -> np.ndarray:
    """``ceil(load / capacity)`` as int64, snapping quotients within 1e-12 (relative) of an integer."""
    if not capacity > 0:
        raise ValueError(f"capacity must be positive, not {capacity!r}")
    quotient = np.asarray(load, dtype=np.float64) / capacity
    nearest = np.rint(quotient)
    close = np.abs(quotient - nearest) <= _REL_EPS * np.maximum(1.0, np.abs(quotient))
    return np.where(close, nearest, np.ceil(quotient)).astype(np.int64)


def member_needed(load: float, capacity: float) -> int:
    """:func:`members_needed` of one number, without numpy's per-call cost (a few
    microseconds a call, paid by every world and fleet built): the same IEEE
    division, round-half-to-even and ceiling, so the same integer."""
    if not capacity > 0:
        raise ValueError(f"capacity must be positive, not {capacity!r}")
    quotient = float(load) / float(capacity)
    if not math.isfinite(quotient):   # what numpy makes of it (no Python int holds it)
        return int(members_needed(np.array([load]), capacity)[0])
    nearest = round(quotient)         # half to even, as numpy.rint
    if abs(quotient - nearest) <= _REL_EPS * max(1.0, abs(quotient)):
        return int(nearest)
    return math.ceil(quotient)


def startup_ticks(startup_seconds: float, tick_seconds: float) -> int:
    """Ticks from request to ready: ``ceil(startup / tick)``, snapping float noise."""
    if not tick_seconds > 0 or startup_seconds < 0:
        raise ValueError("need tick_seconds > 0 and startup_seconds >= 0")
    return member_needed(startup_seconds, tick_seconds)


def _forward_window(values: np.ndarray, width: int, reduce: np.ufunc, pad: int) -> np.ndarray:
    """``out[i] = reduce(values[i : i + width])`` (truncated at the end), O(n).

    van Herk/Gil-Werman: cut into blocks of ``width``; a window is the suffix of
    one block joined with the prefix of the next.
    """
    n = values.size
    width = max(1, min(width, n))
    if width == 1:
        return values.copy()
    blocks = -(-(n + width - 1) // width)
    padded = np.full(blocks * width, pad, dtype=values.dtype)
    padded[:n] = values
    grid = padded.reshape(blocks, width)
    prefix = reduce.accumulate(grid, axis=1).ravel()
    suffix = reduce.accumulate(grid[:, ::-1], axis=1)[:, ::-1].ravel()
    return reduce(suffix[:n], prefix[width - 1 : width - 1 + n])


def ready_members(paid: np.ndarray, startup: int) -> np.ndarray:
    """Members ready at each tick for a paid series: ``min(paid[t-startup..t])``
    with the warm start and not-ready-first removal of the module docstring."""
    paid = np.asarray(paid, dtype=np.int64)
    if paid.size == 0 or startup == 0:
        return paid.copy()
    history = np.concatenate([np.full(startup, paid[0]), paid])
    return _forward_window(history, startup + 1, np.minimum, np.iinfo(np.int64).max)[: paid.size]


def oracle_sizes(
    load: np.ndarray,
    *,
    capacity: float,
    startup_seconds: float,
    tick_seconds: float,
    minimum: int = 1,
    maximum: int | None = None,
) -> np.ndarray:
    """Members to pay for at each tick: the least, tick by tick, that keeps
    ``ready[t] >= need[t]`` everywhere, knowing the whole future load.

    ``paid[t] = max(need[t..t+s])`` with ``s = startup_ticks(...)`` and
    ``need = max(members_needed(load, capacity), minimum)``, capped at
    ``maximum`` (where ``need > maximum`` nothing can keep up and the oracle
    holds ``maximum``); the window is truncated at the end of the series.

    Proof. *Lower bound*: take any series that is never short, a tick ``t``
    and a tick ``t'`` in ``[t, t+s]``. The ``need[t']`` members ready at
    ``t'`` were requested by ``t' - s <= t`` and are kept until ``t' >= t``,
    and payment is continuous from request to removal, so all of them are
    paid at ``t``: ``paid[t] >= need[t']`` for every such ``t'``, hence
    ``paid[t] >= max(need[t..t+s])``. *Feasibility*: the ready count is
    ``min(paid[u])`` over ``u`` in ``[t-s, t]`` (warm start before tick 0),
    and every such window ``[u, u+s]`` contains ``t``, so each
    ``paid[u] >= need[t]``. The oracle meets the lower bound at every tick,
    so no feasible series is cheaper at any tick, let alone in total
    instance-hours or in any cost that grows with the member count.

    O(n) via a van Herk/Gil-Werman sliding maximum. Returns int64.
    """
    need = np.maximum(members_needed(load, capacity), minimum)
    paid = _forward_window(need, startup_ticks(startup_seconds, tick_seconds) + 1, np.maximum, _LOWEST)
    if maximum is not None:
        if maximum < minimum:
            raise ValueError(f"maximum {maximum} is below minimum {minimum}")
        paid = np.minimum(paid, maximum)
    return paid


def oracle_ready(paid: np.ndarray, *, startup_seconds: float, tick_seconds: float) -> np.ndarray:
    """The oracle's ready members: :func:`ready_members` of its paid series."""
    return ready_members(paid, startup_ticks(startup_seconds, tick_seconds))
