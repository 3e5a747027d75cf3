"""Timing ``scalebridge`` as a shell runs it: one child process at a time, its wall
time, CPU time and peak RSS from ``wait4``'s rusage, or the instructions it executes
(valgrind's callgrind: the figure the machine's load does not move) — shared by
``cli.py``, ``run_sim.py`` and ``simulate.py``."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional


def scalebridge() -> str:
    exe = Path(sys.executable).with_name("scalebridge")
    return str(exe) if exe.exists() else "scalebridge"


#: as an installed package runs: with its bytecode cached (pip compiles it at install; a
#: shell whose PYTHONDONTWRITEBYTECODE is set would otherwise compile every module
#: from source at every start), kept outside the repository
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(os.environ.get("TMPDIR", "/tmp"), "scalebridge-bench-pycache")


def timed_child(cmd: list[str], cwd: Optional[Path] = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and the peak RSS (MB) of one child
    process (wait4's rusage); a child that fails stops the benchmark with its stderr."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def instructions(cmd: list[str], cwd: Optional[Path] = None, between: Optional[Callable[[], None]] = None) -> int:
    """The instructions one run of ``cmd`` executes (valgrind's callgrind, its "I refs"),
    after a run that caches the bytecode (then ``between()``: e.g. remove what that
    run left, a state file); a child that fails stops the benchmark."""
    timed_child(cmd, cwd)
    if between is not None:
        between()
    # one string hash for every count: a set's order (and so a count) can depend on it;
    # one BLAS thread: OpenBLAS's idle threads spin, and their instructions vary run to run
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                          cwd=cwd, env={**ENV, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"},
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"valgrind {' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
    line = next((line for line in proc.stderr.splitlines() if "refs:" in line), None)
    if line is None:
        raise SystemExit(f"valgrind printed no instruction count for {' '.join(cmd)}")
    return int(line.split("refs:")[1].strip().replace(",", ""))
