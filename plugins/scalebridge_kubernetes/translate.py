"""A policy as an ``autoscaling/v2`` HorizontalPodAutoscaler, and back.

Fields as the API reference names them
(https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/horizontal-pod-autoscaler-v2/);
the behavior as "Configurable scaling behavior" describes it
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#configurable-scaling-behavior),
per-direction ``tolerance`` as in "Tolerance"
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#tolerance).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Optional, Union

from scalebridge.policy import _QUANTITY_PATTERN, Policy
from scalebridge.semantics.kubernetes import has_tolerance
from scalebridge.semantics.kubernetes_release import release
from scalebridge.units import exact
from scalebridge.translate.base import METRICS_KEY, Translator, TargetKey, pattern, source_of, valid_metric_sources
from scalebridge.translate.common import (drop_semantics, one_of, Losses, NativeError, Reader, as_policy, drop_controls,
                                          drop_unexpressed, num, path, yaml_document)

API_VERSION = "autoscaling/v2"
_KIND = {"resource": "Resource", "container_resource": "ContainerResource", "pods": "Pods",
         "object": "Object", "external": "External"}
_FIELD = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
          "Object": "object", "External": "external"}
_TYPE = {v: k for k, v in _KIND.items()}
#: the API groups of the workloads an HPA scales without saying more (the kubernetes
#: provider's built-in kinds)
_BUILTIN_KINDS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1"}
#: a DNS-1123 subdomain (object names) and label (namespaces), as the API server validates them
#: (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/)
_SUBDOMAIN = r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL = r"(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#: the keys of the kubernetes provider's metric sources (plugins/scalebridge_kubernetes/metrics.py)
SOURCE_KEYS = frozenset({"metric_name", "selector", "described_object"})
_OBJECT_KEYS = ("api_version", "kind", "name")

TARGET_KEYS: dict[str, TargetKey] = {
    "kind": TargetKey("the workload's kind", pattern(r"[A-Z][A-Za-z0-9]*", "a kind such as Deployment")),
    "name": TargetKey("the workload's name", pattern(_SUBDOMAIN, "a DNS-1123 subdomain such as web")),
    "namespace": TargetKey("the workload's namespace", pattern(_LABEL, "a DNS-1123 label such as shop")),
    "api_version": TargetKey("the workload's apiVersion",
                             pattern(r"([a-z0-9.-]+/)?v[0-9]+((alpha|beta)[0-9]+)?", "such as apps/v1")),
    "resource": TargetKey("the workload's resource (plural), as the run configuration's ref has it",
                          pattern(r"[a-z0-9.-]+", "a plural resource name such as deployments")),
    "kubernetes_version": TargetKey("the cluster's Kubernetes release (1.33-1.37): what its API server keeps of the "
                                    "HPA is said as losses (apply --native reads it from the server)",
                                    pattern(r"v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.+-]*)?",
                                            "a release such as 1.37")),
    METRICS_KEY: TargetKey("each policy metric's source, as a run configuration target's metrics:",
                           valid_metric_sources(SOURCE_KEYS, "kubernetes")),
}


def _target(t) -> dict:
    if t.type == "Utilization":
        return {"type": "Utilization", "averageUtilization": int(round(t.average_utilization))}
    if t.type == "AverageValue":
        return {"type": "AverageValue", "averageValue": num(t.average_value)}
    return {"type": "Value", "value": num(t.value)}


def workload_metadata(p: Policy, ref: Mapping[str, Any], losses: Losses, what: str) -> tuple[str, dict]:
    """The scaled workload's name (a placeholder and its note when ``--target name`` is
    missing) and the ``metadata`` of the autoscaler object ``what`` (an HPA, a
    ScaledObject): named as the policy, in the target's namespace or a note saying
    where it will go."""
    name = ref.get("name") or losses.placeholder("spec.scaleTargetRef.name",
                                                  "pass --target name (the workload's name)")
    meta: dict = {"name": p.name or name}
    if ref.get("namespace"):
        meta["namespace"] = ref["namespace"]
    else:
        losses.note("metadata.namespace", f"not set: {what} goes in the namespace kubectl applies it to, which "
                                          "must be the workload's (pass --target namespace to write it)")
    return name, meta


def render(policy: Union[Policy, dict], target_ref: Optional[Mapping[str, Any]] = None) -> tuple[dict, Losses]:
    p = as_policy(policy)
    losses = Losses()
    ref = dict(target_ref or {})
    name, meta = workload_metadata(p, ref, losses, "the HPA")
    kind = ref.get("kind") or losses.placeholder("spec.scaleTargetRef.kind",
                                                  "pass --target kind (Deployment, StatefulSet, …)", "Deployment")
    api = ref.get("api_version") or _BUILTIN_KINDS.get(kind) or losses.placeholder(
        "spec.scaleTargetRef.apiVersion", f"pass --target api_version (the group/version serving {kind})")
    spec: dict = {"scaleTargetRef": {"apiVersion": api, "kind": kind, "name": name}}
    if p.min_replicas is not None:
        spec["minReplicas"] = p.min_replicas
    if p.max_replicas is None:
        raise NativeError("max_replicas", "an HPA requires maxReplicas; the policy has no max_replicas")
    spec["maxReplicas"] = p.max_replicas
    metrics = []
    for i, m in enumerate(p.metrics or []):
        where = path("metrics", i)
        if not m.enabled:
            losses.add(where, "an HPA has no disabled metric; left out")
            continue
        if m.type == "load_balancing":
            losses.add(where, "Kubernetes has no load-balancing utilization metric; dropped")
            continue
        if m.type == "formula":
            continue   # drop_controls reports it
        t = m.target
        if t.type == "Utilization" and t.average_utilization is None:
            raise NativeError(path(where, "target", "average_utilization"),
                              "an HPA Utilization target must set averageUtilization")
        if t.type == "Utilization" and t.average_utilization != int(round(t.average_utilization)):
            losses.add(path(where, "target", "average_utilization"),
                       f"averageUtilization is an integer percent; {t.average_utilization:g} rounded to "
                       f"{int(round(t.average_utilization))}")
        if t.rate is not None:
            losses.add(path(where, "target", "rate"), "an HPA reads gauges, not counter rates; dropped")
        if m.disable_scale_in:
            losses.add(path(where, "disable_scale_in"), "an HPA metric cannot disable scale-in; dropped")
        if m.initialization_period_seconds is not None:
            losses.add(path(where, "initialization_period_seconds"),
                       "per-metric warm-up is the controller's --horizontal-pod-autoscaler-cpu-initialization-period; dropped")
        kind = _KIND[m.type]
        body: dict = {}
        if kind in ("Resource", "ContainerResource"):
            body["name"] = m.name
            if kind == "ContainerResource":
                body["container"] = m.container
        else:
            body["metric"] = _metric_identifier(m.name, source_of(ref, m.name))
            if kind == "Object":
                body["describedObject"] = _described_object(m.name, source_of(ref, m.name), where, losses)
        body["target"] = _target(t)
        metrics.append({"type": kind, _FIELD[kind]: body})
    if metrics:
        spec["metrics"] = metrics
    if spec.get("minReplicas") == 0 and not any(m["type"] in ("Object", "External") for m in metrics):
        # validateMetrics (pkg/apis/autoscaling/validation/validation.go), whatever the gate
        losses.add("min_replicas", "0 needs an Object or External metric in an HPA (\"must specify at least one "
                                   "Object or External metric to support scaling to zero replicas\"); written as 1")
        spec["minReplicas"] = 1
    keeps_tolerance = release_losses(p, spec.get("minReplicas") == 0, ref.get("kubernetes_version"), losses)
    behavior = _behavior(p, losses)
    if behavior is not None and not keeps_tolerance:   # not written where the API server drops it
        for rules in behavior.values():
            rules.pop("tolerance", None)
    if behavior is not None:
        spec["behavior"] = behavior
    drop_unexpressed(p, losses, {
        "rules": "an HPA has no threshold rules; dropped",
        "profiles": "an HPA has no instance profiles; dropped",
        "schedules": "an HPA has no scaling schedules; dropped",
        "scale_in_control": "an HPA has no scale-in control; dropped (behavior.scale_down policies limit the rate "
                            "per period instead)",
        "predictive": "an HPA does not forecast; dropped",
        "default_replicas": "an HPA keeps its size when metrics cannot be read; dropped",
        "allowed_replicas": "an HPA scales to any count; dropped",
        "initialization_period_seconds": "the controller's --horizontal-pod-autoscaler-cpu-initialization-period "
                                         "flag, not part of an HPA; dropped"})
    drop_controls(p, losses, "an HPA")
    drop_semantics(p, losses, "kubernetes", "an HPA")
    return {"apiVersion": API_VERSION, "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec}, losses


def _metric_identifier(name: str, source: Mapping[str, Any]) -> dict:
    """A Pods, Object or External metric's ``metric``: its name in the metrics API (the
    source's ``metric_name``, else the policy metric's) and label selector."""
    out: dict = {"name": source.get("metric_name") or name}
    if isinstance(source.get("selector"), Mapping):
        out["selector"] = dict(source["selector"])
    return out


def _described_object(name: str, source: Mapping[str, Any], where: str, losses: Losses) -> dict:
    """An Object metric's ``describedObject``: the source's ``described_object``; a
    policy does not name it, so what ``--target`` leaves out is a placeholder."""
    given = source.get("described_object") or {}
    how = f"pass --target metrics.{name}.source.described_object {{api_version, kind, name}}"
    return {"apiVersion": given.get("api_version") or losses.placeholder(path(where, "describedObject.apiVersion"),
                                                                          how, "v1"),
            "kind": given.get("kind") or losses.placeholder(path(where, "describedObject.kind"), how, "Service"),
            "name": given.get("name") or losses.placeholder(path(where, "describedObject.name"), how)}


def release_losses(p: Policy, zero: bool, version: Optional[str], losses: Losses) -> bool:
    """What the API server of ``version`` keeps of an HPA with this policy's fields that
    releases differ on: a per-direction ``tolerance`` is dropped without the
    ``HPAConfigurableTolerance`` gate (strategy.go ``dropDisabledFields``: beta, on, from
    1.35; alpha 1.33-1.34; no field before 1.33), and ``minReplicas: 0`` is refused without
    ``HPAScaleToZero`` (validation.go: "must be greater than or equal to 1"; beta, on, from
    1.37) — ``zero``: the HPA is written with ``minReplicas: 0``. Without a version, a note says which releases keep them. Whether the release
    keeps a tolerance."""
    tolerance = has_tolerance(p)
    if not (tolerance or zero):
        return True
    if version is None:
        if tolerance:
            losses.note("behavior.tolerance", "kept by Kubernetes 1.35+ (HPAConfigurableTolerance, beta); 1.33-1.34 "
                                              "drop it unless the alpha gate is on, older releases have no such "
                                              "field (pass --target kubernetes_version to check yours)")
        if zero:
            losses.note("spec.minReplicas", "0 is accepted by Kubernetes 1.37+ (HPAScaleToZero, beta); older API "
                                            "servers refuse it unless the alpha gate is on (pass --target "
                                            "kubernetes_version to check yours)")
        return True
    r = release(version, None)
    if tolerance and not r.configurable_tolerance:
        losses.add("behavior.tolerance", f"dropped by the API server of {r.name} (HPAConfigurableTolerance is off "
                                         "there: strategy.go dropDisabledFields); the HPA uses the controller's "
                                         "--horizontal-pod-autoscaler-tolerance")
    if zero and not r.scale_to_zero:
        losses.add("spec.minReplicas", f"0 is refused by the API server of {r.name} (\"must be greater than or "
                                       "equal to 1\": HPAScaleToZero is off there)")
    return r.configurable_tolerance


def _behavior(p: Policy, losses: Losses) -> Optional[dict]:
    b = p.behavior
    out: dict = {}
    for side, key in (("scale_up", "scaleUp"), ("scale_down", "scaleDown")):
        rules = getattr(b, side) if b is not None else None
        r: dict = {}
        if rules is not None:
            if rules.stabilization_window_seconds is not None:
                w = rules.stabilization_window_seconds
                r["stabilizationWindowSeconds"] = int(w)
                if w != int(w):
                    losses.add(path("behavior", side, "stabilization_window_seconds"),
                               f"whole seconds only; {w:g} truncated to {int(w)}")
            if rules.select_policy is not None:
                r["selectPolicy"] = rules.select_policy
            if rules.policies is not None:
                r["policies"] = []
                for k, sp in enumerate(rules.policies):
                    if sp.period_seconds != int(sp.period_seconds):
                        losses.add(path("behavior", side, "policies", k, "period_seconds"),
                                   f"whole seconds only; {sp.period_seconds:g} truncated")
                    r["policies"].append({"type": sp.type, "value": sp.value,
                                          "periodSeconds": int(sp.period_seconds)})
            if rules.tolerance is not None:
                r["tolerance"] = num(rules.tolerance)
        if p.tolerance is not None and "tolerance" not in r:
            r["tolerance"] = num(p.tolerance)
        if p.mode == "OFF" or (p.mode == "ONLY_SCALE_OUT" and side == "scale_down") or \
                (p.mode == "ONLY_SCALE_IN" and side == "scale_up"):
            r["selectPolicy"] = "Disabled"
        if rules is not None or r:
            out[key] = r
    if p.mode != "ON":
        sides = {"OFF": "scaleUp and scaleDown", "ONLY_SCALE_IN": "scaleUp"}.get(p.mode, "scaleDown")
        losses.add("mode", f"mode {p.mode} approximated as behavior {sides} selectPolicy Disabled "
                           "(the HPA then reports no recommendation in that direction)")
    if b is None and p.tolerance is not None:
        losses.add("tolerance", "written as per-direction behavior tolerance, which makes the HPA use the "
                                "behavior defaults in place of the behavior-less controller path")
    if b is None and not out:
        return None
    return out


def dump(obj: Union[dict, list]) -> str:
    docs = obj if isinstance(obj, list) else [obj]
    import yaml
    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)


# ----------------------------------------------------------------------------- import


def documents(text_or_obj: Any) -> list[tuple[str, dict]]:
    """The HPAs of a YAML stream (several documents, or a ``kind: List``), each with its JSON path root."""
    if isinstance(text_or_obj, str):
        import yaml
        docs = yaml_document(text_or_obj, "$", "YAML", lambda text: list(yaml.safe_load_all(text)))
    else:
        docs = text_or_obj if isinstance(text_or_obj, list) else [text_or_obj]
    out = []
    for i, d in enumerate(docs):
        if d is None:
            continue
        root = f"$[{i}]" if len(docs) > 1 else "$"
        if not isinstance(d, dict):
            raise NativeError(root, "expected a Kubernetes object")
        if d.get("kind") == "List":
            for k, item in enumerate(d.get("items") or []):
                out.append((f"{root}.items[{k}]", item))
            continue
        out.append((root, d))
    if not out:
        raise NativeError("$", "no HorizontalPodAutoscaler in the input")
    return out


def import_all(text_or_obj: Any) -> list[tuple[dict, Losses]]:
    return [_import_one(doc, root) for root, doc in documents(text_or_obj)]


def _import_one(doc: dict, root: str) -> tuple[dict, Losses]:
    losses = Losses()
    rd = Reader(losses, root)
    if doc.get("kind") != "HorizontalPodAutoscaler":
        raise NativeError(rd.where("kind"), f"expected HorizontalPodAutoscaler, got {doc.get('kind')!r}")
    api = doc.get("apiVersion")
    if not one_of(api, ("autoscaling/v2", "autoscaling/v2beta2", "autoscaling/v2beta1", "autoscaling/v1")):
        raise NativeError(rd.where("apiVersion"), f"unsupported apiVersion {api!r}; autoscaling/v2, "
                                                  "autoscaling/v2beta2, autoscaling/v2beta1 or autoscaling/v1")
    meta = rd.mapping(doc.get("metadata"), "metadata")
    spec = rd.mapping(doc.get("spec"), "spec")
    policy = workload_policy(rd, meta, spec, losses)
    mn = rd.count(spec.get("minReplicas"), "spec", "minReplicas")
    mx = rd.count(spec.get("maxReplicas"), "spec", "maxReplicas")
    if mx is None:
        raise NativeError(rd.where("spec", "maxReplicas"), "required field is missing")
    rd.ordered(1 if mn is None else mn, mx, ("spec", "minReplicas"), ("spec", "maxReplicas"))
    policy["min_replicas"] = 1 if mn is None else mn
    policy["max_replicas"] = mx
    if api == "autoscaling/v1":
        known = {"scaleTargetRef", "minReplicas", "maxReplicas", "targetCPUUtilizationPercentage"}
        rd.unknown(spec, known, "spec")
        cpu = rd.number(spec.get("targetCPUUtilizationPercentage"), "spec", "targetCPUUtilizationPercentage",
                        integer=True)
        policy["metrics"] = [{"type": "resource", "name": "cpu",
                              "target": {"type": "Utilization", "average_utilization": cpu or 80}}]
        return policy, losses
    v2beta1 = api == "autoscaling/v2beta1"
    rd.unknown(spec, {"scaleTargetRef", "minReplicas", "maxReplicas", "metrics"} | (set() if v2beta1 else {"behavior"}),
               "spec")
    metrics = []
    for i, m in enumerate(rd.listing(spec.get("metrics"), "spec", "metrics")):
        read = _metric_v2beta1 if v2beta1 else _metric
        metrics.append(read(rd, rd.mapping(m, "spec", "metrics", i), ("spec", "metrics", i)))
    if metrics:
        policy["metrics"] = metrics
    if "behavior" in spec:
        policy["behavior"] = _import_behavior(rd, rd.mapping(spec["behavior"], "spec", "behavior"), policy)
    return policy, losses


# autoscaling/v2beta1's metric sources: the target is a field per target type
# (https://github.com/kubernetes/api/blob/master/autoscaling/v2beta1/types.go: ResourceMetricSource
# targetAverageUtilization / targetAverageValue, PodsMetricSource targetAverageValue, ObjectMetricSource
# targetValue / averageValue with its object in `target`, ExternalMetricSource targetValue /
# targetAverageValue)
_V2BETA1_FIELDS = {
    "Resource": {"name", "targetAverageUtilization", "targetAverageValue"},
    "ContainerResource": {"name", "container", "targetAverageUtilization", "targetAverageValue"},
    "Pods": {"metricName", "targetAverageValue", "selector"},
    "Object": {"target", "metricName", "targetValue", "averageValue", "selector"},
    "External": {"metricName", "metricSelector", "targetValue", "targetAverageValue"},
}
_V2BETA1_TARGETS = (("targetAverageUtilization", "Utilization", "average_utilization"),
                    ("targetAverageValue", "AverageValue", "average_value"),
                    ("averageValue", "AverageValue", "average_value"),
                    ("targetValue", "Value", "value"))


def _metric_source(rd: Reader, m: dict, at: tuple) -> tuple[str, dict, tuple]:
    """A metric's type, its source object (``resource``, ``pods`` …) and that
    object's path: the part every autoscaling API version shares."""
    kind = m.get("type")
    if not one_of(kind, _FIELD):
        raise NativeError(rd.where(*at, "type"), f"unknown metric type {kind!r}; valid: {', '.join(_FIELD)}")
    rd.unknown(m, {"type", _FIELD[kind]}, *at)
    body = rd.mapping(m.get(_FIELD[kind]), *at, _FIELD[kind])
    if not body:
        raise NativeError(rd.where(*at, _FIELD[kind]), f"required for a {kind} metric")
    at = at + (_FIELD[kind],)
    return kind, body, at


