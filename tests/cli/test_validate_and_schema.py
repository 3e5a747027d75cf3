"""``scalebridge validate`` and ``scalebridge schema``: every problem of a policy file with
its file, line and field (typos with a suggestion, YAML problems, duplicate keys), every
example valid under every semantics, and schemas that accept what validate accepts.

Source: docs/policy.md."""
from __future__ import annotations

import glob
import json
import re
import textwrap
from pathlib import Path

import pytest


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
    assert f"{bad}:1:15: policy.min_replicas: " in proc.stderr


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


ROOT = Path(__file__).resolve().parents[2]


EXAMPLE_REQUESTS = sorted(glob.glob(str(ROOT / "examples" / "requests" / "*.json")))


# every policy file of examples/ (examples/run/*.yaml are run configurations, not policies)
# every YAML under examples/ but the run configurations and the simulate scenarios (a scenario names its
# policies: `policies: [policy.yaml]`)
SCENARIOS = {ROOT / "examples" / "simulate" / "nasa.yaml"}
#: run configurations outside examples/run (the example plugin's), not policy files
RUN_CONFIGS = {ROOT / "examples" / "plugin" / "droplets.yaml"}
EXAMPLE_POLICIES = sorted(p for p in glob.glob(str(ROOT / "examples" / "**" / "*.yaml"), recursive=True)
                          if Path(p).parent != ROOT / "examples" / "run" and Path(p) not in SCENARIOS | RUN_CONFIGS)


POLICY = """\
min_replicas: 1
max_replicas: 10
metrics:
  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 50}}
"""


def _one_line_error(proc, *fragments):
    """exit 2, exactly one stderr line, no traceback, every fragment in it."""
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    for frag in fragments:
        assert frag in err, err
    return err


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return str(p)


# jsonschema is not in .venv; this covers the keywords `scalebridge schema` emits
# (it gives the same verdicts as jsonschema 4.26 on the examples).
def _schema_errors(schema: dict, inst, node: dict | None = None, path: str = "$") -> list[str]:
    node = schema if node is None else node
    if "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return _schema_errors(schema, inst, schema["$defs"][ref.split("/")[-1]], path)
    errs: list[str] = []
    for key in ("anyOf", "oneOf"):
        if key in node:
            if all(_schema_errors(schema, inst, alt, path) for alt in node[key]):
                errs.append(f"{path}: {inst!r} matches no alternative")
    for alt in node.get("allOf", []):
        errs += _schema_errors(schema, inst, alt, path)
    if "enum" in node and inst not in node["enum"]:
        errs.append(f"{path}: {inst!r} not in {node['enum']}")
    if "const" in node and inst != node["const"]:
        errs.append(f"{path}: {inst!r} != {node['const']!r}")
    t = node.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        ok = {"object": isinstance(inst, dict), "array": isinstance(inst, list),
              "string": isinstance(inst, str), "null": inst is None,
              "boolean": isinstance(inst, bool),
              "integer": isinstance(inst, int) and not isinstance(inst, bool),
              "number": isinstance(inst, (int, float)) and not isinstance(inst, bool)}
        if not any(ok[x] for x in types):
            return errs + [f"{path}: {inst!r} is not {t}"]
    if isinstance(inst, dict):
        props = node.get("properties", {})
        for k in node.get("required", []):
            if k not in inst:
                errs.append(f"{path}.{k}: required")
        for k, v in inst.items():
            if k in props:
                errs += _schema_errors(schema, v, props[k], f"{path}.{k}")
            elif node.get("additionalProperties") is False:
                errs.append(f"{path}.{k}: not allowed")
            elif isinstance(node.get("additionalProperties"), dict):
                errs += _schema_errors(schema, v, node["additionalProperties"], f"{path}.{k}")
    if isinstance(inst, list) and isinstance(node.get("items"), dict):
        for i, v in enumerate(inst):
            errs += _schema_errors(schema, v, node["items"], f"{path}[{i}]")
    if isinstance(inst, (int, float)) and not isinstance(inst, bool):
        if "minimum" in node and inst < node["minimum"]:
            errs.append(f"{path}: {inst} < {node['minimum']}")
        if "maximum" in node and inst > node["maximum"]:
            errs.append(f"{path}: {inst} > {node['maximum']}")
        if "exclusiveMinimum" in node and inst <= node["exclusiveMinimum"]:
            errs.append(f"{path}: {inst} <= {node['exclusiveMinimum']}")
    if isinstance(inst, str) and "pattern" in node and not re.search(node["pattern"], inst):
        errs.append(f"{path}: {inst!r} !~ {node['pattern']}")
    return errs


def _policy_data(text: str):
    from scalebridge.policyfile import load_yaml
    return load_yaml(text)[0]


@pytest.fixture(scope="module")
def policy_schema():
    from scalebridge.cli import main  # noqa: F401  (the same code path as the command)
    from scalebridge.policy import policy_json_schema
    return json.loads(json.dumps(policy_json_schema()))


