"""Every ``scalebridge`` command given a hostile or impossible file ends within 20 s and
2 GB, with exit 0 and a real answer, or exit 2 and at most three lines on stderr; never a
traceback, never a decision made on an impossible input (docs/run.md, "Operating it
safely"; docs/protocol.md, limits).

Each command runs in a child forked from this process after ``scalebridge`` is imported
(a real process: its own exit status, stderr and address-space limit, at the cost of a
fork rather than an interpreter start), so that the whole matrix stays within CI's time."""
from __future__ import annotations

import json
import os
import random
import resource
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import scalebridge.backtest.cli
import scalebridge.cli
import scalebridge.controller.cli
import scalebridge.registry
import scalebridge.simulator.cli
import scalebridge.translate.cli

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "examples/policies/web.yaml"
SIM_CONFIG = ROOT / "examples/run/sim.yaml"
REQUEST = ROOT / "examples/requests/resource-utilization.json"
LIMIT_BYTES = 2 << 30
LIMIT_SECONDS = 20

scalebridge.registry.current()   # built once here, inherited by every forked child


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float


def run_forked(argv: list[str], tmp: Path, stdin: Path | None = None) -> Outcome:
    """``scalebridge ARGV`` in a forked child: 2 GB of address space, killed after 20 s."""
    out, err = tmp / "stdout", tmp / "stderr"
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:   # the child: never returns into pytest
        code = 98
        try:
            resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))
            fd_in = os.open(stdin or os.devnull, os.O_RDONLY)
            os.dup2(fd_in, 0)
            os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
            os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            sys.stdin = open(0, encoding="utf-8", closefd=False)
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
            sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
            try:
                code = scalebridge.cli.main(argv)
            except SystemExit as e:   # argparse's usage errors
                code = e.code if isinstance(e.code, int) else 2
            except BaseException:   # noqa: BLE001 - reported as a traceback, which fails the test
                import traceback
                traceback.print_exc()
                code = 99
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    deadline = start + LIMIT_SECONDS
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"scalebridge {' '.join(argv)}: still running after {LIMIT_SECONDS} s")
        time.sleep(0.01)
    code = os.waitstatus_to_exitcode(status)
    return Outcome(code, out.read_text(errors="replace"), err.read_text(errors="replace"),
                   time.monotonic() - start)


def bounded(o: Outcome, argv: list[str]) -> None:
    """Exit 0 with an answer, or exit 2 with at most three lines of stderr; no traceback."""
    what = f"scalebridge {' '.join(argv)} → exit {o.code}\n{o.stderr[-3000:]}"
    assert "Traceback" not in o.stderr and "internal error" not in o.stderr, what
    assert o.code in (0, 2), what
    if o.code == 2:
        lines = o.stderr.strip().splitlines()
        assert 1 <= len(lines) <= 3, what
        assert all(len(line) < 600 for line in lines), what
    else:
        assert o.stdout.strip() or o.stderr.strip(), what


# ----------------------------------------------------------------------------- the files

def _alias_bomb() -> str:
    text = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for c in "bcdefghij":
        text += f"{c}: &{c} [" + ", ".join([f"*{chr(ord(c) - 1)}"] * 9) + "]\n"
    return text


def _trace(values) -> str:
    return "timestamp,value\n" + "".join(f"{1_700_000_000 + 60 * i},{v}\n" for i, v in enumerate(values))