def _metric_v2beta1(rd: Reader, m: dict, at: tuple) -> dict:
    kind, body, at = _metric_source(rd, m, at)
    rd.unknown(body, _V2BETA1_FIELDS[kind], *at)
    out: dict = {"type": _TYPE[kind]}
    key = "name" if kind in ("Resource", "ContainerResource") else "metricName"
    out["name"] = rd.string(body.get(key), *at, key)
    if not out["name"]:
        raise NativeError(rd.where(*at, key), "required field is missing: the metric's name")
    if kind == "ContainerResource":
        out["container"] = rd.string(body.get("container"), *at, "container")
    for sel in ("selector", "metricSelector"):
        if body.get(sel):
            rd.losses.add(rd.where(*at, sel), "a metric's label selector is the metric source's business; dropped")
    if kind == "Object" and body.get("target"):
        rd.losses.note(rd.where(*at, "target"), "the described object is the metric source's business, "
                                                "not part of a policy")
    given = [(f, tt, snake) for f, tt, snake in _V2BETA1_TARGETS if f in body]
    if len(given) != 1:
        raise NativeError(rd.where(*at), "expected exactly one of " + ", ".join(
            f for f, _, _ in _V2BETA1_TARGETS if f in _V2BETA1_FIELDS[kind]))
    f, tt, snake = given[0]
    v = body[f]
    if tt == "Utilization":
        v = rd.number(v, *at, f, integer=True)
    elif isinstance(v, str):
        if not re.match(_QUANTITY_PATTERN, v):
            raise NativeError(rd.where(*at, f), f"not a quantity: {v!r}")
    out["target"] = {"type": tt, snake: v}
    return out


