"""The fake provider keeps the provider contract and does what its options say."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from scalebridge.providers import Capability, ErrorKind, MetricQuery, Pacing, ProviderError, RefError
from scalebridge.testing.fake import DEFAULT_START, FakeProvider, Load

T0 = DEFAULT_START
CPU = MetricQuery("cpu", "resource", {"target": {"type": "Utilization", "average_utilization": 60}}, 60.0,
                  shapes=frozenset({"members", "value", "series"}))


def test_a_write_stays_in_flight_for_the_observes_it_is_told_to():
    fake = FakeProvider(settle_observes=2)
    web = fake.target({"name": "web", "size": 2})
    change = web.set_size(4)
    assert change.size == 4 and change.in_flight and change.operation
    for k in range(2):
        obs = web.observe(T0 + 15 * k)
        assert obs.in_flight == change.operation
        assert obs.current_replicas == 4 and obs.status_replicas == 2
        pending = [m for m in obs.members if m["phase"] == "Pending"]
        assert len(pending) == 2 and not any(m["ready"] for m in pending)
    obs = web.observe(T0 + 30)
    assert obs.in_flight is None and obs.status_replicas == 4
    assert all(m["ready"] and m["phase"] == "Running" for m in obs.members)
    assert [m["ready_transition_time"] for m in obs.members][-2:] == [T0 + 30, T0 + 30]


def test_a_scale_in_marks_members_deleting_until_it_settles():
    fake = FakeProvider(settle_observes=1)
    web = fake.target({"name": "web", "size": 4})
    web.set_size(1)
    obs = web.observe(T0)
    assert obs.in_flight and sum(m["deleting"] for m in obs.members) == 3
    obs = web.observe(T0 + 15)
    assert obs.in_flight is None and [m["name"] for m in obs.members] == ["web-0"]


def test_settle_seconds_hold_a_write_in_flight_on_the_clock():
    fake = FakeProvider(settle_seconds=60)
    web = fake.target({"name": "web", "size": 1})
    web.observe(T0)
    web.set_size(3)
    assert web.observe(T0 + 59).in_flight
    assert web.observe(T0 + 60).in_flight is None


def test_utilization_follows_the_load_over_the_ready_members():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 3, "load": 2.4, "cpu_request": 0.5})
    m = web.read_metrics(T0, web.observe(T0), [CPU])["cpu"]
    # 2.4 requests' worth of demand on 3 members: 80% of a 0.5-core request = 0.4 cores each
    assert m["value"] == pytest.approx(80.0)
    assert m["members"] == pytest.approx({"web-0": 0.4, "web-1": 0.4, "web-2": 0.4})
    web.set_size(6)
    m = web.read_metrics(T0, web.observe(T0), [CPU])["cpu"]
    assert m["value"] == pytest.approx(40.0)


def test_a_load_is_a_deterministic_function_of_time():
    load = Load.parse({"base": 2.0, "amplitude": 1.0, "period": 400, "steps": [[1000, 3.0], [2000, 0.0]]}, "load")
    assert load.at(100) == pytest.approx(3.0)          # a quarter period: the sine's top
    assert load.at(300) == pytest.approx(1.0)
    assert load.at(1000) == pytest.approx(5.0)         # base + sin(0) + step
    assert load.at(2100) == pytest.approx(3.0)
    assert Load.parse({"base": -5}, "load").at(0) == 0.0


def test_series_cover_the_window_at_the_grain():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 2, "load": 1.0})
    q = MetricQuery("cpu", "rule", {}, 300.0, grain_seconds=60.0, shapes=frozenset({"series"}))
    s = web.read_metrics(T0 + 600, web.observe(T0 + 600), [q])["cpu"]["series"]
    assert [t for t, _ in s] == [T0 + 600 - 60 * k for k in range(4, -1, -1)]
    assert {v for _, v in s} == {50.0}


def test_metric_kinds_and_per_metric_loads():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 4, "load": 1.0,
                       "metrics": {"queue": {"load": 40}, "rps": {"load": 200, "as": "per_member"}}})
    obs = web.observe(T0)
    got = web.read_metrics(T0, obs, [MetricQuery("queue", "external", {}, 60.0, shapes=frozenset({"values"})),
                                     MetricQuery("rps", "object", {}, 60.0, shapes=frozenset({"value"}))])
    assert got == {"queue": {"timestamp": T0, "window": 60.0, "values": [40.0]},
                   "rps": {"timestamp": T0, "window": 60.0, "value": 50.0}}


def test_no_ready_member_means_no_member_samples_never_zero():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 2, "members": 0, "load": 1.0})
    m = web.read_metrics(T0, web.observe(T0), [CPU])["cpu"]
    assert "members" not in m and "value" not in m and m.get("series") == []


def test_metric_windows_end_at_the_metric_delay():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 1, "load": 1.0, "metric_delay": 180})
    assert web.metric_delay_seconds == 180
    assert web.read_metrics(T0, web.observe(T0), [CPU])["cpu"]["timestamp"] == T0 - 180


def test_managed_by_names_the_other_autoscaler():
    fake = FakeProvider()
    assert fake.target({"name": "a", "managed_by": "HorizontalPodAutoscaler/shop/web"}).managed_by() == \
        "HorizontalPodAutoscaler/shop/web"
    assert fake.target({"name": "b"}).managed_by() is None


def test_the_provider_bounds_clamp_a_write_and_say_so():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 2, "max_size": 5})
    change = web.set_size(9)
    assert change.size == 5 and "max_size" in change.note
    assert web.observe(T0).max_size == 5


def test_a_negative_size_is_invalid():
    web = FakeProvider().target({"name": "web"})
    with pytest.raises(ProviderError) as e:
        web.set_size(-1)
    assert e.value.kind is ErrorKind.INVALID


def test_calls_are_counted_per_method_and_target():
    fake = FakeProvider()
    a, b = fake.target({"name": "a"}), fake.target({"name": "b"})
    for k in range(3):
        a.observe(T0 + k)
    a.read_metrics(T0, a.observe(T0 + 3), [CPU])
    a.set_size(2)
    b.set_size(2)
    b.set_size(2)
    assert fake.count("observe", "a") == 4 and fake.count("observe", "b") == 0
    assert fake.reads("a") == 5 and fake.writes("a") == 1 and fake.writes("b") == 2 and fake.writes() == 3
    assert fake.applied_writes("b") == 2 and fake.history("b") == [(T0 + 3, 2), (T0 + 3, 2)]


def test_a_write_on_one_in_flight_is_recorded_as_stacked():
    fake = FakeProvider(settle_observes=1)
    web = fake.target({"name": "web"})
    web.set_size(2)
    assert fake.stacked_writes == []
    web.set_size(3)
    assert [(t, s) for t, s, _ in fake.stacked_writes] == [("web", 3)]


def _run(fake, names, rounds):
    targets = [fake.target({"name": n, "size": 2}) for n in names]
    for k in range(rounds):
        for t in targets:
            for call in (lambda: t.observe(T0 + k), lambda: t.set_size(2 + k % 3)):
                try:
                    call()
                except ProviderError:
                    pass
    return sorted((r.target, r.call, r.nth, r.kind) for r in fake.faults_raised)


def test_faults_fail_the_rate_asked_and_the_same_calls_in_any_order():
    spec = {"rate": 0.3, "seed": 11}
    first = _run(FakeProvider(faults=spec), ["a", "b", "c"], 400)
    again = _run(FakeProvider(faults=spec), ["c", "b", "a"], 400)
    assert first == again
    assert 0.27 < len(first) / (3 * 400 * 2) < 0.33
    kinds = {k for *_, k in first}
    assert kinds == {"throttled", "throttled_retry_after", "timeout", "5xx", "conflict"}
    assert _run(FakeProvider(faults={"rate": 0.3, "seed": 12}), ["a", "b", "c"], 400) != first


def test_each_fault_kind_is_the_error_kind_the_controller_acts_on():
    expected = {"throttled": (ErrorKind.THROTTLED, None), "throttled_retry_after": (ErrorKind.THROTTLED, 12.0),
                "timeout": (ErrorKind.TRANSIENT, None), "5xx": (ErrorKind.TRANSIENT, None),
                "conflict": (ErrorKind.CONFLICT, None), "not_found": (ErrorKind.NOT_FOUND, None),
                "forbidden": (ErrorKind.FORBIDDEN, None), "invalid": (ErrorKind.INVALID, None)}
    for kind, (error_kind, retry_after) in expected.items():
        fake = FakeProvider(faults={"rate": 1.0, "kinds": [kind], "retry_after": 12})
        web = fake.target({"name": "web", "size": 2})
        with pytest.raises(ProviderError) as e:
            web.set_size(5)
        assert (e.value.kind, e.value.retry_after) == (error_kind, retry_after), kind
        assert fake.size("web") == 2 and fake.applied_writes() == 0, f"{kind}: a failed write took effect"


def test_an_applied_timeout_takes_effect_then_fails():
    fake = FakeProvider(script=[{"call": "set_size", "kind": "applied_timeout"}])
    web = fake.target({"name": "web", "size": 2})
    with pytest.raises(ProviderError) as e:
        web.set_size(5)
    assert e.value.kind is ErrorKind.TRANSIENT and fake.size("web") == 5


def test_scripted_faults_hit_the_nth_call_of_a_target():
    fake = FakeProvider(script=[{"target": "web", "call": "observe", "nth": 2, "kind": "throttled_retry_after",
                                 "retry_after": 5}])
    web, api = fake.target({"name": "web"}), fake.target({"name": "api"})
    web.observe(T0)
    api.observe(T0)
    api.observe(T0)
    with pytest.raises(ProviderError) as e:
        web.observe(T0)
    assert e.value.retry_after == 5
    web.observe(T0)
    fake.inject("conflict", target="api", times=2)
    for _ in range(2):
        with pytest.raises(ProviderError):
            api.set_size(3)
    api.set_size(3)
    assert [r.kind for r in fake.faults_raised] == ["throttled_retry_after", "conflict", "conflict"]


@pytest.mark.parametrize("ref, key", [
    ({}, "ref.name"), ({"name": ""}, "ref.name"), ({"name": "w", "zone": "x"}, "ref.zone"),
    ({"name": "w", "size": "3"}, "ref.size"), ({"name": "w", "size": -1}, "ref.size"),
    ({"name": "w", "size": 2, "members": 3}, "ref.members"), ({"name": "w", "load": {"bse": 1}}, "ref.load.bse"),
    ({"name": "w", "metrics": {"q": {"as": "sum"}}}, "ref.metrics.q.as"),
    ({"name": "w", "min_size": 5, "max_size": 2}, "ref.max_size"),
])
def test_a_bad_ref_names_its_key(ref, key):
    with pytest.raises(RefError) as e:
        FakeProvider().target(ref)
    assert e.value.key == key


@pytest.mark.parametrize("options, key", [
    ({"faults": {"rate": 1.5}}, "faults.rate"), ({"faults": {"kinds": ["boom"]}}, "faults.kinds[0]"),
    ({"faults": {"calls": ["delete"]}}, "faults.calls[0]"), ({"script": [{"kind": "x"}]}, "script[0].kind"),
    ({"pacing": {"writes_per_minute": 4}}, "pacing"), ({"capabilities": ["teleport"]}, "capabilities"),
    ({"colour": "red"}, "colour"), ({"settle_observes": 1.5}, "settle_observes"),
])
def test_bad_options_name_their_key(options, key):
    with pytest.raises(RefError) as e:
        FakeProvider(**options)
    assert e.value.key == key


def test_capabilities_and_pacing_are_settable():
    assert FakeProvider().capabilities == {Capability.METRICS, Capability.VIRTUAL_CLOCK, Capability.NATIVE_DECISIONS,
                                           Capability.EVENTS, Capability.DELETE_MEMBERS}
    fake = FakeProvider(capabilities=["metrics"], pacing={"writes_per_second": 0.0667, "write_burst": 1})
    assert fake.capabilities == {Capability.METRICS}
    assert fake.pacing == Pacing(writes_per_second=0.0667, write_burst=1)


def test_a_world_on_disk_continues_in_a_new_provider(tmp_path):
    world = tmp_path / "world.json"
    fake = FakeProvider(world=str(world), settle_observes=1)
    web = fake.target({"name": "web", "size": 2})
    web.observe(T0)
    web.set_size(4)
    again = FakeProvider(world=str(world), settle_observes=1)
    web2 = again.target({"name": "web", "size": 2})
    assert web2.observe(T0 + 15).in_flight            # the write's one in-flight observe
    obs = web2.observe(T0 + 30)
    assert obs.current_replicas == 4 and obs.in_flight is None and obs.status_replicas == 4
    assert again.history("web") == [(T0, 4)] and again.count("observe", "web") == 3
    assert [p.name for p in tmp_path.iterdir()] == ["world.json"]   # no temporary file left behind
    assert json.loads(world.read_text())["targets"]["web"]["size"] == 4


def test_a_file_that_is_not_a_world_is_a_ref_error(tmp_path):
    (tmp_path / "w.json").write_text("{]")
    with pytest.raises(RefError) as e:
        FakeProvider(world=str(tmp_path / "w.json"))
    assert e.value.key == "world"


def test_kill_after_write_dies_after_the_write_is_saved(tmp_path):
    world = tmp_path / "world.json"
    code = ("from scalebridge.testing.fake import FakeProvider\n"
            f"f = FakeProvider(world={str(world)!r}, kill_after_write=[2])\n"
            "t = f.target({'name': 'web'})\n"
            "t.set_size(3)\nt.set_size(6)\nt.set_size(9)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.returncode == -9
    after = FakeProvider(world=str(world))
    assert after.target({"name": "web"}).state.size == 6 and after.history("web")[-1][1] == 6


def test_kill_at_call_dies_before_the_call_takes_effect(tmp_path):
    world = tmp_path / "world.json"
    code = ("from scalebridge.testing.fake import FakeProvider\n"
            f"f = FakeProvider(world={str(world)!r}, kill_at_call=[3])\n"
            "t = f.target({'name': 'web'})\n"
            "t.observe(1767225600.0)\nt.set_size(3)\nt.set_size(6)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.returncode == -9
    after = FakeProvider(world=str(world))
    assert after.target({"name": "web"}).state.size == 3 and after.total_calls == 3


def test_kill_after_seconds_dies_once_at_the_first_call_past_the_time(tmp_path):
    world = tmp_path / "world.json"
    code = ("from scalebridge.testing.fake import FakeProvider\n"
            f"f = FakeProvider(world={str(world)!r}, kill_after_seconds=[30])\n"
            "t = f.target({'name': 'web'})\n"
            "for k in range(5):\n"
            "    t.observe(1767225600.0 + 15 * k)\n"
            "    t.set_size(2 + k)\n")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert first.returncode == -9
    after = FakeProvider(world=str(world))
    assert [s for _, s in after.history("web")] == [2, 3] and after.kills_fired == [30.0]
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert second.returncode == 0          # the kill fired once, in the dead process


def test_one_target_per_name():
    fake = FakeProvider()
    web = fake.target({"name": "web", "size": 2})
    assert fake.target({"name": "web", "size": 2}) is web
    with pytest.raises(RefError) as e:
        fake.target({"name": "web", "size": 5})
    assert e.value.key == "ref.name"
