"""A run configuration's inline policy reads YAML as a policy file does: `mode: OFF`
is the mode OFF, not the YAML 1.1 boolean false, and an unquoted timestamp stays the
ISO-8601 text the protocol takes — also on the libyaml loader that reads large
configurations (which marks plain scalars with style "" where PyYAML's has None)."""
from __future__ import annotations

from scalebridge.cli import main
from scalebridge.controller.configfile import load_config
from scalebridge.controller.build import build

CONFIG = """\
providers:
  sim: {}
policies:
  web:
    min_replicas: 1
    max_replicas: 5
    mode: OFF
    metrics:
      - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}
    profiles:
      - name: launch
        capacity: {minimum: 2, maximum: 5, default: 2}
        fixed_date: {start: 2026-01-01T08:00:00, end: 2026-01-02T08:00:00}
targets:
  - {name: a, provider: sim, policy: web, semantics: scalebridge,
     ref: {workload: flash_crowd, capacity: 10, startup: 60}}
"""


def test_mode_off_and_an_unquoted_time_in_an_inline_policy(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG)
    assert main(["validate", str(path)]) == 0
    runtime = build(load_config(path))
    try:
        policy = runtime.targets[0].policy
        assert policy.mode == "OFF"
        assert policy.profiles[0].fixed_date.start == "2026-01-01T08:00:00"
    finally:
        runtime.close()
    # the same policy as a policy file (the pure-Python loader) reads the same
    lines = CONFIG.split("policies:\n  web:\n")[1].split("targets:")[0].splitlines()
    (tmp_path / "web.yaml").write_text("".join(line[4:] + "\n" for line in lines))
    from scalebridge.policyfile import load_policy_file
    same = load_policy_file(tmp_path / "web.yaml")
    assert (same.mode, same.profiles[0].fixed_date.start) == ("OFF", "2026-01-01T08:00:00")


def test_its_positions_found_on_demand_are_the_policy_loaders(tmp_path):
    # a run configuration's positions are found by parsing it again the first time
    # one is asked for (nothing to report: never); each is where the pure-Python
    # policy loader puts it, keys and values, including past the last one asked for
    from scalebridge.controller.configfile import read_yaml
    from scalebridge.policyfile import load_yaml
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG)
    data, lazy = read_yaml(path)
    expected_data, expected = load_yaml(CONFIG, str(path))
    assert data == expected_data
    assert len(expected) > 40
    for key, where in expected.items():
        assert lazy.get(key) == where, key
    assert lazy.get(("targets", 7)) is None
    assert lazy.get(("targets", 7), (1, 1)) == (1, 1)


def test_a_problem_past_the_first_target_is_placed_by_the_positions_found_on_demand(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG + "  - {name: b, provider: sim, policy: web, semantics: scalebridge,\n"
                             "     ref: {workload: flash_crowd, capacity: 10, startup: 60, sed: 3}}\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:18:67: targets[1].ref.sed: not a sim ref key (did you mean 'seed'?)"), err
