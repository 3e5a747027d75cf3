"""What a local server prints when a request goes wrong (scalebridge.testing.local_server)."""
from __future__ import annotations

import socket
import struct
import threading
import time

from scalebridge.testing.local_server import HttpServer, QuietHandler


class _Slow(QuietHandler):
    answered = threading.Event()
    failing = False

    def do_GET(self) -> None:
        time.sleep(0.2)     # the client has hung up by now
        try:
            if self.failing:
                raise RuntimeError("a bug in the fake")
            self.send(200, b"x" * 1_000_000, "text/plain")
        finally:
            type(self).answered.set()


class _Server(HttpServer):
    thread_name = "slow"

    def __init__(self) -> None:
        self._bind(_Slow)


def _hang_up_after_asking(port: int) -> None:
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    # SO_LINGER 0: close sends a reset, so the server's write fails at once
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()


def _served_one(failing: bool, capfd) -> str:
    _Slow.answered.clear()
    _Slow.failing = failing
    with _Server() as s:
        _hang_up_after_asking(s.port)
        assert _Slow.answered.wait(5)
        time.sleep(0.1)     # handle_error runs after the handler returns
    return capfd.readouterr().err


def test_a_client_that_hangs_up_leaves_nothing_on_stderr(capfd):
    # socketserver prints a BrokenPipeError's traceback on stderr, into whatever
    # test runs next in the process; a client going away is not the server's error
    assert _served_one(False, capfd) == ""


def test_an_exception_in_a_handler_is_still_printed(capfd):
    assert "RuntimeError: a bug in the fake" in _served_one(True, capfd)
