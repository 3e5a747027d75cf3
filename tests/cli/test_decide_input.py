"""How ``scalebridge decide`` and ``explain`` read requests: one JSON object, an array or
JSON Lines (CRLF, blank lines, byte-order marks, non-UTF-8 files), odd numbers, large
inputs; and bad input — one clear line naming the JSON path (or the line and column),
exit 2, never a traceback, the other requests still decided.

Source: docs/protocol.md (input forms, malformed requests)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scalebridge import decide, RequestError
from scalebridge.testing.requests import cpu_request, NOW


def _bad(cli, req, *expected_fragments):
    proc = cli("decide", stdin=json.dumps(req) if not isinstance(req, str) else req)
    assert proc.returncode == 2, proc.stdout
    err = proc.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    for frag in expected_fragments:
        assert frag in err, err
    return err


def test_wrong_type_names_json_path(cli):
    req = cpu_request(4, "500m")
    req["observations"]["members"][1]["ready"] = "yes"
    _bad(cli, req, "$.observations.members[1].ready")


def test_unknown_request_field(cli):
    req = cpu_request(4, "500m")
    req["observations"]["metrics"]["cpu"]["timestmap"] = 1
    _bad(cli, req, "$.observations.metrics.cpu.timestmap", "unknown field")


def test_misspelled_policy_field(cli):
    req = cpu_request(4, "500m")
    req["policy"]["max_replica"] = 10
    _bad(cli, req, "$.policy.max_replica", "unknown field")


def test_negative_min(cli):
    req = cpu_request(4, "500m", policy={"min_replicas": -1})
    _bad(cli, req, "$.policy.min_replicas", "greater than or equal to 0")


def test_min_above_max(cli):
    req = cpu_request(4, "500m", policy={"min_replicas": 9, "max_replicas": 3})
    _bad(cli, req, "$.policy.min_replicas", "min_replicas (9) is greater than max_replicas (3)")


def test_unknown_metric_type(cli):
    req = cpu_request(4, "500m")
    req["policy"]["metrics"][0]["type"] = "cpu"
    _bad(cli, req, "$.policy.metrics[0].type", "'resource'", "'external'")


def test_non_numeric_target(cli):
    req = cpu_request(4, "500m")
    req["policy"]["metrics"][0]["target"]["average_utilization"] = "sixty"
    _bad(cli, req, "$.policy.metrics[0].target.average_utilization")


def test_malformed_quantity(cli):
    req = cpu_request(4, "500m")
    req["observations"]["metrics"]["cpu"]["members"]["web-0"] = "5x00m"
    _bad(cli, req, "$.observations.metrics.cpu.members.web-0", "invalid quantity")


def test_invalid_json_and_line_numbers(cli):
    good = json.dumps(cpu_request(4, "500m"))
    proc = cli("decide", stdin=good + "\n{not json\n")
    assert proc.returncode == 2
    assert len(proc.stdout.splitlines()) == 1          # the first response was written
    assert "line 2" in proc.stderr and "invalid JSON" in proc.stderr


def test_empty_input(cli):
    _bad(cli, "", "empty")


def test_unknown_semantics(cli):
    _bad(cli, cpu_request(4, "500m", semantics="openshift"), "$.semantics", "unknown semantics")


@pytest.mark.parametrize("field,value", [("current_replicas", "4"), ("current_replicas", 4.5), ("now", "soon")])
def test_no_silent_coercion(cli, field, value):
    req = cpu_request(4, "500m")
    req[field] = value
    _bad(cli, req, f"$.{field}")


def test_missing_now(cli):
    req = cpu_request(4, "500m")
    del req["now"]
    _bad(cli, req, "$.now", "required")


def test_bad_duration(cli):
    req = cpu_request(4, "500m", policy={"behavior": {"scale_down": {"stabilization_window_seconds": "5 minutes"}}})
    _bad(cli, req, "$.policy.behavior.scale_down.stabilization_window_seconds", "invalid duration")


def test_python_api_raises_request_error():
    from scalebridge import RequestError, decide
    req = cpu_request(4, "500m", policy={"min_replicas": 9, "max_replicas": 3})
    with pytest.raises(RequestError) as e:
        decide(req)
    assert e.value.path == "$.policy.min_replicas"


def _one_line_error(proc, *fragments):
    """exit 2, exactly one stderr line, no traceback, every fragment in it."""
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    for frag in fragments:
        assert frag in err, err
    return err


def _good() -> str:
    return json.dumps(cpu_request(4, "500m"))


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return str(p)


def test_json_lines_with_crlf_and_blank_lines(cli):
    g = _good()
    proc = cli("decide", stdin="\r\n\r\n" + g + "\r\n   \r\n" + g + "\r\n\r\n" + g + "\r\n")
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 3


def test_a_pretty_printed_crlf_document(cli):
    text = json.dumps(cpu_request(4, "500m"), indent=2).replace("\n", "\r\n")
    proc = cli("decide", stdin=text)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1


def test_a_multi_line_array_reports_a_bad_item_and_decides_the_others(cli):
    good, bad = cpu_request(4, "500m"), {**cpu_request(4, "500m"), "current_replicas": True}
    proc = cli("decide", stdin=json.dumps([good, bad, 5, good], indent=1))
    assert proc.returncode == 2 and len(proc.stdout.splitlines()) == 2
    errs = proc.stderr.strip().splitlines()
    assert errs[0].startswith("scalebridge decide: request [1]: $.current_replicas:")
    assert errs[1].startswith("scalebridge decide: request [2]: $: a request must be a JSON object")


@pytest.mark.parametrize("raw, fragment", [
    ('"now": "2026-01-01T00:00:00Z"', "$.now: Input should be a valid number"),
    ('"now": 1e400', "$.now: Input should be a finite number"),
    ('"now": NaN', "$.now: Input should be a finite number"),
    ('"current_replicas": 1e400', "$.current_replicas: Input should be a valid integer"),
    ('"current_replicas": true', "$.current_replicas: Input should be a valid integer, got a boolean"),
])
def test_odd_numbers_in_a_request(cli, raw, fragment):
    key = raw.split(":")[0]
    text = re.sub(key + r': [^,]+', raw, _good(), count=1)
    _one_line_error(cli("decide", stdin=text), fragment)


def test_negative_zero_is_zero(cli):
    text = _good().replace('"current_replicas": 4', '"current_replicas": -0')
    proc = cli("decide", stdin=text)
    assert proc.returncode == 0 and json.loads(proc.stdout)["current_replicas"] == 0


def test_a_utf8_bom_is_one_clear_line(cli, tmp_path):
    f = _write(tmp_path, "bom.json", b"\xef\xbb\xbf" + _good().encode())
    _one_line_error(cli("decide", f), "BOM")


def test_ten_thousand_members(cli):
    n = 10_000
    req = cpu_request(n, "500m", policy={"max_replicas": 100_000})
    proc = cli("decide", "--semantics", "all", stdin=json.dumps(req))
    assert proc.returncode == 0, proc.stderr[-500:]
    resps = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(resps) == 5 and all(r["current_replicas"] == n for r in resps)


def test_a_bad_line_after_a_blank_first_line_keeps_its_line_number(cli):
    proc = cli("decide", stdin="\n\n{oops\n" + _good() + "\n")
    assert proc.returncode == 2 and len(proc.stdout.splitlines()) == 1
    _one_line_error(proc, "line 3: $: invalid JSON")


def test_decide_non_utf8_file(cli, tmp_path):
    f = _write(tmp_path, "bytes.json", b"\xff\xfe\x00{}")
    _one_line_error(cli("decide", f), f, "UTF-8")


def test_a_one_line_array_of_requests(cli):
    proc = cli("decide", stdin="[" + _good() + "," + _good() + "]\n")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 2


def test_json_lines_two_bad_lines_first_lose_nothing(cli):
    proc = cli("decide", stdin="{oops\n{oops2\n" + _good() + "\n" + _good() + "\n")
    assert proc.returncode == 2
    assert len(proc.stdout.splitlines()) == 2
    errs = proc.stderr.strip().splitlines()
    assert len(errs) == 2 and "line 1" in errs[0] and "line 2" in errs[1]


def test_a_huge_metric_value_is_no_traceback_and_loses_nothing(cli):
    bad = cpu_request(4, "500m")
    bad["observations"]["metrics"]["cpu"]["members"]["web-0"] = 1e308
    proc = cli("decide", stdin="\n".join([_good(), json.dumps(bad), _good()]) + "\n")
    assert "Traceback" not in proc.stderr, proc.stderr[-300:]
    assert proc.returncode in (0, 2)
    # either an error response for line 2 or a one-line report of it: the third line is decided
    assert len(proc.stdout.splitlines()) >= 2


def test_a_misspelled_required_request_key_names_the_typo(cli):
    text = _good().replace('"now"', '"nwo"')
    _one_line_error(cli("decide", stdin=text), "nwo")


@pytest.mark.divergence("request-duplicate-key")
def test_a_duplicate_request_key_is_rejected(cli):
    text = _good().replace('"current_replicas": 4', '"current_replicas": 4, "current_replicas": 9')
    _one_line_error(cli("decide", stdin=text), "current_replicas", "duplicate")


def test_json_lines_bad_line_column(cli):
    proc = cli("decide", stdin=_good() + '\n{"now":\n' + _good() + "\n")
    assert len(proc.stdout.splitlines()) == 2
    _one_line_error(proc, "line 2: $: invalid JSON at column 8")


def _bad_line(cli, req, *fragments) -> str:
    proc = cli("decide", stdin=req if isinstance(req, str) else json.dumps(req))
    assert proc.returncode == 2, proc.stdout
    err = proc.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err
    return err


@pytest.mark.parametrize("missing", ["time", "change"])
def test_a_scale_event_without_time_or_change_is_a_malformed_request(cli, missing):
    event = {"time": NOW - 60, "change": 1, "cause": "metric"}
    del event[missing]
    req = cpu_request(4, "500m", state={"scale_up_events": [event]})
    _bad_line(cli, req, f"$.state.scale_up_events[0].{missing}")
    with pytest.raises(RequestError):
        decide(req)


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


# the protocol: "one request object, or JSON Lines of them -> one response object per request, same
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


def test_kubernetes_needs_max_replicas_even_with_profiles(cli):
    """Profiles are Azure's; under kubernetes (as under gce) they do not stand in for
    maxReplicas. A profiles-only policy passed the check and then crashed comparing
    the current count with None: it is now a malformed request naming the field."""
    req = {"now": NOW, "current_replicas": 2, "semantics": "kubernetes",
           "policy": {"profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 4, "default": 1}}]}}
    proc = cli("decide", stdin=json.dumps(req))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "$.policy.max_replicas" in proc.stderr
