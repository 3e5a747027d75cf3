"""One target's replay under each semantics, and the fleet's totals.

A :class:`ReplayTask` holds everything a replay needs and nothing of the
target's provider (a policy as a dict, the demand, the fleet model, the
recorded sizes): it is picklable, so :func:`replay` runs the same in this
process, in a spawned worker process, or on a Dask worker
(:func:`scalebridge.simulator.executors.run_tasks`), and gives the same result
wherever it runs. It is :func:`scalebridge.simulator.batch.compare` on the
rebuilt demand — the very replay and scores of ``scalebridge simulate`` — plus
the recorded fleet scored the same way: instance-hours and time
under-provisioned of what actually happened, and each run's ratio to it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..policy import parse_policy
from ..simulator.fleet import FleetModel

__all__ = ["ReplayTask", "replay", "fleet_totals", "RUN_FIELDS"]

#: the per-run fields of the text table and the CSV rows (``simulate``'s own names)
RUN_FIELDS = ("semantics", "instance_hours", "oracle_instance_hours", "oracle_ratio", "actual_ratio",
              "underprovisioned_seconds", "underprovisioned_fraction", "unserved_load", "scaling_actions",
              "reversals", "peak_members", "mean_members", "decisions", "errors", "first_error")


@dataclass
class ReplayTask:
    """One target's replay, picklable (see the module docstring)."""
    target: str
    policy: dict                      #: the policy as JSON (``policy_json``)
    semantics: list[str]
    load: np.ndarray
    model: FleetModel
    start: float
    settings: dict
    recorded_desired: Optional[np.ndarray] = None
    recorded_serving: Optional[np.ndarray] = None
    keep_series: bool = False         #: return each run's per-tick sizes (``--timeline``, ``--plot``)


def replay(task: ReplayTask) -> dict:
    """The target's runs (``simulate``'s run objects, with ``actual_ratio``), its
    oracle, the recorded fleet's scores, and with ``keep_series`` the per-tick
    ``desired``/``paid``/``ready`` of each run (lists of ints)."""
    from ..policy import Policy
    from ..simulator.batch import compare
    from ..simulator.scores import compute_scores

    policy = parse_policy(task.policy)
    result = compare([(task.target, policy)], task.semantics, task.load, task.model, start_time=task.start,
                     settings=task.settings or None)
    data = result.to_dict()
    out: dict[str, Any] = {"runs": data["runs"], "oracle": data["oracle"][0] if data["oracle"] else None,
                           "skipped": data["skipped"], "fleet": data["fleet"], "recorded": None,
                           "period_seconds": float(task.load.size * task.model.tick_seconds)}
    m = task.model
    if task.recorded_desired is not None:
        serving = task.recorded_serving if task.recorded_serving is not None else task.recorded_desired
        s = compute_scores(task.load, serving, task.recorded_desired, tick_seconds=m.tick_seconds,
                           capacity=m.capacity, oracle_paid=result.oracles[task.target],
                           desired=task.recorded_desired)
        rec = s.as_dict()
        rec["peak_members"] = int(np.max(task.recorded_desired))
        rec["mean_members"] = float(np.mean(task.recorded_desired))
        out["recorded"] = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in rec.items()}
    for run in out["runs"]:
        hours = out["recorded"]["instance_hours"] if out["recorded"] else None
        run["actual_ratio"] = run["instance_hours"] / hours if hours else None
    if task.keep_series:
        out["series"] = {r.run.semantics: {"desired": r.run.desired.tolist(), "paid": r.run.paid.tolist(),
                                           "ready": r.run.ready.tolist()} for r in result.results}
        out["series"]["oracle"] = {"paid": result.oracles[task.target].tolist()}
    return out


def fleet_totals(results: dict[str, dict]) -> dict[str, dict]:
    """Per semantics over every target replayed: instance-hours, the oracle's and
    the recorded ones (over the targets that have a record), time under-provisioned
    (summed target-seconds, and its fraction of the fleet's target-time), scale actions."""
    out: dict[str, dict] = {}
    for r in results.values():
        for run in r["runs"]:
            t = out.setdefault(run["semantics"], {"semantics": run["semantics"], "targets": 0, "instance_hours": 0.0,
                                                  "oracle_instance_hours": 0.0, "recorded_instance_hours": 0.0,
                                                  "instance_hours_with_record": 0.0,
                                                  "underprovisioned_seconds": 0.0, "target_seconds": 0.0,
                                                  "scaling_actions": 0})
            t["targets"] += 1
            t["instance_hours"] += run["instance_hours"]
            t["oracle_instance_hours"] += run["oracle_instance_hours"] or 0.0
            t["underprovisioned_seconds"] += run["underprovisioned_seconds"]
            t["target_seconds"] += r["period_seconds"]
            t["scaling_actions"] += run["scaling_actions"]
            if r["recorded"]:
                t["recorded_instance_hours"] += r["recorded"]["instance_hours"]
                t["instance_hours_with_record"] += run["instance_hours"]
    for t in out.values():
        t["oracle_ratio"] = t["instance_hours"] / t["oracle_instance_hours"] if t["oracle_instance_hours"] else None
        t["actual_ratio"] = (t["instance_hours_with_record"] / t["recorded_instance_hours"]
                             if t["recorded_instance_hours"] else None)
        seconds = t.pop("target_seconds")
        t["underprovisioned_fraction"] = t["underprovisioned_seconds"] / seconds if seconds else 0.0
        del t["instance_hours_with_record"]
    return out
