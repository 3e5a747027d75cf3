"""The SDK session of the ``gce`` provider: google-cloud-compute over REST and
google-cloud-monitoring over gRPC, built once per provider instance, with the
retries, timeouts and error mapping set here and nowhere else.

- Every call passes ``retry=`` and ``timeout=`` explicitly: the generated Compute
  clients retry some methods on 503 for up to 600 s by default, and ``resize`` not
  at all. Reads retry 500/502/503/504 and dropped connections a few times within
  ``timeout_seconds``; ``resize`` carries a ``requestId`` ("the server will know to
  ignore the request if it has already been completed",
  https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers/resize)
  so that its retries cannot apply a change twice.
- Operations are polled with a ``ZoneOperationsClient`` / ``RegionOperationsClient``
  built with the same client options as the main client (``resize_unary``: the
  plain ``Operation``), never the SDK's ``ExtendedOperation`` poller.
- Errors become :class:`~scalebridge.providers.ProviderError` kinds
  (:func:`map_error`, :func:`operation_error`): Compute answers a rate quota with
  "a 403 error with the reason rateLimitExceeded" (https://cloud.google.com/compute/api-quota),
  so a 403 is ``throttled`` when its reason says rate or quota, ``forbidden``
  otherwise.

The SDKs are imported here, lazily (``import google.cloud.compute_v1`` costs
about 2 s), through :func:`scalebridge.providers.require`.
"""
from __future__ import annotations

import ipaddress
import threading
import uuid
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from scalebridge.providers import ErrorKind, MissingExtra, ProviderError, RefError, parse_retry_after, require

__all__ = ["GceClients", "map_error", "operation_error", "is_loopback", "check_compute_endpoint"]

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
#: errors[].reason values of a 403 that mean a rate or quota limit (api-quota; REST error reasons)
_THROTTLE_REASONS = frozenset(("rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded",
                               "dailyLimitExceeded", "RATE_LIMIT_EXCEEDED", "QUOTA_EXCEEDED"))
#: Operation error codes that are a quota or rate limit
_THROTTLE_CODES = frozenset(("QUOTA_EXCEEDED", "RATE_LIMIT_EXCEEDED", "ZONE_RESOURCE_POOL_EXHAUSTED",
                             "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", "RESOURCE_EXHAUSTED"))
_NOT_FOUND_CODES = frozenset(("RESOURCE_NOT_FOUND", "NOT_FOUND"))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_compute_endpoint(value: Any) -> str:
    """``compute_endpoint``: the scheme, host and port the Compute client takes as its
    ``api_endpoint``; plain ``http`` only to a loopback host."""
    if not isinstance(value, str) or not value:
        raise RefError("compute_endpoint", f"must be a URL such as http://127.0.0.1:8080, got {value!r}")
    u = urlsplit(value)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise RefError("compute_endpoint", f"must be http(s)://HOST[:PORT], got {value!r}")
    if u.path not in ("", "/") or u.query:
        raise RefError("compute_endpoint", f"scheme, host and port only (no path), got {value!r}")
    if u.scheme == "http" and not is_loopback(u.hostname):
        raise RefError("compute_endpoint", f"plain http only to a loopback host (127.0.0.1, localhost), "
                                           f"got {u.hostname!r}: use https")
    return value.rstrip("/")


def _retry_after(exc: Any) -> Optional[float]:
    """The ``Retry-After`` (seconds or an HTTP date) of a REST answer, when the server
    sent one; a rate quota's ``rateLimitExceeded`` usually carries none (the quota
    refills at the next minute, https://cloud.google.com/compute/api-quota)."""
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    return parse_retry_after(headers.get("Retry-After") if headers is not None else None)


def _reasons(exc: Any) -> set[str]:
    out: set[str] = set()
    for e in getattr(exc, "errors", None) or ():
        r = e.get("reason") if isinstance(e, dict) else getattr(e, "reason", None)
        if r:
            out.add(str(r))
    r = getattr(exc, "reason", None)
    if r:
        out.add(str(r))
    return out


