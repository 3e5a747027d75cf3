"""A small Kubernetes API server on 127.0.0.1 for testing against the real client.

    from scalebridge_kubernetes.fake_server import KubernetesServer
    with KubernetesServer() as k8s:
        k8s.add_deployment("shop", "web", replicas=4, requests={"cpu": "500m"})
        k8s.set_pod_usage("shop", "web", {"cpu": "450m"})
        # point a kubeconfig's ``server:`` (k8s.kubeconfig(path)) or a
        # kubernetes.client.Configuration's host at k8s.url

It speaks the REST shapes of https://kubernetes.io/docs/reference/using-api/api-concepts/
that an autoscaler uses, and is strict where the API server is:

- one global, monotonic ``resourceVersion``; a PUT or PATCH carrying a stale
  ``metadata.resourceVersion`` is refused with 409 Conflict (optimistic
  concurrency, "Resource versions"); ``metadata.generation`` counts spec changes;
- the autoscaling/v1 ``Scale`` subresource of deployments, statefulsets,
  replicasets and of custom resources registered with a scale subresource
  (``specReplicasPath``, ``statusReplicasPath``, ``labelSelectorPath`` of
  https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#scale-subresource);
- ``labelSelector`` (equality and set-based) and ``fieldSelector`` on lists;
- pods, configmaps (at most 1 MiB of data, as the API server validates them),
  autoscaling/v2 HPAs (with the ``status`` their controller writes, :meth:`KubernetesServer.set_hpa_status`),
  coordination.k8s.io/v1 Leases;
- Events: core/v1 (what the HPA controller's ``tools/record`` recorder writes,
  :meth:`KubernetesServer.add_event`) and events.k8s.io/v1, validated on create as the
  API server's ``ValidateEventCreate`` does (pkg/apis/core/validation/events.go:
  ``eventTime``, ``reportingController``, ``reportingInstance``, ``action`` and ``reason``
  required, ``type`` Normal or Warning, ``note`` at most 1 kB, a ``series`` counting from
  2). The real API server keeps both versions in one storage and converts; here they
  are two stores, so an event is listed in the version it was written in;
- ``metrics.k8s.io/v1beta1`` PodMetrics, ``custom.metrics.k8s.io/v1beta2``
  (pods and object metrics) and ``external.metrics.k8s.io/v1beta1``;
- a tiny workload controller keeping a Deployment's, StatefulSet's or
  ReplicaSet's pods equal to ``spec.replicas`` (``auto_reconcile``; off, a
  rollout stays in progress until :meth:`KubernetesServer.reconcile`), removing
  pods on a scale-down in the ReplicaSet controller's order (:func:`pods_to_delete`:
  ``getPodsToDelete``, ``pod-deletion-cost`` included);
- fault injection (:meth:`KubernetesServer.inject`): status codes,
  ``Retry-After``, slow responses;
- every request recorded (:attr:`KubernetesServer.requests`) with its RBAC
  verb, API group, resource and subresource, to check a Role against.
"""
from __future__ import annotations

import copy
import datetime as _dt
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union
from urllib.parse import parse_qs, unquote, urlsplit

from scalebridge.testing.fault_queue import take_fault
from scalebridge.testing.local_server import HttpServer, QuietHandler
from scalebridge.testing.merge_patch import merge_patch
from scalebridge.semantics.kubernetes_release import gate_default, parse_version

__all__ = ["ApiRequest", "Fault", "KubernetesServer", "POD_DELETION_COST", "deletion_cost", "format_time",
           "parse_label_selector", "pods_to_delete"]

WORKLOAD_KINDS = {"deployments": "Deployment", "statefulsets": "StatefulSet", "replicasets": "ReplicaSet"}
#: resources this server stores, by (group, plural): (kind, namespaced)
BUILTIN = {
    ("", "pods"): "Pod",
    ("", "configmaps"): "ConfigMap",
    ("", "services"): "Service",
    ("apps", "deployments"): "Deployment",
    ("apps", "statefulsets"): "StatefulSet",
    ("apps", "replicasets"): "ReplicaSet",
    ("autoscaling", "horizontalpodautoscalers"): "HorizontalPodAutoscaler",
    ("coordination.k8s.io", "leases"): "Lease",
    ("", "events"): "Event",
    ("events.k8s.io", "events"): "Event",
}
VERSIONS = {"": "v1", "apps": "v1", "autoscaling": "v2", "coordination.k8s.io": "v1", "events.k8s.io": "v1"}
#: pkg/apis/core/validation/events.go: the lengths ValidateEventCreate checks
NOTE_LENGTH_LIMIT = 1024
EVENT_FIELD_LIMIT = 128
#: k8s.io/api/core/v1: MaxSecretSize, which bounds a ConfigMap's data too
MAX_CONFIGMAP_BYTES = 1024 * 1024


def format_time(t: float, micro: bool = False) -> str:
    """RFC 3339 in UTC, as the API server writes ``metav1.Time`` (seconds) and
    ``metav1.MicroTime`` (microseconds)."""
    d = _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------- scale-down order

#: the pod annotation the ReplicaSet controller reads for key 4 of its order
#: (k8s.io/api core/v1 annotation_key_constants.go, PodDeletionCost)
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_INT32 = re.compile(r"^(0|-?[1-9][0-9]*)$")


def _parse_time(text: Optional[str]) -> Optional[float]:
    if not text:
        return None
    return _dt.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=_dt.timezone.utc).timestamp()


def _is_ready(pod: dict) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _ready_time(pod: dict) -> Optional[float]:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") == "True":
            return _parse_time(c.get("lastTransitionTime"))
    return None


