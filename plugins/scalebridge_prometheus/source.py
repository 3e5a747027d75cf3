"""The ``prometheus`` metric source: the Prometheus HTTP API over plain HTTP(S).

Options (``metric_sources: {prom: {type: prometheus, …}}``):

| option | meaning |
|---|---|
| ``url`` | the server's base URL (``http://prometheus:9090``, or with a path prefix: ``https://host/prometheus``); required |
| ``headers`` | a mapping of extra request headers (``X-Scope-OrgID`` for Mimir/Cortex tenants) |
| ``bearer_token_file`` | a file holding a bearer token, read at every request (a rotated token is picked up) |
| ``ca_bundle`` | a CA file (PEM) to verify an HTTPS server with |
| ``timeout_seconds`` | per request, default 30; also sent as the query's ``timeout`` |

Reads (https://prometheus.io/docs/prometheus/latest/querying/api/):

- an instant query, ``POST /api/v1/query`` (``query``, ``time``), for a value,
  the values or one value per member at the sync time;
- a range query, ``POST /api/v1/query_range`` (``query``, ``start``, ``end``,
  ``step``), for a window of samples (a rule's time window at its grain) and for
  history. Prometheus refuses a range of more than 11,000 steps
  (``web/api/v1/api.go``: ``if end.Sub(start)/step > 11000`` → ``bad_data``
  "exceeded maximum resolution of 11,000 points per timeseries"), so history is
  read in requests of at most 11,000 points (:attr:`PrometheusSource.max_points`);
- its retention, ``GET /api/v1/status/runtimeinfo`` (``storageRetention``,
  such as ``15d`` or ``15d or 10GiB``), so that a back-test over a longer period
  says so rather than replaying half a period.

Why plain HTTP through the standard library rather than a client package: the
two query endpoints are a form POST and a JSON answer; ``prometheus-api-client``
brings pandas, matplotlib and requests for conveniences the controller does not
use, and hides Prometheus's ``errorType`` behind its own exceptions, which this
source maps one by one onto the providers' error kinds:

| Prometheus | kind |
|---|---|
| 400 ``bad_data`` (a bad PromQL, a bad parameter, too many points), 422 ``execution`` | ``invalid``, with Prometheus's own message |
| 401, 403 | ``forbidden`` |
| 404 (no Prometheus API at that URL) | ``not_found`` |
| 429 | ``throttled``, with ``Retry-After`` |
| 503 (a query timed out or was aborted; too many queries), other 5xx, no connection, a timeout | ``transient`` |

The answers' numbers are Go's shortest round-trip formatting
(``strconv.FormatFloat(v, 'f', -1, 64)``), read back exactly by ``float``;
``NaN`` is a missing sample, never 0.
"""
from __future__ import annotations

import json
import math
import os
import urllib.parse
from typing import TYPE_CHECKING, Any, Mapping, Optional

from scalebridge.secrets import remember, shown
from scalebridge.metric_sources import MetricSource, RangeSeries, Sample, parse_prometheus_duration
from scalebridge.providers import ErrorKind, ProviderError, RefError

if TYPE_CHECKING:
    import ssl

__all__ = ["PrometheusSource", "MAX_POINTS", "DEFAULT_TIMEOUT_SECONDS"]

#: points per series in one range request (``web/api/v1/api.go``: ``end.Sub(start)/step > 11000`` is refused)
MAX_POINTS = 11_000
DEFAULT_TIMEOUT_SECONDS = 30.0
OPTIONS = ("url", "headers", "bearer_token_file", "ca_bundle", "timeout_seconds")


def _seconds(t: float) -> str:
    """A time or step as Prometheus reads it: seconds with millisecond precision."""
    return f"{t:.3f}".rstrip("0").rstrip(".")


