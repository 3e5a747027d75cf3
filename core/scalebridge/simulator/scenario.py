"""What to replay: the load (a trace or a generator) and the fleet, from a
scenario file and/or command-line flags.

A scenario file is YAML; every key is optional and a command-line flag wins
over it. Relative paths are read from the scenario file's directory::

    trace: ../traces/worldcup98_day46-78.csv   # or: workload: {...}
    scale: 1/60            # requests per minute -> requests per second
    unit: requests/s
    fill: previous         # repair gaps: zero, previous, interpolate
    offset: 2d             # skip the first two days of the trace
    duration: 1d           # replay one day
    workload: {name: flash_crowd, seed: 1, peak: 1000, duration: 6h, params: {surge: 10}}
    capacity: 50           # load one member serves, in the unit above
    startup: 90            # or "uniform:60,180", "normal:90,20"
    tick: 15
    sync_period: 15
    metric_lag: 15
    metric_window: 15
    series_grain: 60
    drain: 0
    initial: null          # members at t=0 (default: what the policy holds for the first load)
    seed: 0
    price: 0.05            # per instance-hour
    semantics: [kubernetes, gce, azure, aws, scalebridge]
    policies: [policy.yaml]
    settings: {tolerance: 0.1}   # protocol settings for every decision
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ..errors import ScalebridgeError
from ..units import parse_duration
from .fleet import FleetModel, parse_startup
from .traces import FILL_MODES, read_trace, resample
from .workloads import WORKLOADS, make_workload

__all__ = ["SCENARIO_KEYS", "Scenario", "ScenarioError", "Workload", "load_scenario", "load_workload",
           "parse_scale", "set_scenario_key"]


class ScenarioError(ScalebridgeError):
    """A scenario file or flag is invalid; the message names where and what."""


@dataclass
class Workload:
    """A load series on the simulation grid: ``load[k]`` holds on
    ``[start_time + k*tick, start_time + (k+1)*tick)``, in ``unit``."""

    load: np.ndarray
    tick_seconds: float
    start_time: float
    source: str
    unit: str = "load"
    scale: float = 1.0
    kind: str = "trace"                      # "trace" or "workload"
    params: dict = field(default_factory=dict)

    @property
    def duration_seconds(self) -> float:
        return self.load.size * self.tick_seconds

    def describe(self) -> dict:
        """JSON-ready summary (the ``workload`` object of the CLI's output)."""
        return {"kind": self.kind, "source": self.source, "unit": self.unit, "scale": self.scale,
                "start_time": self.start_time, "tick_seconds": self.tick_seconds, "ticks": int(self.load.size),
                "duration_seconds": self.duration_seconds, "mean_load": float(self.load.mean()),
                "peak_load": float(self.load.max()), **({"params": self.params} if self.params else {})}


def parse_scale(value: Union[str, float, int]) -> float:
    """A positive number, or a fraction such as ``"1/60"``."""
    try:
        x = float(Fraction(str(value).strip())) if isinstance(value, str) else float(value)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"scale must be a positive number or a fraction like 1/60, not {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"scale must be a positive number or a fraction like 1/60, not {value!r}")
    return x


MIN_TICK_SECONDS = 1.0
"""The finest simulation grid (docs/simulation.md, limits)."""
MAX_TICKS = 10_000_000
"""The most ticks one replay holds (115 days at 1 s, 4.7 years at 15 s)."""
MAX_STARTUP_SECONDS = 1e6
"""The longest startup a member may take (11.6 days)."""
MIN_CAPACITY, MAX_LOAD = 1e-9, 1e15
"""The range of a member's capacity and of a load's peak."""


def _in_range(what: str, v: float, lo: float, hi: float) -> None:
    if not (lo <= v <= hi):
        raise ScenarioError(f"{what} must be between {lo:g} and {hi:g}, not {v:g}")


def _check_ticks(span_seconds: Optional[float], tick_seconds: float) -> None:
    _in_range("tick", tick_seconds, MIN_TICK_SECONDS, 86_400)
    if span_seconds is not None and span_seconds / tick_seconds > MAX_TICKS:
        raise ScenarioError(f"{span_seconds:g}s at a {tick_seconds:g}s tick is more than {MAX_TICKS:,} ticks; "
                            "give a longer --tick or a shorter --duration")


def load_workload(*, trace: Optional[str] = None, workload: Optional[str] = None, tick_seconds: float = 15.0,
                  scale: float = 1.0, unit: Optional[str] = None, fill: Optional[str] = None,
                  offset_seconds: float = 0.0, duration_seconds: Optional[float] = None, seed: int = 0,
                  peak: Optional[float] = None, params: Optional[dict] = None) -> Workload:
    """Read a trace (resampled to the tick) or generate a workload.

    Trace problems raise :class:`~scalebridge.simulator.traces.TraceError`
    (it names file and line); an unknown workload or parameter raises
    :class:`ScenarioError`."""
    if (trace is None) == (workload is None):
        raise ScenarioError("give either a trace file (--trace) or a built-in workload (--workload), not both")
    _check_ticks(duration_seconds if duration_seconds is None else duration_seconds + offset_seconds, tick_seconds)
    if peak is not None:
        _in_range("peak", peak, MIN_CAPACITY, MAX_LOAD)
    if trace is not None:
        if params:
            raise ScenarioError("--param shapes generated workloads; for a trace use --scale or --peak")
        if peak is not None and scale != 1.0:
            raise ScenarioError("give --scale or --peak for a trace, not both")
        data = read_trace(trace, scale=scale, fill=fill)  # type: ignore[arg-type]
        start = data.start + offset_seconds
        end = data.end if duration_seconds is None else min(data.end, start + duration_seconds)
        _check_ticks(end - start, tick_seconds)
        if not start < end:
            raise ScenarioError(f"{trace}: offset {offset_seconds:g}s leaves nothing of the trace's "
                                f"{data.end - data.start:g}s")
        load = resample(data, tick_seconds, start, end)
        if peak is not None:
            # scaled so that the replayed peak (at the tick, within the window) is `peak`:
            # "a capacity that makes the trace's peak need N members" without a hand-computed --scale
            top = float(load.max())
            if not top > 0:
                raise ScenarioError(f"{trace}: --peak needs a load above zero somewhere; the replayed window is all zero")
            scale = peak / top
            load = load * scale
        return Workload(load, tick_seconds, start, os.fspath(trace), unit or "load", scale, "trace")
    args = dict(params or {})
    for key, value in args.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ScenarioError(f"workload parameter {key}: expected a number, got {value!r}")
    shown = {"name": workload, "seed": seed, **({"peak": peak} if peak is not None else {}), **args}
    # a generator is a pure function of its arguments: the same load for the same ones,
    # generated once and shared read-only (10,000 sim targets on a few loads)
    key = tuple((v, type(v)) for v in (workload, seed, tick_seconds, peak, duration_seconds, offset_seconds,
                                       scale)) + tuple((k, type(v), v) for k, v in args.items())
    hit = _GENERATED.get(key)
    if hit is not None:
        load, start, source = hit
        return Workload(load, tick_seconds, start, source, unit or "load", scale, "workload", shown)
    try:
        data = make_workload(workload, seed=seed, tick_seconds=tick_seconds, peak=peak,  # type: ignore[arg-type]
                             duration_seconds=None if duration_seconds is None else duration_seconds + offset_seconds,
                             **args)
    except TypeError as e:
        raise ScenarioError(f"workload {workload!r}: {e}") from None
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    skip = int(round(offset_seconds / tick_seconds))
    if skip >= data.values.size:
        raise ScenarioError(f"offset {offset_seconds:g}s is past the workload's end")
    from .world import share
    load = share(data.values[skip:] * scale)   # read-only: shared by every caller that asks for the same load
    start = float(data.times[skip])
    if len(_GENERATED) >= _GENERATED_MAX:
        _GENERATED.pop(next(iter(_GENERATED)))
    _GENERATED[key] = (load, start, data.source)
    return Workload(load, tick_seconds, start, data.source, unit or "load", scale, "workload", shown)


#: generated loads by their arguments (oldest dropped first past the bound)
_GENERATED: dict = {}
_GENERATED_MAX = 256


# -- scenario files -------------------------------------------------------------------------

SCENARIO_KEYS = ("trace", "workload", "scale", "unit", "fill", "offset", "duration", "capacity", "startup",
                 "tick", "sync_period", "metric_lag", "metric_window", "series_grain", "drain", "initial",
                 "seed", "price", "semantics", "policies", "settings")


@dataclass
class Scenario:
    """Every input of ``simulate``/``compare`` except the policies' contents;
    fields left None take the defaults of :meth:`fleet_model` and the CLI."""

    trace: Optional[str] = None
    workload: Optional[str] = None
    workload_seed: Optional[int] = None
    workload_peak: Optional[float] = None
    workload_params: dict = field(default_factory=dict)
    scale: Optional[float] = None
    unit: Optional[str] = None
    fill: Optional[str] = None
    offset: Optional[float] = None
    duration: Optional[float] = None
    capacity: Optional[float] = None
    startup: Any = None
    tick: Optional[float] = None
    sync_period: Optional[float] = None
    metric_lag: Optional[float] = None
    metric_window: Optional[float] = None
    series_grain: Optional[float] = None
    drain: Optional[float] = None
    initial: Optional[int] = None
    seed: Optional[int] = None
    price: Optional[float] = None
    semantics: Optional[list[str]] = None
    policies: list[str] = field(default_factory=list)
    settings: dict = field(default_factory=dict)

    def override(self, **flags: Any) -> "Scenario":
        """A copy with every flag that is not None applied."""
        out = Scenario(**{k: getattr(self, k) for k in self.__dataclass_fields__})
        for k, v in flags.items():
            if v is not None:
                setattr(out, k, v)
        if flags.get("trace") is not None and flags.get("workload") is not None:
            raise ScenarioError("give either a trace file (--trace) or a built-in workload (--workload), not both")
        if flags.get("trace") is not None:
            out.workload = None
        if flags.get("workload") is not None:
            out.trace = None
        return out

    def fleet_model(self) -> FleetModel:
        if self.capacity is None:
            raise ScenarioError("--capacity is required: the load one member serves, in the load's unit")
        if self.startup is None:
            raise ScenarioError("--startup is required: seconds from request to ready (or uniform:LO,HI / normal:MEAN,SD)")
        tick = 15.0 if self.tick is None else self.tick
        if not tick > 0:
            raise ScenarioError(f"tick must be more than 0 seconds, not {tick:g}")
        _check_ticks(None, tick)
        _in_range("capacity", float(self.capacity), MIN_CAPACITY, MAX_LOAD)
        try:
            startup = parse_startup(self.startup)
            _in_range("startup", max(startup.a, startup.b), 0, MAX_STARTUP_SECONDS)
            return FleetModel(capacity=float(self.capacity), startup=startup, tick_seconds=tick,
                              sync_period_seconds=tick * max(1, round(15.0 / tick)) if self.sync_period is None
                              else self.sync_period,
                              metric_lag_seconds=15.0 if self.metric_lag is None else self.metric_lag,
                              metric_window_seconds=tick if self.metric_window is None else self.metric_window,
                              series_grain_seconds=60.0 if self.series_grain is None else self.series_grain,
                              drain_seconds=self.drain or 0.0, initial=self.initial, seed=self.seed or 0)
        except ValueError as e:
            raise ScenarioError(str(e)) from None

    def load(self) -> Workload:
        return load_workload(trace=self.trace, workload=self.workload,
                             tick_seconds=15.0 if self.tick is None else self.tick,
                             scale=1.0 if self.scale is None else self.scale, unit=self.unit, fill=self.fill,
                             offset_seconds=self.offset or 0.0, duration_seconds=self.duration,
                             seed=self.workload_seed if self.workload_seed is not None else (self.seed or 0),
                             peak=self.workload_peak, params=self.workload_params)


def _duration(where: str, v: Any) -> float:
    try:
        x = parse_duration(v)
    except ValueError as e:
        raise ScenarioError(f"{where}: {e}") from None
    if x < 0:
        raise ScenarioError(f"{where}: must be zero or more seconds")
    return x


def _number(where: str, v: Any, positive: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (positive and v <= 0):
        raise ScenarioError(f"{where}: expected a {'positive ' if positive else ''}number, got {v!r}")
    return float(v)


def load_scenario(path: Union[str, os.PathLike]) -> Scenario:
    """Read a scenario file (see the module docstring)."""
    import yaml

    name = os.fspath(path)
    from ..inputfile import InputFileError, read_text
    from ..policyfile import MAX_YAML_DEPTH, _too_deep
    try:
        text = read_text(name)
        too_deep = _too_deep(text, name)   # before the composer recurses (policy files' limit)
        if too_deep:
            raise ScenarioError(f"{too_deep}: nested deeper than {MAX_YAML_DEPTH} levels")
        data = yaml.safe_load(text)
    except (RecursionError, ValueError) as e:   # ValueError: an integer past 4,300 digits
        raise ScenarioError(f"{name}: invalid YAML: "
                            f"{'nested too deeply' if isinstance(e, RecursionError) else 'a number with more than 4,300 digits'}") from None
    except InputFileError as e:
        raise ScenarioError(f"{name}: {e.reason}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{name}: not a UTF-8 text file") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        raise ScenarioError(f"{where}: invalid YAML: {getattr(e, 'problem', None) or e}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ScenarioError(f"{name}: a scenario is a mapping of {', '.join(SCENARIO_KEYS)}")
    base = Path(name).parent
    s = Scenario()
    for key, v in data.items():
        where = f"{name}: {key}"
        if key not in SCENARIO_KEYS:
            import difflib
            close = difflib.get_close_matches(str(key), SCENARIO_KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ScenarioError(f"{where}: unknown key{hint} valid keys: {', '.join(SCENARIO_KEYS)}")
        set_scenario_key(s, key, v, where, base)
    return s


def set_scenario_key(s: Scenario, key: str, v: Any, where: str, base: Path) -> None:
    """Check one scenario key's value and set it on ``s``; a problem raises
    :class:`ScenarioError` starting with ``where`` (relative paths are read from
    ``base``)."""
    if v is None:
        return
    if key == "trace":
        s.trace = _rel(v, where, base)
    elif key == "workload":
        if isinstance(v, str):
            v = {"name": v}
        if not isinstance(v, dict) or "name" not in v:
            raise ScenarioError(f"{where}: expected a name or a mapping with name, seed, peak, duration, params")
        unknown = set(v) - {"name", "seed", "peak", "duration", "params"}
        if unknown:
            raise ScenarioError(f"{where}: unknown key {sorted(unknown)[0]!r}; valid: name, seed, peak, duration, params")
        if v["name"] not in WORKLOADS:
            raise ScenarioError(f"{where}: unknown workload {v['name']!r}; choose one of {', '.join(sorted(WORKLOADS))}")
        s.workload = v["name"]
        if v.get("seed") is not None:
            if isinstance(v["seed"], bool) or not isinstance(v["seed"], int):
                raise ScenarioError(f"{where}.seed: expected an integer, got {v['seed']!r}")
            s.workload_seed = v["seed"]
        if v.get("peak") is not None:
            s.workload_peak = _number(f"{where}.peak", v["peak"], positive=True)
        if v.get("duration") is not None:
            s.duration = _duration(f"{where}.duration", v["duration"])
        params = v.get("params") or {}
        if not isinstance(params, dict):
            raise ScenarioError(f"{where}.params: expected a mapping of the generator's parameters")
        s.workload_params = dict(params)
    elif key == "scale":
        try:
            s.scale = parse_scale(v)
        except ValueError as e:
            raise ScenarioError(f"{where}: {e}") from None
    elif key == "unit":
        s.unit = str(v)
    elif key == "fill":
        if v not in FILL_MODES:
            raise ScenarioError(f"{where}: expected one of {', '.join(FILL_MODES)}, got {v!r}")
        s.fill = v
    elif key in ("offset", "duration", "tick", "sync_period", "metric_lag", "metric_window",
                 "series_grain", "drain"):
        setattr(s, key, _duration(where, v))
    elif key == "startup":
        try:
            parse_startup(v)
        except ValueError as e:
            raise ScenarioError(f"{where}: {e}") from None
        s.startup = v
    elif key in ("capacity", "price"):
        x = _number(where, v, positive=key == "capacity")
        if x < 0:
            raise ScenarioError(f"{where}: expected a price of 0 or more, got {v!r}")
        setattr(s, key, x)
    elif key in ("initial", "seed"):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ScenarioError(f"{where}: expected a non-negative integer, got {v!r}")
        setattr(s, key, v)
    elif key == "semantics":
        names = [x.strip() for x in v.split(",")] if isinstance(v, str) else v
        if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
            raise ScenarioError(f"{where}: expected a list of semantics names")
        s.semantics = names
    elif key == "policies":
        items = [v] if isinstance(v, str) else v
        if not isinstance(items, list):
            raise ScenarioError(f"{where}: expected a list of policy files")
        s.policies = [_rel(p, where, base) for p in items]
    elif key == "settings":
        if not isinstance(v, dict):
            raise ScenarioError(f"{where}: expected a mapping of protocol settings")
        s.settings = dict(v)


def _rel(p: Any, where: str, base: Path) -> str:
    if not isinstance(p, str) or not p:
        raise ScenarioError(f"{where}: expected a file path, got {p!r}")
    return str(p if os.path.isabs(p) else base / p)
