"""The fleet: who is paid, who is starting, who serves — tick by tick.

Members are kept as *cohorts* (members requested at the same tick that become
ready at the same tick), so a fleet of hundreds costs a handful of entries and
O(1) work per tick when nothing changes. The accounting is the one
:mod:`.oracle` and :mod:`.scores` document:

- a member is paid from the tick it is requested and serves from the tick it
  is ready, ``ceil(startup / tick)`` ticks later (the startup is a constant or
  a seeded distribution, :class:`Startup`);
- warm start: the initial members are ready at tick 0;
- shrinking removes members not yet ready first (newest request first), then
  the youngest ready members; a removed ready member stops serving and being
  paid at once, or after ``drain_ticks`` during which it still serves, is
  still paid and is reported ``deleting``.

With a constant startup and no drain, ``ready`` equals
:func:`~scalebridge.simulator.oracle.ready_members` of ``paid`` exactly
(tests/simulator/test_fleet.py checks it against random size series).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ..protocol import Member
from .oracle import startup_ticks

__all__ = ["Fleet", "FleetModel", "Startup", "parse_startup"]

_KINDS = ("constant", "uniform", "normal")


@dataclass(frozen=True)
class Startup:
    """Seconds from request to ready: ``constant`` (``a``), ``uniform`` on
    ``[a, b]``, or ``normal`` with mean ``a`` and standard deviation ``b``,
    truncated to ``[max(0, a - 3b), a + 3b]``. Draws come from the run's
    seeded generator, one per member, in request order."""

    kind: str = "constant"
    a: float = 60.0
    b: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"startup kind must be one of {', '.join(_KINDS)}, not {self.kind!r}")
        if not (math.isfinite(self.a) and math.isfinite(self.b)) or self.a < 0 or self.b < 0:
            raise ValueError("startup seconds must be finite and non-negative")
        if self.kind == "uniform" and self.b < self.a:
            raise ValueError(f"uniform startup needs low <= high, got {self.a:g},{self.b:g}")

    @property
    def constant(self) -> bool:
        return self.kind == "constant" or self.b == 0 or (self.kind == "uniform" and self.a == self.b)

    @property
    def minimum(self) -> float:
        """The shortest possible startup: what the oracle assumes, so that it
        stays a lower bound."""
        if self.kind == "normal":
            return max(0.0, self.a - 3 * self.b)
        return self.a

    @property
    def mean(self) -> float:
        return (self.a + self.b) / 2 if self.kind == "uniform" else self.a

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` startups in seconds."""
        if self.constant:
            return np.full(n, self.minimum)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, n)
        return np.clip(rng.normal(self.a, self.b, n), self.minimum, self.a + 3 * self.b)

    def describe(self) -> Union[float, str]:
        if self.kind == "constant":
            return self.a
        return f"{self.kind}:{self.a:g},{self.b:g}"


def parse_startup(value: Union[str, float, int, Startup]) -> Startup:
    """``60``, ``"60"``, ``"90s"``, ``"uniform:30,90"`` or ``"normal:60,15"``."""
    if isinstance(value, Startup):
        return value
    if isinstance(value, bool):
        raise ValueError("startup must be seconds or 'uniform:LOW,HIGH' / 'normal:MEAN,SD'")
    if isinstance(value, (int, float)):
        return Startup("constant", float(value))
    from ..units import parse_duration

    text = str(value).strip()
    kind, sep, rest = text.partition(":")
    try:
        if not sep:
            return Startup("constant", parse_duration(text))
        parts = [parse_duration(p) for p in rest.split(",")]
    except ValueError as e:
        raise ValueError(f"invalid startup {text!r}: {e}") from None
    if kind not in ("uniform", "normal") or len(parts) != 2:
        raise ValueError(f"invalid startup {text!r}: use seconds, 'uniform:LOW,HIGH' or 'normal:MEAN,SD'")
    return Startup(kind, parts[0], parts[1])


_REQUESTS = {"cpu": 1}


