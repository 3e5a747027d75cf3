"""The neutral controls' policy keys: what ``scalebridge validate`` accepts and how it
names what it refuses (file:line:column, the field, and for a formula the position in
its expression and the names it knows); the protocol's new state keys."""
import json
import textwrap

import pytest

from scalebridge.engine import decide
from scalebridge.errors import PolicyError, RequestError
from scalebridge.policyfile import load_policy_file

BASE = """\
max_replicas: 10
min_replicas: 1
metrics:
  - type: external
    name: queue
    target: {type: AverageValue, average_value: 10}
"""


def load(tmp_path, extra: str):
    """BASE and ``extra`` (a further metric when it starts with ``-``, else top-level keys)."""
    extra = textwrap.dedent(extra)
    if extra.startswith("-"):
        extra = textwrap.indent(extra, "  ")
    f = tmp_path / "p.yaml"
    f.write_text(BASE + extra)
    return load_policy_file(f)


def problems(tmp_path, extra: str) -> str:
    with pytest.raises(PolicyError) as e:
        load(tmp_path, extra)
    return str(e.value)


def test_a_formula_naming_an_unknown_metric_says_where_and_what_it_knows(tmp_path):
    msg = problems(tmp_path, """\
      - type: formula
        name: composite
        expression: "queue * 2.0 + queu"
        target: {type: AverageValue, average_value: 2}
    """)
    assert msg == (f"{tmp_path}/p.yaml:9:17: policy.metrics[1].expression: undeclared reference to 'queu' "
                   "(at column 15 of the expression); the metrics it can name: queue")


def test_a_formula_with_mixed_number_types_is_refused_as_cel_refuses_it(tmp_path):
    msg = problems(tmp_path, """\
      - type: formula
        name: composite
        expression: "queue / 2"
        target: {type: Value, value: 2}
    """)
    assert "no matching overload for '_/_' applied to '(double, int)' (at column 7 of the expression)" in msg


def test_a_formula_needs_an_expression_and_a_non_utilization_target(tmp_path):
    assert "a formula metric needs `expression`" in problems(tmp_path, """\
      - {type: formula, name: f, target: {type: AverageValue, average_value: 2}}
    """)
    assert "AverageValue or Value target" in problems(tmp_path, """\
      - {type: formula, name: f, expression: "queue", target: {type: Utilization, average_utilization: 2}}
    """)
    assert "only a formula metric has an `expression`" in problems(tmp_path, """\
      - {type: pods, name: f, expression: "queue", target: {type: AverageValue, average_value: 2}}
    """)


def test_idle_replicas_must_be_below_min_replicas(tmp_path):
    msg = problems(tmp_path, "idle_replicas: 1\n")
    assert "policy.idle_replicas: idle_replicas (1) must be less than min_replicas (1)" in msg
    assert load(tmp_path, "idle_replicas: 0\n").idle_replicas == 0


def test_fallback_keys(tmp_path):
    p = load(tmp_path, "fallback: {replicas: 4}\n")
    assert (p.fallback.failure_threshold, p.fallback.replicas, p.fallback.behavior) == (3, 4, "static")
    assert "fallback.behavior" in problems(tmp_path, "fallback: {replicas: 4, behavior: currentReplicas}\n")


def test_the_activation_delay_is_a_duration(tmp_path):
    assert load(tmp_path, "scale_to_zero_delay_seconds: 5m\n").scale_to_zero_delay_seconds == 300


REQUEST = {"now": 1000.0, "current_replicas": 2, "observations": {"metrics": {"queue": {"value": 50}}},
           "policy": {"max_replicas": 10, "min_replicas": 0, "fallback": {"replicas": 3},
                      "metrics": [{"type": "external", "name": "queue", "activation_threshold": 1,
                                   "target": {"type": "AverageValue", "average_value": 10}}]}}


@pytest.mark.parametrize("key, value", [("fallback.failures", {"queue": "two"}),
                                        ("activation.last_active", "yesterday")])
def test_malformed_control_state_is_a_request_error_naming_the_key(key, value):
    with pytest.raises(RequestError, match=rf"\$\.state\['{key}'\]"):
        decide({**REQUEST, "state": {key: value}})


def test_the_control_state_keys_round_trip_through_json():
    r = decide({**REQUEST, "observations": {"metrics": {"queue": {"error": "down"}}}, "state": {}})
    assert r["state"]["fallback.failures"] == {"queue": 1}
    again = decide({**REQUEST, "state": json.loads(json.dumps(r["state"]))})
    assert "fallback.failures" not in again["state"]
    assert again["state"]["activation.last_active"] == 1000.0


FORMULA_FILE = BASE + """\
  - type: formula
    name: composite
    expression: "queue / 0.0 + queu"
    target: {type: AverageValue, average_value: 2}
rules:
  - {metric: composite, operator: GreaterThan, threshold: 4, time_window_seconds: 60,
     action: {direction: Increase, type: ChangeCount, value: 2}}
"""


def test_validate_names_the_expressions_problem_in_one_line_and_exits_2(tmp_path, capsys):
    from scalebridge.cli import main
    f = tmp_path / "p.yaml"
    f.write_text(FORMULA_FILE)
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"{f}:9:17: policy.metrics[1].expression: undeclared reference to 'queu' (at column 15 "
                                "of the expression); the metrics it can name: queue"]


def test_validate_says_the_controls_read_metrics_azure_ignores(tmp_path, capsys):
    from scalebridge.cli import main
    f = tmp_path / "p.yaml"
    f.write_text(FORMULA_FILE.replace(" + queu", ""))   # a division by zero is a runtime error, not a refusal
    assert main(["validate", "--semantics", "azure", str(f)]) == 0
    err = capsys.readouterr().err
    assert "azure: metrics: the azure semantics does not read their targets" in err
    assert "the neutral controls read their values" in err and "never scale" not in err
