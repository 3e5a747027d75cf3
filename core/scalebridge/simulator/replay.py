"""One replay: a :class:`~.world.World` stepped by one policy under one semantics.

At every sync tick the world's observations go to
:meth:`scalebridge.engine.Decider.step` — the pipeline the controller runs,
which carries ``state`` from decision to decision — and the decision's
``desired`` size goes back to the world at once. The world's series and the
decisions' tallies make a :class:`Run`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Optional, Union

import numpy as np

from ..engine import Decider
from ..policy import Policy
from ..protocol import Settings, parse_settings
from .fleet import FleetModel
from .world import Forecaster, Progress, World

__all__ = ["Run", "simulate"]


@dataclass
class Run:
    """One replay's per-tick series and decision tallies.

    ``desired[k]``: the size set at tick ``k`` (after that tick's decision, if
    any); ``paid[k]``: members paid during tick ``k``; ``ready[k]``: members
    serving during tick ``k`` (ready, or draining)."""

    semantics: str
    policy: str
    desired: np.ndarray
    paid: np.ndarray
    ready: np.ndarray
    decisions: int
    reasons: dict[str, int]
    errors: int = 0
    first_error: Optional[str] = None
    elapsed_seconds: float = 0.0
    published: dict[str, str] = field(default_factory=dict)
    initial: Optional[int] = None       #: members at the start, before the first decision

    def __getstate__(self) -> dict:
        """Pickled (a worker process sending it back) with its per-tick series as the
        ticks where they change: a replay's few hundred, not three arrays of every tick."""
        state = dict(self.__dict__)
        for key in _SERIES:
            state[key] = _changes(state[key])
        return state

    def __setstate__(self, state: dict) -> None:
        for key in _SERIES:
            state[key] = _expanded(state[key])
        self.__dict__.update(state)


_SERIES = ("desired", "paid", "ready")


def _changes(a: object) -> object:
    """An integer series as ``(size, starts, values)``: the value from each start on."""
    if not (isinstance(a, np.ndarray) and a.ndim == 1 and a.size and a.dtype.kind in "iu"):
        return a
    starts = np.concatenate(([0], np.flatnonzero(a[1:] != a[:-1]) + 1))
    return _Changes(a.size, starts, a[starts])


def _expanded(x: object) -> object:
    if not isinstance(x, _Changes):
        return x
    return np.repeat(x.values, np.diff(x.starts, append=x.size))


class _Changes:
    """A series of ``size`` values, ``values[i]`` from ``starts[i]`` on."""
    __slots__ = ("size", "starts", "values")

    def __init__(self, size: int, starts: np.ndarray, values: np.ndarray) -> None:
        self.size, self.starts, self.values = size, starts, values

    def __reduce__(self) -> tuple:
        return _Changes, (self.size, self.starts, self.values)


def simulate(
    policy: Union[Policy, dict],
    load: np.ndarray,
    model: FleetModel,
    *,
    semantics: Optional[str] = None,
    settings: Union[Settings, dict, None] = None,
    forecaster: Optional[Forecaster] = None,
    start_time: float = 0.0,
    label: Optional[str] = None,
    progress: Optional[Progress] = None,
) -> Run:
    """Replay ``load`` (one rate per tick of ``model.tick_seconds``) through
    ``policy`` under ``semantics`` (default: the policy's, else the engine's).
    ``settings.metric_delay_seconds`` is the world's metric lag unless given.

    Raises :class:`~scalebridge.errors.RequestError` when the semantics
    cannot run the policy (or is not registered)."""
    settings = parse_settings(settings)
    if settings.metric_delay_seconds is None:
        settings = dataclasses.replace(settings, metric_delay_seconds=model.lag_ticks * float(model.tick_seconds))
    decider = Decider(policy, semantics, settings)
    policy = decider.policy
    world = World(policy, load, model, settings=settings, forecaster=forecaster, start_time=start_time,
                  progress=progress)
    observations = world.observations
    step = decider.step
    reasons: dict[str, int] = {}
    errors: list = [0, None]   # how many decisions reported an error, and the first one

    def decide(now: float, current: int) -> int:
        # checked: the world builds every reading from its load, which it checked finite and >= 0
        decision = step(now, current, observations, checked=True)
        reason = decision.reason
        reasons[reason] = reasons.get(reason, 0) + 1
        if decision.error is not None:
            errors[0] += 1
            if errors[1] is None:
                errors[1] = f"t={now:.0f}: {decision.error}"
        return decision.desired

    started = time.perf_counter()
    world.run(decide)
    desired, paid, ready = (a.copy() for a in world.per_tick())
    return Run(
        semantics=decider.semantics.name, policy=label or policy.name or "policy",
        desired=desired, paid=paid, ready=ready, decisions=sum(reasons.values()), reasons=reasons,
        errors=errors[0], first_error=errors[1], elapsed_seconds=time.perf_counter() - started,
        published=world.published, initial=world.initial,
    )
