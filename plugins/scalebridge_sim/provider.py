"""The ``sim`` provider: a target is a simulated fleet serving a load, the world
``scalebridge simulate`` replays (:class:`scalebridge.simulator.world.World`),
stepped by the controller's clock instead of the replay's loop.

A target's ``ref`` is the ``simulate`` fleet and load, keyed by the flag names
with ``_`` for ``-`` (``scalebridge simulate --help``): ``workload`` (a built-in
generator's name) or ``trace`` (a ``timestamp,value`` CSV), ``capacity`` and
``startup`` (both required), and optionally ``scenario`` (a scenario file; the
other keys win over it), ``scale``, ``unit``, ``fill``, ``offset``, ``duration``,
``seed``, ``peak``, ``param`` (a mapping of generator parameters), ``tick``,
``sync_period``, ``metric_lag``, ``metric_window``, ``series_grain``, ``drain``
and ``initial``. A relative path is read from the working directory.

On the controller's clock the world does exactly what it does in a replay:

- :attr:`SimTarget.start_time` is the load's first tick, and
  :attr:`SimTarget.metric_delay_seconds` the metric lag (the decision's
  ``settings.metric_delay_seconds``, as ``simulate`` sets it);
- :meth:`SimTarget.use_policy` gives the world the policy it publishes metrics
  for (and, with ``predictive``, its planner, whose plan is
  ``Observation.forecast``), the initial size it holds for the first load, and
  the settings its member entries follow;
- :meth:`SimTarget.observe` advances the world to the tick ``now`` falls in
  (never back) and reports its members; :meth:`SimTarget.read_metrics` the
  metrics it published by then; :meth:`SimTarget.set_size` resizes the fleet at
  once, at that tick, as a replay does (never in flight).

So a ``sim`` target under ``scalebridge run --clock virtual`` decides, sync for
sync, what ``scalebridge simulate`` decides on the same policy, load and fleet.

On the real clock (``scalebridge run sim.yaml``, ``--once``) the load plays from
the target's first sync: its first tick is that sync's time, persisted with the
target's state, so a restart continues the same load. When the load ends, the
target says so once and holds its size (:class:`~scalebridge.providers.TargetEnded`).

The world survives a restart: :meth:`SimTarget.snapshot` is the ticks it was
observed at and the sizes set at each (a replay is deterministic, so replaying
them rebuilds the same fleet, metrics and planner exactly), persisted with the
target's decision state after every sync; :meth:`SimTarget.restore` replays them
before the next observe.
"""
from __future__ import annotations

import copy
import math
import os
from pathlib import Path
from typing import Any, Mapping, Optional

from scalebridge.providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider,
                                   ProviderError, RefError, SizeChange, Target, TargetEnded)

__all__ = ["REF_KEYS", "SimProvider", "SimTarget"]

#: the ``ref`` keys a sim target takes: ``simulate``'s load and fleet flags, ``_`` for ``-``
REF_KEYS = ("workload", "trace", "capacity", "startup", "scenario", "scale", "unit", "fill", "offset", "duration",
            "seed", "peak", "param", "tick", "sync_period", "metric_lag", "metric_window", "series_grain", "drain",
            "initial")
#: the keys that name the fleet and load as the scenario file does (the others are flags only)
_SCENARIO_KEYS = ("trace", "workload", "scale", "unit", "fill", "offset", "duration", "capacity", "startup", "tick",
                  "sync_period", "metric_lag", "metric_window", "series_grain", "drain", "initial", "seed")


