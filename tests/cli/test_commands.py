"""The ``scalebridge`` commands: help, missing files, ``--semantics`` and ``all``, ``explain``
over every example, and ``--policy FILE`` for decide and explain.

Source: docs/protocol.md, README.md."""
from __future__ import annotations

import glob
import json
from pathlib import Path

from scalebridge.testing.requests import cpu_request, NOW


ROOT = Path(__file__).resolve().parents[2]


EXAMPLE_REQUESTS = sorted(glob.glob(str(ROOT / "examples" / "requests" / "*.json")))


SEMANTICS = ("kubernetes", "gce", "azure", "aws", "scalebridge")


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


def test_help_of_every_subcommand_and_no_command(cli):
    for sub in ("decide", "explain", "validate", "schema", "simulate", "compare", "plugins", "demo"):
        proc = cli(sub, "--help")
        assert proc.returncode == 0 and proc.stdout.startswith(f"usage: scalebridge {sub}"), sub
        assert proc.stderr == ""
    proc = cli()
    assert proc.returncode == 2 and "usage: scalebridge" in proc.stdout


def test_a_directory_or_missing_file_is_one_line_exit_2(cli, tmp_path):
    _one_line_error(cli("decide", str(tmp_path)), "cannot read", "Is a directory")
    _one_line_error(cli("explain", str(tmp_path / "nope.json")), "cannot read", "No such file")
    _one_line_error(cli("validate", str(tmp_path)), f"{tmp_path}: cannot read", "Is a directory")


def test_explain_every_example_request_in_one_stream(cli):
    stream = "".join(json.dumps(json.loads(Path(p).read_text())) + "\n" for p in EXAMPLE_REQUESTS)
    proc = cli("explain", "--semantics", "all", stdin=stream)
    assert proc.returncode == 0, proc.stderr
    heads = [line for line in proc.stdout.splitlines() if " → recommended " in line]
    assert len(heads) == len(EXAMPLE_REQUESTS) * len(SEMANTICS)


def test_decide_semantics_all_answers_once_per_builtin(cli):
    proc = cli("decide", "--semantics", "all", EXAMPLE_REQUESTS[0])
    assert proc.returncode == 0
    assert [json.loads(x)["semantics"] for x in proc.stdout.splitlines()] == list(SEMANTICS)


def test_unknown_semantics_flag_is_one_message_about_the_flag(cli):
    proc = cli("decide", "--semantics", "nope", stdin=_good() + "\n" + _good() + "\n")
    err = _one_line_error(proc, "--semantics", "nope")
    assert "$.semantics" not in err


def test_decide_and_explain_take_a_policy_file(cli, tmp_path):
    """``--policy FILE``: the same policy for every request, from YAML, in place of each
    request's own; a bad policy file is its file:line:column line and exit 2."""
    from scalebridge.testing.requests import cpu_request
    req = cpu_request(4, "900m")
    req.pop("policy", None)
    pol = tmp_path / "p.yaml"
    pol.write_text("min_replicas: 2\nmax_replicas: 20\nmetrics:\n  - {type: resource, name: cpu, "
                   "target: {type: Utilization, average_utilization: 60}}\n")
    proc = cli("decide", "--policy", str(pol), "-s", "kubernetes", stdin=json.dumps(req))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["desired_replicas"] == 6          # 4 × 90 / 60
    proc = cli("explain", "--policy", str(pol), "-s", "kubernetes", stdin=json.dumps(req))
    assert proc.returncode == 0 and "kubernetes" in proc.stdout
    pol.write_text("min_replicas: 2\nmax_replica: 20\n")
    proc = cli("decide", "--policy", str(pol), stdin=json.dumps(req))
    assert proc.returncode == 2 and f"{pol}:2:1:" in proc.stderr and "Traceback" not in proc.stderr


# the protocol: "scalebridge decide --semantics all   # one response per built-in semantics" —
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
    assert [r["semantics"] for r in lines] == list(SEMANTICS)
    assert next(r for r in lines if r["semantics"] == "azure")["desired_replicas"] == 3
