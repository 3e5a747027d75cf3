"""The decision protocol's rules that hold for every semantics: null means the same as a
missing key, null rule fields take their defaults, duration strings, the request state
kept in error responses, policy-file modes and ISO times, a disabled metric keeping its
index, and the response state round-tripping.

Source: docs/protocol.md."""

import copy
import json

import pytest

from scalebridge import decide, decide_all
from scalebridge.policyfile import parse_policy_text
from scalebridge.testing.requests import cpu_request, NOW


SEMANTICS = ("kubernetes", "gce", "azure", "aws", "scalebridge")


def _without_state(resp: dict) -> dict:
    return {k: v for k, v in resp.items() if k != "state"}


def _set(req: dict, path: tuple, value) -> dict:
    req = copy.deepcopy(req)
    d = req
    for p in path[:-1]:
        d = d[p]
    d[path[-1]] = value
    return req


def _drop(req: dict, path: tuple) -> dict:
    req = copy.deepcopy(req)
    d = req
    for p in path[:-1]:
        d = d[p]
    d.pop(path[-1], None)
    return req


_NULLABLE = [
    ("policy", "mode"), ("policy", "rules"), ("policy", "profiles"), ("policy", "schedules"),
    ("policy", "metrics", 0, "enabled"), ("policy", "metrics", 0, "disable_scale_in"),
    ("settings",), ("settings", "metric_delay_seconds"), ("observations",),
    ("observations", "metrics"), ("observations", "members", 0, "phase"),
    ("observations", "members", 0, "deleting"), ("observations", "members", 0, "weight"),
]


@pytest.mark.parametrize("path", _NULLABLE, ids=[".".join(map(str, p)) for p in _NULLABLE])
@pytest.mark.parametrize("semantics", ["kubernetes", "scalebridge"])
def test_null_means_the_same_as_a_missing_key(path, semantics):
    req = cpu_request(4, "900m", semantics=semantics, state={"recommendations": []},
                      settings={"metric_delay_seconds": 0})
    req["policy"].update({"mode": "ON", "rules": [], "profiles": [], "schedules": []})
    req["observations"]["members"][0].update({"deleting": False, "weight": 1})
    assert decide(_set(req, path, None)) == decide(_drop(req, path))


def test_a_null_metric_observation_is_a_metric_not_observed():
    req = cpu_request(4, "900m", state={"recommendations": []})
    with_null = _set(req, ("observations", "metrics", "memory"), None)
    assert decide(with_null) == decide(req)
    req["policy"]["rules"] = [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1,
                               "action": {"direction": "Increase", "type": "ChangeCount"}}]
    req["observations"]["metrics"]["cpu"]["member_series"] = {"web-0": None}
    decide(req, "azure")   # no error: a null member series is an absent one


def test_null_rule_fields_take_their_defaults():
    req = {"semantics": "azure", "now": NOW, "current_replicas": 2,
           "policy": {"min_replicas": 1, "max_replicas": 10, "rules": [
               {"metric": "cpu", "statistic": None, "time_grain_seconds": None, "time_window_seconds": None,
                "time_aggregation": None, "operator": "GreaterThan", "threshold": 50,
                "divide_per_instance": None, "enabled": None, "treat_missing_data": None,
                "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": None}}]},
           "observations": {"metrics": {"cpu": {"series": [[NOW - 240 + 60 * i, 90] for i in range(5)]}}}}
    assert decide(req)["desired_replicas"] == 3


# the protocol, Conventions: "Durations are seconds. Policy *files* may also write durations as
# "90s", "5m", "1h" or ISO-8601 ("PT5M"); the protocol accepts those too." —
# last_scale.cooldown_seconds is a duration.
def test_last_scale_cooldown_accepts_duration_strings():
    base = cpu_request(4, "500m")
    a = decide(_set(base, ("state",), {"last_scale": {"time": NOW - 10, "cooldown_seconds": "5m"}}), "aws")
    b = decide(_set(base, ("state",), {"last_scale": {"time": NOW - 10, "cooldown_seconds": 300}}), "aws")
    assert _without_state(a) == _without_state(b)


