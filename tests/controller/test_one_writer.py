"""One writer per state: a controller claims its SQLite state file for as long as it
runs (an OS lock on ``<state>.lock``, the holder's host, pid and start time recorded
in it). A second ``scalebridge run`` on a claimed state exits 1 naming the file and
the holder; with ``--leader-elect`` it stands by — deciding, never writing a target
or the state — until the holder is gone; ``state reset`` against a running
controller is carried out by that controller at its next sync."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

from scalebridge.controller.loop import build_controller
from scalebridge.controller.store import Holder, SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE

PERIOD = 15.0
# +1 member per 60 s at most, as the issue's Deployment: two writers would each add one
RATE_POLICY = {"min_replicas": 1, "max_replicas": 20,
               "metrics": [{"type": "resource", "name": "cpu",
                            "target": {"type": "Utilization", "average_utilization": 60}}],
               "behavior": {"scale_up": {"stabilization_window_seconds": 0,
                                         "policies": [{"type": "Pods", "value": 1, "period_seconds": 60}]}}}


def _config(write_config, tmp_path, **fake):
    top = {"leader_election": {"provider": "fake"}} if fake.get("elects") else {}
    return write_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 6.0}}],
                        providers={"fake": {"type": FAKE, "world": str(tmp_path / "world.json"), **fake}},
                        policies={"web": RATE_POLICY}, sync_period_seconds=PERIOD, **top)


def test_a_second_run_on_a_claimed_state_exits_1_naming_the_file_and_the_holder(write_config, tmp_path,
                                                                                 scalebridge):
    path = _config(write_config, tmp_path)
    state = tmp_path / "s.db"
    first = build_controller(str(path), state=str(state))
    try:
        assert first.sync(DEFAULT_START).records[0]["action"] == "applied"
        for extra in ([], ["--dry-run"]):   # a dry run writes the state too: a second writer all the same
            code, out, err = scalebridge("run", path, "--once", "--state", state, *extra)
            assert code == 1, err
            lines = err.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in err
            assert str(state) in lines[0]
            assert f"pid {os.getpid()}" in lines[0] and socket.gethostname() in lines[0]
        world = json.loads((tmp_path / "world.json").read_text())
        assert world["total_writes"] == 1, "the second controller wrote nothing"
        # what the issue saw: two controllers, each overwriting the other's row from memory.
        # Here the holder's row is the holder's alone
        row = SQLiteStore(state, readonly=True).load("web")
        assert [e["time"] for e in row.state["scale_up_events"]] == [DEFAULT_START]
    finally:
        first.close()
    # once the holder is gone, the state is free
    code, _, err = scalebridge("run", path, "--once", "--state", state)
    assert code == 0, err


def test_a_standby_with_leader_elect_decides_never_writes_and_takes_over(write_config, tmp_path):
    path = _config(write_config, tmp_path, elects=True)
    state = tmp_path / "s.db"
    a = build_controller(str(path), state=str(state))
    b = build_controller(str(path), state=str(state), leader_elect=True)
    try:
        assert a.claimed and not b.claimed
        writes_per_period = []
        t = DEFAULT_START
        for k in range(8):   # both sync every period; only the holder may write
            before = a.runtime.providers["fake"].total_writes + b.runtime.providers["fake"].total_writes
            ra = a.sync(t + k * PERIOD).records[0]
            rb = b.sync(t + k * PERIOD + 0.3).records[0]
            after = a.runtime.providers["fake"].total_writes + b.runtime.providers["fake"].total_writes
            writes_per_period.append(after - before)
            assert rb["action"] in ("standby", "unchanged"), rb
            assert ra["action"] in ("applied", "unchanged")
        assert max(writes_per_period) <= 1 and sum(writes_per_period) >= 2
        assert b.runtime.providers["fake"].total_writes == 0
        row = SQLiteStore(state, readonly=True).load("web")
        held = [e["time"] for e in row.state["scale_up_events"]]
        # every carried-out scale-up is in the holder's row: none overwritten by the standby
        assert held == [t + k * PERIOD for k in range(8) if writes_per_period[k]]
        a.close()   # the holder stops: the standby claims the state and continues its rate periods
        rb = b.sync(t + 8 * PERIOD).records[0]
        assert b.claimed
        assert rb["action"] in ("applied", "unchanged") and rb["action"] != "standby"
        row = SQLiteStore(state, readonly=True).load("web")
        assert [e["time"] for e in row.state["scale_up_events"]][:len(held)] == held
    finally:
        a.close()
        b.close()


def test_state_reset_against_a_running_controller_is_carried_out_by_it(write_config, tmp_path, scalebridge):
    path = _config(write_config, tmp_path)
    state = tmp_path / "s.db"
    c = build_controller(str(path), state=str(state))
    try:
        for k in range(3):
            c.sync(DEFAULT_START + k * PERIOD)
        assert SQLiteStore(state, readonly=True).load("web").state["scale_up_events"]
        code, out, err = scalebridge("state", "reset", "web", "--state", state)
        assert code == 0, err
        assert "reset requested" in out and f"pid {os.getpid()}" in out
        c.sync(DEFAULT_START + 3 * PERIOD)
        row = SQLiteStore(state, readonly=True).load("web")
        # the history before the reset is gone, and stays gone: the next syncs build on empty state
        # (the rate period of the scale-up at 0 s would have held this one back)
        assert [e["time"] for e in row.state["scale_up_events"]] == [DEFAULT_START + 3 * PERIOD]
        c.sync(DEFAULT_START + 4 * PERIOD)
        row = SQLiteStore(state, readonly=True).load("web")
        # +1 per 60 s: the scale-up after the reset holds the next one back, as it is kept
        assert [e["time"] for e in row.state["scale_up_events"]] == [DEFAULT_START + 3 * PERIOD]
    finally:
        c.close()
    # with no controller running, a reset is carried out at once
    code, out, _ = scalebridge("state", "reset", "web", "--state", state)
    assert code == 0 and "state forgotten" in out
    assert SQLiteStore(state, readonly=True).load("web") is None


def test_state_show_names_the_holder_and_never_waits(write_config, tmp_path, scalebridge):
    path = _config(write_config, tmp_path)
    state = tmp_path / "s.db"
    c = build_controller(str(path), state=str(state))
    try:
        c.sync(DEFAULT_START)
        code, out, err = scalebridge("state", "show", "--state", state)
        assert code == 0
        assert "web" in json.loads(out)
        assert f"pid {os.getpid()}" in err and "held by a running controller" in err
        # the holder still holds its claim after a reader looked
        code, _, err = scalebridge("run", path, "--once", "--state", state)
        assert code == 1 and "held by another scalebridge controller" in err
    finally:
        c.close()


def test_a_killed_holders_claim_is_released_by_the_os(write_config, tmp_path, scalebridge):
    path = _config(write_config, tmp_path)
    state = tmp_path / "s.db"
    audit = tmp_path / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state", str(state),
                             "--audit", str(audit)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (audit.exists() and audit.read_text().strip()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the controller never synced"
            time.sleep(0.05)
        code, _, err = scalebridge("run", path, "--once", "--state", state)
        assert code == 1 and f"pid {proc.pid}" in err
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    code, _, err = scalebridge("run", path, "--once", "--state", state)
    assert code == 0, err


def test_a_second_virtual_clock_run_does_not_take_the_first_ones_clock(write_config, tmp_path, scalebridge):
    """A second sim process joining mid-run took over the first one's clock: now it
    cannot start on that state."""
    sim = write_config([{"name": "web", "provider": "sim", "semantics": "kubernetes",
                         "ref": {"workload": "flash_crowd", "capacity": 10, "startup": 60}}],
                       providers={"sim": {}})
    state = tmp_path / "sim.db"
    first = build_controller(str(sim), clock="virtual", state=str(state), until=3600)
    try:
        first.sync()
        code, _, err = scalebridge("run", sim, "--clock", "virtual", "--until", "2h", "--state", state)
        assert code == 1 and "held by another scalebridge controller" in err
    finally:
        first.close()


def test_the_advice_on_a_claimed_state_offers_leader_election_only_where_a_provider_holds_leases(
        write_config, tmp_path, scalebridge):
    """`run sim.yaml` on a state another controller holds advised --leader-elect, which
    only a provider holding leases (kubernetes) gives: the sim configuration's advice
    leaves it out; a configuration with a kubernetes provider keeps it."""
    sim = write_config([{"name": "web", "provider": "sim", "semantics": "kubernetes",
                         "ref": {"workload": "flash_crowd", "capacity": 10, "startup": 60}}],
                       providers={"sim": {}})
    (tmp_path / "kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "current-context: c\n")
    kube = write_config([{"name": "web", "provider": "kubernetes",
                          "ref": {"kind": "Deployment", "namespace": "shop", "name": "web"}}],
                        providers={"kubernetes": {"kubeconfig": str(tmp_path / "kubeconfig")}})
    state = tmp_path / "s.db"
    holder = SQLiteStore(state)
    try:
        assert holder.claim(Holder.this_process()) is None
        code, _, err = scalebridge("run", sim, "--once", "--state", state)
        assert code == 1
        assert err.splitlines()[0].endswith("; stop it first, or give this one its own --state")
        code, _, err = scalebridge("run", kube, "--once", "--state", state)
        assert code == 1
        assert err.splitlines()[0].endswith("; stop it first, run this one with --leader-elect to stand by until it "
                                            "stops, or give this one its own --state")
    finally:
        holder.close()
