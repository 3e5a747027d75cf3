"""A world reads the load it is given when it is built: a generated load is shared
(converted and checked once for every world that replays it, issue #29), but an array
the caller may still change — a read-only view of a writable one — is read afresh."""
from __future__ import annotations

import numpy as np
import pytest

from scalebridge.policy import Policy
from scalebridge.simulator import FleetModel, World, make_workload
from scalebridge.simulator.scenario import load_workload
from scalebridge.testing.requests import cpu_policy

MODEL = FleetModel(capacity=10.0, startup=60.0)
POLICY = Policy.model_validate(cpu_policy(60))


def _cpu_seen(load) -> list:
    world = World(POLICY, load, MODEL)
    seen = []
    world.run(lambda now, current: seen.append(dict(world.metrics["cpu"].members)))
    return seen


def test_a_changed_view_is_replayed_with_its_new_values_and_checked_again():
    base = np.full(40, 100.0)
    view = base.view()
    view.flags.writeable = False
    before = _cpu_seen(view)
    base[:] = 400.0
    assert _cpu_seen(view) == _cpu_seen(np.full(40, 400.0)) != before
    base[3] = -1.0
    with pytest.raises(ValueError, match="finite and non-negative"):
        World(POLICY, view, MODEL)


def test_worlds_sharing_a_generated_load_replay_what_a_copy_of_it_replays():
    shared = load_workload(workload="flash_crowd", seed=2, duration_seconds=3600.0).load
    again = load_workload(workload="flash_crowd", seed=2, duration_seconds=3600.0).load
    assert again is shared and not shared.flags.writeable
    copy = make_workload("flash_crowd", seed=2, duration_seconds=3600.0).values.copy()
    assert _cpu_seen(shared) == _cpu_seen(again) == _cpu_seen(copy)
