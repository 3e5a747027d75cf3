"""What a policy most likely does not mean is said wherever it is used, never decided
silently: a utilization target written as a fraction (``average_utilization: 0.6``, a
GCE user's 60 %) is a ``validate`` warning with its line (exit 1 with ``--strict``), a
``note:`` of ``render``, and a warning of ``decide``; and ``decide`` says on stderr each
part of the policy its semantics ignores, as ``validate`` does."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRACTION = ("name: web\nmin_replicas: 2\nmax_replicas: 20\nmetrics:\n  - type: resource\n    name: cpu\n"
            "    target: {type: Utilization, average_utilization: 0.6}\n")
REQUEST = str(ROOT / "examples/requests/resource-utilization.json")


def _policy(tmp_path: Path) -> Path:
    f = tmp_path / "web.yaml"
    f.write_text(FRACTION)
    return f


def test_validate_warns_of_a_fraction_at_its_line_and_strict_fails_on_it(cli, tmp_path):
    f = _policy(tmp_path)
    warning = (f"{f}:7:54: policy.metrics[0].target.average_utilization: warning: 0.6 is a fraction where a percent "
               "is expected; did you mean 60, a percent?")
    proc = cli("validate", "--semantics", "all", str(f))
    assert proc.returncode == 0
    assert proc.stderr.splitlines()[0] == warning
    proc = cli("validate", "--strict", str(f))
    assert proc.returncode == 1 and proc.stderr.splitlines() == [warning]


def test_a_percent_target_is_no_warning(cli, tmp_path):
    f = tmp_path / "web.yaml"
    f.write_text(FRACTION.replace("0.6", "60"))
    proc = cli("validate", "--strict", str(f))
    assert (proc.returncode, proc.stderr) == (0, "")


def test_render_notes_a_fraction_before_what_it_writes_it_as(cli, tmp_path):
    proc = cli("render", str(_policy(tmp_path)), "--to", "gce", "--target",
               "{project: shop-prod, zone: europe-west1-b, instance_group_manager: web}")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["autoscalingPolicy"]["cpuUtilization"] == {"utilizationTarget": 0.006}
    assert proc.stderr.splitlines()[0] == ("scalebridge render: note: metrics[0].target.average_utilization: 0.6 is a "
                                           "fraction where a percent is expected; did you mean 60, a percent?")


def test_decide_warns_of_a_fraction_in_a_policy_file_and_in_a_request(cli, tmp_path):
    f = _policy(tmp_path)
    proc = cli("decide", "--policy", str(f), REQUEST)
    assert proc.returncode == 0
    assert proc.stderr.splitlines()[0] == (f"scalebridge decide: {f}:7:54: policy.metrics[0].target.average_utilization:"
                                           " warning: 0.6 is a fraction where a percent is expected; did you mean 60, "
                                           "a percent?")
    req = json.loads(Path(REQUEST).read_text())
    req["policy"]["metrics"][0]["target"]["average_utilization"] = 0.6
    proc = cli("decide", stdin=json.dumps(req) + "\n" + json.dumps(req) + "\n")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 2
    assert proc.stderr.splitlines() == ["scalebridge decide: <stdin>: $.policy.metrics[0].target.average_utilization: "
                                        "warning: 0.6 is a fraction where a percent is expected; did you mean 60, a "
                                        "percent?"]   # once, however many requests show it


def test_decide_says_what_the_semantics_ignores_as_validate_does(cli):
    web = str(ROOT / "examples/policies/web.yaml")
    validate = cli("validate", "--semantics", "azure", web)
    warnings = [line.removeprefix(f"{web}: ") for line in validate.stderr.splitlines()]
    assert warnings[0] == ("warning: azure: metrics: the azure semantics does not read it (an autoscale setting has "
                           "no target metrics: it scales on its profiles' rules)")
    proc = cli("decide", "--policy", web, "--semantics", "azure", REQUEST)
    assert proc.returncode == 0 and json.loads(proc.stdout)["metrics"] == []
    assert proc.stderr.splitlines() == [f"scalebridge decide: {web}: {w}" for w in warnings]
    # under every semantics: each one's warnings, as validate --semantics all prints them
    every = cli("validate", "--semantics", "all", web).stderr.splitlines()
    proc = cli("decide", "--policy", web, "--semantics", "all", REQUEST)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 5
    assert proc.stderr.splitlines() == [f"scalebridge decide: {line}" for line in every]
    explain = cli("explain", "--policy", web, "--semantics", "azure", REQUEST)
    assert explain.stderr.splitlines() == [f"scalebridge explain: {web}: {w}" for w in warnings]


def test_a_policy_every_semantics_reads_whole_is_decided_without_a_word(cli):
    proc = cli("decide", "--semantics", "kubernetes", REQUEST)
    assert (proc.returncode, proc.stderr) == (0, "")
