"""What goes between the processes of a parallel replay (issue #29): forked workers
inherit the tasks and are sent an index only; a run comes back pickled as the ticks
where its series change, and unpickles to the same arrays.

Source: core/scalebridge/simulator/executors.py, replay.py (Run)."""
from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from scalebridge.policy import Policy
from scalebridge.simulator import FleetModel, make_workload, simulate
from scalebridge.simulator import executors
from scalebridge.testing.requests import cpu_policy


def _second(task):
    return task[1]()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_forked_workers_run_tasks_they_inherit_without_pickling_them(monkeypatch):
    monkeypatch.setattr(executors, "start_method", lambda: "fork")
    tasks = [(i, lambda i=i: i * i) for i in range(5)]   # a lambda cannot be pickled
    with pytest.raises(Exception):
        pickle.dumps(tasks[0])
    seen = []
    assert executors.run_tasks(_second, tasks, workers=2, done=lambda i, r: seen.append(i)) == [0, 1, 4, 9, 16]
    assert sorted(seen) == [0, 1, 2, 3, 4]
    assert executors._INHERITED is None   # nothing kept past the run


def test_a_run_pickles_as_its_changes_and_unpickles_to_the_same_series():
    load = make_workload("flash_crowd", seed=3, duration_seconds=6 * 3600.0).values
    run = simulate(Policy.model_validate(cpu_policy(60)), load, FleetModel(capacity=10.0, startup=60.0),
                   semantics="kubernetes")
    data = pickle.dumps(run)
    assert len(data) < (run.desired.nbytes + run.paid.nbytes + run.ready.nbytes) / 10
    back = pickle.loads(data)
    for key in ("desired", "paid", "ready"):
        a, b = getattr(run, key), getattr(back, key)
        assert np.array_equal(a, b) and a.dtype == b.dtype and b.flags.writeable
    assert (back.semantics, back.policy, back.decisions, back.reasons, back.errors, back.first_error,
            back.published, back.initial) == (run.semantics, run.policy, run.decisions, run.reasons, run.errors,
                                               run.first_error, run.published, run.initial)
    assert len(np.unique(run.desired)) > 2   # the load did move the fleet


def test_a_run_of_other_series_pickles_as_it_is():
    from scalebridge.simulator.replay import Run
    run = Run("k", "p", desired=np.array([], dtype=np.int64), paid=np.array([1.5, -0.0, 0.0]), ready=[1, 1, 2],
              decisions=0, reasons={})
    back = pickle.loads(pickle.dumps(run))
    assert back.desired.size == 0 and back.ready == [1, 1, 2]
    assert np.array_equal(back.paid, run.paid) and np.signbit(back.paid[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_the_objects_frozen_for_the_fork_are_thawed_unless_the_caller_had_frozen_some(monkeypatch):
    import gc
    monkeypatch.setattr(executors, "start_method", lambda: "fork")
    tasks = [(i, lambda i=i: i) for i in range(3)]
    assert gc.get_freeze_count() == 0
    assert executors.run_tasks(_second, tasks, workers=2) == [0, 1, 2]
    assert gc.get_freeze_count() == 0
    gc.freeze()   # a caller's own (a pre-forking server's)
    try:
        frozen = gc.get_freeze_count()
        assert executors.run_tasks(_second, tasks, workers=2) == [0, 1, 2]
        assert gc.get_freeze_count() > frozen // 2 > 0   # still frozen (less any freed meanwhile)
    finally:
        gc.unfreeze()
