#!/usr/bin/env python3
"""What a shell user waits for (issue #29), each command run ``--repeat`` times
as a child process; printed: wall time, CPU time (user + system, the steadier
number on a shared machine) and peak RSS, as median and range.

- ``cold``: one ``scalebridge decide FILE`` (examples/requests/pods.json): the
  interpreter's start, the imports, one decision (goal <= 0.3 s); also
  ``python -c "import scalebridge"`` alone, for reference. Each command is run
  once first, unmeasured, with the bytecode cached as an installed package has
  it (``PYTHONPYCACHEPREFIX`` in the temporary directory; PYTHONDONTWRITEBYTECODE
  unset for the children);
- ``simulate``: ``scalebridge simulate examples/simulate/policy.yaml --trace
  worldcup98 --scale 1/60 --duration 30d --capacity 25 --startup 90 --semantics
  all`` — a 30-day trace at 15-s ticks (172,800 ticks) under all five semantics
  (goal <= 5 s, <= 300 MB). The trace is shared/traces/worldcup98_day46-78.csv
  (beside the repository or at /work/shared); without it, ``--workload diurnal
  --duration 30d --peak 3000``. The command's default ``--jobs`` (the CPUs this
  process may use) unless ``--jobs N`` is given here (1: the five replays one
  after another). CPU time and peak RSS include the worker processes (wait4
  counts the children a process waited for; the peak is the largest process's).
  With ``--instructions``, also the instructions of the same command over 2 days in
  one process (``--jobs 1``): all of its work, start included, as a count the
  machine's load does not move (with one OpenBLAS thread, whose idle spinning
  would otherwise vary it).

    .venv/bin/python benchmarks/cli.py [--only cold,simulate] [--repeat 5] [--jobs N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACES = [REPO.parent / "shared" / "traces", Path("/work/shared/traces")]


import children  # noqa: E402 (benchmarks/ is the script's directory)
from children import instructions, scalebridge, timed_child  # noqa: E402


def stats(xs: list[float], unit: str, digits: int = 2) -> str:
    return (f"median {statistics.median(xs):.{digits}f} {unit} "
            f"(range {min(xs):.{digits}f}–{max(xs):.{digits}f})")


def measure(label: str, cmd: list[str], repeat: int, goal: str) -> None:
    timed_child(cmd, REPO)   # warm: the bytecode cache and the page cache
    rows = [timed_child(cmd, REPO) for _ in range(repeat)]
    wall, cpu, mb = zip(*rows)
    print(f"{label}: wall {stats(list(wall), 's')}; cpu {stats(list(cpu), 's')}; "
          f"peak RSS {stats(list(mb), 'MB', 0)}; n={repeat}  ({goal})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="cold,simulate")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--instructions", action="store_true",
                    help="also count the instructions of one run (valgrind's callgrind): the number that does "
                         "not vary with the machine's load (cold: each command; simulate: 2 days, --jobs 1)")
    ap.add_argument("--jobs", type=int, help="simulate: pass --jobs N (default: the command's own default)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if "cold" in only:
        measure("python -c 'import scalebridge'", [sys.executable, "-c", "import scalebridge"], args.repeat,
                "reference")
        measure("scalebridge decide examples/requests/pods.json",
                [scalebridge(), "decide", "examples/requests/pods.json"], args.repeat, "goal <= 0.3 s")
        if args.instructions:
            for cmd in ([sys.executable, "-c", "import scalebridge"],
                        [sys.executable, "-m", "scalebridge.cli", "decide", "examples/requests/pods.json"]):
                print(f"  instructions of {' '.join(cmd[1:])}: {instructions(cmd, REPO):,}")
    if "simulate" in only:
        trace = next((d / "worldcup98_day46-78.csv" for d in TRACES if (d / "worldcup98_day46-78.csv").is_file()),
                     None)
        load = ["--trace", str(trace), "--scale", "1/60"] if trace else ["--workload", "diurnal", "--peak", "3000"]
        def simulate(duration: str) -> list[str]:
            return ["simulate", "examples/simulate/policy.yaml", *load, "--duration", duration,
                    "--capacity", "25", "--startup", "90", "--semantics", "all", "--quiet"]

        cmd = [scalebridge(), *simulate("30d")]
        if args.jobs is not None:
            cmd += ["--jobs", str(args.jobs)]
        print("$ " + " ".join(cmd[1:]))
        measure("scalebridge simulate (30 days, 5 semantics)", cmd, max(1, min(args.repeat, 3)),
                "goal <= 5 s, <= 300 MB")
        if args.instructions:
            short = [sys.executable, "-m", "scalebridge.cli", *simulate("2d"), "--jobs", "1"]
            given = children.ENV.get("OPENBLAS_NUM_THREADS")
            children.ENV["OPENBLAS_NUM_THREADS"] = "1"
            try:
                print(f"  instructions of {' '.join(short[3:])}: {instructions(short, REPO):,}")
            finally:
                if given is None:
                    del children.ENV["OPENBLAS_NUM_THREADS"]
                else:
                    children.ENV["OPENBLAS_NUM_THREADS"] = given
    return 0


if __name__ == "__main__":
    sys.exit(main())