# the protocol, state: "The response's `state` is the request's state after this decision" —
# under --semantics all, a semantics that cannot run the policy must not drop the history.
def test_semantics_all_error_responses_keep_the_request_state():
    history = {"recommendations": [{"time": NOW - 30, "replicas": 4}],
               "sizes": [{"time": NOW - 30, "replicas": 4}],
               "scale_up_events": [{"time": NOW - 30, "change": 1, "cause": "metric"}],
               "scale_down_events": []}
    req = cpu_request(4, "500m", state=history)
    del req["policy"]["min_replicas"]          # gce and aws require it
    out = {r["semantics"]: r for r in decide_all(req)}
    for name in ("gce", "aws"):
        assert out[name]["error"] and out[name]["desired_replicas"] == 4
        assert out[name]["state"] == history


# the protocol: "`policy` | the policy, exactly as in a policy file" / "a policy file holds the same
# keys in YAML"; "`mode`: `ON`, `ONLY_SCALE_OUT` (alias `ONLY_UP`), `OFF`";
# "`fixed_date.start/end` may also be ISO-8601 strings without offset, read in `time_zone`".
def test_policy_file_mode_on_off_and_unquoted_iso_times():
    text = """
min_replicas: 1
max_replicas: 10
mode: OFF
profiles:
  - name: launch
    capacity: {minimum: 2, maximum: 5, default: 2}
    fixed_date: {start: 2026-01-01T00:00:00, end: 2026-01-02, time_zone: Europe/Paris}
"""
    p = parse_policy_text(text)
    assert p.mode == "OFF"
    assert p.profiles[0].fixed_date.start == "2026-01-01T00:00:00"
    assert parse_policy_text(text.replace("mode: OFF", "mode: ON")).mode == "ON"


# the protocol, Response: "`metrics[i]` follows `policy.metrics[i]` for target metrics, then the rules"
@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "aws", "scalebridge"])
def test_a_disabled_metric_keeps_its_index(semantics):
    req = cpu_request(4, "900m", semantics=semantics, state={"recommendations": []})
    req["policy"]["metrics"] = [
        {"type": "resource", "name": "cpu", "enabled": False,
         "target": {"type": "Utilization", "average_utilization": 50}},
        {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}]
    req["observations"]["metrics"]["queue"] = {"value": 80, "timestamp": NOW - 10}
    names = [m["name"] for m in decide(req)["metrics"]]
    assert names[:2] == ["cpu", "queue"]


# the protocol, Request: "`state` | the previous response's `state`" — every response's state is a
# valid next request's state.
@pytest.mark.parametrize("semantics", SEMANTICS)
def test_response_state_round_trips(semantics):
    req = cpu_request(4, "900m", semantics=semantics, policy={"behavior": {}})
    for step in range(3):
        resp = decide(req)
        req = {**req, "now": req["now"] + 30, "current_replicas": resp["desired_replicas"],
               "state": json.loads(json.dumps(resp["state"]))}


def test_a_member_or_observation_is_slotted_with_every_field_however_it_is_made():
    """The semantics' per-member loops read a member's fields as attributes: the core's
    types are slotted dataclasses (no ``__dict__``, reads the interpreter specializes),
    and every way a member or an observation is made — validated, made directly with some
    fields, copied with an update, the simulator's fleet — holds every declared field, the
    defaults included."""
    import dataclasses

    from scalebridge.protocol import Member, MetricObservation
    from scalebridge.simulator.fleet import Fleet, parse_startup

    made = [
        Member(name="a"),
        Member.model_validate({"name": "b", "ready": True, "requests": {"cpu": "500m"}, "count": 3}),
        Member.model_construct(name="c", ready=False),
        Member(name="d").model_copy(update={"phase": "Pending"}),
        MetricObservation(members={"a": 1}),
        MetricObservation.model_construct(value=2),
        MetricObservation(value=3).model_copy(update={"error": "gone"}),
    ]
    fleet = Fleet(3, tick_seconds=15.0, startup=parse_startup("60"))
    fleet.resize(5, 0)   # two members starting at tick 0: Pending
    made += fleet.members()[0]
    assert len(made) > 7
    for m in made:
        assert not hasattr(m, "__dict__"), type(m).__name__
        assert {f.name for f in dataclasses.fields(m)} == set(type(m).__slots__)
        for f in dataclasses.fields(m):
            getattr(m, f.name)   # every field is there
    assert (made[2].phase, made[2].count) == ("Running", 1)   # the defaults
    assert (made[3].name, made[3].phase) == ("d", "Pending") and made[6].error == "gone"
