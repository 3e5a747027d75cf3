"""A policy as a KEDA ``keda.sh/v1alpha1`` ScaledObject, and back.

Fields as KEDA 2.20's ScaledObject specification names them
(https://keda.sh/docs/2.20/reference/scaledobject-spec/; kedacore/keda-docs
content/docs/2.20/reference/scaledobject-spec.md) and its CRD
(kedacore/keda v2.20.2 config/crd/bases/keda.sh_scaledobjects.yaml, kept as test data
in tests/plugins/kubernetes/keda/data/); the scaling phases, pause annotations and
scalingModifiers as "Scaling Deployments" describes them
(https://keda.sh/docs/2.20/concepts/scaling-deployments/); each trigger's metadata as
its scaler's page names it (https://keda.sh/docs/2.20/scalers/: ``cpu``, ``memory``,
``prometheus``, ``aws-cloudwatch``, ``gcp-stackdriver``, ``azure-monitor``,
``external``).

KEDA scales 1 ↔ N with an HPA it makes from the ScaledObject (its triggers as External
metrics, cpu and memory as Resource metrics, ``advanced.horizontalPodAutoscalerConfig.
behavior`` as the HPA's behavior: controllers/keda/hpa.go) and 0 ↔ 1 itself: an
imported ScaledObject is a policy with the ``kubernetes`` semantics and the neutral
controls (docs/policy.md) for what KEDA adds — fallback, formulas, the activation phase.

Which trigger a policy metric becomes: ``cpu``/``memory`` for a ``resource`` or
``container_resource`` metric of that name; otherwise its ``--target`` source
(``metrics.NAME.source``, as a run configuration target's ``metrics:``) says —
``metric_source``/``query`` (the Prometheus metric source, its server's ``url`` from
``--target metric_sources``) a ``prometheus`` trigger; an AWS source's keys
(``namespace``, ``dimensions``, ``statistic`` …) ``aws-cloudwatch``; a GCE source's
(``metric_type`` …) ``gcp-stackdriver``; an Azure source's (``metric_namespace``,
``resource_uri`` …) ``azure-monitor``; none of these ``external`` (KEDA's gRPC external
scaler, ``scaler_address``).
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Mapping, Optional, Union

from scalebridge.policy import _QUANTITY_PATTERN, Policy
from scalebridge.units import exact
from . import translate as hpa
from scalebridge.translate.base import METRICS_KEY, Translator, TargetKey, pattern, source_of, valid_metric_sources
from scalebridge.translate.common import (Losses, NativeError, Reader, as_policy, drop_semantics, drop_unexpressed, num,
                                          one_of, path, yaml_document)
from .keda_expr import Untranslatable, cel_to_expr, expr_to_cel

API_VERSION = "keda.sh/v1alpha1"
KIND = "ScaledObject"
#: KEDA's defaults (scaledobject-spec.md: "Optional. Default: …")
DEFAULT_POLLING_INTERVAL = 30
DEFAULT_COOLDOWN_PERIOD = 300
DEFAULT_MIN_REPLICA_COUNT = 0
DEFAULT_MAX_REPLICA_COUNT = 100
#: the composite metric of scalingModifiers (apis/keda/v1alpha1/scaledobject_types.go CompositeMetricName)
COMPOSITE = "composite-metric"
#: the pause annotations (concepts/scaling-deployments.md, "Pausing autoscaling")
PAUSED = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"
PAUSED_SCALE_IN = "autoscaling.keda.sh/paused-scale-in"
PAUSED_SCALE_OUT = "autoscaling.keda.sh/paused-scale-out"
#: force activation (concepts/scaling-deployments.md, "Forcing activation"; KEDA 2.18+)
FORCE_ACTIVATION = "autoscaling.keda.sh/force-activation"
#: fallback.behavior (CRD enum) <-> the policy's; scalingModifiers is KEDA 2.20's per-trigger
#: fallback inside the formula (reference/scaledobject-spec.md, "scalingModifiers behavior")
_FALLBACK = {"static": "static", "current_replicas": "currentReplicas",
             "current_replicas_if_higher": "currentReplicasIfHigher",
             "current_replicas_if_lower": "currentReplicasIfLower", "formula": "scalingModifiers"}
_FALLBACK_BACK = {v: k for k, v in _FALLBACK.items()}

#: the keys of every metric source a trigger is written from (the Prometheus metric source, the
#: aws, gce, azure and kubernetes providers' sources: docs/run.md), and the external scaler's address
_PROMETHEUS_KEYS = {"metric_source", "query", "member_label"}
_AWS_KEYS = {"namespace", "dimensions", "statistic", "extended_statistic", "period_seconds", "unit"}
_GCE_KEYS = {"metric_type", "aligner", "resource_type", "scale", "project", "max_rate_per_instance"}
_AZURE_KEYS = {"metric_namespace", "resource_uri", "aggregation", "interval_seconds"}
SOURCE_KEYS = frozenset(_PROMETHEUS_KEYS | _AWS_KEYS | _GCE_KEYS | _AZURE_KEYS |
                        {"metric_name", "filter", "per_member", "selector", "described_object", "scaler_address"})


def _sources(v: Any) -> Optional[str]:
    if not isinstance(v, Mapping):
        return "expected {NAME: {type: prometheus, url: URL}}, as a run configuration's metric_sources:"
    for name, entry in v.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("url", ""), str):
            return f"{name}: expected {{type: prometheus, url: URL}}"
    return None


def _count(v: Any) -> Optional[str]:
    return None if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else f"a count, got {v!r}"


TARGET_KEYS: dict[str, TargetKey] = {
    "kind": hpa.TARGET_KEYS["kind"],
    "name": hpa.TARGET_KEYS["name"],
    "namespace": hpa.TARGET_KEYS["namespace"],
    "api_version": hpa.TARGET_KEYS["api_version"],
    "kubernetes_version": hpa.TARGET_KEYS["kubernetes_version"],
    "sync_period_seconds": TargetKey("the run configuration's sync_period_seconds: the ScaledObject's pollingInterval",
                                     lambda v: None if isinstance(v, int) and not isinstance(v, bool) and v >= 1
                                     else f"whole seconds, 1 or more, got {v!r}"),
    "metric_sources": TargetKey("the run configuration's metric_sources: (a prometheus trigger's serverAddress is "
                                "its url)", _sources),
    "region": TargetKey("the AWS region of aws-cloudwatch triggers (awsRegion)",
                        pattern(r"[a-z]{2}(-[a-z]+)+-[0-9]", "such as eu-west-1")),
    "project": TargetKey("the GCP project of gcp-stackdriver triggers (projectId)",
                         pattern(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", "a project ID such as shop-prod")),
    "tenant_id": TargetKey("the Azure tenant of azure-monitor triggers (tenantId)",
                           pattern(r"[0-9a-fA-F-]{36}", "a GUID")),
    "paused": TargetKey("the run configuration target's paused: written as autoscaling.keda.sh/paused",
                        lambda v: None if isinstance(v, bool) else f"true or false, got {v!r}"),
    "paused_replicas": TargetKey("scalebridge pause --replicas N: written as autoscaling.keda.sh/paused-replicas",
                                 _count),
    METRICS_KEY: TargetKey("each policy metric's source, as a run configuration target's metrics:",
                           valid_metric_sources(SOURCE_KEYS, "keda")),
}


def _number(v: Any) -> str:
    """A policy number or quantity as a scaler's float metadata (``"100.5"``; ``500m`` → ``"0.5"``)."""
    x = exact(v)
    f = float(x)
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


