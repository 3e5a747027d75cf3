"""``scalebridge simulate --jobs N`` / ``compare --jobs N``: the (policy, semantics)
pairs replayed in N worker processes give the output of ``--jobs 1`` (one after
another in this process) — the same table, JSON, CSV and timeline, in the same
order; a run that cannot start or fails is reported the same way; ``--jobs 0``
or a negative number is refused in one line.

Source: docs/simulation.md (Output and exit status), the command's --help."""
from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from scalebridge import registry
from scalebridge.cli import main
from scalebridge.engine import builtin_semantics
from scalebridge.hookspecs import hookimpl
from scalebridge.semantics import Context, Decision, Semantics
from scalebridge.simulator import executors

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "simulate" / "policy.yaml"
QUICK = ["--workload", "flash_crowd", "--duration", "3h", "--capacity", "10", "--startup", "60"]


def sb(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def without_elapsed(path: Path) -> dict:
    """The JSON output but each run's ``elapsed_seconds`` (its own wall time)."""
    data = json.loads(path.read_text())
    for run in data["runs"]:
        del run["elapsed_seconds"]
    return data


def outputs(capsys, tmp_path: Path, tag: str, *args: str) -> tuple[int, str, str, dict, str, str]:
    """exit code, stdout, stderr, JSON (less elapsed times), CSV rows, timeline of one command."""
    j, c, t = tmp_path / f"{tag}.json", tmp_path / f"{tag}.csv", tmp_path / f"{tag}-timeline.csv"
    code, out, err = sb(capsys, *args, "--out", str(j), "--timeline", str(t))
    assert code == 0, err
    data = without_elapsed(j)
    assert sb(capsys, *args, "--out", str(c), "-q")[0] == 0
    rows = [line.split(",") for line in c.read_text().splitlines()]
    elapsed = rows[0].index("elapsed_seconds")
    return code, out, err, data, [r[:elapsed] + r[elapsed + 1:] for r in rows], t.read_text()


@pytest.fixture(params=["fork", "spawn"])
def start_method(request, monkeypatch) -> str:
    """Both ways workers start: forked (Linux, one thread) and spawned (elsewhere)."""
    monkeypatch.setattr(executors, "start_method", lambda: request.param)
    return request.param


def test_parallel_runs_print_and_write_what_one_process_does(capsys, tmp_path: Path, start_method: str) -> None:
    twin = tmp_path / "twin.yaml"
    twin.write_text(EXAMPLE.read_text().replace("name: web", "name: twin"))
    args = ("compare", str(EXAMPLE), str(twin), *QUICK, "--price", "0.1")
    serial = outputs(capsys, tmp_path, "serial", *args, "--jobs", "1")
    parallel = outputs(capsys, tmp_path, "parallel", *args, "--jobs", "2")
    assert parallel == serial
    runs = serial[3]["runs"]
    every = [*builtin_semantics(), *sorted(set(registry.current().semantics) - set(builtin_semantics()))]
    assert [(r["policy"], r["semantics"]) for r in runs] == [(p, s) for p in ("web", "twin") for s in every]
    assert len({r["instance_hours"] for r in runs if r["policy"] == "web"}) > 1   # the semantics do differ


def test_the_former_name_workers_is_the_same_option_with_a_deprecation_line(capsys, tmp_path: Path) -> None:
    args = ("simulate", str(EXAMPLE), *QUICK, "-s", "kubernetes,aws")
    old = outputs(capsys, tmp_path, "w", *args, "--workers", "2")
    new = outputs(capsys, tmp_path, "j", *args, "-j", "2")
    assert old[:2] + old[3:] == new[:2] + new[3:] and new[2] == ""
    assert old[2].splitlines()[0] == ("scalebridge simulate: --workers is deprecated and will be removed in the next "
                                      "release: use --jobs N (or -j N): processes; --workers is run's targets synced "
                                      "at once")


class FailsMidway(Semantics):
    """A semantics with a bug that shows at its 50th decision."""
    name = "midway"

    def decide(self, ctx: Context) -> Decision:
        if ctx.now >= 50 * 15:
            raise KeyError("no such pod")
        return Decision(ctx.current, ctx.current, "DesiredWithinRange", [])


def _with_midway(monkeypatch) -> None:
    module = types.ModuleType("sbtest_midway")

    def scalebridge_register_semantics(register):
        register(FailsMidway())

    module.scalebridge_register_semantics = hookimpl(scalebridge_register_semantics)
    monkeypatch.setattr(registry, "_REGISTRY", registry.build([module]))


def test_a_failing_or_refused_run_is_reported_as_in_one_process(capsys, tmp_path: Path, monkeypatch) -> None:
    """A run refused at its start (kubernetes needs max_replicas), one that fails midway (a
    semantics plugin's bug, in a forked worker as in this process) and one not registered:
    each a line on stderr and an entry of `skipped`, the same with workers; the others scored."""
    monkeypatch.setattr(executors, "start_method", lambda: "fork")   # the worker has this process's plugins
    _with_midway(monkeypatch)
    unbounded = tmp_path / "unbounded.yaml"
    unbounded.write_text(EXAMPLE.read_text().replace("max_replicas: 200\n", "").replace("name: web", "name: open"))
    args = ("compare", str(EXAMPLE), str(unbounded), *QUICK, "-s", "kubernetes,midway,imaginary,gce")
    serial = outputs(capsys, tmp_path, "serial", *args, "--jobs", "1")
    parallel = outputs(capsys, tmp_path, "parallel", *args, "--jobs", "3")
    assert parallel == serial
    _, _, stderr, data, _, _ = serial
    reasons = {(s["policy"], s["semantics"]): s["reason"] for s in data["skipped"]}
    assert reasons[("web", "midway")] == ("failed: SemanticsFailure: semantics 'midway' (plugin 'sbtest_midway', "
                                          "hook scalebridge_register_semantics) failed: KeyError: 'no such pod'")
    assert "max_replicas" in reasons[("open", "kubernetes")]
    assert reasons[("web", "imaginary")] == "not registered"
    assert "skipped midway (web): failed: SemanticsFailure" in stderr
    assert ("web", "kubernetes") in {(r["policy"], r["semantics"]) for r in data["runs"]}


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_below_one_is_refused_in_one_line(capsys, value: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["simulate", str(EXAMPLE), *QUICK, "-s", "kubernetes", "--jobs", value])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == f"scalebridge simulate: --jobs/-j: expected a number of processes, 1 or more " \
                  f"(1: in this process), got '{value}'\n"


def test_help_says_what_jobs_does_and_its_default(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--jobs N, -j N" in text and "--workers N deprecated: --jobs" in text
    assert "default: the CPUs this process may use" in text and "the output is the same as with 1" in text


def test_the_default_is_the_usable_cpus_for_a_long_replay(monkeypatch, capsys) -> None:
    """Without --jobs: the CPUs of this process's affinity for a long replay, one process for a short one."""
    from scalebridge.simulator import cli as sim_cli
    seen = []
    monkeypatch.setattr(sim_cli, "compare", lambda *a, **kw: seen.append(kw["workers"]) or (_ for _ in ()).throw(
        SystemExit(0)))
    monkeypatch.setattr(executors, "usable_cpus", lambda: 7)
    for duration in ("3h", "3d"):   # 720 ticks, then 17,280 ticks x 5 semantics
        with pytest.raises(SystemExit):
            main(["simulate", str(EXAMPLE), "--workload", "flash_crowd", "--duration", duration, "--capacity", "10",
                  "--startup", "60", "-s", "all", "-q"])
    assert seen == [1, 7]


def test_usable_cpus_are_the_affinity_mask() -> None:
    import os
    assert executors.usable_cpus() == len(os.sched_getaffinity(0))
