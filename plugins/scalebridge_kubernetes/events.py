"""Kubernetes Events for scalebridge's scale actions, and the HPA's decisions read back.

**Writing** (:class:`EventRecorder`): an events.k8s.io/v1 Event on the scaled workload,
in the HPA's words (pkg/controller/podautoscaler/horizontal.go ``reconcileAutoscaler``):
reason ``SuccessfulRescale`` (Normal) with the note ``New size: %d; reason: %s``, or
``FailedRescale`` (Warning) ``New size: %d; reason: %s; error: %v``; the rescale reason is
``<metric> above target`` when scaling up, ``All metrics below target`` when down, and
``Current number of replicas above Spec.MaxReplicas``/``below Spec.MinReplicas`` at the
bounds, the metric named as the HPA names its ``rescaleMetric`` (``cpu resource
utilization (percentage of request)``, ``cpu resource``, ``pods metric rps``, ``Ingress
metric hits``, ``external metric queue``). A shadow decision (not written) is recorded
as ``ShadowRescale`` (Normal): ``New size: %d (shadow mode, not written; <native
autoscaler> holds %d); reason: %s`` — a reason of scalebridge's own, since the HPA has
none for a size it did not set.

Aggregated as client-go's events.k8s.io recorder does (``tools/events/event_broadcaster.go``,
``recordToSink``, ``finishSeries``, ``refreshExistingEventSeries``): events are isomorphic
when their type, action, reason, reporting controller and instance and regarding object
are the same (the note is not compared); the first is created; the second isomorphic one
turns it into a series (``series: {count: 2, lastObservedTime}``, a PATCH); later ones
only count in memory; a series idle for 6 minutes is written once more with its final
count and forgotten, an active one re-written every 30 minutes; a singleton older than 6
minutes is forgotten (an isomorphic event after that starts a new Event). And
rate-limited as ``tools/record``'s spam filter does (``EventSourceObjectSpamFilter``): a
token bucket per object and type, burst 25, refilled one per 300 s; a write without a
token is dropped. Time is the decision's (the controller's clock), so a virtual-clock
run aggregates as a real one would.

**Reading** (:func:`hpa_decision`): what an autoscaling/v2 HPA decided, from its
``status`` (``desiredReplicas``, ``currentReplicas``, ``lastScaleTime``,
``currentMetrics``, ``conditions``) and its core/v1 ``SuccessfulRescale`` Events (the HPA
controller records with ``tools/record``: core/v1, which the python client's
``EventsV1Event`` model cannot read, as it requires the ``eventTime`` those events lack).
"""
from __future__ import annotations

import datetime as _dt
import math
import re
import socket
import threading
from dataclasses import dataclass
from typing import Any, Optional

from scalebridge.providers import NativeDecision, ScaleNotice

__all__ = ["EventRecorder", "hpa_decision", "rescale_metric", "note_of", "REPORTING_CONTROLLER"]

REPORTING_CONTROLLER = "scalebridge.io/scalebridge"
ACTION = "Scale"
#: tools/events/event_broadcaster.go
FINISH_SECONDS = 6 * 60
REFRESH_SECONDS = 30 * 60
#: tools/record/events_cache.go: defaultSpamBurst, defaultSpamQPS
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0


def micro_time(t: float) -> str:
    """``metav1.MicroTime`` in RFC 3339 with microseconds."""
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rescale_metric(name: str, policy_metric: Any) -> str:
    """The HPA's name for the metric whose proposal won (horizontal.go
    ``computeReplicasForMetrics``' metricNameProposal)."""
    kind = getattr(policy_metric, "type", None)
    target = getattr(getattr(policy_metric, "target", None), "type", None)
    if kind in ("resource", "container_resource"):
        return f"{name} resource utilization (percentage of request)" if target == "Utilization" \
            else f"{name} resource"
    if kind == "pods":
        return f"pods metric {name}"
    if kind == "object":
        described = getattr(getattr(policy_metric, "described_object", None), "kind", None) or "object"
        return f"{described} metric {name}"
    if kind == "external":
        return f"external metric {name}"
    return f"rule {name}" if kind is None else f"{kind} metric {name}"


