"""A local droplets API on 127.0.0.1, for this plugin's tests and for its users' tests:
the API :mod:`scalebridge_droplets.client` documents, served by the pieces every
built-in cloud's local server is built from (:class:`scalebridge.testing.local_server.HttpServer`,
:class:`~scalebridge.testing.local_server.QuietHandler`,
:func:`scalebridge.testing.fault_queue.take_fault`)::

    with DropletsServer(tokens={"test-token-0123"}) as api:
        api.add_pool("web", size=2)
        api.cpu("web", 80.0)                 # every droplet at 80 % for the last 15 minutes
        client = DropletsClient(api.url, "test-token-0123")

What it holds: pools, each with its droplets, its CPU samples (one per droplet a
minute, set by the test) and its autoscaler (stored, never run: a test of the
autoscaler's own decisions uses the ``scalebridge`` semantics, which reproduces it).

Strict where the API is (the client's docstring): a request without a known bearer
token is a 401, a write with a read-only one a 403; a body that is not a JSON object,
a missing or unknown field and a value of the wrong type are 400s naming the field; a
size outside ``0..max_size`` or an autoscaler outside its ranges is a 422; a resize
while one is in progress, or while the pool's own autoscaler is enabled, is a 409; an
unknown pool a 404; a metrics range without ``start`` and ``end`` in RFC 3339, ending
before it starts or longer than a day, a 400. It does not count requests against the
API's rate limits: a test queues the 429 it wants with :meth:`DropletsServer.fail`.

A resize is in progress from the ``PUT`` until ``resize_seconds`` have passed on the
server's clock (``clock``, injectable) or the test calls :meth:`DropletsServer.settle`:
meanwhile the pool's ``resizing`` is true, the droplets it adds are ``new`` (not
healthy) and those it removes ``off``; when it ends they are ``active`` (healthy) and
``archive``. :attr:`DropletsServer.calls` records every request as ``(method, path,
query)``.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional
from urllib.parse import parse_qs, unquote, urlsplit

from scalebridge.testing.fault_queue import take_fault
from scalebridge.testing.local_server import HttpServer, QuietHandler

__all__ = ["DropletsServer", "Fault", "Pool", "Droplet"]

#: the fields of an autoscaler, each with its range (the client's docstring)
AUTOSCALER_FIELDS = ("enabled", "min", "max", "target_cpu_percent", "cooldown_seconds")
MAX_COOLDOWN_SECONDS = 3600
#: the longest range one metrics request may ask for
MAX_METRICS_RANGE_SECONDS = 86400
SAMPLE_INTERVAL_SECONDS = 60


def rfc3339(t: float) -> str:
    """``t`` (seconds since the epoch) as the API writes times: UTC, ``Z``, whole seconds
    unless ``t`` has a fraction."""
    d = _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S" + (".%fZ" if d.microsecond else "Z"))


def _parse_time(text: str) -> Optional[float]:
    """An RFC 3339 time with its offset (``Z`` or ``±hh:mm``), or None."""
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", text):
        return None
    try:
        return _dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


@dataclass
class Droplet:
    """One droplet of a pool: ``status`` is ``new``, ``active``, ``off`` or ``archive``."""

    id: str
    created_at: float
    status: str = "new"
    healthy: bool = False

    def json(self) -> dict:
        return {"id": self.id, "status": self.status, "created_at": rfc3339(self.created_at), "healthy": self.healthy}


@dataclass
class Pool:
    """A pool as the server holds it: ``size`` is the desired size, ``settle_at`` when the
    resize in progress ends (None: none is)."""

    name: str
    size: int
    max_size: int
    droplets: list[Droplet] = field(default_factory=list)
    autoscaler: Optional[dict] = None
    settle_at: Optional[float] = None
    next_id: int = 1
    #: droplet id -> [(time, percent)], each sample the droplet's average over the minute ending at ``time``
    samples: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    @property
    def live(self) -> list[Droplet]:
        """The droplets that are, or are becoming, the pool's members (``new`` and ``active``)."""
        return [d for d in self.droplets if d.status in ("new", "active")]

    def json(self) -> dict:
        return {"name": self.name, "size": self.size, "max_size": self.max_size,
                "droplets": [d.json() for d in self.droplets], "resizing": self.settle_at is not None,
                "autoscaler": dict(self.autoscaler) if self.autoscaler is not None else None}


