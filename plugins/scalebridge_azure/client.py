"""The Azure SDK session: credentials, the Compute and Monitor clients, retries, and
error mapping. Every SDK call of the plugin goes through :meth:`ArmSession.call`, so
no Azure exception crosses the provider contract.

- Credentials (https://learn.microsoft.com/python/api/azure-identity/azure.identity):
  ``credential: default`` → ``DefaultAzureCredential``; a mapping
  ``{tenant_id, client_id, client_secret, authority}`` → ``ClientSecretCredential``.
  A non-default ``authority`` turns instance discovery off
  (``disable_instance_discovery``), as a private or sovereign authority has none.
- ``arm_endpoint`` is the clients' ``base_url`` and the token audience
  (``{arm_endpoint}/.default``); ``ca_bundle`` verifies every HTTPS endpoint the
  provider talks to (ARM and the authority).
- Retries: azure-core's ``RetryPolicy`` retries 408/429/5xx ten times by default and
  sleeps ``Retry-After`` inside the call. The controller owns backoff and pacing, so
  status retries are off (``retry_status=0``) and a 429 reaches it at once with its
  ``Retry-After``; a connection or read failure is retried once.
- Errors (https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling,
  https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors):
  404 → not found, 401/403 → forbidden, 409 → conflict, 429 → throttled (with
  ``Retry-After``), 400 → invalid, 5xx and transport failures → transient.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Optional, TypeVar

from scalebridge.providers import ErrorKind, ProviderError, RefError, parse_retry_after, require
from scalebridge.secrets import shown

PUBLIC_ARM_ENDPOINT = "https://management.azure.com"
#: a read or connect failure is retried once by the SDK; statuses never are (the controller backs off)
RETRY_KWARGS = {"retry_total": 1, "retry_connect": 1, "retry_read": 1, "retry_status": 0,
                "retry_backoff_factor": 0.2, "retry_backoff_max": 1}
#: seconds for a connection and for a response (azure-core's are 300 s and no limit)
CONNECTION_TIMEOUT = 10.0
READ_TIMEOUT = 30.0

T = TypeVar("T")


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    """ARM's ``Retry-After`` (seconds, or an HTTP date), or ``retry-after-ms`` /
    ``x-ms-retry-after-ms`` in milliseconds (azure-core's ``RetryPolicy`` reads the same
    three, ``get_retry_after``); the controller bounds the hold."""
    for key in ("retry-after-ms", "x-ms-retry-after-ms"):
        v = headers.get(key)
        if v is not None:
            ms = parse_retry_after(v, now=0.0)
            if ms is not None:
                return ms / 1000.0
    return parse_retry_after(headers.get("Retry-After") or headers.get("retry-after"))


def map_error(e: BaseException, operation: str) -> ProviderError:
    """An Azure SDK exception as the contract's :class:`ProviderError`."""
    from azure.core import exceptions as ex

    status = getattr(getattr(e, "response", None), "status_code", None) or getattr(e, "status_code", None)
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    code = getattr(getattr(e, "error", None), "code", None)
    message = getattr(getattr(e, "error", None), "message", None) or \
        (str(e).splitlines()[0] if str(e) else type(e).__name__)
    text = f"{operation}: {code + ': ' if code else ''}{message}"
    if isinstance(e, ex.ClientAuthenticationError) or status in (401, 403):
        return ProviderError(ErrorKind.FORBIDDEN, text, operation=operation)
    if status == 429:
        return ProviderError(ErrorKind.THROTTLED, text, retry_after=_retry_after(headers), operation=operation)
    if isinstance(e, ex.ResourceNotFoundError) or status == 404:
        return ProviderError(ErrorKind.NOT_FOUND, text, operation=operation)
    if status in (409, 412):
        return ProviderError(ErrorKind.CONFLICT, text, operation=operation)
    if status is not None and 400 <= status < 500:
        return ProviderError(ErrorKind.INVALID, text, operation=operation)
    if isinstance(e, (ex.ServiceRequestError, ex.ServiceResponseError)) or (status or 0) >= 500:
        return ProviderError(ErrorKind.TRANSIENT, text, retry_after=_retry_after(headers), operation=operation)
    return ProviderError(ErrorKind.TRANSIENT, f"{operation}: {type(e).__name__}: {e}", operation=operation)


