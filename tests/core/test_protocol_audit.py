"""Audit of the implementation against spec/decide-protocol.md: one test per
divergence found, each quoting the spec line it holds the implementation to."""
import copy
import json

import pytest

from scalebridge import RequestError, decide, decide_all
from scalebridge.policyfile import parse_policy_text
from scalebridge.testing.requests import NOW, cpu_request

SEMANTICS = ["kubernetes", "gce", "azure", "aws", "scalebridge"]


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


def _bad_line(cli, req, *fragments) -> str:
    proc = cli("decide", stdin=req if isinstance(req, str) else json.dumps(req))
    assert proc.returncode == 2, proc.stdout
    err = proc.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err
    return err


# --------------------------------------------------------------------------- null == missing
# spec, Conventions: "`null` and a missing key mean the same thing."

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


# --------------------------------------------------------------------------- state
# spec, state: "{"scale_up_events": [{"time": …, "change": 2, "cause": "rule"}] …}" — an event
# is a time and a change; one without them is malformed ("exit status 2 and one line on
# stderr naming the field"), not a crash.

@pytest.mark.parametrize("missing", ["time", "change"])
def test_a_scale_event_without_time_or_change_is_a_malformed_request(cli, missing):
    event = {"time": NOW - 60, "change": 1, "cause": "metric"}
    del event[missing]
    req = cpu_request(4, "500m", state={"scale_up_events": [event]})
    _bad_line(cli, req, f"$.state.scale_up_events[0].{missing}")
    with pytest.raises(RequestError):
        decide(req)


# spec, Conventions: "Durations are seconds. Policy *files* may also write durations as
# "90s", "5m", "1h" or ISO-8601 ("PT5M"); the protocol accepts those too." —
# last_scale.cooldown_seconds is a duration.
def test_last_scale_cooldown_accepts_duration_strings():
    base = cpu_request(4, "500m")
    a = decide(_set(base, ("state",), {"last_scale": {"time": NOW - 10, "cooldown_seconds": "5m"}}), "aws")
    b = decide(_set(base, ("state",), {"last_scale": {"time": NOW - 10, "cooldown_seconds": 300}}), "aws")
    assert _without_state(a) == _without_state(b)


# spec, state: "The response's `state` is the request's state after this decision" —
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


# spec: "scalebridge decide --semantics all   # one response per built-in semantics" —
# a policy with instance profiles (no top-level max) still gets one response per semantics.
def test_semantics_all_answers_for_every_semantics_on_a_profile_policy(cli):
    req = {"now": NOW, "current_replicas": 2,
           "policy": {"profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 4, "default": 1},
                                    "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70,
                                               "action": {"direction": "Increase", "type": "ChangeCount"}}]}]},
           "observations": {"metrics": {"cpu": {"series": [[NOW - 240 + 60 * i, 90] for i in range(5)]}}}}
    proc = cli("decide", "--semantics", "all", stdin=json.dumps(req))
    assert "Traceback" not in proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [r["semantics"] for r in lines] == SEMANTICS
    assert next(r for r in lines if r["semantics"] == "azure")["desired_replicas"] == 3


# --------------------------------------------------------------------------- bad input
# spec: "A malformed request is not a response: exit status 2 and one line on stderr naming
# the field." — the JSON path of the field itself, not of the object around it.

@pytest.mark.parametrize("mutate, path", [
    (lambda r: r["policy"]["metrics"][0].__setitem__("target", {"type": "Utilization"}),
     "$.policy.metrics[0].target.average_utilization"),
    (lambda r: r["policy"]["metrics"][0].__setitem__("target", {"type": "AverageValue"}),
     "$.policy.metrics[0].target.average_value"),
    (lambda r: r["policy"]["metrics"][0].__setitem__("type", "container_resource"),
     "$.policy.metrics[0].container"),
    (lambda r: r["policy"].__setitem__("rules", [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1,
                                                  "action": {"direction": "Increase"}}]),
     "$.policy.rules[0].action.type"),
    (lambda r: r["policy"].__setitem__("rules", [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1,
                                                  "action": {"type": "ChangeCount"}}]),
     "$.policy.rules[0].action.direction"),
    (lambda r: r["policy"].__setitem__("rules", [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1}]),
     "$.policy.rules[0].action"),
    (lambda r: (r.pop("semantics"), r["policy"].__setitem__("semantics", "openshift")),
     "$.policy.semantics"),
])
def test_errors_name_the_field_by_its_json_path(cli, mutate, path):
    req = cpu_request(4, "500m")
    mutate(req)
    err = _bad_line(cli, req)
    assert err.split(": ")[1] == path, err


# spec: "one request object, or JSON Lines of them -> one response object per request, same
# order" and "Unknown request fields are an error (exit 2, one line naming the field by its
# JSON path)" — a bad line costs its own response only: every bad line is reported with its
# location and every good line is still decided.
def test_json_lines_a_bad_line_does_not_lose_the_others(cli):
    good = json.dumps(cpu_request(4, "500m"))
    bad_field = json.dumps({**cpu_request(4, "500m"), "nwo": 1})
    proc = cli("decide", stdin="\n".join([good, bad_field, good, "{not json", good]) + "\n")
    assert proc.returncode == 2
    assert len(proc.stdout.splitlines()) == 3
    errs = proc.stderr.strip().splitlines()
    assert len(errs) == 2 and "Traceback" not in proc.stderr
    assert "line 2" in errs[0] and "$.nwo" in errs[0]
    assert "line 4" in errs[1] and "invalid JSON" in errs[1]


def test_json_lines_a_bad_first_line_does_not_lose_the_others(cli):
    good = json.dumps(cpu_request(4, "500m"))
    proc = cli("decide", stdin="{not json\n" + good + "\n" + good + "\n")
    assert proc.returncode == 2
    assert len(proc.stdout.splitlines()) == 2
    assert "line 1" in proc.stderr and "invalid JSON" in proc.stderr


# --------------------------------------------------------------------------- policy files
# spec: "`policy` | the policy, exactly as in a policy file" / "a policy file holds the same
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


# --------------------------------------------------------------------------- response
# spec, Response: "`metrics[i]` follows `policy.metrics[i]` for target metrics, then the rules"
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


# --------------------------------------------------------------------------- state round trip
# spec, Request: "`state` | the previous response's `state`" — every response's state is a
# valid next request's state.
@pytest.mark.parametrize("semantics", SEMANTICS)
def test_response_state_round_trips(semantics):
    req = cpu_request(4, "900m", semantics=semantics, policy={"behavior": {}})
    for step in range(3):
        resp = decide(req)
        req = {**req, "now": req["now"] + 30, "current_replicas": resp["desired_replicas"],
               "state": json.loads(json.dumps(resp["state"]))}


def test_kubernetes_needs_max_replicas_even_with_profiles(cli):
    """Profiles are Azure's; under kubernetes (as under gce) they do not stand in for
    maxReplicas. A profiles-only policy passed the check and then crashed comparing
    the current count with None: it is now a malformed request naming the field."""
    req = {"now": NOW, "current_replicas": 2, "semantics": "kubernetes",
           "policy": {"profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 4, "default": 1}}]}}
    proc = cli("decide", stdin=json.dumps(req))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "$.policy.max_replicas" in proc.stderr
