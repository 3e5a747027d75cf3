"""Scores of a replay (scalebridge.simulator.scores) on tiny hand-computed replays:
instance-hours, under-provisioning, unserved load, peak overload, scaling actions,
reversals and recovery episodes, the oracle ratio.

Source: docs/simulation.md (scores)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scalebridge import registry
from scalebridge.policy import Policy
from scalebridge.simulator import FleetModel, make_workload, oracle_for, score_run, simulate
from scalebridge.simulator.scores import compute_scores, SCORE_KEYS
from scalebridge.testing.requests import cpu_policy


CONTRACT = [
    "instance_hours", "oracle_instance_hours", "underprovisioned_seconds",
    "underprovisioned_fraction", "unserved_load", "peak_overload", "scaling_actions",
    "reversals", "cost", "oracle_ratio", "underprovisioned_minutes", "time_to_recover_seconds",
]


def test_hand_computed_replay() -> None:
    # tick 60 s, capacity 10 per member
    load = [10, 25, 25, 5, 40, 40, 0]
    ready = [1, 1, 3, 3, 3, 4, 4]  # need: 1 3 3 1 4 4 0 -> short at ticks 1 and 4
    paid = [1, 3, 3, 3, 4, 4, 2]  # up@1, up@4, down@6: 3 actions, 1 reversal (120 s)
    oracle = [1, 3, 3, 3, 4, 4, 1]
    scores = compute_scores(
        load, ready, paid, tick_seconds=60, capacity=10, price_per_instance_hour=0.6, oracle_paid=oracle
    ).as_dict()
    assert scores == pytest.approx(
        {
            "instance_hours": 20 / 60,
            "oracle_instance_hours": 19 / 60,
            "underprovisioned_seconds": 120,
            "underprovisioned_fraction": 2 / 7,
            "unserved_load": (15 + 10) * 60,
            "peak_overload": 1.5,  # 25 on a capacity of 10
            "scaling_actions": 3,
            "reversals": 1,
            "cost": 0.2,
            "oracle_ratio": 20 / 19,
            "underprovisioned_minutes": 2,
            "time_to_recover_seconds": 60,
            "mean_time_to_recover_seconds": 60,
            "underprovisioned_episodes": 2,
        }
    )


def test_contract_keys() -> None:
    keys = compute_scores([1.0], [1], [1], tick_seconds=15, capacity=1).as_dict().keys()
    assert set(CONTRACT) <= set(keys) and tuple(keys) == SCORE_KEYS


def test_no_price_no_oracle_and_a_perfect_fleet() -> None:
    scores = compute_scores([5.0, 10.0, 20.0], [1, 1, 2], [1, 2, 2], tick_seconds=3600, capacity=10)
    assert scores.cost is None and scores.oracle_instance_hours is None and scores.oracle_ratio is None
    assert scores.instance_hours == 5 and scores.underprovisioned_seconds == 0 and scores.unserved_load == 0
    assert scores.peak_overload == 0 and scores.time_to_recover_seconds == 0
    assert scores.underprovisioned_episodes == 0


def test_load_exactly_at_capacity_is_served() -> None:
    load = np.full(4, 0.1) * 3  # 0.30000000000000004
    scores = compute_scores(load, [3] * 4, [3] * 4, tick_seconds=15, capacity=0.1)
    assert scores.underprovisioned_seconds == 0 and scores.unserved_load == 0 and scores.peak_overload == 0


def test_reversals_need_opposite_directions_within_ten_minutes() -> None:
    desired = [1] * 40
    desired[1:] = [2] * 39  # up at 1
    desired[2:] = [1] * 38  # down at 2: 60 s later -> reversal
    desired[13:] = [2] * 27  # up at 13: 660 s after the down -> not one
    desired[23:] = [1] * 17  # down at 23: exactly 600 s -> reversal
    desired[24:] = [0] * 16  # down again: same direction -> not one
    desired[25:] = [3] * 15  # up 60 s later -> reversal
    ones = [1] * 40
    scores = compute_scores(ones, ones, ones, tick_seconds=60, capacity=1, desired=desired)
    assert scores.scaling_actions == 6 and scores.reversals == 3
    assert compute_scores(ones, ones, ones, tick_seconds=60, capacity=1, desired=desired,
                          reversal_window_seconds=60).reversals == 2
    assert compute_scores(ones, ones, ones, tick_seconds=60, capacity=1).scaling_actions == 0


def test_recovery_episodes_and_one_open_at_the_end() -> None:
    load = [1, 5, 5, 5, 1, 1, 5, 5, 5, 5]
    ready = [1, 1, 1, 5, 5, 1, 1, 1, 1, 1]  # short for 2 ticks, then for 4 until the end
    scores = compute_scores(load, ready, ready, tick_seconds=30, capacity=1)
    assert scores.underprovisioned_episodes == 2
    assert scores.time_to_recover_seconds == 120 and scores.mean_time_to_recover_seconds == 90
    assert scores.underprovisioned_seconds == 180 and scores.peak_overload == 4


def test_no_member_ready_is_infinite_overload() -> None:
    scores = compute_scores([0.0, 3.0], [0, 0], [0, 1], tick_seconds=15, capacity=1)
    assert math.isinf(scores.peak_overload) and scores.unserved_load == 45


def test_oracle_ratio_edge_cases() -> None:
    zero, idle = [0, 0], [0.0, 0.0]
    both_free = compute_scores(idle, zero, zero, tick_seconds=15, capacity=1, oracle_paid=zero)
    only_oracle_free = compute_scores(idle, zero, [1, 1], tick_seconds=15, capacity=1, oracle_paid=zero)
    assert both_free.oracle_ratio == 1 and math.isinf(only_oracle_free.oracle_ratio)


def test_input_errors() -> None:
    with pytest.raises(ValueError, match="equal length"):
        compute_scores([1.0, 2.0], [1], [1, 1], tick_seconds=15, capacity=1)
    with pytest.raises(ValueError, match="equal length"):
        compute_scores([], [], [], tick_seconds=15, capacity=1)
    with pytest.raises(ValueError, match="positive"):
        compute_scores([1.0], [1], [1], tick_seconds=0, capacity=1)
    with pytest.raises(ValueError, match="oracle_paid"):
        compute_scores([1.0], [1], [1], tick_seconds=15, capacity=1, oracle_paid=[1, 1])


def need(name: str) -> None:
    if name not in registry.current().semantics:
        pytest.skip(f"semantics {name!r} is not registered")


def test_capacity_below_one_unit_of_load_and_zero_load() -> None:
    need("kubernetes")
    model = FleetModel(capacity=0.25, startup=30)
    load = np.full(40, 1.0)
    oracle = oracle_for(load, model, Policy.model_validate(cpu_policy(60)))
    assert set(oracle.tolist()) == {4}
    run = simulate(cpu_policy(60), load, model, semantics="kubernetes")
    s = score_run(run, load, model, oracle_paid=oracle)
    assert s.underprovisioned_seconds == 0 and s.oracle_ratio >= 1
    zero = np.zeros(40)
    run = simulate(cpu_policy(60), zero, FleetModel(capacity=10, startup=30), semantics="kubernetes")
    s = score_run(run, zero, FleetModel(capacity=10, startup=30),
                  oracle_paid=oracle_for(zero, FleetModel(capacity=10, startup=30), Policy.model_validate(cpu_policy())))
    assert s.underprovisioned_seconds == 0 and s.unserved_load == 0 and s.peak_overload == 0
    assert s.oracle_ratio == 1 and set(run.paid.tolist()) == {1}   # held at min_replicas


def test_scaling_actions_count_the_first_decisions_change() -> None:
    need("kubernetes")
    load = make_workload("step", duration_seconds=600).values
    model = FleetModel(capacity=50, startup=0, initial=1)
    run = simulate(cpu_policy(60), load, model, semantics="kubernetes")
    sizes = np.concatenate([[1], run.desired])
    expected = int(np.count_nonzero(np.diff(sizes)))
    assert score_run(run, load, model).scaling_actions == expected
