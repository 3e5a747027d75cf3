"""``scalebridge backtest`` on recorded CSV files, no cloud and no Prometheus: a policy file
back-tested on ``--history METRIC=FILE`` replays exactly what ``simulate --trace`` replays
on the same file; ``--recorded FILE`` is the size it had; relative times parse as the
documents write them; a flag that changes nothing for a target says so, naming both; a
back-test that replays nothing prints no empty table."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "examples/traces/azure_llm_code_2024-05-10_00-06.csv"
POLICY = ROOT / "examples/backtest/policy.yaml"
FLEET = ["--capacity", "10", "--startup", "60"]


def test_a_policy_back_tested_on_a_csv_is_simulate_on_that_trace(cli):
    proc = cli("backtest", str(POLICY), "--history", f"rps={TRACE}", "--scale", "1/60", *FLEET)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("Back-test 2024-05-10 00:00 → 2024-05-10 06:00 UTC, tick 15 s")
    got = json.loads(cli("backtest", str(POLICY), "--history", f"rps={TRACE}", "--scale", "1/60", *FLEET,
                         "-o", "json").stdout)
    sim = json.loads(cli("simulate", str(POLICY), "--trace", str(TRACE), "--scale", "1/60", *FLEET, "-s", "all",
                         "-o", "json").stdout)
    runs = {r["semantics"]: r for r in got["targets"]["rps"]["runs"]}
    assert sorted(runs) == sorted(r["semantics"] for r in sim["runs"])
    for r in sim["runs"]:
        for key in ("instance_hours", "underprovisioned_seconds", "scaling_actions", "oracle_ratio"):
            assert runs[r["semantics"]][key] == r[key], (r["semantics"], key)
    assert got["targets"]["rps"]["demand"]["source"] == f"--history {TRACE}"


def test_the_recorded_size_is_the_recorded_row(cli, tmp_path):
    rows = TRACE.read_text().splitlines()[1:]
    size = tmp_path / "size.csv"
    size.write_text("timestamp,value\n" + "".join(f"{r.split(',')[0]},{8 if i < 180 else 12}\n"
                                                  for i, r in enumerate(rows)))
    got = json.loads(cli("backtest", str(POLICY), "--history", f"rps={TRACE}", "--scale", "1/60", "--recorded",
                         str(size), *FLEET, "-s", "kubernetes", "-o", "json").stdout)
    rec = got["targets"]["rps"]["recorded"]
    assert rec["instance_hours"] == 8 * 3 + 12 * 3 and rec["scaling_actions"] == 1
    run = got["targets"]["rps"]["runs"][0]
    assert run["actual_ratio"] == run["instance_hours"] / 60


def test_relative_times_parse_as_the_documents_write_them(cli):
    """`--start -7d` was argparse's 'expected one argument'; now it is a time, and a week ago
    has no sample of a 2024 trace."""
    for start in ("-7d", "now-7d"):
        proc = cli("backtest", str(POLICY), "--history", f"rps={TRACE}", "--scale", "1/60", *FLEET,
                   "--start", start, "--end", "now")
        assert proc.returncode == 1
        assert proc.stdout == ""   # nothing was replayed: no empty table
        assert proc.stderr.splitlines()[0].startswith("scalebridge backtest: target 'rps': metric 'rps': no samples "
                                                      "between ")


def test_capacity_with_a_utilization_demand_is_a_warning_naming_both(cli, tmp_path):
    cpu = tmp_path / "cpu.yaml"
    cpu.write_text("name: cpu-web\nmin_replicas: 1\nmax_replicas: 50\nmetrics:\n"
                   "  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 60}}\n")
    history = tmp_path / "cpu.csv"
    history.write_text("timestamp,value\n" + "".join(f"{1715299200 + 60 * i},{40 + i % 30}\n" for i in range(120)))
    size = tmp_path / "size.csv"
    size.write_text("timestamp,value\n1715299200,4\n1715299260,4\n")
    size.write_text("timestamp,value\n" + "".join(f"{1715299200 + 60 * i},4\n" for i in range(120)))
    outs = []
    for capacity in ("100", "1"):
        proc = cli("backtest", str(cpu), "--history", f"cpu={history}", "--recorded", str(size), "--capacity",
                   capacity, "--startup", "60", "-s", "kubernetes", "-o", "json")
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines()[0] == (
            f"scalebridge backtest: warning: --capacity {capacity} has no effect on target 'cpu-web': its demand "
            "metric 'cpu' is a utilization (a percent of a member's capacity), so any capacity replays the same "
            "members")
        outs.append(json.loads(proc.stdout)["targets"]["cpu-web"]["runs"][0]["instance_hours"])
    assert outs[0] == outs[1]
    # and it is not needed: without it, the replay is the same
    proc = cli("backtest", str(cpu), "--history", f"cpu={history}", "--recorded", str(size), "--startup", "60",
               "-s", "kubernetes", "-o", "json")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["targets"]["cpu-web"]["runs"][0]["instance_hours"] == outs[0]


def test_what_a_policy_file_back_test_needs_is_said_in_one_line(cli, tmp_path):
    cases = [
        ((), f"scalebridge backtest: {POLICY} is a policy file: give its metric's history with --history "
             "METRIC=FILE.csv (it reads rps), or back-test a run configuration"),
        (("--history", f"cpu={TRACE}"), "scalebridge backtest: --history cpu: the policy reads no metric 'cpu'; it "
                                         "reads rps"),
        (("--history", f"rps={tmp_path / 'none.csv'}"), f"scalebridge backtest: {tmp_path / 'none.csv'}:1: cannot read: "),
        (("--history", "rps"), "scalebridge backtest: --history: expected METRIC=FILE.csv"),
    ]
    for extra, first in cases:
        proc = cli("backtest", str(POLICY), *FLEET, *extra)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert proc.stderr.splitlines()[0].startswith(first), proc.stderr
        assert "Traceback" not in proc.stderr
    proc = cli("backtest", str(ROOT / "examples/run/backtest.yaml"), *FLEET)
    assert proc.returncode == 2
    assert proc.stderr == ("scalebridge backtest: --start and --end: required (the period to replay), unless "
                           "--history files give it\n")
