"""What every local test server shares: its lifecycle (``start()``, ``stop()``, a
``with`` block doing both) and, for the HTTP ones, a ``ThreadingHTTPServer`` on
loopback served from a daemon thread, with the request-handler plumbing they all
speak (HTTP/1.1 keep-alive, no request log, no Nagle delay).

    class MyServer(HttpServer):
        thread_name = "my-server"

        def __init__(self, *, host="127.0.0.1", port=0):
            self._bind(MyHandler, host, port)

    with MyServer() as s:
        s.url        # http://127.0.0.1:PORT

The stdlib behaviour it relies on
(https://docs.python.org/3/library/socketserver.html#socketserver.BaseServer.shutdown):
``shutdown()`` waits for ``serve_forever()`` to return, so it is called only while
the serving thread runs; ``server_close()`` releases the socket either way.
A client that hangs up before its answer is written (a timeout, a test that has
already asserted) is not an error of the server: ``socketserver`` would print its
``BrokenPipeError`` on stderr, into whatever test runs next, so it is dropped;
every other exception in a handler is still printed.
"""
from __future__ import annotations

import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional, Self

__all__ = ["HttpServer", "LocalServer", "QuietHandler"]

#: how often the serving loop looks for a shutdown request, in seconds: what ``stop()`` waits at most
POLL_INTERVAL = 0.05


class LocalServer:
    """A test server's lifecycle: :meth:`start` returns the server, :meth:`stop` ends it,
    ``with Server() as s:`` does both."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _ThreadingHTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """``socketserver.BaseServer.handle_error``, silent for a client that went away."""
        if isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLEOFError)):
            return
        super().handle_error(request, client_address)


class HttpServer(LocalServer):
    """A ``ThreadingHTTPServer`` bound by :meth:`_bind` and served from a daemon thread
    named :attr:`thread_name`; :attr:`url` is where it listens. :meth:`start` is
    idempotent, :meth:`stop` safe on a server never started."""

    thread_name = "local-http-server"
    _httpd: Optional[ThreadingHTTPServer] = None
    _thread: Optional[threading.Thread] = None
    _scheme = "http"

    def _bind(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1", port: int = 0,
              tls: Optional[ssl.SSLContext] = None) -> None:
        """Listen on ``host:port`` (0: a free port), answering with ``handler``; with
        ``tls``, over HTTPS."""
        httpd = _ThreadingHTTPServer((host, port), handler)
        httpd.daemon_threads = True
        if tls is not None:
            httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        self._scheme = "https" if tls is not None else "http"

    @property
    def port(self) -> int:
        """The port it listens on."""
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://host:port`` (``https://`` when bound with TLS)."""
        assert self._httpd is not None, "the server is not started"
        host, port = self._httpd.server_address[:2]
        return f"{self._scheme}://{host}:{port}"

    def start(self) -> Self:
        assert self._httpd is not None, "the server is not bound"
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL},
                                            name=self.thread_name, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            assert self._httpd is not None
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        if self._httpd is not None:
            self._httpd.server_close()


class QuietHandler(BaseHTTPRequestHandler):
    """The request handler the local servers build on: HTTP/1.1 keep-alive (as the
    SDKs' connection pools expect), no request log on stderr, and ``TCP_NODELAY``
    (headers and body go out as two writes: with Nagle's algorithm, the client's
    delayed ACK holds every response ~40 ms)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args: object) -> None:
        pass

    def read_body(self) -> bytes:
        """The request body, as long as its ``Content-Length`` says (empty without one)."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status: int, data: bytes, content_type: str, headers: Optional[dict] = None) -> None:
        """One response: ``status``, ``Content-Type``, ``Content-Length`` and ``headers``, then ``data``."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
