"""The droplets API session: every HTTP call of the plugin, its timeout, its retries and
its error mapping, so that no ``urllib`` exception crosses the provider contract.
Standard library only (``urllib.request``): the API is five JSON calls, and an SDK would
be one more thing to install and to keep from leaking its own exceptions.

**The API** (invented for this example, shaped like a real cloud's). JSON over HTTPS
under ``{endpoint}/v1``; every request carries ``Authorization: Bearer TOKEN``.

| call | answer |
|---|---|
| ``GET /v1/pools/{pool}`` | 200, the pool |
| ``PUT /v1/pools/{pool}/size`` ``{"size": N}`` | 202, the pool, ``resizing``; 200 when the size already is ``N`` |
| ``GET /v1/pools/{pool}/metrics/cpu?start=T&end=T`` | 200, each droplet's CPU samples in ``(start, end]`` |
| ``GET /v1/pools/{pool}/autoscaler`` | 200, the pool's own autoscaler; 404 ``no_autoscaler`` when it has none |
| ``PUT /v1/pools/{pool}/autoscaler`` (the whole autoscaler) | 200, the autoscaler as stored |

- A **pool**: ``{"name", "size" (the desired size), "max_size" (the most droplets it
  may hold), "droplets": [{"id", "status", "created_at" (RFC 3339), "healthy"}],
  "resizing", "autoscaler" (or null)}``. A droplet is ``new`` while it boots (never
  healthy), ``active`` once running (``healthy`` says whether its health check passes),
  ``off`` while a resize removes it, ``archive`` once removed (listed for an hour).
- A **size** is absolute: setting the size a pool already has changes nothing. A size
  outside ``0..max_size`` is a 422 ``size_out_of_range``. While a resize is in progress
  (``resizing``) another size is a 409 ``resize_in_progress``; while the pool's own
  autoscaler is enabled any other size is a 409 ``autoscaler_enabled``.
- **CPU samples**: ``start`` and ``end`` are RFC 3339 times with their offset, at most a
  day apart; the answer is ``{"pool", "start", "end", "interval_seconds": 60,
  "droplets": [{"id", "samples": [{"time", "percent"}]}]}``, each sample the droplet's
  average CPU over the minute ending at ``time``, published when that minute ends.
- The **autoscaler**: ``{"enabled", "min", "max", "target_cpu_percent",
  "cooldown_seconds"}``, every field required, integers in ``0 <= min <= max``, ``1 <=
  max <= max_size``, ``1..100`` and ``0..3600``. While enabled it keeps the average CPU
  of the pool's healthy droplets at ``target_cpu_percent``: ``ceil(size × average /
  target)``, held while within 10 % of the target, bounded to ``min..max``; it removes
  droplets only down to the largest size it wanted over the last ``cooldown_seconds``,
  and leaves droplets younger than 60 s out of a decision to add more. That is the
  ``scalebridge`` semantics with those settings (``translate.py`` writes and reads it).
- **Errors** are ``{"error": {"code", "message"}}``: 400 ``bad_request`` (a body or a
  parameter that is not what the call takes: an unknown or missing field, a wrong
  type), 401 ``unauthorized`` (no token, or one the API does not know), 403
  ``forbidden`` (a read-only token writing), 404 (``pool_not_found``, ``not_found``),
  409 and 422 as above, 429 ``too_many_requests`` with ``Retry-After`` (seconds), 5xx
  when the API itself fails.
- **Rate limits**, per token: reads 5 a second with bursts of 50, writes 1 a second
  with bursts of 10 (:data:`scalebridge_droplets.provider.PACING`); past them, a 429.

**This session**: each request times out after ``timeout`` seconds (connect and each
read); a connection that fails or times out is retried ``retries`` times at once (every
call is idempotent: absolute sizes, whole autoscalers), an HTTP status never is — the
controller owns backoff and pacing. Answers map onto the provider contract's kinds:

| answer | :class:`~scalebridge.providers.ErrorKind` |
|---|---|
| 400, 422 | ``invalid`` |
| 401, 403 | ``forbidden`` |
| 404 | ``not_found`` |
| 409 | ``conflict`` (``autoscaler_enabled``: the provider refuses the target) |
| 429 | ``throttled``, with ``Retry-After`` |
| 5xx, a timeout, a dropped or refused connection, an answer that is not JSON | ``transient`` |
"""
from __future__ import annotations

import ipaddress
import json
import urllib.parse
from typing import Any, Mapping, Optional

from scalebridge.providers import ErrorKind, ProviderError, RefError

__all__ = ["ApiError", "DropletsClient", "DEFAULT_TIMEOUT_SECONDS", "USER_AGENT"]

DEFAULT_TIMEOUT_SECONDS = 10.0
USER_AGENT = "scalebridge-droplets/0.1.0"
_KINDS = {400: ErrorKind.INVALID, 422: ErrorKind.INVALID, 401: ErrorKind.FORBIDDEN, 403: ErrorKind.FORBIDDEN,
          404: ErrorKind.NOT_FOUND, 409: ErrorKind.CONFLICT, 429: ErrorKind.THROTTLED}


