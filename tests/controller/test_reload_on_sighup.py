"""SIGHUP reloads the configuration at the next sync boundary, as Prometheus does:
added targets start, removed ones stop, a changed policy starts from empty state,
unchanged targets keep theirs; a configuration that does not validate is refused
with its problems logged and the running one kept. (The issue: SIGHUP killed the
controller, exit 129, no log line, nothing persisted.)"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from scalebridge.controller.loop import build_controller
from scalebridge.controller.store import SQLiteStore
from scalebridge.testing.fake import DEFAULT_START

from .conftest import CPU_POLICY, FAKE, config_text

PERIOD = 15.0


def _text(targets, **policy_changes) -> str:
    return config_text([{"name": n, "ref": {"name": n, "size": 2, "load": 2.0}} for n in targets],
                       providers={"fake": {"type": FAKE}}, policies={"web": {**CPU_POLICY, **policy_changes}},
                       sync_period_seconds=PERIOD)


def test_a_reload_starts_stops_and_keeps_targets(tmp_path, caplog):
    path = tmp_path / "run.yaml"
    path.write_text(_text(["a", "b"]))
    c = build_controller(str(path), state=str(tmp_path / "s.db"))
    try:
        for k in range(3):
            c.sync(DEFAULT_START + k * PERIOD)
        a_state = c.runs[0].decider.state.to_protocol()
        path.write_text(_text(["a", "c"]))          # b removed, c added, a unchanged
        assert c.reload()
        assert [r.spec.name for r in c.runs] == ["a", "c"]
        assert c.runs[0].decider.state.to_protocol() == a_state, "an unchanged target keeps its state"
        names = {r["target"] for r in c.sync(DEFAULT_START + 3 * PERIOD).records}
        assert names == {"a", "c"}
        path.write_text(_text(["a", "c"], max_replicas=9))   # the policy changes: empty state
        assert c.reload()
        assert not c.runs[0].decider.state.to_protocol()["sizes"]
        path.write_text("targets: [{name: a, provider: nowhere, policy: web}]\n")   # does not validate
        assert not c.reload()
        assert [r.spec.name for r in c.runs] == ["a", "c"], "the running configuration is kept"
        assert any("reload refused" in r.getMessage() for r in caplog.records)
    finally:
        c.close()


def _wait(audit, pred, proc, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        records = [json.loads(x) for x in audit.read_text().splitlines()] if audit.exists() else []
        if pred(records):
            return records
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_sighup_reloads_a_good_configuration_and_refuses_a_bad_one(tmp_path):
    path = tmp_path / "run.yaml"
    body = _text(["a"]).replace(f"sync_period_seconds: {PERIOD}", "sync_period_seconds: 1")
    path.write_text(body)
    audit = tmp_path / "audit.jsonl"
    state = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state", str(state),
                             "--audit", str(audit)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait(audit, lambda rs: len(rs) >= 1, proc)
        path.write_text(body.replace("targets:\n", "targets:\n- {name: b, provider: fake, policy: web, "
                                                   "ref: {name: b, size: 1, load: 1.0}}\n"))
        proc.send_signal(signal.SIGHUP)
        _wait(audit, lambda rs: any(r["target"] == "b" for r in rs), proc)
        path.write_text("targets: [oops\n")
        proc.send_signal(signal.SIGHUP)
        n = len(audit.read_text().splitlines())
        records = _wait(audit, lambda rs: len(rs) >= n + 4, proc)   # still syncing a and b
        assert {r["target"] for r in records[n:]} == {"a", "b"}
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "reloaded the configuration" in err
    assert "reload refused" in err and "Traceback" not in err
    assert set(SQLiteStore(state, readonly=True).load_all()) == {"a", "b"}


def _open(pid: int) -> tuple[int, int]:
    """Open file descriptors and threads of a process."""
    import os
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/fd"), reason="counts descriptors in /proc (Linux)")
def test_40_reloads_release_what_they_replaced(tmp_path):
    """Each reload builds every provider instance and metric source again: the ones it
    replaced — the Kubernetes client's connection pool, the Prometheus source's
    session, the fake's world file — are released, all but the one serving the
    state store or the election. Before, 80 SIGHUPs took a controller from 12 open
    file descriptors to 112 (a reload takes about 0.3 s here: a full collection)."""
    from scalebridge_kubernetes.fake_server import KubernetesServer
    from scalebridge_prometheus.fake_server import PrometheusServer
    import yaml
    with KubernetesServer(token="t") as k8s, PrometheusServer() as prom:
        kubeconfig = k8s.kubeconfig(tmp_path / "kubeconfig")
        k8s.add_deployment("shop", "web", replicas=2)
        source = {"q": {"source": {"metric_source": "prom", "query": "vector(3)"}}}
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump({
            "sync_period_seconds": 1,
            "providers": {"kubernetes": {"kubeconfig": str(kubeconfig)},
                          "fake": {"type": FAKE, "world": str(tmp_path / "world.json")}},
            "metric_sources": {"prom": {"type": "prometheus", "url": prom.url}},
            "policies": {"p": {"min_replicas": 1, "max_replicas": 5,
                               "metrics": [{"type": "external", "name": "q", "target": {"type": "Value",
                                                                                       "value": 10}}]}},
            "targets": [{"name": "web", "provider": "kubernetes", "policy": "p", "metrics": source,
                         "ref": {"kind": "Deployment", "namespace": "shop", "name": "web"}},
                        {"name": "f", "provider": "fake", "policy": "p", "ref": {"name": "f"}, "metrics": source}]}))
        audit, err = tmp_path / "audit.jsonl", tmp_path / "err.log"
        with open(err, "w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state",
                                     str(tmp_path / "s.db"), "--audit", str(audit), "--metrics-port", "0",
                                     "--metrics-address", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            _wait(audit, lambda rs: len(rs) >= 2, proc)
            counts = []
            for k in range(1, 41):
                proc.send_signal(signal.SIGHUP)
                deadline = time.monotonic() + 20
                while err.read_text().count("reloaded the configuration") < k:
                    assert proc.poll() is None and time.monotonic() < deadline, err.read_text()[-2000:]
                    time.sleep(0.01)
                if k in (5, 40):
                    time.sleep(1.2)            # a sync on the configuration reloaded last
                    counts.append(_open(proc.pid))
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
    (fds5, threads5), (fds40, threads40) = counts
    assert proc.returncode == 0, err.read_text()[-2000:]
    assert fds40 <= fds5 + 2, f"open file descriptors: {fds5} after 5 reloads, {fds40} after 40"
    assert threads40 <= threads5 + 2, f"threads: {threads5} after 5 reloads, {threads40} after 40"
    assert "Traceback" not in err.read_text()
