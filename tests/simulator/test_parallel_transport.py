"""What goes between the processes of a parallel replay (issue #29): forked workers
inherit the tasks and are sent an index only; a run comes back pickled as the ticks
where its series change, and unpickles to the same arrays.

Source: core/scalebridge/simulator/executors.py, replay.py (Run)."""
from __future__ import annotations

import pickle
import sys

import pytest

from scalebridge.simulator import executors


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
