"""The simulated world: a load series, a fleet, and the metrics a provider would publish.

A :class:`World` is stepped from sync to sync by whoever decides: at a sync
tick it holds the protocol's observations (:attr:`World.observations`) and
takes the size set then (:meth:`World.resize`). :func:`~.replay.simulate`
steps it with a :class:`~scalebridge.engine.Decider`; the ``sim`` provider
steps it from the controller's clock. Every tick ``k`` (time
``now = start_time + k * tick``):

1. the fleet applies what happens at ``k`` (members becoming ready, drains
   ending; :class:`~scalebridge.simulator.fleet.Fleet`);
2. on a sync tick, the world builds the protocol's observations — members
   with readiness and start times, metric samples, series, the planner's
   forecast — and waits for the size set at that tick, which the fleet
   takes at once;
3. the tick's load is served by the ready members: utilization
   ``= load / (serving members × capacity)``, recorded for later samples.

Metrics published (only those the policy names are built; all see the ticks
that ended by ``now - lag``, averaged over the metric window; a member not yet
ready has no sample):

- ``cpu``: ``members`` — per serving member ready before the window's end
  (a member ready later has no sample yet), usage in cores against a 1-core
  request (members carry ``requests: {"cpu": 1}``): its share of the load
  over ``capacity``, rounded up to a millicore as ``Quantity.MilliValue()``
  does; ``timestamp`` (end of the window), ``window``; ``series`` — the group
  average CPU utilization in percent, one point per grain, stamped at the
  grain's end.
- ``load``: ``members`` (per serving member, in load units), ``value`` (group
  total), ``values`` (``[total]``, for external metrics), ``series`` (group
  total per grain) — except for a name a ``pods`` metric uses, whose
  ``series`` is the per-member average per grain (what CloudWatch's group
  average of a per-instance metric is).
- a ``load_balancing`` metric: under its own name, ``value`` and ``members``
  in percent of serving capacity, ``series`` as ``cpu``'s.
- any other name a policy's ``pods``/``object``/``external`` metric, rule or
  ``predictive.metric`` uses: the ``load`` observation under that name.
  Resource metrics other than ``cpu`` (memory) are not simulated.

Before tick 0 the fleet is warm: samples and series are filled as if the
first tick's load had been served by the initial members for as long as any
window looks back. The decision's ``settings.metric_delay_seconds`` is the
lag (:attr:`World.lag_seconds`), so rule windows end where the published
series ends.

A ``forecaster(now, history, tick_seconds)`` may be given: called on every
sync tick with the load observed so far (a read-only numpy view of the ticks
that ended by ``now - lag``), it returns a capacity forecast in replicas
(``int``), a :class:`~scalebridge.protocol.CapacityForecast`, or None; it
reaches the semantics as ``observations.forecast`` (which only acts on it when
``policy.predictive.mode`` is ``ForecastAndScale``). Without one, a policy
with predictive scaling brings its own planner
(:func:`scalebridge.predictive.trace_forecaster`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Generator, Optional, Union

import numpy as np

from .. import constants as C
from ..policy import Policy
from ..protocol import CapacityForecast, MetricObservation, Observations, Settings
from ..stages.proposals import default_utilization
from .bounds import bounds
from .fleet import Fleet, FleetModel
from .oracle import member_needed

__all__ = ["Forecaster", "Progress", "World", "default_initial", "published_metrics"]

Forecaster = Callable[[float, np.ndarray, float], Union[int, CapacityForecast, None]]
Progress = Callable[[int], None]

_PROGRESS_EVERY = 4096  # ticks between progress callbacks (a power of two)


def _rules(policy: Policy) -> list:
    out = list(policy.rules)
    for p in policy.profiles:
        out.extend(p.rules)
    return out


def published_metrics(policy: Policy) -> dict[str, str]:
    """Metric name → shape (``cpu``, ``load``, ``load_per_member`` or ``load_balancing``) this
    policy can name; ``cpu`` is always there (semantics default to it)."""
    out = {"cpu": "cpu"}
    formulas = {m.name for m in policy.metrics or [] if m.type == "formula"}   # computed by decide, never published
    for m in policy.metrics or []:
        if m.type in ("resource", "container_resource", "formula"):
            continue   # cpu is published; other resources (memory) are not simulated
        shape = {"load_balancing": "load_balancing", "pods": "load_per_member"}.get(m.type, "load")
        out.setdefault(m.name, shape)
    for r in _rules(policy):
        if r.metric not in formulas:
            out.setdefault(r.metric, "load")
    if policy.predictive is not None and policy.predictive.metric:
        out.setdefault(policy.predictive.metric, "load")
    return out


def default_initial(policy: Policy, first_load: float, capacity: float) -> int:
    """Members at tick 0 when the model does not say: what the policy would hold
    for the first tick's load — ``ceil(load / (capacity × target))`` for its
    first cpu or load-balancing utilization target, ``ceil(load / target)``
    for an AverageValue target on a metric the simulator publishes as the load
    (``pods``: per member; ``object``/``external``: the total over the members),
    else ``ceil(load / capacity)``; with
    ``predictive.mode: ForecastAndScale``, at least the planner's plan before
    it knows its own error, ``ceil(load / (capacity_per_replica ×
    target_utilization))`` — within the policy's bounds."""
    need = first_load / capacity
    for m in policy.metrics or []:
        if not m.enabled:
            continue
        t = m.target
        if t.type == "Utilization" and (m.name == "cpu" or m.type == "load_balancing"):
            need = first_load / (capacity * float(default_utilization(m)) / 100)
            break
        if t.type == "AverageValue" and m.type in ("pods", "object", "external"):
            from ..units import exact
            need = first_load / float(exact(t.average_value))
            break
    spec = policy.predictive
    if spec is not None and spec.mode == "ForecastAndScale":
        per_member = float(spec.capacity_per_replica or capacity) * float(spec.target_utilization)
        need = max(need, first_load / per_member)
    size = member_needed(need, 1.0)
    lo, hi = bounds(policy)
    size = max(size, lo)
    return size if hi is None else min(size, hi)