@pytest.mark.parametrize("name, text, fragment", [
    ("empty.yaml", "", ":1:1: the file is empty"),
    ("list.yaml", "- 1\n", ":1:1: a policy is a mapping"),
    ("scalar.yaml", "5\n", ":1:1: a policy is a mapping"),
    ("tabs.yaml", "min_replicas: 1\n\tmax_replicas: 3\n", ":2:1: invalid YAML"),
    ("bytes.yaml", b"\xff\xfe\x00min_replicas: 1\n", ": not a UTF-8 text file"),
])
def test_validate_malformed_policy_files(cli, tmp_path, name, text, fragment):
    f = _write(tmp_path, name, text)
    _one_line_error(cli("validate", f), f + fragment)


@pytest.mark.parametrize("value", ["1.0e+400", ".inf", "true", "-0.0", "1e400"])
def test_validate_odd_numbers_for_an_integer_field(cli, tmp_path, value):
    f = _write(tmp_path, "p.yaml", POLICY.replace("max_replicas: 10", f"max_replicas: {value}"))
    _one_line_error(cli("validate", f), f"{f}:2:15: policy.max_replicas: Input should be a valid integer")


def test_validate_anchors_and_aliases_are_resolved(cli, tmp_path):
    f = _write(tmp_path, "p.yaml", POLICY.replace("  - {type", "  - &m {type") + "  - *m\n")
    proc = cli("validate", f)
    assert proc.returncode == 0 and proc.stdout.strip().startswith(f"{f}: ok (policy file: "), proc.stderr


def test_validate_did_you_mean_for_policy_typos(cli, tmp_path):
    f = _write(tmp_path, "p.yaml", POLICY.replace("average_utilization", "average_utilisation")
               + "tolerence: 0.1\n")
    proc = cli("validate", f)
    assert proc.returncode == 2
    errs = proc.stderr.strip().splitlines()
    assert len(errs) == 2
    assert f"{f}:4:" in errs[0] and "did you mean 'average_utilization'?" in errs[0]
    assert f"{f}:5:1: policy.tolerence" in errs[1] and "did you mean 'tolerance'?" in errs[1]


def test_validate_every_example_policy_under_every_semantics(cli):
    assert len(EXAMPLE_POLICIES) >= 4
    proc = cli("validate", "--semantics", "all", *EXAMPLE_POLICIES)
    assert proc.returncode == 0, proc.stderr
    assert [line.split(" (")[0] for line in proc.stdout.splitlines()] == [f"{p}: ok" for p in EXAMPLE_POLICIES]
    assert all(line.endswith("; runs under kubernetes, gce, azure, aws, scalebridge)") for line in proc.stdout.splitlines())


def test_validate_keeps_going_after_a_bad_file(cli, tmp_path):
    bad = _write(tmp_path, "empty.yaml", "")
    proc = cli("validate", bad, EXAMPLE_POLICIES[0])
    assert proc.returncode == 2 and proc.stdout.strip().startswith(f"{EXAMPLE_POLICIES[0]}: ok (policy file: ")


def test_schema_is_valid_json_schema_and_accepts_every_example(cli, policy_schema):
    proc = cli("schema")
    assert proc.returncode == 0 and json.loads(proc.stdout) == policy_schema
    assert policy_schema["$schema"].endswith("2020-12/schema")
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        jsonschema.Draft202012Validator.check_schema(policy_schema)
    for p in EXAMPLE_POLICIES:
        assert _schema_errors(policy_schema, _policy_data(Path(p).read_text())) == [], p
    # and it rejects what validate rejects: a typo, a string tolerance
    assert _schema_errors(policy_schema, _policy_data(POLICY + "tolerence: 0.1\n"))
    assert _schema_errors(policy_schema, _policy_data(POLICY + "tolerance: '0.1'\n"))


def test_request_schema_accepts_every_example_request(cli):
    schema = json.loads(cli("schema", "--request").stdout)
    for p in EXAMPLE_REQUESTS + sorted(glob.glob(str(ROOT / "examples" / "situations" / "*.json"))):
        assert _schema_errors(schema, json.loads(Path(p).read_text())) == [], p


def test_duplicate_policy_key_names_the_file(cli, tmp_path):
    f = _write(tmp_path, "p.yaml", POLICY + "max_replicas: 4\n")
    _one_line_error(cli("validate", f), f"{f}:5:1: policy.max_replicas: duplicate key")


def test_validate_unknown_semantics_flag(cli):
    err = _one_line_error(cli("validate", "--semantics", "nope", *EXAMPLE_POLICIES[:2]), "--semantics", "nope")
    assert "$.semantics" not in err


def test_validate_reads_stdin(cli):
    proc = cli("validate", "-", stdin=POLICY)
    assert proc.returncode == 0, proc.stderr


def test_unknown_policy_field_without_suggestion_reads_well(cli, tmp_path):
    f = _write(tmp_path, "p.yaml", POLICY + "zzz: 1\n")
    err = _one_line_error(cli("validate", f), "unknown field 'zzz'")
    assert "'zzz' valid" not in err


