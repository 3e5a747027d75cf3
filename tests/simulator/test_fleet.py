"""The fleet's member accounting (scalebridge.simulator.fleet): the oracle's conventions,
cohorts, which members a shrink removes, drains serving and paid for, startup draws.

Source: docs/simulation.md (the fleet model)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scalebridge import registry
from scalebridge.policy import Policy
from scalebridge.simulator import FleetModel, make_workload, members_needed, oracle_for, simulate
from scalebridge.simulator.fleet import Fleet, parse_startup, Startup
from scalebridge.simulator.oracle import ready_members, startup_ticks
from scalebridge.testing.requests import cpu_policy


TICK = 15.0


def drive(fleet: Fleet, sizes: list[int]) -> tuple[list[int], list[int]]:
    """Resize at every tick as the run loop does: advance, resize, read."""
    paid, ready = [], []
    for k, size in enumerate(sizes):
        fleet.advance(k)
        if k:
            fleet.resize(size, k)
        paid.append(fleet.paid)
        ready.append(fleet.serving)
    return paid, ready


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=60), st.sampled_from([0, 15, 20, 60, 90, 300]))
def test_ready_matches_the_oracle_model(sizes: list[int], startup_seconds: float) -> None:
    """Constant startup, no drain: ready == ready_members(paid, s) exactly (warm
    start, paid from request, not-ready members removed first)."""
    fleet = Fleet(sizes[0], tick_seconds=TICK, startup=Startup("constant", startup_seconds))
    paid, ready = drive(fleet, sizes)
    assert paid == sizes
    assert ready == ready_members(np.array(sizes), startup_ticks(startup_seconds, TICK)).tolist()


def test_cohorts_and_members() -> None:
    fleet = Fleet(3, tick_seconds=TICK, startup=Startup("constant", 30), t0=1000.0, settle_seconds=60)
    fleet.advance(0)
    fleet.resize(5, 0)          # 2 starting, ready at tick 2
    members, serving, since = fleet.members()
    assert [(m.name, m.phase, m.ready, m.count) for m in members] == [
        ("ready", "Running", True, 3), ("starting-0-2", "Pending", False, 2)]
    assert serving == ["ready"] and since[0] < 1000.0
    assert all(m.requests == {"cpu": 1} and not m.deleting for m in members)
    assert members[1].start_time == 1000.0
    for k in (1, 2):
        fleet.advance(k)
    members, serving, since = fleet.members()
    assert [(m.name, m.count) for m in members] == [("ready", 3), ("ready-0-2", 2)]
    assert members[1].ready_transition_time == 1030.0 and since == [since[0], 1030.0]
    assert fleet.serving == 5 and fleet.paid == 5
    # after the settle period the cohort joins the group, with its times
    for k in range(3, 7):
        fleet.advance(k)
    members, _, _ = fleet.members()
    assert [(m.name, m.count) for m in members] == [("ready", 5)]
    assert members[0].ready_transition_time == 1030.0


def test_shrinking_removes_starting_members_then_the_youngest_ready() -> None:
    fleet = Fleet(4, tick_seconds=TICK, startup=Startup("constant", 60))
    fleet.advance(0)
    fleet.resize(6, 0)        # +2, ready at 4
    fleet.advance(1)
    fleet.resize(9, 1)        # +3, ready at 5
    fleet.advance(2)
    fleet.resize(5, 2)        # -4: the 3 newest starting, then 1 older starting
    assert (fleet.n_pending, fleet.n_ready) == (1, 4)
    fleet.resize(3, 2)        # -2: the last starting, then 1 ready
    assert (fleet.n_pending, fleet.n_ready, fleet.paid) == (0, 3, 3)


def test_drain_keeps_serving_and_paying() -> None:
    fleet = Fleet(4, tick_seconds=TICK, startup=Startup("constant", 0), drain_seconds=30)
    fleet.advance(0)
    fleet.resize(2, 0)
    assert (fleet.active, fleet.serving, fleet.paid) == (2, 4, 4)
    members, serving, _ = fleet.members()
    assert [m.deleting for m in members] == [False, True] and len(serving) == 2
    fleet.advance(1)
    assert fleet.paid == 4
    fleet.advance(2)          # 30 s = 2 ticks later the drained members are gone
    assert (fleet.active, fleet.serving, fleet.paid) == (2, 2, 2)
    assert [m.deleting for m in fleet.members()[0]] == [False]


def test_startup_zero_is_ready_at_once() -> None:
    fleet = Fleet(1, tick_seconds=TICK, startup=Startup("constant", 0))
    fleet.advance(0)
    fleet.resize(7, 0)
    assert fleet.serving == 7 and fleet.n_pending == 0


@pytest.mark.parametrize("spec, low, high", [("uniform:30,90", 30, 90), ("normal:60,10", 30, 90)])
def test_startup_distributions_are_seeded_and_bounded(spec: str, low: float, high: float) -> None:
    startup = parse_startup(spec)
    assert not startup.constant and startup.minimum == low

    def ready_ticks(seed: int) -> list[int]:
        fleet = Fleet(0, tick_seconds=TICK, startup=startup, seed=seed)
        fleet.resize(200, 0)
        out = []
        for c in fleet.pending:
            out += [c[1]] * c[2]
        return sorted(out)

    ticks = ready_ticks(7)
    assert len(ticks) == 200 and ticks == ready_ticks(7) and ticks != ready_ticks(8)
    assert startup_ticks(low, TICK) <= min(ticks) and max(ticks) <= startup_ticks(high, TICK)
    assert len(set(ticks)) > 1


def test_parse_startup() -> None:
    assert parse_startup(60) == Startup("constant", 60.0)
    assert parse_startup("90s").a == 90.0 and parse_startup("2m").a == 120.0
    assert parse_startup("uniform:30,1m") == Startup("uniform", 30.0, 60.0)
    assert parse_startup("normal:60,15").describe() == "normal:60,15"
    for bad in ("fast", "uniform:90,30", "normal:60", "gamma:1,2", "-5", True):
        with pytest.raises(ValueError):
            parse_startup(bad)


def test_fleet_model_checks_its_numbers() -> None:
    model = FleetModel(capacity=10, startup="uniform:30,90", tick_seconds=15, sync_period_seconds=30,
                       metric_lag_seconds=20, metric_window_seconds=60)
    assert (model.sync_ticks, model.lag_ticks, model.window_ticks, model.grain_ticks) == (2, 2, 4, 4)
    assert model.describe()["metric_lag_seconds"] == 30.0   # whole ticks
    for bad in (dict(capacity=0), dict(capacity=float("nan")), dict(capacity=1, sync_period_seconds=20),
                dict(capacity=1, sync_period_seconds=5), dict(capacity=1, metric_lag_seconds=-1),
                dict(capacity=1, initial=-1)):
        with pytest.raises(ValueError):
            FleetModel(**bad)


def need(name: str) -> None:
    if name not in registry.current().semantics:
        pytest.skip(f"semantics {name!r} is not registered")


def test_drain_keeps_removed_members_serving_and_paid_for_the_drain_time() -> None:
    need("kubernetes")
    load = make_workload("step", duration_seconds=1800, up_at_seconds=0, down_at_seconds=300).values
    model = FleetModel(capacity=50, startup=60, drain_seconds=60)
    run = simulate(cpu_policy(60), load, model, semantics="kubernetes")
    k = int(np.flatnonzero(np.diff(run.desired) < 0)[0]) + 1   # the first scale-in
    big, small = int(run.desired[k - 1]), int(run.desired[k])
    assert list(run.ready[k:k + 4]) == [big] * 4 and list(run.paid[k:k + 4]) == [big] * 4   # 60 s = 4 ticks
    assert run.ready[k + 4] == small and run.paid[k + 4] == small


def test_startup_zero_members_serve_in_the_tick_they_are_requested() -> None:
    need("kubernetes")
    load = make_workload("step", duration_seconds=1200, up_at_seconds=300, down_at_seconds=None).values
    model = FleetModel(capacity=50, startup=0)
    run = simulate(cpu_policy(60), load, model, semantics="kubernetes")
    assert np.array_equal(run.ready, run.paid) and np.array_equal(run.paid, run.desired)
    oracle = oracle_for(load, model, Policy.model_validate(cpu_policy(60)))
    assert np.array_equal(oracle, np.maximum(members_needed(load, 50), 1))   # nothing to anticipate
