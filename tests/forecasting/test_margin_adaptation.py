"""Adaptive conformal inference of the planner's margin (scalebridge.forecasting.risk.AdaptiveMargin,
``predictive.margin_adaptation: aci``): the share of short samples converges to the
target, whatever the level of the noise; one short sample raises the margin, a quiet
stretch lowers it; the step is scaled so that a day at the target moves it by about
ACI_DAILY_STEP σ.

Sources: Gibbs & Candès, "Adaptive conformal inference under distribution shift"
(NeurIPS 2021); Angelopoulos, Candès & Tibshirani, "Conformal PID control" (2023);
docs/predictive.md."""

import math

import numpy as np
import pytest

from scalebridge.engine import load_policy
from scalebridge.errors import RequestError
from scalebridge.policy import Predictive
from scalebridge.forecasting.planner import PredictivePlanner
from scalebridge.forecasting.risk import ACI_DAILY_STEP, AdaptiveMargin

TICK = 15.0


def run(margin, z, target=0.0):
    shorts = 0
    for k, x in enumerate(z):
        short = bool(x > margin.q)
        shorts += short
        margin.update(k * TICK, short, target)
    return shorts / len(z)


@pytest.mark.parametrize("target, scale", [(0.01, 1.0), (0.01, 3.0), (0.002, 1.0)])
def test_the_share_of_short_samples_converges_to_the_target(target, scale):
    """i.i.d. errors at any scale: the margin finds the quantile that makes them short at the target rate."""
    z = scale * np.random.default_rng(7).standard_normal(400_000)
    m = AdaptiveMargin(target)
    m.start(0.0)
    m.update(-TICK, False)
    assert abs(run(m, z) - target) < 0.25 * target
    assert m.q == pytest.approx(float(np.quantile(z, 1 - target)), rel=0.15)


def test_after_a_change_of_regime_the_rate_comes_back_to_the_target():
    """The noise triples half way: a fixed margin would be short far more often; ACI's is not, in the long run."""
    rng = np.random.default_rng(3)
    z = np.concatenate([rng.standard_normal(200_000), 3 * rng.standard_normal(200_000)])
    m = AdaptiveMargin(0.01)
    m.start(float(np.quantile(z[:200_000], 0.99)))
    m.update(-TICK, False)
    second = run(m, z)
    fixed = float(np.mean(z[200_000:] > np.quantile(z[:200_000], 0.99)))
    assert fixed > 0.1 and abs(second - 0.01) < 0.005


def test_a_short_sample_raises_the_margin_and_a_quiet_one_lowers_it_never_below_zero():
    m = AdaptiveMargin(0.001)
    m.update(0.0, True)
    assert m.q is None                          # nothing before the error model starts it
    m.start(2.0)
    m.update(15.0, False)                       # the first sample only sets the clock
    q0 = m.q
    m.update(30.0, True)
    step = ACI_DAILY_STEP / math.sqrt(0.001 * 86400 / 15)
    assert m.q == pytest.approx(q0 + step * (1 - 0.001))
    m.update(45.0, False)
    assert m.q == pytest.approx(q0 + step * (1 - 0.001) - step * 0.001)
    for k in range(10_000_000 // 1000):
        m.update(60.0 + 15 * k, False, 0.5)
    assert m.q == 0.0


def test_the_target_is_never_below_the_floor():
    a, b = AdaptiveMargin(0.01), AdaptiveMargin(0.01)
    for m, target in ((a, 0.0), (b, 0.01)):
        m.start(3.0)
        m.update(0.0, False)
        m.update(15.0, False, target)
    assert a.q == b.q < 3.0


def test_aci_needs_a_margin_quantile():
    with pytest.raises(RequestError, match="margin_adaptation.*needs margin_quantile"):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "margin_adaptation": "aci"}})
    with pytest.raises(RequestError, match="margin_adaptation"):
        load_policy({"predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 1000,
                                    "margin_quantile": 0.99, "margin_adaptation": "pid"}})
    assert Predictive(capacity_per_replica=25000, margin_quantile=0.999, margin_adaptation="aci").margin_adaptation == "aci"
    assert Predictive(capacity_per_replica=25000).margin_adaptation is None


def _noisy_planner(floor=None, **kw):
    spec = Predictive(mode="ForecastAndScale", capacity_per_replica=25000, target_utilization=0.7,
                      model="naive", margin_quantile=0.9995, lead_time_seconds=120, **kw)
    p = PredictivePlanner(spec, startup_seconds=120)
    if floor is not None:
        p.aci.floor = floor
    rng = np.random.default_rng(11)
    loads = 250_000 * (1 + 0.1 * rng.standard_normal(4 * 60 * 30))      # 30 hours at 15 s
    plans = []
    for k, x in enumerate(loads):
        t = 15.0 * k
        p.observe(t, float(max(x, 0.0)))
        plans.append(p.plan(t).replicas)
    return p, np.array(plans)


def test_the_planner_learns_its_margin_down_toward_the_target_on_a_stationary_load():
    """Starting at the 99.95th percentile of its errors and aiming at a looser 1 − 0.995, the
    adaptive margin ends lower than the fixed one and the plan is cheaper — and never below
    the reactive need for the load."""
    fixed, fixed_plans = _noisy_planner()
    adaptive, adaptive_plans = _noisy_planner(floor=0.005, margin_adaptation="aci")
    assert adaptive.aci.q is not None and adaptive.aci.scored > 0
    assert adaptive.aci.q < fixed.error_model.q
    assert adaptive_plans[-2000:].mean() < fixed_plans[-2000:].mean()
    assert (adaptive_plans >= 1).all()
