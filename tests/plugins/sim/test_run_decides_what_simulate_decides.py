"""The controller adds nothing and loses nothing: for every built-in semantics,
``scalebridge run`` with a ``sim`` target under ``--clock virtual`` gives, sync
for sync, the desired size ``scalebridge simulate`` gives on the same policy, load
and fleet — read from the run's audit log (``desired_replicas``) and from the
replay's ``--timeline`` (``<semantics>:desired``), on a built-in workload and on a
slice of a real trace."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scalebridge.engine import BUILTIN_SEMANTICS

#: one policy every semantics acts on: a CPU target (kubernetes, gce, aws, scalebridge)
#: and threshold rules in a profile (azure)
POLICY = {
    "name": "web", "min_replicas": 1, "max_replicas": 200,
    "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}],
    "profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 200, "default": 2}, "rules": [
        {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 300, "operator": "GreaterThan",
         "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2,
                                     "cooldown_seconds": 120}},
        {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 600, "operator": "LessThan",
         "threshold": 40, "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1,
                                     "cooldown_seconds": 300}}]}],
}

TRACE = Path(__file__).resolve().parents[3].parent / "shared" / "traces" / "worldcup98_day46-78.csv"

#: name → (the sim ref, the same load and fleet as simulate's flags, the replayed duration)
LOADS = {
    "workload": ({"workload": "flash_crowd", "seed": 3, "duration": "3h", "capacity": 10, "startup": 60},
                 ["--workload", "flash_crowd", "--seed", "3", "--duration", "3h", "--capacity", "10",
                  "--startup", "60"], "3h"),
    # a World Cup 98 day's busiest hours (requests per minute, read per second), VMs of 90 s startup
    "trace": ({"trace": str(TRACE), "scale": "1/60", "offset": "12h", "duration": "6h", "capacity": 25,
               "startup": "uniform:60,120", "seed": 1},
              ["--trace", str(TRACE), "--scale", "1/60", "--offset", "12h", "--duration", "6h", "--capacity", "25",
               "--startup", "uniform:60,120", "--seed", "1"], "6h"),
}


def scalebridge(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module", params=sorted(LOADS))
def both(request, tmp_path_factory) -> tuple[str, dict, dict]:
    """One ``scalebridge run`` with a sim target per semantics, and one
    ``scalebridge simulate`` of every semantics: per semantics, the desired size at
    each sync time from each."""
    name = request.param
    ref, flags, until = LOADS[name]
    if "trace" in ref and not TRACE.is_file():
        pytest.skip(f"no trace at {TRACE}")
    tmp = tmp_path_factory.mktemp(f"run-{name}")
    (tmp / "policy.yaml").write_text(yaml.safe_dump(POLICY), encoding="utf-8")
    config = {"sync_period_seconds": 15, "policies": {"web": "policy.yaml"},
              "targets": [{"name": s, "provider": "sim", "policy": "web", "semantics": s, "ref": ref}
                          for s in BUILTIN_SEMANTICS]}
    (tmp / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    scalebridge("run", "run.yaml", "--clock", "virtual", "--until", until, "--audit", "audit.jsonl",
                "--state", "state.db", cwd=tmp)
    ran: dict[str, dict[float, int]] = {s: {} for s in BUILTIN_SEMANTICS}
    for line in (tmp / "audit.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert rec["action"] in ("applied", "unchanged"), rec
        ran[rec["target"]][rec["time"]] = rec["desired_replicas"]
    scalebridge("simulate", "policy.yaml", *flags, "-s", ",".join(BUILTIN_SEMANTICS), "--timeline",
                "timeline.csv", "-q", cwd=tmp)
    with open(tmp / "timeline.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    replayed = {s: {float(r["time"]): int(r[f"{s}:desired"]) for r in rows} for s in BUILTIN_SEMANTICS}
    return name, ran, replayed


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_run_on_a_virtual_clock_decides_what_simulate_decides(both, semantics: str) -> None:
    name, ran, replayed = both
    synced = ran[semantics]
    ticks = replayed[semantics]
    assert len(synced) == len(ticks), "one sync per tick of the 15-second sync period"
    assert [synced[t] for t in sorted(synced)] == [ticks[t] for t in sorted(synced)]
    assert len(set(synced.values())) > 1, f"{semantics} never scaled on the {name}: nothing was compared"