def _settle_seconds(policy: Policy, settings: Settings, model: FleetModel) -> float:
    """How long a ready cohort stays a member entry of its own (its start and
    ready times matter to initialization periods) before joining the group."""
    periods = [settings.cpu_initialization_period_seconds or 300.0,
               settings.initial_readiness_delay_seconds or 30.0,
               settings.default_instance_warmup_seconds or 0.0, settings.default_cooldown_seconds or 300.0,
               policy.initialization_period_seconds or 0.0]
    periods += [m.initialization_period_seconds or 0.0 for m in policy.metrics or []]
    return max(periods) + model.startup.minimum + (model.lag_ticks + model.window_ticks) * model.tick_seconds


def _retention_points(policy: Policy, grain: float) -> int:
    """Series points to publish: the longest rule window (at least 30 min:
    AWS target tracking's 15-point scale-in alarm) plus two grains — CloudWatch
    reads the evaluation periods plus 2 (constants.AWS_ALARM_EXTRA_PERIODS)."""
    longest = max([1800.0] + [r.time_window_seconds for r in _rules(policy)])
    return int(math.ceil(longest / grain)) + C.AWS_ALARM_EXTRA_PERIODS


#: loads that nothing changes (a generated load shared by every world that replays it,
#: :func:`share`), by id: [weak reference to the array, its list of floats or None, checked]
_SHARED: dict[int, list] = {}


def share(loads: np.ndarray) -> np.ndarray:
    """Mark ``loads`` (an array that owns its data) read-only and shared: every world
    replaying it converts it to Python floats and checks its values once."""
    import weakref
    loads.flags.writeable = False
    key = id(loads)
    _SHARED[key] = [weakref.ref(loads, lambda _, key=key: _SHARED.pop(key, None)), None, False]
    return loads


def _entry(loads: np.ndarray) -> Optional[list]:
    e = _SHARED.get(id(loads))
    return e if e is not None and e[0]() is loads else None


def _shared(loads: np.ndarray) -> bool:
    """Whether ``loads`` is a shared load (:func:`share`) whose values were checked."""
    e = _entry(loads)
    return e is not None and e[2]


