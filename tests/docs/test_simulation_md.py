"""docs/simulation.md against the tool: the flags, cross-references, trace problems, compare
skipping what cannot run, the Python snippet, the scenario keys."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scalebridge import cli
from scalebridge.policyfile import load_policy_file


ROOT = Path(__file__).resolve().parents[2]


def read(name: str) -> str:
    return (ROOT / name).read_text()


def yaml_blocks(name: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", read(name), re.S)


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_simulation_md_flags_exist(capsys):
    with pytest.raises(SystemExit):
        cli.main(["simulate", "--help"])
    helptext = capsys.readouterr().out
    for flag in ("--trace", "--workload", "--scenario", "--scale", "--unit", "--fill", "--offset", "--duration",
                 "--seed", "--peak", "--param", "--capacity", "--startup", "--tick", "--sync-period",
                 "--metric-lag", "--metric-window", "--series-grain", "--drain", "--initial", "--semantics",
                 "--price", "--output", "--out", "--timeline", "--plot", "--jobs", "--workers"):
        assert flag in helptext, flag
    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    assert "--frontier" in capsys.readouterr().out


def test_simulation_md_cross_references_exist():
    for p in ("core/scalebridge/simulator/traces.py", "core/scalebridge/simulator/scenario.py",
              "tests/cli/test_simulate_and_compare.py", "docs/img/simulation-demo.png", "docs/img/frontier.png"):
        assert (ROOT / p).exists(), p


@pytest.mark.parametrize("content,fragment", [
    ("timestamp,value\n0,10\n60,10\n120,-1\n", ":4: value must be non-negative"),
    ("timestamp,value\n0,10\n60,10\n600,10\n", ":4: gap"),
    ("timestamp,value\n0,10\n120,10\n60,10\n", ":4: timestamps not sorted"),
    ("0,10\n60,10\n", ":1: missing header"),
    ("", ":1: empty file"),
])
def test_simulation_md_trace_problems_exit_2(capsys, tmp_path, content, fragment):
    f = tmp_path / "t.csv"
    f.write_text(content)
    rc, _, err = run_main(capsys, "simulate", "examples/simulate/policy.yaml", "--trace", str(f),
                          "--capacity", "10", "--startup", "60", "-q")
    assert rc == 2 and len(err.splitlines()) == 1 and fragment in err


def test_simulation_md_compare_skips_unrunnable(capsys, tmp_path):
    f = tmp_path / "nomax.yaml"
    f.write_text("name: nomax\nmin_replicas: 1\nmetrics:\n  - type: resource\n    name: cpu\n"
                 "    target: {type: Utilization, average_utilization: 60}\n")
    o = tmp_path / "o.json"
    rc, _, err = run_main(capsys, "compare", str(f), "--workload", "step", "--capacity", "10", "--startup", "60",
                          "--duration", "10m", "-s", "kubernetes,aws", "--out", str(o), "-q")
    assert rc == 0
    assert "skipped kubernetes (nomax)" in err
    d = json.loads(o.read_text())
    assert [s["semantics"] for s in d["skipped"]] == ["kubernetes"]
    for key in ("runs", "workload", "fleet", "oracle", "skipped", "price_per_instance_hour"):
        assert key in d
    for key in ("instance_hours", "oracle_instance_hours", "oracle_ratio", "underprovisioned_seconds",
                "underprovisioned_minutes", "underprovisioned_fraction", "unserved_load", "peak_overload",
                "scaling_actions", "reversals", "time_to_recover_seconds", "mean_time_to_recover_seconds",
                "underprovisioned_episodes", "decisions", "errors", "first_error", "reasons", "peak_members",
                "mean_members", "final_members", "elapsed_seconds", "published_metrics"):
        assert key in d["runs"][0], key


def test_simulation_md_python_snippet_single_process():
    from scalebridge.simulator import FleetModel, compare, make_workload, oracle_for, score_run, simulate
    policy = load_policy_file(ROOT / "examples/simulate/policy.yaml")
    load = make_workload("flash_crowd", seed=1, duration_seconds=3 * 3600).values
    model = FleetModel(capacity=10, startup="uniform:45,90", metric_lag_seconds=30)
    run = simulate(policy, load, model, semantics="kubernetes")
    for a in ("desired", "paid", "ready"):
        assert hasattr(run, a)
    score_run(run, load, model, oracle_paid=oracle_for(load, model, policy))
    compare([("web", policy)], ["kubernetes", "gce"], load, model, workers=1)
    seen = []

    def forecaster(now, history, tick):
        seen.append(history.flags.writeable)
        return None
    simulate(policy, load[:60], model, semantics="kubernetes", forecaster=forecaster)
    assert seen and not any(seen)


def test_simulation_md_python_snippet_as_script(tmp_path):
    snippet = re.search(r"## From Python\n\n```python\n(.*?)```", read("docs/simulation.md"), re.S).group(1)
    # the doc's code, on a shorter load so that it stays fast
    snippet = snippet.replace('make_workload("flash_crowd", seed=1)',
                              'make_workload("flash_crowd", seed=1, duration_seconds=1800)')
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-500:]


def test_simulation_md_scenario_keys_accepted(tmp_path):
    from scalebridge.simulator import scenario as sc
    block = yaml_blocks("docs/simulation.md")[0]
    # the block is examples/simulate/nasa.yaml as it ships, and its trace ships beside it
    assert block.strip() == (ROOT / "examples/simulate/nasa.yaml").read_text().strip()
    assert "trace: ../traces/nasa_http_1995-07-13.csv" in block
    assert (ROOT / "examples/traces/nasa_http_1995-07-13.csv").is_file()
    keys = set(re.findall(r"^(\w+):", block, re.M))
    src = (ROOT / "core/scalebridge/simulator/scenario.py").read_text()
    for k in keys:
        assert f'"{k}"' in src or f"'{k}'" in src, k
    assert sc is not None
