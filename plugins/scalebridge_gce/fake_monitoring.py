"""A local Cloud Monitoring gRPC server (``google.monitoring.v3.MetricService``,
``ListTimeSeries`` only) for the ``gce`` provider, on 127.0.0.1, built from
google-cloud-monitoring's own message types (extra ``[gce]``).

    from scalebridge_gce.fake_monitoring import MonitoringServer
    with MonitoringServer() as mon:
        mon.add_series("compute.googleapis.com/instance/cpu/utilization",
                       resource_labels={"instance_id": "1001", "zone": "europe-west1-b"},
                       points=[(now - 60, 0.9)])
        # MetricServiceClient(transport=MetricServiceGrpcTransport(
        #     channel=grpc.insecure_channel(mon.address)))

What it checks, as the API reference does
(https://cloud.google.com/monitoring/api/ref_v3/rpc/google.monitoring.v3#listtimeseriesrequest):
``name`` is ``projects/{id}``; ``filter`` is required and names exactly one
``metric.type``; ``interval.end_time`` is required; an alignment period is at
least 60 s whenever an aligner other than ``ALIGN_NONE`` is set. Filters
understood: ``=``/``!=`` against a quoted string, ``one_of(...)``,
``starts_with(...)``, joined by ``AND``; anything else is ``INVALID_ARGUMENT``.
Aligners: ``ALIGN_NONE``, ``ALIGN_MEAN``, ``ALIGN_MAX``, ``ALIGN_MIN``,
``ALIGN_SUM``, ``ALIGN_COUNT``, ``ALIGN_NEXT_OLDER``, ``ALIGN_RATE``; cross-series
reducers are not served (``UNIMPLEMENTED``). Results page at ``page_size`` series
(``next_page_token``). Faults: :meth:`MonitoringServer.fail` queues a gRPC status
code for the next calls.
"""
from __future__ import annotations

import re
import threading
from concurrent import futures
from dataclasses import dataclass, field
from typing import Optional

from scalebridge.testing.local_server import LocalServer

__all__ = ["MonitoringServer", "Series"]

_SERVICE = "google.monitoring.v3.MetricService"


@dataclass
class Series:
    metric_type: str
    metric_labels: dict[str, str]
    resource_type: str
    resource_labels: dict[str, str]
    points: list[tuple[float, float]] = field(default_factory=list)   # (end time, value)