def _load_list(loads: np.ndarray, record: bool) -> Any:
    """``loads`` as a sequence of Python floats, indexed per tick: a list (one list for a
    shared load, whatever the worlds replaying it); for a world that records no per-tick
    series (the sim provider's, thousands in a process) an unshared load is an
    ``array('d')``, 8 bytes a tick instead of a float object's 32 — the same values."""
    e = _entry(loads)
    if e is not None:
        if e[1] is None:
            e[1] = loads.tolist()
        return e[1]
    if record:
        return loads.tolist()
    from array import array
    return array("d", loads.tobytes())


def _as_forecast(value: Any) -> Optional[CapacityForecast]:
    if value is None or isinstance(value, CapacityForecast):
        return value
    replicas = int(value)
    if replicas < 0:
        raise ValueError(f"the forecaster returned {value!r}; a capacity forecast is >= 0 replicas")
    return CapacityForecast(replicas=replicas, source="simulator")


class World:
    """One simulated target: ``load`` (one rate per tick of ``model.tick_seconds``,
    from ``start_time``) served by a fleet of ``model``'s members, with the metrics
    ``policy`` names published as a provider would.

    Step it with :meth:`observe` at each sync tick (ticks increase), reading
    :attr:`observations` (one object, updated in place at every sync: copy what
    must outlive the next one) and calling :meth:`resize` when the decision
    changes the size; :meth:`finish` replays the ticks after the last sync. Or
    hand :meth:`run` a ``decide(now, current)`` called at every sync tick of the
    model's period: the same loop, without leaving it between syncs (what a
    replay uses). The per-tick series are in :attr:`desired`, :attr:`paid` and
    :attr:`ready` (lists of ``ticks`` ints; :meth:`per_tick` as arrays; complete
    after :meth:`finish` or :meth:`run`), kept as the ticks where they change.

    ``record=False`` keeps no per-tick series (reading them raises ``ValueError``):
    a world stepped from outside whose replay nobody scores (the sim provider's).

    ``settings`` are the decisions' protocol settings (initialization periods
    and cooldowns decide how long a ready cohort keeps its own member entry);
    ``progress(ticks)`` is called every few thousand ticks with the ticks
    replayed so far."""

    __slots__ = ("policy", "model", "start_time", "tick_seconds", "lag_seconds", "ticks", "initial", "published",
                 "observations", "metrics", "tick", "_current", "_pending", "_gen",
                 "_forecaster", "_settings", "_loads", "_progress", "_record", "_marks", "_arrays")

    def __init__(self, policy: Policy, load: np.ndarray, model: FleetModel, *,
                 settings: Optional[Settings] = None, forecaster: Optional[Forecaster] = None,
                 start_time: float = 0.0, progress: Optional[Progress] = None, record: bool = True) -> None:
        loads = np.ascontiguousarray(load, dtype=np.float64)
        if loads.size == 0:
            raise ValueError("the load series is empty")
        if not _shared(loads):
            if not np.all(np.isfinite(loads)) or np.any(loads < 0):
                raise ValueError("load values must be finite and non-negative")
            e = _entry(loads)
            if e is not None:
                e[2] = True
        self.policy = policy
        self.model = model
        self._settings = settings if settings is not None else Settings()
        self._loads = loads
        self.ticks = int(loads.size)
        self.tick_seconds = float(model.tick_seconds)
        self.lag_seconds = model.lag_ticks * self.tick_seconds
        self.start_time = float(start_time)
        cap = float(model.capacity)
        self.initial = model.initial if model.initial is not None else default_initial(policy, float(loads[0]), cap)
        if forecaster is None and policy.predictive is not None:   # predictive scaling brings its own planner
            from ..forecasting.planner import trace_forecaster   # (imported by a policy that has it only)
            forecaster = trace_forecaster(policy, capacity=cap, startup_seconds=model.startup.mean,
                                          t0=self.start_time, tick_seconds=self.tick_seconds)
        self._forecaster = forecaster
        self._progress = progress
        self.published = published_metrics(policy)
        self.observations = Observations()
        self.metrics: dict[str, MetricObservation] = {}
        self._record = record
        # (tick, desired, paid, ready) where they change; None: not recorded (the sim provider's
        # worlds, stepped from outside: nobody reads the per-tick series)
        self._marks: Optional[list[tuple[int, int, int, int]]] = [] if record else None
        self._arrays: Optional[tuple[int, tuple]] = None   # per_tick()'s, and how many marks made them
        self.tick = -1                   #: the tick of the last :meth:`observe` (-1: none yet)
        self._current = self.initial
        self._pending: Optional[int] = None
        self._gen: Optional[Generator] = None

    # -- stepping -------------------------------------------------------------------------------
    @property
    def current(self) -> int:
        """The size set last (members not being removed)."""
        return self._current if self._pending is None else self._pending

    def per_tick(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The per-tick series, desired, paid and ready members, as int64 arrays of
        ``ticks`` (read-only)."""
        marks = self._marks
        if marks is None:
            raise ValueError("this world was made with record=False: it keeps no per-tick series")
        if self._arrays is None or self._arrays[0] != len(marks):
            if marks:
                arrays = _per_tick(marks, self.ticks)
            else:   # not replayed yet
                arrays = tuple(np.zeros(self.ticks, dtype=np.int64) for _ in range(3))
            for a in arrays:
                a.flags.writeable = False
            self._arrays = (len(marks), arrays)
        return self._arrays[1]

    @property
    def desired(self) -> list[int]:
        """The size set at each tick (after that tick's decision, if any)."""
        return self.per_tick()[0].tolist()

    @property
    def paid(self) -> list[int]:
        """Members paid during each tick."""
        return self.per_tick()[1].tolist()

    @property
    def ready(self) -> list[int]:
        """Members serving during each tick (ready, or draining)."""
        return self.per_tick()[2].tolist()

    def time_of(self, k: int) -> float:
        return self.start_time + k * self.tick_seconds

    def observe(self, k: int) -> int:
        """Replay up to sync tick ``k`` (later than the last one, before the end):
        the size set at the last sync applies first; then :attr:`observations`
        hold tick ``k``'s. Returns the current size."""
        if not self.tick < k < self.ticks:
            raise ValueError(f"tick {k} is not after tick {self.tick} and before the end ({self.ticks} ticks)")
        if self._gen is None:
            current = next(self.steps(k))
        else:
            pending, self._pending = self._pending, None
            current = self._gen.send((pending, k))
        self.tick = k
        self._current = current
        return current

    def resize(self, size: int) -> None:
        """Set the size at the tick observed last (an absolute size, as a
        provider's resize); the fleet takes it before that tick's load is served."""
        if self.tick < 0:
            raise ValueError("resize before the first observe")
        self._pending = max(0, int(size))

    def finish(self) -> None:
        """Replay the ticks after the last sync (the size set then applies first)."""
        if self._gen is None:
            self.steps(self.ticks)
            sent: Any = None
        else:
            sent = (self._pending, self.ticks)
            self._pending = None
        try:
            self._gen.send(sent)
        except StopIteration:
            pass
        else:   # pragma: no cover - the replay always ends at tick `ticks`
            raise RuntimeError("the replay did not end")
        self.tick = self.ticks

    # -- the replay loop ------------------------------------------------------------------------
    def steps(self, next_sync: int = 0) -> Generator[int, Optional[tuple[Optional[int], int]], None]:
        """The tick loop itself, for a driver that steps it without :meth:`observe`
        (:func:`~.replay.simulate`): a generator that replays up to sync tick
        ``next_sync`` and yields the current size there (:attr:`observations`
        updated), then is sent ``(size set at that tick or None, next sync tick)``
        each time; past the last tick it stops (``StopIteration``). Everything it
        touches per tick is a local. Use it, or :meth:`observe`, once per world."""
        if self._gen is not None:
            raise RuntimeError("this world is already being stepped")
        self._gen = self._replay(next_sync)
        return self._gen

    def run(self, decide: Callable[[float, int], Optional[int]]) -> None:
        """Replay every tick, calling ``decide(now, current)`` at each sync tick of
        the model's period (:attr:`observations` hold that tick's) for the size to
        set then (None: unchanged): the whole replay in one loop, for
        :func:`~.replay.simulate`. Use it, :meth:`steps` or :meth:`observe`, once
        per world."""
        if self._gen is not None:
            raise RuntimeError("this world is already being stepped")
        self._gen = self._replay(0, decide)
        for _ in self._gen:   # never yields when it decides itself
            pass
        self.tick = self.ticks

    def _replay(self, next_sync: int, decide: Optional[Callable[[float, int], Optional[int]]] = None
                ) -> Generator[int, Optional[tuple[Optional[int], int]], None]:
        policy, model, settings = self.policy, self.model, self._settings
        sync = model.sync_ticks
        lag_ticks, window_ticks, grain_ticks = model.lag_ticks, model.window_ticks, model.grain_ticks
        tick = self.tick_seconds
        lag = self.lag_seconds
        n = self.ticks
        load_list = _load_list(self._loads, self._record)
        history = self._loads.view()
        history.flags.writeable = False
        cap = float(model.capacity)
        t0 = self.start_time
        initial = self.initial
        forecaster = self._forecaster
        progress = self._progress
        fleet = Fleet(initial, tick_seconds=tick, startup=model.startup, t0=t0, seed=model.seed,
                      drain_seconds=model.drain_seconds, settle_seconds=_settle_seconds(policy, settings, model))

        published = self.published
        shapes = set(published.values())
        want_load = "load" in shapes
        want_per_member = "load_per_member" in shapes
        want_lb = "load_balancing" in shapes
        extra = want_load or want_per_member or want_lb or forecaster is not None
        load_names = [k for k, v in published.items() if v == "load"]
        per_member_names = [k for k, v in published.items() if v == "load_per_member"]
        lb_names = [k for k, v in published.items() if v == "load_balancing"]

        # warm start: histories prefilled so that tick k's window is util[k : k + W]
        first = load_list[0]
        u0 = first / (initial * cap) if initial else first / cap
        pad = lag_ticks + window_ticks
        # per-member utilization (fraction of capacity): tick j's at util[pad + j], for the
        # first `filled` ticks (_utilization); the load's window at sync tick k is
        # total_hist[k : k + W] of [first] * pad + load_list, read from load_list itself
        # (no copy of the series per world)
        util = [u0] * pad
        filled = 0
        retention = _retention_points(policy, grain_ticks * tick)
        grain = grain_ticks * tick
        # prefilled points up to t0; those newer than t0 - lag stay hidden until the lag has
        # passed, as a provider would not have them yet (and as many older ones fill the window)
        hidden = sum(1 for j in range(retention) if t0 - j * grain > t0 - lag)
        count = retention + hidden
        cpu_points = [(t0 - j * grain, u0 * 100.0) for j in range(count - 1, -1, -1)]
        load_points = [(t0 - j * grain, first) for j in range(count - 1, -1, -1)]
        member_points = [(t, v * cap / 100.0) for t, v in cpu_points]
        visible = retention
        # after the prefilled points, one per grain of ticks [e - grain_ticks, e), stamped
        # t0 + e * tick: made when it becomes visible (its ticks served, its end before the lag;
        # the prefilled ones are visible by then)
        next_grain = grain_ticks
        next_point = cpu_points[visible][0] if hidden else t0 + next_grain * tick   # the next to become visible
        cpu_series = cpu_points[:visible]
        load_series = load_points[:visible]
        member_series = member_points[:visible]

        current = fleet.active
        W = window_ticks
        # one object per shape for the whole run, its fields replaced at each sync, only
        # what changes (cheaper than making them; semantics never keep or change observations)
        window = W * tick
        cpu_obs = MetricObservation(window=window)
        load_obs = MetricObservation(window=window)
        per_member_obs = MetricObservation(window=window)
        lb_obs = MetricObservation(window=window)
        metrics = self.metrics
        metrics["cpu"] = cpu_obs
        for key in load_names:
            metrics[key] = load_obs
        for key in per_member_names:
            metrics[key] = per_member_obs
        for key in lb_names:
            metrics[key] = lb_obs
        members, serving, since = fleet.members()
        # what changes only now and then is set when it does: members (the fleet changed),
        # series (a point became visible), status (a resize)
        obs = self.observations
        obs.status_replicas, obs.members, obs.metrics, obs.forecast, obs.proposal = \
            current, members, metrics, None, None
        cpu_obs.series = lb_obs.series = cpu_series
        load_obs.series = load_series
        per_member_obs.series = member_series
        fsum = math.fsum
        ceil = math.ceil
        fromkeys = dict.fromkeys
        newest = max(since, default=-math.inf)
        sampled = serving
        only = None               # the one member sampled, if there is one only
        partial = True            # a serving member may be ready after the window's end (not sampled)
        stale = False             # the fleet changed since the members were built
        members_version = fleet.version
        # fleet counts, refreshed only when the fleet changes (advance at events, resize); the
        # per-tick series are kept as the ticks where they change (_marks)
        next_event = fleet.next_event
        serving_now = fleet.serving
        paid_now = serving_now + fleet.n_pending
        scale = serving_now * cap if serving_now else cap   # tick k's utilization: load / scale
        marks = self._marks
        if marks is not None:
            marks.append((0, current, paid_now, serving_now))
        chunk = _PROGRESS_EVERY if progress is not None else n

        for chunk_start in range(0, n, chunk):
            for k in range(chunk_start, min(n, chunk_start + chunk)):
                if k >= next_event:
                    filled = _utilization(util, pad, filled, k, load_list, scale)   # up to k at the old scale
                    fleet.advance(k)
                    next_event = fleet.next_event
                    serving_now = fleet.n_ready + fleet.n_draining
                    paid_now = serving_now + fleet.n_pending
                    scale = serving_now * cap if serving_now else cap
                    stale = True
                    if marks is not None:
                        marks.append((k, current, paid_now, serving_now))
                if k == next_sync:
                    now = t0 + k * tick
                    stamp = now - lag
                    if filled < k:   # the served ticks' utilization, and (until the fleet changes) more
                        filled = _utilization(util, pad, filled, min(n, next_event, k + _AHEAD), load_list, scale)
                    if W == 1:
                        u = util[k]
                    else:
                        us = util[k:k + W]
                        u = us[0] if min(us) == max(us) else fsum(us) / W
                    while next_point <= stamp:   # a series point becomes visible
                        if hidden:   # a prefilled one newer than t0 - lag (the first syncs only)
                            visible += 1
                            hidden -= 1
                            next_point = cpu_points[visible][0] if hidden else t0 + next_grain * tick
                        elif next_grain <= k:   # the grain of ticks [next_grain - grain_ticks, next_grain)
                            lo = next_grain - grain_ticks
                            total_util = 0.0   # added in tick order (sum() may round otherwise)
                            for x in util[pad + lo:pad + next_grain]:
                                total_util += x
                            cpu_points.append((next_point, total_util * 100.0 / grain_ticks))
                            if want_per_member:
                                member_points.append((next_point, total_util * cap / grain_ticks))
                            if want_load:
                                total_load = 0.0
                                for x in load_list[lo:next_grain]:
                                    total_load += x
                                load_points.append((next_point, total_load / grain_ticks))
                            visible += 1
                            next_grain += grain_ticks
                            next_point = t0 + next_grain * tick
                        else:   # its ticks are not all served yet
                            break
                        cpu_obs.series = lb_obs.series = cpu_points[visible - retention:visible]
                        if want_load:
                            load_obs.series = load_points[visible - retention:visible]
                        if want_per_member:
                            per_member_obs.series = member_points[visible - retention:visible]
                    if stale:
                        stale = False
                        if fleet.version != members_version:
                            members, serving, since = fleet.members()
                            obs.members = members
                            newest = max(since, default=-math.inf)
                            members_version = fleet.version
                            partial = True
                    if partial:
                        if newest < stamp:
                            sampled = serving
                            partial = False
                        else:   # ready after the window ended: no sample yet
                            sampled = [name for name, t in zip(serving, since) if t < stamp]
                        only = sampled[0] if len(sampled) == 1 else None   # the usual case: one
                    m = u * 1000.0             # usage in cores, rounded up to a millicore (_millicores)
                    if m < 5e8:
                        # the tolerance is then under half a millicore: the whole millicore within
                        # it can only be ceil(m) (which ceil gives anyway) or ceil(m) - 1
                        c = ceil(m)
                        cores = c / 1000.0 if m - (c - 1) > (1e-9 * m if m > 1.0 else 1e-9) else (c - 1) / 1000.0
                    else:
                        cores = _millicores(m) / 1000.0
                    cpu_obs.members = {only: cores} if only is not None else fromkeys(sampled, cores)
                    cpu_obs.timestamp = stamp
                    if extra:
                        if want_load or want_per_member:
                            if W == 1:
                                total = load_list[k - pad] if k >= pad else first
                            else:
                                if k >= pad:
                                    ts = load_list[k - pad:k - pad + W]
                                else:
                                    ts = [first] * min(W, pad - k) + list(load_list[0:max(0, k + W - pad)])
                                total = ts[0] if min(ts) == max(ts) else fsum(ts) / W
                        if want_load:
                            load_obs.members = dict.fromkeys(sampled, u * cap)
                            load_obs.timestamp = stamp
                            load_obs.value = total
                            load_obs.values = [total]
                        if want_per_member:
                            per_member_obs.members = dict.fromkeys(sampled, u * cap)
                            per_member_obs.timestamp = stamp
                            per_member_obs.value = total
                            per_member_obs.values = [total]
                        if want_lb:
                            pct = u * 100.0
                            lb_obs.members = dict.fromkeys(sampled, pct)
                            lb_obs.timestamp = stamp
                            lb_obs.value = pct
                        if forecaster is not None:
                            obs.forecast = _as_forecast(forecaster(now, history[:max(0, k - lag_ticks)], tick))
                    if decide is None:
                        size, next_sync = yield current
                    else:
                        size = decide(now, current)
                        next_sync += sync
                    if size is not None and size != current:
                        filled = _utilization(util, pad, filled, k, load_list, scale)
                        fleet.resize(size, k)
                        obs.status_replicas = current = fleet.active
                        next_event = fleet.next_event
                        serving_now = fleet.n_ready + fleet.n_draining
                        paid_now = serving_now + fleet.n_pending
                        scale = serving_now * cap if serving_now else cap
                        stale = True
                        if marks is not None:
                            marks.append((k, current, paid_now, serving_now))
            if progress is not None:
                progress(min(n, chunk_start + chunk))


#: ticks of utilization computed ahead of the served ones at a sync, at the fleet's
#: current size (recomputed from a tick where the fleet changes)
_AHEAD = 32


def _utilization(util: list, pad: int, filled: int, upto: int, loads: Any, scale: float) -> int:
    """Bring ``util`` (tick ``j``'s per-member utilization at ``util[pad + j]``, for
    the first ``filled`` ticks) to ``upto`` ticks: ticks from ``filled`` serve their
    load over ``scale`` (serving members × capacity), ticks from ``upto`` on are
    dropped (the fleet changes there). Returns ``upto``."""
    if filled < upto:
        util.extend([x / scale for x in loads[filled:upto]])
    elif filled > upto:
        del util[pad + upto:]
    return upto


def _millicores(m: float) -> int:
    """Usage ``m`` in millicores rounded up to a whole one, as ``Quantity.MilliValue()``
    rounds (a value within a billionth of a whole millicore is that one)."""
    r = round(m)
    return r if abs(m - r) <= 1e-9 * (m if m > 1.0 else 1.0) else math.ceil(m)


def _per_tick(marks: list, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Desired, paid and ready members per tick (int64 arrays of ``n``) from the
    ticks where they changed: ``(tick, desired, paid, ready)``, in tick order (a
    later mark of the same tick wins)."""
    ticks, desired, paid, ready = (np.array(c, dtype=np.int64) for c in zip(*marks))
    lengths = np.diff(ticks, append=n)
    return np.repeat(desired, lengths), np.repeat(paid, lengths), np.repeat(ready, lengths)
