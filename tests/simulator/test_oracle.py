"""The oracle (scalebridge.simulator.oracle): never short, and nothing never-short is
cheaper (checked by exhaustive search), on workloads and real traces.

Source: docs/simulation.md (the oracle)."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scalebridge.policy import Policy
from scalebridge.simulator import compute_scores, FleetModel, make_workload, oracle_for, oracle_ready
from scalebridge.simulator.oracle import members_needed, oracle_sizes, ready_members, startup_ticks
from scalebridge.simulator.traces import read_trace, resample
from scalebridge.simulator.workloads import WORKLOADS
from scalebridge.testing.requests import cpu_policy


TRACES = Path(os.environ.get("SCALEBRIDGE_TRACES", "/work/shared/traces"))


REAL = ["worldcup98_day46-78.csv", "nasa_http_1995-07-01_27.csv", "azure_llm_code_2024-05-10_16.csv"]


STARTUPS = [0, 15, 20, 60, 300, 900]


TICK = 15.0


def simulate_ready(paid: list[int] | np.ndarray, startup: int) -> list[int]:
    """Member by member: warm start, requests ready after ``startup`` ticks,
    removals take the newest (least ready) member first."""
    members: list[float] = [-np.inf] * int(paid[0])  # the tick each member is ready
    ready = []
    for t, size in enumerate(paid):
        while len(members) > size:
            members.remove(max(members))
        members += [t + startup] * (int(size) - len(members))
        ready.append(sum(r <= t for r in members))
    return ready


def assert_never_short(load: np.ndarray, capacity: float, startup_seconds: float) -> np.ndarray:
    paid = oracle_sizes(load, capacity=capacity, startup_seconds=startup_seconds, tick_seconds=TICK)
    ready = oracle_ready(paid, startup_seconds=startup_seconds, tick_seconds=TICK)
    assert paid.dtype == np.int64 and paid.shape == load.shape
    assert np.all(ready >= members_needed(load, capacity))
    assert np.all(ready * capacity >= load * (1 - 1e-9))
    scores = compute_scores(load, ready, paid, tick_seconds=TICK, capacity=capacity, oracle_paid=paid)
    assert scores.underprovisioned_seconds == 0 and scores.unserved_load == 0 and scores.oracle_ratio == 1
    return paid


def test_members_needed_guards_float_noise() -> None:
    loads = np.array([0.1 * 3, 0.3, 0.30001, 0.0, 0.29999])
    assert members_needed(loads, 0.1).tolist() == [3, 3, 4, 0, 3]
    assert members_needed(np.array([100.0, 100.0000001, 1e9 + 1]), 100).tolist() == [1, 2, 10**7 + 1]
    with pytest.raises(ValueError):
        members_needed(np.array([1.0]), 0)


def test_startup_ticks() -> None:
    assert [startup_ticks(s, 15) for s in (0, 1, 15, 20, 30, 45, 300)] == [0, 1, 1, 2, 2, 3, 20]
    assert startup_ticks(0.3, 0.1) == 3 and startup_ticks(0.7, 0.1) == 7


def test_hand_example() -> None:
    load = np.array([10, 10, 30, 10, 10, 20, 10.0])
    paid = oracle_sizes(load, capacity=10, startup_seconds=30, tick_seconds=15, minimum=0)
    assert paid.tolist() == [3, 3, 3, 2, 2, 2, 1]
    assert ready_members(paid, 2).tolist() == [3, 3, 3, 2, 2, 2, 1]
    instant = oracle_sizes(load, capacity=10, startup_seconds=0, tick_seconds=15)
    assert instant.tolist() == [1, 1, 3, 1, 1, 2, 1]


def test_ready_lags_requests_after_a_warm_start() -> None:
    assert ready_members(np.array([1, 3, 3, 3, 0, 2, 2, 2]), 2).tolist() == [1, 1, 1, 3, 0, 0, 0, 2]
    assert ready_members(np.array([], dtype=np.int64), 3).tolist() == []


def test_minimum_and_maximum() -> None:
    load = np.array([0, 0, 50, 0, 0.0])
    paid = oracle_sizes(load, capacity=10, startup_seconds=15, tick_seconds=15, minimum=2, maximum=4)
    assert paid.tolist() == [2, 4, 4, 2, 2]
    with pytest.raises(ValueError):
        oracle_sizes(load, capacity=10, startup_seconds=0, tick_seconds=15, minimum=3, maximum=2)


def test_startup_longer_than_the_series() -> None:
    load = np.array([10, 50, 20, 0.0])
    assert oracle_sizes(load, capacity=10, startup_seconds=3600, tick_seconds=15).tolist() == [5, 5, 2, 1]


@settings(max_examples=300)
@given(
    paid=st.lists(st.integers(0, 6), min_size=1, max_size=40),
    startup=st.integers(0, 6),
)
def test_ready_members_matches_a_member_simulation(paid: list[int], startup: int) -> None:
    assert ready_members(np.array(paid), startup).tolist() == simulate_ready(paid, startup)


@settings(max_examples=300)
@given(
    need=st.lists(st.integers(0, 50), min_size=1, max_size=60),
    startup=st.integers(0, 80),
)
def test_sliding_window_matches_the_definition(need: list[int], startup: int) -> None:
    load = np.array(need, float)
    paid = oracle_sizes(load, capacity=1, startup_seconds=startup * TICK, tick_seconds=TICK, minimum=0)
    assert paid.tolist() == [max(need[t : t + startup + 1]) for t in range(len(need))]


@pytest.mark.parametrize("startup_seconds", STARTUPS)
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_never_short_on_workloads(name: str, startup_seconds: float) -> None:
    load = make_workload(name, seed=3, tick_seconds=TICK).values
    assert_never_short(load, capacity=load.max() / 37.3, startup_seconds=startup_seconds)


@pytest.mark.skipif(not TRACES.is_dir(), reason=f"real traces not found in {TRACES}")
@pytest.mark.parametrize("startup_seconds", STARTUPS)
@pytest.mark.parametrize("name", REAL)
def test_never_short_on_real_traces(name: str, startup_seconds: float) -> None:
    load = resample(read_trace(TRACES / name, scale=1 / 60), TICK)  # requests per second
    capacity = float(np.quantile(load, 0.99)) / 40
    paid = assert_never_short(load, capacity=capacity, startup_seconds=startup_seconds)
    if startup_seconds:
        baseline = oracle_sizes(load, capacity=capacity, startup_seconds=0, tick_seconds=TICK)
        assert paid.sum() >= baseline.sum() and np.all(paid >= baseline)


def test_exact_capacity_multiples_do_not_add_a_member() -> None:
    load = np.full(10, 0.1) * 3  # 0.30000000000000004
    assert oracle_sizes(load, capacity=0.1, startup_seconds=0, tick_seconds=TICK).tolist() == [3] * 10


@settings(max_examples=400)
@given(
    paid=st.lists(st.integers(0, 8), min_size=1, max_size=50),
    fractions=st.lists(st.floats(0, 1), min_size=50, max_size=50),
    startup=st.integers(0, 8),
    capacity=st.sampled_from([1.0, 0.1, 7.5, 250.0]),
)
def test_any_feasible_series_costs_at_least_the_oracle(
    paid: list[int], fractions: list[float], startup: int, capacity: float
) -> None:
    """Draw any size series, derive a load it always serves, compare."""
    series = np.array(paid)
    ready = ready_members(series, startup)
    load = ready * capacity * np.array(fractions[: series.size])
    assert np.all(members_needed(load, capacity) <= ready)  # the series is feasible
    oracle = oracle_sizes(
        load, capacity=capacity, startup_seconds=startup * TICK, tick_seconds=TICK, minimum=0
    )
    assert oracle.sum() <= series.sum()
    assert np.all(oracle <= series)  # cheaper at every tick, not just in total
    ours = compute_scores(load, ready, series, tick_seconds=TICK, capacity=capacity, oracle_paid=oracle)
    assert ours.underprovisioned_seconds == 0
    assert ours.instance_hours >= ours.oracle_instance_hours


@settings(max_examples=40, deadline=None)
@given(need=st.lists(st.integers(0, 3), min_size=5, max_size=5), startup=st.integers(0, 3))
def test_oracle_is_the_cheapest_by_exhaustive_search(need: list[int], startup: int) -> None:
    load = np.array(need, float)
    feasible = [
        sum(sizes)
        for sizes in itertools.product(range(4), repeat=5)
        if all(r >= n for r, n in zip(simulate_ready(sizes, startup), need))
    ]
    oracle = oracle_sizes(load, capacity=1, startup_seconds=startup * TICK, tick_seconds=TICK, minimum=0)
    assert oracle.sum() == min(feasible)


def test_the_oracle_is_short_when_the_load_needs_more_than_max_replicas() -> None:
    """Precondition of the next test."""
    load = make_workload("step", duration_seconds=3600, up_at_seconds=600, peak=20000).values
    model = FleetModel(capacity=50, startup=60)
    oracle = oracle_for(load, model, Policy.model_validate(cpu_policy(60)))
    ready = oracle_ready(oracle, startup_seconds=60, tick_seconds=15)
    s = compute_scores(load, ready, oracle, tick_seconds=15, capacity=50)
    assert s.underprovisioned_minutes == pytest.approx(50.0)
