"""The risk budget (scalebridge.forecasting.risk): a reactive HPA replayed on the load, and the
margin quantile that makes the plan as often short as that HPA would have been.

Sources: docs/predictive.md; the replayed HPA follows
https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details
and #default-behavior."""

import math

import numpy as np
import pytest

from scalebridge.engine import load_policy
from scalebridge.errors import RequestError
from scalebridge.policy import Predictive
from scalebridge.forecasting.planner import PredictivePlanner
from scalebridge.constants import K8S_DOWNSCALE_STABILIZATION as DOWN_STABILIZATION_SECONDS
from scalebridge.forecasting.risk import REACTION_SECONDS, ReactiveBaseline, RiskBudget


CAP = 25_000.0


def replay(baseline, loads, step=15.0):
    return [baseline.observe(k * step, float(x)) for k, x in enumerate(loads)]


def test_a_steady_load_is_served_by_ceil_load_over_target_and_never_short():
    b = ReactiveBaseline(0.6, CAP, 120)
    shorts = replay(b, [100_000] * 200)
    assert shorts[0] is None and not any(shorts[1:])
    assert b.ordered == math.ceil(100_000 / (CAP * 0.6))                  # 7


def test_within_the_tolerance_the_size_does_not_change():
    """replica_calculator.go: no change while |usage ratio − 1| <= 0.1."""
    b = ReactiveBaseline(0.6, CAP, 120)
    replay(b, [90_000] * 40)                                              # 6 members at 60%
    assert b.ordered == 6
    replay(b, [98_000] * 40)                                              # ratio 1.089: within 10%
    assert b.ordered == 6
    replay(b, [100_000] * 40)                                             # ratio 1.11: out
    assert b.ordered == 7


def test_utilization_is_a_whole_percent_as_the_hpa_reads_it():
    """metrics/utilization.go truncates the utilization to an int32 percent: 4 members at
    45.3% of a 60% target recommend ceil(45 / 60 × 4) = 3, where the exact ratio gives
    ceil(3.02) = 4."""
    b = ReactiveBaseline(0.6, CAP, 120)
    replay(b, [60_000] * 4)
    assert b.ordered == 4
    replay(b, [0.453 * 4 * CAP] * 30)                                    # past the 300-s window
    assert b.ordered == 3


def test_a_step_is_short_until_the_new_members_serve():
    """Members ordered for a step serve start-up + REACTION_SECONDS later: short for
    exactly that long (on a 15-s sample grid), never after."""
    b = ReactiveBaseline(0.6, CAP, 120)
    shorts = replay(b, [60_000] * 40 + [200_000] * 80)                   # 4 → 14 members' worth
    after = shorts[40:]
    short_for = sum(bool(s) for s in after)
    assert short_for == math.ceil((120 + REACTION_SECONDS) / 15)
    assert all(after[:short_for]) and not any(after[short_for:])


def test_scale_up_is_limited_to_the_hpas_default_policies():
    """autoscaling/v2 defaults: the larger of +100% and +4 pods per sync."""
    b = ReactiveBaseline(0.5, CAP, 120)
    replay(b, [10_000] * 4)
    assert b.ordered == 1
    b.observe(100.0, 1_000_000)
    assert b.ordered == 5                                                 # 1 + 4, not 80
    b.observe(115.0, 1_000_000)
    assert b.ordered == 10                                                # +100%


def test_scale_down_waits_for_the_stabilization_window():
    b = ReactiveBaseline(0.6, CAP, 120)
    replay(b, [150_000] * 40)
    assert b.ordered == 10
    t0 = 40 * 15.0
    sizes = []
    for k in range(40):
        b.observe(t0 + 15 * k, 30_000)
        sizes.append((t0 + 15 * k, b.ordered))
    held = [t for t, n in sizes if n == 10]
    assert held and max(held) - t0 < DOWN_STABILIZATION_SECONDS
    assert sizes[-1][1] == 2
    assert min(t for t, n in sizes if n == 2) - t0 >= DOWN_STABILIZATION_SECONDS - 15


def test_a_baseline_never_short_keeps_the_fixed_quantile():
    r = RiskBudget(0.9995, 86_400)
    for k in range(1000):
        r.baseline(15.0 * k, False)
        r.own(15.0 * k, k % 50 == 0)
    assert r.update() == pytest.approx(0.0005)


