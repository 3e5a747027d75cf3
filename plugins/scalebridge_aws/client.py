"""The boto3 session of the ``aws`` provider: Auto Scaling, EC2 and CloudWatch
clients with explicit retries and timeouts, and the mapping of every SDK error
to the provider contract's :class:`~scalebridge.providers.ErrorKind`.

- Retries: botocore's ``standard`` mode with an explicit ``total_max_attempts``
  (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html;
  botocore's ``retries`` config: ``max_attempts`` counts retries,
  ``total_max_attempts`` attempts). The controller backs off between syncs, so
  one call retries little.
- Timeouts: ``connect_timeout`` and ``read_timeout`` of ``botocore.config.Config``.
- A throttled or failed response whose body is not in the service's protocol
  (a load balancer's ``429 Too Many Requests`` in ``text/plain``) makes
  botocore's parser raise ``ResponseParserError`` — neither a ``ClientError``
  nor retried. A ``before-parse`` handler (botocore's event system, the hook
  botocore's own handlers use to rewrite error bodies) gives such a response
  the protocol's error shape first (``Throttling`` for 429, ``ServiceUnavailable``
  for 503, ``InternalFailure`` for other 5xx), so that the standard retry mode
  and the mapping below treat it as the status code says.
- Error codes: the Auto Scaling API reference's common errors
  (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/CommonErrors.html),
  EC2's (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html)
  and CloudWatch's (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/CommonErrors.html).
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any, Optional

from scalebridge.providers import ErrorKind, ProviderError, parse_retry_after, require

__all__ = ["AwsClients", "map_error", "DEFAULT_MAX_ATTEMPTS", "DEFAULT_CONNECT_TIMEOUT", "DEFAULT_READ_TIMEOUT"]

#: botocore ``total_max_attempts`` (the first attempt and two retries: standard mode's default)
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_RETRY_MODE = "standard"
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_READ_TIMEOUT = 15.0

THROTTLING_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottled", "RequestThrottledException",
    "RequestLimitExceeded", "TooManyRequestsException", "SlowDown", "ProvisionedThroughputExceededException",
    "BandwidthLimitExceeded", "LimitExceededException", "PriorRequestNotComplete", "EC2ThrottledException",
})
FORBIDDEN_CODES = frozenset({
    "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
    "InvalidClientTokenId", "AuthFailure", "ExpiredToken", "ExpiredTokenException", "SignatureDoesNotMatch",
    "MissingAuthenticationToken", "IncompleteSignature", "OptInRequired", "NotAuthorized",
    "InvalidAccessKeyId", "Blocked",
})
NOT_FOUND_CODES = frozenset({
    "ResourceNotFound", "ResourceNotFoundException", "InvalidInstanceID.NotFound", "NoSuchEntity",
})
CONFLICT_CODES = frozenset({"ScalingActivityInProgress", "ResourceInUse"})
TRANSIENT_CODES = frozenset({
    "InternalFailure", "InternalError", "InternalServiceError", "InternalServiceFault", "ServiceUnavailable",
    "ServiceUnavailableException", "RequestTimeout", "RequestTimeoutException", "ResourceContention",
    "Unavailable", "RequestExpired",
})
INVALID_CODES = frozenset({
    "ValidationError", "ValidationException", "InvalidParameterValue", "InvalidParameterCombination",
    "InvalidParameterValueException", "MissingParameter", "InvalidAction", "InvalidQueryParameter",
    "MalformedQueryString", "InvalidParameter", "InvalidNextToken", "InvalidInstanceID.Malformed",
    "LimitExceeded", "InvalidFormat",
})


def _retry_after(headers: dict) -> Optional[float]:
    """A ``Retry-After`` (seconds or an HTTP date) where a service or a proxy in front
    of it sends one; AWS's own throttling errors (``Throttling``,
    ``RequestLimitExceeded``) carry none, and back off on the controller's backoff.
    botocore gives header names in lower case."""
    return parse_retry_after((headers or {}).get("retry-after"))


def map_error(exc: BaseException, operation: str) -> ProviderError:
    """One SDK exception as a :class:`ProviderError` of the contract's kinds."""
    if isinstance(exc, ProviderError):
        return exc
    botocore_exceptions = require("botocore.exceptions", "aws", "aws")
    if isinstance(exc, botocore_exceptions.ClientError):
        err = exc.response.get("Error", {}) or {}
        code = str(err.get("Code") or "")
        message = str(err.get("Message") or code or exc)
        meta = exc.response.get("ResponseMetadata", {}) or {}
        status = meta.get("HTTPStatusCode")
        retry_after = _retry_after(meta.get("HTTPHeaders", {}))
        text = f"{operation}: {code}: {message}" if code else f"{operation}: {message}"
        if code in THROTTLING_CODES or status == 429:
            kind = ErrorKind.THROTTLED
        elif code in FORBIDDEN_CODES or status in (401, 403):
            kind = ErrorKind.FORBIDDEN
        elif code in NOT_FOUND_CODES or (code == "ValidationError" and "not found" in message.lower()):
            # SetDesiredCapacity on a missing group: "ValidationError: AutoScalingGroup name not found"
            kind = ErrorKind.NOT_FOUND
        elif code in CONFLICT_CODES or status == 409:
            kind = ErrorKind.CONFLICT
        elif code in TRANSIENT_CODES or (isinstance(status, int) and status >= 500):
            kind = ErrorKind.TRANSIENT
        elif code in INVALID_CODES or status == 400:
            kind = ErrorKind.INVALID
        elif status == 404:
            kind = ErrorKind.NOT_FOUND
        else:
            kind = ErrorKind.TRANSIENT
        return ProviderError(kind, text, retry_after=retry_after, operation=operation)
    if isinstance(exc, botocore_exceptions.NoCredentialsError):
        return ProviderError(ErrorKind.FORBIDDEN, f"{operation}: no AWS credentials found ({exc}): set them "
                             f"through the standard chain (environment, ~/.aws, instance role)",
                             operation=operation)
    if isinstance(exc, (botocore_exceptions.PartialCredentialsError, botocore_exceptions.ProfileNotFound)):
        return ProviderError(ErrorKind.FORBIDDEN, f"{operation}: {exc}", operation=operation)
    if isinstance(exc, (botocore_exceptions.ConnectTimeoutError, botocore_exceptions.ReadTimeoutError)):
        return ProviderError(ErrorKind.TRANSIENT, f"{operation}: timed out ({exc})", operation=operation)
    if isinstance(exc, (botocore_exceptions.EndpointConnectionError, botocore_exceptions.ConnectionClosedError,
                        botocore_exceptions.HTTPClientError)):
        return ProviderError(ErrorKind.TRANSIENT, f"{operation}: connection failed ({exc})", operation=operation)
    if isinstance(exc, require("botocore.parsers", "aws", "aws").ResponseParserError):
        low = str(exc).lower()
        kind = ErrorKind.THROTTLED if ("throttl" in low or "too many requests" in low or "rate exceeded" in low) \
            else ErrorKind.TRANSIENT
        return ProviderError(kind, f"{operation}: unreadable response ({str(exc)[:200]})", operation=operation)
    if isinstance(exc, (botocore_exceptions.ParamValidationError, botocore_exceptions.NoRegionError)):
        return ProviderError(ErrorKind.INVALID, f"{operation}: {exc}", operation=operation)
    if isinstance(exc, botocore_exceptions.BotoCoreError):
        return ProviderError(ErrorKind.TRANSIENT, f"{operation}: {exc}", operation=operation)
    if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
        return ProviderError(ErrorKind.TRANSIENT, f"{operation}: {exc}", operation=operation)
    raise exc


