"""The world's per-tick series and its cpu samples (issue #29 made them cheaper, not
different): desired, paid and ready as lists and as read-only arrays of every tick,
none kept for a world that records nothing, and usage rounded up to a millicore as
Kubernetes' Quantity.MilliValue() rounds it, on both sides of its tolerance.

Source: core/scalebridge/simulator/world.py (World, _millicores)."""
from __future__ import annotations

import numpy as np
import pytest

from scalebridge.policy import Policy
from scalebridge.simulator import FleetModel, World, make_workload
from scalebridge.simulator.world import _millicores
from scalebridge.testing.requests import cpu_policy

POLICY = Policy.model_validate(cpu_policy(60))


def test_the_series_are_lists_and_read_only_arrays_of_every_tick():
    load = make_workload("flash_crowd", seed=4, duration_seconds=4 * 3600.0).values
    world = World(POLICY, load, FleetModel(capacity=10.0, startup=90.0, drain_seconds=30.0))
    assert all(not a.any() for a in world.per_tick())   # nothing replayed yet
    sizes = iter([3, 3, 9, 9, 9, 2, 2, 14] * 200)
    world.run(lambda now, current: next(sizes))
    desired, paid, ready = world.per_tick()
    for a, listed in ((desired, world.desired), (paid, world.paid), (ready, world.ready)):
        assert a.dtype == np.int64 and a.size == load.size == len(listed) and not a.flags.writeable
        assert a.tolist() == listed
    assert desired[:8].tolist() == [3, 3, 9, 9, 9, 2, 2, 14]
    assert (paid >= ready).all() and (paid > desired).any()   # draining members are paid


def test_a_world_that_records_nothing_keeps_no_series_and_steps_the_same():
    load = make_workload("step", seed=1, duration_seconds=3600.0).values
    model = FleetModel(capacity=10.0, startup=60.0)
    kept, bare = World(POLICY, load, model), World(POLICY, load, model, record=False)
    for world in (kept, bare):
        for k in range(0, load.size, 4):
            world.observe(k)
            world.resize(2 + k % 7)
        world.finish()
    last = range(0, load.size, 4)[-1]
    assert kept.current == bare.current and kept.desired[last:] == [2 + last % 7] * (load.size - last)
    with pytest.raises(ValueError, match="record=False"):
        bare.per_tick()


@pytest.mark.parametrize("usage, cores", [
    (0.734, 0.734), (0.7340000000001, 0.734), (0.7339999999999, 0.734), (0.7345, 0.735), (0.0005, 0.001),
    (1e-13, 0.0), (0.0, 0.0), (2.5e-3, 0.003), (1.0000000001, 1.0), (600000.0005, 600000.0), (600000.0009, 600000.001),
    (600000.0000001, 600000.0)])
def test_usage_is_rounded_up_to_a_millicore_within_a_billionth(usage, cores):
    world = World(POLICY, np.full(8, usage), FleetModel(capacity=1.0, startup=60.0, initial=1))
    seen = []
    world.run(lambda now, current: seen.append(dict(world.metrics["cpu"].members)))
    assert {v for s in seen for v in s.values()} == {cores} == {_millicores(usage * 1000.0) / 1000.0}
