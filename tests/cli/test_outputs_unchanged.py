"""The documented commands print what they printed when these recordings were made.

Each case runs the ``scalebridge`` command on a file under ``examples/`` in a
fresh interpreter and compares stdout (and, for ``demo``, the scores file it
writes) byte for byte with ``tests/cli/recorded/<case>.out``. The recordings
were made from a tree taken before a refactoring; a difference means a change
of behaviour, not of layout. To record again on purpose (a deliberate change
of output, said in its commit): ``python tests/cli/test_outputs_unchanged.py``.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "recorded"
REQUESTS = ["container-resource.json", "external-average-value.json", "external-value.json",
            "object-average-value.json", "object-value.json", "pods.json", "resource-average-value.json",
            "resource-utilization.json"]
SITUATIONS = ["above-max.json", "rules-in-flap-out.json", "rules-in-flap.json", "rules-out.json",
              "scale-in-fresh.json", "scale-in-peak-7min.json", "scale-out.json", "tolerance.json"]

CASES: dict[str, list[str]] = {}
for _name in REQUESTS:
    _stem = _name.removesuffix(".json")
    CASES[f"decide-{_stem}"] = ["decide", f"examples/requests/{_name}"]
    CASES[f"decide-all-{_stem}"] = ["decide", "--semantics", "all", f"examples/requests/{_name}"]
for _name in SITUATIONS:
    _stem = _name.removesuffix(".json")
    CASES[f"decide-all-situation-{_stem}"] = ["decide", "--semantics", "all", f"examples/situations/{_name}"]
    CASES[f"explain-situation-{_stem}"] = ["explain", f"examples/situations/{_name}"]
CASES.update({
    "explain-pods": ["explain", "examples/requests/pods.json"],
    "explain-external-value": ["explain", "examples/requests/external-value.json"],
    "explain-gce-scale-in-peak-7min": ["explain", "--semantics", "gce",
                                       "examples/situations/scale-in-peak-7min.json"],
    "decide-policy-web": ["decide", "--semantics", "all", "--policy", "examples/policies/web.yaml",
                          "examples/requests/resource-utilization.json"],
    "simulate-flash-crowd": ["simulate", "examples/simulate/policy.yaml", "--workload", "flash_crowd",
                             "--capacity", "10", "--startup", "60", "--duration", "3h", "--seed", "3",
                             "-s", "kubernetes,gce", "-o", "json"],
    "simulate-flash-crowd-table": ["simulate", "examples/simulate/policy.yaml", "--workload", "flash_crowd",
                                   "--capacity", "10", "--startup", "60", "--duration", "3h", "--seed", "3",
                                   "-s", "kubernetes,gce,aws"],
    "compare-predictive": ["compare", "examples/predictive/policy.yaml", "--workload", "exponential_growth",
                           "--capacity", "10", "--startup", "120", "--duration", "2h", "--seed", "1",
                           "--frontier"],
    "compare-step-json": ["compare", "examples/simulate/policy.yaml", "--workload", "step",
                          "--capacity", "10", "--startup", "uniform:30,90", "--duration", "2h", "--seed", "7",
                          "--price", "0.096", "-o", "json"],
    "demo": ["demo", "--output-dir", "out"],
})
# a run's wall-clock time, the one number no two runs share
ELAPSED = re.compile(rb'("elapsed_seconds": ?)[0-9.e+-]+')
# cases run in a temporary directory (they write files there), and the files
# compared like their stdout: recorded as <case>.<file>
WRITTEN = {"demo": ["out/simulation.json"]}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(COLUMNS="120", LINES="50", TERM="dumb", NO_COLOR="1", PYTHONHASHSEED="0")
    env.pop("FORCE_COLOR", None)
    return env


def run_case(argv: list[str], out_dir: Path) -> tuple[int, bytes, dict[str, bytes]]:
    """Run one case (in ``out_dir`` when it writes files); wall-clock times read ``0``."""
    names = next((WRITTEN[c] for c in WRITTEN if CASES[c] == argv), None)
    proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", *argv], cwd=out_dir if names else ROOT,
                          env=_env(), capture_output=True, timeout=120, check=False)
    stdout = ELAPSED.sub(rb"\g<1>0", proc.stdout)
    files = {n: ELAPSED.sub(rb"\g<1>0", (out_dir / n).read_bytes()) for n in names or []}
    return proc.returncode, stdout, files


def _recorded(case: str) -> tuple[int, bytes]:
    raw = (RECORDED / f"{case}.out").read_bytes()
    head, _, body = raw.partition(b"\n")
    return int(head.removeprefix(b"exit ")), body


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_is_the_recorded_one(case: str, tmp_path: Path) -> None:
    code, stdout, files = run_case(CASES[case], tmp_path)
    want_code, want_stdout = _recorded(case)
    assert code == want_code
    assert stdout.decode() == want_stdout.decode()
    for name, content in files.items():
        assert content == (RECORDED / f"{case}.{Path(name).name}").read_bytes(), name


def test_every_recording_has_a_case() -> None:
    recorded = {p.name.split(".")[0] for p in RECORDED.iterdir()}
    assert recorded == set(CASES)


def record() -> None:
    import tempfile
    RECORDED.mkdir(exist_ok=True)
    for case, argv in sorted(CASES.items()):
        with tempfile.TemporaryDirectory() as tmp:
            code, stdout, files = run_case(argv, Path(tmp))
        (RECORDED / f"{case}.out").write_bytes(b"exit %d\n" % code + stdout)
        for name, content in files.items():
            (RECORDED / f"{case}.{Path(name).name}").write_bytes(content)
        print(case, code, len(stdout))


if __name__ == "__main__":
    record()
