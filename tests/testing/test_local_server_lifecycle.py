"""Every local HTTP server shares one lifecycle: ``start()`` serves from a daemon
thread and returns the server, a second ``start()`` changes nothing, ``stop()`` ends
the thread and releases the port (also on a server never started), and a ``with``
block does both."""
from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request

import pytest

from scalebridge_aws.fake_server import AwsProxy
from scalebridge_gce.fake_server import ComputeServer
from scalebridge_kubernetes.fake_server import KubernetesServer

SERVERS = {"kubernetes": KubernetesServer, "compute": ComputeServer,
           "aws": lambda: AwsProxy("http://127.0.0.1:9")}


def _threads(name: str) -> int:
    return sum(1 for t in threading.enumerate() if t.name == name)


def _refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_stop_on_a_server_never_started_returns_at_once_and_frees_the_port(kind):
    server = SERVERS[kind]()
    port = server.port
    stopping = threading.Thread(target=server.stop, daemon=True)
    stopping.start()
    stopping.join(timeout=2)
    assert not stopping.is_alive(), "stop() waits for a serving loop that never ran"
    assert _refused(port)


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_a_with_block_serves_on_one_thread_and_stops_it(kind):
    server = SERVERS[kind]()
    name = server.thread_name
    before = _threads(name)
    with server as s:
        assert s is server
        assert s.url == f"http://127.0.0.1:{s.port}"
        assert s.start() is s and _threads(name) == before + 1
        try:
            urllib.request.urlopen(s.url + "/", timeout=10).read()
        except urllib.error.HTTPError as e:     # answered, whatever the status
            assert e.code >= 400
    assert _threads(name) == before
    assert _refused(server.port)


def test_the_compute_endpoint_is_its_url():
    with ComputeServer() as compute:
        assert compute.endpoint == compute.url
