"""Metric samples as the HPA controller reads them
(pkg/controller/podautoscaler/metrics/client.go, ``resourceMetricsClient``,
``customMetricsClient``, ``externalMetricsClient`` in kubernetes/kubernetes):

- ``resource``: ``metrics.k8s.io/v1beta1`` PodMetrics listed with the scale's
  selector; a pod's containers are summed, and a pod some container of which
  lacks the resource has no sample (``getPodMetrics``); no item at all is an
  error ("no metrics returned from resource metrics API");
- ``container_resource``: the one named container's usage; a pod whose metrics
  lack that container is an error (``getContainerMetrics``);
- ``pods``: ``custom.metrics.k8s.io/v1beta2``
  ``namespaces/{ns}/pods/*/{metric}`` with the pods' selector and the metric's
  ``metricLabelSelector`` (``GetRawMetric``); a window defaults to one minute;
- ``object``: ``custom.metrics.k8s.io/v1beta2``
  ``namespaces/{ns}/{resource}/{name}/{metric}``, one value (``GetObjectMetric``);
- ``external``: ``external.metrics.k8s.io/v1beta1``
  ``namespaces/{ns}/{metric}?labelSelector=…``, every value
  (``GetExternalMetric``).

The samples' ``timestamp`` and ``window`` are the first item's, as
``GetResourceMetric`` returns ``metrics.Items[0].Timestamp``; where the pods'
PodMetrics differ, each pod's own are given too (``member_timestamps``,
``member_windows``), as ``getPodMetrics`` keeps them per pod for ``groupPods``. A metric that
cannot be read is left out (missing, never 0); a source that is misconfigured
raises ``INVALID`` naming the run configuration key.

Sources (``metrics.<name>.source`` of a target), in the HPA's own terms::

    source: {metric_name: http_requests, selector: {matchLabels: {verb: GET}}}          # pods, external
    source: {described_object: {api_version: networking.k8s.io/v1, kind: Ingress, name: main},
             metric_name: requests_per_second}                                         # object

``metric_name`` defaults to the policy metric's name; ``selector`` is a
``LabelSelector`` (``matchLabels``/``matchExpressions``) or a selector string.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Mapping, Optional
from urllib.parse import quote

from scalebridge.providers import ErrorKind, MetricQuery, ProviderError
from scalebridge.units import milli_value

from .members import quantity_of_milli

#: metricServerDefaultMetricWindow (pkg/controller/podautoscaler/metrics/client.go)
DEFAULT_METRIC_WINDOW = 60.0
CUSTOM_METRICS = "/apis/custom.metrics.k8s.io/v1beta2"
EXTERNAL_METRICS = "/apis/external.metrics.k8s.io/v1beta1"
SOURCE_KEYS = {"metric_name", "selector", "described_object"}
OBJECT_KEYS = {"api_version", "kind", "name", "resource"}

_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: Any) -> Optional[float]:
    """A Go ``time.Duration`` string (``30s``, ``1m0s``, ``500ms``) in seconds."""
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    parts = _GO_DURATION.findall(str(text))
    if not parts:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def rfc3339(text: Optional[str]) -> Optional[float]:
    if not text:
        return None
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def selector_string(selector: Any, where: str) -> Optional[str]:
    """A ``LabelSelector`` as its string form (``metav1.FormatLabelSelector``)."""
    if selector is None or isinstance(selector, str):
        return selector or None
    if not isinstance(selector, Mapping):
        raise ProviderError(ErrorKind.INVALID, f"{where}: a label selector is a mapping "
                                               "(matchLabels, matchExpressions) or a string")
    unknown = set(selector) - {"matchLabels", "matchExpressions", "match_labels", "match_expressions"}
    if unknown:
        raise ProviderError(ErrorKind.INVALID, f"{where}.{sorted(unknown)[0]}: not a LabelSelector key "
                                               "(matchLabels, matchExpressions)")
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or selector.get("match_labels") or {}).items())]
    for i, e in enumerate(selector.get("matchExpressions") or selector.get("match_expressions") or []):
        op, key, values = e.get("operator"), e.get("key"), sorted(str(v) for v in e.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            raise ProviderError(ErrorKind.INVALID, f"{where}.matchExpressions[{i}].operator: {op!r} is not "
                                                   "In, NotIn, Exists or DoesNotExist")
    return ",".join(parts) or None


def _source(query: MetricQuery) -> dict:
    src = dict(query.source or {})
    unknown = set(src) - SOURCE_KEYS - {"per_member"}
    if unknown:
        raise ProviderError(ErrorKind.INVALID, f"metrics.{query.name}.source.{sorted(unknown)[0]}: not a kubernetes "
                                               f"metric source key ({', '.join(sorted(SOURCE_KEYS))})")
    return src


def plural_of(kind: str) -> str:
    """The resource name of a kind, as the RESTMapper guesses it
    (k8s.io/apimachinery/pkg/api/meta/restmapper.go, ``UnsafeGuessKindToResource``)."""
    k = kind.lower()
    if k.endswith("s"):
        return k + "es"
    if k.endswith("y"):
        return k[:-1] + "ies"
    return k + "s"


class MetricsReader:
    """Reads one target's metrics through a :class:`~.client.KubeClient`."""

    def __init__(self, client, namespace: str, target: str, pod_metrics: Optional[dict] = None):
        self.client = client
        self.namespace = namespace
        self.target = target
        #: this sync's PodMetricsList of the target's pods, read for many targets at once
        #: (the provider's batched observe), or None: list them with the selector
        self.pod_metrics = pod_metrics

    def read(self, query: MetricQuery, selector: str) -> Optional[dict]:
        """The observation for ``query``, or None when it cannot be read (left out)."""
        kind = query.type
        if kind in ("resource", "container_resource"):
            return self.resource(query, selector)
        if kind == "pods":
            return self.pods(query, selector)
        if kind == "object":
            return self.object(query)
        if kind == "external":
            return self.external(query)
        return None     # rule series and forecasts: the metrics APIs keep no history

    def _quiet(self, fn, *args) -> Optional[dict]:
        try:
            return fn(*args)
        except ProviderError as e:
            if e.kind in (ErrorKind.THROTTLED, ErrorKind.FORBIDDEN):
                raise       # the whole client is throttled or lacks a permission: say so
            return None

    # -- metrics.k8s.io ----------------------------------------------------------------
    def resource(self, query: MetricQuery, selector: str) -> Optional[dict]:
        resource = str(query.spec.get("name") or query.name)
        container = query.spec.get("container") if query.type == "container_resource" else None

        def fetch():
            return self.client.call("list pods.metrics.k8s.io", self.client.custom.list_namespaced_custom_object,
                                    "metrics.k8s.io", "v1beta1", self.namespace, "pods", label_selector=selector)
        data = self.pod_metrics if self.pod_metrics is not None else self._quiet(fetch)
        if data is None:
            return None
        items = data.get("items") or []
        if not items:
            return None     # "no metrics returned from resource metrics API"
        members: dict[str, Any] = {}
        for m in items:
            name = m["metadata"]["name"]
            containers = m.get("containers") or []
            if container is not None:
                found = [c for c in containers if c.get("name") == container]
                if not found:
                    return None     # "container %s not present in metrics for pod %s/%s"
                usage = (found[0].get("usage") or {}).get(resource)
                if usage is not None:
                    members[name] = quantity_of_milli(milli_value(usage))
                continue
            if not containers or any(resource not in (c.get("usage") or {}) for c in containers):
                continue    # missing resource metric for the pod
            members[name] = quantity_of_milli(sum(milli_value(c["usage"][resource]) for c in containers))
        first = items[0]
        out = {"members": members, "timestamp": rfc3339(first.get("timestamp")),
               "window": go_duration(first.get("window")) or 0.0}
        # each pod's own sample time and window, which groupPods reads per pod
        # (replica_calculator.go: metric.Timestamp, metric.Window), where they differ
        times = {m["metadata"]["name"]: rfc3339(m.get("timestamp")) for m in items
                 if m["metadata"]["name"] in members}
        windows = {m["metadata"]["name"]: go_duration(m.get("window")) or 0.0 for m in items
                   if m["metadata"]["name"] in members}
        if any(t != out["timestamp"] for t in times.values()):
            out["member_timestamps"] = {k: t for k, t in times.items() if t is not None}
        if any(w != out["window"] for w in windows.values()):
            out["member_windows"] = windows
        return out

    # -- custom.metrics.k8s.io ---------------------------------------------------------
    def pods(self, query: MetricQuery, selector: str) -> Optional[dict]:
        src = _source(query)
        metric = str(src.get("metric_name") or query.name)
        msel = selector_string(src.get("selector"), f"metrics.{query.name}.source.selector")
        path = f"{CUSTOM_METRICS}/namespaces/{quote(self.namespace)}/pods/*/{quote(metric, safe='')}"
        data = self._quiet(self.client.get_raw, f"get {metric} pods.custom.metrics.k8s.io", path,
                           {"labelSelector": selector, "metricLabelSelector": msel})
        if data is None or not data.get("items"):
            return None     # "no metrics returned from custom metrics API"
        items = data["items"]
        members = {it["describedObject"]["name"]: quantity_of_milli(milli_value(it["value"])) for it in items}
        first = items[0]
        window = first.get("windowSeconds")
        return {"members": members, "timestamp": rfc3339(first.get("timestamp")),
                "window": float(window) if window is not None else DEFAULT_METRIC_WINDOW}

    def object(self, query: MetricQuery) -> Optional[dict]:
        src = _source(query)
        obj = src.get("described_object")
        where = f"metrics.{query.name}.source.described_object"
        if not isinstance(obj, Mapping) or not obj.get("kind") or not obj.get("name"):
            raise ProviderError(ErrorKind.INVALID, f"{where}: an object metric needs the object it describes "
                                                   "({kind, name, api_version})")
        unknown = set(obj) - OBJECT_KEYS
        if unknown:
            raise ProviderError(ErrorKind.INVALID, f"{where}.{sorted(unknown)[0]}: not a key of a described "
                                                   f"object ({', '.join(sorted(OBJECT_KEYS))})")
        metric = str(src.get("metric_name") or query.name)
        msel = selector_string(src.get("selector"), f"metrics.{query.name}.source.selector")
        group = str(obj.get("api_version") or "v1").rpartition("/")[0]
        resource = str(obj.get("resource") or plural_of(str(obj["kind"])))
        if group:
            resource = f"{resource}.{group}"
        if obj["kind"] == "Namespace":
            path = f"{CUSTOM_METRICS}/namespaces/{quote(str(obj['name']))}/metrics/{quote(metric, safe='')}"
        else:
            path = (f"{CUSTOM_METRICS}/namespaces/{quote(self.namespace)}/{quote(resource)}/"
                    f"{quote(str(obj['name']))}/{quote(metric, safe='')}")
        data = self._quiet(self.client.get_raw, f"get {metric} {resource}.custom.metrics.k8s.io", path,
                           {"metricLabelSelector": msel})
        if data is None or len(data.get("items") or []) != 1:
            return None     # "the custom metrics API server returned %v results when we asked for exactly one"
        item = data["items"][0]
        return {"value": quantity_of_milli(milli_value(item["value"])), "timestamp": rfc3339(item.get("timestamp"))}

    # -- external.metrics.k8s.io -------------------------------------------------------
    def external(self, query: MetricQuery) -> Optional[dict]:
        src = _source(query)
        metric = str(src.get("metric_name") or query.name)
        sel = selector_string(src.get("selector"), f"metrics.{query.name}.source.selector")
        path = f"{EXTERNAL_METRICS}/namespaces/{quote(self.namespace)}/{quote(metric, safe='')}"
        data = self._quiet(self.client.get_raw, f"list {metric}.external.metrics.k8s.io", path,
                           {"labelSelector": sel})
        if data is None or not data.get("items"):
            return None     # "no metrics returned from external metrics API"
        items = data["items"]
        return {"values": [quantity_of_milli(milli_value(it["value"])) for it in items],
                "timestamp": rfc3339(items[0].get("timestamp"))}


#: kube-state-metrics' gauge of each kind's desired replicas (``spec.replicas``), and the label
#: naming the object (https://github.com/kubernetes/kube-state-metrics/tree/main/docs/metrics/workload)
KUBE_STATE_REPLICAS = {"Deployment": ("kube_deployment_spec_replicas", "deployment"),
                       "StatefulSet": ("kube_statefulset_replicas", "statefulset"),
                       "ReplicaSet": ("kube_replicaset_spec_replicas", "replicaset")}


def replicas_query(kind: str, namespace: str, name: str) -> Optional[str]:
    """The PromQL of the size a workload had, as kube-state-metrics exports it (the
    Kubernetes API keeps no history of ``spec.replicas``; ``scalebridge backtest``
    reads it through the target's Prometheus metric source); None for a kind it
    does not export."""
    if kind not in KUBE_STATE_REPLICAS:
        return None
    metric, label = KUBE_STATE_REPLICAS[kind]
    esc = lambda v: v.replace("\\", "\\\\").replace('"', '\\"')  # noqa: E731
    return f'max({metric}{{namespace="{esc(namespace)}",{label}="{esc(name)}"}})'

