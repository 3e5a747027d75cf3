"""The ``/metrics`` endpoint of ``scalebridge run`` (``--metrics-port``,
``--metrics-address``): one thread, whatever the number of connections.

prometheus-client's ``start_http_server`` runs a thread per connection with no
timeout, so idle or half-open connections pile up threads without bound (3,000
idle sockets held 2,986 threads). This server is one asyncio loop on one daemon
thread:

- a connection that has not sent a whole request within
  :data:`IDLE_TIMEOUT_SECONDS` is closed, and so is a kept-alive one idle that long;
- at most :data:`MAX_CONNECTIONS` are open at once: a new one beyond that closes
  the one idle longest, so a flood of idle sockets never keeps Prometheus' scrape
  out;
- a request line or header block over :data:`MAX_REQUEST_BYTES` is refused (431).

It answers ``GET``/``HEAD /metrics`` in the text exposition format (with
``Accept`` negotiation and gzip, through prometheus-client's own
``choose_encoder``, as its server does), ``/`` with a link to it, anything else
404. Prometheus scrapes with HTTP/1.1 keep-alive; the default scrape timeout is
10 s (https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config),
which the idle timeout matches.
"""
from __future__ import annotations

import asyncio
import gzip
import threading
import time
from typing import Any, Optional

__all__ = ["Exporter", "IDLE_TIMEOUT_SECONDS", "MAX_CONNECTIONS", "MAX_REQUEST_BYTES"]

#: a connection idle this long (no whole request yet, or kept alive with none) is closed
IDLE_TIMEOUT_SECONDS = 10.0
#: connections open at once; the one idle longest makes room for a new one
MAX_CONNECTIONS = 64
#: the request line and headers of a scrape are a few hundred bytes
MAX_REQUEST_BYTES = 16 * 1024


class _Conn:
    __slots__ = ("writer", "last", "busy")

    def __init__(self, writer: asyncio.StreamWriter):
        self.writer = writer
        self.last = time.monotonic()
        self.busy = False


class Exporter:
    """Serves a prometheus-client registry on ``address:port``."""

    def __init__(self, registry: Any, *, idle_timeout: float = IDLE_TIMEOUT_SECONDS,
                 max_connections: int = MAX_CONNECTIONS):
        self.registry = registry
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._server: Optional[asyncio.AbstractServer] = None
        self._thread: Optional[threading.Thread] = None
        self._conns: set[_Conn] = set()
        self.port = 0

    # -- life ---------------------------------------------------------------------------------
    def start(self, port: int, address: str = "0.0.0.0") -> int:
        """Listen (raises OSError when the address cannot be bound); the port it got."""
        loop = asyncio.new_event_loop()
        try:
            server = loop.run_until_complete(asyncio.start_server(self._serve, address, port,
                                                                  limit=MAX_REQUEST_BYTES, backlog=128))
        except BaseException:
            loop.close()
            raise
        self._loop, self._server = loop, server
        self.port = int(server.sockets[0].getsockname()[1])
        self._thread = threading.Thread(target=self._run, name="scalebridge-metrics", daemon=True)
        self._thread.start()
        return self.port

    def _run(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        reaper = loop.create_task(self._reap())
        try:
            loop.run_forever()
        finally:
            reaper.cancel()
            for c in list(self._conns):
                c.writer.close()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    def close(self) -> None:
        loop = self._loop
        if loop is None:
            return
        self._loop = None

        def stop() -> None:
            if self._server is not None:
                self._server.close()
            loop.stop()
        loop.call_soon_threadsafe(stop)
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def connections(self) -> int:
        return len(self._conns)

    # -- connections --------------------------------------------------------------------------
    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.idle_timeout / 2))
            cutoff = time.monotonic() - self.idle_timeout
            for c in [c for c in self._conns if not c.busy and c.last < cutoff]:
                self._drop(c)

    def _drop(self, c: _Conn) -> None:
        self._conns.discard(c)
        try:
            c.writer.close()
        except Exception:  # noqa: BLE001 — a socket already gone
            pass

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = _Conn(writer)
        if len(self._conns) >= self.max_connections:
            idle = [c for c in self._conns if not c.busy]
            if not idle:
                writer.close()
                return
            self._drop(min(idle, key=lambda c: c.last))
        self._conns.add(conn)
        try:
            while conn in self._conns:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.idle_timeout)
                except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                    return
                except (asyncio.LimitOverrunError, ValueError):
                    await self._respond(writer, 431, b"request header fields too large\n", "text/plain", False)
                    return
                conn.busy = True
                keep = await self._handle(head, writer)
                conn.busy = False
                conn.last = time.monotonic()
                if not keep:
                    return
        except (ConnectionError, OSError):
            return
        finally:
            self._drop(conn)

    async def _handle(self, head: bytes, writer: asyncio.StreamWriter) -> bool:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            await self._respond(writer, 400, b"bad request\n", "text/plain", False)
            return False
        method, target, version = parts
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        path = target.split("?", 1)[0]
        if method not in ("GET", "HEAD"):
            await self._respond(writer, 405, b"method not allowed\n", "text/plain", keep, method == "HEAD")
            return keep
        if path == "/metrics":
            from prometheus_client.exposition import choose_encoder
            encoder, content_type = choose_encoder(headers.get("accept", ""))
            body = encoder(self.registry)
            extra = {}
            if "gzip" in headers.get("accept-encoding", ""):
                body = gzip.compress(body)
                extra["Content-Encoding"] = "gzip"
            await self._respond(writer, 200, body, content_type, keep, method == "HEAD", extra)
        elif path == "/":
            await self._respond(writer, 200, b'<html><body><a href="/metrics">/metrics</a></body></html>\n',
                                "text/html", keep, method == "HEAD")
        else:
            await self._respond(writer, 404, b"not found: scalebridge serves /metrics\n", "text/plain", keep,
                                method == "HEAD")
        return keep

    async def _respond(self, writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str, keep: bool,
                       head_only: bool = False, extra: Optional[dict] = None) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                  431: "Request Header Fields Too Large"}[status]
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
                 f"Connection: {'keep-alive' if keep else 'close'}"]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body))
        try:
            await asyncio.wait_for(writer.drain(), self.idle_timeout)
        except asyncio.TimeoutError:
            raise ConnectionError("the client does not read") from None
