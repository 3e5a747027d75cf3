"""``predictive.scale_down_adaptation: rebound`` (scalebridge.forecasting.planner): the planner
learns from the load whether its significant drops come back within the HPA's 5-minute
stabilization window; where most did not, a new drop lets the held proposal go at once —
never below the reactive need — instead of at ``scale_down_rate_percent``; where drops
come back (clients reconnecting) it holds the decay exactly as without it.

Source: docs/predictive.md ("Down slowly", and the leave-one-out's sawtooth)."""

import math

import numpy as np
import pytest

from scalebridge.engine import load_policy
from scalebridge.errors import RequestError
from scalebridge.policy import Predictive
from scalebridge.forecasting.planner import REBOUND_SECONDS, PredictivePlanner

CAP = 25_000.0
TICK = 15.0
HOUR = int(3600 / TICK)


def planner(adaptation):
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, target_utilization=0.7, model="auto",
                      margin_quantile=0.9995, reactive_baseline_utilization=0.6, lead_time_seconds=120,
                      scale_down_adaptation=adaptation)
    return PredictivePlanner(spec, startup_seconds=120)


def replay(p, loads):
    plans, reactive = [], []
    for k, x in enumerate(loads):
        p.observe(k * TICK, float(x))
        plan = p.plan(k * TICK)
        plans.append(plan.replicas)
        reactive.append(plan.reactive)
    return np.array(plans), np.array(reactive)


def sawtooth(hours, seed=0):
    """An hour's ramp from a fifth of the peak to the peak, then a drop back to a fifth at once."""
    k = np.arange(hours * HOUR)
    rng = np.random.default_rng(seed)
    return (0.2 + 0.8 * (k % HOUR) / HOUR) * 875_000 * (1 + 0.03 * rng.standard_normal(k.size))


def drops_that_come_back(hours, seed=0):
    """A flat load that falls to half for a minute every 20 minutes, then comes back."""
    k = np.arange(hours * HOUR)
    rng = np.random.default_rng(seed)
    load = 500_000 * (1 + 0.02 * rng.standard_normal(k.size))
    load[(k % 80 >= 40) & (k % 80 < 44)] *= 0.5
    return load


def test_drops_that_stay_down_release_the_held_proposal_and_cost_less():
    loads = sawtooth(6)
    held, _ = replay(planner(None), loads)
    p = planner("rebound")
    adapted, reactive = replay(p, loads)
    assert p.drops_released >= 3 and p._came_back == 0
    assert adapted.sum() < 0.95 * held.sum()
    after = 3 * HOUR + 4                        # a minute after the third drop
    first_hours_margin = math.ceil(loads[after] / (CAP * 0.7) - 1e-9)   # the last load at target_utilization
    assert first_hours_margin <= adapted[after] <= first_hours_margin + 1 < held[after] - 10
    assert (adapted >= reactive).all()          # never below the reactive need


def test_the_first_drop_is_held_until_the_load_has_shown_one_that_stays_down():
    loads = sawtooth(2)
    held, _ = replay(planner(None), loads)
    adapted, _ = replay(planner("rebound"), loads)
    first = slice(HOUR, HOUR + int(REBOUND_SECONDS / TICK))
    assert np.array_equal(adapted[first], held[first])
    second = 2 * HOUR - 1
    assert np.array_equal(adapted[:second], held[:second])


def test_drops_that_come_back_keep_the_slow_decay():
    loads = drops_that_come_back(5)
    held, _ = replay(planner(None), loads)
    p = planner("rebound")
    adapted, _ = replay(p, loads)
    assert len(p._outcomes) >= 8 and p._came_back == len(p._outcomes)
    assert p.drops_released == 0
    assert np.array_equal(adapted, held)


def test_without_the_adaptation_nothing_is_learned_and_nothing_released():
    p = planner(None)
    replay(p, sawtooth(3))
    assert p.drops_released == 0 and not p._outcomes


def test_rebound_needs_a_margin_quantile():
    with pytest.raises(RequestError, match="scale_down_adaptation.*needs margin_quantile"):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "scale_down_adaptation": "rebound"}})
    with pytest.raises(RequestError, match="scale_down_adaptation"):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "margin_quantile": 0.99, "scale_down_adaptation": "sometimes"}})


def test_the_outcomes_are_forgotten_past_the_margins_history():
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, target_utilization=0.7, model="auto",
                      margin_quantile=0.9995, lead_time_seconds=120, margin_history_seconds=7200,
                      scale_down_adaptation="rebound")
    p = PredictivePlanner(spec, startup_seconds=120)
    replay(p, sawtooth(8))
    assert 1 <= len(p._outcomes) <= 2
    assert all(made >= 8 * 3600 - 7200 - TICK - REBOUND_SECONDS for made, _ in p._outcomes)
    assert not math.isinf(p._last_drop)
