"""``compare``: every (policy, semantics) pair replayed on one load — in this
process, or in a pool of worker processes — and scored against the oracle."""

from __future__ import annotations

import copy
from typing import Callable, Optional, Union

import numpy as np

from ..policy import Policy, policy_json
from ..protocol import Settings, parse_settings
from .comparison import Comparison, RunResult, oracle_for, score_run
from .scores import Scores
from .fleet import FleetModel
from .replay import Run, simulate
from .world import Forecaster

__all__ = ["compare", "registered_semantics"]


def _run_task(task: tuple) -> tuple[int, Union[Run, str]]:
    """One run in a worker process: (index, Run) or (index, why it failed)."""
    index, policy, semantics, load, model, start_time, settings, label, forecaster = task
    try:
        return index, simulate(policy, load, model, semantics=semantics, settings=settings, forecaster=forecaster,
                               start_time=start_time, label=label)
    except Exception as e:  # reported as a skipped run, never a crash
        return index, _failure(e)


def _failure(e: Exception) -> str:
    from ..errors import RequestError
    if isinstance(e, RequestError):
        return f"cannot run this policy: {e}"
    return f"failed: {type(e).__name__}: {e}"


def registered_semantics() -> list[str]:
    from .. import registry
    return sorted(registry.current().semantics)


def compare(
    policies: list[tuple[str, Policy]],
    semantics: list[str],
    load: np.ndarray,
    model: FleetModel,
    *,
    start_time: float = 0.0,
    settings: Union[Settings, dict, None] = None,
    price_per_instance_hour: Optional[float] = None,
    workers: int = 1,
    scheduler: Optional[str] = None,
    forecaster: Optional[Forecaster] = None,
    progress: Optional[Callable[[int], None]] = None,
    workload: Optional[dict] = None,
    idle: Optional[Callable[[], None]] = None,
) -> Comparison:
    """Run every (policy, semantics) pair on ``load`` and score it against the
    oracle. A semantics that is not registered, cannot run a policy, or fails
    is listed in ``skipped`` with a one-line reason instead of raising.

    ``forecaster`` is copied for each run (``copy.deepcopy``), so a stateful one
    starts every run fresh; ``workers > 1`` runs pairs in that many processes, and
    ``scheduler`` on the Dask cluster at that address (:mod:`.executors`; it must then
    be picklable). ``progress(ticks)`` is called with the number of
    ticks just simulated, summed over runs (``len(load) × runs`` in all). With local
    worker processes, ``idle()`` is called once in this process when a worker has no
    run left to start (a core waits for the last runs): work the caller does after
    the runs anyway can be done there (the CLI imports what prints its table)."""
    from .. import registry

    available = registry.current().semantics
    load = np.ascontiguousarray(load, dtype=np.float64)
    n = int(load.size)
    settings = parse_settings(settings)
    skipped: list[dict] = []
    tasks = []
    for label, policy in policies:
        for name in semantics:
            if name not in available:
                skipped.append({"semantics": name, "policy": label, "reason": "not registered"})
                if progress is not None:
                    progress(n)
                continue
            # each run its own forecaster: a stateful one (a planner that has observed a run's
            # load) handed to the next run would forecast from the whole trace, future included
            own = copy.deepcopy(forecaster) if forecaster is not None else None
            tasks.append((len(tasks), policy, name, load, model, start_time, settings, label, own))
    runs: list[Union[Run, str, None]] = [None] * len(tasks)
    by_label = dict(policies)
    oracles: dict[str, np.ndarray] = {}
    scores: dict[int, Scores] = {}

    def score_finished() -> None:
        """Score the runs done so far (the oracles first, once)."""
        if not oracles:
            for label, policy in policies:
                oracles[label] = oracle_for(load, model, policy)
        for i, out in enumerate(runs):
            if isinstance(out, Run) and i not in scores:
                scores[i] = score_run(out, load, model, oracle_paid=oracles[tasks[i][7]],
                                      price_per_instance_hour=price_per_instance_hour)

    if (workers > 1 and len(tasks) > 1) or scheduler is not None:
        from .executors import run_tasks, start_method

        # forked workers inherit the policies; other transports pickle them as plain data
        inherited = scheduler is None and start_method() == "fork"
        payload = [(i, p if inherited else policy_json(p, exclude_none=True), *rest) for i, p, *rest in tasks]
        finished = [0]
        idle_from = len(tasks) - min(workers, len(tasks)) + 1   # from this many runs done, a worker waits

        def done(i: int, out: tuple) -> None:
            runs[i] = out[1]
            finished[0] += 1
            if progress is not None:
                progress(n)
            if scheduler is None and finished[0] >= idle_from:
                # on the core a worker left (nothing is left for it to start)
                if idle is not None and finished[0] == idle_from:
                    idle()
                score_finished()

        for i, out in run_tasks(_run_task, payload, workers=workers, scheduler=scheduler, done=done):
            runs[i] = out
    else:
        for task in tasks:
            done_ticks = [0]

            def tick_progress(k: int, done_ticks: list = done_ticks) -> None:
                progress(k - done_ticks[0])  # type: ignore[misc]
                done_ticks[0] = k

            i, policy, name, *_ = task
            try:
                runs[i] = simulate(policy, load, model, semantics=name, settings=settings, forecaster=task[8],
                                   start_time=start_time, label=task[7],
                                   progress=tick_progress if progress is not None else None)
            except Exception as e:  # reported as a skipped run, never a crash
                runs[i] = _failure(e)
                if progress is not None:
                    progress(n - done_ticks[0])

    score_finished()
    results: list[RunResult] = []
    for task, out in zip(tasks, runs):
        _, policy, name, *_ = task
        label = task[7]
        if isinstance(out, Run):
            results.append(RunResult(out, scores[task[0]]))
        else:
            skipped.append({"semantics": name, "policy": label, "reason": str(out)})
    return Comparison(load=load, model=model, start_time=start_time, results=results, skipped=skipped,
                      oracles=oracles, policies=by_label, price_per_instance_hour=price_per_instance_hour,
                      workload=workload or {})