class MonitoringServer(LocalServer):
    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, workers: int = 4,
                 tls: Optional[tuple[str, str]] = None):
        """``tls``: ``(certificate.pem, key.pem)`` paths to serve TLS (as the real
        endpoint does) instead of plaintext gRPC."""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the Monitoring fake serves on loopback only")
        self.host, self._port, self._workers, self._tls = host, port, workers, tls
        self.series: list[Series] = []
        self.requests: list = []
        self._faults: list[list] = []
        self._lock = threading.Lock()
        self._server = None
        self.port: Optional[int] = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> "MonitoringServer":
        import grpc
        from google.cloud.monitoring_v3.types import ListTimeSeriesRequest, ListTimeSeriesResponse

        handler = grpc.method_handlers_generic_handler(_SERVICE, {
            "ListTimeSeries": grpc.unary_unary_rpc_method_handler(
                self._list, request_deserializer=ListTimeSeriesRequest.deserialize,
                response_serializer=ListTimeSeriesResponse.serialize)})
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=self._workers))
        self._server.add_generic_rpc_handlers((handler,))
        if self._tls is not None:
            with open(self._tls[0], "rb") as c, open(self._tls[1], "rb") as k:
                creds = grpc.ssl_server_credentials([(k.read(), c.read())])
            self.port = self._server.add_secure_port(f"{self.host}:{self._port}", creds)
        else:
            self.port = self._server.add_insecure_port(f"{self.host}:{self._port}")
        self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(None).wait(5)
            self._server = None

    def reset(self) -> None:
        with self._lock:
            self.series.clear()
            self.requests.clear()
            self._faults.clear()

    def add_series(self, metric_type: str, *, points: list[tuple[float, float]],
                   resource_type: str = "gce_instance", resource_labels: Optional[dict] = None,
                   metric_labels: Optional[dict] = None, project: str = "test-project") -> Series:
        """One time series; ``points`` are ``(end time, value)`` (a DOUBLE gauge)."""
        labels = {"project_id": project, **(resource_labels or {})}
        s = Series(metric_type, dict(metric_labels or {}), resource_type, labels, sorted(points))
        with self._lock:
            self.series.append(s)
        return s

    def fail(self, code: str = "RESOURCE_EXHAUSTED", *, times: int = 1, message: str = "") -> None:
        """Answer the next ``times`` calls with the gRPC status ``code`` (a
        ``grpc.StatusCode`` name: ``RESOURCE_EXHAUSTED``, ``PERMISSION_DENIED``,
        ``UNAVAILABLE``, ``NOT_FOUND``…)."""
        with self._lock:
            self._faults.append([code, times, message or f"injected {code}"])

    def clear_faults(self) -> None:
        """Forget every queued fault."""
        with self._lock:
            self._faults.clear()

    # -- the RPC ---------------------------------------------------------------------------
    def _list(self, request, context):
        import grpc
        from google.cloud.monitoring_v3.types import ListTimeSeriesResponse

        with self._lock:
            self.requests.append(request)
            for f in self._faults:
                if f[1] > 0:
                    f[1] -= 1
                    context.abort(getattr(grpc.StatusCode, f[0]), f[2])
            series = list(self.series)
        try:
            out, token = self._answer(request, series)
        except _Invalid as e:
            context.abort(e.code(grpc), e.message)
        return ListTimeSeriesResponse(time_series=out, next_page_token=token)

    def _answer(self, request, series: list[Series]):
        from google.cloud.monitoring_v3.types import Aggregation, ListTimeSeriesRequest

        m = re.fullmatch(r"projects/([^/]+)", request.name or "")
        if not m:
            raise _Invalid("INVALID_ARGUMENT", f"Field name had an invalid value of \"{request.name}\": "
                                               "must be projects/[PROJECT_ID_OR_NUMBER]")
        project = m.group(1)
        if not request.filter:
            raise _Invalid("INVALID_ARGUMENT", "Field filter had an invalid value: a filter is required")
        terms = _parse_filter(request.filter)
        if sum(1 for k, op, _ in terms if k == "metric.type" and op == "=") != 1:
            raise _Invalid("INVALID_ARGUMENT", "A filter must specify exactly one metric type "
                                               f"(metric.type = \"...\"): {request.filter}")
        end = request.interval.end_time
        if end is None or not end.timestamp():
            raise _Invalid("INVALID_ARGUMENT", "Field interval.end_time is required")
        t1 = end.timestamp()
        start = request.interval.start_time
        t0 = start.timestamp() if start is not None and start.timestamp() else t1
        if t0 > t1:
            raise _Invalid("INVALID_ARGUMENT", "The start time must be before the end time")
        agg = request.aggregation
        aligner = Aggregation.Aligner(agg.per_series_aligner).name if agg else "ALIGN_NONE"
        if agg and agg.cross_series_reducer and agg.cross_series_reducer != Aggregation.Reducer.REDUCE_NONE:
            raise _Invalid("UNIMPLEMENTED", "the Monitoring fake serves no cross-series reducer")
        period = agg.alignment_period.total_seconds() if agg and agg.alignment_period else 0.0
        if aligner != "ALIGN_NONE" and period < 60:
            raise _Invalid("INVALID_ARGUMENT", "The alignment period must be at least 60 seconds")
        if aligner not in _ALIGNERS:
            raise _Invalid("UNIMPLEMENTED", f"the Monitoring fake does not serve {aligner}")
        matched = [s for s in series if s.resource_labels.get("project_id") == project and _match(terms, s)]
        full = request.view == ListTimeSeriesRequest.TimeSeriesView.FULL
        out = []
        for s in matched:
            pts = [(t, v) for t, v in s.points if t0 <= t <= t1] if t0 < t1 else \
                [(t, v) for t, v in s.points if t == t1]
            if aligner != "ALIGN_NONE":
                pts = _align(pts, t0, t1, period, aligner)
            if not pts:
                continue
            out.append(_to_proto(s, pts, full, aligner == "ALIGN_NONE", period))
        size = request.page_size or 100000
        offset = int(request.page_token) if request.page_token else 0
        token = str(offset + size) if offset + size < len(out) else ""
        return out[offset:offset + size], token


class _Invalid(Exception):
    def __init__(self, code: str, message: str):
        self.code_name, self.message = code, message
        super().__init__(message)

    def code(self, grpc):
        return getattr(grpc.StatusCode, self.code_name)