class SimProvider(Provider):
    """Simulated targets in this process; it takes no options."""

    name = "sim"
    semantics = "scalebridge"
    capabilities = frozenset({Capability.METRICS, Capability.VIRTUAL_CLOCK})
    blocking = False      # in memory: nothing to overlap
    #: a simulated fleet has no API to protect: the controller's pacing never holds it back
    pacing = Pacing(writes_per_second=1e9, write_burst=10**9, reads_per_second=1e9, read_burst=10**9)
    ref_keys = frozenset({"capacity", "startup"})
    ref_path_keys = frozenset({"trace", "scenario"})

    def __init__(self, **options: Any) -> None:
        if options:
            key = sorted(options)[0]
            raise RefError(key, "the sim provider takes no options (a target's fleet and load are in its `ref`)")
        self._parsed: dict = {}   # parse_ref's answers by the ref's values (refs that name no file)

    def target(self, ref: Mapping[str, Any]) -> "SimTarget":
        # a ref that names no file is a pure function of its values: a fleet of targets
        # sharing a few refs reads each once (the workload and the fleet model are never
        # changed by a target; a file's content could change, so a path is read every time)
        key = None
        if isinstance(ref, dict) and ref.get("trace") is None and ref.get("scenario") is None:
            key = _frozen(ref)
        cache = self.__dict__.setdefault("_parsed", {})
        parsed = cache.get(key) if key is not None else None
        if parsed is None:
            parsed = parse_ref(ref)
            if key is not None:
                if len(cache) >= 1024:
                    cache.clear()
                cache[key] = parsed
        workload, model = parsed
        source = Path(workload.source).name if workload.kind == "trace" else workload.source
        return SimTarget(workload, model, name=f"sim/{source}")


def _frozen(value: Any) -> Any:
    """A hashable key holding ``value``'s types and values (``1``, ``1.0`` and ``True``
    apart; a mapping's order kept, as a ref's keys are read in order)."""
    t = type(value)
    if t is dict:
        return (dict, tuple((k, _frozen(v)) for k, v in value.items()))
    if t is list:
        return (list, tuple(_frozen(v) for v in value))
    if t in (str, int, float, bool, type(None)):
        return (t, value)
    return (t, repr(value))


