"""The reactive frontier and the iso-risk cost ratio, and `compare --frontier` (docs/simulation.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scalebridge import registry
from scalebridge.cli import main
from scalebridge.engine import load_policy
from scalebridge.simulator.comparison import FRONTIER_TARGETS, frontier_policies, iso_risk_reference

REPO = Path(__file__).resolve().parents[2]
PREDICTIVE = REPO / "examples" / "predictive" / "policy.yaml"

# (under-provisioned fraction, instance-hours), 60% first: World Cup's shape
POINTS = [(0.0, 5180.0), (0.00003, 4500.0), (0.00081, 3973.0), (0.01499, 3577.0)]


def test_between_two_targets_the_frontier_is_interpolated():
    # halfway between the 80% and the 90% points
    f = (0.00081 + 0.01499) / 2
    assert iso_risk_reference(POINTS, f) == pytest.approx((3973 + 3577) / 2)


def test_safer_than_every_target_is_compared_with_the_60_percent_run():
    points = [(0.0075, 6270.0), (0.018, 5404.0), (0.040, 4762.0), (0.083, 4260.0)]
    assert iso_risk_reference(points, 0.001) == 6270.0


def test_riskier_than_every_target_is_compared_with_the_90_percent_run():
    assert iso_risk_reference(POINTS, 0.5) == 3577.0


def test_where_several_targets_are_as_safe_the_cheapest_is_the_frontier():
    never_short = [(0.0, 398.0), (0.0, 336.0), (0.0, 297.0), (0.0476, 266.0)]
    assert iso_risk_reference(never_short, 0.0) == 297.0
    # a point exactly on a target is that target (no interpolation needed)
    assert iso_risk_reference(POINTS, 0.00081) == 3973.0


def test_an_empty_frontier_is_an_error():
    with pytest.raises(ValueError):
        iso_risk_reference([], 0.1)


def test_the_frontier_keeps_the_policys_bounds_and_varies_only_the_cpu_target():
    policy = load_policy({"min_replicas": 3, "max_replicas": 40, "metrics": [
        {"type": "pods", "name": "load", "target": {"type": "AverageValue", "average_value": 100}}]})
    front = frontier_policies(policy)
    assert [label for label, _ in front] == [f"frontier {t}%" for t in FRONTIER_TARGETS]
    for target, (_, p) in zip(FRONTIER_TARGETS, front):
        assert (p.min_replicas, p.max_replicas) == (3, 40)
        assert p.behavior is None and p.predictive is None
        (metric,) = p.metrics
        assert (metric.name, metric.target.type, metric.target.average_utilization) == ("cpu", "Utilization", target)


def test_a_policy_without_a_maximum_gets_ten_times_its_minimum_or_100():
    cpu = [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 50}}]
    assert {p.max_replicas for _, p in frontier_policies(load_policy({"min_replicas": 2, "metrics": cpu}))} == {100}
    assert {p.max_replicas for _, p in frontier_policies(load_policy({"min_replicas": 30, "metrics": cpu}))} == {300}


def test_a_target_outside_0_to_100_is_an_error():
    with pytest.raises(ValueError, match="frontier target"):
        frontier_policies(load_policy({"min_replicas": 1, "max_replicas": 8}), targets=(0,))


def test_compare_frontier_reports_the_iso_risk_ratio(tmp_path, capsys):
    if "kubernetes" not in registry.current().semantics:
        pytest.skip("the kubernetes semantics is not registered")
    out = tmp_path / "scores.json"
    code = main(["compare", str(PREDICTIVE), "--semantics", "scalebridge", "--workload", "flash_crowd",
                 "--peak", "875000", "--capacity", "25000", "--startup", "120", "--frontier", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "iso-risk" in printed and "frontier 60%" in printed
    data = json.loads(out.read_text())
    front = data["frontier"]
    assert front["semantics"] == "kubernetes" and len(front["points"]) == len(FRONTIER_TARGETS)
    runs = {(r["semantics"], r["policy"]): r for r in data["runs"]}
    for label in front["policies"]:
        assert runs[("kubernetes", label)]["iso_risk_cost_ratio"] is None
    # a higher target is cheaper: the frontier runs say what safety costs
    hours = [p["instance_hours"] for p in front["points"]]
    assert hours == sorted(hours, reverse=True)
    mine = runs[("scalebridge", "websocket-predictive")]
    fractions = [p["underprovisioned_fraction"] for p in front["points"]]
    # the flash crowd: the predictive policy is safer than every reactive target,
    # so it is compared with the 60% run — and costs well under it
    assert mine["underprovisioned_fraction"] < min(fractions)
    assert mine["iso_risk_cost_ratio"] == pytest.approx(mine["instance_hours"] / hours[0])
    assert mine["iso_risk_cost_ratio"] < 0.9


def test_simulate_has_no_frontier_option(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", str(PREDICTIVE), "--workload", "flash_crowd", "--capacity", "25000", "--startup", "120",
              "--frontier"])
