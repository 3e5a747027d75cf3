"""A back-test of a run configuration's targets over a period: read each one's
history (threads: it waits on the sources), replay each one under every
semantics (processes or a Dask cluster: it computes), gather per target and
for the fleet. A target whose history cannot be read is reported with why,
and the others still are."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..controller.runtime import Runtime, TargetSpec
from ..errors import ScalebridgeError
from ..policy import policy_json
from ..simulator.executors import run_tasks, usable_cpus
from ..simulator.scenario import Scenario, ScenarioError
from .history import HistoryError, TargetHistory, demand_kind, demand_query, read_history
from .recorded import Recorded
from .replay import ReplayTask, fleet_totals, replay

__all__ = ["BacktestResult", "run_backtest", "HISTORY_THREADS"]

#: targets whose history is read at once (each read waits on a source's API)
HISTORY_THREADS = 8


@dataclass
class BacktestResult:
    start: float
    end: float
    tick_seconds: float
    semantics: list[str]
    targets: dict[str, dict] = field(default_factory=dict)     #: per target: demand, runs, oracle, recorded
    failed: dict[str, str] = field(default_factory=dict)        #: per target: why it was not replayed
    histories: dict[str, TargetHistory] = field(default_factory=dict)

    @property
    def fleet(self) -> dict[str, dict]:
        return fleet_totals(self.targets)

    def to_dict(self) -> dict:
        from .. import __version__
        return {"start": self.start, "end": self.end, "tick_seconds": self.tick_seconds, "semantics": self.semantics,
                "targets": {name: {k: v for k, v in r.items() if k != "series"} for name, r in self.targets.items()},
                "fleet": self.fleet, "failed": self.failed, "scalebridge_version": __version__}


def _settings(spec: TargetSpec) -> dict:
    """The target's protocol settings for the replay: as the configuration gives
    them, less the provider's metric delay (the simulated fleet's metric lag is
    the replay's, as in ``simulate``)."""
    return policy_json(spec.settings, exclude_none=True, exclude={"metric_delay_seconds"})


def _model(spec: TargetSpec, capacity: Optional[float], startup: Any, tick: Optional[float],
           recorded: Optional[Recorded] = None):
    opts = spec.backtest
    cap = opts.capacity if opts is not None and opts.capacity is not None else capacity
    up = opts.startup if opts is not None and opts.startup is not None else startup
    if cap is None and demand_kind(demand_query(spec, recorded)) == "utilization":
        cap = 1.0   # the demand is a percent of a member's capacity: whatever it is, the replay is the same
    if cap is None:
        raise HistoryError("needs the load one member serves: --capacity, or backtest: {capacity} on the target")
    if up is None:
        raise HistoryError("needs the members' startup: --startup, or backtest: {startup} on the target")
    try:
        return Scenario(capacity=cap, startup=up, tick=tick).fleet_model()
    except ScenarioError as e:
        raise HistoryError(str(e)) from None


def run_backtest(runtime: Runtime, specs: list[TargetSpec], start: float, end: float, semantics: list[str], *,
                 capacity: Optional[float] = None, startup: Any = None, tick: Optional[float] = None,
                 workers: Optional[int] = None, scheduler: Optional[str] = None, keep_series: bool = False,
                 progress: Optional[Callable[[str, int], None]] = None,
                 recorded: Optional[Recorded] = None) -> BacktestResult:
    """Back-test ``specs`` over ``[start, end)`` (see the module docstring);
    ``progress(phase, n)`` is called as targets are read (``history``) and replayed (``replay``);
    ``recorded``: the ``--history`` and ``--recorded`` files, read in place of the sources."""
    tick_seconds = 15.0 if tick is None else float(tick)
    result = BacktestResult(start, end, tick_seconds, semantics)

    def read(spec: TargetSpec) -> tuple[str, Any]:
        try:
            model = _model(spec, capacity, startup, tick, recorded)
            hist = read_history(spec, start, end, model.tick_seconds, model.capacity, recorded)
            task = ReplayTask(spec.name, policy_json(spec.policy.source, exclude_none=True), list(semantics),
                              hist.load, model, start, _settings(spec), hist.recorded_desired, hist.recorded_serving,
                              keep_series)
            return spec.name, (hist, task)
        except HistoryError as e:
            return spec.name, str(e)
        except ScalebridgeError as e:
            return spec.name, str(e)
        except Exception as e:  # noqa: BLE001 — one target's bug never hides the others
            return spec.name, f"internal error, please report it: {type(e).__name__}: {e}"
        finally:
            if progress is not None:
                progress("history", 1)

    if len(specs) > 1:
        with ThreadPoolExecutor(max_workers=min(HISTORY_THREADS, len(specs))) as pool:
            read_out = list(pool.map(read, specs))
    else:
        read_out = [read(s) for s in specs]
    tasks: list[ReplayTask] = []
    for name, got in read_out:
        if isinstance(got, str):
            result.failed[name] = got
        else:
            result.histories[name] = got[0]
            tasks.append(got[1])
    n_workers = usable_cpus() if workers is None else workers   # as simulate's --jobs: the affinity's CPUs
    outs = run_tasks(replay, tasks, workers=n_workers, scheduler=scheduler,
                     done=(lambda i, r: progress("replay", 1)) if progress is not None else None)
    for task, out in zip(tasks, outs):
        hist = result.histories[task.target]
        out["demand"] = {"metric": hist.metric, "source": hist.source, "recorded_size": hist.recorded_source,
                         "mean_load": float(hist.load.mean()), "peak_load": float(hist.load.max()),
                         "filled_ticks": hist.filled_ticks, "notes": hist.notes}
        result.targets[task.target] = out
    result.targets = {s.name: result.targets[s.name] for s in specs if s.name in result.targets}
    return result