def test_messages_use_json_type_names(cli, tmp_path):
    f = _write(tmp_path, "p.yaml", "5\n")
    err = _one_line_error(cli("validate", f))
    assert "a int" not in err
    err = _one_line_error(cli("decide", stdin="null"))
    assert "NoneType" not in err


@pytest.mark.parametrize("extra", [
    "mode: ONLY_UP\n",
    "mode: null\n",
    "default_replicas: 1\nrules:\n  - {metric: cpu, time_grain_seconds: 60, time_window_seconds: 300, "
    "time_aggregation: Total, operator: GreaterThan, threshold: 70, "
    "action: {direction: Increase, type: ChangeCount, value: 1, cooldown_seconds: 300}}\n",
], ids=["mode-ONLY_UP", "mode-null", "time_aggregation-Total"])
def test_schema_accepts_what_validate_accepts(cli, tmp_path, policy_schema, extra):
    from scalebridge.policyfile import parse_policy_text
    parse_policy_text(POLICY + extra)   # validate accepts it
    assert _schema_errors(policy_schema, _policy_data(POLICY + extra)) == []


def test_schema_accepts_predictive_enabled(policy_schema):
    from scalebridge.policyfile import parse_policy_text
    text = (ROOT / "examples" / "predictive" / "policy.yaml").read_text().replace(
        "mode: ForecastAndScale", "mode: Enabled")
    parse_policy_text(text)
    assert _schema_errors(policy_schema, _policy_data(text)) == []


# -- what the chosen semantics does not read ------------------------------------------


def test_validate_warns_about_what_the_semantics_ignores(tmp_path, capsys):
    """The issue: a policy with only `metrics` under `azure` (which reads rules) passed
    validate and run; only simulate warned. One policy, every cloud: say it."""
    from scalebridge.cli import main
    policy = tmp_path / "p.yaml"
    policy.write_text("min_replicas: 1\nmax_replicas: 5\nmetrics: [{type: resource, name: cpu, "
                      "target: {type: Utilization, average_utilization: 60}}]\n"
                      "rules: [{metric: cpu, operator: GreaterThan, threshold: 70, statistic: Average, "
                      "time_grain_seconds: 60, time_window_seconds: 300, time_aggregation: Average, "
                      "action: {direction: Increase, type: ChangeCount, value: 1, cooldown_seconds: 300}}]\n")
    assert main(["validate", str(policy), "--semantics", "kubernetes"]) == 0
    err = capsys.readouterr().err
    assert "warning: kubernetes: rules: the kubernetes semantics does not read it (an HPA has no threshold rules)" in err
    assert main(["validate", str(policy), "--semantics", "kubernetes", "--strict"]) == 1
    capsys.readouterr()
    metrics_only = tmp_path / "m.yaml"
    metrics_only.write_text("semantics: azure\nmin_replicas: 1\nmax_replicas: 5\nmetrics: [{type: resource, name: cpu, "
                            "target: {type: Utilization, average_utilization: 60}}]\n")
    assert main(["validate", str(metrics_only)]) == 0
    err = capsys.readouterr().err
    assert "azure: metrics:" in err and "it will never scale" in err
    run = tmp_path / "run.yaml"
    run.write_text(f"providers: {{fake: {{type: 'scalebridge.testing.fake:FakeProvider'}}}}\n"
                   f"targets:\n- {{name: web, provider: fake, policy: {metrics_only}, ref: {{name: web}}}}\n")
    assert main(["validate", str(run)]) == 0
    err = capsys.readouterr().err
    assert f"{run}:3:" in err and "target 'web' under azure" in err and "never scale" in err
    assert main(["validate", str(run), "--strict"]) == 1
    capsys.readouterr()
    assert main(["run", str(run), "--once", "--state", str(tmp_path / "s.db")]) == 0
    assert "target 'web' under azure" in capsys.readouterr().err, "run says it once at start"
    # a policy every part of which its semantics reads: no warning
    assert main(["validate", str(policy), "--semantics", "scalebridge", "--strict"]) == 0


def test_validate_says_what_it_checked_for_each_kind_of_file(cli, tmp_path):
    """A newcomer read "policy files" in validate's summary for run configurations: each ok line
    names what was checked — a policy file (its policy, the semantics it runs under) or a run
    configuration (its targets, their policies and the provider instances, built without a
    cloud) — and the command's help names both kinds."""
    f = _write(tmp_path, "p.yaml", POLICY)
    proc = cli("validate", "--semantics", "gce", f, "examples/run/sim.yaml")
    assert proc.returncode == 0, proc.stderr
    policy_line, run_line = proc.stdout.splitlines()
    assert policy_line.startswith(f"{f}: ok (policy file: policy ") and policy_line.endswith("; runs under gce)")
    assert run_line == ("examples/run/sim.yaml: ok (run configuration: 2 targets with their policies and "
                        "1 provider instance, built without calling a cloud)")
    listed = cli("--help").stdout
    assert "check policy files and run configurations" in " ".join(listed.split())


def test_the_example_scenarios_are_scenarios():
    from scalebridge.simulator.scenario import load_scenario
    for path in SCENARIOS:
        assert load_scenario(str(path)) is not None