def deletion_cost(pod: dict) -> int:
    """``helper.GetDeletionCostFromPodAnnotations`` (pkg/apis/core/helper/helpers.go):
    the annotation as an int32; absent or invalid ("+10", "008", out of range) is 0 (the
    controller ignores the error)."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(POD_DELETION_COST)
    if text is None or not _INT32.match(text):
        return 0
    v = int(text)
    return v if -2 ** 31 <= v < 2 ** 31 else 0


def _log_rank(t: float, now: float) -> int:
    """``logarithmicRankDiff``'s rank: ``int64(math.Log2(float64(now.Sub(t))))`` of the
    duration in nanoseconds, -1 when it is not positive."""
    import math
    d = (now - t) * 1e9
    return int(math.log2(d)) if d > 0 else -1


def _before(a: dict, b: dict, rank_a: int, rank_b: int, now: float) -> bool:
    """``ActivePodsWithRanks.Less`` (kubernetes/kubernetes pkg/controller/controller_utils.go,
    gates PodDeletionCost and LogarithmicScaleDown on, their defaults since 1.22): True
    when ``a`` is deleted before ``b``."""
    na, nb = (a.get("spec") or {}).get("nodeName") or "", (b.get("spec") or {}).get("nodeName") or ""
    if na != nb and (not na or not nb):                     # 1. unassigned < assigned
        return not na
    pa = _PHASE_ORDINAL.get((a.get("status") or {}).get("phase"), 0)
    pb = _PHASE_ORDINAL.get((b.get("status") or {}).get("phase"), 0)
    if pa != pb:                                              # 2. Pending < Unknown < Running
        return pa < pb
    ra, rb = _is_ready(a), _is_ready(b)
    if ra != rb:                                              # 3. not ready < ready
        return not ra
    ca, cb = deletion_cost(a), deletion_cost(b)
    if ca != cb:                                              # 4. lower pod-deletion-cost first
        return ca < cb
    if rank_a != rank_b:                                      # 5. doubled up < not doubled up
        return rank_a > rank_b
    if ra and rb:                                             # 6. been ready for less time first
        ta, tb = _ready_time(a), _ready_time(b)
        if ta != tb:
            if ta is None or tb is None:                     # afterOrZero: a zero time is the newest
                return ta is None
            diff = _log_rank(ta, now) - _log_rank(tb, now)
            if diff == 0:
                return str(a["metadata"].get("uid")) < str(b["metadata"].get("uid"))
            return diff < 0

    def restarts(p: dict) -> int:
        return max((c.get("restartCount", 0) for c in (p.get("status") or {}).get("containerStatuses") or []),
                   default=0)
    if restarts(a) != restarts(b):                            # 7. more restarts first
        return restarts(a) > restarts(b)
    ta = _parse_time(a["metadata"].get("creationTimestamp"))
    tb = _parse_time(b["metadata"].get("creationTimestamp"))
    if ta != tb:                                              # 8. newer (or no) creation time first
        return ta is None or (tb is not None and ta > tb)
    return False


def pods_to_delete(pods: list[dict], related: list[dict], diff: int, now: float) -> list[dict]:
    """``getPodsToDelete`` (kubernetes/kubernetes pkg/controller/replicaset/replica_set.go):
    the ``diff`` pods a ReplicaSet removes on a scale-down, in
    :func:`_before`'s order, each ranked by the active ``related`` pods on its node
    (``getPodsRankedByRelatedPodsOnSameNode``); not sorted when all of them go."""
    import functools
    if diff <= 0:
        return []
    if diff >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for p in related:
        node = (p.get("spec") or {}).get("nodeName")
        if node and not p["metadata"].get("deletionTimestamp"):
            on_node[node] = on_node.get(node, 0) + 1
    ranks = {id(p): on_node.get((p.get("spec") or {}).get("nodeName") or "", 0) for p in pods}

    def cmp(a, b):
        if _before(a, b, ranks[id(a)], ranks[id(b)], now):
            return -1
        if _before(b, a, ranks[id(b)], ranks[id(a)], now):
            return 1
        return 0
    return sorted(pods, key=functools.cmp_to_key(cmp))[:diff]


# ----------------------------------------------------------------------------- selectors

_SET_TERM = re.compile(r"^\s*(!?)([A-Za-z0-9._/-]+)\s*(?:(in|notin)\s*\(([^)]*)\)|(==|=|!=)\s*([A-Za-z0-9._-]*))?\s*$")


def _split_terms(text: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        terms.append(cur)
    return terms


def parse_label_selector(text: Optional[str]) -> Callable[[dict], bool]:
    """A matcher for the label selector string syntax
    (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors):
    ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``.
    Raises ValueError on a malformed selector (the API server answers 400)."""
    if not text:
        return lambda labels: True
    tests = []
    for term in _split_terms(text):
        m = _SET_TERM.match(term)
        if not m:
            raise ValueError(f"unable to parse requirement: {term.strip()!r}")
        neg, key, setop, setvals, op, val = m.groups()
        if setop:
            values = {v.strip() for v in setvals.split(",") if v.strip()}
            if setop == "in":
                tests.append(lambda l, k=key, vs=values: l.get(k) in vs)
            else:
                tests.append(lambda l, k=key, vs=values: l.get(k) not in vs)
        elif op:
            if neg:
                raise ValueError(f"unable to parse requirement: {term.strip()!r}")
            if op == "!=":
                tests.append(lambda l, k=key, v=val: l.get(k) != v)
            else:
                tests.append(lambda l, k=key, v=val: k in l and l[k] == v)
        elif neg:
            tests.append(lambda l, k=key: k not in l)
        else:
            tests.append(lambda l, k=key: k in l)
    return lambda labels: all(t(labels or {}) for t in tests)


def selector_string(selector: Optional[dict]) -> str:
    """A ``LabelSelector`` (matchLabels, matchExpressions) as the string the
    Scale subresource's ``status.selector`` carries (``metav1.FormatLabelSelector``)."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        op, key, values = e["operator"], e["key"], sorted(e.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def _dig(obj: Any, path: str) -> Any:
    for part in path.strip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _field_matcher(text: Optional[str]) -> Callable[[dict], bool]:
    """``fieldSelector``: ``path=value``, ``path==value``, ``path!=value``, comma-joined."""
    if not text:
        return lambda obj: True
    tests = []
    for term in text.split(","):
        m = re.match(r"^\s*([A-Za-z0-9.]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not m:
            raise ValueError(f"invalid field selector: {term!r}")
        path, op, val = m.groups()

        def t(obj, path=path, op=op, val=val):
            got = _dig(obj, path)
            got = "" if got is None else str(got)
            return got != val if op == "!=" else got == val
        tests.append(t)
    return lambda obj: all(t(obj) for t in tests)


def _json_patch(target: dict, ops: list) -> dict:
    """RFC 6902 ``add``/``replace``/``remove``/``test`` on object paths."""
    out = copy.deepcopy(target)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].lstrip("/").split("/")]
        parent = out
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.setdefault(p, {})
        last = parts[-1]
        kind = op["op"]
        if kind in ("add", "replace"):
            if isinstance(parent, list):
                parent[int(last)] = op["value"]
            else:
                parent[last] = op["value"]
        elif kind == "remove":
            parent.pop(last) if isinstance(parent, dict) else parent.pop(int(last))
        elif kind == "test":
            if (parent[int(last)] if isinstance(parent, list) else parent.get(last)) != op["value"]:
                raise ValueError(f"test operation failed at {op['path']}")
    return out


# ----------------------------------------------------------------------------- records


@dataclass
class ApiRequest:
    """One request as the server saw it, with the RBAC attributes an authorizer
    derives from it (https://kubernetes.io/docs/reference/access-authn-authz/authorization/#determine-the-request-verb)."""

    method: str
    path: str
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: Optional[str]
    name: Optional[str]
    status: int = 0


@dataclass
class Fault:
    """One injected fault: requests matching ``method`` (None: any) and
    ``path_contains`` answer ``status`` (0: answer normally) after sleeping
    ``delay`` seconds, with ``Retry-After`` when ``retry_after`` is set (seconds, or a
    string sent as it is: an HTTP date); ``times`` requests, or every one while
    ``times`` is None."""

    status: int = 0
    method: Optional[str] = None
    path_contains: Optional[str] = None
    retry_after: Optional[Union[float, str]] = None
    delay: float = 0.0
    times: Optional[int] = 1
    message: str = "injected fault"

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and \
            (self.path_contains is None or self.path_contains in path)


