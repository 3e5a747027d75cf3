"""The ``kubernetes`` provider: scale a Deployment, StatefulSet, ReplicaSet or any
custom resource with a ``scale`` subresource through the API server.

What one sync reads and writes, as the HPA controller does
(pkg/controller/podautoscaler/horizontal.go, ``reconcileAutoscaler``):

- the size through the autoscaling/v1 ``Scale`` subresource only (``GET …/scale``),
  written back with ``PUT …/scale`` carrying the scale's ``resourceVersion``
  (optimistic concurrency,
  https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions).
  A 409 re-reads the scale: if ``spec.replicas`` moved underneath, the newer size
  is kept and the write reported as a ``conflict``; otherwise the write is retried
  once with the new resourceVersion. Never a blind overwrite;
- the members: the pods matching the scale's ``status.selector`` (see
  :mod:`.members`);
- never in flight: a write is the absolute ``spec.replicas``, which the workload's
  controller carries out whatever it is doing, as the HPA controller writes it without
  waiting (``reconcileAutoscaler`` reads no rollout status). During a rollout the
  Deployment controller spreads a new ``spec.replicas`` across the old and new
  ReplicaSets in proportion (``getProportion``,
  https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#proportional-scaling):
  a resize is safe, and a scale-up during a 20-minute deploy is answered. The rollout
  is reported (``Observation.rollout``, the decision's ``observations.rollout``) while
  old-version pods remain — a Deployment's ``status.updatedReplicas`` below
  ``status.replicas``, a StatefulSet's ``currentRevision`` not its ``updateRevision``
  (https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#deployment-status);
- a scale-in of chosen members (``scale_in``, ``Capability.DELETE_MEMBERS``): the
  chosen pods' ``controller.kubernetes.io/pod-deletion-cost`` is lowered, then
  ``spec.replicas``: the ReplicaSet controller deletes the pods with the lowest
  cost first once unscheduled, pending and not-ready pods are gone
  (``getPodsToDelete``,
  https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#pod-deletion-cost).
  It needs ``patch`` on pods. A StatefulSet removes its highest ordinals whatever the
  cost: scale-in selection does not apply to it (it sets the size);
- refused: an autoscaling/v2 HorizontalPodAutoscaler whose ``scaleTargetRef``
  is the same workload (the HPA would fight every write);
- in shadow mode, that HPA's decision (``native_decision``: its ``status`` and its
  ``SuccessfulRescale`` Events, :mod:`.events`);
- scalebridge's own scale actions recorded as events.k8s.io/v1 Events on the workload,
  in the HPA's words, aggregated into series and rate-limited as client-go's recorders
  do (``record_event``, :mod:`.events`).
"""
from __future__ import annotations

import os
import threading
from urllib.parse import quote
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Mapping, Optional, Sequence

from scalebridge.protocol import Member, MetricObservation, Rollout
from scalebridge.providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider,
                                   ProviderError, RefError, SizeChange, Target)

from .batch import LabelIndex, ModelView, selector_dict, selector_matcher
from .members import pod_member, requests_and_errors
from .metrics import MetricsReader

#: built-in scalable kinds: kind -> (apiVersion, plural, typed read/replace scale, typed read)
BUILTIN_KINDS = {
    "Deployment": ("apps/v1", "deployments", "namespaced_deployment"),
    "StatefulSet": ("apps/v1", "statefulsets", "namespaced_stateful_set"),
    "ReplicaSet": ("apps/v1", "replicasets", "namespaced_replica_set"),
}
REF_KEYS = frozenset({"kind", "api_version", "resource", "namespace", "name"})
#: the annotation the ReplicaSet controller orders a scale-down by (lower first,
#: an int32, 0 when absent: https://kubernetes.io/docs/reference/labels-annotations-taints/#pod-deletion-cost)
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
#: marks a cost this provider set ("true"), so that it can take it back
DELETION_COST_OWNER = "scalebridge.io/pod-deletion-cost-set"
#: the cost of the first pod chosen (the next ones +1 each): below any cost a user
#: sets by hand in practice, so the chosen pods go first
DELETION_COST_BASE = -2_000_000_000
OPTION_KEYS = ("kubeconfig", "context", "in_cluster", "qps", "burst", "request_timeout_seconds", "list_scope")
LIST_SCOPES = ("namespace", "cluster", "target")


def _ref_str(ref: Mapping[str, Any], key: str, default: Optional[str] = None) -> Optional[str]:
    value = ref.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise RefError(f"ref.{key}", f"a non-empty string, not {value!r}")
    return value