def _member(name: str, phase: str, ready: bool, start: float, transition: float,
            count: int, deleting: bool = False) -> Member:
    return Member(name=name, phase=phase, ready=ready, start_time=start,
                  ready_transition_time=transition, deleting=deleting,
                  requests=_REQUESTS, weight=1, count=count)


class Fleet:
    """Cohort accounting for one run.

    Call :meth:`advance` at the start of every tick ``k`` (cheap when
    ``k < next_event``), :meth:`resize` when the autoscaler sets a new size,
    then read ``paid`` (``active + draining``), ``serving`` (``ready +
    draining``) and, for observations, :meth:`members` (rebuilt only when
    ``version`` changed).
    """

    __slots__ = ("t0", "tick", "startup", "_seed", "_rng", "drain_ticks", "settle_ticks", "const_ticks",
                 "pending", "young", "settled", "settled_times", "draining",
                 "n_pending", "n_ready", "n_draining", "next_event", "version",
                 "_members", "_members_version", "_serving_names", "_serving_since", "_cache")

    def __init__(self, initial: int, *, tick_seconds: float, startup: Startup, t0: float = 0.0,
                 seed: int = 0, drain_seconds: float = 0.0, settle_seconds: float = 900.0) -> None:
        if initial < 0:
            raise ValueError("initial size must be >= 0")
        self.t0 = float(t0)
        self.tick = float(tick_seconds)
        self.startup = startup
        self._seed = seed
        self._rng: Optional[np.random.Generator] = None   # made at the first random draw (a constant startup never draws)
        self.const_ticks: Optional[int] = (startup_ticks(startup.minimum, self.tick)
                                           if startup.constant else None)
        self.drain_ticks = startup_ticks(drain_seconds, self.tick) if drain_seconds > 0 else 0
        self.settle_ticks = max(1, startup_ticks(settle_seconds, self.tick))
        self.pending: list[list] = []    # [request_tick, ready_tick, count], request order
        self.young: list[list] = []      # ready cohorts not yet settled, ready order
        self.settled = int(initial)      # long-ready members, one group
        long_ago = self.t0 - 86400.0
        self.settled_times = (long_ago, long_ago + startup.minimum)
        self.draining: list[list] = []   # [end_tick, count, start_time, ready_time]
        self.n_pending = 0
        self.n_ready = int(initial)
        self.n_draining = 0
        self.next_event = 1 << 62
        self.version = 0
        self._members: list[Member] = []
        self._members_version = -1
        self._serving_names: list[str] = []
        self._serving_since: list[float] = []
        self._cache: dict = {}

    @property
    def rng(self) -> np.random.Generator:
        """The startup draws' generator, seeded with ``seed`` (made when first drawn from:
        the same draws as one made at construction)."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        return self._rng

    # -- counts ---------------------------------------------------------------------------
    @property
    def active(self) -> int:
        """Members that are not being removed: the size the autoscaler set."""
        return self.n_pending + self.n_ready

    @property
    def paid(self) -> int:
        return self.n_pending + self.n_ready + self.n_draining

    @property
    def serving(self) -> int:
        return self.n_ready + self.n_draining

    # -- time -----------------------------------------------------------------------------
    def advance(self, k: int) -> None:
        """Apply what happens at tick ``k``: readiness, settling, end of drains."""
        if k < self.next_event:
            return
        changed = False
        if self.pending:
            still = []
            for c in self.pending:
                if c[1] <= k:
                    self.young.append(c)
                    self.n_pending -= c[2]
                    self.n_ready += c[2]
                    changed = True
                else:
                    still.append(c)
            if changed:
                self.pending = still
                self.young.sort(key=lambda c: c[1])
        settle = self.settle_ticks
        while self.young and self.young[0][1] + settle <= k:
            c = self.young.pop(0)
            self.settled += c[2]
            self.settled_times = (self._time(c[0]), self._time(c[1]))
            changed = True
        while self.draining and self.draining[0][0] <= k:
            self.n_draining -= self.draining.pop(0)[1]
            changed = True
        if changed:
            self.version += 1
        self._schedule()

    def _schedule(self) -> None:
        nxt = 1 << 62
        for c in self.pending:
            if c[1] < nxt:
                nxt = c[1]
        if self.young:
            nxt = min(nxt, self.young[0][1] + self.settle_ticks)
        if self.draining:
            nxt = min(nxt, self.draining[0][0])
        self.next_event = nxt

    def _time(self, k: int) -> float:
        return self.t0 + k * self.tick

    # -- the autoscaler's action ------------------------------------------------------------
    def resize(self, size: int, k: int) -> None:
        """Set the size at tick ``k`` (an absolute size, as a provider's resize)."""
        size = max(0, int(size))
        delta = size - self.active
        if delta > 0:
            self._add(delta, k)
        elif delta < 0:
            self._remove(-delta, k)
        else:
            return
        self.version += 1
        self._schedule()

    def _add(self, n: int, k: int) -> None:
        if self.const_ticks is not None:
            groups = [(self.const_ticks, n)]
        else:
            ticks = np.ceil(self.startup.draw(self.rng, n) / self.tick - 1e-9).astype(np.int64)
            values, counts = np.unique(ticks, return_counts=True)
            groups = list(zip(values.tolist(), counts.tolist()))
        for s, count in groups:   # ascending ready tick: the latest is removed first
            if s <= 0:
                self.young.append([k, k, count])
                self.n_ready += count
            else:
                self.pending.append([k, k + s, count])
                self.n_pending += count

    def _remove(self, n: int, k: int) -> None:
        while n and self.pending:            # not ready yet: newest request first
            c = self.pending[-1]
            take = min(n, c[2])
            c[2] -= take
            self.n_pending -= take
            n -= take
            if not c[2]:
                self.pending.pop()
        while n and self.young:              # then the youngest ready members
            c = self.young[-1]
            take = min(n, c[2])
            c[2] -= take
            n -= take
            self._retire(take, k, self._time(c[0]), self._time(c[1]))
            if not c[2]:
                self.young.pop()
        if n:
            take = min(n, self.settled)
            self.settled -= take
            self._retire(take, k, *self.settled_times)

    def _retire(self, count: int, k: int, start: float, ready: float) -> None:
        self.n_ready -= count
        if self.drain_ticks and count:
            self.draining.append([k + self.drain_ticks, count, start, ready])
            self.n_draining += count

    # -- what the autoscaler observes ---------------------------------------------------------
    def members(self) -> tuple[list[Member], list[str], list[float]]:
        """Protocol members (one entry per cohort, ``count`` members each), the
        names of those serving load (ready or draining) and, for each, the
        time it became ready; rebuilt only when ``version`` changed, reusing
        the entries of cohorts that did not change."""
        if self._members_version == self.version:
            return self._members, self._serving_names, self._serving_since
        cache = self._cache
        fresh: dict = {}

        def entry(key: tuple, make) -> Member:
            m = cache.get(key)
            if m is None:
                m = make()
            fresh[key] = m
            return m

        out: list[Member] = []
        serving: list[str] = []
        since: list[float] = []
        if self.settled:
            start, ready = self.settled_times
            n = self.settled
            out.append(entry(("ready", start, n), lambda: _member("ready", "Running", True, start, ready, n)))
            serving.append("ready")
            since.append(ready)
        for req, rdy, count in self.young:
            name = f"ready-{req}-{rdy}"
            t_req, t_rdy = self._time(req), self._time(rdy)
            out.append(entry((name, count), lambda: _member(name, "Running", True, t_req, t_rdy, count)))
            serving.append(name)
            since.append(t_rdy)
        for end, count, start, ready in self.draining:
            name = f"draining-{end}-{len(serving)}"
            out.append(entry((name, count), lambda: _member(name, "Running", True, start, ready, count,
                                                            deleting=True)))
            serving.append(name)
            since.append(ready)
        for req, rdy, count in self.pending:
            name = f"starting-{req}-{rdy}"
            t = self._time(req)
            out.append(entry((name, count), lambda: _member(name, "Pending", False, t, t, count)))
        self._cache = fresh
        self._members, self._serving_names, self._serving_since = out, serving, since
        self._members_version = self.version
        return out, serving, since


@dataclass(frozen=True)
class FleetModel:
    """Everything about the fleet and its telemetry that is not the load.

    - ``capacity``: load one member serves at 100 % (in the load's unit).
    - ``startup``: request → ready (:class:`Startup`, or seconds).
    - ``tick_seconds``: the simulation grid (the load is resampled to it).
    - ``sync_period_seconds``: the autoscaler runs every this often (a
      multiple of the tick; Kubernetes' default 15 s).
    - ``metric_lag_seconds``: collection lag; a decision at ``now`` sees the
      ticks that ended by ``now - lag`` (rounded up to whole ticks).
    - ``metric_window_seconds``: per-member samples average this many seconds
      (whole ticks, at least one).
    - ``series_grain_seconds``: the grain of the group-level ``series`` rules
      read (60 s, Azure's PT1M and CloudWatch's 1-minute metrics).
    - ``drain_seconds``: a removed ready member keeps serving (and being
      paid) this long; 0 stops it at once.
    - ``initial``: members ready at tick 0 (None: the run picks, see
      :func:`~scalebridge.simulator.world.default_initial`).
    - ``seed``: seeds the startup draws.
    """

    capacity: float
    startup: Startup = Startup("constant", 60.0)
    tick_seconds: float = 15.0
    sync_period_seconds: float = 15.0
    metric_lag_seconds: float = 15.0
    metric_window_seconds: float = 15.0
    series_grain_seconds: float = 60.0
    drain_seconds: float = 0.0
    initial: Optional[int] = None
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.startup, Startup):
            object.__setattr__(self, "startup", parse_startup(self.startup))
        if not (math.isfinite(self.capacity) and self.capacity > 0):
            raise ValueError(f"capacity must be a positive number, not {self.capacity!r}")
        if not self.tick_seconds > 0:
            raise ValueError("tick_seconds must be positive")
        ratio = self.sync_period_seconds / self.tick_seconds
        if not (ratio >= 1 - 1e-9 and abs(ratio - round(ratio)) < 1e-9):
            raise ValueError(f"sync_period_seconds ({self.sync_period_seconds:g}) must be a whole multiple "
                             f"of tick_seconds ({self.tick_seconds:g})")
        for name in ("metric_lag_seconds", "metric_window_seconds", "drain_seconds", "series_grain_seconds"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a non-negative number, not {v!r}")
        if self.initial is not None and self.initial < 0:
            raise ValueError("initial must be >= 0")

    @property
    def sync_ticks(self) -> int:
        return int(round(self.sync_period_seconds / self.tick_seconds))

    @property
    def lag_ticks(self) -> int:
        return startup_ticks(self.metric_lag_seconds, self.tick_seconds)

    @property
    def window_ticks(self) -> int:
        return max(1, int(round(self.metric_window_seconds / self.tick_seconds)))

    @property
    def grain_ticks(self) -> int:
        return max(1, int(round(self.series_grain_seconds / self.tick_seconds)))

    def describe(self) -> dict:
        """JSON-ready parameters (the ``fleet`` object of the CLI's output)."""
        return {"capacity": self.capacity, "startup_seconds": self.startup.describe(),
                "tick_seconds": self.tick_seconds, "sync_period_seconds": self.sync_period_seconds,
                "metric_lag_seconds": self.lag_ticks * self.tick_seconds,
                "metric_window_seconds": self.window_ticks * self.tick_seconds,
                "series_grain_seconds": self.grain_ticks * self.tick_seconds,
                "drain_seconds": self.drain_seconds, "initial": self.initial, "seed": self.seed}