class ApiError(ProviderError):
    """An error answer of the API, as the contract's :class:`ProviderError`; ``status``
    and ``code`` (``resize_in_progress``…) are the API's, None when there was no answer."""

    def __init__(self, kind: ErrorKind, message: str, *, status: Optional[int] = None, code: Optional[str] = None,
                 retry_after: Optional[float] = None, operation: Optional[str] = None):
        super().__init__(kind, message, retry_after=retry_after, operation=operation)
        self.status, self.code = status, code


def retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` in seconds: a number of seconds or an HTTP date (RFC 9110); None
    when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils
    import time
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def check_endpoint(endpoint: Any) -> str:
    """The API's base URL: ``https://``, or ``http://`` to a loopback address only (a local
    server): a bearer token never crosses a network in clear. Raises :class:`RefError`."""
    if not isinstance(endpoint, str) or not endpoint:
        raise RefError("endpoint", "required: the API's base URL, such as https://api.droplets.example")
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/") or parts.query:
        raise RefError("endpoint", f"a scheme, a host and an optional port, such as https://api.droplets.example "
                                   f"(got {endpoint!r})")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise RefError("endpoint", f"must be https:// (the bearer token would cross the network in clear); "
                                   f"http:// is for a server on this machine only (got {endpoint!r})")
    return endpoint.rstrip("/")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class DropletsClient:
    """One API session (an endpoint and a token), shared by a provider's targets:
    ``urllib`` opens a connection per request, so it is safe from several threads."""

    def __init__(self, endpoint: str, token: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS, retries: int = 1):
        self.endpoint = check_endpoint(endpoint)
        self._token = token
        self.timeout = timeout
        self.retries = retries

    # -- the five calls ------------------------------------------------------------------------

    def pool(self, pool: str) -> dict:
        """``GET /v1/pools/{pool}``."""
        return self.request("GET", f"/v1/pools/{_quote(pool)}")

    def resize(self, pool: str, size: int) -> dict:
        """``PUT /v1/pools/{pool}/size``: the pool, resizing (or unchanged)."""
        return self.request("PUT", f"/v1/pools/{_quote(pool)}/size", body={"size": size})

    def cpu(self, pool: str, start: str, end: str) -> dict:
        """``GET /v1/pools/{pool}/metrics/cpu``: each droplet's samples in ``(start, end]``
        (RFC 3339 times)."""
        return self.request("GET", f"/v1/pools/{_quote(pool)}/metrics/cpu", query={"start": start, "end": end})

    def autoscaler(self, pool: str) -> Optional[dict]:
        """``GET /v1/pools/{pool}/autoscaler``; None when the pool has none."""
        try:
            return self.request("GET", f"/v1/pools/{_quote(pool)}/autoscaler")
        except ApiError as e:
            if e.code == "no_autoscaler":
                return None
            raise

    def set_autoscaler(self, pool: str, autoscaler: Mapping[str, Any]) -> dict:
        """``PUT /v1/pools/{pool}/autoscaler``: the autoscaler as stored."""
        return self.request("PUT", f"/v1/pools/{_quote(pool)}/autoscaler", body=dict(autoscaler))

    # -- one request ---------------------------------------------------------------------------

    def request(self, method: str, path: str, *, query: Optional[Mapping[str, str]] = None,
                body: Optional[Mapping[str, Any]] = None) -> Any:
        """One call's JSON answer; every failure an :class:`ApiError` of the contract's kinds."""
        # imported here, not with the module: every process that loads the plugins
        # (`scalebridge decide` too) would pay for urllib.request, http.client and ssl
        import http.client
        import urllib.error
        import urllib.request
        url = self.endpoint + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        operation = f"{method} {path}"
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT, "Authorization": f"Bearer {self._token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    status, raw, after = resp.status, resp.read(), None
                break
            except urllib.error.HTTPError as e:
                status, raw, after = e.code, e.read() if e.fp is not None else b"", e.headers.get("Retry-After")
                break
            # no answer: a refused or reset connection, a timeout (URLError and these are OSErrors),
            # or a reply cut short (http.client's IncompleteRead, BadStatusLine)
            except (OSError, http.client.HTTPException) as e:
                if attempt < self.retries:
                    continue
                reason = getattr(e, "reason", None) or e
                raise ApiError(ErrorKind.TRANSIENT, f"{operation}: cannot reach {self.endpoint}: {reason}",
                               operation=operation) from None
        try:
            answer = json.loads(raw) if raw else None
        except (ValueError, UnicodeDecodeError):
            answer = None
            if 200 <= status < 300:
                raise ApiError(ErrorKind.TRANSIENT, f"{operation}: HTTP {status} with a body that is not JSON",
                               status=status, operation=operation) from None
        if 200 <= status < 300:
            return answer
        error = answer.get("error") if isinstance(answer, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else raw[:200].decode(errors="replace")
        kind = _KINDS.get(status, ErrorKind.TRANSIENT if status >= 500 else ErrorKind.INVALID)
        text = f"{operation}: HTTP {status}" + (f" {code}" if code else "") + (f": {message}" if message else "")
        wait = retry_after(after) if kind in (ErrorKind.THROTTLED, ErrorKind.TRANSIENT) else None
        raise ApiError(kind, text, status=status, code=code, retry_after=wait, operation=operation)


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")
