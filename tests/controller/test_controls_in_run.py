"""KEDA's formula and activation phases carried out by ``scalebridge run`` on the fake
provider, under every semantics that decides from target metrics: the controller reads
the metrics a formula names (never the formula), and the activation phases move a
target 0 → 1 when a metric goes above its activation threshold and back to 0 only after
``scale_to_zero_delay_seconds`` below it
(https://keda.sh/docs/latest/concepts/scaling-deployments/#scaling-modifiers and
#activating-and-scaling-thresholds; docs/policy.md, "The neutral controls")."""
from __future__ import annotations

import pytest

from scalebridge.controller.loop import build_controller
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE

PERIOD = 15.0
SEMANTICS = ["kubernetes", "gce", "aws", "scalebridge"]

# KEDA's "count function" example: count([trig_one,trig_two,trig_three],{#>1}) > 1 ? 5 : 0
FORMULA_POLICY = {
    "min_replicas": 1, "max_replicas": 20, "behavior": {},
    "metrics": [*({"type": "external", "name": n, "target": {"type": "AverageValue", "average_value": 1}}
                  for n in ("trig_one", "trig_two", "trig_three")),
                {"type": "formula", "name": "composite",
                 "expression": "[trig_one, trig_two, trig_three].filter(x, x > 1.0).size() > 1 ? 5.0 : 0.0",
                 "target": {"type": "AverageValue", "average_value": 2}}]}

ACTIVATION_POLICY = {
    "min_replicas": 0, "max_replicas": 20, "scale_to_zero_delay_seconds": 60, "behavior": {},
    "metrics": [{"type": "external", "name": "queue", "activation_threshold": 5,
                 "target": {"type": "AverageValue", "average_value": 10}}]}


def _records(write_config, tmp_path, semantics, policy, ref, syncs):
    path = write_config([{"name": "w", "semantics": semantics, "ref": ref}],
                        providers={"fake": {"type": FAKE}}, policies={"web": policy}, sync_period_seconds=PERIOD)
    c = build_controller(str(path), state=str(tmp_path / "s.db"))
    try:
        return [c.sync(DEFAULT_START + k * PERIOD).records[0] for k in range(syncs)]
    finally:
        c.close()


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_a_formula_of_three_metrics_scales_to_what_kedas_example_computes(write_config, tmp_path, semantics):
    # 2, 3 and 0: two values above 1, the formula is 5; against 2 a replica, ceil(5 / 2) = 3
    ref = {"name": "w", "size": 1, "metrics": {"trig_one": {"load": 2}, "trig_two": {"load": 3},
                                               "trig_three": {"load": 0}}}
    recs = _records(write_config, tmp_path, semantics, FORMULA_POLICY, ref, 3)
    assert recs[0]["action"] in ("applied", "scaled"), recs[0]
    assert recs[0]["desired_replicas"] == 3, recs[0]
    assert all(r["desired_replicas"] == 3 for r in recs[1:]), recs


# azure decides from its rules: one scales out on the queue, and the neutral activation
# phases wrap it as they wrap every semantics (docs/semantics.md)
AZURE_RULES = {"rules": [{"metric": "queue", "operator": "GreaterThan", "threshold": 20, "time_grain_seconds": 60,
                          "time_window_seconds": 300, "time_aggregation": "Average", "statistic": "Average",
                          "action": {"direction": "Increase", "type": "ChangeCount", "value": 1,
                                     "cooldown_seconds": 300}}],
               "default_replicas": 0}


@pytest.mark.parametrize("semantics", [*SEMANTICS, "azure"])
def test_the_activation_phases_through_run(write_config, tmp_path, semantics):
    # the queue: 4 (not above 5) for a minute, 40 for a minute, then 0
    load = {"base": 0, "steps": [[0, 4], [60, 40], [120, 0]]}
    ref = {"name": "w", "size": 0, "metrics": {"queue": {"load": load}}}
    policy = {**ACTIVATION_POLICY, **(AZURE_RULES if semantics == "azure" else {})}
    recs = _records(write_config, tmp_path, semantics, policy, ref, 18)
    at = {round(k * PERIOD): r for k, r in enumerate(recs)}
    assert all(at[t]["desired_replicas"] == 0 for t in (0, 15, 30, 45)), "4 is not above 5: idle at 0"
    assert at[60]["desired_replicas"] >= 1 and at[60]["current_replicas"] == 0, "40 > 5: activated from 0"
    last_active = max(t for t, r in at.items() if t < 120)
    for t, r in at.items():
        if 120 <= t <= last_active + 60:   # below the threshold, the delay not yet passed: never 0
            assert r["desired_replicas"] >= 1, (t, r)
    assert any(r["desired_replicas"] == 0 and r["current_replicas"] >= 1 for t, r in at.items() if t > last_active + 60), \
        "back to 0 once scale_to_zero_delay_seconds have passed"
