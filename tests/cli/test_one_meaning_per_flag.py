"""A flag means one thing in every command: ``-o/--output`` is the format on stdout (text,
json, csv) and ``--out FILE`` a file; ``--jobs`` is processes and ``--workers`` run's
targets synced at once; ``apply`` applies natively without a flag. The former spellings
still work for this release, each with one deprecation line saying what to write."""
from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIMULATE = ["simulate", str(ROOT / "examples/simulate/policy.yaml"), "--workload", "flash_crowd", "--capacity", "10",
            "--startup", "60", "--duration", "1h", "-s", "kubernetes"]


def test_output_is_the_format_on_stdout_and_out_the_file(cli, tmp_path):
    proc = cli(*SIMULATE, "-o", "json")
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["runs"][0]["semantics"] == "kubernetes"
    proc = cli(*SIMULATE, "--output", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert proc.returncode == 0 and [r["semantics"] for r in rows] == ["kubernetes"]
    out = tmp_path / "scores.json"
    proc = cli(*SIMULATE, "--out", str(out))
    assert proc.returncode == 0 and proc.stderr == ""
    assert "kubernetes" in proc.stdout and json.loads(out.read_text())["runs"][0]["semantics"] == "kubernetes"
    proc = cli(*SIMULATE, "-o", "yaml")
    assert proc.returncode == 2
    assert proc.stderr == ("scalebridge simulate: --output yaml: the format on stdout is text, json or csv; a file "
                           "is --out FILE.json|FILE.csv\n")


def test_the_former_output_spellings_still_work_with_a_deprecation_line(cli, tmp_path):
    out = tmp_path / "scores.json"
    proc = cli(*SIMULATE, "--output", str(out))
    assert proc.returncode == 0 and json.loads(out.read_text())["runs"]
    assert proc.stderr.splitlines() == [f"scalebridge simulate: --output {out} is deprecated and will be removed in "
                                        f"the next release: use --out {out} (-o/--output is the format on stdout: "
                                        "text, json, csv)"]
    proc = cli(*SIMULATE, "-o", "-")
    assert proc.returncode == 0 and json.loads(proc.stdout)["runs"]
    assert proc.stderr.splitlines() == ["scalebridge simulate: --output - is deprecated and will be removed in the "
                                        "next release: use -o json (-o/--output is the format on stdout: text, json, "
                                        "csv)"]


def test_workers_is_runs_word_and_jobs_the_replays(cli):
    proc = cli(*SIMULATE, "-o", "json", "--workers", "1")
    assert proc.returncode == 0 and json.loads(proc.stdout)["runs"]
    assert proc.stderr.splitlines() == ["scalebridge simulate: --workers is deprecated and will be removed in the next "
                                        "release: use --jobs N (or -j N): processes; --workers is run's targets "
                                        "synced at once"]
    assert "targets synced at once" in " ".join(cli("run", "--help").stdout.split())


def test_apply_is_native_without_a_flag_and_the_flag_is_deprecated(cli, tmp_path):
    shutil.copytree(ROOT / "examples/run", tmp_path / "run")
    config = str(tmp_path / "run/sim.yaml")
    state = str(tmp_path / "none.db")
    proc = cli("apply", config, "--dry-run", "--state", state)
    # runs (no "required: --native"); a sim target has no native autoscaler to apply, and says so
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0].startswith("scalebridge apply: web-hpa: apply is not available for sim "
                                                  "targets: the sim provider does not declare Capability.TRANSLATE")
    proc = cli("apply", config, "--native", "--dry-run", "--state", state)
    assert proc.stderr.splitlines()[0] == ("scalebridge apply: --native is deprecated and will be removed in the next "
                                           "release: apply is always native; leave the flag out")