class KubernetesProvider(Provider):
    """``providers: {kubernetes: {kubeconfig, context, in_cluster, qps, burst, list_scope}}``.

    ``qps``/``burst`` are the client's rate limit (client-go's ``--kube-api-qps``
    5 and ``--kube-api-burst`` 10 by default); ``request_timeout_seconds`` bounds
    every call (default 15 s to read, 5 s to connect). ``list_scope``: how one sync
    reads its targets (:mod:`.batch`): ``namespace`` (default) lists each
    namespace's workloads, pods and pod metrics once; ``cluster`` lists each once for
    the whole cluster (needs cluster-wide list permission); ``target``: no lists, each
    target reads its own scale, workload and pods. A list the server throttles (or
    fails, 5xx) fails every target it stood for, with the server's Retry-After."""

    name: ClassVar[str] = "kubernetes"
    semantics: ClassVar[str] = "kubernetes"
    capabilities: ClassVar[frozenset] = frozenset({Capability.METRICS, Capability.TRANSLATE,
                                                   Capability.NATIVE_DECISIONS, Capability.EVENTS,
                                                   Capability.DELETE_MEMBERS})
    #: writes: client-go's DefaultQPS and DefaultBurst (k8s.io/client-go/rest/config.go), so that a
    #: write with no room is ``paced`` and coalesces with the next decision instead of queueing.
    #: Reads are paced by the client's own token bucket, per API call, blocking as client-go's
    #: flowcontrol does (one target sync is several calls): the controller does not count them
    #: again per target, which would report every target past the 10th of a ``--once`` as paced.
    pacing = Pacing(writes_per_second=5.0, write_burst=10, reads_per_second=1e9, read_burst=10 ** 9)
    ref_keys: ClassVar[frozenset[str]] = frozenset({"kind", "name"})
    path_options: ClassVar[frozenset[str]] = frozenset({"kubeconfig"})

    def __init__(self, kubeconfig: Optional[str] = None, context: Optional[str] = None,
                 in_cluster: Optional[bool] = None, qps: Optional[float] = None, burst: Optional[int] = None,
                 request_timeout_seconds: Optional[float] = None, list_scope: str = "namespace", **unknown: Any):
        if unknown:
            key = sorted(unknown)[0]
            raise RefError(key, f"not an option of the kubernetes provider ({', '.join(OPTION_KEYS)})")
        for key, value in (("kubeconfig", kubeconfig), ("context", context)):
            if value is not None and (not isinstance(value, str) or not value):
                raise RefError(key, f"a non-empty string, not {value!r}")
        if kubeconfig is not None and not os.path.exists(os.path.expanduser(kubeconfig)):
            raise RefError("kubeconfig", f"no such file: {os.path.expanduser(kubeconfig)}")
        if in_cluster is not None and not isinstance(in_cluster, bool):
            raise RefError("in_cluster", f"true or false, not {in_cluster!r}")
        for key, value in (("qps", qps), ("burst", burst), ("request_timeout_seconds", request_timeout_seconds)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise RefError(key, f"a positive number, not {value!r}")
        if list_scope not in LIST_SCOPES:
            raise RefError("list_scope", f"namespace, cluster or target, not {list_scope!r}")
        self.list_scope = list_scope
        self.options = {"kubeconfig": kubeconfig, "context": context, "in_cluster": in_cluster}
        from .client import DEFAULT_BURST, DEFAULT_QPS, DEFAULT_TIMEOUT
        self.qps = float(qps) if qps is not None else DEFAULT_QPS
        self.burst = int(burst) if burst is not None else DEFAULT_BURST
        self.timeout = (DEFAULT_TIMEOUT[0], float(request_timeout_seconds)) if request_timeout_seconds \
            else DEFAULT_TIMEOUT
        if qps is not None or burst is not None:
            self.pacing = Pacing(writes_per_second=self.qps, write_burst=self.burst,
                                 reads_per_second=type(self).pacing.reads_per_second,
                                 read_burst=type(self).pacing.read_burst)
        self._client = None
        self._control = None
        self._elector = None
        self._recorder = None
        self._sync = 0                                   # batched observes so far
        self._hpas: dict[str, tuple[int, Any]] = {}      # namespace -> (sync, its HPA list)
        self._hpa_lock = threading.Lock()
        self._hpa_locks: dict[str, threading.Lock] = {}

    @property
    def client(self):
        """The API session, made on first use (the SDK is imported then)."""
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def _new_client(self):
        from .client import KubeClient
        try:
            return KubeClient(qps=self.qps, burst=self.burst, timeout=self.timeout, **self.options)
        except RefError as e:   # a kubeconfig that does not load, a context it lacks
            raise ProviderError(ErrorKind.INVALID, f"the kubernetes provider's {e.key}: {e.message}") from None

    def target(self, ref: Mapping[str, Any]) -> "KubernetesTarget":
        if not isinstance(ref, Mapping):
            raise RefError("ref", "a mapping {kind, name, namespace, api_version, resource}")
        unknown = set(ref) - REF_KEYS
        if unknown:
            key = sorted(unknown)[0]
            raise RefError(f"ref.{key}", f"not a kubernetes ref key ({', '.join(sorted(REF_KEYS))})")
        kind = _ref_str(ref, "kind")
        name = _ref_str(ref, "name")
        if kind is None:
            raise RefError("ref.kind", "required: Deployment, StatefulSet, ReplicaSet, or a kind with a scale "
                                       "subresource (with api_version and resource)")
        if name is None:
            raise RefError("ref.name", "required: the workload's name")
        namespace = _ref_str(ref, "namespace", "default")
        api_version = _ref_str(ref, "api_version")
        resource = _ref_str(ref, "resource")
        if kind in BUILTIN_KINDS:
            want, plural, _ = BUILTIN_KINDS[kind]
            if api_version is not None and api_version != want:
                raise RefError("ref.api_version", f"{kind} is served as {want}, not {api_version}")
            if resource is not None and resource != plural:
                raise RefError("ref.resource", f"{kind}'s resource is {plural}, not {resource}")
            api_version, resource = want, plural
        else:
            if api_version is None or "/" not in api_version:
                raise RefError("ref.api_version", f"a custom kind {kind} needs its group/version "
                                                  "(e.g. example.com/v1)")
            if resource is None:
                raise RefError("ref.resource", f"a custom kind {kind} needs its plural resource name")
        return KubernetesTarget(self, kind, api_version, resource, namespace, name)

    # -- one sync's reads, batched ------------------------------------------------------
    def observe_many(self, batch: Sequence[tuple[Target, Sequence[MetricQuery]]], now: float) -> list:
        """Observe a sync's targets from one list per namespace (or per cluster) and
        resource — the workloads of each built-in kind, the pods, the pod metrics
        when some target reads a ``resource`` metric (:mod:`.batch`) — instead of a
        scale GET, a workload GET and a pod list per target. A target of a custom
        kind, or one whose namespace's list failed, observes itself (None)."""
        self._sync += 1
        if self.list_scope == "target":   # no lists: each target reads its own (RBAC without list)
            return [None] * len(batch)
        groups: dict[Optional[str], dict] = {}
        for target, queries in batch:
            if not isinstance(target, KubernetesTarget) or target.kind not in BUILTIN_KINDS:
                continue
            g = groups.setdefault(target.namespace if self.list_scope == "namespace" else None,
                                  {"kinds": set(), "metrics": False})
            g["kinds"].add(target.kind)
            if any(q.type in ("resource", "container_resource") for q in queries):
                g["metrics"] = True
        lists: dict[Optional[str], Any] = {}
        if groups:
            with ThreadPoolExecutor(max_workers=min(8, len(groups)), thread_name_prefix="scalebridge-k8s-list") as ex:
                futures = {ns: ex.submit(self._list_group, ns, g["kinds"], g["metrics"]) for ns, g in groups.items()}
                for ns, f in futures.items():
                    lists[ns] = f.result()
        out: list = []
        for target, queries in batch:
            got = lists.get(target.namespace if self.list_scope == "namespace" else None) \
                if isinstance(target, KubernetesTarget) and target.kind in BUILTIN_KINDS else None
            if got is not None and got.get("refused") is not None:
                # throttled or failing: every target of the list fails with it (and backs off);
                # reading them one by one would multiply calls on a server refusing them
                out.append(got["refused"])
                continue
            if got is None or got.get(target.kind) is None or got.get("pods") is None:
                out.append(None)    # its own reads: a failed list is retried per target, failures its own
                continue
            try:
                out.append(target._observe_listed(got, now, self._sync))
            except ProviderError as e:
                out.append(e)
        return out

    def _list_group(self, namespace: Optional[str], kinds: set, metrics: bool) -> dict:
        """One namespace's (None: the cluster's) workloads of ``kinds`` by
        (namespace, name), its pods and pod metrics by namespace; a list that failed is
        None (its targets then read on their own)."""
        c = self.client
        got: dict[str, Any] = {}

        def by_ns(items, labels_of):
            out: dict[str, list] = {}
            for it in items:
                out.setdefault(it.metadata.namespace if not isinstance(it, dict)
                               else it["metadata"].get("namespace"), []).append(it)
            return {ns: LabelIndex(its, labels_of) for ns, its in out.items()}
        # raw JSON read through the typed models' names (ModelView): the same readers,
        # without the client building every field of every object first
        where = "" if namespace is None else f"/namespaces/{quote(namespace, safe='')}"
        for kind in kinds:
            plural = BUILTIN_KINDS[kind][1]
            try:
                res = c.get_raw(f"list {plural}", f"/apis/apps/v1{where}/{plural}")
                model = getattr(c.k8s, f"V1{kind}")
                got[kind] = {(w["metadata"].get("namespace"), w["metadata"].get("name")): ModelView(w, model)
                             for w in res.get("items") or []}
            except ProviderError as e:
                got[kind] = None
                if e.kind in (ErrorKind.THROTTLED, ErrorKind.TRANSIENT):
                    got["refused"] = e   # the server asks to wait: its targets fail with it
                    return got
        try:
            pods = c.get_raw("list pods", f"/api/v1{where}/pods")
            got["pods"] = by_ns([ModelView(p, c.k8s.V1Pod) for p in pods.get("items") or []],
                                lambda p: p.metadata.labels)
        except ProviderError as e:
            got["pods"] = None
            if e.kind in (ErrorKind.THROTTLED, ErrorKind.TRANSIENT):
                got["refused"] = e
                return got
        got["pod_metrics"] = None
        if metrics:
            try:
                data = c.call("list pods.metrics.k8s.io", c.custom.list_cluster_custom_object,
                              "metrics.k8s.io", "v1beta1", "pods") if namespace is None \
                    else c.call("list pods.metrics.k8s.io", c.custom.list_namespaced_custom_object,
                                "metrics.k8s.io", "v1beta1", namespace, "pods")
                got["pod_metrics"] = by_ns(data.get("items") or [], lambda m: (m.get("metadata") or {}).get("labels"))
            except ProviderError:
                pass    # each target lists its own pods' metrics, as without a batch
        return got

    def _hpa_list(self, namespace: str, sync: int) -> list:
        """The namespace's HPAs, listed once per batched sync for all its targets (with
        ``list_scope: cluster``, every namespace's in one list)."""
        if self.list_scope == "cluster":
            every = self._hpa_list_of(None, sync)
            return every.get(namespace, [])
        return self._hpa_list_of(namespace, sync).get(namespace, [])

    def _hpa_list_of(self, namespace: Optional[str], sync: int) -> dict:
        with self._hpa_lock:
            lock = self._hpa_locks.setdefault(namespace, threading.Lock())
        with lock:      # the namespace's other targets wait for this one list
            hit = self._hpas.get(namespace)
            if hit is not None and hit[0] == sync:
                return hit[1]
            c = self.client
            if namespace is None:
                hpas = c.call("list horizontalpodautoscalers",
                              c.autoscaling.list_horizontal_pod_autoscaler_for_all_namespaces)
            else:
                hpas = c.call("list horizontalpodautoscalers",
                              c.autoscaling.list_namespaced_horizontal_pod_autoscaler, namespace)
            by_ns: dict[str, list] = {}
            for h in hpas.items or []:
                by_ns.setdefault(h.metadata.namespace, []).append(h)
            self._hpas[namespace] = (sync, by_ns)
            return by_ns

    def _control_client(self):
        """A second session for the Lease and the state ConfigMap, with its own rate
        limiter, so that target calls never starve a renewal (kube-controller-manager
        gives leader election its own client too)."""
        if self._control is None:
            self._control = self._new_client()
        return self._control

    def elector(self, namespace: str, name: str, identity: str, clock: Any):
        """``--leader-elect``: a :class:`~.election.LeaseElector` on the Lease
        ``namespace``/``name`` with client-go's timings."""
        from .election import LeaseElector
        self._elector = LeaseElector(self._control_client(), namespace, name, identity, clock)
        return self._elector

    def state_store(self, namespace: str = "scalebridge", name: str = "scalebridge-state", **unknown: Any):
        """``state: {provider: kubernetes, namespace, name}``: a
        :class:`~.store.ConfigMapStore`; with leader election on this provider, only
        the leader writes it."""
        if unknown:
            key = sorted(unknown)[0]
            raise RefError(f"state.{key}", "not an option of the kubernetes state store (namespace, name)")
        for key, value in (("namespace", namespace), ("name", name)):
            if not isinstance(value, str) or not value:
                raise RefError(f"state.{key}", f"a non-empty string, not {value!r}")
        from .store import ConfigMapStore
        return ConfigMapStore(self._control_client(), namespace, name,
                              may_write=lambda: self._elector is None or self._elector.is_leader())

    @property
    def recorder(self):
        """The provider's events.k8s.io/v1 recorder (:class:`.events.EventRecorder`), one
        cache for all its targets, as one client-go broadcaster."""
        if self._recorder is None:
            from .events import EventRecorder
            c = self.client
            self._recorder = EventRecorder(
                lambda ns, body: c.call("create events", c.events.create_namespaced_event, ns, body),
                lambda ns, name, body: c.call("patch events", c.events.patch_namespaced_event, name, ns, body))
        return self._recorder

    def close(self) -> None:
        for c in (self._client, self._control):
            if c is not None:
                c.close()
        self._client = self._control = None
        self._recorder = None


class KubernetesTarget(Target):
    """One scalable workload."""

    def __init__(self, provider: KubernetesProvider, kind: str, api_version: str, resource: str,
                 namespace: str, name: str):
        self.provider = provider
        self.kind, self.api_version, self.resource = kind, api_version, resource
        self.group, _, self.version = api_version.rpartition("/")
        self.namespace, self.workload = namespace, name
        self.name = f"{namespace}/{kind}/{name}"
        self._scale: Optional[dict] = None      # {"replicas", "resource_version", "selector", "status_replicas"}
        self._pods: list = []
        self._containers: dict[str, str] = {}   # resource -> container, for container_resource metrics
        self._listed: Optional[tuple[float, Optional[dict]]] = None   # (sync time, its pod metrics) of a batch
        self._listed_sync = 0
        self._resources: set[str] = {"cpu"}       # resources whose missing requests members explain
        self._release_given = False

    def size_history_query(self) -> Optional[str]:
        """kube-state-metrics' replicas of this workload, for ``backtest`` (see
        :func:`.metrics.replicas_query`)."""
        from .metrics import replicas_query
        return replicas_query(self.kind, self.namespace, self.workload)

    @property
    def client(self):
        return self.provider.client

    # -- the scale subresource ---------------------------------------------------------
    def _read_scale(self) -> dict:
        c = self.client
        op = f"get {self.resource}/scale"
        if self.kind in BUILTIN_KINDS:
            fn = getattr(c.apps, f"read_{BUILTIN_KINDS[self.kind][2]}_scale")
            s = c.call(op, fn, self.workload, self.namespace)
            scale = {"replicas": s.spec.replicas if s.spec and s.spec.replicas is not None else 0,
                     "resource_version": s.metadata.resource_version,
                     "selector": (s.status.selector if s.status else None) or "",
                     "status_replicas": s.status.replicas if s.status else 0}
        else:
            s = c.call(op, c.custom.get_namespaced_custom_object_scale, self.group, self.version,
                       self.namespace, self.resource, self.workload)
            status = s.get("status") or {}
            scale = {"replicas": int((s.get("spec") or {}).get("replicas") or 0),
                     "resource_version": s["metadata"].get("resourceVersion"),
                     "selector": status.get("selector") or "", "status_replicas": int(status.get("replicas") or 0)}
        self._scale = scale
        return scale

    def _write_scale(self, replicas: int, resource_version: Optional[str]) -> dict:
        c = self.client
        op = f"update {self.resource}/scale"
        body = {"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": self.workload, "namespace": self.namespace, "resourceVersion": resource_version},
                "spec": {"replicas": int(replicas)}}
        if self.kind in BUILTIN_KINDS:
            fn = getattr(c.apps, f"replace_{BUILTIN_KINDS[self.kind][2]}_scale")
            s = c.call(op, fn, self.workload, self.namespace, c.k8s.V1Scale.from_dict(body))
            return {"replicas": s.spec.replicas, "resource_version": s.metadata.resource_version,
                    "selector": (s.status.selector if s.status else None) or "",
                    "status_replicas": s.status.replicas if s.status else 0}
        s = c.call(op, c.custom.replace_namespaced_custom_object_scale, self.group, self.version, self.namespace,
                   self.resource, self.workload, body)
        status = s.get("status") or {}
        return {"replicas": int((s.get("spec") or {}).get("replicas") or 0),
                "resource_version": s["metadata"].get("resourceVersion"),
                "selector": status.get("selector") or "", "status_replicas": int(status.get("replicas") or 0)}

    def _rollout(self) -> Optional[Rollout]:
        """A rollout in progress (old-version pods remain), or None (the workload's
        annotations are kept for :func:`pause_of`). A size change not yet carried out
        is no rollout: the next write is absolute and safe on it."""
        c = self.client
        op = f"get {self.resource}"
        if self.kind in BUILTIN_KINDS:
            fn = getattr(c.apps, f"read_{BUILTIN_KINDS[self.kind][2]}")
            return self._rollout_of(c.call(op, fn, self.workload, self.namespace))
        w = c.call(op, c.custom.get_namespaced_custom_object, self.group, self.version, self.namespace,
                   self.resource, self.workload)
        self._annotations = dict((w.get("metadata") or {}).get("annotations") or {})
        return None

    def _rollout_of(self, w: Any) -> Optional[Rollout]:
        """:meth:`_rollout` of a built-in workload already read (its annotations kept)."""
        self._annotations = dict(w.metadata.annotations or {})
        status = w.status
        if status is None:
            return None
        if self.kind == "Deployment":
            replicas, updated = status.replicas or 0, status.updated_replicas or 0
            if updated < replicas:
                return Rollout(updated_replicas=updated, reason=f"status.updatedReplicas {updated} < "
                                                                 f"status.replicas {replicas}")
        elif self.kind == "StatefulSet":
            cur, upd = status.current_revision, status.update_revision
            if cur and upd and cur != upd:
                return Rollout(updated_replicas=status.updated_replicas,
                               reason=f"status.currentRevision {cur} != updateRevision {upd}")
        return None

    # -- the contract ------------------------------------------------------------------
    def use_policy(self, policy: Any, settings: Any) -> None:
        """Remember which container a ``container_resource`` metric measures: its
        members' requests are that container's (``calculateRequests``)."""
        self._containers = {m.name: m.container for m in (policy.metrics or [])
                            if m.type == "container_resource" and m.enabled and m.container}
        # the resources whose missing requests a member explains in the controller's words;
        # a policy naming no metric gets the HPA's default CPU metric
        self._resources = {m.name for m in (policy.metrics or []) if m.type == "resource"} or {"cpu"}
        # a release the configuration names is decided as: the server is not asked
        self._release_given = getattr(settings, "kubernetes_version", None) is not None
        self._metrics = {m.name: m for m in (policy.metrics or [])}   # an Event names them as the HPA does

    def observe(self, now: float) -> Observation:
        self._listed = None
        scale = self._read_scale()
        rollout = self._rollout()
        self._check_selector(scale)
        c = self.client
        pods = c.call("list pods", c.core.list_namespaced_pod, self.namespace, label_selector=scale["selector"])
        return self._observation(scale, rollout, list(pods.items or []))

    def _check_selector(self, scale: dict) -> None:
        if not scale["selector"]:
            raise ProviderError(ErrorKind.INVALID, f"{self.name}: the scale subresource has no status.selector "
                                                   "(the HPA controller refuses it too: \"selector is required\")",
                                operation=f"get {self.resource}/scale")

    def _observe_listed(self, got: dict, now: float, sync: int) -> Observation:
        """:meth:`observe` from a batch's lists (:meth:`KubernetesProvider.observe_many`):
        the workload stands for its scale subresource — for the built-in kinds the
        API server makes the Scale from the workload itself, ``spec.replicas``,
        ``status.replicas``, the workload's resourceVersion and its selector
        (pkg/registry/apps/deployment/storage/storage.go, ``scaleFromDeployment``;
        statefulset and replicaset alike) — and the pods are those its selector
        matches."""
        self._listed = None
        w = got[self.kind].get((self.namespace, self.workload))
        if w is None:
            raise ProviderError(ErrorKind.NOT_FOUND, f"get {self.resource}/scale: {self.resource}.apps "
                                                     f"\"{self.workload}\" not found (HTTP 404)",
                                operation=f"get {self.resource}/scale")
        selector = selector_dict(w.spec.selector)
        from .metrics import selector_string
        scale = {"replicas": w.spec.replicas if w.spec.replicas is not None else 0,
                 "resource_version": w.metadata.resource_version,
                 "selector": (selector_string(selector, "spec.selector") or "") if selector else "",
                 "status_replicas": (w.status.replicas if w.status else None) or 0}
        self._scale = scale
        rollout = self._rollout_of(w)
        self._check_selector(scale)
        match = selector_matcher(selector)
        if match is None:       # a selector this reader does not know: the API server's word, per target
            return self.observe(now)
        none = LabelIndex([], dict)
        pods = got["pods"].get(self.namespace, none).select(selector, match)
        metrics = got.get("pod_metrics")
        if metrics is not None:
            metrics = {"items": metrics.get(self.namespace, none).select(selector, match)}
        self._listed = (now, metrics)
        self._listed_sync = sync
        return self._observation(scale, rollout, pods)

    def _observation(self, scale: dict, rollout: Optional[Rollout], pods: list) -> Observation:
        self._pods = pods
        members = [self._member(p) for p in self._pods]
        paused, paused_replicas = pause_of(getattr(self, "_annotations", {}))
        return Observation(current_replicas=int(scale["replicas"]), status_replicas=scale["status_replicas"],
                           members=members, rollout=rollout, paused=paused, paused_replicas=paused_replicas,
                           details={"selector": scale["selector"], "resource_version": scale["resource_version"],
                                    "pods": len(members)}, settings=self._known_settings())

    def _known_settings(self) -> Optional[dict]:
        """The API server's release (``GET /version``, once per session): the kubernetes
        semantics decides as that release's controller (docs/kubernetes.md, "Releases")."""
        if self._release_given:
            return None
        rel = self.client.release()
        return {"kubernetes_version": rel} if rel else None

    def _member(self, pod: Any) -> Member:
        m = pod_member(pod, resources=self._resources)
        if self._containers:
            requests = dict(m.requests or {})
            errors = dict(m.request_errors or {})
            for resource, container in self._containers.items():
                own, why = requests_and_errors(pod, container, (resource,))
                requests[resource] = own.get(resource)
                errors.pop(resource, None)
                errors.update(why)
            m.requests = requests
            m.request_errors = errors or None
        return m

    def read_metrics(self, now: float, observation: Observation,
                     queries: list[MetricQuery]) -> dict[str, MetricObservation]:
        selector = (self._scale or {}).get("selector") or observation.details.get("selector") or ""
        for q in queries:       # a container_resource metric the policy hook did not announce
            if q.type == "container_resource" and q.spec.get("container") and \
                    self._containers.get(q.name) != q.spec["container"]:
                self._containers[q.name] = q.spec["container"]
                observation.members = [self._member(p) for p in self._pods]
        listed = self._listed[1] if self._listed is not None and self._listed[0] == now else None
        reader = MetricsReader(self.client, self.namespace, self.name, pod_metrics=listed)
        out: dict[str, MetricObservation] = {}
        for q in queries:
            got = reader.read(q, selector)
            if got is not None:
                out[q.name] = MetricObservation(**got)   # the core's own type: read and checked here
        return out

    def set_size(self, size: int) -> SizeChange:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProviderError(ErrorKind.INVALID, f"{self.name}: a size is a whole number >= 0, not {size!r}")
        seen = self._scale or self._read_scale()
        try:
            written = self._write_scale(size, seen["resource_version"])
        except ProviderError as e:
            if e.kind is not ErrorKind.CONFLICT:
                raise
            fresh = self._read_scale()
            if fresh["replicas"] == size:
                return SizeChange(size=size, note="the size was already set by someone else")
            if fresh["replicas"] != seen["replicas"]:
                raise ProviderError(ErrorKind.CONFLICT,
                                    f"{self.name}: spec.replicas changed underneath from {seen['replicas']} to "
                                    f"{fresh['replicas']}; the newer size is kept (not overwritten with {size})",
                                    operation=f"update {self.resource}/scale") from None
            written = self._write_scale(size, fresh["resource_version"])     # a second 409 propagates
        self._scale = written
        return SizeChange(size=int(written["replicas"]),
                          operation=f"{self.resource}/scale resourceVersion {written['resource_version']}")

    def delete_members(self, members: list[str], size: int) -> SizeChange:
        """Lower the chosen pods' deletion cost, in order of preference (the first the
        lowest), clear the cost this provider set on any other pod (an abandoned
        scale-in's), then set ``spec.replicas`` to ``size``: the ReplicaSet controller
        removes the chosen pods (:data:`DELETION_COST_BASE`). Idempotent: a pod already
        gone or leaving is skipped, a cost already set is not written again."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProviderError(ErrorKind.INVALID, f"{self.name}: a size is a whole number >= 0, not {size!r}")
        if self.kind == "StatefulSet":   # it removes its highest ordinals, whatever the cost
            return self.set_size(size)
        pods = {p.metadata.name: p for p in self._pods if not p.metadata.deletion_timestamp}
        chosen = [n for n in members if n in pods]
        want = {n: str(DELETION_COST_BASE + i) for i, n in enumerate(chosen)}
        c = self.client
        for name, pod in pods.items():
            annotations = pod.metadata.annotations or {}
            have = annotations.get(DELETION_COST)
            if name in want:
                if have == want[name]:
                    continue
                value = want[name]
            elif annotations.get(DELETION_COST_OWNER) == "true":
                value = None                 # a cost this provider set before: taken back
            else:
                continue
            body = {"metadata": {"annotations": {DELETION_COST: value,
                                                 DELETION_COST_OWNER: None if value is None else "true"}}}
            try:
                c.call("patch pods", c.core.patch_namespaced_pod, name, self.namespace, body)
            except ProviderError as e:
                if e.kind is not ErrorKind.NOT_FOUND:   # gone since: nothing to choose
                    raise
        change = self.set_size(size)
        return SizeChange(size=change.size, in_flight=change.in_flight, operation=change.operation,
                          note=(f"pod-deletion-cost lowered on {', '.join(chosen)}" if chosen else change.note))

    def _hpa(self) -> Any:
        c = self.client
        if self._listed is not None and self._listed_sync == self.provider._sync:   # observed in this batch
            hpas = self.provider._hpa_list(self.namespace, self._listed_sync)
        else:
            hpas = c.call("list horizontalpodautoscalers",
                          c.autoscaling.list_namespaced_horizontal_pod_autoscaler, self.namespace).items or []
        for h in hpas:
            ref = h.spec.scale_target_ref
            group = (ref.api_version or "").rpartition("/")[0]
            if ref.kind == self.kind and ref.name == self.workload and (not ref.api_version or group == self.group):
                return h
        return None

    def managed_by(self) -> Optional[str]:
        h = self._hpa()
        return f"HorizontalPodAutoscaler {self.namespace}/{h.metadata.name}" if h is not None else None

    def native_decision(self, now: float, since: Optional[float]) -> Any:
        """The HPA that scales this workload: its status and its ``SuccessfulRescale``
        Events (core/v1, as its controller records them), :func:`.events.hpa_decision`;
        None when no HPA targets the workload."""
        from .events import hpa_decision
        h = self._hpa()
        if h is None:
            return None
        c = self.client
        events = c.call("list events", c.core.list_namespaced_event, self.namespace,
                        field_selector=f"involvedObject.kind=HorizontalPodAutoscaler,"
                                       f"involvedObject.name={h.metadata.name}")
        return hpa_decision(h, list(events.items or []), since)

    def record_event(self, notice: Any) -> None:
        """An events.k8s.io/v1 Event on the workload (:class:`.events.EventRecorder`)."""
        from .events import note_of
        type_, reason, note = note_of(notice, getattr(self, "_metrics", {}))
        regarding = {"apiVersion": self.api_version, "kind": self.kind, "name": self.workload,
                     "namespace": self.namespace}
        self.provider.recorder.record(notice.time, regarding, type_, reason, note)



#: the pause annotations honoured on a workload: KEDA's (on a ScaledObject there,
#: https://keda.sh/docs/latest/concepts/scaling-deployments/#pause-autoscaling) and
#: scalebridge's own, each pair (paused, paused-replicas)
PAUSE_ANNOTATIONS = (("autoscaling.keda.sh/paused", "autoscaling.keda.sh/paused-replicas"),
                     ("scalebridge.io/paused", "scalebridge.io/paused-replicas"))


def pause_of(annotations: Mapping[str, Any]) -> tuple[Optional[str], Optional[int]]:
    """Who paused the workload, and the replicas to hold, from its annotations, as
    KEDA reads them: ``paused: "true"`` holds the current size;
    ``paused-replicas: "N"`` scales to N and holds it, and wins when both are set.
    A ``paused-replicas`` that is not a count is a pause all the same (at the
    current size), so that a typo never resumes scaling."""
    for paused_key, replicas_key in PAUSE_ANNOTATIONS:
        replicas = annotations.get(replicas_key)
        if replicas is not None:
            text = str(replicas).strip()
            if text.isdigit():
                return f"annotation {replicas_key}={text}", int(text)
            return f"annotation {replicas_key}={text!r} (not a count: held at the current size)", None
        if str(annotations.get(paused_key, "")).strip().lower() == "true":
            return f"annotation {paused_key}=true", None
    return None, None