def _kind_of(m, source: Mapping[str, Any]) -> str:
    keys = set(source)
    if m.type in ("resource", "container_resource") and m.name in ("cpu", "memory"):
        return m.name
    if keys & {"metric_source", "query"}:
        return "prometheus"
    if keys & _AZURE_KEYS:
        return "azure-monitor"
    if keys & _GCE_KEYS:
        return "gcp-stackdriver"
    if keys & _AWS_KEYS:
        return "aws-cloudwatch"
    return "external"


# ----------------------------------------------------------------------------- render


def render(policy: Union[Policy, dict], target_ref: Optional[Mapping[str, Any]] = None) -> tuple[dict, Losses]:
    p = as_policy(policy)
    losses = Losses()
    ref = dict(target_ref or {})
    name, meta = hpa.workload_metadata(p, ref, losses, "a ScaledObject")
    target: dict = {"name": name}
    kind = ref.get("kind")
    if kind and (kind != "Deployment" or ref.get("api_version")):
        target = {"apiVersion": ref.get("api_version") or hpa._BUILTIN_KINDS.get(kind) or losses.placeholder(
            "spec.scaleTargetRef.apiVersion", f"pass --target api_version (the group/version serving {kind})"),
            "kind": kind, "name": name}
    spec: dict = {"scaleTargetRef": target}
    if ref.get("sync_period_seconds") is not None:
        spec["pollingInterval"] = ref["sync_period_seconds"]
    annotations = _pause(p, ref, losses)
    if annotations:
        meta["annotations"] = annotations
    _bounds(p, spec, losses)
    triggers, formula = _triggers(p, ref, losses)
    fb = _fallback(p, losses)
    if fb is not None:
        if fb.get("behavior") == "scalingModifiers" and formula is None:
            # the webhook: "scalingModifiers fallback behavior requires scalingModifiers.formula to be defined"
            del fb["behavior"]
            losses.add(path("fallback", "behavior"), "formula: the policy's formula is not written (above), and "
                                                     "KEDA's scalingModifiers fallback needs one; written as static")
        spec["fallback"] = fb
    if not p.invalid_values_as_zero and any(m.type not in ("resource", "container_resource", "formula")
                                            for m in p.metrics or ()):
        losses.note("invalid_values_as_zero", "KEDA >= 2.20.2 reads a negative, NaN or infinite scaler value as 0 "
                                              "(kedacore/keda#7889); this policy makes it an invalid metric")
    advanced: dict = {}
    behavior = _behavior(p, losses)
    # the HPA KEDA creates gets this behavior: what the cluster's API server keeps of it
    # (KEDA's own minimum is the HPA's 1, so minReplicaCount 0 is no HPA field)
    if not hpa.release_losses(p, False, ref.get("kubernetes_version"), losses) and behavior is not None:
        for side in behavior.values():
            side.pop("tolerance", None)
    if behavior is not None:
        advanced["horizontalPodAutoscalerConfig"] = {"behavior": behavior}
    if formula is not None:
        advanced["scalingModifiers"] = formula
    if advanced:
        spec["advanced"] = advanced
    if not triggers and p.metrics is None:
        # the HPA's default metric (autoscaling/v2 SetDefaults: 80% CPU), which a ScaledObject must state
        triggers = [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "80"}}]
        losses.note("metrics", "the policy states none: written as the HPA's default, cpu Utilization 80 "
                               "(a ScaledObject needs a trigger)")
    if not triggers:
        raise NativeError("metrics", "a ScaledObject needs at least one trigger (spec.triggers minItems 1); the "
                                     "policy has no metric KEDA can read")
    spec["triggers"] = triggers
    drop_semantics(p, losses, "kubernetes", "KEDA's HPA")
    drop_unexpressed(p, losses, {
        "rules": "KEDA has no threshold rules; dropped",
        "profiles": "KEDA has no instance profiles; dropped",
        "schedules": "KEDA has no scaling schedules here (its cron scaler sets a count, not a minimum); dropped",
        "scale_in_control": "KEDA has no scale-in control; dropped (behavior.scale_down policies limit the rate "
                            "per period instead)",
        "predictive": "KEDA does not forecast; dropped",
        "default_replicas": "KEDA keeps its size when metrics cannot be read, without fallback; dropped",
        "allowed_replicas": "KEDA scales to any count; dropped",
        "initialization_period_seconds": "the HPA controller's --horizontal-pod-autoscaler-cpu-initialization-period "
                                         "flag, not part of a ScaledObject; dropped"})
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta, "spec": spec}, losses


def _pause(p: Policy, ref: Mapping[str, Any], losses: Losses) -> dict:
    """``mode`` and the target's pause as KEDA's annotations: OFF is ``paused`` (KEDA holds
    the current count), ONLY_SCALE_OUT ``paused-scale-in`` (the HPA's scale-down select policy
    Disabled, and no scale to zero), ONLY_SCALE_IN ``paused-scale-out`` (scale-up Disabled, no
    scale from zero): concepts/scaling-deployments.md, "Pausing autoscaling" (KEDA 2.18+);
    ``force_activation`` the ``force-activation`` annotation ("Forcing activation")."""
    out: dict = {}
    if p.mode == "OFF" or ref.get("paused"):
        out[PAUSED] = "true"
    if p.mode == "ONLY_SCALE_OUT":
        out[PAUSED_SCALE_IN] = "true"
    if p.mode == "ONLY_SCALE_IN":
        out[PAUSED_SCALE_OUT] = "true"
    if p.force_activation:
        out[FORCE_ACTIVATION] = "true"
    if ref.get("paused_replicas") is not None:
        out[PAUSED_REPLICAS] = str(ref["paused_replicas"])
    return out


def _bounds(p: Policy, spec: dict, losses: Losses) -> None:
    if p.min_replicas is None:
        spec["minReplicaCount"] = 1
        losses.note("minReplicaCount", "the policy states no min_replicas: written as 1, the HPA's default "
                                       "(KEDA's own default is 0: scale to zero)")
    else:
        spec["minReplicaCount"] = p.min_replicas
    if p.max_replicas is None:
        losses.add("max_replicas", f"the policy states none: KEDA then takes maxReplicaCount "
                                   f"{DEFAULT_MAX_REPLICA_COUNT}")
    elif p.max_replicas < 1:
        raise NativeError("max_replicas", "KEDA's maxReplicaCount is 1 or more")
    else:
        spec["maxReplicaCount"] = p.max_replicas
    if p.idle_replicas is not None:
        spec["idleReplicaCount"] = p.idle_replicas
        if p.idle_replicas != 0:
            losses.note("idle_replicas", "KEDA supports only idleReplicaCount 0 (scaledobject-spec.md: \"Due to "
                                         "limitations in HPA controller the only supported value for this property "
                                         "is 0\")")
    if p.scale_to_zero_delay_seconds is not None:
        d = p.scale_to_zero_delay_seconds
        spec["cooldownPeriod"] = int(d)
        if d != int(d):
            losses.add("scale_to_zero_delay_seconds", f"whole seconds only; {d:g} truncated to {int(d)}")
    if p.initial_scale_to_zero_delay_seconds is not None:
        d = p.initial_scale_to_zero_delay_seconds
        spec["initialCooldownPeriod"] = int(d)
        if d != int(d):
            losses.add("initial_scale_to_zero_delay_seconds", f"whole seconds only; {d:g} truncated to {int(d)}")
        losses.note("initial_scale_to_zero_delay_seconds", "KEDA counts initialCooldownPeriod from the "
                                                           "ScaledObject's creation, scalebridge from its first "
                                                           "decision on the target")
    from scalebridge.policy import uses_activation
    if p.min_replicas == 0 and not uses_activation(p):
        losses.add("min_replicas", "0 without an activation key: KEDA scales to and from zero on its activation "
                                   "phase (every activation threshold 0, cooldownPeriod 300), which the policy "
                                   "leaves to the provider")