def _metric(rd: Reader, m: dict, at: tuple) -> dict:
    kind, body, at = _metric_source(rd, m, at)
    out: dict = {"type": _TYPE[kind]}
    if one_of(kind, ("Resource", "ContainerResource")):
        rd.unknown(body, {"name", "target", "container"} if kind == "ContainerResource" else {"name", "target"}, *at)
        out["name"] = rd.string(body.get("name"), *at, "name")
        if kind == "ContainerResource":
            out["container"] = rd.string(body.get("container"), *at, "container")
    else:
        known = {"metric", "target", "describedObject"} if kind == "Object" else {"metric", "target"}
        rd.unknown(body, known, *at)
        metric = rd.mapping(body.get("metric"), *at, "metric")
        out["name"] = rd.string(metric.get("name"), *at, "metric", "name")
        if metric.get("selector"):
            rd.losses.add(rd.where(*at, "metric", "selector"),
                          "a metric's label selector is the metric source's business; dropped")
        if kind == "Object" and body.get("describedObject"):
            rd.losses.note(rd.where(*at, "describedObject"), "the described object is the metric source's "
                                                           "business, not part of a policy")
    if not out.get("name"):
        raise NativeError(rd.where(*at, "name" if kind in ("Resource", "ContainerResource") else "metric"),
                          "required field is missing: the metric's name")
    t = rd.mapping(body.get("target"), *at, "target")
    rd.unknown(t, {"type", "averageUtilization", "averageValue", "value"}, *at, "target")
    tt = t.get("type")
    field = {"Utilization": "averageUtilization", "AverageValue": "averageValue", "Value": "value"}.get(tt) if isinstance(tt, str) else None
    if field is None:
        raise NativeError(rd.where(*at, "target", "type"), f"expected Utilization, AverageValue or Value, got {tt!r}")
    v = t.get(field)
    if v is None:
        raise NativeError(rd.where(*at, "target", field), f"required for a {tt} target")
    if tt == "Utilization":
        v = rd.number(v, *at, "target", field, integer=True)
    elif isinstance(v, str):
        if not re.match(_QUANTITY_PATTERN, v):
            raise NativeError(rd.where(*at, "target", field), f"not a quantity: {v!r}")
    snake = {"averageUtilization": "average_utilization", "averageValue": "average_value", "value": "value"}[field]
    out["target"] = {"type": tt, snake: v}
    return out


