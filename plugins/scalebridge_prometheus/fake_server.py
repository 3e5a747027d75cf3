"""A local server speaking Prometheus's HTTP API, over series a test loads.

For plugin authors and tests of metric sources and back-tests: instant and
range queries (``/api/v1/query``, ``/api/v1/query_range``, GET or POST form),
``/api/v1/status/runtimeinfo`` (``storageRetention``), ``/api/v1/status/buildinfo``
and ``/-/ready``, answering with Prometheus's JSON shapes
(https://prometheus.io/docs/prometheus/latest/querying/api/) and strict where
Prometheus is (``web/api/v1/api.go``):

- a query that does not parse, or a range vector in a range query → 400
  ``bad_data`` with Prometheus's message (:mod:`scalebridge_prometheus.promql`
  evaluates the part of PromQL it implements, and says so of the rest);
- ``(end − start) / step > 11000`` → 400 ``bad_data`` "exceeded maximum
  resolution of 11,000 points per timeseries. Try decreasing the query
  resolution (?step=XX)"; a step of 0 or less, an end before the start, a time
  that is not one → the ``invalid parameter`` errors;
- retention: as the TSDB deletes blocks older than the retention counted back
  from its newest data, samples older than the newest sample less
  ``retention`` are gone (never an error: a range past the retention answers
  only what is left), and ``runtimeinfo`` says ``storageRetention``.

Samples come from :meth:`PrometheusServer.add` or from OpenMetrics text
(:meth:`PrometheusServer.load_openmetrics`) — the same file ``promtool tsdb
create-blocks-from openmetrics`` backfills a real Prometheus with. Faults
(:meth:`PrometheusServer.fail`) answer chosen requests with a status, a
Prometheus error body and a ``Retry-After``::

    with PrometheusServer() as prom:
        prom.add({"__name__": "rps", "job": "web"}, [(t0, 120.0), (t0 + 60, 130.0)])
        prom.url      # http://127.0.0.1:PORT
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from scalebridge.testing.fault_queue import take_fault
from scalebridge.testing.local_server import HttpServer, QuietHandler
from .promql import PromQLError, Series, Store, evaluate, matrix, parse, value_type

__all__ = ["PrometheusServer", "MAX_POINTS", "format_value", "openmetrics"]

#: ``web/api/v1/api.go``: "if end.Sub(start)/step > 11000" the range query is refused
MAX_POINTS = 11_000
_TOO_MANY = ("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution "
             "(?step=XX)")


def format_value(v: float) -> str:
    """A sample value as Prometheus writes it: Go's ``strconv.FormatFloat(v, 'f', -1, 64)``
    (the shortest digits that read back exactly, never an exponent), ``NaN``, ``+Inf``, ``-Inf``."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return np.format_float_positional(v, unique=True, trim="-")


def _time_json(t: float) -> float | int:
    return int(t) if float(t).is_integer() else round(t, 3)


def openmetrics(series: Iterable[tuple[Mapping[str, str], Iterable[tuple[float, float]]]]) -> str:
    """OpenMetrics text of ``(labels, samples)`` pairs (each ``__name__`` a gauge), with
    timestamps, ending in ``# EOF``: what ``promtool tsdb create-blocks-from
    openmetrics`` reads (and :meth:`PrometheusServer.load_openmetrics`)."""
    lines: list[str] = []
    typed: set[str] = set()
    for labels, samples in series:
        name = labels["__name__"]
        if name not in typed:
            lines.append(f"# TYPE {name} gauge")
            typed.add(name)
        rest = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()) if k != "__name__")
        head = f"{name}{{{rest}}}" if rest else name
        for t, v in samples:
            lines.append(f"{head} {format_value(float(v))} {format_value(float(t))}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


_SAMPLE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(\S+))?\s*$')
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


@dataclass
class _Fault:
    path: str
    status: int
    error_type: str
    message: str
    retry_after: Optional[float]
    times: Optional[int]


