"""How the simulator builds each decision request: members and status replicas following
the fleet, the metric lag applied once, rule windows and target-tracking datapoints full
from the first decision, no point newer than now − lag, rate targets, rule time grains,
and one forecaster state per compared run.

Source: docs/simulation.md (the fleet model, what a policy can name)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scalebridge import registry
from scalebridge.engine import Decider
from scalebridge.policy import Policy
from scalebridge.simulator import compare, FleetModel, make_workload, simulate
from scalebridge.stages.alarms import datapoints
from scalebridge.stages.rules import rule_value
from scalebridge.testing.requests import cpu_policy


def need(name: str) -> None:
    if name not in registry.current().semantics:
        pytest.skip(f"semantics {name!r} is not registered")


def record(monkeypatch) -> list:
    """Snapshots of (now, current, observations, settings) of every decision."""
    seen: list = []
    original = Decider.step

    def step(self, now, current, observations, trace=None, **kw):
        seen.append((now, current, observations.model_copy(deep=True), self.settings))
        return original(self, now, current, observations, trace, **kw)

    monkeypatch.setattr(Decider, "step", step)
    return seen


def azure_policy(window: float, grain: float = 60, aggregation: str = "Average", threshold: float = 70) -> dict:
    rule = {"metric": "cpu", "operator": "GreaterThan", "threshold": threshold, "time_grain_seconds": grain,
            "time_window_seconds": window, "time_aggregation": aggregation,
            "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 300}}
    return {"name": "az",
            "profiles": [{"name": "d", "capacity": {"minimum": 1, "maximum": 50, "default": 3}, "rules": [rule]}]}


STEP = make_workload("step", duration_seconds=2400, up_at_seconds=600, down_at_seconds=1500).values


@pytest.mark.parametrize("semantics", ["kubernetes", "aws", "scalebridge"])
@pytest.mark.parametrize("startup", ["60", "uniform:30,120"])
def test_members_and_status_replicas_follow_the_fleet(monkeypatch, semantics: str, startup: str) -> None:
    """Every request: the members not being removed add up to status_replicas, which is
    the size the previous decision set; no time lies after `now`; a starting member is
    Pending since its request; a ready cohort became ready ceil(startup / tick) ticks
    after its request, within the startup model's bounds."""
    need(semantics)
    seen = record(monkeypatch)
    model = FleetModel(capacity=50, startup=startup, tick_seconds=15, metric_lag_seconds=15, drain_seconds=30)
    run = simulate(cpu_policy(), STEP, model, semantics=semantics)
    assert run.errors == 0 and run.desired.max() > run.initial
    lo, hi = model.startup.minimum, (model.startup.b if model.startup.kind == "uniform" else model.startup.a)
    prev = run.initial
    for i, (now, current, obs, _) in enumerate(seen):
        assert current == prev == obs.status_replicas
        assert sum(m.count for m in obs.members if not m.deleting) == obs.status_replicas
        for m in obs.members:
            assert m.start_time <= now and m.ready_transition_time <= now
            if m.phase == "Pending":
                assert m.ready is False and m.ready_transition_time == m.start_time
                assert now - m.start_time < math.ceil(hi / 15) * 15
            elif m.name != "ready":      # a recent cohort: its own times
                assert lo - 1e-9 <= m.ready_transition_time - m.start_time <= math.ceil(hi / 15) * 15
        prev = int(run.desired[i])


def test_the_lag_is_applied_once_rounded_up_to_whole_ticks(monkeypatch) -> None:
    """A 15-s lag on a 60-s tick is a 60-s lag: the samples' timestamp and
    settings.metric_delay_seconds both say now - 60, and the series ends there."""
    need("kubernetes")
    seen = record(monkeypatch)
    model = FleetModel(capacity=50, startup=60, tick_seconds=60, sync_period_seconds=60, metric_lag_seconds=15)
    simulate(cpu_policy(), np.full(40, 250.0), model, semantics="kubernetes", start_time=1000.0)
    for now, _, obs, settings in seen[5:]:
        cpu = obs.metrics["cpu"]
        assert settings.metric_delay_seconds == 60.0
        assert cpu.timestamp == now - 60.0 and cpu.window == 60.0
        assert cpu.series[-1][0] == now - 60.0


@pytest.mark.parametrize("window", [300, 3600, 7200])
@pytest.mark.parametrize("lag", [15, 120])
def test_azure_rule_windows_are_full_from_the_first_decision(monkeypatch, window: int, lag: int) -> None:
    """With the window ending metric_delay_seconds before now (the lag), every decision's
    rule window (hi - W, hi] holds exactly W / 60 one-minute points and its newest point
    is in (hi - 60, hi] — longer-than-30-minute windows and a start time off the minute
    included: no missing grain at the start, no off-by-one grain."""
    need("azure")
    seen = record(monkeypatch)
    model = FleetModel(capacity=50, startup=60, metric_lag_seconds=lag)
    run = simulate(azure_policy(window), STEP[:80], model, semantics="azure", start_time=1007.0)
    assert run.errors == 0
    for now, _, obs, settings in seen:
        hi = now - settings.metric_delay_seconds
        times = [t for t, _ in obs.metrics["cpu"].series if hi - window < t <= hi]
        assert len(times) == window // 60
        assert hi - 60 < max(times) <= hi


