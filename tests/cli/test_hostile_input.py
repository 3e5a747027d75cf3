"""Hostile and impossible input through the real ``scalebridge`` command: bounded cost
(a 2 GB address space and 20 s, in a subprocess), exit 2, one line on stderr naming the
place (JSON path, or file:line:column), never a traceback.

Sources: docs/protocol.md (limits, malformed requests) and docs/policy.md (limits); the
quantity syntax is Kubernetes'
(https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/), the
time range Python's ``datetime`` (years 1 to 9999,
https://docs.python.org/3/library/datetime.html#datetime.MAXYEAR)."""
from __future__ import annotations

import copy
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE = json.loads((ROOT / "examples/requests/resource-utilization.json").read_text())
WEB = (ROOT / "examples/policies/web.yaml").read_text()
LIMIT_BYTES = 2 << 30


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def run_bounded(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *args], input=stdin, capture_output=True,
                          text=True, check=False, preexec_fn=_limit, timeout=20)


def refused(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert len(err.splitlines()) == 1, err[-2000:]
    assert len(err) < 500, err[:600]
    for f in fragments:
        assert f in err, err
    return err


def request(**changes) -> dict:
    """The example request with ``changes`` at dotted paths (``observations.metrics.cpu.members.web-0``)."""
    r = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        *parents, last = dotted.split("/")
        o = r
        for k in parents:
            o = o[int(k)] if isinstance(o, list) else o[k]
        if isinstance(o, list):
            o[int(last)] = value
        else:
            o[last] = value
    return r


def decide(req, *flags: str) -> subprocess.CompletedProcess:
    return run_bounded("decide", *flags, "-", stdin=req if isinstance(req, str) else json.dumps(req))


SAMPLE = "observations/metrics/cpu/members/web-0"
SAMPLE_PATH = "$.observations.metrics.cpu.members.web-0"


# ----------------------------------------------------------------------------- quantities and numbers

def refused_lines(proc: subprocess.CompletedProcess, n: int, *fragments: str) -> list[str]:
    """``n`` JSON Lines requests, each refused on its own line of stderr."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-2000:]
    assert len(lines) == n, proc.stderr[-2000:]
    for k, line in enumerate(lines, start=1):
        # standard input's first line is not numbered (docs/protocol.md)
        assert line.startswith("scalebridge decide: " + (f"line {k}: " if k > 1 else "$")), line
        assert len(line) < 500, line[:600]
        for f in fragments:
            assert f in line, line
    return lines


def test_sample_quantities_past_the_digit_and_exponent_limits_are_refused_by_their_path():
    quantities = ["1e999999999", "1e-999999999", "1e9999999", "1e309", "1e100", "1" * 100_000, "0." + "1" * 100_000]
    text = "".join(json.dumps(request(**{SAMPLE: q})) + "\n" for q in quantities)
    refused_lines(decide(text), len(quantities), SAMPLE_PATH, "invalid quantity")


def test_a_target_quantity_past_the_exponent_limit_is_refused_by_its_path():
    req = request()
    req["policy"]["metrics"][0] = {"type": "pods", "name": "cpu",
                                   "target": {"type": "AverageValue", "average_value": "1e-999999999"}}
    refused(decide(req), "$.policy.metrics[0].target.average_value", "invalid quantity")


def test_a_policy_file_quantity_past_the_exponent_limit_names_file_line_and_field(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(WEB.replace("average_value: 20000", 'average_value: "1e999999999"'))
    refused(run_bounded("validate", str(f)), f"{f}:11:", "policy.metrics[1].target.average_value")


def test_a_sample_number_past_the_magnitude_limit_is_refused_by_its_path():
    refused(decide(request(**{SAMPLE: 1e308})), SAMPLE_PATH, "out of range")


def test_an_integer_literal_of_more_than_4300_digits_in_json_names_line_and_column():
    text = json.dumps(request(**{"current_replicas": 7})).replace('"current_replicas": 7',
                                                                  '"current_replicas": ' + "1" * 5000)
    refused(decide(text), "line 1, column", "more than 4,300 digits")


def test_an_integer_literal_of_more_than_4300_digits_in_yaml_names_file_line_and_field(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(WEB.replace("min_replicas: 2", "min_replicas: " + "1" * 5000))
    refused(run_bounded("validate", str(f)), f"{f}:3:15", "policy.min_replicas", "more than 4,300 digits")


def test_an_integer_past_int64_is_refused_by_its_path():
    refused(decide(request(current_replicas=2**64)), "$.current_replicas")


# ----------------------------------------------------------------------------- durations

@pytest.mark.parametrize("value", ["1e400", 10**400, 1e300, "1" * 500 + "s"])
def test_a_duration_past_the_limit_is_refused_like_numeric_infinity(value):
    req = request()
    req["policy"]["metrics"][0]["initialization_period_seconds"] = value
    refused(decide(req), "$.policy.metrics[0].initialization_period_seconds", "duration")


def test_a_401_digit_integer_duration_in_a_policy_file_is_refused_by_validate(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(WEB.replace("time_window_seconds: 600", "time_window_seconds: " + "9" * 401))
    refused(run_bounded("validate", str(f)), f"{f}:", "policy.scale_in_control.time_window_seconds")


# ----------------------------------------------------------------------------- nesting and text

@pytest.mark.parametrize("depth", [250, 600, 1000, 100_000])
def test_json_nested_past_the_depth_limit_names_line_and_column(depth):
    text = json.dumps(request(**{"policy/name": "X"})).replace('"X"', "[" * depth + "]" * depth)
    refused(decide(text), "invalid JSON at line 1, column", "nested deeper than 200 levels")


def test_json_nested_past_the_depth_limit_in_json_lines_refuses_that_line_only():
    good = json.dumps(BASE)
    bad = json.dumps(request(**{"policy/name": "X"})).replace('"X"', "[" * 1000 + "]" * 1000)
    proc = decide("\n".join([good, bad, good]) + "\n")
    refused(proc, "line 2:", "nested deeper than 200 levels")
    assert len(proc.stdout.splitlines()) == 2


def test_a_lone_surrogate_in_a_string_is_refused_with_its_place():
    text = json.dumps(request(**{"policy/name": "X"})).replace('"X"', '"\\udfff"')
    refused(decide(text), "invalid JSON at line 1, column", "lone surrogate")


def test_a_lone_surrogate_or_deep_nesting_given_to_the_api_is_refused_by_its_json_path():
    from scalebridge import RequestError
    from scalebridge import decide as decide_api
    with pytest.raises(RequestError, match=r"^\$\.policy\.name: not Unicode text: a lone surrogate"):
        decide_api(request(**{"policy/name": "\udfff"}))
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(RequestError, match=r"^\$\.policy\.name(\[0\])+: nested deeper than 200 levels"):
        decide_api(request(**{"policy/name": deep}))


# ----------------------------------------------------------------------------- time range

def test_now_beyond_year_9999_is_refused_for_every_semantics():
    cases = [(sem, now) for sem in ("kubernetes", "gce", "azure", "aws", "scalebridge")
             for now in (253402300800, 1e18)]
    text = "".join(json.dumps(request(now=now, semantics=sem)) + "\n" for sem, now in cases)
    refused_lines(decide(text), len(cases), "$.now", "253402300799")


def test_a_member_time_beyond_year_9999_is_refused_by_its_path():
    refused(decide(request(**{"observations/members/1/start_time": 1e18})),
            "$.observations.members[1].start_time")


def test_a_history_time_beyond_year_9999_is_refused_by_its_path():
    refused(decide(request(**{"state/recommendations": [{"time": 1e17, "replicas": 2}]})),
            "$.state.recommendations[0].time")


# ----------------------------------------------------------------------------- YAML

def _billion_laughs() -> str:
    text = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for c in "bcdefghij":
        prev = chr(ord(c) - 1)
        text += f"{c}: &{c} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    return text


@pytest.mark.parametrize("command", ["validate", "decide"])
def test_a_yaml_alias_bomb_is_refused_at_the_alias(tmp_path, command):
    f = tmp_path / "p.yaml"
    f.write_text(_billion_laughs())
    args = ["validate", str(f)] if command == "validate" else ["decide", "--policy", str(f),
                                                              str(ROOT / "examples/requests/pods.json")]
    refused(run_bounded(*args), f"{f}:", "aliases expand to more than 100,000 values")


def test_a_yaml_alias_bomb_in_a_run_configuration_is_refused(tmp_path):
    f = tmp_path / "run.yaml"
    f.write_text(_billion_laughs() + "targets: []\n")
    proc = run_bounded("run", "--once", str(f))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert "aliases expand to more than 100,000 values" in proc.stderr


def test_a_complex_yaml_key_is_refused_at_the_key(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("min_replicas: 1\n? [a, b]\n: 1\n")
    refused(run_bounded("validate", str(f)), f"{f}:2:3", "a key must be a plain string")


@pytest.mark.parametrize("text", ["x: " + "[" * 5000 + "]" * 5000 + "\n",
                                  "".join("  " * i + "a:\n" for i in range(3000))])   # 9 MB: within the file bound
def test_yaml_nested_thousands_deep_is_refused_with_its_place(tmp_path, text):
    f = tmp_path / "p.yaml"
    f.write_text(text)
    refused(run_bounded("validate", str(f)), f"{f}:", "nested deeper than 200 levels")


# ----------------------------------------------------------------------------- semantics names

def test_validate_semantics_all_refuses_a_policy_naming_an_unknown_semantics(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("semantics: nosuch\nmin_replicas: 1\nmax_replicas: 3\n")
    refused(run_bounded("validate", "--semantics", "all", str(f)), f"{f}:1:12: policy.semantics: ",
            "unknown semantics 'nosuch'")
    # as decide refuses it
    req = request()
    req.pop("semantics")
    req["policy"]["semantics"] = "nosuch"
    refused(decide(req), "$.policy.semantics", "unknown semantics 'nosuch'")


# ----------------------------------------------------------------------------- aws alarm windows

def _aws_rule_request(window: float, grain: float) -> dict:
    from scalebridge.testing.requests import AWS_STEP_OUT, aws_request
    return aws_request(4, 80, rules=[{**AWS_STEP_OUT, "time_window_seconds": window, "time_grain_seconds": grain}])


@pytest.mark.parametrize("window, grain, path", [
    (1e11, 60, "$.policy.rules[0].time_window_seconds"),        # 3,170 years of 1-minute periods
    (1.77e9, 60, "$.policy.rules[0].time_window_seconds"),      # 56 years
    (172_800, 60, "$.policy.rules[0].time_window_seconds"),     # two days: past PutMetricAlarm's one
    (60, 1e-6, "$.policy.rules[0].time_grain_seconds"),         # 60 million periods a minute
])
def test_an_aws_alarm_past_cloudwatch_limits_is_refused_in_bounded_time(window, grain, path):
    # PutMetricAlarm: Period 10, 30 or a multiple of 60; EvaluationPeriods x Period <= 86,400
    # (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html)
    refused(decide(_aws_rule_request(window, grain)), path)


def test_an_aws_alarm_of_one_day_is_decided():
    proc = decide(_aws_rule_request(86_400, 60))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["desired_replicas"] >= 4


# ----------------------------------------------------------------------------- simulate

SIMULATE = ["simulate", str(ROOT / "examples/simulate/policy.yaml"), "--workload", "flash_crowd", "--quiet"]


@pytest.mark.parametrize("flags, fragment", [
    (["--capacity", "10", "--startup", "60", "--tick", "1e-9"], "tick must be between 1 and 86400"),
    (["--capacity", "10", "--startup", "1e308"], "startup"),
    (["--capacity", "10", "--startup", "1e7"], "startup must be between 0 and 1e+06"),
    (["--capacity", "1e-300", "--startup", "60"], "capacity must be between 1e-09 and 1e+15"),
    (["--capacity", "10", "--startup", "60", "--peak", "1e308"], "peak must be between 1e-09 and 1e+15"),
    (["--capacity", "10", "--startup", "60", "--duration", "1e10"], "more than 10,000,000 ticks"),
])
def test_simulate_flags_out_of_range_are_refused_in_one_line(flags, fragment):
    refused(run_bounded(*SIMULATE, *flags), fragment)


def test_a_401_digit_duration_flag_is_refused_in_one_line():
    refused(run_bounded(*SIMULATE, "--capacity", "10", "--startup", "60", "--duration", "9" * 401),
            "scalebridge simulate: --duration: a duration string is at most 64 characters long")


@pytest.mark.parametrize("text, fragment", [
    ("capacity: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 200 levels"),
    ("capacity: " + "1" * 5000 + "\n", "more than 4,300 digits"),
])
def test_a_hostile_scenario_file_is_refused_in_one_line(tmp_path, text, fragment):
    f = tmp_path / "s.yaml"
    f.write_text(text)
    refused(run_bounded("simulate", "--scenario", str(f)), str(f), fragment)