def test_alpha_is_the_baselines_rate_over_the_plans_own_rate_per_unit_of_alpha():
    r = RiskBudget(0.9995, 86_400)
    r.alpha = 0.02
    for k in range(2000):
        r.baseline(15.0 * k, k % 100 == 0)                              # baseline short 1%
        r.own(15.0 * k, k % 400 == 0)                                   # plan short 0.25% at alpha 2%
    per_alpha = (5 + 1) / (2000 * 0.02 + 1)
    assert r.target == pytest.approx(0.01)
    assert r.update() == pytest.approx(0.01 / per_alpha)                # ~0.068: the plan may loosen


def test_alpha_stays_within_the_quantile_and_the_median():
    r = RiskBudget(0.99, 86_400)
    for k in range(100):
        r.baseline(15.0 * k, True)                                      # short all the time
        r.own(15.0 * k, False)
    assert r.update() == 0.5
    r2 = RiskBudget(0.99, 86_400)
    for k in range(100):
        r2.baseline(15.0 * k, k == 0)
        r2.own(15.0 * k, True)                                          # the plan itself is short always
    assert r2.update() == pytest.approx(0.01)


def test_the_budget_forgets_what_is_older_than_its_horizon():
    r = RiskBudget(0.9995, 3600)
    for k in range(240):
        r.baseline(15.0 * k, True)
    for k in range(240, 480):
        r.baseline(15.0 * k, False)
    assert r.target == pytest.approx(1 / 241, abs=1e-9)                 # one sample exactly an hour old


def budget_planner(utilization):
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, target_utilization=0.7,
                      model="quadratic", history_seconds=1800, margin_quantile=0.9995,
                      margin_history_seconds=86400, reactive_baseline_utilization=utilization)
    return PredictivePlanner(spec, startup_seconds=120)


def counts(seed, minutes, mean_members):
    """Over-dispersed per-minute counts at ~12 events per member-minute, read every 15 s."""
    rng = np.random.default_rng(seed)
    level = mean_members * 12 * (1 + 0.3 * np.sin(np.arange(minutes) * 2 * np.pi / 720))
    per_minute = rng.negative_binomial(3, 3 / (3 + level))
    return np.repeat(per_minute * (CAP / 12), 4)


def run(planner, loads):
    out = []
    for k, x in enumerate(loads):
        planner.observe(15.0 * k, float(x))
        out.append(planner.plan(15.0 * k).replicas)
    return np.array(out)


def test_on_count_noise_the_budget_buys_no_more_safety_than_the_hpa_had():
    """A reactive HPA at 60% is short ~1% of the time on over-dispersed counts; the
    plan at the 99.95th percentile is short far less often and pays for it. With
    the budget it pays less, and is still no more often short than that HPA."""
    loads = counts(1, 6 * 60 * 12, 4)
    fixed = run(_fixed(), loads)
    budget_p = budget_planner(0.6)
    budgeted = run(budget_p, loads)
    hpa = ReactiveBaseline(0.6, CAP, 120)
    hpa_short = np.mean([s for s in replay(hpa, loads) if s is not None])
    assert hpa_short > 0.002
    assert budget_p.budget.alpha > budget_p.budget.floor * 5             # the quantile was lowered

    def short(plan):   # the plan in force (asked for a lead ago, or cut since) against the load
        served = np.array([plan[max(0, k - 8):k + 1].min() for k in range(len(plan))])
        return float(np.mean(loads[8:] > served[8:] * CAP))
    tail = slice(len(loads) // 3, None)                                   # after the first fits
    assert budgeted[tail].sum() < 0.9 * fixed[tail].sum()
    assert short(budgeted) < hpa_short * 1.5
    assert short(fixed) < short(budgeted)


def _fixed():
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=CAP, target_utilization=0.7,
                      model="quadratic", history_seconds=1800, margin_quantile=0.9995,
                      margin_history_seconds=86400)
    return PredictivePlanner(spec, startup_seconds=120)


def test_where_the_hpa_is_never_short_the_budget_changes_nothing():
    """A smooth daily wave: the baseline is never short, so every plan is the fixed quantile's."""
    t = np.arange(4 * 60 * 8)
    loads = 200_000 * (1.5 + np.sin(t * 2 * np.pi / (4 * 60 * 4)))
    assert np.array_equal(run(budget_planner(0.6), loads), run(_fixed(), loads))


def test_the_budget_needs_a_margin_quantile():
    with pytest.raises(RequestError, match="reactive_baseline_utilization.*needs margin_quantile"):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "reactive_baseline_utilization": 0.6}})
    with pytest.raises(RequestError, match="reactive_baseline_utilization"):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "margin_quantile": 0.99, "reactive_baseline_utilization": 1.5}})