def _import_behavior(rd: Reader, b: dict, policy: dict) -> dict:
    rd.unknown(b, {"scaleUp", "scaleDown"}, "spec", "behavior")
    out: dict = {}
    for key, side in (("scaleUp", "scale_up"), ("scaleDown", "scale_down")):
        if key not in b:
            continue
        at = ("spec", "behavior", key)
        r = rd.mapping(b[key], *at)
        rd.unknown(r, {"stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"}, *at)
        s: dict = {}
        if r.get("stabilizationWindowSeconds") is not None:
            s["stabilization_window_seconds"] = rd.number(r["stabilizationWindowSeconds"], *at,
                                                          "stabilizationWindowSeconds", integer=True)
        if r.get("selectPolicy") is not None:
            if not one_of(r["selectPolicy"], ("Max", "Min", "Disabled")):
                raise NativeError(rd.where(*at, "selectPolicy"), f"expected Max, Min or Disabled, got "
                                                                 f"{r['selectPolicy']!r}")
            s["select_policy"] = r["selectPolicy"]
        if r.get("policies") is not None:
            s["policies"] = []
            for k, sp in enumerate(rd.listing(r["policies"], *at, "policies")):
                sp = rd.mapping(sp, *at, "policies", k)
                rd.unknown(sp, {"type", "value", "periodSeconds"}, *at, "policies", k)
                if not one_of(sp.get("type"), ("Pods", "Percent")):
                    raise NativeError(rd.where(*at, "policies", k, "type"),
                                      f"expected Pods or Percent, got {sp.get('type')!r}")
                s["policies"].append({"type": sp["type"],
                                      "value": rd.number(sp.get("value"), *at, "policies", k, "value", integer=True),
                                      "period_seconds": rd.number(sp.get("periodSeconds"), *at, "policies", k,
                                                                  "periodSeconds", integer=True)})
        if r.get("tolerance") is not None:
            s["tolerance"] = _tolerance(rd, r["tolerance"], *at, "tolerance")
        out[side] = s
    return out