class PrometheusServer(HttpServer):
    """A Prometheus HTTP API on 127.0.0.1 over the series added to it (see the module docstring)."""

    thread_name = "prometheus-server"

    def __init__(self, *, retention: str = "15d", host: str = "127.0.0.1", port: int = 0) -> None:
        from scalebridge.metric_sources import parse_prometheus_duration
        self.retention = retention
        self.retention_seconds = parse_prometheus_duration(retention)
        self.store = Store()
        self.requests: list[tuple[str, dict]] = []    #: (path, parameters) of every query, in order
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self._bind(_handler(self), host, port)

    # ------------------------------------------------------------------ loading
    def add(self, labels: Mapping[str, str], samples: Iterable[tuple[float, float]]) -> None:
        """Samples ``(t, v)`` of the series ``labels`` (``__name__`` is its metric name),
        merged with what it has."""
        pts = sorted((float(t), float(v)) for t, v in samples)
        labels = {str(k): str(v) for k, v in labels.items()}
        if "__name__" not in labels:
            raise ValueError("a series needs a __name__ label (its metric name)")
        with self._lock:
            for s in self.store.series:
                if s.labels == labels:
                    merged = dict(zip(s.times.tolist(), s.values.tolist()))
                    merged.update(pts)
                    pts = sorted(merged.items())
                    self.store.series.remove(s)
                    break
            t = np.array([p[0] for p in pts], dtype=np.float64)
            v = np.array([p[1] for p in pts], dtype=np.float64)
            self.store.series.append(Series(labels, t, v))

    def add_arrays(self, labels: Mapping[str, str], times: Sequence[float], values: Sequence[float]) -> None:
        """A whole series at once (times strictly increasing): the fast path for long histories."""
        t = np.asarray(times, dtype=np.float64)
        v = np.asarray(values, dtype=np.float64)
        if t.shape != v.shape or (t.size > 1 and not np.all(np.diff(t) > 0)):
            raise ValueError("times must strictly increase and match values")
        with self._lock:
            self.store.series.append(Series({str(k): str(x) for k, x in labels.items()}, t, v))

    def load_openmetrics(self, text: str) -> None:
        """Samples from OpenMetrics text with timestamps (seconds), as ``promtool tsdb
        create-blocks-from openmetrics`` reads it."""
        acc: dict[tuple, list[tuple[float, float]]] = {}
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            m = _SAMPLE.match(line)
            if m is None or m.group(4) is None:
                raise ValueError(f"line {n}: not a sample with a timestamp: {line!r}")
            labels = {"__name__": m.group(1)}
            for k, v in _LABEL.findall(m.group(2) or ""):
                labels[k] = re.sub(r"\\(.)", lambda x: {"n": "\n"}.get(x.group(1), x.group(1)), v)
            acc.setdefault(tuple(sorted(labels.items())), []).append((float(m.group(4)), float(m.group(3))))
        for key, pts in acc.items():
            self.add(dict(key), pts)

    def fail(self, path: str = "/api/v1/query_range", status: int = 503, *, error_type: str = "unavailable",
             message: str = "injected fault", retry_after: Optional[float] = None,
             times: Optional[int] = 1) -> None:
        """Answer the next ``times`` requests to ``path`` (None: every one) with ``status``
        and Prometheus's error body."""
        with self._lock:
            self._faults.append(_Fault(path, status, error_type, message, retry_after, times))

    # ------------------------------------------------------------------ answering
    def _visible(self) -> Store:
        """The store less what the retention has deleted (counted back from the newest sample)."""
        newest = max((float(s.times[-1]) for s in self.store.series if s.times.size), default=None)
        if newest is None:
            return self.store
        cut = newest - self.retention_seconds
        out = Store()
        for s in self.store.series:
            if s.times.size and s.times[0] < cut:
                i = int(np.searchsorted(s.times, cut, side="left"))
                if i < s.times.size:
                    out.series.append(Series(s.labels, s.times[i:], s.values[i:]))
            else:
                out.series.append(s)
        return out

    def answer(self, path: str, params: dict) -> tuple[int, dict, dict]:
        """(status, JSON body, headers) for one request."""
        with self._lock:
            if path.startswith("/api/v1/query"):
                self.requests.append((path, dict(params)))
            fault = take_fault(self._faults, lambda f: f.path == path)
        if fault is not None:
            headers = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
            return fault.status, {"status": "error", "errorType": fault.error_type, "error": fault.message}, headers
        try:
            if path == "/api/v1/query":
                return 200, self._instant(params), {}
            if path == "/api/v1/query_range":
                return 200, self._range(params), {}
        except PromQLError as e:
            return 400, {"status": "error", "errorType": "bad_data", "error": str(e)}, {}
        if path == "/api/v1/status/runtimeinfo":
            return 200, {"status": "success", "data": {"storageRetention": self.retention,
                                                       "startTime": "1970-01-01T00:00:00Z"}}, {}
        if path == "/api/v1/status/buildinfo":
            return 200, {"status": "success", "data": {"version": "2.42.0-scalebridge-local",
                                                       "revision": "", "branch": ""}}, {}
        return 404, {}, {}

    def _instant(self, params: dict) -> dict:
        query = _param(params, "query")
        at = _time(params.get("time"), "time") if params.get("time") else time.time()
        node = _parse(query)
        store = self._visible()
        kind = value_type(node)
        if kind == "range vector":
            if node[0] != "matrix":
                raise PromQLError(f"unsupported range vector expression {query!r}")
            result = [{"metric": lab, "values": [[_time_json(t), format_value(v)] for t, v in pts]}
                      for lab, pts in matrix(node, store, at)]
            return _ok("matrix", result)
        got = evaluate(node, store, [at])
        if isinstance(got, np.ndarray):
            return _ok("scalar", [_time_json(at), format_value(float(got[0]))])
        result = [{"metric": lab, "value": [_time_json(at), format_value(float(v[0]))]}
                  for lab, v in got if not math.isnan(v[0])]
        return _ok("vector", result)

    def _range(self, params: dict) -> dict:
        query = _param(params, "query")
        start = _time(params.get("start"), "start")
        end = _time(params.get("end"), "end")
        if end < start:
            raise PromQLError('invalid parameter "end": end timestamp must not be before start time')
        step = _step(params.get("step"))
        if (end - start) / step > MAX_POINTS:
            raise PromQLError(_TOO_MANY)
        node = _parse(query)
        kind = value_type(node)
        if kind not in ("scalar", "instant vector"):
            raise PromQLError(f'invalid expression type "{kind}" for range query, must be Scalar or instant Vector')
        n = int(math.floor((end - start) / step + 1e-9)) + 1
        times = start + np.arange(n) * step
        got = evaluate(node, self._visible(), times)
        if isinstance(got, np.ndarray):
            got = [({}, got)]
        result = []
        for lab, vals in sorted(got, key=lambda x: sorted(x[0].items())):
            keep = ~np.isnan(vals)
            if keep.any():
                result.append({"metric": lab, "values": [[_time_json(t), format_value(v)]
                                                         for t, v in zip(times[keep].tolist(), vals[keep].tolist())]})
        return _ok("matrix", result)


