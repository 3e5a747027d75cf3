"""The replay loop (scalebridge.simulator.simulate / compare): the oracle never short and
never beaten without shortfall, constant load causing no scaling, a step recovered
within the startup lag and two syncs, the published metric shapes and their lag and
window, forecasters joining by max, the first decision, the default initial size, and
real traces.

Source: docs/simulation.md (the fleet model, what a policy can name)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalebridge import registry
from scalebridge.engine import BUILTIN_SEMANTICS, Decider
from scalebridge.policy import Policy
from scalebridge.protocol import CapacityForecast
from scalebridge.simulator import (
    compare, compute_scores, default_initial, FleetModel, make_workload, members_needed, oracle_for,
    oracle_ready, published_metrics, read_trace, resample, score_run, simulate, Startup)
from scalebridge.testing.requests import cpu_policy


REPO = Path(__file__).resolve().parents[2]


TRACES = REPO.parent / "shared" / "traces"


REAL = ["worldcup98_day46-78.csv", "nasa_http_1995-07-01_27.csv", "azure_llm_code_2024-05-10_16.csv"]


def registered() -> list[str]:
    return [n for n in BUILTIN_SEMANTICS if n in registry.current().semantics]


def runnable(policy: dict) -> list[str]:
    """Registered semantics that accept this policy (others are being written)."""
    out = []
    for name in registered():
        try:
            Decider(policy, name)
        except Exception:
            continue
        out.append(name)
    return out


ALL = pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)


def need_semantics(name: str) -> None:
    if name not in registry.current().semantics:
        pytest.skip(f"semantics {name!r} is not registered yet")


@pytest.mark.parametrize("workload", ["flash_crowd", "diurnal", "step", "sawtooth", "exponential_growth"])
def test_oracle_never_short_and_never_beaten_without_shortfall(workload: str) -> None:
    """The oracle is never under-provisioned, and no run with zero
    under-provisioning pays fewer instance-hours than the oracle."""
    trace = make_workload(workload, seed=3, duration_seconds=3 * 3600)
    load = trace.values
    never_short = 0
    for startup in (0.0, 60.0, 300.0):
        model = FleetModel(capacity=10, startup=startup)
        for target in (30, 75):
            for extra in ({}, {"behavior": {"scale_down": {"stabilization_window_seconds": 0}}}):
                policy = cpu_policy(target, **extra)
                oracle = oracle_for(load, model, Policy.model_validate(policy))
                ready = oracle_ready(oracle, startup_seconds=startup, tick_seconds=15)
                assert np.all(ready >= members_needed(load, 10))
                for name in runnable(policy):
                    run = simulate(policy, load, model, semantics=name)
                    s = score_run(run, load, model, oracle_paid=oracle)
                    assert s.oracle_instance_hours is not None
                    if s.underprovisioned_seconds == 0:
                        never_short += 1
                        assert s.instance_hours >= s.oracle_instance_hours - 1e-9, (name, startup, target, extra)
                        assert s.oracle_ratio >= 1 - 1e-12
    if registered() and workload == "diurnal":   # smooth: a 30 % target is never short
        assert never_short, "no run was free of under-provisioning: the check above was vacuous"


@ALL
@pytest.mark.parametrize("metric", ["cpu", "pods", "external", "object"])
def test_constant_load_at_the_target_causes_no_scaling(semantics: str, metric: str) -> None:
    need_semantics(semantics)
    members, capacity = 10, 10.0
    load = np.full(400, 0.6 * members * capacity)   # 60 per member = 60 % of capacity
    metrics = {
        "cpu": {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}},
        "pods": {"type": "pods", "name": "load", "target": {"type": "AverageValue", "average_value": 6}},
        "external": {"type": "external", "name": "load", "target": {"type": "AverageValue", "average_value": 6}},
        "object": {"type": "object", "name": "load", "target": {"type": "Value", "value": 60}},
    }
    for tolerance in (None, 0):
        policy = {"min_replicas": 1, "max_replicas": 50, "metrics": [metrics[metric]]}
        if tolerance is not None:
            policy["tolerance"] = tolerance
        try:
            Decider(policy, semantics)
        except Exception as e:
            pytest.skip(f"{semantics} cannot run a {metric} metric: {e}")
        model = FleetModel(capacity=capacity, startup=60, initial=members)
        run = simulate(policy, load, model, semantics=semantics)
        assert run.errors == 0, run.first_error
        assert set(run.desired.tolist()) == {members}, (tolerance, run.reasons)
        assert compute_scores(load, run.ready, run.paid, tick_seconds=15, capacity=capacity).scaling_actions == 0


@pytest.mark.parametrize("behavior", [None, {}], ids=["no-behavior", "default-behavior"])
@pytest.mark.parametrize("startup, lag", [(60, 15), (120, 30), (30, 0)])
@pytest.mark.parametrize("factor", [2.0, 3.0])
def test_step_up_recovers_within_startup_lag_and_two_syncs(behavior, startup: float, lag: float, factor: float) -> None:
    """After a step up, kubernetes semantics with default behavior has enough
    ready capacity within startup + metric lag + two sync periods."""
    need_semantics("kubernetes")
    base, capacity, sync, tick = 300.0, 10.0, 15.0, 15.0
    up = 3600.0
    trace = make_workload("step", peak=base * factor, base=1 / factor, up_at_seconds=up,
                          down_at_seconds=None, duration_seconds=2 * 3600)
    policy = cpu_policy(60)
    if behavior is not None:
        policy["behavior"] = behavior
    model = FleetModel(capacity=capacity, startup=startup, metric_lag_seconds=lag, sync_period_seconds=sync)
    run = simulate(policy, trace.values, model, semantics="kubernetes")
    short = members_needed(trace.values, capacity) > run.ready
    assert not short[: int(up / tick)].any()
    bound = up + startup + lag + 2 * sync
    k = int(np.ceil(bound / tick))
    assert short[int(up / tick)], "the step should outrun the fleet at first"
    assert not short[k:].any(), f"short after {bound:g}s: ticks {np.flatnonzero(short[k:])[:5] + k}"
    if factor == 2.0:
        # one decision suffices: everything is ready exactly one startup after it
        first_ok = int(np.argmax(~short[int(up / tick):])) + int(up / tick)
        assert first_ok * tick <= bound


def test_same_seed_same_result() -> None:
    need_semantics("kubernetes")
    trace = make_workload("diurnal", seed=11, duration_seconds=86400, noise=0.2)
    model = FleetModel(capacity=25, startup="uniform:30,240", seed=5, drain_seconds=30)
    a = simulate(cpu_policy(), trace.values, model, semantics="kubernetes")
    b = simulate(cpu_policy(), trace.values, model, semantics="kubernetes")
    for key in ("desired", "paid", "ready"):
        assert np.array_equal(getattr(a, key), getattr(b, key))
    assert a.reasons == b.reasons
    c = simulate(cpu_policy(), trace.values, FleetModel(capacity=25, startup="uniform:30,240", seed=6,
                                                         drain_seconds=30), semantics="kubernetes")
    assert not np.array_equal(a.ready, c.ready)   # another seed draws other startups


def capture(monkeypatch) -> list:
    seen = []
    original = Decider.step

    def step(self, now, current, observations, trace=None, **kw):
        # a snapshot: the loop reuses its observation objects from one decision to the next
        seen.append((now, current, observations.model_copy(deep=True)))
        return original(self, now, current, observations, trace, **kw)

    monkeypatch.setattr(Decider, "step", step)
    return seen


def test_the_replay_decides_on_checked_readings_that_are_never_impossible(monkeypatch) -> None:
    """The replay steps its Decider with ``checked=True`` (no scan for impossible
    observations): every observation its world builds — cpu, a pods and an external
    metric, a rule's series, a load that falls to zero and a fleet of zero — passes
    that scan unchanged (``refuse_impossible`` returns the same mapping)."""
    from scalebridge.stages.impossible import refuse_impossible
    need_semantics("kubernetes")
    flags: list = []
    original = Decider.step

    def step(self, now, current, observations, trace=None, **kw):
        flags.append(kw.get("checked"))
        assert refuse_impossible(self.policy, observations.metrics) is observations.metrics
        return original(self, now, current, observations, trace, **kw)

    monkeypatch.setattr(Decider, "step", step)
    policy = cpu_policy(50)
    policy["min_replicas"] = 0
    policy["metrics"].append({"type": "pods", "name": "load", "target": {"type": "AverageValue", "average_value": 5}})
    policy["metrics"].append({"type": "external", "name": "queue", "target": {"type": "Value", "value": 500}})
    policy["rules"] = [{"metric": "cpu", "statistic": "Average", "time_grain_seconds": 60, "time_window_seconds": 300,
                        "time_aggregation": "Average", "operator": "GreaterThan", "threshold": 70,
                        "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]
    load = np.concatenate([np.full(100, 120.0), np.zeros(100), make_workload("flash_crowd", duration_seconds=3600).values])
    run = simulate(policy, load, FleetModel(capacity=10, startup=60, initial=0), semantics="kubernetes")
    assert flags and set(flags) == {True} and len(flags) == run.decisions


def test_published_metric_shapes(monkeypatch) -> None:
    need_semantics("kubernetes")
    seen = capture(monkeypatch)
    policy = cpu_policy(50)
    policy["metrics"].append({"type": "pods", "name": "load", "target": {"type": "AverageValue", "average_value": 5}})
    policy["metrics"].append({"type": "external", "name": "queue", "target": {"type": "Value", "value": 500}})
    load = np.full(200, 120.0)
    model = FleetModel(capacity=10, startup=60, initial=20, metric_lag_seconds=30, metric_window_seconds=30,
                       sync_period_seconds=30)
    run = simulate(policy, load, model, semantics="kubernetes", start_time=1_000_000.0)
    assert run.published == {"cpu": "cpu", "load": "load_per_member", "queue": "load"}
    assert run.errors == 0, run.first_error
    now, current, obs = seen[-1]
    assert (now - 1_000_000.0) % 30 == 0 and len(seen) == 100 and obs.status_replicas == current
    ready = [m for m in obs.members if m.ready]
    per_member = 120.0 / sum(m.count for m in ready)
    cpu = obs.metrics["cpu"]
    assert cpu.timestamp == now - 30 and cpu.window == 30
    assert set(cpu.members) == {m.name for m in ready}
    assert all(v == pytest.approx(per_member / 10, abs=1e-3) for v in cpu.members.values())
    assert all(m.requests == {"cpu": 1} for m in obs.members)
    times = [t for t, _ in cpu.series]
    assert np.all(np.diff(times) == 60) and times[-1] <= now - 30 and times[-1] > now - 30 - 60
    assert len(times) * 60 >= 1800
    assert cpu.series[-1][1] == pytest.approx(100 * per_member / 10)
    load_obs = obs.metrics["load"]
    assert load_obs.value == 120.0 and load_obs.values == [120.0]
    assert all(v == pytest.approx(per_member) for v in load_obs.members.values())
    assert load_obs.series[-1][1] == pytest.approx(per_member)   # a pods metric: per-member average
    queue = obs.metrics["queue"]
    assert queue.value == 120.0 and queue.values == [120.0] and queue.series[-1][1] == 120.0
    assert obs.forecast is None and obs.proposal is None


def test_starting_members_have_no_sample(monkeypatch) -> None:
    need_semantics("kubernetes")
    seen = capture(monkeypatch)
    load = np.concatenate([np.full(20, 60.0), np.full(60, 240.0)])
    run = simulate(cpu_policy(60), load, FleetModel(capacity=10, startup=120, initial=10), semantics="kubernetes")
    assert run.desired.max() > 10
    starting = [(obs, m) for _, _, obs in seen for m in obs.members if m.phase == "Pending"]
    assert starting and all(m.ready is False for _, m in starting)
    assert all(m.name not in obs.metrics["cpu"].members for obs, m in starting)
    # a member ready after the sampled window has no sample yet
    for now, _, obs in seen:
        for m in obs.members:
            if m.ready and m.ready_transition_time >= obs.metrics["cpu"].timestamp:
                assert m.name not in obs.metrics["cpu"].members


def test_rules_and_load_balancing_names_are_published() -> None:
    policy = Policy.model_validate({
        "min_replicas": 1, "max_replicas": 10,
        "metrics": [{"type": "load_balancing", "name": "lb", "target": {"type": "Utilization", "average_utilization": 80}},
                    {"type": "resource", "name": "memory", "target": {"type": "Utilization", "average_utilization": 80}}],
        "rules": [{"metric": "rps", "operator": "GreaterThan", "threshold": 100,
                   "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}],
        "profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 5, "default": 2},
                      "rules": [{"metric": "cpu", "operator": "LessThan", "threshold": 20,
                                 "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}]})
    assert published_metrics(policy) == {"cpu": "cpu", "lb": "load_balancing", "rps": "load"}


@pytest.mark.parametrize("semantics", ["azure", "aws"])
def test_rule_policies_simulate(semantics: str) -> None:
    need_semantics(semantics)
    policy = {"min_replicas": 1, "max_replicas": 50, "rules": [
        {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 300, "operator": "GreaterThan",
         "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2, "cooldown_seconds": 300}},
        {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 600, "operator": "LessThan",
         "threshold": 30, "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1, "cooldown_seconds": 300}}]}
    if semantics == "azure":
        policy = {"profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 50, "default": 2},
                                "rules": policy["rules"]}]}
    load = make_workload("step", peak=200, base=0.25, up_at_seconds=1800, down_at_seconds=5400,
                         duration_seconds=4 * 3600).values
    try:
        run = simulate(policy, load, FleetModel(capacity=10, startup=60, initial=2), semantics=semantics)
    except Exception as e:
        pytest.skip(f"{semantics} cannot run this rule policy yet: {e}")
    assert run.desired.max() > 2          # the scale-out rule fired on the cpu series
    assert run.desired[-1] < run.desired.max()   # and the scale-in rule after the step down


def test_gce_load_balancing_simulates() -> None:
    need_semantics("gce")
    policy = {"min_replicas": 1, "max_replicas": 50, "metrics": [
        {"type": "load_balancing", "name": "lb", "target": {"type": "Utilization", "average_utilization": 80}}]}
    load = make_workload("step", peak=200, base=0.25, up_at_seconds=1800, duration_seconds=2 * 3600).values
    run = simulate(policy, load, FleetModel(capacity=10, startup=60), semantics="gce")
    assert run.errors == 0, run.first_error
    assert run.desired[-1] >= 25   # 200 / (10 × 80 %)


def test_forecaster_is_called_with_the_observed_history_and_joins_by_max() -> None:
    need_semantics("kubernetes")
    calls = []

    def forecaster(now: float, history: np.ndarray, tick: float):
        calls.append((now, history.size, tick))
        assert not history.flags.writeable
        return 30 if now >= 600 else None

    load = np.full(120, 50.0)
    policy = cpu_policy(60, predictive={"mode": "ForecastAndScale"})
    model = FleetModel(capacity=10, startup=60, initial=9, metric_lag_seconds=30)
    run = simulate(policy, load, model, semantics="kubernetes", forecaster=forecaster, start_time=0.0)
    assert len(calls) == 120 and calls[0] == (0.0, 0, 15.0)
    assert calls[50] == (750.0, 48, 15.0)           # ticks that ended by now - lag
    assert run.desired[39] == 9 and run.desired[40] > 9    # from t = 600 s (within the scale-up limit)
    assert run.desired[42:].min() >= 30
    # ignored unless the policy lets forecasts act
    plain = simulate(cpu_policy(60), load, model, semantics="kubernetes", forecaster=forecaster)
    assert plain.desired.max() == 9


def test_forecaster_may_return_a_capacity_forecast() -> None:
    need_semantics("kubernetes")
    policy = cpu_policy(60, predictive={"mode": "ForecastAndScale"})
    fc = CapacityForecast(replicas=12, source="test")
    run = simulate(policy, np.full(40, 10.0), FleetModel(capacity=10, startup=0), semantics="kubernetes",
                   forecaster=lambda now, history, tick: fc)
    assert run.desired.max() == 12
    with pytest.raises(ValueError):
        simulate(policy, np.full(4, 10.0), FleetModel(capacity=10, startup=0), semantics="kubernetes",
                 forecaster=lambda now, history, tick: -1)


def test_compare_skips_what_cannot_run_and_scores_the_rest() -> None:
    need_semantics("kubernetes")
    load = make_workload("flash_crowd", duration_seconds=3 * 3600).values
    policies = [("a", Policy.model_validate(cpu_policy(60))), ("b", Policy.model_validate({"min_replicas": 1}))]
    result = compare(policies, ["kubernetes", "no-such-semantics"], load, FleetModel(capacity=10, startup=60),
                     price_per_instance_hour=0.5)
    assert [(r.run.policy, r.run.semantics) for r in result.results] == [("a", "kubernetes")]
    reasons = {(s["policy"], s["semantics"]): s["reason"] for s in result.skipped}
    assert reasons[("a", "no-such-semantics")] == "not registered"
    assert "max_replicas" in reasons[("b", "kubernetes")]
    d = result.to_dict()
    run = d["runs"][0]
    for key in ("semantics", "policy", "instance_hours", "oracle_instance_hours", "underprovisioned_seconds",
                "underprovisioned_fraction", "unserved_load", "peak_overload", "scaling_actions", "reversals",
                "cost", "oracle_ratio", "time_to_recover_seconds", "decisions", "reasons"):
        assert key in run
    assert run["cost"] == pytest.approx(run["instance_hours"] * 0.5)
    assert d["oracle"][0]["policy"] == "a" and d["fleet"]["capacity"] == 10


def test_default_initial_is_what_the_policy_holds() -> None:
    p = Policy.model_validate(cpu_policy(50))
    assert default_initial(p, 100.0, 10.0) == 20
    assert default_initial(Policy.model_validate(cpu_policy(50, max_replicas=8)), 100.0, 10.0) == 8
    pods = Policy.model_validate({"min_replicas": 3, "max_replicas": 9, "metrics": [
        {"type": "pods", "name": "load", "target": {"type": "AverageValue", "average_value": 40}}]})
    assert default_initial(pods, 100.0, 10.0) == 3
    assert default_initial(pods, 0.0, 10.0) == 3


def test_default_initial_holds_what_the_predictive_planner_plans_first() -> None:
    """Before it knows its forecast's error the planner plans at target_utilization of
    a member's capacity; a reactive target at 90% alone would start the replay short."""
    doc = {"min_replicas": 1, "max_replicas": 50, "metrics": [
        {"type": "pods", "name": "load", "target": {"type": "AverageValue", "average_value": 90}}],
        "predictive": {"mode": "ForecastAndScale", "capacity_per_replica": 100, "target_utilization": 0.5}}
    assert default_initial(Policy.model_validate(doc), 900.0, 100.0) == 18       # 900 / (100 × 0.5)
    doc["predictive"]["mode"] = "ForecastOnly"                                  # reports, never acts
    assert default_initial(Policy.model_validate(doc), 900.0, 100.0) == 10       # 900 / 90


