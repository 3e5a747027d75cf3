"""``scalebridge simulate`` and ``compare``, and the demo's simulation part: tables, JSON,
CSV and plots, several policies and semantics, workers, traces (scale, unit, window,
peak, fill), scenario files, and bad input — one line naming the file and line or the
flag, exit 2, never a traceback.

Source: docs/simulation.md."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from scalebridge import registry
from scalebridge.cli import main
from scalebridge.engine import BUILTIN_SEMANTICS
from scalebridge.policyfile import load_policy_file, parse_policy_text
from scalebridge.simulator.demo import DEMO_POLICY, run_simulation_demo
from scalebridge.simulator.scores import SCORE_KEYS


REPO = Path(__file__).resolve().parents[2]


EXAMPLE = REPO / "examples" / "simulate" / "policy.yaml"


CONTRACT = ["semantics", "policy", "instance_hours", "oracle_instance_hours", "underprovisioned_seconds",
            "underprovisioned_fraction", "unserved_load", "peak_overload", "scaling_actions", "reversals"]


QUICK = ["--workload", "flash_crowd", "--duration", "3h", "--capacity", "10", "--startup", "60"]


def sb(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *args], capture_output=True, text=True,
                          check=False)


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_simulate_prints_a_table_and_writes_json(capsys, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "scores.json"
    code, stdout, stderr = sb(capsys, "simulate", str(EXAMPLE), *QUICK, "-s", "kubernetes", "--out", str(out),
                              "--price", "0.25")
    assert code == 0, stderr
    assert "kubernetes" in stdout and "oracle" in stdout and "inst-h" in stdout
    data = json.loads(out.read_text())
    assert set(data) >= {"runs", "workload", "fleet", "oracle", "skipped"}
    run = data["runs"][0]
    for key in CONTRACT + list(SCORE_KEYS):
        assert key in run
    assert run["semantics"] == "kubernetes" and run["policy"] == "web"
    assert run["cost"] == pytest.approx(run["instance_hours"] * 0.25)
    assert data["workload"]["ticks"] == 720 and data["workload"]["kind"] == "workload"
    assert data["fleet"]["startup_seconds"] == 60 and data["fleet"]["capacity"] == 10


def test_json_on_stdout_csv_timeline_and_plot(capsys, tmp_path: Path) -> None:
    code, stdout, _ = sb(capsys, "simulate", str(EXAMPLE), *QUICK, "-s", "kubernetes", "-o", "json")
    assert code == 0
    assert json.loads(stdout)["runs"][0]["decisions"] == 720
    rows_path, timeline, png = tmp_path / "runs.csv", tmp_path / "t.csv", tmp_path / "img" / "p.png"
    code, stdout, _ = sb(capsys, "simulate", str(EXAMPLE), *QUICK, "-s", "kubernetes", "--out", str(rows_path),
                         "--timeline", str(timeline), "--plot", str(png), "--quiet")
    assert code == 0 and stdout == ""
    rows = list(csv.DictReader(rows_path.open()))
    assert len(rows) == 1 and all(k in rows[0] for k in CONTRACT)
    lines = list(csv.DictReader(timeline.open()))
    assert len(lines) == 720
    assert {"time", "load", "members_needed", "oracle_paid", "kubernetes:ready"} <= set(lines[0])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_takes_several_policies_and_every_registered_semantics_plugins_included(capsys,
                                                                                     tmp_path: Path) -> None:
    other = write(tmp_path / "p80.yaml", "name: web80\nmin_replicas: 1\nmax_replicas: 200\nmetrics:\n"
                  "  - {type: resource, name: cpu, target: {type: Utilization, average_utilization: 80}}\n")
    out = tmp_path / "c.json"
    code, stdout, stderr = sb(capsys, "compare", str(EXAMPLE), other, *QUICK, "--out", str(out))
    assert code == 0, stderr
    data = json.loads(out.read_text())
    ran = {(r["policy"], r["semantics"]) for r in data["runs"]}
    assert ("web", "kubernetes") in ran and ("web80", "kubernetes") in ran
    skipped = {(s["policy"], s["semantics"]) for s in data["skipped"]}
    # without -s: every registered semantics, a plugin's too (what --help says of its default)
    assert ran | skipped == {(p, s) for p in ("web", "web80") for s in registry.current().semantics}
    for s in data["skipped"]:
        assert f"skipped {s['semantics']} ({s['policy']})" in stderr
    web = next(r for r in data["runs"] if r["policy"] == "web" and r["semantics"] == "kubernetes")
    web80 = next(r for r in data["runs"] if r["policy"] == "web80" and r["semantics"] == "kubernetes")
    assert web80["instance_hours"] < web["instance_hours"]   # a higher target pays less
    assert "web80" in stdout


def test_workers_give_the_same_scores(capsys, tmp_path: Path) -> None:
    other = write(tmp_path / "p.yaml", EXAMPLE.read_text().replace("name: web", "name: twin"))
    serial, parallel = tmp_path / "s.json", tmp_path / "p.json"
    assert sb(capsys, "compare", str(EXAMPLE), other, *QUICK, "-s", "kubernetes", "--out", str(serial))[0] == 0
    assert sb(capsys, "compare", str(EXAMPLE), other, *QUICK, "-s", "kubernetes", "--out", str(parallel),
              "--jobs", "2")[0] == 0
    strip = lambda d: [{k: v for k, v in r.items() if k != "elapsed_seconds"} for r in d["runs"]]  # noqa: E731
    assert strip(json.loads(serial.read_text())) == strip(json.loads(parallel.read_text()))


def test_trace_with_scale_unit_and_window(capsys, tmp_path: Path) -> None:
    rows = "\n".join(f"{1000 + 60 * i},{600 if 30 <= i < 60 else 120}" for i in range(120))
    trace = write(tmp_path / "t.csv", "timestamp,value\n" + rows + "\n")
    out = tmp_path / "o.json"
    code, stdout, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--scale", "1/60", "--unit",
                              "requests/s", "--capacity", "1", "--startup", "30", "-s", "kubernetes",
                              "--offset", "10m", "--duration", "1h", "--out", str(out))
    assert code == 0, stderr
    w = json.loads(out.read_text())["workload"]
    assert w["peak_load"] == 10.0 and w["unit"] == "requests/s" and w["start_time"] == 1600.0
    assert w["ticks"] == 240 and w["scale"] == pytest.approx(1 / 60)
    assert "requests/s" in stdout
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "1", "--startup", "0",
                         "-s", "kubernetes", "--offset", "3h")
    assert code == 2 and "leaves nothing" in stderr


def test_peak_scales_a_trace_to_its_replayed_peak(capsys, tmp_path: Path) -> None:
    """``--peak X`` on a trace: the scale that makes the replayed window's peak X
    (the peak of the window, not of the whole file)."""
    rows = "\n".join(f"{1000 + 60 * i},{900 if i == 5 else (600 if 30 <= i < 60 else 120)}" for i in range(120))
    trace = write(tmp_path / "t.csv", "timestamp,value\n" + rows + "\n")
    out = tmp_path / "o.json"
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--peak", "30", "--capacity", "1",
                         "--startup", "30", "-s", "kubernetes", "--offset", "10m", "--out", str(out))
    assert code == 0, stderr
    w = json.loads(out.read_text())["workload"]
    assert w["peak_load"] == pytest.approx(30.0) and w["scale"] == pytest.approx(30 / 600)
    assert w["mean_load"] == pytest.approx((30 * 600 + 80 * 120) / 110 * 30 / 600)
    for extra, words in ((["--scale", "2"], "not both"), (["--param", "surge=2"], "--param")):
        code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--peak", "30", *extra,
                             "--capacity", "1", "--startup", "30", "-s", "kubernetes")
        assert code == 2 and words in stderr, stderr
    zeros = write(tmp_path / "z.csv", "timestamp,value\n" + "\n".join(f"{60 * i},0" for i in range(10)) + "\n")
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", zeros, "--peak", "30", "--capacity", "1",
                         "--startup", "30", "-s", "kubernetes")
    assert code == 2 and "all zero" in stderr


def test_scenario_file_and_flags_override_it(capsys, tmp_path: Path) -> None:
    (tmp_path / "pol").mkdir()
    write(tmp_path / "pol" / "p.yaml", EXAMPLE.read_text())
    scenario = write(tmp_path / "s.yaml", "workload: {name: step, seed: 2, peak: 400, duration: 2h, "
                     "params: {up_at_seconds: 1800}}\ncapacity: 10\nstartup: uniform:30,90\nmetric_lag: 30\n"
                     "semantics: [kubernetes]\npolicies: [pol/p.yaml]\nprice: 1\nsettings: {tolerance: 0.05}\n")
    out = tmp_path / "o.json"
    code, _, stderr = sb(capsys, "simulate", "--scenario", scenario, "--capacity", "20", "--out", str(out))
    assert code == 0, stderr
    data = json.loads(out.read_text())
    assert data["fleet"]["capacity"] == 20 and data["fleet"]["metric_lag_seconds"] == 30
    assert data["fleet"]["startup_seconds"] == "uniform:30,90"
    assert data["workload"]["params"]["name"] == "step" and data["workload"]["peak_load"] == 400
    assert data["runs"][0]["cost"] == data["runs"][0]["instance_hours"]


TRACE_PROBLEMS = {
    "gap": ("timestamp,value\n0,1\n60,1\n120,1\n300,1\n360,1\n", ":5:", "gap"),
    "unsorted": ("timestamp,value\n0,1\n120,1\n60,1\n", ":4:", "not sorted"),
    "duplicate": ("timestamp,value\n0,1\n60,1\n60,2\n", ":4:", "duplicate"),
    "negative": ("timestamp,value\n0,1\n60,-3\n120,1\n", ":3:", "non-negative"),
    "nan": ("timestamp,value\n0,1\n60,nan\n120,1\n", ":3:", "finite"),
    "no-header": ("0,1\n60,1\n", ":1:", "header"),
    "empty": ("", ":1:", "empty"),
}


@pytest.mark.parametrize("problem", sorted(TRACE_PROBLEMS))
def test_trace_problems_exit_2_with_file_and_line(capsys, tmp_path: Path, problem: str) -> None:
    text, line, words = TRACE_PROBLEMS[problem]
    trace = write(tmp_path / f"{problem}.csv", text)
    code, stdout, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "1",
                              "--startup", "0", "-s", "kubernetes")
    assert code == 2 and stdout == ""
    assert f"{trace}{line}" in stderr and words in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_fill_repairs_a_gap(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path / "gap.csv", TRACE_PROBLEMS["gap"][0])
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "1", "--startup", "0",
                         "-s", "kubernetes", "--fill", "previous", "-q")
    assert code == 0, stderr


def test_the_real_command_never_shows_a_traceback(tmp_path: Path) -> None:
    trace = write(tmp_path / "bad.csv", "timestamp,value\n0,1\n0,1\n")
    p = run_cli("simulate", str(EXAMPLE), "--trace", trace, "--capacity", "1", "--startup", "0")
    assert p.returncode == 2 and "Traceback" not in p.stderr and f"{trace}:3:" in p.stderr
    policy = write(tmp_path / "bad.yaml", "min_replicas: 1\nmax_replicas: two\n")
    p = run_cli("compare", policy, *QUICK)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"{policy}:2:")


def test_policy_file_errors_are_the_policy_error_lines(capsys, tmp_path: Path) -> None:
    policy = write(tmp_path / "bad.yaml", "min_replicas: 1\nmax_replicas: 5\nmetrics:\n  - type: resource\n"
                   "    name: cpu\n    target: {type: Utilization, average_utilizaton: 60}\n")
    code, _, stderr = sb(capsys, "simulate", policy, *QUICK)
    assert code == 2
    assert stderr.splitlines()[0].startswith(f"{policy}:6:") and "average_utilizaton" in stderr


@pytest.mark.parametrize("args, words", [
    (["--capacity", "10", "--startup", "60"], "--trace FILE or --workload NAME"),
    (["--workload", "flash_crowd", "--startup", "60"], "--capacity is required"),
    (["--workload", "flash_crowd", "--capacity", "10"], "--startup is required"),
    (QUICK + ["--startup", "weibull:1,2"], "invalid startup"),
    (QUICK + ["--tick", "20", "--sync-period", "15"], "whole multiple"),
    (QUICK + ["--out", "scores.txt"], ".json or .csv"),
    (QUICK + ["-o", "yaml"], "the format on stdout is text, json or csv"),
    (QUICK + ["--param", "surge=lots"], "surge"),
    (QUICK + ["--param", "wobble=1"], "wobble"),
    (QUICK + ["-s", "nope"], "no semantics could run"),
])
def test_bad_flags_exit_2_with_one_line(capsys, args: list[str], words: str) -> None:
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), *args, *(["-s", "kubernetes"] if "-s" not in args else []))
    assert code == 2
    assert words in stderr and "Traceback" not in stderr


def test_argparse_rejects_malformed_values(capsys) -> None:
    for args in (["--scale", "0"], ["--scale", "1/0"], ["--capacity", "-1"], ["--tick", "soon"],
                 ["--workload", "tsunami"]):
        with pytest.raises(SystemExit) as e:
            main(["simulate", str(EXAMPLE), *args])
        assert e.value.code == 2
    capsys.readouterr()


def test_unregistered_semantics_are_skipped_with_a_note(capsys) -> None:
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), *QUICK, "-s", "kubernetes,imaginary", "-q")
    assert code == 0 and "skipped imaginary (web): not registered" in stderr


def test_scenario_errors(capsys, tmp_path: Path) -> None:
    for text, words in (("capacity: 10\nstartup: 60\nworklaod: step\n", "did you mean 'workload'"),
                        ("workload: {name: tsunami}\n", "unknown workload"),
                        ("capacity: -1\n", "positive"), ("- 1\n", "mapping"), ("a: [\n", "invalid YAML")):
        scenario = write(tmp_path / "s.yaml", text)
        code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--scenario", scenario)
        assert code == 2 and words in stderr, stderr


def test_help_names_the_contract_flags(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    for flag in ("--trace", "--workload", "--capacity", "--startup", "--tick", "--semantics", "--output", "--out",
                 "--plot", "--jobs", "--scale", "--fill", "--price", "--scenario"):
        assert flag in text
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "POLICY" in capsys.readouterr().out


def test_example_policy_validates_and_is_the_demos(cli) -> None:
    p = cli("validate", str(EXAMPLE))
    assert p.returncode == 0 and p.stdout.strip() == f"{EXAMPLE}: ok (policy file: policy 'web')"
    policy = load_policy_file(EXAMPLE)
    assert policy == parse_policy_text(DEMO_POLICY)
    assert (policy.min_replicas, policy.max_replicas) == (1, 200)
    assert policy.metrics[0].target.average_utilization == 60


def test_demo_simulation(tmp_path: Path) -> None:
    console = Console(record=True, width=140)
    assert run_simulation_demo(console, str(tmp_path / "out")) == 0
    text = console.export_text()
    assert "kubernetes" in text and "oracle" in text
    missing = [n for n in BUILTIN_SEMANTICS if n not in registry.current().semantics]
    if missing:
        assert f"not registered yet, skipped: {', '.join(missing)}" in text
    assert (tmp_path / "out" / "simulation.png").read_bytes()[:4] == b"\x89PNG"
    runs = json.loads((tmp_path / "out" / "simulation.json").read_text())["runs"]
    ran = {r["semantics"] for r in runs}
    assert "kubernetes" in ran and ran <= set(BUILTIN_SEMANTICS) - set(missing)


def test_demo_never_crashes(tmp_path: Path, monkeypatch) -> None:
    import scalebridge.simulator.batch as run_module

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(run_module, "compare", broken)
    console = Console(record=True, width=120)
    assert run_simulation_demo(console, str(tmp_path)) == 1
    assert "simulation demo failed" in console.export_text()


def test_the_caption_says_what_the_peak_needs_and_when_every_run_is_capped(capsys) -> None:
    """A trace whose peak needs more members than the policy allows: every run is short there,
    the oracle included — the table says why (and a forgotten --scale shows in the count)."""
    code, stdout, stderr = sb(capsys, "simulate", str(EXAMPLE), "--workload", "step", "--duration", "1h",
                              "--param", "up_at_seconds=600", "--peak", "20000", "--capacity", "50",
                              "--startup", "60", "-s", "kubernetes")
    assert code == 0, stderr
    text = " ".join(stdout.split())
    assert "(needs 400 members)" in text
    assert "The peak needs 400 members and 'web' allows" in text and "every run is capped there" in text


def test_a_predictive_capacity_other_than_the_fleets_is_noted(capsys) -> None:
    predictive = REPO / "examples" / "predictive" / "policy.yaml"
    code, _, stderr = sb(capsys, "simulate", str(predictive), "--workload", "flash_crowd", "--duration", "1h",
                         "--capacity", "50", "--startup", "120", "-s", "scalebridge", "-q")
    assert code == 0
    assert "capacity_per_replica is 25000 but --capacity is 50" in stderr
    code, _, stderr = sb(capsys, "simulate", str(predictive), "--workload", "flash_crowd", "--duration", "1h",
                         "--capacity", "25000", "--startup", "120", "-s", "scalebridge", "-q")
    assert code == 0 and "capacity_per_replica" not in stderr


def need(name: str) -> None:
    if name not in registry.current().semantics:
        pytest.skip(f"semantics {name!r} is not registered")


MORE_TRACE_PROBLEMS = {
    "blank-value": ("timestamp,value\n0,1\n60,\n120,3\n", ":3:", "not a number"),
    "three-fields": ("timestamp,value\n0,1\n60,2,3\n120,3\n", ":3:", "2 fields"),
    "blank-line": ("timestamp,value\n0,1\n\n60,2\n120,3\n", ":3:", "blank line"),
    "wrong-header": ("time,value\n0,1\n60,2\n", ":1:", "header"),
    "header-only": ("timestamp,value\n", ":2:", "no data rows"),
    "one-row": ("timestamp,value\n0,1\n", ":2:", "only one data row"),
    "infinity": ("timestamp,value\n0,1\n60,1e400\n", ":3:", "finite"),
}


@pytest.mark.parametrize("problem", sorted(MORE_TRACE_PROBLEMS))
def test_more_trace_problems_exit_2_naming_file_and_line(capsys, tmp_path: Path, problem: str) -> None:
    text, line, words = MORE_TRACE_PROBLEMS[problem]
    trace = write(tmp_path / f"{problem}.csv", text)
    code, stdout, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "50",
                              "--startup", "60", "-s", "kubernetes")
    assert code == 2 and stdout == ""
    assert f"{trace}{line}" in stderr and words in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_tick_not_dividing_the_trace_and_a_trace_shorter_than_one_tick(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path / "t.csv", "timestamp,value\n0,100\n60,200\n120,300\n180,50\n")
    out = tmp_path / "o.json"
    assert sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "50", "--startup", "60",
              "--tick", "45", "-s", "kubernetes", "-q", "--out", str(out))[0] == 0
    data = json.loads(out.read_text())
    assert data["workload"]["ticks"] == 6 and data["fleet"]["sync_period_seconds"] == 45
    assert data["fleet"]["metric_lag_seconds"] == 45          # 15 s rounded up to a whole tick
    tiny = write(tmp_path / "tiny.csv", "timestamp,value\n0,100\n5,200\n")
    assert sb(capsys, "simulate", str(EXAMPLE), "--trace", tiny, "--capacity", "50", "--startup", "60",
              "-s", "kubernetes", "-q", "--out", str(out))[0] == 0
    data = json.loads(out.read_text())
    assert data["workload"]["ticks"] == 1 and data["workload"]["peak_load"] == pytest.approx(150)
    assert data["runs"][0]["underprovisioned_seconds"] == 0


def test_csv_output_has_every_contract_column_and_one_row_per_run(capsys, tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    code, _, stderr = sb(capsys, "compare", str(EXAMPLE), "--workload", "step", "--duration", "20m",
                         "--param", "up_at_seconds=300", "--capacity", "50", "--startup", "uniform:30,90",
                         "--out", str(out), "-q")
    assert code == 0, stderr
    rows = list(csv.DictReader(out.open()))
    builtin = [n for n in ["kubernetes", "gce", "azure", "aws", "scalebridge"] if n in registry.current().semantics]
    assert [r["semantics"] for r in rows] == builtin + sorted(set(registry.current().semantics) - set(builtin))
    for key in CONTRACT:
        assert key in rows[0]
    for r in rows:
        assert float(r["instance_hours"]) > 0 and r["policy"] == "web"


@pytest.mark.divergence("simulator-partial-last-tick")
def test_a_partial_last_tick_is_not_paid_as_a_whole_tick(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path / "t.csv", "timestamp,value\n0,100\n60,100\n120,100\n180,100\n")   # 240 s, 2 members
    out = tmp_path / "o.json"
    assert sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "50", "--startup", "0",
              "--tick", "200", "-s", "kubernetes", "-q", "--out", str(out))[0] == 0
    data = json.loads(out.read_text())
    assert data["runs"][0]["oracle_instance_hours"] == pytest.approx(2 * 240 / 3600)   # reported: 2 * 400 / 3600
    assert data["workload"]["duration_seconds"] == pytest.approx(240)


def test_tick_zero_is_bad_input(capsys) -> None:
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--workload", "step", "--duration", "10m",
                         "--capacity", "50", "--startup", "60", "--tick", "0", "-s", "kubernetes")
    assert code == 2 and "tick" in stderr


def test_table_oracle_row_shows_its_real_shortfall(capsys) -> None:
    need("kubernetes")
    code, stdout, stderr = sb(capsys, "simulate", str(EXAMPLE), "--workload", "step", "--duration", "1h",
                              "--param", "up_at_seconds=600", "--peak", "20000", "--capacity", "50",
                              "--startup", "60", "-s", "kubernetes")
    assert code == 0, stderr
    row = next(line.split() for line in stdout.splitlines() if line.strip().startswith("oracle"))
    assert row[3] != "0"        # short min: the oracle is short for 50 minutes


def test_price_must_be_a_finite_non_negative_number(capsys, tmp_path: Path) -> None:
    out = tmp_path / "o.json"
    with pytest.raises(SystemExit) as e:   # argparse, as for --capacity
        main(["simulate", str(EXAMPLE), "--workload", "step", "--duration", "10m", "--capacity", "50",
              "--startup", "60", "-s", "kubernetes", "--price", "nan", "--out", str(out)])
    assert e.value.code == 2 and "--price" in capsys.readouterr().err and not out.exists()


def test_bad_value_messages_show_the_number_as_written(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path / "neg.csv", "timestamp,value\n0,1\n60,-2\n120,3\n")
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--capacity", "50",
                         "--startup", "60", "-s", "kubernetes")
    assert code == 2 and f"{trace}:3:" in stderr
    assert "np.float64" not in stderr and "-2" in stderr


def test_trace_and_workload_together_say_not_both(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path / "t.csv", "timestamp,value\n0,100\n60,100\n")
    code, _, stderr = sb(capsys, "simulate", str(EXAMPLE), "--trace", trace, "--workload", "step",
                         "--capacity", "50", "--startup", "60", "-s", "kubernetes")
    assert code == 2 and "both" in stderr


def test_with_several_policies_the_never_scaled_note_names_the_policy(capsys):
    from scalebridge.cli import main
    policies = [REPO / "examples" / "simulate" / "policy.yaml", REPO / "examples" / "policies" / "web.yaml"]
    rc = main(["compare", *map(str, policies), "--workload", "step", "--capacity", "10", "--startup", "60",
               "--duration", "1h", "-s", "azure"])
    out = capsys.readouterr().out
    assert rc == 0
    notes = [line for line in out.splitlines() if "never scaled" in line]
    names = [line.split(" under ", 1)[1].split(" ", 1)[0] for line in notes if " under " in line]
    assert len(notes) == len(names) >= 1, notes       # every note says under which policy
    assert len(set(names)) == len(names)


def test_a_semantics_that_never_scaled_is_said_so_beside_the_table(tmp_path, capsys):
    """The azure semantics ignores a target-metric policy, so it never scales: its cost
    looks lowest (below the oracle's) while it is short. The table says so."""
    from scalebridge.cli import main
    rc = main(["compare", str(REPO / "examples" / "simulate" / "policy.yaml"), "--workload", "step",
               "--capacity", "10", "--startup", "60", "--duration", "1h", "-s", "azure"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "azure never scaled (DesiredWithinRange" in out and \
        "metrics: the azure semantics does not read it (an autoscale setting has no target metrics" in out
    # when it is short as well, the note says its cost is no saving (tests/cli/recorded/demo.out)