# ----------------------------------------------------------------------------- unparseable error bodies

_STATUS_CODES = {429: ("Throttling", "Sender"), 503: ("ServiceUnavailable", "Receiver")}


def _parseable(body: bytes, protocol: str) -> bool:
    text = body.lstrip()
    if protocol in ("query", "ec2", "rest-xml"):
        return text.startswith(b"<")
    if protocol in ("json", "rest-json"):
        try:
            return isinstance(json.loads(text or b"null"), dict)
        except ValueError:
            return False
    return True    # cbor and others: left to botocore


def protocol_error_body(protocol: str, code: str, fault: str, message: str) -> Optional[bytes]:
    """An error body in the protocol's own shape (what the service itself sends)."""
    # imported here: xml.sax.saxutils imports urllib.request (http.client, ssl, email), which
    # every process that loads the plugins (`scalebridge decide` too) would otherwise pay for
    from xml.sax.saxutils import escape
    if protocol == "query":
        return (f'<ErrorResponse><Error><Type>{fault}</Type><Code>{escape(code)}</Code>'
                f'<Message>{escape(message)}</Message></Error><RequestId>scalebridge</RequestId>'
                f'</ErrorResponse>').encode()
    if protocol == "ec2":
        return (f'<Response><Errors><Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>'
                f'</Error></Errors><RequestID>scalebridge</RequestID></Response>').encode()
    if protocol in ("json", "rest-json"):
        return json.dumps({"__type": code, "message": message}).encode()
    return None