def note_of(notice: ScaleNotice, metrics: dict, native_name: Optional[str] = None) -> tuple[str, str, str]:
    """(type, reason, note) of a notice, in the HPA's words."""
    if notice.reason == "TooManyReplicas":
        why = "Current number of replicas above Spec.MaxReplicas"
    elif notice.reason == "TooFewReplicas":
        why = "Current number of replicas below Spec.MinReplicas"
    elif notice.desired > notice.current and notice.signal:
        why = f"{rescale_metric(notice.signal, metrics.get(notice.signal)) if notice.signal_type != 'rule' else 'rule ' + notice.signal} above target"
    elif notice.desired > notice.current:
        why = f"{notice.cause or 'decision'} above target"
    else:
        why = "All metrics below target"
    if notice.kind == "failed":
        return "Warning", "FailedRescale", f"New size: {notice.desired}; reason: {why}; error: {notice.error}"
    if notice.kind == "shadow":
        holds = f"{native_name or 'the native autoscaler'} holds {notice.native}" if notice.native is not None \
            else "not compared yet"
        return "Normal", "ShadowRescale", f"New size: {notice.desired} (shadow mode, not written; {holds}); " \
                                          f"reason: {why}"
    return "Normal", "SuccessfulRescale", f"New size: {notice.desired}; reason: {why}"


@dataclass
class _Cached:
    name: str
    namespace: str
    event_time: float
    count: int = 1
    last_observed: float = 0.0
    written_count: int = 1
    last_written: float = 0.0


class EventRecorder:
    """One provider's events.k8s.io/v1 recorder (see the module docstring). ``create``
    and ``patch`` are ``(namespace, body)`` / ``(namespace, name, body)`` calls of the
    API; a failure propagates (the controller logs it: an event is best effort)."""

    def __init__(self, create, patch, *, instance: Optional[str] = None):
        self.create, self.patch = create, patch
        self.instance = (instance or f"scalebridge-{socket.gethostname()}")[:128]
        self.lock = threading.Lock()
        self.cache: dict[tuple, _Cached] = {}
        self.buckets: dict[tuple, tuple[float, float]] = {}   # (regarding, type) -> (tokens, last)
        #: what was sent: ("create"|"patch", name, count), for tests and logs
        self.sent: list[tuple[str, str, int]] = []
        self.dropped = 0

    def _accept(self, key: tuple, now: float) -> bool:
        tokens, last = self.buckets.get(key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + max(0.0, now - last) * SPAM_QPS)
        if tokens < 1.0:
            self.buckets[key] = (tokens, now)
            return False
        self.buckets[key] = (tokens - 1.0, now)
        return True

    def _write_series(self, c: _Cached, now: float) -> None:
        self.patch(c.namespace, c.name, {"series": {"count": c.count, "lastObservedTime": micro_time(c.last_observed)}})
        c.written_count, c.last_written = c.count, now
        self.sent.append(("patch", c.name, c.count))

    def sweep(self, now: float) -> None:
        """``finishSeries`` and ``refreshExistingEventSeries`` at ``now``."""
        for key, c in list(self.cache.items()):
            if c.count >= 2:
                if now - c.last_observed > FINISH_SECONDS:
                    if c.count != c.written_count:
                        self._write_series(c, now)
                    del self.cache[key]
                elif now - c.last_written >= REFRESH_SECONDS:
                    self._write_series(c, now)
            elif now - c.event_time > FINISH_SECONDS:
                del self.cache[key]

    def record(self, now: float, regarding: dict, type_: str, reason: str, note: str) -> Optional[str]:
        """Record one event; the name of the Event it went to, or None when dropped or
        only counted."""
        with self.lock:
            self.sweep(now)
            ident = (regarding.get("apiVersion"), regarding.get("kind"), regarding.get("namespace"),
                     regarding.get("name"))
            key = (type_, ACTION, reason, REPORTING_CONTROLLER, self.instance, ident)
            c = self.cache.get(key)
            if c is not None:
                c.count += 1
                c.last_observed = now
                if c.count > 2:
                    return None   # counted; written when the series finishes or is refreshed
                if not self._accept((ident, type_), now):
                    self.dropped += 1
                    return None
                self._write_series(c, now)
                return c.name
            if not self._accept((ident, type_), now):
                self.dropped += 1
                return None
            ns = regarding.get("namespace") or "default"
            name = f"{regarding['name']}.{int(now * 1e9):x}"
            body = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                    "metadata": {"name": name, "namespace": ns}, "eventTime": micro_time(now),
                    "reportingController": REPORTING_CONTROLLER, "reportingInstance": self.instance,
                    "action": ACTION, "reason": reason, "regarding": regarding, "note": note[:1024],
                    "type": type_}
            self.create(ns, body)
            self.cache[key] = _Cached(name, ns, now, 1, now, 1, now)
            self.sent.append(("create", name, 1))
            return name


