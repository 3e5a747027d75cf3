"""Each refusal a newcomer meets in the second hour, run as they typed it: its first line
names the file, line and column of the key at fault (or the flag), says what would be
valid, and is one line, exit 2 — as every other refusal of the tool."""
from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def first_line(proc) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr.splitlines()[0]


def test_an_unknown_semantics_in_a_policy_file_is_named_at_its_line_with_the_closest_one(cli, tmp_path):
    f = tmp_path / "web.yaml"
    f.write_text("name: web\nsemantics: kubernets\nmin_replicas: 1\nmax_replicas: 5\n")
    for argv in (["validate", str(f)], ["validate", "--semantics", "all", str(f)],
                 ["simulate", str(f), "--workload", "flash_crowd", "--capacity", "10", "--startup", "60"],
                 ["render", str(f), "--to", "gce"]):
        proc = cli(*argv)
        assert proc.returncode == 2, argv
        line = first_line(proc).removeprefix(f"scalebridge {argv[0]}: ")   # render says its name first
        assert line.startswith(f"{f}:2:12: policy.semantics: unknown semantics 'kubernets'; did you mean "
                               "'kubernetes'? registered are: "), argv
        assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_min_replicas_above_max_replicas_points_at_min_replicas(cli, tmp_path):
    f = tmp_path / "web.yaml"
    f.write_text("name: web\n\nmin_replicas: 10\nmax_replicas: 5\n")
    proc = cli("validate", str(f))
    assert proc.returncode == 2
    assert first_line(proc) == f"{f}:3:15: policy.min_replicas: min_replicas (10) is greater than max_replicas (5)"


def test_a_target_without_a_space_after_its_colon_is_explained_as_yaml_reads_it(cli):
    proc = cli("render", str(ROOT / "examples/policies/web.yaml"), "--to", "kubernetes",
               "--target", "{kind:Deployment}")
    assert proc.returncode == 2
    assert first_line(proc) == ("scalebridge render: --target.kind:Deployment: read as one key with no value: YAML "
                                "needs a space after the colon ('{kind: Deployment}')")
    proc = cli("render", str(ROOT / "examples/policies/web.yaml"), "--to", "kubernetes", "--target", "{zone: a}")
    assert first_line(proc) == ("scalebridge render: --target.zone: unknown key; valid keys for --to kubernetes: "
                                "kind, name, namespace, api_version, resource, kubernetes_version, metrics")


def test_pausing_an_unknown_target_lists_the_targets_after_a_separator(cli, tmp_path):
    shutil.copytree(ROOT / "examples/run", tmp_path / "run")
    proc = cli("pause", str(tmp_path / "run/sim.yaml"), "web-nosuch", "--state", str(tmp_path / "s.db"))
    assert proc.returncode == 2
    assert first_line(proc) == (f"scalebridge pause: no target 'web-nosuch' in {tmp_path / 'run/sim.yaml'}; "
                                "its targets are: web-hpa, web-gce")


def test_deciding_without_a_policy_says_none_was_given_and_how_to_give_one(cli):
    proc = cli("decide", stdin='{"now": 0, "current_replicas": 1}')
    assert proc.returncode == 2
    assert first_line(proc) == ("scalebridge decide: $.policy: no policy: the request has none and no --policy FILE "
                                "was given (pass --policy POLICY.yaml, or put the policy in the request)")
    # with --policy, the request needs none
    proc = cli("decide", "--policy", str(ROOT / "examples/policies/web.yaml"),
               stdin='{"now": 0, "current_replicas": 1}')
    assert proc.returncode == 0, proc.stderr
