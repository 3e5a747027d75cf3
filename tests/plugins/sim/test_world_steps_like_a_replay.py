"""A sim target stepped as the controller steps it (observe, read_metrics,
``Decider.step``, set_size) decides, sync for sync, what ``simulate`` decides on
the same policy, load and fleet: one world, two drivers."""
from __future__ import annotations

import pytest

from scalebridge.engine import BUILTIN_SEMANTICS
from scalebridge.simulator import simulate
from scalebridge_sim.provider import SimProvider

REFS = {
    "flash-crowd": {"workload": "flash_crowd", "seed": 5, "peak": 600, "duration": "90m", "capacity": 20,
                    "startup": "uniform:30,150", "drain": 30, "metric_window": 45,
                    "param": {"at_seconds": 1200}},
    "step-5s-ticks": {"workload": "step", "duration": "1h", "capacity": 10, "startup": 0, "tick": 5,
                      "sync_period": 15, "metric_lag": 30, "param": {"up_at_seconds": 1200}},
}


def replayed(ref: dict, policy: dict, semantics: str) -> list[int]:
    """simulate()'s desired size at each sync tick."""
    target = SimProvider().target(ref)
    model, workload = target.model, target.workload
    run = simulate(policy, workload.load, model, semantics=semantics, start_time=workload.start_time)
    return run.desired[::model.sync_ticks].tolist()


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
@pytest.mark.parametrize("name", ["cpu", "shapes", "lb", "rules", "web", "predictive"])
def test_the_controllers_steps_decide_what_the_replay_decides(name, semantics, policies, as_runnable,
                                                               controller_steps) -> None:
    policy = as_runnable(policies[name], semantics)
    ref = REFS["flash-crowd"]
    expected = replayed(ref, policy, semantics)
    target = SimProvider().target(ref)
    got = controller_steps(target, policy, semantics, len(expected), period=target.model.sync_period_seconds)
    assert got == expected


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_finer_tick_than_the_sync_period_too(semantics, policies, as_runnable, controller_steps) -> None:
    policy = as_runnable(policies["web"], semantics)
    ref = REFS["step-5s-ticks"]
    expected = replayed(ref, policy, semantics)
    target = SimProvider().target(ref)
    assert controller_steps(target, policy, semantics, len(expected), period=15.0) == expected


def test_a_slice_of_a_real_trace(traces, policies, controller_steps) -> None:
    """Two busy hours of the World Cup 98 trace (requests per minute, read per second)."""
    ref = {"trace": str(traces / "worldcup98_day46-78.csv"), "scale": "1/60", "offset": "14h", "duration": "2h",
           "capacity": 25, "startup": 90}
    for semantics in ("kubernetes", "gce"):
        expected = replayed(ref, policies["cpu"], semantics)
        target = SimProvider().target(ref)
        got = controller_steps(target, policies["cpu"], semantics, len(expected), period=15.0)
        assert got == expected and len(set(got)) > 1
