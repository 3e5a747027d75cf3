"""The replay reuses one observations object per metric shape, updating its
fields in place at each decision (cheaper than building models). Every
decision must be what it would be given observations of its own: a run whose
decisions each see a fresh deep copy decides exactly the same."""

from __future__ import annotations

import pytest

from scalebridge import registry
from scalebridge.engine import BUILTIN_SEMANTICS, Decider
from scalebridge.simulator import FleetModel, Startup, make_workload, simulate

POLICIES = {
    "cpu": {"min_replicas": 1, "max_replicas": 60,
            "metrics": [{"type": "resource", "name": "cpu",
                         "target": {"type": "Utilization", "average_utilization": 60}}]},
    "shapes": {"min_replicas": 1, "max_replicas": 60,
               "metrics": [{"type": "resource", "name": "cpu",
                            "target": {"type": "Utilization", "average_utilization": 70}},
                           {"type": "pods", "name": "rps", "target": {"type": "AverageValue", "average_value": 30}},
                           {"type": "external", "name": "load", "target": {"type": "AverageValue", "average_value": 25}}]},
    "lb": {"min_replicas": 1, "max_replicas": 60,
           "metrics": [{"type": "load_balancing", "name": "lb",
                        "target": {"type": "Utilization", "average_utilization": 75}}]},
    "rules": {"min_replicas": 1, "max_replicas": 60, "rules": [
        {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 300, "operator": "GreaterThan",
         "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2,
                                     "cooldown_seconds": 120}},
        {"metric": "load", "time_grain_seconds": 60, "time_window_seconds": 600, "operator": "LessThan",
         "threshold": 100, "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]},
}


def _decisions(policy: dict, semantics: str, fresh: bool) -> tuple:
    load = make_workload("flash_crowd", seed=5, duration_seconds=4 * 3600, peak=600.0).values
    model = FleetModel(capacity=20, startup=Startup("uniform", 30, 150), drain_seconds=30,
                       metric_window_seconds=45, seed=2)
    seen = []
    original = Decider.step

    def step(self, now, current, observations, trace=None, **kw):
        if fresh:
            observations = observations.model_copy(deep=True)
        d = original(self, now, current, observations, [], **kw)
        seen.append((d.recommended, d.desired, d.reason, d.metrics, d.error, d.cause, d.cooldown_seconds,
                     self.state.to_protocol()))
        return d

    Decider.step = step   # type: ignore[method-assign]
    try:
        run = simulate(policy, load, model, semantics=semantics)
    finally:
        Decider.step = original   # type: ignore[method-assign]
    return run.desired.tolist(), run.paid.tolist(), run.reasons, seen


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_decisions_do_not_depend_on_reused_observations(semantics: str, policy: str) -> None:
    if semantics not in registry.current().semantics:
        pytest.skip(f"{semantics} is not registered")
    p = dict(POLICIES[policy])
    if semantics == "azure" and "rules" in p:
        p = {"profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 60, "default": 2},
                           "rules": p["rules"]}]}
    try:
        Decider(p, semantics)
    except Exception:   # noqa: BLE001 — a semantics that cannot run this policy
        pytest.skip(f"{semantics} cannot run the {policy} policy")
    assert _decisions(p, semantics, fresh=False) == _decisions(p, semantics, fresh=True)