def _unparseable_error(operation_model=None, response_dict=None, **_: Any) -> None:
    """``before-parse`` handler: an error response whose body the protocol's
    parser cannot read gets the protocol's error shape, with the status code's
    error code and the original text as the message."""
    if not response_dict:
        return
    status = response_dict.get("status_code") or 200
    if status < 400:
        return
    sm = operation_model.service_model
    protocol = getattr(sm, "resolved_protocol", None) or sm.protocol
    body = response_dict.get("body") or b""
    if isinstance(body, str):
        body = body.encode()
    if _parseable(body, protocol):
        return
    code, fault = _STATUS_CODES.get(status, ("InternalFailure" if status >= 500 else "HTTPError",
                                             "Receiver" if status >= 500 else "Sender"))
    message = body.decode("utf-8", "replace").strip()[:200] or f"HTTP {status}"
    new = protocol_error_body(protocol, code, fault, f"HTTP {status}: {message}")
    if new is not None:
        response_dict["body"] = new
        headers = response_dict.get("headers")
        if headers is not None and protocol in ("json", "rest-json"):
            headers["x-amzn-query-error"] = f"{code};{fault}"   # awsQueryCompatible services read it


# ----------------------------------------------------------------------------- the clients

_SESSIONS: dict = {}
_SESSIONS_LOCK = threading.Lock()


class AwsClients:
    """One boto3 session and its three clients, made on first use (the SDK is
    imported then, so the plugin imports without it). ``calls`` counts API calls
    (not HTTP attempts) per ``(service, operation)``."""

    SERVICES = ("autoscaling", "ec2", "cloudwatch")

    def __init__(self, region: Optional[str] = None, endpoint_url: Optional[str] = None,
                 profile: Optional[str] = None, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 retry_mode: str = DEFAULT_RETRY_MODE, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, max_pool_connections: int = 32):
        self.region = region
        self.endpoint_url = endpoint_url
        self.profile = profile
        self.max_attempts = max_attempts
        self.retry_mode = retry_mode
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_pool_connections = max_pool_connections
        self.calls: Counter = Counter()
        self._clients: dict[tuple[str, Optional[str]], Any] = {}
        self._session = None
        self._lock = threading.Lock()

    def _make_session(self):
        """A boto3 session over the process's botocore session for this profile:
        service models are loaded once per process, not once per provider."""
        boto3 = require("boto3", "aws", "aws")
        botocore_session = require("botocore.session", "aws", "aws")
        with _SESSIONS_LOCK:
            core = _SESSIONS.get(self.profile)
            if core is None:
                core = _SESSIONS[self.profile] = botocore_session.get_session()
            try:
                return boto3.session.Session(profile_name=self.profile, botocore_session=core)
            except Exception as e:   # ProfileNotFound
                raise map_error(e, "Session") from None

    def config(self):
        """The botocore ``Config`` every client is made with."""
        Config = require("botocore.config", "aws", "aws").Config
        return Config(retries={"mode": self.retry_mode, "total_max_attempts": self.max_attempts},
                      connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
                      max_pool_connections=self.max_pool_connections)

    def client(self, service: str, region: Optional[str] = None):
        region = region or self.region
        key = (service, region)
        c = self._clients.get(key)
        if c is not None:
            return c
        with self._lock:
            c = self._clients.get(key)
            if c is None:
                if self._session is None:
                    self._session = self._make_session()
                try:
                    with _SESSIONS_LOCK:     # botocore sessions make clients one at a time
                        c = self._session.client(service, region_name=region, endpoint_url=self.endpoint_url,
                                                 config=self.config())
                except Exception as e:   # NoRegionError and the like
                    raise ProviderError(ErrorKind.INVALID, f"{service} client: {e} (give the provider's "
                                        f"`region` option or the target's `ref.region`)") from None
                c.meta.events.register("before-parse.*.*", _unparseable_error)
                self._clients[key] = c
        return c

    def call(self, service: str, operation: str, region: Optional[str] = None, **params: Any) -> dict:
        """``client.<operation>(**params)`` (operation in snake_case), every
        failure a :class:`ProviderError` naming the API operation."""
        api = "".join(p.capitalize() for p in operation.split("_"))
        c = self.client(service, region)
        self.calls[(service, api)] += 1
        try:
            return getattr(c, operation)(**params)
        except Exception as e:
            raise map_error(e, api) from None

    def close(self) -> None:
        for c in self._clients.values():
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()
