"""The ``/metrics`` endpoint holds one thread whatever the connections: 3,000 idle
sockets (the issue: 2,986 threads) leave the threads bounded, scrapes answered, the
controller syncing; idle connections are closed after the timeout;
``--metrics-address`` / ``metrics_address:`` choose where it listens."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from scalebridge.controller.exporter import Exporter
from scalebridge.controller.metrics import Metrics

from .conftest import FAKE


def _scrape(port: int, path: str = "/metrics") -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def test_three_thousand_idle_connections_hold_no_threads_and_scrapes_go_on():
    metrics = Metrics()
    metrics.leader.set(1)
    port = metrics.serve(0, "127.0.0.1")
    before = threading.active_count()
    socks = []
    try:
        for _ in range(3000):
            s = socket.create_connection(("127.0.0.1", port))
            s.send(b"GET /metrics HTTP/1.1\r\n")   # half a request, never finished
            socks.append(s)
        time.sleep(0.5)
        assert threading.active_count() <= before + 1
        status, body = _scrape(port)
        assert status == 200 and "scalebridge_leader 1.0" in body
        assert metrics._server.connections <= 64
    finally:
        for s in socks:
            s.close()
        metrics.close()


def test_idle_connections_are_closed_after_the_timeout():
    metrics = Metrics()
    exporter = Exporter(metrics.registry, idle_timeout=0.5)
    port = exporter.start(0, "127.0.0.1")
    try:
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(5)
        start = time.monotonic()
        assert s.recv(1) == b"", "the server closed the idle connection"
        assert 0.4 < time.monotonic() - start < 3
        # a kept-alive connection answers several scrapes, then is closed once idle
        k = socket.create_connection(("127.0.0.1", port))
        k.settimeout(5)
        for _ in range(2):
            k.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += k.recv(65536)
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
            body = head.split(b"\r\n\r\n", 1)[1]
            while len(body) < length:
                body += k.recv(65536)
            assert head.startswith(b"HTTP/1.1 200") and b"scalebridge_leader" in body
        assert k.recv(1) == b""
        assert _scrape(port, "/nope")[0] == 404
    finally:
        exporter.close()


def test_the_controller_keeps_syncing_under_a_flood_on_its_chosen_address(write_config, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 1.0}}],
                        providers={"fake": {"type": FAKE}}, sync_period_seconds=1, metrics_address="127.0.0.1")
    audit = tmp_path / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state",
                             str(tmp_path / "s.db"), "--metrics-port", "0", "--audit", str(audit)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    socks = []
    try:
        line = ""
        deadline = time.monotonic() + 30
        while "serving metrics" not in line:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the controller stopped"
            assert time.monotonic() < deadline
        assert "address=127.0.0.1" in line
        port = int(re.search(r"port=(\d+)", line).group(1))
        for _ in range(3000):
            socks.append(socket.create_connection(("127.0.0.1", port)))
        synced = len(audit.read_text().splitlines()) if audit.exists() else 0
        time.sleep(3)
        assert len(audit.read_text().splitlines()) >= synced + 2, "the syncs go on"
        status, body = _scrape(port)
        assert status == 200 and 'scalebridge_current_replicas{target="web"}' in body
        threads = int(open(f"/proc/{proc.pid}/status").read().split("Threads:")[1].split()[0])
        assert threads < 20
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(timeout=20)
    assert proc.returncode == 0


def test_metrics_address_from_the_flag_wins_and_a_bad_one_is_one_line(write_config, tmp_path, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}}], providers={"fake": {"type": FAKE}},
                        metrics_address="127.0.0.1")
    code, _, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--metrics-port", "0",
                               "--metrics-address", "203.0.113.7")
    assert code == 2 and "203.0.113.7" in err and len(err.strip().splitlines()) <= 2


@pytest.mark.parametrize("period", ["1e10", "0.5", "0"])
def test_a_sync_period_outside_a_second_to_a_day_is_refused(write_config, scalebridge, period):
    """The issue: `sync_period_seconds: 1e10` passed validate, then the loop died
    after its first sync (OverflowError in Event.wait)."""
    path = write_config(f"""
sync_period_seconds: {period}
providers: {{fake: {{type: "{FAKE}"}}}}
policies: {{web: {{min_replicas: 1, max_replicas: 5}}}}
targets: [{{name: web, provider: fake, policy: web, ref: {{name: web}}}}]
""")
    code, _, err = scalebridge("validate", path)
    assert code == 2 and "sync_period_seconds" in err and "a day" in err and ":2:" in err
