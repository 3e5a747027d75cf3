"""``simulate`` and ``compare`` replay the neutral controls: a fleet scaled to zero has no
members and pays nothing, comes back when its metric rises above the activation
threshold, and a formula metric is computed from the published metrics."""
import numpy as np
import pytest

from scalebridge.engine import BUILTIN_SEMANTICS
from scalebridge.policy import Policy
from scalebridge.simulator import FleetModel, compare, simulate

TICK = 15.0
MODEL = FleetModel(capacity=10.0, startup=30.0, tick_seconds=TICK, sync_period_seconds=TICK, initial=2)

# 20 min of nothing, 20 min of 40 load units, 20 min of nothing
LOAD = np.array([0.0] * 80 + [40.0] * 80 + [0.0] * 80)

ZERO = {"name": "queue-to-zero", "min_replicas": 0, "max_replicas": 10, "scale_to_zero_delay_seconds": 120,
        "metrics": [{"type": "external", "name": "load", "activation_threshold": 0,
                     "target": {"type": "AverageValue", "average_value": 10}}],
        "rules": [{"metric": "load", "operator": "GreaterThan", "threshold": 1, "time_window_seconds": 60,
                   "action": {"direction": "Increase", "type": "ChangeCount", "value": 4, "cooldown_seconds": 60}}]}


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_fleet_at_zero_has_no_members_pays_nothing_and_comes_back(semantics):
    run = simulate(ZERO, LOAD, MODEL, semantics=semantics)
    idle = run.desired == 0
    # nothing to do at first: no metric active, no last active time -> idle at once (KEDA)
    assert run.desired[1] == 0 and run.paid[2:80].sum() == 0 and run.ready[2:80].sum() == 0
    # the load arrives at tick 80: activated within the metric lag and a sync, then scaled
    assert run.desired[82] >= 1 and run.reasons.get("Activated", 0) >= 1
    assert run.ready[100:160].min() >= 1
    # after it stops: held for the delay (120 s = 8 ticks), then 0 again and nothing paid
    assert run.desired[160:168].min() >= 1
    assert idle[175:].all() and run.paid[176:].sum() == 0
    assert run.reasons.get("Deactivated", 0) >= 2


def test_compare_replays_the_controls_for_every_semantics():
    one = {**ZERO, "name": "at-least-one", "min_replicas": 1}   # the activation keys are ignored at min 1 (KEDA)
    cmp = compare([("zero", Policy.model_validate(ZERO)), ("one", Policy.model_validate(one))],
                  list(BUILTIN_SEMANTICS), LOAD, MODEL)
    assert not cmp.skipped
    hours = {(r.run.policy, r.run.semantics): r.scores.instance_hours for r in cmp.results}
    for r in cmp.results:
        if r.run.policy == "zero":
            assert r.run.paid[2:80].sum() == 0, r.run.semantics
        else:
            assert r.run.paid.min() >= 1
    for semantics in BUILTIN_SEMANTICS:
        # the idle 40 minutes cost nothing: at least 40 min x 1 member less
        assert hours[("zero", semantics)] <= hours[("one", semantics)] - 40 / 60 + 1e-9, semantics


def test_a_formula_metric_is_computed_from_the_published_metrics():
    pol = {"max_replicas": 20, "metrics": [
        {"type": "external", "name": "load", "target": {"type": "AverageValue", "average_value": 1000}},
        {"type": "formula", "name": "per_ten", "expression": "load / 10.0",
         "target": {"type": "AverageValue", "average_value": 1}}]}
    run = simulate(pol, np.array([40.0] * 40), MODEL, semantics="kubernetes")
    assert run.desired[-1] == 4   # ceil(40 / 10 / 1)


def test_a_rule_on_a_formula_is_replayed_under_azure():
    # the formula is computed from the published load (never published itself): 40 / 10 = 4 > 3
    pol = {"min_replicas": 1, "max_replicas": 6, "default_replicas": 1, "metrics": [
        {"type": "external", "name": "load", "target": {"type": "AverageValue", "average_value": 10}},
        {"type": "formula", "name": "per_ten", "expression": "load / 10.0",
         "target": {"type": "AverageValue", "average_value": 1}}],
        "rules": [{"metric": "per_ten", "operator": "GreaterThan", "threshold": 3, "time_window_seconds": 60,
                   "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 60}}]}
    run = simulate(pol, np.array([40.0] * 60), MODEL, semantics="azure")
    assert "per_ten" not in run.published
    assert run.desired[-1] == 6 and run.reasons.get("DesiredWithinRange", 0) >= 1