def _tolerance(rd: Reader, v: Any, *at: object) -> Optional[float]:
    """``HPAScalingRules.tolerance``: a ``resource.Quantity`` (KEP-4951), which the API
    server gives back in canonical form ("50m") and a manifest may write as a number."""
    if isinstance(v, str) and re.fullmatch(_QUANTITY_PATTERN, v.strip()):
        return num(float(exact(v.strip())))
    return rd.number(v, *at)


class HpaTranslator(Translator):
    """``--to kubernetes``: an ``autoscaling/v2`` HorizontalPodAutoscaler (YAML)."""

    name = "kubernetes"
    provider = "kubernetes"
    summary = "an autoscaling/v2 HorizontalPodAutoscaler (YAML); imports v2, v2beta2, v2beta1 and v1"
    target_keys = TARGET_KEYS

    def render(self, policy: Policy, target: Mapping[str, Any]) -> tuple[Any, Losses]:
        return render(policy, target)

    def dump(self, native: Any) -> str:
        return dump(native)

    def import_all(self, text: str) -> list[tuple[dict, Losses]]:
        return import_all(text)

    def apply(self, name: str, target: Any, policy: Policy, dry_run: bool, say: Callable[[str], None],
              metrics: Mapping[str, Any]) -> bool:
        from .apply import apply_native   # the SDK calls: imported only by apply
        return apply_native(self, name, target, policy, dry_run, say, metrics)


def workload_policy(rd: Reader, meta: dict, spec: dict, losses: Losses) -> dict:
    """The start of a policy read from a workload autoscaler (an HPA, a KEDA
    ScaledObject): the ``kubernetes`` semantics, the object's name, and a note that
    its ``scaleTargetRef`` is the run configuration's ``ref``."""
    policy: dict = {"semantics": "kubernetes"}
    name = rd.string(meta.get("name"), "metadata", "name")
    if name:
        policy["name"] = name
    if "scaleTargetRef" in spec:
        losses.note(rd.where("spec", "scaleTargetRef"), "the scaled workload is the run configuration's `ref`, "
                                                        "not part of a policy")
    return policy
