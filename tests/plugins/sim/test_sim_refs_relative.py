"""A sim target's ``trace`` (and ``scenario``) is read from the run configuration's
directory, as every relative path in a run configuration is (``Provider.ref_path_keys``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TRACE = ROOT / "examples" / "traces" / "nasa_http_1995-07-13.csv"     # shipped with the repository


def test_a_relative_trace_is_read_beside_the_configuration(tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    lines = TRACE.read_text().splitlines()[:200]
    (conf / "slice.csv").write_text("\n".join(lines) + "\n")
    (conf / "run.yaml").write_text(
        "policies: {p: {semantics: kubernetes, min_replicas: 1, max_replicas: 20, metrics: [{type: resource, "
        "name: cpu, target: {type: Utilization, average_utilization: 60}}]}}\n"
        "targets:\n  - {name: t, provider: sim, policy: p, ref: {trace: slice.csv, capacity: 10, startup: 60}}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = subprocess.run([sys.executable, "-m", "scalebridge.cli", "run", str(conf / "run.yaml"), "--clock", "virtual",
                          "--until", "5m", "--state", str(tmp_path / "s.db")],
                         cwd=elsewhere, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert out.returncode == 0, out.stderr