@dataclass
class _CustomKind:
    group: str
    version: str
    plural: str
    kind: str
    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: Optional[str] = ".status.selector"


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, headers: Optional[dict] = None,
                 details: Optional[dict] = None):
        self.code, self.reason, self.message = code, reason, message
        self.headers = headers or {}
        self.details = details
        super().__init__(message)

    def status(self) -> dict:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
           422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
           504: "Timeout"}


def _validate_event(obj: dict) -> None:
    """pkg/apis/core/validation/events.go ``ValidateEventCreate`` for events.k8s.io/v1."""
    name = (obj.get("metadata") or {}).get("name", "")
    problems = []
    if not obj.get("eventTime"):
        problems.append("eventTime: Required value")
    for key in ("reportingController", "reportingInstance", "action", "reason"):
        v = obj.get(key)
        if not v:
            problems.append(f"{key}: Required value")
        elif len(str(v)) > EVENT_FIELD_LIMIT:
            problems.append(f"{key}: Too long: may not be more than {EVENT_FIELD_LIMIT} bytes")
    if obj.get("type") not in ("Normal", "Warning"):
        problems.append(f"type: Unsupported value: {obj.get('type')!r}: supported values: \"Normal\", \"Warning\"")
    if len(str(obj.get("note") or "").encode()) > NOTE_LENGTH_LIMIT:
        problems.append(f"note: Too long: may not be more than {NOTE_LENGTH_LIMIT} bytes")
    series = obj.get("series")
    if series is not None and (not isinstance(series.get("count"), int) or series["count"] < 2):
        problems.append("series.count: Invalid value: should be at least 2")
    if not (obj.get("regarding") or {}).get("name"):
        problems.append("regarding.name: Required value")
    if problems:
        raise ApiError(422, "Invalid", f'Event.events.k8s.io "{name}" is invalid: ' + ", ".join(problems),
                       details={"name": name, "group": "events.k8s.io", "kind": "Event"})


# ----------------------------------------------------------------------------- the server


