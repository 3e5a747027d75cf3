"""The Kubernetes API session: configuration, pacing, timeouts, retries and error
mapping. Every call of the plugin goes through :meth:`KubeClient.call` (typed
API methods) or :meth:`KubeClient.get_raw` (the aggregated metrics APIs, which
the official client has no typed methods for); no ``ApiException`` or urllib3
error crosses the provider contract.

Configuration, in client-go's order (``clientcmd``, ``rest.InClusterConfig``):
an explicit ``kubeconfig`` wins; else in-cluster (the service-account token and
CA under ``/var/run/secrets/kubernetes.io/serviceaccount/`` and
``KUBERNETES_SERVICE_HOST``) when mounted or when ``in_cluster`` is true; else
the default kubeconfig (``$KUBECONFIG``, ``~/.kube/config``) and ``context``.

Pacing: client-go's client-side rate limiter, a token bucket of ``QPS`` 5 and
``Burst`` 10 by default (k8s.io/client-go/rest/config.go, ``DefaultQPS`` and
``DefaultBurst``), shared by every call of one client.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from typing import Any, Callable, Optional

from scalebridge.providers import ErrorKind, ProviderError, RefError, parse_retry_after, require

#: k8s.io/client-go/rest/config.go: DefaultQPS, DefaultBurst
DEFAULT_QPS = 5.0
DEFAULT_BURST = 10
#: (connect, read) seconds for every call
DEFAULT_TIMEOUT = (5.0, 15.0)
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class TokenBucket:
    """client-go's ``flowcontrol.NewTokenBucketRateLimiter(qps, burst)``: ``burst``
    calls at once, then ``qps`` a second; :meth:`acquire` waits for a token."""

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.tokens = float(self.burst)
        self.clock, self.sleep = clock, sleep
        self.last = clock()
        self.lock = threading.Lock()
        self.waited = 0.0

    def acquire(self) -> None:
        if self.qps <= 0:
            return
        with self.lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
            self.last = now
            self.tokens -= 1.0
            wait = -self.tokens / self.qps if self.tokens < 0 else 0.0
        if wait > 0:
            self.waited += wait
            self.sleep(wait)


def _retry_after(headers: Any) -> Optional[float]:
    """The ``Retry-After`` of a 429 (or 503), in seconds or an HTTP date, as the API
    server sent it (API Priority and Fairness answers 429 with one,
    https://kubernetes.io/docs/concepts/cluster-administration/flow-control/); the
    controller bounds the hold."""
    if not headers:
        return None
    return parse_retry_after(headers.get("Retry-After") or headers.get("retry-after"))


def _status_message(body: Any) -> Optional[str]:
    try:
        data = json.loads(body) if isinstance(body, (str, bytes)) else body
        return data.get("message") if isinstance(data, dict) else None
    except ValueError:
        return None


def map_api_error(status: int, reason: str, body: Any, headers: Any, operation: str) -> ProviderError:
    """An API status as a :class:`ProviderError` (HTTP status codes of
    https://kubernetes.io/docs/reference/using-api/api-concepts/#http-status-codes)."""
    message = _status_message(body) or reason or f"HTTP {status}"
    text = f"{operation}: {message} (HTTP {status})"
    if status == 404:
        kind = ErrorKind.NOT_FOUND
    elif status in (401, 403):
        kind = ErrorKind.FORBIDDEN
    elif status == 429:
        kind = ErrorKind.THROTTLED
    elif status == 409:
        kind = ErrorKind.CONFLICT
    elif status in (400, 405, 415, 422):
        kind = ErrorKind.INVALID
    else:
        kind = ErrorKind.TRANSIENT
    return ProviderError(kind, text, retry_after=_retry_after(headers), operation=operation)


class KubeClient:
    """One API session (one ``ApiClient`` with its own ``Configuration``, never the
    process-wide default), its rate limiter, and the typed APIs the plugin uses."""

    def __init__(self, *, kubeconfig: Optional[str] = None, context: Optional[str] = None,
                 in_cluster: Optional[bool] = None, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST,
                 timeout: tuple[float, float] = DEFAULT_TIMEOUT, service_account_dir: str = SERVICE_ACCOUNT_DIR,
                 environ: Optional[dict] = None):
        self.k8s = require("kubernetes.client", "kubernetes", "kubernetes")
        self._config_mod = require("kubernetes.config", "kubernetes", "kubernetes")
        self.ApiException = self.k8s.exceptions.ApiException
        self._urllib3 = require("urllib3", "kubernetes", "kubernetes")
        self.timeout = timeout
        self.limiter = TokenBucket(qps, burst)
        self.calls = 0
        self.calls_by_operation: dict[str, int] = {}
        self._count_lock = threading.Lock()
        self.mode, self.configuration = self._configure(kubeconfig, context, in_cluster, service_account_dir,
                                                        os.environ if environ is None else environ)
        self.api_client = self.k8s.ApiClient(self.configuration)
        self.apps = self.k8s.AppsV1Api(self.api_client)
        self.core = self.k8s.CoreV1Api(self.api_client)
        self.custom = self.k8s.CustomObjectsApi(self.api_client)
        self.autoscaling = self.k8s.AutoscalingV2Api(self.api_client)
        self.coordination = self.k8s.CoordinationV1Api(self.api_client)
        self._release: Optional[str] = None
        self._release_read = False
        self._release_lock = threading.Lock()

    # -- configuration -----------------------------------------------------------------
    def _configure(self, kubeconfig, context, in_cluster, sa_dir, environ):
        k8s, cfgmod = self.k8s, self._config_mod
        cfg = k8s.Configuration()
        token = os.path.join(sa_dir, "token")
        mounted = os.path.exists(token) and bool(environ.get("KUBERNETES_SERVICE_HOST"))
        try:
            if kubeconfig:
                path = os.path.expanduser(str(kubeconfig))
                if not os.path.exists(path):
                    raise RefError("kubeconfig", f"no such file: {path}")
                cfgmod.load_kube_config(config_file=path, context=context, client_configuration=cfg,
                                        persist_config=False)
                mode = f"kubeconfig {path}" + (f" context {context}" if context else "")
            elif in_cluster or (in_cluster is None and mounted):
                if not mounted:
                    raise RefError("in_cluster", f"no service-account token at {token} or no "
                                                 "KUBERNETES_SERVICE_HOST: not running in a pod")
                loader = cfgmod.incluster_config.InClusterConfigLoader(
                    token_filename=token, cert_filename=os.path.join(sa_dir, "ca.crt"), environ=environ)
                loader.load_and_set(cfg)
                mode = "in-cluster"
            else:
                default = environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
                cfgmod.load_kube_config(config_file=default, context=context, client_configuration=cfg,
                                        persist_config=False)
                mode = "kubeconfig (default)" + (f" context {context}" if context else "")
        except RefError:
            raise
        except cfgmod.ConfigException as e:
            raise RefError("context" if context and "context" in str(e).lower() else "kubeconfig", str(e)) from None
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise RefError("kubeconfig", f"{type(e).__name__}: {e}") from None
        # the controller syncs targets on up to 16 threads sharing this session
        cfg.connection_pool_maxsize = 32
        urllib3 = self._urllib3
        # connection failures are retried twice and a read of a GET once, quickly; an API
        # status (429, 5xx) is returned to the controller, which backs off with Retry-After
        cfg.retries = urllib3.util.retry.Retry(total=2, connect=2, read=1, status=0, redirect=0,
                                               allowed_methods=frozenset({"GET"}), backoff_factor=0.1,
                                               respect_retry_after_header=False, raise_on_status=False)
        return mode, cfg

    # -- calls -------------------------------------------------------------------------
    def _count(self, operation: str) -> None:
        with self._count_lock:
            self.calls += 1
            self.calls_by_operation[operation] = self.calls_by_operation.get(operation, 0) + 1

    def call(self, operation: str, fn: Callable, *args, **kwargs) -> Any:
        """``fn(*args, **kwargs)`` with the client's timeout, after the rate limiter,
        SDK errors mapped to :class:`ProviderError` naming ``operation``."""
        self.limiter.acquire()
        self._count(operation)
        try:
            return fn(*args, _request_timeout=self.timeout, **kwargs)
        except self.ApiException as e:
            raise map_api_error(e.status or 0, e.reason or "", e.body, e.headers, operation) from None
        except (self._urllib3.exceptions.HTTPError, OSError) as e:   # connection, timeout, protocol
            raise self._transport_error(e, operation) from None

    def release(self) -> Optional[str]:
        """The API server's release as ``"1.37"`` (``GET /version``: ``major``.``minor``,
        else ``gitVersion``), read once per session; None when it cannot be read (the
        semantics then decides as the newest release it reproduces). A transient failure
        is tried again on the next call."""
        with self._release_lock:        # one read, whichever thread asks first
            return self._read_release()

    def _read_release(self) -> Optional[str]:
        if not self._release_read:
            try:
                info = self.get_raw("get version", "/version")
            except ProviderError as e:
                if e.kind is ErrorKind.TRANSIENT or e.kind is ErrorKind.THROTTLED:
                    return None
                info = {}
            self._release_read = True
            major = str(info.get("major") or "").rstrip("+")
            minor = str(info.get("minor") or "").rstrip("+")
            if major.isdigit() and minor.isdigit():
                self._release = f"{int(major)}.{int(minor)}"
            else:
                m = re.match(r"v?(\d+)\.(\d+)", str(info.get("gitVersion") or ""))
                self._release = f"{m.group(1)}.{m.group(2)}" if m else None
        return self._release

    def get_raw(self, operation: str, path: str, query: Optional[dict] = None) -> dict:
        """GET ``path`` (already escaped) as JSON, through the client's session and
        auth (``ApiClient.param_serialize`` and ``call_api``)."""
        self.limiter.acquire()
        self._count(operation)
        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        try:
            method, url, headers, body, post = self.api_client.param_serialize(
                "GET", path, query_params=params, header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"])
            resp = self.api_client.call_api(method, url, header_params=headers, _request_timeout=self.timeout)
            data = resp.read()
            if not 200 <= resp.status <= 299:
                raise map_api_error(resp.status, resp.reason or "", data, resp.headers, operation)
            return json.loads(data)
        except ProviderError:
            raise
        except self.ApiException as e:
            raise map_api_error(e.status or 0, e.reason or "", e.body, e.headers, operation) from None
        except ValueError as e:
            raise ProviderError(ErrorKind.TRANSIENT, f"{operation}: the API answered no JSON ({e})",
                                operation=operation) from None
        except (self._urllib3.exceptions.HTTPError, OSError) as e:
            raise self._transport_error(e, operation) from None

    @staticmethod
    def _transport_error(e: Exception, operation: str) -> ProviderError:
        return ProviderError(ErrorKind.TRANSIENT, f"{operation}: {type(e).__name__}: {e}", operation=operation)

    def close(self) -> None:
        try:
            self.api_client.close()
        except Exception:
            pass