def test_bad_loads_are_rejected() -> None:
    model = FleetModel(capacity=1, startup=0)
    for load in (np.array([]), np.array([1.0, -1.0]), np.array([np.nan])):
        with pytest.raises(ValueError):
            simulate(cpu_policy(), load, model, semantics="kubernetes")


def real(name: str):
    path = TRACES / name
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared traces sit beside the repository)")
    return read_trace(path, scale=1 / 60)


@pytest.mark.parametrize("name", REAL)
def test_real_traces_two_days(name: str) -> None:
    need_semantics("kubernetes")
    trace = real(name)
    load = resample(trace, 15.0, trace.start, trace.start + 2 * 86400)
    capacity = float(np.median(load)) / 4 or 1.0   # about 4 members at the median
    model = FleetModel(capacity=capacity, startup=90)
    policy = Policy.model_validate(cpu_policy(60))
    result = compare([("web", policy)], registered(), load, model, start_time=trace.start)
    oracle = result.oracles["web"]
    assert not (members_needed(load, capacity) > oracle_ready(oracle, startup_seconds=90, tick_seconds=15)).any()
    assert result.results
    for r in result.results:
        assert r.run.errors == 0, r.run.first_error
        assert r.run.decisions == load.size
        s = r.scores
        assert s.instance_hours > 0 and np.isfinite(s.unserved_load)
        if s.underprovisioned_seconds == 0:
            assert s.instance_hours >= s.oracle_instance_hours
        if r.run.semantics == "kubernetes":   # (azure, say, scales on rules only: this policy has none)
            assert s.underprovisioned_fraction < 0.05, s