class PrometheusSource(MetricSource):
    """A Prometheus server (or one speaking its HTTP API: Thanos, Mimir, VictoriaMetrics)."""

    type = "prometheus"
    path_options = frozenset({"bearer_token_file", "ca_bundle"})
    max_points = MAX_POINTS

    def __init__(self, url: Optional[str] = None, headers: Optional[Mapping[str, Any]] = None,
                 bearer_token_file: Optional[str] = None, ca_bundle: Optional[str] = None,
                 timeout_seconds: Any = DEFAULT_TIMEOUT_SECONDS) -> None:
        if not isinstance(url, str) or not url:
            raise RefError("url", "required: the Prometheus server's base URL, such as http://prometheus:9090")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise RefError("url", f"an http:// or https:// URL with a host, such as http://prometheus:9090 "
                                  f"(got {url!r})")
        self.url = url.rstrip("/")
        if headers is not None and not isinstance(headers, Mapping):
            raise RefError("headers", f"a mapping of header names to values, got {shown('headers', headers)}")
        self.headers = {}
        for k, v in (headers or {}).items():
            if not isinstance(k, str) or not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise RefError(f"headers.{k}", f"a header value is a string, got {shown('headers', v)}")
            remember(str(v))   # a header is where an API key or a token goes: never shown
            self.headers[k] = str(v)
        if bearer_token_file is not None:
            if not isinstance(bearer_token_file, str) or not os.path.isfile(bearer_token_file):
                raise RefError("bearer_token_file", f"no such file: {bearer_token_file!r}")
        self.bearer_token_file = bearer_token_file
        self._ssl: Optional[ssl.SSLContext] = None
        if ca_bundle is not None:
            import ssl
            if not isinstance(ca_bundle, str) or not os.path.isfile(ca_bundle):
                raise RefError("ca_bundle", f"no such file: {ca_bundle!r} (a PEM file of CA certificates)")
            try:
                self._ssl = ssl.create_default_context(cafile=ca_bundle)
            except (ssl.SSLError, OSError) as e:
                raise RefError("ca_bundle", f"{ca_bundle}: not a PEM file of CA certificates ({e})") from None
        if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, (int, float)) or \
                not 0 < timeout_seconds <= 3600:
            raise RefError("timeout_seconds", f"a number of seconds above 0 and at most 3600, got {timeout_seconds!r}")
        self.timeout = float(timeout_seconds)
        self._retention: Any = ...   # not asked yet

    # ------------------------------------------------------------------ HTTP
    def _request(self, path: str, form: Optional[dict] = None) -> Any:
        # imported here, not with the module: every process that loads the plugins
        # (`scalebridge decide` too) would pay for urllib.request, http.client and ssl
        import socket
        import urllib.error
        import urllib.request
        headers = {"Accept": "application/json", "User-Agent": "scalebridge", **self.headers}
        if self.bearer_token_file is not None:
            try:
                with open(self.bearer_token_file, encoding="utf-8") as f:
                    token = f.read().strip()
                    remember(token)
                    headers["Authorization"] = f"Bearer {token}"
            except OSError as e:
                raise ProviderError(ErrorKind.FORBIDDEN, f"{self.name}: cannot read bearer_token_file "
                                    f"{self.bearer_token_file}: {e.strerror or e}", operation=path) from None
        data = None
        if form is not None:
            form = {**form, "timeout": _seconds(self.timeout)}
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method="POST" if data else "GET")
        where = f"{self.name}: {self.url}{path}"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as resp:
                body = resp.read()
                status = resp.status
                retry_after = None
        except urllib.error.HTTPError as e:
            body = e.read() if e.fp is not None else b""
            status = e.code
            retry_after = _retry_after(e.headers.get("Retry-After") if e.headers else None)
        except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, OSError) as e:
            reason = getattr(e, "reason", None) or e
            raise ProviderError(ErrorKind.TRANSIENT, f"{where}: cannot reach Prometheus: {reason}",
                                operation=path) from None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if status == 200 and isinstance(answer, dict) and answer.get("status") == "success":
            return answer.get("data")
        message = answer.get("error") if isinstance(answer, dict) else None
        kind_name = answer.get("errorType") if isinstance(answer, dict) else None
        text = f"{where}: HTTP {status}" + (f" {kind_name}" if kind_name else "") + \
            (f": {message}" if message else (f": {body[:200].decode(errors='replace')}" if body else ""))
        if status in (400, 422):
            kind = ErrorKind.INVALID
        elif status in (401, 403):
            kind = ErrorKind.FORBIDDEN
        elif status == 404:
            kind = ErrorKind.NOT_FOUND
            text += " (is the url a Prometheus server's base URL?)"
        elif status == 429:
            kind = ErrorKind.THROTTLED
        elif status >= 500 or status == 200:
            kind = ErrorKind.TRANSIENT
        else:
            kind = ErrorKind.INVALID
        raise ProviderError(kind, text, retry_after=retry_after, operation=path)

    # ------------------------------------------------------------------ the two reads
    def instant(self, query: str, at: float) -> list[Sample]:
        data = self._request("/api/v1/query", {"query": query, "time": _seconds(at)})
        kind = (data or {}).get("resultType")
        result = (data or {}).get("result")
        if kind == "vector":
            out = []
            for s in result or ():
                v = _number(s["value"][1])
                if v is not None:
                    out.append(Sample(s.get("metric") or {}, v))
            return out
        if kind == "scalar":
            v = _number(result[1])
            return [] if v is None else [Sample({}, v)]
        if kind == "matrix":
            raise ProviderError(ErrorKind.INVALID, f"{self.name}: {query!r} returns a range vector (a matrix) "
                                "where an instant vector is needed: wrap the range in a function "
                                "(rate(…[1m]), avg_over_time(…[5m]))", operation="/api/v1/query")
        raise ProviderError(ErrorKind.INVALID, f"{self.name}: {query!r} returns a {kind or 'nothing'}, not a "
                            "number (an instant vector or a scalar)", operation="/api/v1/query")

    def range(self, query: str, start: float, end: float, step: float) -> list[RangeSeries]:
        data = self._request("/api/v1/query_range", {"query": query, "start": _seconds(start),
                                                     "end": _seconds(end), "step": _seconds(step)})
        if (data or {}).get("resultType") != "matrix":
            raise ProviderError(ErrorKind.INVALID, f"{self.name}: {query!r}: a range query answered "
                                f"{(data or {}).get('resultType')!r}, not a matrix", operation="/api/v1/query_range")
        out = []
        for s in data.get("result") or ():
            pts = [[float(t), v] for t, raw in s.get("values") or () if (v := _number(raw)) is not None]
            out.append(RangeSeries(s.get("metric") or {}, pts))
        return out

    def retention_seconds(self) -> Optional[float]:
        """``storageRetention`` of ``/api/v1/status/runtimeinfo`` (its time part:
        ``15d or 10GiB`` keeps 15 days at most); None when the server does not say
        (a size-only retention, or an API without the status endpoints)."""
        if self._retention is ...:
            try:
                data = self._request("/api/v1/status/runtimeinfo")
            except ProviderError as e:
                if e.kind in (ErrorKind.NOT_FOUND, ErrorKind.INVALID):
                    self._retention = None
                    return None
                raise
            self._retention = None
            for part in str((data or {}).get("storageRetention") or "").split(" or "):
                try:
                    self._retention = parse_prometheus_duration(part)
                    break
                except ValueError:
                    continue
        return self._retention


def _number(raw: Any) -> Optional[float]:
    try:
        v = float(raw)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _retry_after(value: Optional[str]) -> Optional[float]:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