_TERM = re.compile(r'\s*([a-z][\w.]*)\s*(=|!=)\s*(?:"((?:[^"\\]|\\.)*)"|(one_of|starts_with|ends_with)\s*\('
                   r'((?:\s*"(?:[^"\\]|\\.)*"\s*,?)+)\))\s*')


def _parse_filter(text: str) -> list[tuple[str, str, object]]:
    terms = []
    for part in re.split(r"\s+AND\s+", text.strip()):
        part = part.strip()
        while part.startswith("(") and part.endswith(")"):
            part = part[1:-1].strip()
        m = _TERM.fullmatch(part)
        if not m:
            raise _Invalid("INVALID_ARGUMENT", f"Could not parse filter \"{text}\" near \"{part}\"")
        key, op, literal, fn, args = m.groups()
        if not (key in ("metric.type", "resource.type", "project") or
                re.fullmatch(r"(metric|resource)\.labels\.\w+|metadata\.(system|user)_labels\.\w+", key)):
            raise _Invalid("INVALID_ARGUMENT", f"Unknown filter field \"{key}\"")
        if literal is not None:
            terms.append((key, op, ("eq", literal)))
        else:
            terms.append((key, op, (fn, re.findall(r'"((?:[^"\\]|\\.)*)"', args))))
    return terms


def _value(s: Series, key: str) -> Optional[str]:
    if key == "metric.type":
        return s.metric_type
    if key == "resource.type":
        return s.resource_type
    if key == "project":
        return s.resource_labels.get("project_id")
    kind, _, label = key.split(".", 2)
    if kind == "metric":
        return s.metric_labels.get(label)
    if kind == "resource":
        return s.resource_labels.get(label)
    return s.metric_labels.get(label)   # metadata labels: kept with the metric's here


def _match(terms, s: Series) -> bool:
    for key, op, (fn, arg) in terms:
        v = _value(s, key)
        if fn == "eq":
            hit = v == arg
        elif fn == "one_of":
            hit = v in arg
        elif fn == "starts_with":
            hit = v is not None and v.startswith(arg[0])
        else:
            hit = v is not None and v.endswith(arg[0])
        if hit == (op == "!="):
            return False
    return True


_ALIGNERS = {"ALIGN_NONE", "ALIGN_MEAN", "ALIGN_MAX", "ALIGN_MIN", "ALIGN_SUM", "ALIGN_COUNT",
             "ALIGN_NEXT_OLDER", "ALIGN_RATE"}


def _align(pts, t0: float, t1: float, period: float, aligner: str):
    """Points at ``t1, t1 - period, …`` (newer first as the API returns them), each
    aggregating the raw points in ``(t - period, t]``."""
    out = []
    t = t1
    while t > t0:
        window = [(u, v) for u, v in pts if t - period < u <= t]
        if window:
            vs = [v for _, v in window]
            if aligner == "ALIGN_MEAN":
                val = sum(vs) / len(vs)
            elif aligner == "ALIGN_MAX":
                val = max(vs)
            elif aligner == "ALIGN_MIN":
                val = min(vs)
            elif aligner == "ALIGN_SUM":
                val = sum(vs)
            elif aligner == "ALIGN_COUNT":
                val = float(len(vs))
            elif aligner == "ALIGN_RATE":
                val = sum(vs) / period
            else:
                val = window[-1][1]
            out.append((t, val))
        t -= period
    return out


def _to_proto(s: Series, pts, full: bool, raw: bool, period: float):
    from google.api import metric_pb2, monitored_resource_pb2
    from google.cloud.monitoring_v3.types import Point, TimeInterval, TimeSeries, TypedValue
    from google.protobuf import timestamp_pb2

    def ts(t: float):
        out = timestamp_pb2.Timestamp()
        out.FromNanoseconds(int(round(t * 1e9)))
        return out

    points = []
    if full:
        for t, v in sorted(pts, key=lambda p: p[0], reverse=True):
            start = t if raw else t - period
            points.append(Point(interval=TimeInterval(start_time=ts(start), end_time=ts(t)),
                                value=TypedValue(double_value=v)))
    return TimeSeries(metric=metric_pb2.Metric(type=s.metric_type, labels=s.metric_labels),
                      resource=monitored_resource_pb2.MonitoredResource(type=s.resource_type,
                                                                        labels=s.resource_labels),
                      metric_kind=1, value_type=3, points=points)