def _triggers(p: Policy, ref: Mapping[str, Any], losses: Losses) -> tuple[list, Optional[dict]]:
    metrics = p.metrics or []
    formulas = [(i, m) for i, m in enumerate(metrics) if m.type == "formula"]
    formula = None
    named: set = set()
    if formulas:
        i, m = formulas[0]
        for k, _ in formulas[1:]:
            losses.add(path("metrics", k), "KEDA has one formula (advanced.scalingModifiers); dropped")
        try:
            text = cel_to_expr(m.expression)
        except Untranslatable as e:
            losses.add(path("metrics", i, "expression"), f"not expressible as KEDA's expr formula ({e}); "
                                                         "the formula is dropped")
        else:
            from scalebridge.cel import compile_formula
            nullable = p.fallback is not None and p.fallback.behavior == "formula"
            named = set(compile_formula(m.expression, tuple(x.name for x in metrics if x.type != "formula"),
                                        nullable).references)
            formula = {"formula": text, "target": _number(m.target.average_value if m.target.type == "AverageValue"
                                                          else m.target.value),
                       "metricType": m.target.type}
            if m.activation_threshold is not None:
                formula["activationTarget"] = _number(m.activation_threshold)
            if m.name != COMPOSITE:
                losses.note(path("metrics", i, "name"), f"KEDA names the formula's metric {COMPOSITE!r}")
    triggers = []
    for i, m in enumerate(metrics):
        where = path("metrics", i)
        if m.type == "formula":
            continue
        source = source_of(ref, m.name)
        kind = _kind_of(m, source)
        resource = kind in ("cpu", "memory")
        if formula is not None and not resource and m.name not in named:
            if m.enabled:
                losses.add(where, f"KEDA's composite metric replaces every trigger but cpu and memory "
                                  f"(controllers/keda/hpa.go): {m.name}, which the formula does not name, is "
                                  "not used")
        elif not m.enabled:
            losses.add(where, "KEDA has no disabled trigger; left out")
            continue
        if m.type == "load_balancing":
            losses.add(where, "KEDA has no load-balancing utilization metric; dropped")
            continue
        if m.type in ("resource", "container_resource") and not resource:
            losses.add(where, f"KEDA reads only the cpu and memory resources; {m.name} dropped")
            continue
        t = m.target
        if t.rate is not None:
            losses.add(path(where, "target", "rate"), "KEDA reads gauges, not counter rates; dropped")
        if m.disable_scale_in:
            losses.add(path(where, "disable_scale_in"), "a KEDA trigger cannot disable scale-in; dropped")
        if m.initialization_period_seconds is not None:
            losses.add(path(where, "initialization_period_seconds"), "KEDA has no per-trigger warm-up; dropped")
        if m.type in ("pods", "object"):
            losses.add(path(where, "type"), f"KEDA's triggers are External metrics: this {m.type} metric is "
                                            "written as one (its value a total, not per pod or of an object)")
        if resource:
            trigger = _resource_trigger(m, where, losses)
        elif any(t.get("name") == m.name for t in triggers):
            losses.add(where, f"KEDA's trigger names are unique (ValidateTriggers: a name 'defined multiple times' "
                              f"is refused), and another trigger is named {m.name!r}; dropped")
            continue
        else:
            trigger = {"type": kind, "name": m.name}
            if t.type == "Value":
                trigger["metricType"] = "Value"
            trigger["metadata"] = _METADATA[kind](m, source, ref, where, losses,
                                                  path("spec", "triggers", len(triggers), "metadata"))
        triggers.append(trigger)
    return triggers, formula


def _resource_trigger(m, where: str, losses: Losses) -> dict:
    """cpu and memory (scalers/cpu.md, memory.md): ``metricType`` Utilization or
    AverageValue and ``metadata.value``; ``containerName`` for one container."""
    t = m.target
    if t.type == "Utilization":
        if t.average_utilization is None:
            raise NativeError(path(where, "target", "average_utilization"),
                              "KEDA's cpu and memory triggers need a value (metadata.value)")
        u = t.average_utilization
        if u != int(round(u)):
            losses.add(path(where, "target", "average_utilization"),
                       f"a Utilization value is an integer percent; {u:g} rounded to {int(round(u))}")
        value = str(int(round(u)))
    else:
        value = str(num(t.average_value))
    md = {"value": value}
    if m.type == "container_resource":
        md["containerName"] = m.container
    if m.activation_threshold is not None:
        losses.add(path(where, "activation_threshold"), "KEDA's cpu and memory scalers have no activation value "
                                                         "(they are always active); dropped")
    return {"type": m.name, "metricType": t.type, "metadata": md}


def _target_value(m) -> str:
    t = m.target
    return _number(t.average_value if t.type == "AverageValue" else t.value)


def _activation(m, md: dict, key: str) -> None:
    if m.activation_threshold is not None:
        md[key] = _number(m.activation_threshold)


def _unused(source: Mapping[str, Any], keys: tuple, kind: str, where: str, losses: Losses) -> None:
    for k in keys:
        if source.get(k) not in (None, False):
            losses.add(path(where, "source", k), f"a {kind} trigger has no such setting; dropped")


def _prometheus(m, source, ref, where, losses, nat) -> dict:
    """scalers/prometheus.md: ``serverAddress``, ``query``, ``threshold``, ``activationThreshold``."""
    server = None
    named = source.get("metric_source")
    if named is not None:
        server = ((ref.get("metric_sources") or {}).get(named) or {}).get("url")
    md = {"serverAddress": server or losses.placeholder(
        path(nat, "serverAddress"), f"pass --target metric_sources.{named or 'NAME'}.url (the Prometheus server's "
                                    "base URL), as the run configuration's metric_sources: has it"),
          "query": source.get("query") or losses.placeholder(path(nat, "query"),
                                                             f"pass --target metrics.{m.name}.source.query"),
          "threshold": _target_value(m)}
    _activation(m, md, "activationThreshold")
    _unused(source, ("member_label", "per_member"), "prometheus", where, losses)
    return md


def _cloudwatch(m, source, ref, where, losses, nat) -> dict:
    """scalers/aws-cloudwatch.md: ``namespace``, ``metricName``, ``dimensionName`` /
    ``dimensionValue`` (``;``-separated), ``metricStat``, ``metricStatPeriod``, ``metricUnit``,
    ``awsRegion``, ``targetMetricValue``, ``activationTargetMetricValue``."""
    md: dict = {"namespace": source.get("namespace") or losses.placeholder(
        path(nat, "namespace"), f"pass --target metrics.{m.name}.source.namespace"),
        "metricName": source.get("metric_name") or m.name}
    dims = source.get("dimensions") or {}
    if dims:
        md["dimensionName"] = ";".join(str(k) for k in dims)
        md["dimensionValue"] = ";".join(str(v) for v in dims.values())
        if any("{auto_scaling_group}" in str(v) for v in dims.values()):
            losses.add(path(where, "source", "dimensions"), "{auto_scaling_group} is the AWS provider's target; "
                                                            "KEDA has none: written as it is")
    if source.get("extended_statistic"):
        md["metricStat"] = str(source["extended_statistic"]).lower().replace("percentile", "p")
    elif source.get("statistic"):
        md["metricStat"] = source["statistic"]
    if source.get("period_seconds") is not None:
        md["metricStatPeriod"] = str(int(source["period_seconds"]))
    if source.get("unit"):
        md["metricUnit"] = source["unit"]
    md["awsRegion"] = ref.get("region") or losses.placeholder(path(nat, "awsRegion"),
                                                              "pass --target region (the metric's AWS region)")
    md["targetMetricValue"] = _target_value(m)
    _activation(m, md, "activationTargetMetricValue")
    _unused(source, ("per_member",), "aws-cloudwatch", where, losses)
    return md


