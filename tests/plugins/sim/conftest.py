"""What the sim provider's tests share: the policies they replay, and a loop that
steps a sim target as the controller's sync does."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest

from scalebridge import registry
from scalebridge.controller.queries import queries_for
from scalebridge.engine import Decider
from scalebridge.policyfile import load_policy_file
from scalebridge.protocol import Observations, Settings

REPO = Path(__file__).resolve().parents[3]
TRACES = REPO.parent / "shared" / "traces"

CPU = {"min_replicas": 1, "max_replicas": 60,
       "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}]}
POLICIES: dict[str, Any] = {
    "cpu": CPU,
    "shapes": {"min_replicas": 1, "max_replicas": 60,
               "metrics": [{"type": "resource", "name": "cpu",
                            "target": {"type": "Utilization", "average_utilization": 70}},
                           {"type": "pods", "name": "rps", "target": {"type": "AverageValue", "average_value": 30}},
                           {"type": "external", "name": "load",
                            "target": {"type": "AverageValue", "average_value": 25}}]},
    "lb": {"min_replicas": 1, "max_replicas": 60,
           "metrics": [{"type": "load_balancing", "name": "lb",
                        "target": {"type": "Utilization", "average_utilization": 75}}]},
    "rules": {"min_replicas": 1, "max_replicas": 60, "rules": [
        {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 300, "operator": "GreaterThan",
         "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2,
                                     "cooldown_seconds": 120}},
        {"metric": "load", "time_grain_seconds": 60, "time_window_seconds": 600, "operator": "LessThan",
         "threshold": 100, "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]},
    "web": load_policy_file(REPO / "examples" / "policies" / "web.yaml").model_dump(exclude_unset=True),
    "predictive": load_policy_file(REPO / "examples" / "predictive" / "policy.yaml").model_dump(exclude_unset=True),
}


def runnable(policy: dict, semantics: str) -> dict:
    """``policy`` as ``semantics`` can run it (Azure's rules live in a profile), or skip."""
    if semantics not in registry.current().semantics:
        pytest.skip(f"{semantics} is not registered")
    if semantics == "azure" and "rules" in policy and "profiles" not in policy:
        policy = {"profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 60, "default": 2},
                                "rules": policy["rules"]}]}
    try:
        Decider(policy, semantics)
    except Exception:   # noqa: BLE001 — a semantics that cannot run this policy
        pytest.skip(f"{semantics} cannot run this policy")
    return policy


def step_like_the_controller(target: Any, policy: dict, semantics: str, syncs: int, *,
                             period: float, settings: Optional[dict] = None) -> list[int]:
    """Sync ``target`` ``syncs`` times, ``period`` apart from its start, as one sync of
    ``scalebridge run`` does: the decision's metric delay is the target's; observe;
    read the metrics the policy's queries ask; the protocol's observations built from
    what the provider returned (validated, as from any provider); decide; set the size
    when it changed. Returns each sync's desired size."""
    s = Settings.model_validate(settings or {})
    if s.metric_delay_seconds is None:   # the target's, unless the caller sets one
        s = s.model_copy(update={"metric_delay_seconds": float(target.metric_delay_seconds)})
    decider = Decider(policy, semantics, s)
    target.use_policy(decider.policy, decider.settings)
    queries = queries_for(decider.policy, decider.semantics.name, {})
    out = []
    for i in range(syncs):
        now = target.start_time + i * period
        obs = target.observe(now)
        metrics = target.read_metrics(now, obs, queries)
        observations = Observations.model_validate({"status_replicas": obs.status_replicas, "members": obs.members,
                                                    "metrics": metrics, "forecast": obs.forecast})
        d = decider.step(now, obs.current_replicas, observations)
        if d.desired != obs.current_replicas:
            target.set_size(d.desired)
        out.append(d.desired)
    return out


@pytest.fixture
def policies() -> dict[str, Any]:
    """The policies replayed: one per metric shape the world publishes, rules, the
    examples' neutral and predictive policies."""
    return POLICIES


@pytest.fixture
def as_runnable():
    return runnable


@pytest.fixture
def controller_steps():
    return step_like_the_controller


@pytest.fixture
def traces() -> Path:
    if not TRACES.is_dir():
        pytest.skip(f"no traces at {TRACES}")
    return TRACES
