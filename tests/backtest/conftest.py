"""What the back-test tests share: a slice of a real trace from ../shared/traces as
requests per second, a policy on it as an external metric (and rules, for the
azure semantics), and the run configuration that reads it from a Prometheus."""
from __future__ import annotations

import csv
import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from scalebridge import registry
from scalebridge.cli import main
from scalebridge.simulator.traces import read_trace

TRACES = Path(os.environ.get("SCALEBRIDGE_TRACES", Path(__file__).resolve().parents[3] / "shared" / "traces"))
if not TRACES.is_dir():
    TRACES = Path("/work/shared/traces")
TRACE = TRACES / "azure_llm_code_2024-05-10_16.csv"
#: the first six hours: 1,440 ticks of 15 s per semantics
HOURS = 6
FLEET = ["--capacity", "10", "--startup", "60"]

POLICY = """\
name: rps
min_replicas: 1
max_replicas: 200
metrics:
  - type: external
    name: rps
    target: {type: AverageValue, average_value: 2}
rules:
  - {metric: rps, statistic: Average, time_grain_seconds: 60, time_window_seconds: 300, time_aggregation: Average,
     operator: GreaterThan, threshold: 30, action: {direction: Increase, type: ChangeCount, value: 2, cooldown_seconds: 300}}
  - {metric: rps, statistic: Average, time_grain_seconds: 60, time_window_seconds: 600, time_aggregation: Average,
     operator: LessThan, threshold: 15, action: {direction: Decrease, type: ChangeCount, value: 1, cooldown_seconds: 300}}
"""


def trace_rps(hours: float = HOURS) -> tuple[np.ndarray, np.ndarray]:
    """The trace's first ``hours`` as requests per second (×1/60, as ``simulate --scale 1/60`` reads it)."""
    if not TRACE.is_file():
        pytest.skip(f"the shared traces are not here ({TRACE})")
    tr = read_trace(TRACE, scale=1 / 60)
    n = int(hours * 60)
    return tr.times[:n], tr.values[:n]


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def simulate(tmp_path: Path, policy: Path, hours: float = HOURS, trace: Path = TRACE) -> tuple[dict, list[dict]]:
    """``scalebridge simulate --trace`` on the same slice, under the semantics ``backtest``
    replays without ``--semantics`` (all, an installed plugin's too): its JSON and its
    timeline rows."""
    out, timeline = tmp_path / "simulate.json", tmp_path / "simulate.csv"
    code, _ = run("simulate", str(policy), "--trace", str(trace), "--scale", "1/60", "--duration", f"{hours}h",
                  *FLEET, "--semantics", "all", "--out", str(out), "--timeline", str(timeline), "-q")
    assert code == 0
    return json.loads(out.read_text()), list(csv.DictReader(timeline.open()))


def assert_same_as_simulate(backtest_json: dict, timeline: Path, target: str, sim: dict, sim_rows: list[dict]) -> None:
    """Every semantics' scores, and every tick's desired/paid/ready sizes, are simulate's."""
    runs = {r["semantics"]: r for r in backtest_json["targets"][target]["runs"]}
    assert sorted(runs) == sorted(r["semantics"] for r in sim["runs"]) == sorted(registry.current().semantics)
    for r in sim["runs"]:
        mine = runs[r["semantics"]]
        assert {k: v for k, v in mine.items() if k in r and k != "elapsed_seconds"} == \
            {k: v for k, v in r.items() if k not in ("elapsed_seconds", "policy")} | {"policy": mine["policy"]}
    rows = list(csv.DictReader(timeline.open()))
    assert len(rows) == len(sim_rows)
    shared = [k for k in sim_rows[0] if k in rows[0]]
    assert {"load", "members_needed", "oracle_paid"} <= set(shared)
    assert sum(k.endswith(":desired") for k in shared) == len(registry.current().semantics)
    for k in shared:
        assert [r[k] for r in rows] == [r[k] for r in sim_rows], k


def config(tmp_path: Path, prom_url: str, targets: str, extra: str = "") -> Path:
    (tmp_path / "policy.yaml").write_text(POLICY)
    path = tmp_path / "run.yaml"
    path.write_text(f"metric_sources:\n  prom: {{type: prometheus, url: '{prom_url}'}}\n{extra}targets:\n{targets}")
    return path


SIM_TARGET = f"""\
  - name: web
    provider: sim
    policy: policy.yaml
    ref: {{trace: {TRACE}, scale: 1/60, capacity: 10, startup: 60}}
    metrics:
      rps: {{source: {{metric_source: prom, query: 'sum(rps{{job="web"}})'}}}}
"""