@pytest.mark.parametrize("kind", ["resource", "pods", "external"])
def test_aws_target_tracking_has_every_datapoint_from_the_first_decision(monkeypatch, kind: str) -> None:
    """The scale-in alarm reads 15 one-minute datapoints plus 2: all exist at the first
    decision (the warm start), and there are no insufficient-data errors."""
    need("aws")
    seen = record(monkeypatch)
    name = "cpu" if kind == "resource" else "rps"
    target = ({"type": "Utilization", "average_utilization": 60} if kind == "resource"
              else {"type": "AverageValue", "average_value": 30})
    policy = {"name": "a", "min_replicas": 1, "max_replicas": 50,
              "metrics": [{"type": kind, "name": name, "target": target}]}
    model = FleetModel(capacity=50, startup=60, metric_lag_seconds=60)
    run = simulate(policy, STEP[:60], model, semantics="aws", start_time=1007.0)
    assert run.errors == 0
    now, _, obs, settings = seen[0]
    points = datapoints(obs.metrics[name], now - settings.metric_delay_seconds, 60, 17)
    assert None not in points


def test_no_series_point_is_newer_than_now_minus_lag(monkeypatch) -> None:
    """run.py: every metric sees 'the ticks that ended by now - lag'; a group series point
    stamped at a grain's end after now - lag is a datapoint from the future."""
    need("kubernetes")
    seen = record(monkeypatch)
    model = FleetModel(capacity=50, startup=60, metric_lag_seconds=120)
    simulate(cpu_policy(), np.full(20, 250.0), model, semantics="kubernetes", start_time=1000.0)
    late = [(now, t) for now, _, obs, s in seen for t, _ in obs.metrics["cpu"].series
            if t > now - s.metric_delay_seconds]
    assert late == []


@pytest.mark.divergence("simulator-counter-metrics")
def test_a_rate_target_on_a_pods_metric_can_be_replayed() -> None:
    """A pods metric with a rate target replays like any other: the protocol reads a rate
    target from member_series (cumulative counters, rate = Δvalue/Δtime)."""
    need("gce")
    policy = {"name": "g", "min_replicas": 1, "max_replicas": 50,
              "metrics": [{"type": "pods", "name": "requests",
                           "target": {"type": "AverageValue", "average_value": 40, "rate": "per_second"}}]}
    run = simulate(policy, np.full(40, 200.0), FleetModel(capacity=50, startup=60, initial=5), semantics="gce")
    assert run.errors == 0, run.first_error


@pytest.mark.divergence("simulator-series-grain")
def test_an_azure_rule_reads_its_own_time_grain(monkeypatch) -> None:
    """A PT5M rule over 15 minutes aggregates three 5-minute grains (the protocol: `series` is
    'a group-level series at the time grain'). A one-minute spike to 200 % on 4 members
    at 50 % makes its 5-minute grain (200 + 4 × 50) / 5 = 80 %: `Maximum > 150` must not
    fire, and `Count` over the window is 3."""
    need("azure")
    seen = record(monkeypatch)
    load = np.concatenate([np.full(40, 100.0), np.full(4, 400.0), np.full(40, 100.0)])
    model = FleetModel(capacity=50, startup=60, initial=4)
    policy = azure_policy(900, grain=300, aggregation="Maximum", threshold=150)
    run = simulate(policy, load, model, semantics="azure", start_time=0.0)
    counts = Policy.model_validate(azure_policy(900, grain=300, aggregation="Count", threshold=0)).profiles[0].rules[0]
    now, current, obs, settings = seen[-1]
    assert rule_value(counts, obs.metrics["cpu"], now, current, settings.metric_delay_seconds).approx == 3
    assert run.desired.max() == 4


def test_compare_gives_each_run_its_own_forecaster_state() -> None:
    """docs/simulation.md: `--workers N` gives identical scores, and two runs of the same
    pair are the same replay; a TraceForecaster (the seam's own planner) keeps what it
    observed, so a run after the first one forecasts from the future of the load."""
    need("scalebridge")
    from scalebridge.policyfile import load_policy_file
    from scalebridge.forecasting.planner import trace_forecaster
    from pathlib import Path
    policy = load_policy_file(Path(__file__).resolve().parents[2] / "examples" / "predictive" / "policy.yaml")
    load = make_workload("exponential_growth", duration_seconds=3 * 3600, peak=875000).values
    model = FleetModel(capacity=25000, startup=120)
    alone = simulate(policy, load, model, semantics="scalebridge",
                     forecaster=trace_forecaster(policy, capacity=25000, startup_seconds=120, t0=0.0,
                                                 tick_seconds=15))
    shared = trace_forecaster(policy, capacity=25000, startup_seconds=120, t0=0.0, tick_seconds=15)
    both = compare([("a", policy), ("b", policy)], ["scalebridge"], load, model, forecaster=shared)
    assert [int(r.run.paid.sum()) for r in both.results] == [int(alone.paid.sum())] * 2