@pytest.mark.slow
def test_a_whole_real_trace() -> None:
    need_semantics("kubernetes")
    trace = real("nasa_http_1995-07-01_27.csv")
    load = resample(trace, 60.0)
    model = FleetModel(capacity=0.25, startup=120, tick_seconds=60, sync_period_seconds=60, metric_lag_seconds=60)
    run = simulate(cpu_policy(60), load, model, semantics="kubernetes", start_time=trace.start)
    assert run.decisions == 27 * 1440
    s = score_run(run, load, model, oracle_paid=oracle_for(load, model, Policy.model_validate(cpu_policy(60))))
    assert s.oracle_ratio >= 1 or s.underprovisioned_seconds > 0


def test_startup_distribution_oracle_uses_the_shortest_startup() -> None:
    model = FleetModel(capacity=10, startup=Startup("normal", 60, 20))
    load = make_workload("sawtooth", duration_seconds=3 * 3600).values
    policy = Policy.model_validate(cpu_policy(40))
    oracle = oracle_for(load, model, policy)
    assert np.array_equal(oracle, oracle_for(load, FleetModel(capacity=10, startup=0), policy))
    for name in runnable(cpu_policy(40)):
        run = simulate(policy, load, model, semantics=name)
        s = score_run(run, load, model, oracle_paid=oracle)
        if s.underprovisioned_seconds == 0:
            assert s.instance_hours >= s.oracle_instance_hours