class ArmSession:
    """The SDK clients of one provider instance (one subscription, one endpoint),
    built on first use and shared by its targets (the clients are thread-safe)."""

    def __init__(self, *, subscription_id: Optional[str] = None, arm_endpoint: Optional[str] = None,
                 ca_bundle: Optional[str] = None, credential: Any = "default"):
        self.subscription_id = subscription_id
        self.arm_endpoint = (arm_endpoint or PUBLIC_ARM_ENDPOINT).rstrip("/")
        if not self.arm_endpoint.startswith("https://"):
            raise RefError("arm_endpoint", f"must be an https:// URL (azure-core sends bearer tokens over HTTPS "
                                           f"only), got {arm_endpoint!r}")
        self.ca_bundle = ca_bundle
        self.credential_option = credential
        self._lock = threading.Lock()
        self._credential: Any = None
        self._compute: dict[str, Any] = {}
        self._monitor: dict[str, Any] = {}
        if not (credential in (None, "default") or isinstance(credential, Mapping)):
            # never the value: a client secret put here by mistake must not be echoed
            got = shown("credential", credential)
            raise RefError("credential", "is `default` (DefaultAzureCredential) or a mapping {tenant_id, "
                                         f"client_id, client_secret, authority}}, got {got}")
        if isinstance(credential, Mapping):
            missing = [k for k in ("tenant_id", "client_id", "client_secret") if not credential.get(k)]
            if missing:
                raise RefError(f"credential.{missing[0]}", "is required for a service principal "
                                                           "(tenant_id, client_id, client_secret)")
            for key in ("tenant_id", "client_id", "client_secret", "authority"):
                value = credential.get(key)
                if value is not None and not isinstance(value, str):
                    raise RefError(f"credential.{key}", f"expected a string, got {shown(key, value)}")
            unknown = sorted(set(credential) - {"tenant_id", "client_id", "client_secret", "authority"})
            if unknown:
                raise RefError(f"credential.{unknown[0]}", "unknown key; a service principal takes tenant_id, "
                                                           "client_id, client_secret, authority")

    # -- clients -------------------------------------------------------------------------------

    def _transport_kwargs(self) -> dict:
        kw: dict[str, Any] = {"connection_timeout": CONNECTION_TIMEOUT, "read_timeout": READ_TIMEOUT}
        if self.ca_bundle:
            kw["connection_verify"] = self.ca_bundle
        return kw

    def credential(self) -> Any:
        with self._lock:
            if self._credential is None:
                identity = require("azure.identity", "azure", "azure")
                opt = self.credential_option
                kw = self._transport_kwargs()
                if isinstance(opt, Mapping):
                    extra: dict[str, Any] = {}
                    if opt.get("authority"):
                        extra["authority"] = opt["authority"]
                        extra["disable_instance_discovery"] = True
                    self._credential = identity.ClientSecretCredential(
                        opt["tenant_id"], opt["client_id"], opt["client_secret"], **extra, **kw)
                else:
                    self._credential = identity.DefaultAzureCredential(**kw)
            return self._credential

    def _client_kwargs(self) -> dict:
        return {"base_url": self.arm_endpoint, "credential_scopes": [f"{self.arm_endpoint}/.default"],
                **RETRY_KWARGS, **self._transport_kwargs()}

    def compute(self, subscription_id: str) -> Any:
        with self._lock:
            client = self._compute.get(subscription_id)
        if client is None:
            mod = require("azure.mgmt.compute", "azure", "azure")
            client = mod.ComputeManagementClient(self.credential(), subscription_id, **self._client_kwargs())
            with self._lock:
                client = self._compute.setdefault(subscription_id, client)
        return client

    def monitor(self, subscription_id: str) -> Any:
        with self._lock:
            client = self._monitor.get(subscription_id)
        if client is None:
            mod = require("azure.mgmt.monitor", "azure", "azure")
            client = mod.MonitorManagementClient(self.credential(), subscription_id, **self._client_kwargs())
            with self._lock:
                client = self._monitor.setdefault(subscription_id, client)
        return client

    # -- calls ---------------------------------------------------------------------------------

    def call(self, operation: str, fn: Callable[..., T], *args: Any,
             on_headers: Optional[Callable[[Mapping[str, str]], None]] = None, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` with Azure errors mapped; ``on_headers`` sees each
        raw response's headers (ARM's ``x-ms-ratelimit-remaining-*``)."""
        from azure.core import exceptions as ex

        if on_headers is not None:
            kwargs["raw_response_hook"] = lambda response: on_headers(response.http_response.headers)
        try:
            return fn(*args, **kwargs)
        except ProviderError:
            raise
        except ex.AzureError as e:
            raise map_error(e, operation) from None
        except (OSError, ValueError) as e:   # a credential file, a malformed answer
            raise ProviderError(ErrorKind.TRANSIENT, f"{operation}: {type(e).__name__}: {e}",
                                operation=operation) from None

    def close(self) -> None:
        with self._lock:
            clients = list(self._compute.values()) + list(self._monitor.values())
            self._compute.clear()
            self._monitor.clear()
            cred, self._credential = self._credential, None
        for c in clients:
            try:
                c.close()
            except Exception:   # noqa: BLE001 — closing is best effort
                pass
        if cred is not None and hasattr(cred, "close"):
            try:
                cred.close()
            except Exception:   # noqa: BLE001
                pass