def map_error(exc: BaseException, operation: str) -> ProviderError:
    """An SDK, transport or auth exception as the contract's error kind."""
    if isinstance(exc, ProviderError):
        return exc
    from google.api_core import exceptions as gx
    text = str(getattr(exc, "message", None) or exc).strip() or type(exc).__name__
    kind: ErrorKind
    if isinstance(exc, gx.GoogleAPICallError):
        code = exc.code or 0
        if code == 404:
            kind = ErrorKind.NOT_FOUND
        elif code == 429 or isinstance(exc, gx.ResourceExhausted):
            kind = ErrorKind.THROTTLED
        elif code == 403 and _reasons(exc) & _THROTTLE_REASONS:
            kind = ErrorKind.THROTTLED
        elif code in (401, 403):
            kind = ErrorKind.FORBIDDEN
        elif code in (409, 412):
            kind = ErrorKind.CONFLICT
        elif code == 400:
            kind = ErrorKind.INVALID
        else:
            kind = ErrorKind.TRANSIENT
        text = f"HTTP {code} {text}" if code else text
    elif isinstance(exc, gx.RetryError):
        kind = ErrorKind.TRANSIENT
        text = f"gave up retrying: {exc.cause or text}"
    else:
        auth = require("google.auth.exceptions", "gce", "gce")
        requests = require("requests", "gce", "gce")
        if isinstance(exc, (auth.DefaultCredentialsError, auth.RefreshError)):
            kind = ErrorKind.FORBIDDEN
        elif isinstance(exc, (OSError, requests.RequestException, auth.TransportError)):
            kind = ErrorKind.TRANSIENT   # connection refused or reset, read timeouts
        else:
            raise exc   # a defect, not a cloud's answer: it keeps its traceback
    return ProviderError(kind, f"{operation}: {text}", retry_after=_retry_after(exc), operation=operation)


def operation_error(op: Any, operation: str) -> Optional[ProviderError]:
    """The error of an operation that is DONE with ``error`` set, or None."""
    errors = list(op.error.errors) if op.error else []
    if not errors and not op.http_error_status_code:
        return None
    codes = [e.code for e in errors]
    text = "; ".join(f"{e.code}: {e.message}" for e in errors) or op.http_error_message or "failed"
    status = op.http_error_status_code or 0
    if any(c in _THROTTLE_CODES for c in codes) or status == 429:
        kind = ErrorKind.THROTTLED
    elif any(c in _NOT_FOUND_CODES for c in codes) or status == 404:
        kind = ErrorKind.NOT_FOUND
    elif status in (401, 403):
        kind = ErrorKind.FORBIDDEN
    elif status == 400:
        kind = ErrorKind.INVALID
    elif status == 409:
        kind = ErrorKind.CONFLICT
    else:
        kind = ErrorKind.TRANSIENT
    return ProviderError(kind, f"{operation}: operation {op.name} finished with {text}", operation=operation)


