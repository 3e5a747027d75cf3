"""docs/policy.md against the tool: its YAML blocks and example files validate under every
semantics, validate's messages and positions, what each semantics requires, the values
the page states."""

import re
from pathlib import Path

import pytest

from scalebridge import cli
from scalebridge.errors import PolicyError
from scalebridge.policyfile import load_policy_file, parse_policy_text


ROOT = Path(__file__).resolve().parents[2]


def read(name: str) -> str:
    return (ROOT / name).read_text()


def yaml_blocks(name: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", read(name), re.S)


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


BOUNDS = "name: t\nmin_replicas: 1\nmax_replicas: 20\n"


POLICY_BLOCKS = yaml_blocks("docs/policy.md")


def test_policy_md_has_its_yaml_blocks():
    assert len(POLICY_BLOCKS) >= 9   # the reference's examples, found by the pattern above


@pytest.mark.parametrize("i", range(len(POLICY_BLOCKS)))
def test_policy_md_yaml_blocks_validate(i):
    parse_policy_text(BOUNDS + POLICY_BLOCKS[i], f"block{i}.yaml")


def test_policy_md_example_files_validate_under_every_semantics(capsys):
    rc, out, err = run_main(capsys, "validate", "--semantics", "all", "examples/policies/web.yaml",
                            "examples/simulate/policy.yaml", "examples/predictive/policy.yaml",
                            "examples/predictive/count-noise.yaml")
    # the parts a semantics does not read are warnings (web.yaml's behavior under azure and aws …)
    assert rc == 0 and all(": warning: " in line for line in err.splitlines()), err


def _bad_policy(tmp_path) -> Path:
    f = tmp_path / "policy.yaml"
    f.write_text("name: web\nmin_replicas: 2\nmax_replica: 10\nmetrics:\n  - type: resource\n    name: cpu\n"
                 "    target: {type: Utilization, average_utilization: sixty}\n")
    return f


def test_policy_md_validate_reports_every_problem_with_position(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _bad_policy(tmp_path)
    rc, _, err = run_main(capsys, "validate", "policy.yaml")
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 2
    assert lines[0].startswith("policy.yaml:3:1: policy.max_replica: unknown field 'max_replica'; "
                               "did you mean 'max_replicas'?")
    assert lines[1] == ("policy.yaml:7:54: policy.metrics[0].target.average_utilization: "
                        "expected a number, got a string 'sixty'")


def test_policy_md_unknown_field_message_punctuation(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _bad_policy(tmp_path)
    _, _, err = run_main(capsys, "validate", "policy.yaml")
    assert "did you mean 'max_replicas'? valid fields here: " in err.splitlines()[0]


def test_policy_md_validate_semantics_all_names_every_semantics(capsys, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmax_replicas: 10\n")
    rc, _, err = run_main(capsys, "validate", "--semantics", "all", str(f))
    assert rc == 2
    assert "gce semantics" in err and "aws semantics" in err


@pytest.mark.parametrize("semantics", ["gce", "aws"])
def test_policy_md_gce_and_aws_need_min_replicas(capsys, tmp_path, semantics):
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmax_replicas: 10\n")
    rc, _, err = run_main(capsys, "validate", "--semantics", semantics, str(f))
    assert rc == 2 and "$.policy.min_replicas" in err


def test_policy_md_max_replicas_unbounded_under_aws_required_under_scalebridge(capsys, tmp_path):
    """docs/policy.md: max_replicas is "required by kubernetes, gce and scalebridge, and by azure
    when there are no profiles ...; aws: absent = unbounded"."""
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmin_replicas: 1\n")
    assert run_main(capsys, "validate", "--semantics", "aws", str(f))[0] == 0
    for semantics in ("scalebridge", "azure"):
        rc, _, err = run_main(capsys, "validate", "--semantics", semantics, str(f))
        assert rc == 2 and "$.policy.max_replicas" in err, semantics


@pytest.mark.parametrize("semantics", ["kubernetes", "gce"])
def test_policy_md_max_replicas_required_by(capsys, tmp_path, semantics):
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmin_replicas: 1\n")
    rc, _, err = run_main(capsys, "validate", "--semantics", semantics, str(f))
    assert rc == 2 and "$.policy.max_replicas" in err


def test_policy_md_values():
    p = parse_policy_text(BOUNDS + "mode: OFF\ninitialization_period_seconds: 1h30m\nbehavior:\n"
                          "  scale_down: {stabilization_window_seconds: PT5M}\n"
                          "metrics:\n  - type: resource\n    name: memory\n"
                          "    target: {type: AverageValue, average_value: 1Gi}\n")
    assert p.mode == "OFF"
    for bad in ("min_replicas: \"4\"", "min_replicas: yes"):
        with pytest.raises(PolicyError):
            parse_policy_text(f"name: t\nmax_replicas: 10\n{bad}\n")
    with pytest.raises(PolicyError, match="duplicate key"):
        parse_policy_text("name: t\nmax_replicas: 10\nmax_replicas: 12\n")


def test_policy_md_yaml_tag_is_a_policy_problem(tmp_path):
    f = tmp_path / "tag.yaml"
    f.write_text("name: x\nmin_replicas: 1\nmax_replicas: !!python/object:os.system 1\n")
    with pytest.raises(PolicyError):
        load_policy_file(f)
