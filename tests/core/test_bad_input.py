"""Bad input: one clear line naming the location, exit 2, no traceback."""
import json
import textwrap

import pytest

from scalebridge.testing.requests import cpu_request


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
    _bad(cli, req, "$.policy", "min_replicas (9) is greater than max_replicas (3)")


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
    assert e.value.path == "$.policy"


# -------------------------------------------------------------------------- policy files

BAD_POLICY = textwrap.dedent("""\
    name: web
    min_replicas: -1
    max_replica: 10
    metrics:
      - type: cpu
        name: cpu
        target: {type: Utilization, average_utilization: sixty}
      - type: pods
        name: connections
        target: {type: AverageValue, average_value: 20k0}
    """)


def test_validate_reports_every_error_with_position(cli, tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text(BAD_POLICY)
    proc = cli("validate", str(f))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    text = proc.stderr
    assert f"{f}:2:15: policy.min_replicas" in text
    assert f"{f}:3:1: policy.max_replica: unknown field 'max_replica'; did you mean 'max_replicas'?" in text
    assert f"{f}:5:11: policy.metrics[0].type" in text and "'resource'" in text
    assert f"{f}:7:54: policy.metrics[0].target.average_utilization: expected a number" in text
    assert "policy.metrics[1].target.average_value" in text and "invalid quantity" in text
    assert len(lines) == 5, text
    assert [l.split(":")[1] for l in lines] == ["2", "3", "5", "7", "10"]   # in file order
    assert "Traceback" not in text


def test_validate_ok_and_min_above_max(cli, tmp_path):
    ok = tmp_path / "ok.yaml"
    ok.write_text("min_replicas: 2\nmax_replicas: 8\nmetrics:\n  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}\n")
    proc = cli("validate", str(ok))
    assert proc.returncode == 0 and "ok" in proc.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("min_replicas: 9\nmax_replicas: 3\n")
    proc = cli("validate", str(bad))
    assert proc.returncode == 2 and "min_replicas (9) is greater than max_replicas (3)" in proc.stderr
    assert f"{bad}:1:1" in proc.stderr


def test_validate_invalid_yaml_and_unsafe_tags(cli, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("min_replicas: [1\n")
    proc = cli("validate", str(f))
    assert proc.returncode == 2 and "invalid YAML" in proc.stderr and f"{f}:" in proc.stderr
    f.write_text("min_replicas: !!python/object/apply:os.system ['echo pwned']\n")
    proc = cli("validate", str(f))
    assert proc.returncode == 2 and "pwned" not in proc.stdout


def test_schema_is_json_schema(cli):
    proc = cli("schema")
    schema = json.loads(proc.stdout)
    assert "min_replicas" in schema["properties"] and schema["additionalProperties"] is False
    proc = cli("schema", "--request")
    assert "current_replicas" in json.loads(proc.stdout)["properties"]