def need(name: str) -> None:
    if name not in registry.current().semantics:
        pytest.skip(f"semantics {name!r} is not registered")


def test_lag_and_window_average_the_ticks_that_ended_by_now_minus_lag(monkeypatch) -> None:
    """A decision at `now` sees the mean over [now - lag - window, now - lag);
    the group series' points (stamped at the grain's end) appear only once
    `now - lag` has reached them."""
    need("kubernetes")
    seen = []
    original = Decider.step

    def step(self, now, current, obs, **kw):
        q = obs.metrics["q"]
        seen.append((now, q.value, q.timestamp, list(q.series)))
        return original(self, now, current, obs, **kw)

    monkeypatch.setattr(Decider, "step", step)
    policy = {"name": "p", "min_replicas": 1, "max_replicas": 100,
              "metrics": [{"type": "external", "name": "q", "target": {"type": "Value", "value": 1e9}}]}
    load = np.arange(1, 41, dtype=float) * 10          # tick k carries 10 (k + 1)
    model = FleetModel(capacity=1000, startup=60, initial=10, metric_lag_seconds=30, metric_window_seconds=45)
    simulate(policy, load, model, semantics="kubernetes")
    by_now = {now: (value, stamp, series) for now, value, stamp, series in seen}
    # now=60: window [-15, 30) = warm tick (10), tick 0 (10), tick 1 (20)
    assert by_now[60.0][0] == pytest.approx(40 / 3) and by_now[60.0][1] == 30.0
    assert by_now[75.0][0] == pytest.approx(20.0)      # ticks 0..2
    assert by_now[165.0][0] == pytest.approx(80.0)     # ticks 6..8
    # the first real one-minute point (ticks 0..3, mean 25) ends at 60 and is visible from now=90
    assert (60.0, 25.0) not in by_now[75.0][2]
    assert by_now[90.0][2][-1] == (60.0, 25.0)


def test_the_first_decision_can_change_the_size() -> None:
    """Precondition of the next test: the decision at tick 0 moves the fleet."""
    need("kubernetes")
    load = make_workload("step", duration_seconds=600).values          # 250, capacity 50
    run = simulate(cpu_policy(60), load, FleetModel(capacity=50, startup=0, initial=1), semantics="kubernetes")
    assert run.desired[0] != 1


def test_default_initial_is_what_a_pods_target_on_the_load_holds() -> None:
    policy = Policy.model_validate({"name": "rps", "min_replicas": 1, "max_replicas": 100, "metrics": [
        {"type": "pods", "name": "rps", "target": {"type": "AverageValue", "average_value": 30}}]})
    assert default_initial(policy, 250.0, 50.0) == 9        # ceil(250 / 30), what the policy holds
