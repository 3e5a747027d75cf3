"""``scalebridge run`` killed with SIGKILL at random points and restarted from the
same state file decides as if it had never died.

The targets live in the fake provider's world on disk (``world:``), so a new
process continues the same world, and run on the virtual clock (``--clock
virtual``): the controller resumes the clock from the position its store
recorded. Kills land (1) right after a write took effect and before the
controller persisted it (the fake's ``kill_after_write``), (2) right before a
provider call (``kill_at_call``), (3) at a random moment (SIGKILL from outside).
Checks: every target's sequence of writes (time, size) is the uninterrupted
run's; no write is stacked on one in flight; and no scale-down lands inside a
stabilization window the dead process had opened — each scale-down is at least
the highest recommendation of the window before it, the dead processes'
recommendations included (the audit log keeps them). The windows: the
Kubernetes HPA's 300 s downscale stabilization
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#stabilization-window),
the GCE autoscaler's 10 minutes
(https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions#stabilization_period),
the neutral semantics' 10 minutes by default. A restart that finds the window
emptied breaks that — the check is shown to fail.

To afford over a hundred kills, the runs are children forked from one driver
process that has imported scalebridge once; each child runs the command's own
``main(["run", …])``. One test runs the installed ``scalebridge`` command itself.
"""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from scalebridge.testing.fake import DEFAULT_START
from scalebridge.testing.pytest_plugin import FAKE_TYPE

pytestmark = pytest.mark.slow

UNTIL = "90m"
PERIOD = 15.0
WINDOWS = {"scalebridge": 600.0, "kubernetes": 300.0, "gce": 600.0}
SEMANTICS = ["scalebridge", "kubernetes", "gce", "azure", "aws"]
POLICY = {"min_replicas": 1, "max_replicas": 30,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}],
          "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 75, "time_window_seconds": 300,
                     "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}},
                    {"metric": "cpu", "operator": "LessThan", "threshold": 35, "time_window_seconds": 300,
                     "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}

DRIVER = textwrap.dedent(r'''
    import json, os, random, signal, sys, time
    plan = json.loads(sys.argv[1])
    from scalebridge.cli import main
    from scalebridge import registry
    import scalebridge.controller.loop, scalebridge.controller.store, scalebridge.testing.fake  # noqa: F401
    registry.current()                       # import and load the entry points once, before forking
    main(["validate", plan["run"][1]])       # and what `run` imports lazily (reads the world, writes nothing)

    def child(argv):
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                fd = os.open(plan["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                os.dup2(fd, 2)
                rc = main(argv)
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except BaseException:
                rc = 3
            os._exit(rc or 0)
        return pid

    statuses, opened, starts, shrink = [], [], 0, 1.0
    while starts < plan["max_starts"]:
        starts += 1
        pid = child(plan["run"])
        # a delay is spent only when its kill lands: a child that died by itself first (an
        # internal kill, on a fast machine) leaves it for the next attempt, halved
        delay = plan["external"][0] * shrink if plan["external"] and starts % plan["external_every"] == 0 else None
        landed = False
        if delay is not None:
            deadline = time.monotonic() + delay
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.001)
            else:
                os.kill(pid, signal.SIGKILL)
                done, status = os.waitpid(pid, 0)
                landed = True
            if landed:
                plan["external"].pop(0)
                shrink = 1.0
            else:
                shrink = max(shrink / 2, 0.002 / plan["external"][0])
        else:
            _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            statuses.append(("killed", os.WTERMSIG(status), landed))
            from scalebridge.controller.store import SQLiteStore
            if os.path.exists(plan["state"]):   # the windows the dead process had opened
                store = SQLiteStore(plan["state"], readonly=True)
                opened.append({n: row.state.get("recommendations") or [] for n, row in store.load_all().items()})
                store.close()
            if plan["forget"]:                # the negative control: the restart finds no window
                store = SQLiteStore(plan["state"])
                rows = list(store.load_all().values())
                for row in rows:
                    row.state = {**row.state, "recommendations": []}
                store.save(rows)
                store.close()
            continue
        statuses.append(("exit", os.WEXITSTATUS(status), False))
        break
    print(json.dumps({"statuses": statuses, "opened": opened}))
''')


def _write_config(d: Path, *, kill_after_write=(), kill_at_call=(), kill_after_seconds=()) -> Path:
    fake = {"type": FAKE_TYPE, "world": str(d / "world.json"), "world_fsync": False, "settle_seconds": 20,
            "kill_after_write": sorted(kill_after_write), "kill_at_call": sorted(kill_at_call),
            "kill_after_seconds": sorted(kill_after_seconds)}
    targets = [{"name": f"{s}-web", "provider": "fake", "policy": "web", "semantics": s,
                "ref": {"name": f"{s}-web", "size": 2,
                        "load": {"base": 4.0, "amplitude": 3.0, "period": 1500.0 + 400 * k, "phase": 200.0 * k}}}
               for k, s in enumerate(SEMANTICS)]
    config = {"sync_period_seconds": PERIOD, "providers": {"fake": fake}, "policies": {"web": POLICY},
              "targets": targets}
    path = d / "run.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _drive(d: Path, *, external=(), external_every=2, forget=False, max_starts=400) -> dict:
    """Run the command in forked children until one exits: how each ended
    (``statuses``) and, after each kill, the recommendations each target's
    persisted state held (``opened``)."""
    config = d / "run.yaml"
    plan = {"run": ["run", str(config), "--clock", "virtual", "--until", UNTIL, "--state", str(d / "state.db"),
                    "--audit", str(d / "audit.jsonl"), "--log-format", "json"],
            "state": str(d / "state.db"), "log": str(d / "log.jsonl"), "external": list(external),
            "external_every": external_every, "forget": forget, "max_starts": max_starts}
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(plan)], capture_output=True, text=True,
                          timeout=120, cwd=d)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _world(d: Path) -> dict:
    return json.loads((d / "world.json").read_text())