class KubernetesServer(HttpServer):
    """The fake API server. ``clock`` gives the server's time (creation and
    start timestamps, metric timestamps); ``token`` when set is required as
    ``Authorization: Bearer <token>`` (401 otherwise)."""

    thread_name = "kubernetes-server"

    def __init__(self, *, clock: Callable[[], float] = time.time, token: Optional[str] = None,
                 auto_reconcile: bool = True, host: str = "127.0.0.1", port: int = 0,
                 git_version: str = "v1.37.0", feature_gates: Optional[dict[str, bool]] = None):
        self.clock = clock
        #: what ``GET /version`` says (k8s.io/apimachinery/pkg/version.Info), and the
        #: kube-apiserver's --feature-gates its HPA validation reads (unset: the release's defaults)
        self.git_version = git_version
        self.feature_gates = dict(feature_gates or {})
        self.token = token
        self.auto_reconcile = auto_reconcile
        self.lock = threading.RLock()
        self.rv = 0
        #: (group, plural, namespace) -> name -> object
        self.store: dict[tuple[str, str, str], dict[str, dict]] = {}
        self.custom_kinds: dict[tuple[str, str], _CustomKind] = {}
        #: (namespace, pod) -> (containers {name: usage}, timestamp or None, window seconds)
        self.pod_metrics: dict[tuple[str, str], tuple[dict, Optional[float], float]] = {}
        #: (namespace, workload name) -> per-container usage given to its pods
        self.workload_usage: dict[tuple[str, str], dict] = {}
        #: (namespace, metric) -> pod -> (value, the metric's labels): pods custom metrics
        self.custom_pod_metrics: dict[tuple[str, str], dict[str, tuple[str, dict]]] = {}
        #: (namespace, resource, name, metric) -> value
        self.object_metrics: dict[tuple[str, str, str, str], str] = {}
        #: (namespace, metric) -> [(labels, value)]
        self.external_metrics: dict[tuple[str, str], list[tuple[dict, str]]] = {}
        self.faults: list[Fault] = []
        self._chaos: Optional[tuple] = None
        self.requests: list[ApiRequest] = []
        #: seconds every request waits before it is answered (a real API server's round trip)
        self.latency = 0.0
        self._bind(self._handler(), host, port)

    def kubeconfig(self, path, *, context: str = "test", namespace: str = "default") -> str:
        """Write a kubeconfig pointing at this server (token auth when ``token`` is
        set) and return its path."""
        import yaml
        user: dict = {"token": self.token} if self.token else {}
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": context,
               "clusters": [{"name": context, "cluster": {"server": self.url}}],
               "users": [{"name": context, "user": user}],
               "contexts": [{"name": context, "context": {"cluster": context, "user": context,
                                                          "namespace": namespace}}]}
        with open(path, "w") as f:
            yaml.safe_dump(doc, f)
        return str(path)

    def reset(self) -> None:
        """Forget every object, metric, fault and recorded request."""
        with self.lock:
            self.store.clear()
            self.pod_metrics.clear()
            self.workload_usage.clear()
            self.custom_pod_metrics.clear()
            self.object_metrics.clear()
            self.external_metrics.clear()
            self.faults.clear()
            self._chaos = None
            self.requests.clear()

    # -- faults ------------------------------------------------------------------------
    def inject(self, status: int = 0, *, method: Optional[str] = None, path_contains: Optional[str] = None,
               retry_after: Optional[Union[float, str]] = None, delay: float = 0.0, times: Optional[int] = 1,
               message: str = "injected fault") -> Fault:
        """Queue a fault (see :class:`Fault`); the first matching fault answers."""
        f = Fault(status, method, path_contains, retry_after, delay, times, message)
        with self.lock:
            self.faults.append(f)
        return f

    def random_faults(self, rate: float, statuses: tuple[int, ...] = (500, 503, 429), *, seed: int = 0,
                      path_contains: Optional[str] = None) -> None:
        """Fail a fraction ``rate`` of the requests (matching ``path_contains``) with
        one of ``statuses``, from a seeded generator; ``rate`` 0 stops it."""
        import random
        with self.lock:
            self._chaos = (random.Random(seed), rate, tuple(statuses), path_contains) if rate > 0 else None

    def _take_fault(self, method: str, path: str) -> Optional[Fault]:
        with self.lock:
            chaos = self._chaos
            if chaos is not None:
                rng, rate, statuses, where = chaos
                if (where is None or where in path) and rng.random() < rate:
                    return Fault(status=rng.choice(statuses), message="injected random fault")
            return take_fault(self.faults, lambda f: f.matches(method, path))

    # -- objects -----------------------------------------------------------------------
    def _bump(self) -> str:
        self.rv += 1
        return str(self.rv)

    def _bucket(self, group: str, plural: str, namespace: str) -> dict[str, dict]:
        return self.store.setdefault((group, plural, namespace), {})

    def get(self, group: str, plural: str, namespace: str, name: str) -> Optional[dict]:
        """A deep copy of a stored object, or None."""
        with self.lock:
            obj = self.store.get((group, plural, namespace), {}).get(name)
            return copy.deepcopy(obj) if obj is not None else None

    def put(self, group: str, plural: str, namespace: str, obj: dict) -> dict:
        """Store ``obj`` as a write would (new resourceVersion; generation and uid
        kept or set) without any precondition, and run the workload controller."""
        with self.lock:
            stored = self._write(group, plural, namespace, copy.deepcopy(obj))
            return copy.deepcopy(stored)

    def delete(self, group: str, plural: str, namespace: str, name: str) -> None:
        with self.lock:
            self.store.get((group, plural, namespace), {}).pop(name, None)
            if plural == "pods":
                self.pod_metrics.pop((namespace, name), None)

    def _write(self, group: str, plural: str, namespace: str, obj: dict, *, old: Optional[dict] = None) -> dict:
        meta = obj.setdefault("metadata", {})
        name = meta["name"]
        bucket = self._bucket(group, plural, namespace)
        old = old if old is not None else bucket.get(name)
        if group:
            obj.setdefault("apiVersion", f"{group}/{self._version(group, plural)}")
        else:
            obj.setdefault("apiVersion", "v1")
        obj.setdefault("kind", self._kind(group, plural))
        meta["namespace"] = namespace
        if old is None:
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", format_time(self.clock()))
            if "spec" in obj and plural not in ("pods", "leases", "configmaps", "services"):
                meta["generation"] = 1
        else:
            om = old["metadata"]
            meta["uid"] = om.get("uid")
            meta["creationTimestamp"] = om.get("creationTimestamp")
            if "generation" in om:
                meta["generation"] = om["generation"] + (1 if obj.get("spec") != old.get("spec") else 0)
        meta["resourceVersion"] = self._bump()
        bucket[name] = obj
        if self.auto_reconcile and group == "apps" and plural in WORKLOAD_KINDS:
            self._reconcile_one(plural, namespace, name)
        return bucket[name]

    def _version(self, group: str, plural: str) -> str:
        ck = self.custom_kinds.get((group, plural))
        return ck.version if ck else VERSIONS.get(group, "v1")

    def _kind(self, group: str, plural: str) -> str:
        ck = self.custom_kinds.get((group, plural))
        if ck:
            return ck.kind
        return BUILTIN.get((group, plural), plural[:-1].capitalize())

    def list(self, group: str, plural: str, namespace: Optional[str], label_selector: Optional[str] = None,
             field_selector: Optional[str] = None) -> list[dict]:
        """Objects matching the selectors (deep copies), in name order."""
        lab, fld = parse_label_selector(label_selector), _field_matcher(field_selector)
        with self.lock:
            buckets = [b for (g, p, ns), b in self.store.items()
                       if g == group and p == plural and (namespace is None or ns == namespace)]
            out = [o for b in buckets for _, o in sorted(b.items())
                   if lab(o["metadata"].get("labels") or {}) and fld(o)]
            return copy.deepcopy(out)

    # -- builders ----------------------------------------------------------------------
    def add_custom_kind(self, group: str, version: str, plural: str, kind: str, *,
                        spec_replicas_path: str = ".spec.replicas", status_replicas_path: str = ".status.replicas",
                        label_selector_path: Optional[str] = ".status.selector") -> None:
        """Serve a custom resource with a scale subresource (a CRD's
        ``subresources.scale``)."""
        self.custom_kinds[(group, plural)] = _CustomKind(group, version, plural, kind, spec_replicas_path,
                                                         status_replicas_path, label_selector_path)

    @staticmethod
    def pod_template(labels: dict, requests: Optional[dict] = None, containers: Optional[list] = None) -> dict:
        """A pod template with one container ``app`` requesting ``requests`` (or
        ``containers``: a list of ``{"name", "requests"}``)."""
        if containers is None:
            containers = [{"name": "app", "requests": requests}]
        spec_containers = []
        for c in containers:
            sc: dict = {"name": c["name"], "image": c.get("image", "registry.k8s.io/pause:3.10")}
            if c.get("requests") is not None:
                sc["resources"] = {"requests": dict(c["requests"])}
            spec_containers.append(sc)
        return {"metadata": {"labels": dict(labels)}, "spec": {"containers": spec_containers}}

    def add_workload(self, kind: str, namespace: str, name: str, *, replicas: int = 1,
                     requests: Optional[dict] = None, containers: Optional[list] = None,
                     labels: Optional[dict] = None, ready: bool = True) -> dict:
        """A Deployment, StatefulSet or ReplicaSet selecting ``app=<name>``; with
        ``auto_reconcile`` its pods exist at once (running, ready unless ``ready``
        is False)."""
        plural = {"Deployment": "deployments", "StatefulSet": "statefulsets", "ReplicaSet": "replicasets"}[kind]
        labels = labels or {"app": name}
        spec: dict = {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                      "template": self.pod_template(labels, requests, containers)}
        if kind == "StatefulSet":
            spec["serviceName"] = name
        obj = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "labels": dict(labels)},
               "spec": spec, "status": {"replicas": 0, "observedGeneration": 0}}
        if not ready:
            obj["metadata"].setdefault("annotations", {})["scalebridge.test/ready"] = "false"
        return self.put("apps", plural, namespace, obj)

    def add_deployment(self, namespace: str, name: str, **kw) -> dict:
        return self.add_workload("Deployment", namespace, name, **kw)

    def add_statefulset(self, namespace: str, name: str, **kw) -> dict:
        return self.add_workload("StatefulSet", namespace, name, **kw)

    def add_custom(self, group: str, plural: str, namespace: str, name: str, *, replicas: int,
                   labels: Optional[dict] = None, requests: Optional[dict] = None) -> dict:
        """An object of a custom kind (see :meth:`add_custom_kind`) and its pods,
        ``app=<name>``, with ``status.replicas`` and ``status.selector`` filled."""
        ck = self.custom_kinds[(group, plural)]
        labels = labels or {"app": name}
        obj = {"apiVersion": f"{group}/{ck.version}", "kind": ck.kind,
               "metadata": {"name": name}, "spec": {"replicas": replicas},
               "status": {"replicas": replicas, "selector": selector_string({"matchLabels": labels})}}
        stored = self.put(group, plural, namespace, obj)
        for i in range(replicas):
            self.add_pod(namespace, f"{name}-{i}", labels=labels, requests=requests)
        return stored

    def set_hpa_status(self, namespace: str, name: str, status: dict) -> dict:
        """Write an HPA's ``status`` as its controller does (``updateStatus``: the status
        subresource), e.g. ``{"currentReplicas": 4, "desiredReplicas": 6,
        "lastScaleTime": …, "currentMetrics": […], "conditions": […]}``."""
        with self.lock:
            hpa = self._bucket("autoscaling", "horizontalpodautoscalers", namespace).get(name)
            if hpa is None:
                raise KeyError(f"no HPA {namespace}/{name}")
            new = copy.deepcopy(hpa)
            new["status"] = copy.deepcopy(status)
            return copy.deepcopy(self._write("autoscaling", "horizontalpodautoscalers", namespace, new, old=hpa))

    def add_event(self, namespace: str, involved: dict, reason: str, message: str, *, type: str = "Normal",
                  at: Optional[float] = None, component: str = "horizontal-pod-autoscaler", count: int = 1) -> dict:
        """A core/v1 Event as client-go's ``tools/record`` recorder writes it (the HPA
        controller's, ``EventSource{Component: "horizontal-pod-autoscaler"}``): named
        ``<object>.<hex nanoseconds>``, with ``firstTimestamp``/``lastTimestamp`` and
        ``count`` and no ``eventTime``. ``involved``: ``{kind, name, apiVersion}``."""
        t = self.clock() if at is None else at
        obj = {"apiVersion": "v1", "kind": "Event",
               "metadata": {"name": f"{involved['name']}.{int(t * 1e9):x}", "namespace": namespace},
               "involvedObject": {"namespace": namespace, **involved}, "reason": reason, "message": message,
               "type": type, "source": {"component": component}, "count": count,
               "firstTimestamp": format_time(t), "lastTimestamp": format_time(t),
               "reportingComponent": "", "reportingInstance": ""}
        with self.lock:
            return copy.deepcopy(self._write("", "events", namespace, obj))

    def add_pod(self, namespace: str, name: str, *, labels: dict, requests: Optional[dict] = None,
                containers: Optional[list] = None, phase: str = "Running", ready: Optional[bool] = True,
                start_time: Optional[float] = None, ready_transition_time: Optional[float] = None,
                deleting: bool = False, init_containers: Optional[list] = None,
                pod_requests: Optional[dict] = None) -> dict:
        """A pod; ``ready`` None gives it no Ready condition; times default to the
        server clock. ``init_containers`` are ``{"name", "requests", "restart_policy"}``;
        ``pod_requests`` sets pod-level ``spec.resources.requests``."""
        now = self.clock()
        tmpl = self.pod_template(labels, requests, containers)
        spec = tmpl["spec"]
        if init_containers:
            spec["initContainers"] = []
            for c in init_containers:
                ic: dict = {"name": c["name"], "image": "registry.k8s.io/pause:3.10"}
                if c.get("requests") is not None:
                    ic["resources"] = {"requests": dict(c["requests"])}
                if c.get("restart_policy"):
                    ic["restartPolicy"] = c["restart_policy"]
                spec["initContainers"].append(ic)
        if pod_requests is not None:
            spec["resources"] = {"requests": dict(pod_requests)}
        status: dict = {"phase": phase}
        st = now if start_time is None else start_time
        if phase != "Pending" or start_time is not None:
            status["startTime"] = format_time(st)
        if ready is not None:
            rt = st if ready_transition_time is None else ready_transition_time
            status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False",
                                     "lastTransitionTime": format_time(rt)}]
        meta: dict = {"name": name, "labels": dict(labels)}
        if deleting:
            meta["deletionTimestamp"] = format_time(now)
            meta["finalizers"] = ["scalebridge.test/hold"]
        return self.put("", "pods", namespace, {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                                                 "spec": spec, "status": status})

    # -- metrics -----------------------------------------------------------------------
    def set_pod_metrics(self, namespace: str, pod: str, containers: dict, *, timestamp: Optional[float] = None,
                        window: float = 30.0) -> None:
        """PodMetrics of one pod: ``{container: {resource: quantity}}``; ``timestamp``
        defaults to the server clock at read time; ``window`` in seconds."""
        with self.lock:
            self.pod_metrics[(namespace, pod)] = (copy.deepcopy(containers), timestamp, window)

    def set_pod_usage(self, namespace: str, workload: str, usage: dict, *, container: str = "app") -> None:
        """Every pod of ``workload`` (its pods' ``app`` label, now and as the
        controller creates them) uses ``usage`` in ``container``."""
        with self.lock:
            self.workload_usage[(namespace, workload)] = {container: dict(usage)}
            for p in self.list("", "pods", namespace, f"app={workload}"):
                self.set_pod_metrics(namespace, p["metadata"]["name"], {container: dict(usage)})

    def set_custom_pod_metric(self, namespace: str, metric: str, values: dict[str, str],
                              labels: Optional[dict] = None) -> None:
        """A ``pods`` custom metric: pod name → value; ``labels`` are the metric's
        own labels (matched by ``metricLabelSelector``)."""
        with self.lock:
            bucket = self.custom_pod_metrics.setdefault((namespace, metric), {})
            for pod, v in values.items():
                bucket[pod] = (str(v), dict(labels or {}))

    def set_object_metric(self, namespace: str, resource: str, name: str, metric: str, value) -> None:
        """An ``object`` custom metric describing ``resource/name`` (plural resource)."""
        with self.lock:
            self.object_metrics[(namespace, resource, name, metric)] = str(value)

    def set_external_metric(self, namespace: str, metric: str, series: list[tuple[dict, Any]]) -> None:
        """An external metric: ``[(labels, value), …]``."""
        with self.lock:
            self.external_metrics[(namespace, metric)] = [(dict(l), str(v)) for l, v in series]

    # -- the workload controller -------------------------------------------------------
    def reconcile(self) -> None:
        """Bring every workload's pods to ``spec.replicas`` and its status up to
        date (what the Deployment/StatefulSet/ReplicaSet controllers do)."""
        with self.lock:
            for (g, p, ns), bucket in list(self.store.items()):
                if g == "apps" and p in WORKLOAD_KINDS:
                    for name in list(bucket):
                        self._reconcile_one(p, ns, name)

    def _reconcile_one(self, plural: str, namespace: str, name: str) -> None:
        obj = self._bucket("apps", plural, namespace).get(name)
        if obj is None:
            return
        spec = obj["spec"]
        want = int(spec.get("replicas", 1))
        labels = (spec.get("template", {}).get("metadata") or {}).get("labels") or {}
        sel = selector_string(spec.get("selector"))
        pods = [p for p in self.list("", "pods", namespace, sel) if not p["metadata"].get("deletionTimestamp")]
        ready = (obj["metadata"].get("annotations") or {}).get("scalebridge.test/ready") != "false"
        names = {p["metadata"]["name"] for p in pods}
        i = 0
        while len(pods) < want:
            pname = f"{name}-{i}" if plural == "statefulsets" else f"{name}-{uuid.uuid4().hex[:5]}"
            i += 1
            if pname in names:
                continue
            containers = [{"name": c["name"], "requests": (c.get("resources") or {}).get("requests")}
                          for c in spec["template"]["spec"]["containers"]]
            pod = self.add_pod(namespace, pname, labels=labels, containers=containers, ready=ready)
            usage = self.workload_usage.get((namespace, name))
            if usage:
                self.pod_metrics[(namespace, pname)] = (copy.deepcopy(usage), None, 30.0)
            pods.append(pod)
            names.add(pname)
        if plural == "statefulsets":     # the highest ordinal first, whatever the pods' deletion cost
            def ordinal(p):
                tail = p["metadata"]["name"].rpartition("-")[2]
                return int(tail) if tail.isdigit() else -1
            leaving = sorted(pods, key=ordinal, reverse=True)[:max(0, len(pods) - want)]
        else:
            leaving = pods_to_delete(pods, pods, len(pods) - want, self.clock())
        for p in leaving:
            self.delete("", "pods", namespace, p["metadata"]["name"])
        status = obj.setdefault("status", {})
        status.update({"replicas": want, "readyReplicas": want if ready else 0,
                       "observedGeneration": obj["metadata"].get("generation", 1)})
        if plural == "deployments":
            status.update({"updatedReplicas": want, "availableReplicas": want if ready else 0})
        obj["metadata"]["resourceVersion"] = self._bump()

    # -- scale subresource -------------------------------------------------------------
    def _scale_paths(self, group: str, plural: str) -> _CustomKind:
        if group == "apps" and plural in WORKLOAD_KINDS:
            return _CustomKind("apps", "v1", plural, WORKLOAD_KINDS[plural], ".spec.replicas", ".status.replicas",
                               None)
        ck = self.custom_kinds.get((group, plural))
        if ck is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return ck

    def _scale_of(self, group: str, plural: str, obj: dict) -> dict:
        paths = self._scale_paths(group, plural)
        meta = obj["metadata"]
        if paths.label_selector_path is None:
            selector = selector_string(obj["spec"].get("selector"))
        else:
            selector = _dig(obj, paths.label_selector_path) or ""
        status: dict = {"replicas": int(_dig(obj, paths.status_replicas_path) or 0)}
        if selector:
            status["selector"] = selector
        return {"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"],
                             "resourceVersion": meta["resourceVersion"],
                             "creationTimestamp": meta["creationTimestamp"]},
                "spec": {"replicas": int(_dig(obj, paths.spec_replicas_path) or 0)},
                "status": status}

    # -- HTTP --------------------------------------------------------------------------
    def _handler(self):
        server = self

        class Handler(QuietHandler):
            def _serve(self):
                code, body, headers = server.handle(self.command, self.path, self.read_body(), dict(self.headers))
                self.send(code, json.dumps(body).encode(), "application/json", headers)

            do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _serve

        return Handler

    def handle(self, method: str, raw_path: str, raw_body: bytes, headers: dict) -> tuple[int, dict, dict]:
        """Answer one request: (status, JSON body, extra headers)."""
        parts = urlsplit(raw_path)
        path = parts.path
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        rec = self._describe(method, path)
        with self.lock:
            self.requests.append(rec)
        if self.latency:
            time.sleep(self.latency)
        fault = self._take_fault(method, path)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.status:
                ra = fault.retry_after   # seconds, or a string sent as it is (an HTTP date)
                hdrs = {"Retry-After": ra if isinstance(ra, str) else
                        str(int(ra) if float(ra).is_integer() else ra)} if ra is not None else {}
                rec.status = fault.status
                err = ApiError(fault.status, REASONS.get(fault.status, "InternalError"), fault.message)
                return fault.status, err.status(), hdrs
        try:
            if self.token is not None:
                auth = headers.get("Authorization") or headers.get("authorization") or ""
                if auth != f"Bearer {self.token}":
                    raise ApiError(401, "Unauthorized", "Unauthorized")
            body = json.loads(raw_body) if raw_body else None
            ctype = headers.get("Content-Type") or headers.get("content-type") or ""
            code, out = self._route(method, path, query, body, ctype)
            rec.status = code
            return code, out, {}
        except ApiError as e:
            rec.status = e.code
            return e.code, e.status(), e.headers
        except (ValueError, KeyError, TypeError) as e:
            rec.status = 400
            return 400, ApiError(400, "BadRequest", f"{type(e).__name__}: {e}").status(), {}

    @staticmethod
    def _split(path: str) -> tuple[str, str, list[str]]:
        segs = [unquote(s) for s in path.strip("/").split("/") if s]
        if segs[:1] == ["api"] and len(segs) >= 2:
            return "", segs[1], segs[2:]
        if segs[:1] == ["apis"] and len(segs) >= 3:
            return segs[1], segs[2], segs[3:]
        raise ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")

    def _describe(self, method: str, path: str) -> ApiRequest:
        try:
            group, _version, rest = self._split(path)
        except ApiError:
            return ApiRequest(method, path, method.lower(), "", "", "", None, None)
        namespace = None
        if len(rest) >= 2 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        resource = rest[0] if rest else ""
        name = rest[1] if len(rest) > 1 else None
        sub = "/".join(rest[2:]) if len(rest) > 2 else ""
        if group in ("custom.metrics.k8s.io", "external.metrics.k8s.io"):
            # RBAC for aggregated metrics APIs: the resource is the first path segment
            # after the namespace, the rest is the object and metric
            sub = ""
        if method == "GET":
            verb = "get" if name is not None and group != "external.metrics.k8s.io" else "list"
        else:
            verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method,
                                                                                              method.lower())
        return ApiRequest(method, path, verb, group, resource, sub, namespace, name)

    def _route(self, method: str, path: str, query: dict, body: Any, ctype: str) -> tuple[int, dict]:
        if path.rstrip("/") == "/version":
            if method != "GET":
                raise ApiError(405, "MethodNotAllowed", f"{method} is not supported on /version")
            return 200, self._version_info()
        group, version, rest = self._split(path)
        if group == "metrics.k8s.io":
            return 200, self._pod_metrics(rest, query)
        if group == "custom.metrics.k8s.io":
            return 200, self._custom_metrics(version, rest, query)
        if group == "external.metrics.k8s.io":
            return 200, self._external_metrics(version, rest, query)
        if len(rest) == 1 and method == "GET" and ((group, rest[0]) in BUILTIN or (group, rest[0]) in self.custom_kinds):
            # a list across all namespaces (GET /apis/apps/v1/deployments)
            items = self.list(group, rest[0], None, query.get("labelSelector"), query.get("fieldSelector"))
            return 200, {"apiVersion": f"{group}/{version}" if group else "v1", "kind": f"{self._kind(group, rest[0])}List",
                         "metadata": {"resourceVersion": str(self.rv)}, "items": items}
        if len(rest) < 3 or rest[0] != "namespaces":
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")
        namespace, plural, tail = rest[1], rest[2], rest[3:]
        if (group, plural) not in BUILTIN and (group, plural) not in self.custom_kinds:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")
        name = tail[0] if tail else None
        sub = tail[1] if len(tail) > 1 else None
        with self.lock:
            if sub == "scale":
                return self._scale(method, group, plural, namespace, name, body, ctype)
            if sub not in (None, "status"):
                raise ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")
            if method == "GET" and name is None:
                items = self.list(group, plural, namespace, query.get("labelSelector"), query.get("fieldSelector"))
                kind = self._kind(group, plural)
                return 200, {"apiVersion": f"{group}/{version}" if group else "v1", "kind": f"{kind}List",
                             "metadata": {"resourceVersion": str(self.rv)}, "items": items}
            if method == "POST" and name is None:
                body.setdefault("metadata", {})
                if not body["metadata"].get("name"):
                    raise ApiError(422, "Invalid", f"{self._kind(group, plural)} is invalid: metadata.name: Required value")
                if body["metadata"]["name"] in self._bucket(group, plural, namespace):
                    raise ApiError(409, "AlreadyExists",
                                   f'{plural}{"." + group if group else ""} "{body["metadata"]["name"]}" already exists',
                                   details={"name": body["metadata"]["name"], "kind": plural})
                body["metadata"].pop("resourceVersion", None)
                self._validate(group, plural, body, None)
                return 201, copy.deepcopy(self._write(group, plural, namespace, body))
            old = self._bucket(group, plural, namespace).get(name)
            if old is None:
                raise ApiError(404, "NotFound", f'{plural}{"." + group if group else ""} "{name}" not found',
                               details={"name": name, "group": group, "kind": plural})
            if method == "GET":
                return 200, copy.deepcopy(old)
            if method == "DELETE":
                self.delete(group, plural, namespace, name)
                return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
            new = self._apply(method, old, body, ctype)
            self._precondition(group, plural, name, old, new)
            if sub == "status":
                merged = copy.deepcopy(old)
                merged["status"] = new.get("status")
                new = merged
            elif "status" in old and group != "coordination.k8s.io":
                new["status"] = copy.deepcopy(old["status"])
            self._validate(group, plural, new, old)
            return 200, copy.deepcopy(self._write(group, plural, namespace, new, old=old))

    @staticmethod
    def _apply(method: str, old: dict, body: Any, ctype: str) -> dict:
        if method == "PUT":
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "the body of a PUT must be an object")
            return copy.deepcopy(body)
        if method == "PATCH":
            if "json-patch" in ctype or isinstance(body, list):
                try:
                    return _json_patch(old, body)
                except (ValueError, KeyError, IndexError) as e:
                    raise ApiError(422, "Invalid", f"the JSON patch could not be applied: {e}")
            # a strategic merge patch without list directives merges as a JSON merge
            # patch on the maps this server stores
            return merge_patch(old, body)
        raise ApiError(405, "MethodNotAllowed", f"{method} is not supported")

    def _conflict(self, group: str, plural: str, name: str) -> ApiError:
        res = f"{plural}.{group}" if group else plural
        return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {res} "{name}": the object has been '
                                         "modified; please apply your changes to the latest version and try again",
                        details={"name": name, "group": group, "kind": plural})

    def _version_info(self) -> dict:
        """``GET /version``: k8s.io/apimachinery/pkg/version.Info."""
        m = re.match(r"v?(\d+)\.(\d+)", self.git_version)
        major, minor = (m.group(1), m.group(2)) if m else ("", "")
        return {"major": major, "minor": minor, "gitVersion": self.git_version, "gitCommit": "0" * 40,
                "gitTreeState": "clean", "buildDate": "2026-12-01T00:00:00Z", "goVersion": "go1.25.4",
                "compiler": "gc", "platform": "linux/amd64"}

    def gate(self, name: str) -> bool:
        """A kube-apiserver feature gate as this server runs: set, or its release's default."""
        if name in self.feature_gates:
            return bool(self.feature_gates[name])
        v = parse_version(self.git_version)
        return bool(gate_default(name, v)) if v is not None else False

    def _validate(self, group: str, plural: str, obj: dict, old: Optional[dict]) -> None:
        if (group, plural) == ("autoscaling", "horizontalpodautoscalers"):
            self._validate_hpa(obj, old)
            return
        if (group, plural) == ("events.k8s.io", "events"):
            _validate_event(obj)   # an events.k8s.io/v1 Event as ValidateEventCreate checks it
            return
        if (group, plural) != ("", "configmaps"):
            return
        # A ConfigMap's ``data`` and ``binaryData`` hold at most 1 MiB, keys included
        # (pkg/apis/core/validation/validation.go, ``ValidateConfigMap``: ``MaxSecretSize``)
        total = sum(len(k) + len(str(v).encode()) for part in ("data", "binaryData")
                    for k, v in (obj.get(part) or {}).items())
        if total > MAX_CONFIGMAP_BYTES:
            name = (obj.get("metadata") or {}).get("name", "")
            raise ApiError(422, "Invalid", f'ConfigMap "{name}" is invalid: []: Too long: may not be more than '
                                           f"{MAX_CONFIGMAP_BYTES} bytes",
                           details={"name": name, "kind": "ConfigMap"})

    def _validate_hpa(self, obj: dict, old: Optional[dict]) -> None:
        """What kube-apiserver does with an autoscaling/v2 HPA that its feature gates decide:

        - pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go, ``dropDisabledFields``:
          without ``HPAConfigurableTolerance`` a ``behavior.scaleUp/scaleDown.tolerance`` is
          dropped, unless the old object already used it;
        - pkg/apis/autoscaling/validation/validation.go, ``validateHorizontalPodAutoscalerSpec``:
          ``minReplicas`` at least 1, or at least 0 with ``HPAScaleToZero``; whatever the gate,
          ``validateMetrics``: "must specify at least one Object or External metric to support
          scaling to zero replicas"; ``maxReplicas`` at least 1 and at least ``minReplicas``."""
        spec = obj.get("spec") or {}
        name = (obj.get("metadata") or {}).get("name", "")
        old_behavior = ((old or {}).get("spec") or {}).get("behavior") or {}
        old_used = any("tolerance" in (old_behavior.get(k) or {}) for k in ("scaleUp", "scaleDown"))
        if not self.gate("HPAConfigurableTolerance") and not old_used:
            for k in ("scaleUp", "scaleDown"):
                rules = (spec.get("behavior") or {}).get(k)
                if isinstance(rules, dict):
                    rules.pop("tolerance", None)
        problems = []
        # validationOptionsForHorizontalPodAutoscaler (strategy.go): an update of an HPA that
        # already had minReplicas 0 keeps the lower bound 0 whatever the gate (ratcheting)
        old_zero = ((old or {}).get("spec") or {}).get("minReplicas") == 0
        lowest = 0 if self.gate("HPAScaleToZero") or old_zero else 1
        min_r = spec.get("minReplicas", 1)
        max_r = spec.get("maxReplicas")
        if isinstance(min_r, int) and min_r < lowest:
            problems.append(f"spec.minReplicas: Invalid value: {min_r}: must be greater than or equal to {lowest}")
        if not isinstance(max_r, int) or max_r < 1:
            problems.append(f"spec.maxReplicas: Invalid value: {max_r!r}: must be greater than 0")
        elif isinstance(min_r, int) and max_r < min_r:
            problems.append(f"spec.maxReplicas: Invalid value: {max_r}: must be greater than or equal to "
                            "`minReplicas`")
        if min_r == 0 and not any(
                (m or {}).get("type") in ("Object", "External") for m in spec.get("metrics") or []):
            problems.append("spec.metrics: Forbidden: must specify at least one Object or External metric to "
                            "support scaling to zero replicas")
        if problems:
            raise ApiError(422, "Invalid", f'HorizontalPodAutoscaler.autoscaling "{name}" is invalid: '
                                           + ", ".join(problems),
                           details={"name": name, "group": "autoscaling", "kind": "HorizontalPodAutoscaler"})

    def _precondition(self, group: str, plural: str, name: str, old: dict, new: dict) -> None:
        rv = (new.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise self._conflict(group, plural, name)
        if (new.get("metadata") or {}).get("name", name) != name:
            raise ApiError(400, "BadRequest", "the name of the object does not match the name on the URL")

    def _scale(self, method: str, group: str, plural: str, namespace: str, name: Optional[str], body: Any,
               ctype: str) -> tuple[int, dict]:
        paths = self._scale_paths(group, plural)
        obj = self._bucket(group, plural, namespace).get(name or "")
        if obj is None:
            raise ApiError(404, "NotFound", f'{plural}.{group} "{name}" not found',
                           details={"name": name, "group": group, "kind": plural})
        scale = self._scale_of(group, plural, obj)
        if method == "GET":
            return 200, scale
        if method not in ("PUT", "PATCH"):
            raise ApiError(405, "MethodNotAllowed", f"{method} is not supported on scale")
        new = self._apply(method, scale, body, ctype)
        rv = (new.get("metadata") or {}).get("resourceVersion")
        if rv and rv != obj["metadata"]["resourceVersion"]:
            raise self._conflict(group, plural, name)
        replicas = (new.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise ApiError(422, "Invalid", f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                                           f"{replicas!r}: must be greater than or equal to 0")
        updated = copy.deepcopy(obj)
        target = updated
        parts = paths.spec_replicas_path.strip(".").split(".")
        for p in parts[:-1]:
            target = target.setdefault(p, {})
        target[parts[-1]] = replicas
        stored = self._write(group, plural, namespace, updated, old=obj)
        return 200, self._scale_of(group, plural, stored)

    # -- metrics APIs ------------------------------------------------------------------
    def _pod_metrics(self, rest: list[str], query: dict) -> dict:
        if rest == ["pods"]:    # every namespace's
            namespace = None
        elif len(rest) < 3 or rest[0] != "namespaces" or rest[2] != "pods":
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        else:
            namespace = rest[1]
        pods = self.list("", "pods", namespace, query.get("labelSelector"))
        if len(rest) > 3:
            pods = [p for p in pods if p["metadata"]["name"] == rest[3]]
        items = []
        now = self.clock()
        with self.lock:
            for p in pods:
                m = self.pod_metrics.get((p["metadata"]["namespace"], p["metadata"]["name"]))
                if m is None:
                    continue
                containers, ts, window = m
                items.append({"metadata": {"name": p["metadata"]["name"], "namespace": p["metadata"]["namespace"],
                                           "labels": p["metadata"].get("labels") or {},
                                           "creationTimestamp": format_time(now)},
                              "timestamp": format_time(now if ts is None else ts),
                              "window": f"{window:g}s",
                              "containers": [{"name": c, "usage": u} for c, u in containers.items()]})
        if len(rest) > 3:
            if not items:
                raise ApiError(404, "NotFound", f'podmetrics.metrics.k8s.io "{rest[3]}" not found')
            return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics", **items[0]}
        return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetricsList", "metadata": {}, "items": items}

    def _custom_metrics(self, version: str, rest: list[str], query: dict) -> dict:
        # /namespaces/{ns}/pods/*/{metric}  or  /namespaces/{ns}/{resource}/{name}/{metric}
        if len(rest) != 5 or rest[0] != "namespaces":
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        namespace, resource, name, metric = rest[1], rest[2], rest[3], rest[4]
        metric_sel = parse_label_selector(query.get("metricLabelSelector"))
        now = format_time(self.clock())
        items = []
        if resource == "pods" and name == "*":
            pods = {p["metadata"]["name"] for p in self.list("", "pods", namespace, query.get("labelSelector"))}
            with self.lock:
                bucket = self.custom_pod_metrics.get((namespace, metric), {})
                for pod, (value, labels) in sorted(bucket.items()):
                    if pod in pods and metric_sel(labels):
                        items.append({"describedObject": {"kind": "Pod", "namespace": namespace, "name": pod,
                                                          "apiVersion": "/v1"},
                                      "metric": {"name": metric}, "timestamp": now, "windowSeconds": 60,
                                      "value": value})
        else:
            with self.lock:
                value = self.object_metrics.get((namespace, resource, name, metric))
            if value is None:
                raise ApiError(404, "NotFound", f'the server could not find the metric {metric} for {resource} {name}')
            items.append({"describedObject": {"kind": resource, "namespace": namespace, "name": name},
                          "metric": {"name": metric}, "timestamp": now, "value": value})
        return {"kind": "MetricValueList", "apiVersion": f"custom.metrics.k8s.io/{version}", "metadata": {},
                "items": items}

    def _external_metrics(self, version: str, rest: list[str], query: dict) -> dict:
        if len(rest) != 3 or rest[0] != "namespaces":
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        namespace, metric = rest[1], rest[2]
        sel = parse_label_selector(query.get("labelSelector"))
        now = format_time(self.clock())
        with self.lock:
            series = self.external_metrics.get((namespace, metric), [])
            items = [{"metricName": metric, "metricLabels": labels, "timestamp": now, "value": value}
                     for labels, value in series if sel(labels)]
        return {"kind": "ExternalMetricValueList", "apiVersion": f"external.metrics.k8s.io/{version}",
                "metadata": {}, "items": items}


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m scalebridge_kubernetes.fake_server [--port N]``: serve until
    interrupted (an empty cluster; a kubeconfig is written with ``--kubeconfig``)."""
    import argparse
    p = argparse.ArgumentParser(prog="python -m scalebridge_kubernetes.fake_server")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--kubeconfig")
    a = p.parse_args(argv)
    srv = KubernetesServer(port=a.port).start()
    if a.kubeconfig:
        srv.kubeconfig(a.kubeconfig)
    print(f"serving the Kubernetes test API on {srv.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