def _parse(query: str):
    """The query's tree; a parse error is the ``invalid parameter "query"`` error Prometheus 2.42 gives."""
    try:
        return parse(query)
    except PromQLError as e:
        raise PromQLError(f'invalid parameter "query": {e}') from None


def _ok(kind: str, result: object) -> dict:
    return {"status": "success", "data": {"resultType": kind, "result": result}}


def _param(params: dict, name: str) -> str:
    v = params.get(name)
    if not v:
        raise PromQLError(f'invalid parameter "{name}": unknown position: parse error: no expression found in input')
    return v


def _time(raw: Optional[str], name: str) -> float:
    if raw is None or raw == "":
        raise PromQLError(f'invalid parameter "{name}": cannot parse "" to a valid timestamp')
    try:
        t = float(raw)
        if math.isfinite(t):
            return t
    except ValueError:
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise PromQLError(f'invalid parameter "{name}": cannot parse "{raw}" to a valid timestamp')


def _step(raw: Optional[str]) -> float:
    from scalebridge.metric_sources import parse_prometheus_duration
    try:
        step = float(raw) if raw is not None else math.nan
    except ValueError:
        try:
            step = parse_prometheus_duration(raw)
        except ValueError:
            raise PromQLError(f'invalid parameter "step": cannot parse "{raw}" to a valid duration') from None
    if not math.isfinite(step):
        raise PromQLError(f'invalid parameter "step": cannot parse "{raw or ""}" to a valid duration')
    if step <= 0:
        raise PromQLError('invalid parameter "step": zero or negative query resolution step widths are not '
                          "accepted. Try a positive integer")
    return step


def _handler(server: PrometheusServer) -> type:
    class Handler(QuietHandler):
        def _serve(self, params: dict) -> None:
            path = urllib.parse.urlsplit(self.path).path
            if path in ("/-/ready", "/-/healthy"):
                body = b"Prometheus Server is Ready.\n" if path == "/-/ready" else b"Prometheus Server is Healthy.\n"
                self.send(200, body, "text/plain; charset=utf-8")
                return
            status, body, headers = server.answer(path, params)
            if status == 404 and not body:
                self.send(404, b"404 page not found\n", "text/plain; charset=utf-8")
                return
            self.send(status, json.dumps(body).encode(), "application/json", headers)

        def do_GET(self) -> None:  # noqa: N802
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            self._serve({k: v[-1] for k, v in q.items()})

        def do_POST(self) -> None:  # noqa: N802
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            q.update(urllib.parse.parse_qs(self.read_body().decode()))
            self._serve({k: v[-1] for k, v in q.items()})

    return Handler
