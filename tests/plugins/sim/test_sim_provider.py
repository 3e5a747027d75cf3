"""The sim provider keeps the provider contract, runs on the virtual clock, and
says which ``ref`` key is wrong."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scalebridge import registry
from scalebridge.engine import load_policy
from scalebridge.providers import TargetEnded, Capability, ErrorKind, MetricQuery, ProviderError, RefError
from scalebridge.protocol import MetricObservation, Settings
from scalebridge.testing.conformance import FailNext, check_provider
from scalebridge_sim.provider import SimProvider, SimTarget

REF = {"workload": "flash_crowd", "duration": "1h", "capacity": 10, "startup": 60}


def sim_faults() -> FailNext:
    """Fault injection for the sim provider from its tests, not its production class: its
    "cloud" is the simulated world, which fails as the provider would report it (the error kinds
    themselves, a throttle with a retry-after). observe and read_metrics reach the world through
    ``_at``; set_size writes through ``_write``."""
    def error(kind: ErrorKind):
        return lambda: ProviderError(kind, f"injected {kind.value} fault",
                                     retry_after=2.0 if kind is ErrorKind.THROTTLED else None)
    return FailNext({"observe": "_at", "read_metrics": "_at", "set_size": "_write"},
                    {kind: error(kind) for kind in ErrorKind})


def test_registered_through_the_entry_point_like_any_plugin() -> None:
    assert registry.provider_factory("sim") is SimProvider
    p = SimProvider()
    assert p.semantics == "scalebridge"           # run-config.md: sim → scalebridge
    assert Capability.VIRTUAL_CLOCK in p.capabilities and Capability.METRICS in p.capabilities


def test_it_keeps_the_provider_contract() -> None:
    assert not hasattr(SimTarget, "fail_next")        # fault injection lives in the test (FailNext)
    report = check_provider(SimProvider(), REF, provoke=sim_faults(),
                            bad_refs=[{**REF, "capacity": 0}, {**REF, "workload": "tsunami"}, {**REF, "zone": "x"}])
    assert ("set_size", "throttled") in report.provoked


def test_the_target_starts_where_its_load_starts_and_lags_as_the_fleet_model_says(traces: Path) -> None:
    trace = traces / "nasa_http_1995-07-01_27.csv"
    t = SimProvider().target({"trace": str(trace), "duration": "1h", "capacity": 5, "startup": 60,
                              "metric_lag": 45})
    first = float(trace.read_text(encoding="utf-8").splitlines()[1].split(",")[0])
    assert t.start_time == first
    assert t.metric_delay_seconds == 45.0
    assert t.observe(first).details["time"] == first


def test_observe_advances_the_world_never_back_and_not_past_the_load() -> None:
    t = SimProvider().target(REF)
    t.use_policy(load_policy({"metrics": [{"type": "resource", "name": "cpu",
                                           "target": {"type": "Utilization", "average_utilization": 60}}]}),
                 Settings())
    assert t.observe(30.0).details["tick"] == 2
    assert t.observe(44.0).details["tick"] == 2         # the same tick: the same world
    with pytest.raises(ProviderError) as back:
        t.observe(15.0)
    assert back.value.kind is ErrorKind.INVALID
    with pytest.raises(ProviderError) as past:
        t.observe(3600.0)                                 # 240 ticks of 15 s: the last starts at 3585
    # the end of the load: the target says so (once, by the controller) and holds its size
    assert isinstance(past.value, TargetEnded) and "the simulated load ended at t=3600" in past.value.message


def test_a_resize_takes_at_once_and_reads_back() -> None:
    t = SimProvider().target({**REF, "initial": 4})
    t.use_policy(load_policy({}), Settings())
    assert t.observe(0.0).current_replicas == 4
    change = t.set_size(9)
    assert change.size == 9 and not change.in_flight
    assert t.observe(0.0).current_replicas == 9
    later = t.observe(15.0)
    assert later.current_replicas == 9 and later.in_flight is None
    # startup 60 s: the five new members are starting, not serving
    assert sum(m.count for m in later.members if not m.ready) == 5


def test_read_metrics_answers_what_the_world_publishes_for_the_queries() -> None:
    t = SimProvider().target(REF)
    t.use_policy(load_policy({"metrics": [{"type": "pods", "name": "rps",
                                           "target": {"type": "AverageValue", "average_value": 30}}]}), Settings())
    obs = t.observe(0.0)
    got = t.read_metrics(0.0, obs, [MetricQuery("rps", "pods", {}, 60.0), MetricQuery("cpu", "resource", {}, 60.0),
                                    MetricQuery("memory", "resource", {}, 60.0)])
    assert set(got) == {"rps", "cpu"}                    # memory is not simulated: missing, never 0
    for m in got.values():   # the core's own type, valid as the protocol's
        MetricObservation.model_validate(m.model_dump())
    members = sum(m.count for m in obs.members)
    assert sum(got["rps"].members.values()) * members == pytest.approx(got["rps"].value * len(got["rps"].members))


@pytest.mark.parametrize("ref, key", [
    ({"capacity": 10, "startup": 60}, "ref.workload"),
    ({"workload": "flash_crowd", "startup": 60}, "ref.capacity"),
    ({"workload": "flash_crowd", "capacity": 10}, "ref.startup"),
    ({**REF, "capacity": -1}, "ref.capacity"),
    ({**REF, "startup": "soon"}, "ref.startup"),
    ({**REF, "tick": 10, "sync_period": 15}, "ref.sync_period"),
    ({**REF, "offset": "forever"}, "ref.offset"),
    ({**REF, "peak": 0}, "ref.peak"),
    ({**REF, "param": 3}, "ref.param"),
    ({**REF, "workload": {"name": "step", "seed": "x"}}, "ref.workload.seed"),
    ({**REF, "capcity": 10}, "ref.capcity"),
    ({**REF, "trace": "missing.csv"}, "ref.trace"),
    ({"trace": "/nonexistent/trace.csv", "capacity": 10, "startup": 60}, "ref.trace"),
])
def test_a_bad_ref_names_its_key(ref: dict, key: str) -> None:
    with pytest.raises(RefError) as e:
        SimProvider().target(ref)
    assert e.value.key == key


def test_options_are_refused_by_name() -> None:
    with pytest.raises(RefError) as e:
        SimProvider(region="us-east-1")
    assert e.value.key == "region"


def test_a_bad_ref_in_a_run_configuration_is_one_line_with_file_line_and_key(tmp_path: Path) -> None:
    config = {"targets": [{"name": "web", "provider": "sim", "policy": {"min_replicas": 1, "max_replicas": 5},
                           "ref": {"workload": "flash_crowd", "capacity": 10, "startup": "soon"}}]}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", "run", "run.yaml", "--clock", "virtual",
                           "--until", "1h"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "run.yaml:10:" in lines[0] and "targets[0].ref.startup" in lines[0], lines[0]
    assert "invalid startup 'soon'" in lines[0]