@dataclass
class Fault:
    """One injected answer: ``status`` with ``body`` (the API's error body by default) and
    ``Retry-After`` when ``retry_after`` is given; ``drop`` closes the connection without
    answering. ``match`` (a regex over ``METHOD path``) picks the requests it answers,
    ``times`` how many."""

    status: int = 503
    retry_after: Optional[float] = None
    body: Optional[dict] = None
    drop: bool = False
    match: str = ".*"
    times: Optional[int] = 1


class Refusal(Exception):
    """An error answer: ``status`` and the API's ``{"error": {"code", "message"}}`` body."""

    def __init__(self, status: int, code: str, message: str, headers: Optional[dict] = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


class DropletsServer(HttpServer):
    """See the module docstring. ``tokens`` may read and write, ``read_only_tokens`` only read."""

    thread_name = "droplets-api"

    def __init__(self, *, tokens: Iterable[str] = ("test-token-0123",), read_only_tokens: Iterable[str] = (),
                 resize_seconds: float = 0.0, clock: Callable[[], float] = time.time,
                 host: str = "127.0.0.1", port: int = 0):
        self.tokens = set(tokens)
        self.read_only_tokens = set(read_only_tokens)
        self.resize_seconds = resize_seconds
        self.clock = clock
        self.pools: dict[str, Pool] = {}
        self.faults: list[Fault] = []
        self.calls: list[tuple[str, str, dict[str, str]]] = []
        self._lock = threading.RLock()
        server = self

        class Handler(_Handler):
            api = server

        self._bind(Handler, host, port)

    # -- the world -----------------------------------------------------------------------------

    def add_pool(self, name: str, *, size: int = 2, max_size: int = 20, autoscaler: Optional[dict] = None) -> Pool:
        """A pool of ``size`` active, healthy droplets created an hour ago."""
        with self._lock:
            pool = Pool(name, size=0, max_size=max_size, autoscaler=dict(autoscaler) if autoscaler else None)
            self.pools[name] = pool
            self._resize(pool, size, self.clock() - 3600)
            self._settle(pool)
            return pool

    def pool(self, name: str) -> Pool:
        with self._lock:
            return self.pools[name]

    def cpu(self, pool: str, percent: float, *, minutes: int = 15, droplets: Optional[Iterable[str]] = None) -> None:
        """Every live droplet of ``pool`` (or those named) at ``percent`` CPU for the last
        ``minutes`` minutes, one sample a minute, the newest at the current second of the
        server's clock (so that a window ending within the next minute holds it)."""
        with self._lock:
            p = self.pools[pool]
            ids = list(droplets) if droplets is not None else [d.id for d in p.live]
            end = math.floor(self.clock())
            for droplet in ids:
                self.put_samples(pool, droplet, [(end - SAMPLE_INTERVAL_SECONDS * k, percent) for k in range(minutes)])

    def put_samples(self, pool: str, droplet: str, samples: Iterable[tuple[float, float]]) -> None:
        """CPU samples of one droplet, ``(time, percent)``: its average over the minute ending at ``time``."""
        with self._lock:
            series = self.pools[pool].samples.setdefault(droplet, [])
            series.extend(samples)
            series.sort()

    def settle(self, pool: Optional[str] = None) -> None:
        """End the resize in progress of ``pool`` (of every pool when None) now."""
        with self._lock:
            for p in self.pools.values() if pool is None else [self.pools[pool]]:
                self._settle(p)

    def fail(self, status: int = 503, *, match: str = ".*", times: Optional[int] = 1,
             retry_after: Optional[float] = None, body: Optional[dict] = None, drop: bool = False) -> None:
        """Answer the next ``times`` requests matching ``match`` (a regex over ``METHOD
        path``) with ``status`` instead of serving them."""
        with self._lock:
            self.faults.append(Fault(status, retry_after, body, drop, match, times))

    def count(self, method: str, pattern: str = ".*") -> int:
        """How many ``method`` requests whose path matches ``pattern`` were made."""
        with self._lock:
            return sum(1 for m, path, _ in self.calls if m == method and re.search(pattern, path))

    # -- what a resize does --------------------------------------------------------------------

    def _resize(self, pool: Pool, size: int, now: float) -> None:
        live = pool.live
        for _ in range(size - len(live)):
            pool.droplets.append(Droplet(f"{pool.name}-{pool.next_id}", created_at=now))
            pool.next_id += 1
        for d in sorted(live, key=lambda d: (d.created_at, d.id), reverse=True)[:max(0, len(live) - size)]:
            d.status, d.healthy = "off", False   # the newest go first
        pool.size = size
        pool.settle_at = now + self.resize_seconds

    def _settle(self, pool: Pool) -> None:
        for d in pool.droplets:
            if d.status == "new":
                d.status, d.healthy = "active", True
            elif d.status == "off":
                d.status = "archive"
        pool.settle_at = None

    def _advance(self, pool: Pool) -> None:
        if pool.settle_at is not None and self.clock() >= pool.settle_at:
            self._settle(pool)

    def _take_fault(self, method: str, path: str) -> Optional[Fault]:
        with self._lock:
            return take_fault(self.faults, lambda f: re.search(f.match, f"{method} {path}") is not None)

    # -- the API -------------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, str], body: Any, token: Optional[str]) -> tuple[int, Any]:
        """One request's answer, ``(status, JSON body)``; raises :class:`Refusal`."""
        if token is None or token not in self.tokens | self.read_only_tokens:
            raise Refusal(401, "unauthorized", "a bearer token the API knows is required (Authorization: Bearer …)",
                           {"WWW-Authenticate": 'Bearer realm="droplets"'})
        m = re.fullmatch(r"/v1/pools/([^/]+)(/size|/autoscaler|/metrics/cpu)?", path)
        if m is None:
            raise Refusal(404, "not_found", f"no such resource: {path}")
        name, sub = m.group(1), m.group(2) or ""
        allowed = {"": ("GET",), "/size": ("PUT",), "/autoscaler": ("GET", "PUT"), "/metrics/cpu": ("GET",)}[sub]
        if method not in allowed:
            raise Refusal(405, "method_not_allowed", f"{method} is not allowed on {path}",
                           {"Allow": ", ".join(allowed)})
        if method == "PUT" and token not in self.tokens:
            raise Refusal(403, "forbidden", "this token may only read")
        known = ("start", "end") if sub == "/metrics/cpu" else ()
        for key in query:
            if key not in known:
                raise Refusal(400, "bad_request", f"unknown query parameter {key!r}")
        with self._lock:
            pool = self.pools.get(name)
            if pool is None:
                raise Refusal(404, "pool_not_found", f"no pool named {name!r}")
            self._advance(pool)
            if sub == "":
                return 200, pool.json()
            if sub == "/size":
                return self._put_size(pool, body)
            if sub == "/autoscaler" and method == "GET":
                if pool.autoscaler is None:
                    raise Refusal(404, "no_autoscaler", f"pool {name!r} has no autoscaler")
                return 200, dict(pool.autoscaler)
            if sub == "/autoscaler":
                pool.autoscaler = _autoscaler(body, pool.max_size)
                return 200, dict(pool.autoscaler)
            return 200, self._cpu(pool, query)

    def _put_size(self, pool: Pool, body: Any) -> tuple[int, dict]:
        _fields(body, {"size"})
        size = body["size"]
        if not _integer(size):
            raise Refusal(400, "bad_request", f"size: expected an integer, got {json.dumps(size)}")
        if not 0 <= size <= pool.max_size:
            raise Refusal(422, "size_out_of_range", f"size: {size} is outside 0..{pool.max_size} (the pool's "
                                                     "max_size)")
        if size == pool.size:
            return 200, pool.json()
        if pool.autoscaler is not None and pool.autoscaler["enabled"]:
            raise Refusal(409, "autoscaler_enabled", f"pool {pool.name!r} is sized by its own autoscaler; "
                                                      "disable it to set the size")
        if pool.settle_at is not None:
            raise Refusal(409, "resize_in_progress", f"pool {pool.name!r} is resizing to {pool.size}; set another "
                                                      "size once it is done")
        self._resize(pool, size, self.clock())
        return 202, pool.json()

    def _cpu(self, pool: Pool, query: dict[str, str]) -> dict:
        bounds = {}
        for key in ("start", "end"):
            if key not in query:
                raise Refusal(400, "bad_request", f"{key}: required (an RFC 3339 time)")
            t = _parse_time(query[key])
            if t is None:
                raise Refusal(400, "bad_request", f"{key}: not an RFC 3339 time with its offset: {query[key]!r}")
            bounds[key] = t
        start, end = bounds["start"], bounds["end"]
        if end <= start:
            raise Refusal(400, "bad_request", "end: must be after start")
        if end - start > MAX_METRICS_RANGE_SECONDS:
            raise Refusal(400, "bad_request", f"a range is at most {MAX_METRICS_RANGE_SECONDS} seconds")
        droplets = []
        for droplet, series in sorted(pool.samples.items()):
            inside = [{"time": rfc3339(t), "percent": v} for t, v in series if start < t <= end]
            if inside:
                droplets.append({"id": droplet, "samples": inside})
        return {"pool": pool.name, "start": query["start"], "end": query["end"],
                "interval_seconds": SAMPLE_INTERVAL_SECONDS, "droplets": droplets}


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _fields(body: Any, want: set[str]) -> None:
    """A JSON object with exactly the fields ``want``: a 400 naming the first that is not."""
    if not isinstance(body, dict):
        raise Refusal(400, "bad_request", "the body must be a JSON object")
    for key in body:
        if key not in want:
            raise Refusal(400, "bad_request", f"{key}: unknown field (the fields are {', '.join(sorted(want))})")
    for key in sorted(want):
        if key not in body:
            raise Refusal(400, "bad_request", f"{key}: required")


def _autoscaler(body: Any, max_size: int) -> dict:
    """A PUT autoscaler body checked as the API checks it."""
    _fields(body, set(AUTOSCALER_FIELDS))
    if not isinstance(body["enabled"], bool):
        raise Refusal(400, "bad_request", f"enabled: expected true or false, got {json.dumps(body['enabled'])}")
    for key in AUTOSCALER_FIELDS[1:]:
        if not _integer(body[key]):
            raise Refusal(400, "bad_request", f"{key}: expected an integer, got {json.dumps(body[key])}")
    lo, hi = body["min"], body["max"]
    ranges = (("min", 0 <= lo <= hi, f"0..max ({hi})"), ("max", 1 <= hi <= max_size, f"1..{max_size} (max_size)"),
              ("target_cpu_percent", 1 <= body["target_cpu_percent"] <= 100, "1..100"),
              ("cooldown_seconds", 0 <= body["cooldown_seconds"] <= MAX_COOLDOWN_SECONDS,
               f"0..{MAX_COOLDOWN_SECONDS}"))
    for key, ok, valid in ranges:
        if not ok:
            raise Refusal(422, "invalid_autoscaler", f"{key}: {body[key]} is outside {valid}")
    return {k: body[k] for k in AUTOSCALER_FIELDS}


class _Handler(QuietHandler):
    api: DropletsServer

    def _answer(self, status: int, body: Any, headers: Optional[dict] = None) -> None:
        self.send(status, json.dumps(body).encode(), "application/json", headers)

    def _route(self, method: str) -> None:
        split = urlsplit(self.path)
        path = unquote(split.path)
        pairs = parse_qs(split.query, keep_blank_values=True)
        query = {k: v[-1] for k, v in pairs.items()}
        api = self.api
        with api._lock:
            api.calls.append((method, path, query))
        raw = self.read_body()
        fault = api._take_fault(method, path)
        if fault is not None:
            if fault.drop:
                self.close_connection = True
                return
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
            code = {429: "too_many_requests", 503: "unavailable"}.get(fault.status, "injected")
            return self._answer(fault.status, fault.body if fault.body is not None else
                                {"error": {"code": code, "message": f"injected fault {fault.status}"}}, headers)
        auth = self.headers.get("Authorization") or ""
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        try:
            body = None
            if method == "PUT":
                if self.headers.get_content_type() != "application/json":
                    raise Refusal(400, "bad_request", "the body must be JSON (Content-Type: application/json)")
                try:
                    body = json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    raise Refusal(400, "bad_request", "the body is not JSON") from None
            status, answer = api.handle(method, path, query, body, token)
        except Refusal as e:
            return self._answer(e.status, {"error": {"code": e.code, "message": e.message}}, e.headers)
        self._answer(status, answer)

    def do_GET(self) -> None:     # noqa: N802
        self._route("GET")

    def do_PUT(self) -> None:     # noqa: N802
        self._route("PUT")

    def do_POST(self) -> None:    # noqa: N802
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")