TEXT_FILES = {
    "empty": "",
    "whitespace": " \n\t\n",
    "deep-yaml": "x: " + "[" * 5000 + "]" * 5000 + "\n",
    "deep-block-yaml": "".join("  " * i + "a:\n" for i in range(3000)),
    "deep-json": "[" * 100_000 + "]" * 100_000,
    "alias-bomb": _alias_bomb(),
    "huge-int": "min_replicas: " + "9" * 5000 + "\nmax_replicas: 3\n",
    "huge-float": "min_replicas: 1e308\nmax_replicas: 1e309\n",
    "scalar": "42\n",
    "list": "- 1\n- 2\n",
    "nul-in-text": "min_replicas: 1\x00\nmax_replicas: 3\n",
    "trace-1e308": _trace([1e308] * 200),
    "trace-negative": _trace([-5.0] * 100 + [10.0] * 100),
    "trace-nonfinite": _trace([1.0, float("nan"), float("inf"), 1.0] * 50),
    "trace-huge-int": _trace(["9" * 5000] * 3),
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    """Every hostile file by name: text ones, binary, a FIFO nobody writes, a directory,
    /dev/zero and a file past the size limit."""
    d = tmp_path_factory.mktemp("hostile")
    files: dict[str, Path] = {}
    for name, text in TEXT_FILES.items():
        files[name] = d / f"{name}.yaml"
        files[name].write_text(text, encoding="utf-8")
    files["binary"] = d / "binary.yaml"
    files["binary"].write_bytes(random.Random(25).randbytes(64 * 1024))
    files["latin-1"] = d / "latin1.yaml"
    files["latin-1"].write_bytes("name: caf\xe9\n".encode("latin-1"))
    files["fifo"] = d / "fifo.yaml"
    os.mkfifo(files["fifo"])
    files["directory"] = d / "dir.yaml"
    files["directory"].mkdir()
    files["dev-zero"] = Path("/dev/zero")
    files["oversized"] = d / "big.yaml"
    with open(files["oversized"], "w") as f:   # 18 MB of a valid-looking mapping: past the 16 MB bound
        f.write("min_replicas: 1\nmax_replicas: 3\n")
        f.write("# padding\n" * 1_800_000)
    return files


def commands(f: str) -> list[list[str]]:
    """Every command that reads a file, with ``f`` in each file position it takes."""
    policy, sim = str(POLICY), str(SIM_CONFIG)
    return [
        ["validate", f],
        ["validate", "--semantics", "all", f],
        ["decide", f],
        ["decide", "--policy", f, str(REQUEST)],
        ["explain", f],
        ["simulate", f, "--workload", "flash_crowd", "--quiet"],
        ["simulate", policy, "--trace", f, "--capacity", "10", "--startup", "60", "--quiet"],
        ["simulate", "--scenario", f],
        ["compare", "--trace", f, "--capacity", "10", "--startup", "60", policy, "--quiet"],
        ["run", "--once", "--dry-run", "--clock", "virtual", "--state", "{tmp}/state.db", f],
        ["observe", f],
        ["state", "show", "--config", f],
        ["state", "show", "--state", f],
        ["pause", "--state", "{tmp}/state.db", f, "web"],
        ["backtest", "--start", "2024-01-01T00:00:00Z", "--end", "2024-01-01T01:00:00Z", f],
        *(["render", "--to", to, f] for to in ("kubernetes", "gce", "azure", "aws", "keda")),
        *(["import", "--from", fr, f] for fr in ("kubernetes", "gce", "azure", "aws", "keda")),
        ["apply", "--dry-run", "--state", "{tmp}/state.db", f],
        ["run", "--once", "--dry-run", "--clock", "virtual", "--state", f, sim],
    ]


@pytest.mark.parametrize("name", [*TEXT_FILES, "binary", "latin-1", "fifo", "directory", "dev-zero", "oversized"])
def test_every_command_ends_bounded_on_a_hostile_file(name, hostile, tmp_path):
    path = str(hostile[name])
    failures = []
    for argv in commands(path):
        argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
        o = run_forked(argv, tmp_path)
        try:
            bounded(o, argv)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n\n".join(failures)


def test_a_hostile_file_on_standard_input_is_bounded(hostile, tmp_path):
    """``decide -`` and ``validate -`` read standard input as they read a file."""
    failures = []
    for name in ("deep-json", "binary", "empty", "trace-1e308"):
        for argv in (["decide", "-"], ["validate", "-"], ["import", "--from", "kubernetes", "-"]):
            o = run_forked(argv, tmp_path, stdin=hostile[name])
            try:
                bounded(o, argv + [f"< {name}"])
            except AssertionError as e:
                failures.append(str(e))
    assert not failures, "\n\n".join(failures)


def test_a_trace_value_beyond_a_float_sum_is_refused_in_one_line(hostile, tmp_path):
    argv = ["simulate", str(POLICY), "--trace", str(hostile["trace-1e308"]), "--capacity", "10", "--startup", "60",
            "--quiet"]
    o = run_forked(argv, tmp_path)
    assert o.code == 2, o.stderr
    assert len(o.stderr.strip().splitlines()) == 1, o.stderr
    assert ":2: value must be at most 1e+15, got 1e+308" in o.stderr, o.stderr


@pytest.mark.parametrize("name, says", [("fifo", "not a regular file"), ("dev-zero", "not a regular file"),
                                        ("directory", "Is a directory"), ("oversized", "larger than")])
def test_validate_refuses_what_is_not_a_small_regular_file(name, says, hostile, tmp_path):
    o = run_forked(["validate", str(hostile[name])], tmp_path)
    assert o.code == 2, o.stderr
    assert says in o.stderr and str(hostile[name]) in o.stderr, o.stderr
    assert o.seconds < LIMIT_SECONDS


@pytest.mark.parametrize("sample", ["-400m", -1e308, "NaN", "-Infinity"])
def test_an_impossible_sample_in_a_request_file_never_makes_a_decision(sample, tmp_path):
    """A negative sample is decided as an invalid metric (exit 0, the size held, the error
    naming the member); a non-finite one is refused (exit 2, one line)."""
    req = json.loads(REQUEST.read_text())
    cpu = req["observations"]["metrics"]["cpu"]["members"]
    member = next(iter(cpu))
    cpu[member] = "@@"
    f = tmp_path / "req.json"
    f.write_text(json.dumps(req).replace('"@@"', sample if sample in ("NaN", "-Infinity") else json.dumps(sample)))
    argv = ["decide", "--semantics", "all", str(f)]
    o = run_forked(argv, tmp_path)
    bounded(o, argv)
    if o.code == 0:
        for line in o.stdout.splitlines():
            r = json.loads(line)
            assert r["desired_replicas"] == r["current_replicas"], r
            if r["metrics"]:   # azure decides from rules: this policy has none, so it reads no metric
                assert member in (r["metrics"][0]["error"] or "") and member in r["error"], r
    else:
        assert "got -Infinity" in o.stderr or "got NaN" in o.stderr or "out of range" in o.stderr, o.stderr