class GceClients:
    """The clients of one provider instance, each built on first use.

    ``credentials``: ``"default"`` (Application Default Credentials),
    ``"anonymous"`` (local endpoints), or the path of a service-account key file.
    ``calls`` counts API calls by name (for ``benchmarks/gce.py`` and tests)."""

    def __init__(self, *, compute_endpoint: Optional[str], monitoring_endpoint: Optional[str],
                 monitoring_insecure: bool, credentials: str, timeout: float):
        self.compute_endpoint = compute_endpoint
        self.monitoring_endpoint = monitoring_endpoint
        self.monitoring_insecure = monitoring_insecure
        self.credentials_spec = credentials
        self.timeout = timeout
        self.calls: dict[str, int] = {}
        self._clients: dict[str, Any] = {}
        self._creds: Any = None
        self._lock = threading.Lock()
        self._retry: Any = None

    # -- credentials and clients ----------------------------------------------------------
    def credentials(self) -> Any:
        if self._creds is None:
            spec = self.credentials_spec
            try:
                if spec == "anonymous":
                    self._creds = require("google.auth.credentials", "gce", "gce").AnonymousCredentials()
                elif spec == "default":
                    import google.auth
                    self._creds, _ = google.auth.default(scopes=list(SCOPES))
                else:
                    sa = require("google.oauth2.service_account", "gce", "gce")
                    self._creds = sa.Credentials.from_service_account_file(spec, scopes=list(SCOPES))
            except (ProviderError, MissingExtra):
                raise
            except (OSError, ValueError, KeyError) as e:
                raise ProviderError(ErrorKind.FORBIDDEN, f"credentials {spec!r}: cannot read the "
                                                         f"service-account key file: {e}") from None
            except Exception as e:   # google.auth.exceptions.DefaultCredentialsError and kin
                raise ProviderError(ErrorKind.FORBIDDEN, f"credentials {spec!r}: {e}") from None
        return self._creds

    def compute(self, kind: str) -> Any:
        """A Compute client: ``kind`` is the compute_v1 client class name
        (``InstanceGroupManagersClient``, ``RegionOperationsClient``…)."""
        with self._lock:
            c = self._clients.get(kind)
            if c is None:
                compute_v1 = require("google.cloud.compute_v1", "gce", "gce")
                options = require("google.api_core.client_options", "gce", "gce")
                kw: dict[str, Any] = {"transport": "rest", "credentials": self.credentials()}
                if self.compute_endpoint:
                    kw["client_options"] = options.ClientOptions(api_endpoint=self.compute_endpoint)
                c = self._clients[kind] = getattr(compute_v1, kind)(**kw)
            return c

    def monitoring(self) -> Any:
        with self._lock:
            c = self._clients.get("monitoring")
            if c is None:
                mon = require("google.cloud.monitoring_v3", "gce", "gce")
                if self.monitoring_insecure:
                    grpc = require("grpc", "gce", "gce")
                    from google.cloud.monitoring_v3.services.metric_service.transports import \
                        MetricServiceGrpcTransport
                    channel = grpc.insecure_channel(self.monitoring_endpoint)
                    c = mon.MetricServiceClient(transport=MetricServiceGrpcTransport(channel=channel))
                else:
                    kw: dict[str, Any] = {"credentials": self.credentials()}
                    if self.monitoring_endpoint:
                        options = require("google.api_core.client_options", "gce", "gce")
                        kw["client_options"] = options.ClientOptions(api_endpoint=self.monitoring_endpoint)
                    c = mon.MetricServiceClient(**kw)
                self._clients["monitoring"] = c
            return c

    def types(self) -> Any:
        return require("google.cloud.compute_v1", "gce", "gce")

    # -- calls ----------------------------------------------------------------------------
    def _retries(self) -> Any:
        """Retry 500/502/503/504, deadlines and dropped connections, 0.2 s doubling to
        2 s, until ``timeout`` has passed. A resize may retry too: its ``requestId``
        makes a repeated request the same request."""
        if self._retry is None:
            from google.api_core import exceptions as gx
            from google.api_core import retry as r
            requests = require("requests", "gce", "gce")
            transient = r.if_exception_type(gx.InternalServerError, gx.BadGateway, gx.ServiceUnavailable,
                                            gx.GatewayTimeout, gx.DeadlineExceeded,
                                            requests.exceptions.ConnectionError)
            self._retry = r.Retry(predicate=transient, initial=0.2, maximum=2.0, multiplier=2.0,
                                  timeout=self.timeout)
        return self._retry

    def call(self, name: str, fn: Callable, *, retry: bool = True, **kw) -> Any:
        """``fn(**kw, retry=..., timeout=...)``, counted under ``name``; any failure is
        a :class:`ProviderError` naming ``name``."""
        policy = self._retries() if retry else None
        with self._lock:
            self.calls[name] = self.calls.get(name, 0) + 1
        try:
            return fn(**kw, retry=policy, timeout=self.timeout)
        except Exception as e:
            raise map_error(e, name) from None

    def pages(self, name: str, fn: Callable, **kw) -> list:
        """Every item of a paged list call (the pager fetches the later pages)."""
        pager = self.call(name, fn, **kw)
        try:
            return list(pager)
        except Exception as e:
            raise map_error(e, name) from None

    @staticmethod
    def request_id() -> str:
        return str(uuid.uuid4())

    #: the error of a DONE operation, or None (for callers outside this plugin)
    operation_error = staticmethod(operation_error)

    def close(self) -> None:
        with self._lock:
            for c in self._clients.values():
                t = getattr(c, "transport", None)
                try:
                    if t is not None:
                        t.close()
                except Exception:
                    pass
            self._clients.clear()