_METRIC_TYPE = re.compile(r'^\s*metric\.type\s*=\s*"([^"]+)"\s*(?:AND\s+(.*))?$', re.S)


def _stackdriver(m, source, ref, where, losses, nat) -> dict:
    """scalers/gcp-stackdriver.md: ``projectId``, ``filter`` (the metric type and the
    source's filter), ``targetValue``, ``activationTargetValue``, ``alignmentAligner``."""
    mt = source.get("metric_type") or losses.placeholder(path(nat, "filter"),
                                                         f"pass --target metrics.{m.name}.source.metric_type")
    flt = f'metric.type="{mt}"' + (f" AND {source['filter']}" if source.get("filter") else "")
    md = {"projectId": source.get("project") or ref.get("project") or losses.placeholder(
        path(nat, "projectId"), "pass --target project (the GCP project holding the metric)"),
        "filter": flt, "targetValue": _target_value(m)}
    _activation(m, md, "activationTargetValue")
    if source.get("aligner"):
        md["alignmentAligner"] = str(source["aligner"]).lower().removeprefix("align_")
    _unused(source, ("per_member", "resource_type", "scale", "max_rate_per_instance"), "gcp-stackdriver", where,
            losses)
    return md


_ARM_ID = re.compile(r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/(.+)$", re.I)


def _azure_monitor(m, source, ref, where, losses, nat) -> dict:
    """scalers/azure-monitor.md: ``resourceURI`` (``provider/type/name``), ``subscriptionId``,
    ``resourceGroupName``, ``tenantId``, ``metricName``, ``metricNamespace``,
    ``metricAggregationType``, ``metricFilter``, ``metricAggregationInterval`` (h:m:s),
    ``targetValue``, ``activationTargetValue``."""
    how = f"pass --target metrics.{m.name}.source.resource_uri (the resource's full ARM id)"
    arm = _ARM_ID.match(source.get("resource_uri") or "")
    md: dict = {"resourceURI": arm.group(3) if arm else losses.placeholder(path(nat, "resourceURI"), how),
                "tenantId": ref.get("tenant_id") or losses.placeholder(path(nat, "tenantId"),
                                                                       "pass --target tenant_id"),
                "subscriptionId": arm.group(1) if arm else losses.placeholder(path(nat, "subscriptionId"), how),
                "resourceGroupName": arm.group(2) if arm else losses.placeholder(path(nat, "resourceGroupName"),
                                                                                  how),
                "metricName": source.get("metric_name") or m.name}
    if source.get("metric_namespace"):
        md["metricNamespace"] = source["metric_namespace"]
    if source.get("aggregation"):
        md["metricAggregationType"] = source["aggregation"]
    if source.get("filter"):
        md["metricFilter"] = source["filter"]
    if source.get("interval_seconds") is not None:
        s = int(source["interval_seconds"])
        md["metricAggregationInterval"] = f"{s // 3600}:{s % 3600 // 60}:{s % 60}"
    md["targetValue"] = _target_value(m)
    _activation(m, md, "activationTargetValue")
    _unused(source, ("per_member",), "azure-monitor", where, losses)
    return md


def _external(m, source, ref, where, losses, nat) -> dict:
    """scalers/external.md: ``scalerAddress``; "the entire metadata object is passed to the
    external scaler", which reports the metric's target itself (GetMetricSpec)."""
    md = {"scalerAddress": source.get("scaler_address") or losses.placeholder(
        path(nat, "scalerAddress"), f"pass --target metrics.{m.name}.source.scaler_address (host:port of the "
                                    "external scaler)"),
          "metricName": source.get("metric_name") or m.name, "targetValue": _target_value(m)}
    losses.add(path(where, "target"), "KEDA's external scaler reports the metric's target itself "
                                      "(GetMetricSpec): the policy's is passed as metadata.targetValue, which the "
                                      "scaler must use")
    if m.activation_threshold is not None:
        md["activationTargetValue"] = _number(m.activation_threshold)
        losses.add(path(where, "activation_threshold"), "KEDA's external scaler decides activity itself (IsActive): "
                                                         "passed as metadata.activationTargetValue")
    for k in ("selector", "described_object"):
        if source.get(k):
            losses.add(path(where, "source", k), "a KEDA trigger has no label selector or described object; dropped")
    return md


_METADATA = {"prometheus": _prometheus, "aws-cloudwatch": _cloudwatch, "gcp-stackdriver": _stackdriver,
             "azure-monitor": _azure_monitor, "external": _external}


def _fallback(p: Policy, losses: Losses) -> Optional[dict]:
    """fallback (scaledobject-spec.md "fallback"): ``failureThreshold`` and ``replicas`` are
    mandatory; KEDA's fallback does not cover cpu and memory triggers, scalebridge's does."""
    fb = p.fallback
    if fb is None:
        return None
    out: dict = {"failureThreshold": fb.failure_threshold, "replicas": fb.replicas if fb.replicas is not None else 0}
    if fb.behavior != "static":
        out["behavior"] = _FALLBACK[fb.behavior]
    if fb.behavior != "formula" and any(m.type in ("resource", "container_resource") and m.enabled
                                        for m in p.metrics or ()):
        losses.add("fallback", "KEDA's fallback does not cover cpu and memory triggers (\"supported for all "
                               "triggers … except CPU & memory\"); scalebridge's does")
    return out


def _behavior(p: Policy, losses: Losses) -> Optional[dict]:
    """The HPA's behavior as ``advanced.horizontalPodAutoscalerConfig.behavior`` ("KEDA would feed
    values from this section directly to the HPA's behavior field"); ``mode`` is the pause
    annotations' here, not a select policy."""
    if p.mode != "ON":
        p = dataclasses.replace(p, mode="ON")
    out = hpa._behavior(p, losses)
    for side in (out or {}).values():
        if "tolerance" in side:
            # the CRD's tolerance is a quantity, x-kubernetes-int-or-string: an integer or a string, never 0.1
            side["tolerance"] = str(side["tolerance"])
    return out


def dump(obj: Union[dict, list]) -> str:
    return hpa.dump(obj)


# ----------------------------------------------------------------------------- import

_SKIPPED_KINDS = ("TriggerAuthentication", "ClusterTriggerAuthentication", "Secret", "ConfigMap")


def import_all(text_or_obj: Any) -> list[tuple[dict, Losses]]:
    if isinstance(text_or_obj, str):
        import yaml
        docs = yaml_document(text_or_obj, "$", "YAML", lambda text: list(yaml.safe_load_all(text)))
    else:
        docs = text_or_obj if isinstance(text_or_obj, list) else [text_or_obj]
    found, skipped = [], []
    for root, doc in hpa.documents([d for d in docs]) if docs else []:
        if isinstance(doc, dict) and doc.get("kind") in _SKIPPED_KINDS and str(doc.get("apiVersion", "")).startswith(
                ("keda.sh/", "v1")):
            skipped.append(f"{root}: a {doc['kind']} is the metric sources' credentials, not part of a policy; "
                           "skipped")
            continue
        found.append((root, doc))
    if not found:
        raise NativeError("$", "no ScaledObject in the input")
    out = [_import_one(doc, root) for root, doc in found]
    for line in skipped:
        out[0][1].notes.append(line)
    return out


def _import_one(doc: dict, root: str) -> tuple[dict, Losses]:
    losses = Losses()
    rd = Reader(losses, root)
    if doc.get("kind") != KIND:
        raise NativeError(rd.where("kind"), f"expected ScaledObject, got {doc.get('kind')!r}")
    if doc.get("apiVersion") != API_VERSION:
        raise NativeError(rd.where("apiVersion"), f"unsupported apiVersion {doc.get('apiVersion')!r}; {API_VERSION}")
    meta = rd.mapping(doc.get("metadata"), "metadata")
    spec = rd.mapping(doc.get("spec"), "spec")
    rd.unknown(spec, {"scaleTargetRef", "pollingInterval", "cooldownPeriod", "initialCooldownPeriod",
                      "idleReplicaCount", "minReplicaCount", "maxReplicaCount", "fallback", "advanced", "triggers"},
               "spec")
    policy = hpa.workload_policy(rd, meta, spec, losses)
    mn = rd.count(spec.get("minReplicaCount"), "spec", "minReplicaCount")
    mx = rd.count(spec.get("maxReplicaCount"), "spec", "maxReplicaCount")
    idle = rd.count(spec.get("idleReplicaCount"), "spec", "idleReplicaCount")
    mn = DEFAULT_MIN_REPLICA_COUNT if mn is None else mn
    mx = DEFAULT_MAX_REPLICA_COUNT if mx is None else mx
    rd.ordered(mn, mx, ("spec", "minReplicaCount"), ("spec", "maxReplicaCount"))
    if idle is not None and idle >= mn:
        raise NativeError(rd.where("spec", "idleReplicaCount"), f"{idle} must be less than minReplicaCount ({mn})")
    policy["min_replicas"] = mn
    policy["max_replicas"] = mx
    if idle is not None:
        policy["idle_replicas"] = idle
    cooldown = rd.count(spec.get("cooldownPeriod"), "spec", "cooldownPeriod")
    if mn == 0 or idle is not None:
        # the activation phase is KEDA's whenever it can be idle: stated, so the policy has it too
        policy["scale_to_zero_delay_seconds"] = DEFAULT_COOLDOWN_PERIOD if cooldown is None else cooldown
    elif cooldown is not None:
        losses.note(rd.where("spec", "cooldownPeriod"), "applies only when scaling to 0 (scaledobject-spec.md), which "
                                                        "minReplicaCount ≥ 1 without idleReplicaCount never does")
    polling = rd.count(spec.get("pollingInterval"), "spec", "pollingInterval")
    if polling is not None:
        losses.note(rd.where("spec", "pollingInterval"), f"the run configuration's sync_period_seconds: {polling} "
                                                         "(how often a controller reads the metrics), not part of a "
                                                         "policy")
    initial = rd.count(spec.get("initialCooldownPeriod"), "spec", "initialCooldownPeriod")
    if initial is not None and (mn == 0 or idle is not None):
        # KEDA 2.20 scaleToZeroOrIdle: while LastActiveTime is nil, creation + initialCooldownPeriod
        policy["initial_scale_to_zero_delay_seconds"] = initial
        if initial:
            losses.note(rd.where("spec", "initialCooldownPeriod"), "counted from the first decision on the target "
                                                                   "(KEDA counts from the ScaledObject's creation)")
    elif initial:
        losses.note(rd.where("spec", "initialCooldownPeriod"), "applies only when scaling to 0 "
                                                               "(scaledobject-spec.md), which minReplicaCount ≥ 1 "
                                                               "without idleReplicaCount never does")
    _import_pause(rd, rd.mapping(meta.get("annotations"), "metadata", "annotations"), policy)
    triggers = rd.listing(spec.get("triggers"), "spec", "triggers")
    if not triggers:
        raise NativeError(rd.where("spec", "triggers"), "required: at least one trigger (minItems 1)")
    metrics = [_import_trigger(rd, rd.mapping(t, "spec", "triggers", i), i) for i, t in enumerate(triggers)]
    # a name given twice is refused, as KEDA refuses it ("triggerName %q is defined multiple times in the
    # ScaledObject/ScaledJob, but it must be unique": apis/keda/v1alpha1/scaletriggers_types.go
    # ValidateTriggers); two unnamed triggers of one resource (cpu, memory) are two metrics of that name
    seen: dict = {}
    for i, t in enumerate(triggers):
        given = t.get("name") if isinstance(t, dict) else None
        if not given:
            continue
        if given in seen:
            raise NativeError(rd.where("spec", "triggers", i, "name"), f"{given!r} is also trigger "
                                                                       f"{seen[given]}'s name")
        seen[given] = i
    advanced = rd.mapping(spec.get("advanced"), "spec", "advanced")
    rd.unknown(advanced, {"restoreToOriginalReplicaCount", "horizontalPodAutoscalerConfig", "scalingModifiers"},
               "spec", "advanced")
    if advanced.get("restoreToOriginalReplicaCount"):
        losses.note(rd.where("spec", "advanced", "restoreToOriginalReplicaCount"),
                    "what happens when the ScaledObject is deleted, not part of a policy")
    hpa_config = rd.mapping(advanced.get("horizontalPodAutoscalerConfig"), "spec", "advanced",
                            "horizontalPodAutoscalerConfig")
    rd.unknown(hpa_config, {"name", "behavior"}, "spec", "advanced", "horizontalPodAutoscalerConfig")
    if hpa_config.get("name"):
        losses.note(rd.where("spec", "advanced", "horizontalPodAutoscalerConfig", "name"),
                    "the HPA's name is KEDA's, not part of a policy")
    if hpa_config.get("behavior") is not None:
        policy["behavior"] = _import_behavior(rd, hpa_config["behavior"])
    mods = rd.mapping(advanced.get("scalingModifiers"), "spec", "advanced", "scalingModifiers")
    fallback = rd.mapping(spec["fallback"], "spec", "fallback") if "fallback" in spec else None
    per_trigger = fallback is not None and fallback.get("behavior") == "scalingModifiers"
    formula = None
    if mods:
        formula = _import_formula(rd, mods, metrics, per_trigger)
        if formula is not None:
            metrics.append(formula)
    policy["metrics"] = metrics
    if any(m["type"] == "external" for m in metrics):
        # KEDA >= 2.20.2: a scaler's negative, NaN or infinite value is reported as 0 (kedacore/keda#7889,
        # pkg/scalers/scaler.go quantityFromFloat64, called by GenerateMetricInMili in every scaler but
        # cpu/memory)
        policy["invalid_values_as_zero"] = True
    if fallback is not None:
        policy["fallback"] = _import_fallback(rd, fallback, metrics, formula is not None)
    return policy, losses


def _import_behavior(rd: Reader, behavior: Any) -> dict:
    """The HPA behavior, read as the kubernetes translator reads one, its errors named under
    ``spec.advanced.horizontalPodAutoscalerConfig.behavior``."""
    at = rd.where("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
    b = rd.mapping(behavior, "spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
    try:
        return hpa._import_behavior(Reader(rd.losses, _ROOT), b, {})
    except NativeError as e:
        raise NativeError(e.where.replace(f"{_ROOT}.spec.behavior", at, 1), e.message) from None


_ROOT = "$keda"


def _import_pause(rd: Reader, ann: dict, policy: dict) -> None:
    """The pause annotations (concepts/scaling-deployments.md, "Pausing autoscaling"):
    ``paused`` holds the current count — the policy's ``mode: OFF``; ``paused-replicas``
    sets a count and holds it, which is the target's pause (``scalebridge pause --replicas``);
    ``paused-scale-in`` is ``mode: ONLY_SCALE_OUT``, ``paused-scale-out`` ``mode: ONLY_SCALE_IN``,
    both ``mode: OFF`` (KEDA 2.18+: each disables one direction of the HPA and blocks the scale to
    or from zero); ``force-activation`` is ``force_activation``. ``paused`` and ``paused-replicas``
    win (scaledobject_controller.go checks them first, and handlePause stops the scale loop).
    A value is read as KEDA's ``getBoolAnnotation`` reads it (:func:`_annotation_true`)."""
    at = ("metadata", "annotations")
    replicas = ann.get(PAUSED_REPLICAS)
    paused = _annotation_true(ann, PAUSED)
    if replicas is not None:
        n = rd.count(replicas, *at, PAUSED_REPLICAS)
        paused = True
        rd.losses.add(rd.where(*at, PAUSED_REPLICAS),
                      f"sets {n} replicas and holds them: that is the target's pause, not the policy's — "
                      f"`scalebridge pause CONFIG TARGET --replicas {n}`; the policy is mode OFF (holds the size)")
    if paused:
        policy["mode"] = "OFF"
        rd.losses.note(rd.where(*at, PAUSED), "read as mode OFF (the size is held); to pause one target of a run "
                                             "configuration instead, `paused: true` on it or `scalebridge pause`")
        return
    no_in, no_out = _annotation_true(ann, PAUSED_SCALE_IN), _annotation_true(ann, PAUSED_SCALE_OUT)
    if no_in and no_out:
        policy["mode"] = "OFF"
        rd.losses.note(rd.where(*at), "paused-scale-in and paused-scale-out together: read as mode OFF (KEDA's "
                                      "docs recommend autoscaling.keda.sh/paused for that)")
    elif no_in:
        policy["mode"] = "ONLY_SCALE_OUT"
    elif no_out:
        policy["mode"] = "ONLY_SCALE_IN"
    if _annotation_true(ann, FORCE_ACTIVATION):
        policy["force_activation"] = True


_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def _annotation_true(ann: Mapping[str, Any], key: str) -> bool:
    """KEDA 2.20 ``getBoolAnnotation`` (apis/keda/v1alpha1/scaledobject_types.go): absent is
    false; else Go's ``strconv.ParseBool``, and "if annotation value is not a boolean, we assume
    true"."""
    if key not in ann:
        return False
    v = ann[key]
    if isinstance(v, bool):
        return v
    return _GO_BOOLS.get(str(v), True)


_RESOURCE_FIELDS = {"value", "containerName"}


def _trigger_name(t: dict, kind: str, i: int) -> str:
    return t.get("name") or (kind if kind in ("cpu", "memory") else f"{kind.replace('-', '_')}_{i}")


def _import_trigger(rd: Reader, t: dict, i: int) -> dict:
    at = ("spec", "triggers", i)
    rd.unknown(t, {"type", "name", "metadata", "metricType", "authenticationRef", "useCachedMetrics"}, *at)
    kind = rd.string(t.get("type"), *at, "type")
    if not kind:
        raise NativeError(rd.where(*at, "type"), "required field is missing: the scaler's type")
    md = rd.mapping(t.get("metadata"), *at, "metadata")
    for k, v in md.items():
        if not isinstance(v, str):
            raise NativeError(rd.where(*at, "metadata", k), f"trigger metadata values are strings, got {v!r}")
    mt = t.get("metricType")
    if t.get("authenticationRef"):
        rd.losses.note(rd.where(*at, "authenticationRef"), "credentials are the metric source's, not part of a "
                                                           "policy")
    if t.get("useCachedMetrics"):
        rd.losses.note(rd.where(*at, "useCachedMetrics"), "a controller reads each metric once a sync; nothing to "
                                                          "cache")
    name = rd.string(t.get("name"), *at, "name") or _trigger_name(t, kind, i)
    if kind in ("cpu", "memory"):
        return _import_resource(rd, kind, mt, md, at, t.get("name"))
    if not one_of(mt, ("AverageValue", "Value")) and mt is not None:
        raise NativeError(rd.where(*at, "metricType"), f"a {kind} trigger takes AverageValue or Value, got {mt!r} "
                                                       "(\"All scalers, except CPU and Memory, support metric types "
                                                       "AverageValue and Value\")")
    tt = mt or "AverageValue"
    reader = _READERS.get(kind)
    if reader is None:
        value, activation, key = _unknown_target(md)
        rd.losses.add(rd.where(*at), f"scalebridge has no {kind} metric source: kept as external metric {name!r}"
                                     + (f" (target from metadata.{key})" if key else
                                        " with target 1 (no target in its metadata)")
                                     + ", to be read from a source of your own (the run configuration's "
                                       f"metrics.{name}.source)")
        source = None
    else:
        value, activation, source = reader(rd, md, at, name)
    out: dict = {"type": "external", "name": name,
                 "target": {"type": tt, ("average_value" if tt == "AverageValue" else "value"): value}}
    if activation is not None:
        out["activation_threshold"] = activation
    if source is not None:
        rd.losses.note(rd.where(*at, "metadata"), f"where {name} is read is the run configuration's: "
                                                  f"metrics.{name}.source: {_flow(source)}")
    return out


def _flow(v: Any) -> str:
    import yaml
    return yaml.safe_dump(v, default_flow_style=True, sort_keys=False, width=10_000).strip()


def _import_resource(rd: Reader, kind: str, mt: Any, md: dict, at: tuple, given_name: Optional[str]) -> dict:
    """cpu and memory (scalers/cpu.md): ``metricType`` Utilization or AverageValue is required
    (pkg/scalers/cpu_memory_scaler.go parseResourceMetadata refuses any other)."""
    rd.unknown(md, _RESOURCE_FIELDS | {"type"}, *at, "metadata")
    if not one_of(mt, ("Utilization", "AverageValue")):
        raise NativeError(rd.where(*at, "metricType"), f"a {kind} trigger needs metricType Utilization or "
                                                       f"AverageValue, got {mt!r}")
    if "value" not in md:
        raise NativeError(rd.where(*at, "metadata", "value"), "required field is missing")
    out: dict = {"type": "resource", "name": kind}
    if md.get("containerName"):
        out["type"] = "container_resource"
        out["container"] = md["containerName"]
    if mt == "Utilization":
        out["target"] = {"type": "Utilization", "average_utilization": rd.number(md["value"], *at, "metadata",
                                                                                  "value", integer=True)}
    else:
        if not re.match(_QUANTITY_PATTERN, md["value"]):
            raise NativeError(rd.where(*at, "metadata", "value"), f"not a quantity: {md['value']!r}")
        out["target"] = {"type": "AverageValue", "average_value": md["value"]}
    if given_name and given_name != kind:
        rd.losses.note(rd.where(*at, "name"), f"a resource metric is named after its resource, {kind}")
    return out


def _float(rd: Reader, md: dict, key: str, at: tuple, default: Optional[float] = None,
           required: bool = False) -> Optional[Union[int, float]]:
    if key not in md:
        if required:
            raise NativeError(rd.where(*at, "metadata", key), "required field is missing")
        return default
    try:
        v = float(md[key])
    except ValueError:
        raise NativeError(rd.where(*at, "metadata", key), f"expected a number, got {md[key]!r}") from None
    if not math.isfinite(v):
        raise NativeError(rd.where(*at, "metadata", key), f"expected a finite number, got {md[key]!r}")
    return num(v)


def _positive(rd: Reader, v: Any, at: tuple, key: str) -> Any:
    if v is None or v <= 0:
        raise NativeError(rd.where(*at, "metadata", key), f"a target of {v!r}: scalebridge needs a target greater "
                                                          "than 0")
    return v


def _dropped(rd: Reader, md: dict, used: set, at: tuple, kind: str, notes: tuple = ()) -> None:
    for k in md:
        if k in used:
            continue
        if k in notes or k.endswith(("FromEnv", "FromEnvFile")):
            rd.losses.note(rd.where(*at, "metadata", k), "credentials and endpoints are the metric source's, not "
                                                         "part of a policy")
        else:
            rd.losses.add(rd.where(*at, "metadata", k), f"scalebridge's metric source has no {kind} {k}; dropped")


def _read_prometheus(rd: Reader, md: dict, at: tuple, name: str):
    """scalers/prometheus.md: ``serverAddress``, ``query`` and ``threshold`` required."""
    for k in ("serverAddress", "query"):
        if not md.get(k):
            raise NativeError(rd.where(*at, "metadata", k), "required field is missing")
    value = _positive(rd, _float(rd, md, "threshold", at, required=True), at, "threshold")
    activation = _float(rd, md, "activationThreshold", at)
    _dropped(rd, md, {"serverAddress", "query", "threshold", "activationThreshold", "ignoreNullValues"}, at,
             "prometheus", ("customHeaders", "unsafeSsl", "authModes", "timeout", "namespace", "awsRegion",
                            "identityOwner", "queryParameters"))
    rd.losses.note(rd.where(*at, "metadata", "serverAddress"), "the run configuration's metric_sources: "
                                                               f"{_flow({'prometheus': {'type': 'prometheus', 'url': md['serverAddress']}})}")
    return value, activation, {"metric_source": "prometheus", "query": md["query"]}


def _read_cloudwatch(rd: Reader, md: dict, at: tuple, name: str):
    """scalers/aws-cloudwatch.md: ``targetMetricValue`` (default 0), ``activationTargetMetricValue``;
    ``namespace``, ``metricName``, ``dimensionName``/``dimensionValue`` unless ``expression``."""
    if md.get("expression"):
        rd.losses.add(rd.where(*at, "metadata", "expression"), "a Metrics Insights query: scalebridge's AWS metric "
                                                               "source reads one metric; dropped")
    value = _positive(rd, _float(rd, md, "targetMetricValue", at, default=0), at, "targetMetricValue")
    activation = _float(rd, md, "activationTargetMetricValue", at)
    source: dict = {}
    if md.get("namespace"):
        source["namespace"] = md["namespace"]
    if md.get("metricName"):
        source["metric_name"] = md["metricName"]
    names = [x for x in md.get("dimensionName", "").split(";") if x]
    values = [x for x in md.get("dimensionValue", "").split(";") if x]
    if len(names) != len(values):
        raise NativeError(rd.where(*at, "metadata", "dimensionValue"), f"{len(values)} values for {len(names)} "
                                                                       "dimension names")
    if names:
        source["dimensions"] = dict(zip(names, values))
    stat = md.get("metricStat")
    if stat:
        m = re.fullmatch(r"p(\d{1,2}(\.\d+)?|100)", stat)
        if m:
            source["extended_statistic"] = f"p{m.group(1)}"
        else:
            source["statistic"] = stat
    if md.get("metricStatPeriod"):
        source["period_seconds"] = rd.number(md["metricStatPeriod"], *at, "metadata", "metricStatPeriod",
                                             integer=True)
    if md.get("metricUnit"):
        source["unit"] = md["metricUnit"]
    _dropped(rd, md, {"namespace", "metricName", "dimensionName", "dimensionValue", "metricStat", "metricStatPeriod",
                      "metricUnit", "targetMetricValue", "activationTargetMetricValue", "expression"}, at,
             "aws-cloudwatch", ("awsRegion", "awsEndpoint", "awsAccountId", "identityOwner"))
    return value, activation, source


def _read_stackdriver(rd: Reader, md: dict, at: tuple, name: str):
    """scalers/gcp-stackdriver.md: ``filter`` required, ``targetValue`` (default 5),
    ``activationTargetValue``; the filter's ``metric.type`` is the source's ``metric_type``."""
    if not md.get("filter"):
        raise NativeError(rd.where(*at, "metadata", "filter"), "required field is missing")
    value = _positive(rd, _float(rd, md, "targetValue", at, default=5), at, "targetValue")
    activation = _float(rd, md, "activationTargetValue", at)
    source: dict = {}
    m = _METRIC_TYPE.match(md["filter"])
    if m:
        source["metric_type"] = m.group(1)
        if m.group(2):
            source["filter"] = m.group(2).strip()
    else:
        source["filter"] = md["filter"]
    if md.get("projectId"):
        source["project"] = md["projectId"]
    if md.get("alignmentAligner") and md["alignmentAligner"] != "none":
        source["aligner"] = "ALIGN_" + md["alignmentAligner"].upper()
    _dropped(rd, md, {"filter", "targetValue", "activationTargetValue", "projectId", "alignmentAligner"}, at,
             "gcp-stackdriver", ("credentialsFromEnv", "credentialsFromEnvFile"))
    return value, activation, source


def _read_azure_monitor(rd: Reader, md: dict, at: tuple, name: str):
    """scalers/azure-monitor.md: ``resourceURI``, ``subscriptionId``, ``resourceGroupName``,
    ``metricName`` and ``targetValue`` required."""
    for k in ("resourceURI", "subscriptionId", "resourceGroupName", "metricName"):
        if not md.get(k):
            raise NativeError(rd.where(*at, "metadata", k), "required field is missing")
    value = _positive(rd, _float(rd, md, "targetValue", at, required=True), at, "targetValue")
    activation = _float(rd, md, "activationTargetValue", at)
    source: dict = {"metric_name": md["metricName"],
                    "resource_uri": f"/subscriptions/{md['subscriptionId']}/resourceGroups/{md['resourceGroupName']}"
                                    f"/providers/{md['resourceURI']}"}
    if md.get("metricNamespace"):
        source["metric_namespace"] = md["metricNamespace"]
    if md.get("metricAggregationType"):
        source["aggregation"] = md["metricAggregationType"]
    if md.get("metricFilter"):
        source["filter"] = md["metricFilter"]
    if md.get("metricAggregationInterval"):
        parts = md["metricAggregationInterval"].split(":")
        if len(parts) != 3 or not all(x.isdigit() for x in parts):
            raise NativeError(rd.where(*at, "metadata", "metricAggregationInterval"),
                              f"expected h:m:s, got {md['metricAggregationInterval']!r}")
        h, mi, s = (int(x) for x in parts)
        source["interval_seconds"] = h * 3600 + mi * 60 + s
    _dropped(rd, md, {"resourceURI", "subscriptionId", "resourceGroupName", "metricName", "metricNamespace",
                      "metricAggregationType", "metricFilter", "metricAggregationInterval", "targetValue",
                      "activationTargetValue"}, at, "azure-monitor",
             ("tenantId", "activeDirectoryClientId", "cloud", "azureResourceManagerEndpoint",
              "activeDirectoryEndpoint"))
    return value, activation, source


def _read_external(rd: Reader, md: dict, at: tuple, name: str):
    """scalers/external.md: ``scalerAddress`` required; the target is the scaler's own
    (GetMetricSpec), read here from ``metadata.targetValue`` when it is passed one."""
    if not md.get("scalerAddress"):
        raise NativeError(rd.where(*at, "metadata", "scalerAddress"), "required field is missing")
    if "targetValue" in md:
        value = _positive(rd, _float(rd, md, "targetValue", at), at, "targetValue")
        rd.losses.add(rd.where(*at, "metadata"), "an external scaler reports its own target (GetMetricSpec): read as "
                                                 "metadata.targetValue")
    else:
        value = 1
        rd.losses.add(rd.where(*at, "metadata"), "an external scaler reports its own target (GetMetricSpec), which "
                                                 "the ScaledObject does not hold: written as 1")
    activation = _float(rd, md, "activationTargetValue", at)
    source = {"scaler_address": md["scalerAddress"]}
    if md.get("metricName") and md["metricName"] != name:
        source["metric_name"] = md["metricName"]
    return value, activation, source


_READERS = {"prometheus": _read_prometheus, "aws-cloudwatch": _read_cloudwatch, "gcp-stackdriver": _read_stackdriver,
            "azure-monitor": _read_azure_monitor, "external": _read_external}

#: scalers' metadata whose name is their target (each scaler's page): for scalers scalebridge
#: has no source for, a key with an ``activation…`` twin is the target, else one of these
_TARGET_KEYS = ("threshold", "targetValue", "value", "queueLength", "lagThreshold", "listLength", "messageCount",
                "targetMetricValue", "desiredReplicas", "targetPipelinesQueueLength", "valueThreshold")


def _unknown_target(md: dict) -> tuple[Any, Any, Optional[str]]:
    """The target and activation value of a scaler scalebridge cannot read: "the activation will
    always be the same as the scaling value, appended by the prefix activation"
    (concepts/scaling-deployments.md, "Activating and Scaling thresholds")."""
    def number(k):
        try:
            v = float(md[k])
        except (KeyError, ValueError):
            return None
        return num(v) if math.isfinite(v) and v > 0 else None
    for k in md:
        twin = "activation" + k[:1].upper() + k[1:]
        if twin in md and number(k) is not None:
            act = None
            try:
                act = num(float(md[twin]))
            except ValueError:
                pass
            return number(k), act, k
    for k in _TARGET_KEYS:
        if number(k) is not None:
            return number(k), None, k
    return 1, None, None


def _import_formula(rd: Reader, mods: dict, metrics: list, nullable: bool = False) -> Optional[dict]:
    """advanced.scalingModifiers (scaledobject-spec.md "scalingModifiers"): ``formula`` and
    ``target`` mandatory, ``activationTarget`` default 0, ``metricType`` AverageValue or Value
    (default AverageValue). The composite metric replaces every trigger but cpu and memory
    (controllers/keda/hpa.go): those the formula does not name are disabled. ``nullable``:
    ``fallback.behavior: scalingModifiers``, under which a trigger may be ``nil`` (``??``)."""
    at = ("spec", "advanced", "scalingModifiers")
    rd.unknown(mods, {"formula", "target", "activationTarget", "metricType"}, *at)
    formula = rd.string(mods.get("formula"), *at, "formula")
    if not formula:
        raise NativeError(rd.where(*at, "formula"), "required with scalingModifiers")
    target = _positive(rd, _float(rd, mods, "target", at, required=True), at, "target") \
        if mods.get("target") is not None else None
    if target is None:
        raise NativeError(rd.where(*at, "target"), "required with scalingModifiers")
    mt = mods.get("metricType") or "AverageValue"
    if not one_of(mt, ("AverageValue", "Value")):
        raise NativeError(rd.where(*at, "metricType"), f"expected AverageValue or Value, got {mt!r}")
    names = tuple(m["name"] for m in metrics)
    try:
        expression = expr_to_cel(formula, names, nullable)
        from scalebridge.cel import CelError, compile_formula
        compiled = compile_formula(expression, names, nullable)
    except (Untranslatable, ValueError) as e:
        rd.losses.add(rd.where(*at, "formula"), f"not expressible as a CEL formula ({e}); dropped: the triggers "
                                                "are decided on as separate metrics")
        return None
    for m in metrics:
        if m["type"] == "external" and m["name"] not in compiled.references:
            m["enabled"] = False
    out: dict = {"type": "formula", "name": COMPOSITE, "expression": expression,
                 "target": {"type": mt, ("average_value" if mt == "AverageValue" else "value"): target}}
    act = _float(rd, mods, "activationTarget", at)
    if act is not None:
        out["activation_threshold"] = act
    return out


def _import_fallback(rd: Reader, fb: dict, metrics: list, has_formula: bool = False) -> dict:
    """fallback (scaledobject-spec.md): ``failureThreshold`` and ``replicas`` mandatory,
    ``behavior`` default static; ``scalingModifiers`` (2.20) is the policy's ``formula``
    behavior — per trigger, inside the formula — which needs the formula."""
    at = ("spec", "fallback")
    rd.unknown(fb, {"failureThreshold", "replicas", "behavior"}, *at)
    for k in ("failureThreshold", "replicas"):
        if fb.get(k) is None:
            raise NativeError(rd.where(*at, k), "required field is missing (mandatory if fallback is included)")
    out: dict = {"failure_threshold": rd.count(fb["failureThreshold"], *at, "failureThreshold")}
    behavior = fb.get("behavior") or "static"
    if behavior == "scalingModifiers" and not has_formula:
        if not any(m["type"] == "formula" for m in metrics):
            # the webhook: "scalingModifiers fallback behavior requires scalingModifiers.formula to be defined"
            rd.losses.add(rd.where(*at, "behavior"), "scalingModifiers without a formula (which KEDA's webhook "
                                                     "refuses) or with one not read: read as static")
        behavior = "static"
    if behavior not in _FALLBACK_BACK:
        raise NativeError(rd.where(*at, "behavior"), f"expected one of static, currentReplicas, "
                                                     f"currentReplicasIfHigher, currentReplicasIfLower, "
                                                     f"scalingModifiers; got {behavior!r}")
    out["behavior"] = _FALLBACK_BACK[behavior]
    if out["behavior"] != "current_replicas":
        out["replicas"] = rd.count(fb["replicas"], *at, "replicas")
    if out["behavior"] != "formula" and any(m["type"] in ("resource", "container_resource") for m in metrics):
        rd.losses.note(rd.where(*at), "scalebridge's fallback covers cpu and memory too, which KEDA's does not")
    return out


class KedaTranslator(Translator):
    """``--to keda``: a KEDA ``keda.sh/v1alpha1`` ScaledObject (YAML)."""

    name = "keda"
    provider = None
    summary = "a KEDA keda.sh/v1alpha1 ScaledObject (YAML); imports ScaledObjects, every trigger type"
    target_keys = TARGET_KEYS


    def render(self, policy: Policy, target: Mapping[str, Any]) -> tuple[Any, Losses]:
        return render(policy, target)

    def dump(self, native: Any) -> str:
        return dump(native)

    def import_all(self, text: str) -> list[tuple[dict, Losses]]:
        return import_all(text)