# ----------------------------------------------------------------------------- reading the HPA

_RESCALE = re.compile(r"^New size: (\d+); reason: (.*)$", re.S)
_STABILIZED = ("ScaleDownStabilized", "ScaleUpStabilized")


def _ts(t: Any) -> Optional[float]:
    if t is None:
        return None
    if isinstance(t, _dt.datetime):
        return (t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)).timestamp()
    return None


def _quantity(q: Any) -> Optional[float]:
    if q is None:
        return None
    from kubernetes.utils import parse_quantity
    try:
        return float(parse_quantity(q))
    except (ValueError, TypeError):
        return None


def hpa_metrics(status: Any) -> dict[str, float]:
    """``status.currentMetrics`` by metric name: a utilization in percent, else the value."""
    out: dict[str, float] = {}
    for m in getattr(status, "current_metrics", None) or []:
        kind = (m.type or "").lower()
        if kind == "resource" and m.resource is not None:
            name, cur = m.resource.name, m.resource.current
        elif kind == "containerresource" and m.container_resource is not None:
            name, cur = m.container_resource.name, m.container_resource.current
        elif kind == "pods" and m.pods is not None:
            name, cur = m.pods.metric.name, m.pods.current
        elif kind == "object" and m.object is not None:
            name, cur = m.object.metric.name, m.object.current
        elif kind == "external" and m.external is not None:
            name, cur = m.external.metric.name, m.external.current
        else:
            continue
        if cur is None:
            continue
        util = getattr(cur, "average_utilization", None)
        v = float(util) if util is not None else _quantity(getattr(cur, "value", None)) \
            if getattr(cur, "value", None) is not None else _quantity(getattr(cur, "average_value", None))
        if v is not None:
            out[name] = v
    return out


def hpa_decision(hpa: Any, events: list, since: Optional[float]) -> NativeDecision:
    """What the HPA decided: its status, and its ``SuccessfulRescale`` Events from
    ``since`` on as actions (oldest first; to the second, as core/v1 Events are stamped)."""
    name = f"HorizontalPodAutoscaler {hpa.metadata.namespace}/{hpa.metadata.name}"
    st = hpa.status
    conds = {c.type: c for c in (getattr(st, "conditions", None) or [])}
    able, limited, active = conds.get("AbleToScale"), conds.get("ScalingLimited"), conds.get("ScalingActive")
    stage = None
    if conds:   # the first of its stages that moved the size, as its conditions say
        if able is not None and able.reason in _STABILIZED:
            stage = "stabilization"
        elif limited is not None and limited.status == "True":
            stage = "limits"
        else:
            stage = "metrics"
    reason = (limited.reason if limited is not None and limited.status == "True" else None) or \
        (able.reason if able is not None else None)
    error = f"{active.reason}: {active.message}" if active is not None and active.status == "False" else None
    actions = []
    for e in events:
        if e.reason != "SuccessfulRescale":
            continue
        m = _RESCALE.match(e.message or "")
        t = _ts(e.last_timestamp) or _ts(e.event_time) or _ts(e.first_timestamp)
        # core/v1 timestamps are whole seconds: an event in the second of ``since`` is kept
        if m is None or t is None or (since is not None and t < math.floor(since)):
            continue
        actions.append({"time": t, "from": None, "to": int(m.group(1)), "reason": m.group(2)})
    actions.sort(key=lambda a: a["time"])
    return NativeDecision(name, getattr(st, "desired_replicas", None) if st is not None else None,
                          current=getattr(st, "current_replicas", None) if st is not None else None,
                          time=_ts(getattr(st, "last_scale_time", None)) if st is not None else None,
                          reason=reason, stage=stage, metrics=hpa_metrics(st) if st is not None else {},
                          actions=actions, error=error,
                          source="the HPA's status and its SuccessfulRescale Events")