def _histories(d: Path) -> dict[str, list]:
    return {name: [tuple(h) for h in t["history"]] for name, t in _world(d)["targets"].items()}


def _audit(d: Path) -> dict[str, dict[float, dict]]:
    out: dict[str, dict[float, dict]] = {}
    for line in (d / "audit.jsonl").read_text().splitlines():
        r = json.loads(line)
        out.setdefault(r["target"], {})[r["time"]] = r     # a re-synced tick: the later record
    return out


def _scale_downs_inside_a_window(d: Path, opened: list[dict]) -> list[str]:
    """Scale-downs below a recommendation that a dead process had persisted within
    the stabilization window before them (the protocol's ``state.recommendations``
    are the unstabilized recommendations, ``docs/protocol.md``)."""
    out = []
    for name, history in _histories(d).items():
        window = WINDOWS.get(name.removesuffix("-web"))
        if window is None:
            continue
        recs = sorted({(r["time"], r["replicas"]) for states in opened for r in states.get(name, [])})
        prev = 2
        for t, size in history:
            if size < prev:
                held = max((v for rt, v in recs if t - window < rt <= t), default=0)
                if size < held:
                    out.append(f"{name}: down to {size} at {t - DEFAULT_START:g} s, inside a window a dead "
                               f"process had opened at {held}")
            prev = size
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("uninterrupted")
    _write_config(d)
    assert _drive(d)["statuses"] == [["exit", 0, False]]
    return d


def test_the_uninterrupted_run_scales_and_holds_its_windows(reference):
    hist = _histories(reference)
    assert all(len(h) >= 6 for h in hist.values()), {n: len(h) for n, h in hist.items()}
    downs = sum(1 for h in hist.values() for (_, a), (_, b) in zip(h, h[1:]) if b < a)
    assert downs >= 10


def test_over_a_hundred_kills_change_no_decision(reference, tmp_path):
    ref_world = _world(reference)
    writes, calls = ref_world["total_writes"], ref_world["total_calls"]
    rng = random.Random(13)
    after_write = set(rng.sample(range(1, writes + 1), min(writes, 50)))
    at_call = set(rng.sample(range(1, calls + 1), 45))
    external = [rng.uniform(0.01, 0.25) for _ in range(30)]
    _write_config(tmp_path, kill_after_write=after_write, kill_at_call=at_call)
    driven = _drive(tmp_path, external=external)
    statuses = driven["statuses"]
    kills = [s for s in statuses if s[0] == "killed"]
    assert statuses[-1] == ["exit", 0, False], statuses[-5:]
    assert all(s[1] == signal.SIGKILL for s in kills)
    assert len(kills) >= 100, f"only {len(kills)} kills"
    assert sum(1 for s in kills if s[2]) >= 10                 # some from outside, at random moments
    world = _world(tmp_path)
    assert world["total_writes"] >= max(after_write)          # every kill after a write was reached
    assert _histories(tmp_path) == _histories(reference)
    assert world["stacked_writes"] == []
    assert sum(len(r) for states in driven["opened"] for r in states.values()) > 1000
    assert _scale_downs_inside_a_window(tmp_path, driven["opened"]) == []


def test_forgetting_the_state_at_each_restart_scales_down_inside_a_window(reference):
    """The check above can fail: a restart that finds the window gone (the state's
    ``recommendations`` emptied after the kill — a known, empty history, which no
    semantics seeds) scales down inside the window the dead process had opened."""
    d = reference.parent / "forgetful"
    d.mkdir()
    audit = _audit(reference)
    hist = _histories(reference)
    # a moment the uninterrupted run held a size up for its window, a minute or more before it came down
    holds = sorted(t for name in ("scalebridge-web", "gce-web") for t, r in audit[name].items()
                   if r["reason"] == "ScaleDownStabilized" and r["action"] == "unchanged"
                   and any(t + 60 <= wt and s < r["current_replicas"] for wt, s in hist[name]))
    assert holds
    _write_config(d, kill_after_seconds=[holds[0] - DEFAULT_START])
    driven = _drive(d, forget=True)
    assert [s[0] for s in driven["statuses"]] == ["killed", "exit"]
    assert _scale_downs_inside_a_window(d, driven["opened"]) != []
    assert _histories(d) != hist


def test_the_installed_command_killed_after_writes_decides_the_same(reference, tmp_path):
    exe = Path(sys.executable).with_name("scalebridge")
    if not exe.exists():
        pytest.skip("the scalebridge command is not installed beside the interpreter")
    writes = _world(reference)["total_writes"]
    _write_config(tmp_path, kill_after_write=[3, writes // 2, writes - 1])
    argv = [str(exe), "run", str(tmp_path / "run.yaml"), "--clock", "virtual", "--until", UNTIL,
            "--state", str(tmp_path / "state.db"), "--audit", str(tmp_path / "audit.jsonl")]
    codes = []
    for _ in range(6):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        codes.append(done.returncode)
        if done.returncode == 0:
            break
    assert codes == [-signal.SIGKILL] * 3 + [0]
    assert _histories(tmp_path) == _histories(reference)