def parse_ref(ref: Mapping[str, Any], base: Optional[Path] = None) -> tuple[Any, Any]:
    """The (:class:`~scalebridge.simulator.scenario.Workload`,
    :class:`~scalebridge.simulator.fleet.FleetModel`) a ref names, read and
    checked as ``simulate`` reads its flags; a problem raises :class:`RefError`
    naming the key."""
    from scalebridge.simulator.scenario import Scenario, ScenarioError, load_scenario, set_scenario_key
    from scalebridge.simulator.traces import TraceError

    if not isinstance(ref, Mapping):
        raise RefError("ref", f"expected a mapping of {', '.join(REF_KEYS)}")
    if base is None and (ref.get("trace") is not None or ref.get("scenario") is not None):
        base = Path.cwd()   # only a path is read from it (one system call per target otherwise)
    for key in ref:
        if key not in REF_KEYS:
            import difflib
            close = difflib.get_close_matches(str(key), REF_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RefError(f"ref.{key}", f"not a sim ref key{hint}; valid keys: {', '.join(REF_KEYS)}")
    if ref.get("trace") is not None and ref.get("workload") is not None:
        raise RefError("ref.trace", "give either `trace` or `workload`, not both")
    scenario = Scenario()
    if ref.get("scenario") is not None:
        path = ref["scenario"]
        if not isinstance(path, str) or not path:
            raise RefError("ref.scenario", f"expected a scenario file's path, got {path!r}")
        try:
            scenario = load_scenario(path if os.path.isabs(path) else base / path)
        except ScenarioError as e:
            raise RefError("ref.scenario", str(e)) from None
    given = Scenario()
    try:
        for key in _SCENARIO_KEYS:
            set_scenario_key(given, key, ref.get(key), f"ref.{key}", base)
        flags = {k: v for k, v in vars(given).items() if v is not None and v != {} and v != []}
        if ref.get("seed") is not None and given.workload_seed is None:
            flags["workload_seed"] = given.seed     # as --seed: the workload's noise and the startup draws
        if ref.get("peak") is not None:
            flags["workload_peak"] = _positive("ref.peak", ref["peak"])
        if ref.get("param") is not None:
            flags["workload_params"] = {**scenario.workload_params, **given.workload_params, **_params(ref["param"])}
    except ScenarioError as e:
        key, _, message = str(e).partition(": ")
        raise RefError(key, message) from None
    scenario = scenario.override(**flags)
    if scenario.trace is None and scenario.workload is None:
        from scalebridge.simulator.workloads import WORKLOADS
        raise RefError("ref.workload", f"give the load: `workload` (one of {', '.join(sorted(WORKLOADS))}) "
                                       "or `trace` (a timestamp,value CSV file)")
    for key in ("capacity", "startup"):
        if getattr(scenario, key) is None:
            what = "the load one member serves, in the load's unit" if key == "capacity" else \
                "seconds from request to ready, or uniform:LOW,HIGH / normal:MEAN,SD"
            raise RefError(f"ref.{key}", f"required: {what}")
    try:
        model = scenario.fleet_model()
    except ScenarioError as e:
        text = str(e)
        key = "ref.sync_period" if "sync_period" in text else "ref.tick" if "tick" in text else "ref"
        raise RefError(key, text) from None
    try:
        workload = scenario.load()
    except TraceError as e:
        raise RefError("ref.trace", str(e)) from None
    except ScenarioError as e:
        raise RefError("ref.trace" if scenario.trace is not None else "ref.workload", str(e)) from None
    except OSError as e:
        raise RefError("ref.trace", f"{getattr(e, 'filename', None) or scenario.trace}: {e.strerror or e}") from None
    return workload, model


def _positive(key: str, value: Any) -> float:
    from scalebridge.simulator.scenario import ScenarioError
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ScenarioError(f"{key}: expected a positive number, got {value!r}")
    return float(value)


def _params(value: Any) -> dict:
    from scalebridge.simulator.scenario import ScenarioError
    if not isinstance(value, Mapping):
        raise ScenarioError(f"ref.param: expected a mapping of the generator's parameters (surge: 20), got {value!r}")
    return {str(k): v for k, v in value.items()}


class SimTarget(Target):
    """One simulated fleet and its load (see the module docstring)."""

    def __init__(self, workload: Any, model: Any, *, name: str = "sim") -> None:
        self.name = name
        self.workload = workload
        self.model = model
        self.start_time = float(workload.start_time)
        self.metric_delay_seconds = model.lag_ticks * float(model.tick_seconds)
        self._policy: Any = None
        self._settings: Any = None
        self._world: Any = None
        self._members: Optional[list[dict]] = None   # the members of the tick observed last, as dicts
        self._virtual = True                  # until the controller says otherwise (use_clock)
        self._origin: Optional[float] = None  # on the real clock: the time the load's first tick played
        # the snapshot, kept up to date in place (persisted after every sync: O(1) to give)
        self._snap: dict = {"v": 1, "origin": None, "observed": [], "resizes": []}
        self._restoring: Optional[dict] = None

    # -- the world --------------------------------------------------------------------------------
    def use_policy(self, policy: Any, settings: Any) -> None:
        """The world is built from this policy at the first observe; a world already
        replaying keeps the one it started with (it cannot publish its past again)."""
        self._policy, self._settings = policy, settings

    def use_clock(self, virtual: bool) -> None:
        self._virtual = virtual

    @property
    def world(self) -> Any:
        """The :class:`~scalebridge.simulator.world.World` (built on first use, from
        the policy given to :meth:`use_policy`, else a policy with no metrics; a
        restored snapshot replayed into it)."""
        if self._world is None:
            from scalebridge.policy import Policy
            from scalebridge.protocol import Settings
            from scalebridge.simulator.world import World
            policy = self._policy if self._policy is not None else Policy()
            start = self.start_time if self._virtual or self._origin is None else self._origin
            # record=False: the per-tick series (desired, paid, ready) a replay scores are not
            # kept — three lists of every tick for each of thousands of targets, never read here
            self._world = World(policy, self.workload.load, self.model,
                                settings=self._settings if self._settings is not None else Settings(),
                                start_time=start, record=False)
            if self._restoring is not None:
                self._replay(self._restoring)
        return self._world

    def _replay(self, snapshot: dict) -> None:
        world = self._world
        self._restoring = None
        resizes = {int(k): int(v) for k, v in snapshot.get("resizes", [])}
        for k in _ticks(snapshot.get("observed", [])):
            world.observe(k)
            self._observed(k)
            if k in resizes:
                world.resize(resizes[k])
                self._resized(k, resizes[k])
        self._members = None

    def _observed(self, k: int) -> None:
        """Tick ``k`` observed: added to the snapshot's runs ``[first, step, count]``."""
        runs = self._snap["observed"]
        if runs:
            last = runs[-1]
            first, step, count = last
            if count == 1 and k > first:
                last[1], last[2] = k - first, 2
                return
            if k - (first + step * (count - 1)) == step:
                last[2] += 1
                return
        runs.append([k, 0, 1])

    def _resized(self, k: int, size: int) -> None:
        resizes = self._snap["resizes"]
        if resizes and resizes[-1][0] == k:
            resizes[-1][1] = size
        else:
            resizes.append([k, size])

    def _at(self, now: float) -> Any:
        """The world advanced to the tick ``now`` falls in."""
        if not self._virtual and self._origin is None and self._world is None:
            self._origin = float(now)   # on the real clock the load plays from the first sync
            self._snap["origin"] = self._origin
        world = self.world
        tick = world.tick_seconds
        k = math.floor((now - world.start_time) / tick + 1e-9)
        if k < 0:
            raise ProviderError(ErrorKind.NOT_FOUND, f"the simulated load starts at t={world.start_time:g}, "
                                                     f"after t={now:g}", operation="observe")
        if k >= world.ticks:
            end = world.start_time + world.ticks * tick
            if self._virtual:
                raise TargetEnded(f"the simulated load ended at t={end:g} ({world.ticks} ticks of {tick:g} s from "
                                  f"t={world.start_time:g}); the target holds its size")
            raise TargetEnded(f"the simulated load ended {world.ticks * tick:g} s after the target's first sync "
                              f"(at {_stamp(end)}); the target holds its size")
        if k < world.tick:
            raise ProviderError(ErrorKind.INVALID, f"the simulated world is at t={world.time_of(world.tick):g}; "
                                                   f"it cannot go back to t={now:g}", operation="observe")
        if k > world.tick:
            world.observe(k)
            self._observed(k)
            self._members = None
        return world

    # -- surviving a restart ----------------------------------------------------------------------
    def snapshot(self) -> Optional[dict]:
        if self._restoring is not None:   # restored, not observed since
            return self._restoring
        return self._snap if self._snap["observed"] else None

    def restore(self, snapshot: dict) -> None:
        if not isinstance(snapshot, dict) or snapshot.get("v") != 1:
            return   # not a snapshot of this version: the world starts afresh
        self._origin = snapshot.get("origin") if isinstance(snapshot.get("origin"), (int, float)) else None
        self._world = None
        self._snap = {"v": 1, "origin": self._origin, "observed": [], "resizes": []}
        self._restoring = snapshot

    # -- the provider contract --------------------------------------------------------------------
    def observe(self, now: float) -> Observation:
        world = self._at(now)
        obs = world.observations
        if self._members is None:
            self._members = list(obs.members)
        k = world.tick
        return Observation(
            current_replicas=world.current, status_replicas=obs.status_replicas, members=self._members,
            forecast=obs.forecast,
            details={"tick": k, "time": world.time_of(k), "load": float(self.workload.load[k]),
                     "unit": self.workload.unit})

    def read_metrics(self, now: float, observation: Observation, queries: list[MetricQuery]) -> dict:
        world = self._at(now)
        out = {}
        for q in queries:
            published = world.metrics.get(q.name)
            if published is not None:   # memory and other unsimulated resources stay missing
                out[q.name] = copy.copy(published)   # the world changes its own at the next sync
        return out

    def set_size(self, size: int) -> SizeChange:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProviderError(ErrorKind.INVALID, f"a size is a count of members, not {size!r}",
                                operation="set_size")
        self._write(size)
        return SizeChange(size=size, in_flight=False)

    def _write(self, size: int) -> None:
        """The write itself: the simulated world resized (and the resize kept for the snapshot)."""
        world = self.world
        if world.tick < 0:   # resized before anything observed it: at the start
            self._at(world.start_time)
        world.resize(size)
        self._resized(world.tick, size)


def _ticks(runs: Any) -> list[int]:
    out: list[int] = []
    for run in runs:
        first, step, count = (int(x) for x in run)
        out.extend(first + step * i for i in range(count))
    return out


def _stamp(t: float) -> str:
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
