"""A policy as a Compute Engine ``Autoscaler`` resource, and back.

Fields as the REST reference names them
(https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers): ``autoscalingPolicy``
with ``cpuUtilization`` (``utilizationTarget`` a fraction, ``predictiveMethod``),
``loadBalancingUtilization``, ``customMetricUtilizations`` (``utilizationTarget`` per
instance, ``singleInstanceAssignment`` per group, ``utilizationTargetType``), ``mode``,
``coolDownPeriodSec`` (the initialization period), ``stabilizationPeriodSec``,
``scaleInControl`` and ``scalingSchedules``.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from scalebridge.policy import Policy
from scalebridge.translate.base import METRICS_KEY, Translator, TargetKey, pattern, source_of, valid_metric_sources
from scalebridge.translate.common import (drop_semantics, one_of, Losses, NativeError, Reader, as_policy, drop_controls,
                                          drop_unexpressed, json_document, num, path, resources)
from scalebridge.translate.metrics import MetricNames, name_lost, provider_metric

#: the neutral metrics as Compute Engine's Cloud Monitoring metric types
#: (https://cloud.google.com/monitoring/api/metrics_gcp_c#gcp-compute)
METRIC_NAMES = MetricNames(
    neutral={"cpu": "compute.googleapis.com/instance/cpu/utilization",
             "network_in": "compute.googleapis.com/instance/network/received_bytes_count",
             "network_out": "compute.googleapis.com/instance/network/sent_bytes_count", "memory": None},
    missing={"memory": "Compute Engine has no memory metric without the Ops Agent "
                       "(agent.googleapis.com/memory/percent_used)"})

_RATE = {None: "GAUGE", "per_second": "DELTA_PER_SECOND", "per_minute": "DELTA_PER_MINUTE"}
_RATE_BACK = {v: k for k, v in _RATE.items()}
LB_NAME = "load_balancing"
#: a Compute resource name (RFC 1035 label, the REST reference's ``[a-z]([-a-z0-9]*[a-z0-9])?``), and a project ID
_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
_PROJECT = r"[a-z][-a-z0-9.:]{4,61}[a-z0-9]|\d+"
#: the keys of the gce provider's metric sources (plugins/scalebridge_gce/metrics.py)
SOURCE_KEYS = frozenset({"metric_type", "filter", "aligner", "per_member", "resource_type", "scale", "project",
                         "max_rate_per_instance"})

TARGET_KEYS: dict[str, TargetKey] = {
    "project": TargetKey("the project ID", pattern(_PROJECT, "a project ID such as my-project")),
    "zone": TargetKey("the zone of a zonal group", pattern(_NAME, "a zone such as europe-west1-b")),
    "region": TargetKey("the region of a regional group", pattern(_NAME, "a region such as europe-west1")),
    "instance_group_manager": TargetKey("the managed instance group's name",
                                        pattern(_NAME, "lowercase letters, digits and '-', such as web")),
    METRICS_KEY: TargetKey("each policy metric's source, as a run configuration target's metrics:",
                           valid_metric_sources(SOURCE_KEYS, "gce")),
}


def _fraction(percent: float, at: str = "", losses: Optional[Losses] = None) -> Union[int, float]:
    """A utilization percent as GCE's ``utilizationTarget``, a fraction "in the range (0, 1]"
    (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers: cpuUtilization,
    loadBalancingUtilization): a target above 100 % is written as 1, with a loss line."""
    if percent > 100 and losses is not None:
        losses.add(path(at, "target", "average_utilization"), f"GCE takes a utilization target of at most 100 % "
                                                              f"(utilizationTarget in (0, 1]); {percent:g} written "
                                                              "as 1")
        percent = 100
    return num(round(percent / 100, 10))


def _group_url(ref: Mapping[str, Any], losses: Losses) -> str:
    """The autoscaler's ``target``: the managed instance group's URL, each part
    ``--target`` leaves out a placeholder."""
    if ref.get("zone") and ref.get("region"):
        raise NativeError("--target.region", "give exactly one of zone (a zonal group) or region (a regional one)")
    project = ref.get("project") or losses.placeholder("target", "pass --target project (the project ID)")
    scope = (f"regions/{ref['region']}" if ref.get("region") else
             f"zones/{ref.get('zone') or losses.placeholder('target', 'pass --target zone (or region)')}")
    igm = ref.get("instance_group_manager") or losses.placeholder(
        "target", "pass --target instance_group_manager (the managed instance group's name)")
    return f"https://www.googleapis.com/compute/v1/projects/{project}/{scope}/instanceGroupManagers/{igm}"


def _custom_metric(name: str, ref: Mapping[str, Any], at: str, k: int, losses: Losses) -> Optional[dict]:
    """A ``customMetricUtilizations`` entry's ``metric`` (a Cloud Monitoring metric type)
    and ``filter``: the source's ``metric_type``, a neutral name's Compute Engine metric,
    or a name that is a metric type already; any other name is a placeholder. None
    (a loss) for a neutral name Compute Engine has no metric for."""
    source = source_of(ref, name)
    out: dict = {}
    if source.get("metric_type"):
        out["metric"] = source["metric_type"]
    else:
        native, none_because = provider_metric(name, METRIC_NAMES, "gce")
        if none_because is not None:
            losses.add(at, f"{none_because}; dropped")
            return None
        renamed = name_lost(name, native or name)
        if renamed is not None:
            losses.add(at, renamed)
        out["metric"] = native or (name if "/" in name else losses.placeholder(
            f"autoscalingPolicy.customMetricUtilizations[{k}].metric",
            f"a Cloud Monitoring metric type: pass --target metrics.{name}.source.metric_type", name))
    if source.get("filter"):
        out["filter"] = source["filter"]
    return out


def render(policy: Union[Policy, dict], target_ref: Optional[Mapping[str, Any]] = None) -> tuple[dict, Losses]:
    p = as_policy(policy)
    losses = Losses()
    ref = dict(target_ref or {})
    target = _group_url(ref, losses)
    ap: dict = {}
    if p.min_replicas is not None:
        ap["minNumReplicas"] = p.min_replicas
    if p.max_replicas is None:
        raise NativeError("max_replicas", "a GCE autoscaler requires maxNumReplicas; the policy has no max_replicas")
    ap["maxNumReplicas"] = p.max_replicas
    if p.initialization_period_seconds is not None:
        ap["coolDownPeriodSec"] = int(p.initialization_period_seconds)
    if p.mode == "ONLY_SCALE_IN":
        losses.add("mode", "a GCE autoscaler has no scale-in-only mode (autoscalingPolicy.mode: ON, OFF, "
                           "ONLY_SCALE_OUT); written as ON")
    elif p.mode != "ON":
        ap["mode"] = p.mode
    custom = []
    for i, m in enumerate(p.metrics or []):
        at = path("metrics", i)
        t = m.target
        if not m.enabled:
            losses.add(at, "a GCE autoscaler has no disabled signal; left out")
            continue
        if m.type == "formula":
            continue   # drop_controls reports it
        if m.disable_scale_in:
            losses.add(path(at, "disable_scale_in"), "GCE signals cannot disable scale-in; dropped")
        if m.initialization_period_seconds is not None:
            losses.add(path(at, "initialization_period_seconds"),
                       "GCE has one initialization period (coolDownPeriodSec) for the group; dropped")
        if m.type == "resource" and m.name == "cpu" and t.type == "Utilization" and t.rate is None:
            if "cpuUtilization" in ap:
                losses.add(at, "a GCE autoscaler has one CPU signal; dropped")
                continue
            ap["cpuUtilization"] = {"utilizationTarget": _fraction(60 if t.average_utilization is None
                                                                   else t.average_utilization, at, losses)}
        elif m.type == "load_balancing" and t.type == "Utilization" and t.rate is None:
            if "loadBalancingUtilization" in ap:
                losses.add(at, "a GCE autoscaler has one load-balancing signal; dropped")
                continue
            ap["loadBalancingUtilization"] = {"utilizationTarget": _fraction(80 if t.average_utilization is None
                                                                             else t.average_utilization, at, losses)}
            if m.name != LB_NAME:   # the observations the policy reads by its name are not the ones import reads
                losses.add(path(at, "name"), f"GCE's load-balancing signal has no name; import reads it back as "
                                             f"{LB_NAME!r}")
        elif m.type == "pods" and t.type == "AverageValue" and not isinstance(t.average_value, str):
            metric = _custom_metric(m.name, ref, at, len(custom), losses)
            if metric is not None:
                custom.append({**metric, "utilizationTarget": num(t.average_value),
                               "utilizationTargetType": _RATE[t.rate]})
        elif m.type in ("external", "object") and t.type == "AverageValue" and t.rate is None \
                and not isinstance(t.average_value, str):
            metric = _custom_metric(m.name, ref, at, len(custom), losses)
            if metric is not None:
                custom.append({**metric, "singleInstanceAssignment": num(t.average_value)})
        else:
            what = (f"the {m.type} metric {m.name!r} with target type {t.type}" + (f" ({t.rate})" if t.rate else "")
                    + (" written as a quantity string" if isinstance(t.average_value, str) else ""))
            losses.add(at, f"GCE has no signal for {what} (it has CPU and load-balancing utilization, per-instance "
                           "and per-group Cloud Monitoring metrics); dropped")
    if custom:
        ap["customMetricUtilizations"] = custom
    if p.predictive is not None and p.predictive.mode not in (None, "Disabled"):
        if "cpuUtilization" not in ap:
            losses.add("predictive", "GCE predicts only with a CPU utilization signal; dropped")
        else:
            ap["cpuUtilization"]["predictiveMethod"] = "OPTIMIZE_AVAILABILITY"
            if p.predictive.mode == "ForecastOnly":
                losses.add("predictive.mode", "GCE has no forecast-only mode; rendered as OPTIMIZE_AVAILABILITY")
        extra = [k for k in ("look_ahead_seconds", "scheduling_buffer_seconds", "max_capacity_buffer_percent",
                             "metric", "capacity_per_replica")
                 if getattr(p.predictive, k) is not None]
        for k in extra:
            losses.add(path("predictive", k), "GCE's predictive method has no such setting; dropped")
    b = p.behavior
    if b is not None:
        if b.scale_down is not None and b.scale_down.stabilization_window_seconds is not None:
            ap["stabilizationPeriodSec"] = int(b.scale_down.stabilization_window_seconds)
        for side in ("scale_up", "scale_down"):
            r = getattr(b, side)
            if r is None:
                continue
            if side == "scale_up" and r.stabilization_window_seconds:
                losses.add(path("behavior", side, "stabilization_window_seconds"),
                           "GCE stabilizes scale-in only; dropped")
            for k, _ in enumerate(r.policies or []):
                losses.add(path("behavior", side, "policies", k),
                           f"GCE has no scale-{'up' if side == 'scale_up' else 'down'} rate limit; dropped")
            if r.select_policy not in (None, "Max"):
                losses.add(path("behavior", side, "select_policy"),
                           f"GCE has no select policy; {r.select_policy} dropped")
            if r.tolerance:
                losses.add(path("behavior", side, "tolerance"), "GCE has no tolerance; dropped")
    drop_unexpressed(p, losses, {"tolerance": "GCE has no tolerance (every change of the ceil formula acts); dropped"})
    if p.scale_in_control is not None:
        c = p.scale_in_control
        mx: dict = {}
        if c.max_scaled_in_replicas.fixed is not None:
            mx["fixed"] = c.max_scaled_in_replicas.fixed
        else:
            pc = c.max_scaled_in_replicas.percent
            mx["percent"] = int(pc)
            if pc != int(pc):
                losses.add("scale_in_control.max_scaled_in_replicas.percent",
                           f"GCE takes an integer percent; {pc:g} truncated to {int(pc)}")
        ap["scaleInControl"] = {"maxScaledInReplicas": mx, "timeWindowSec": int(c.time_window_seconds)}
    if p.schedules:
        sch = {}
        for s in p.schedules:
            body: dict = {"schedule": s.schedule, "timeZone": s.time_zone, "durationSec": int(s.duration_seconds),
                          "minRequiredReplicas": s.min_required_replicas}
            if s.disabled:
                body["disabled"] = True
            sch[s.name] = body
        ap["scalingSchedules"] = sch
    drop_unexpressed(p, losses, {
        "rules": "a GCE autoscaler has no threshold rules; dropped",
        "profiles": "a GCE autoscaler has no instance profiles (scaling schedules raise the minimum instead); "
                    "dropped",
        "default_replicas": "GCE keeps the group's size when metrics cannot be read; dropped",
        "allowed_replicas": "GCE scales to any count; dropped"})
    drop_controls(p, losses, "a GCE autoscaler")
    drop_semantics(p, losses, "gce", "a GCE autoscaler")
    return {"name": p.name or "scalebridge", "target": target, "autoscalingPolicy": ap}, losses


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=2) + "\n"


# ----------------------------------------------------------------------------- import

_POLICY_FIELDS = {"minNumReplicas", "maxNumReplicas", "coolDownPeriodSec", "mode", "cpuUtilization",
                  "loadBalancingUtilization", "customMetricUtilizations", "scaleInControl", "scalingSchedules",
                  "stabilizationPeriodSec", "scaleDownControl"}


_HOLDING_AUTOSCALERS = ("items", "resources", "data", "resource", "properties", "result")
"""Where Autoscaler resources stand in a document: a list's ``items``, a Deployment
Manager ``resources`` list, a Cloud Asset ``resource.data``."""


def _autoscaler(obj: dict) -> Optional[dict]:
    return obj if "autoscalingPolicy" in obj else None


def _holding_autoscalers(obj: dict) -> Iterable[tuple[str, Any]]:
    return ((key, obj[key]) for key in _HOLDING_AUTOSCALERS if key in obj)


def import_all(text_or_obj: Any) -> list[tuple[dict, Losses]]:
    """Every Autoscaler resource of the input (an object with ``autoscalingPolicy``)."""
    found = resources(json_document(text_or_obj), _autoscaler, _holding_autoscalers)
    if not found:
        raise NativeError("$", "no Autoscaler resource (an object with autoscalingPolicy) in the input")
    return [_import_one(r, root) for root, r in found]


def _import_one(res: dict, root: str) -> tuple[dict, Losses]:
    losses = Losses()
    rd = Reader(losses, root)
    ap = rd.mapping(res.get("autoscalingPolicy"), "autoscalingPolicy")
    at = ("autoscalingPolicy",)
    rd.unknown(ap, _POLICY_FIELDS, *at)
    policy: dict = {"semantics": "gce"}
    if isinstance(res.get("name"), str) and not rd.template(res["name"], "name"):
        policy["name"] = res["name"]
    mn = rd.count(ap.get("minNumReplicas"), *at, "minNumReplicas")
    mx = rd.count(ap.get("maxNumReplicas"), *at, "maxNumReplicas")
    rd.ordered(mn, mx, at + ("minNumReplicas",), at + ("maxNumReplicas",))
    if mx is None and "maxNumReplicas" not in ap:
        raise NativeError(rd.where(*at, "maxNumReplicas"), "required when creating or updating an autoscaler")
    if mn is not None:
        policy["min_replicas"] = mn
    elif "minNumReplicas" not in ap:
        policy["min_replicas"] = 1
        losses.add(rd.where(*at, "minNumReplicas"), "not set: GCE's default depends on the maximum "
                                                   "(undocumented); read as 1")
    if mx is not None:
        policy["max_replicas"] = mx
    cd = rd.number(ap.get("coolDownPeriodSec"), *at, "coolDownPeriodSec", integer=True)
    if cd is not None:
        policy["initialization_period_seconds"] = cd
    if ap.get("mode") is not None:
        mode = rd.string(ap["mode"], *at, "mode")
        if mode is not None and not one_of(mode, ("ON", "OFF", "ONLY_SCALE_OUT", "ONLY_UP")):
            raise NativeError(rd.where(*at, "mode"), f"expected ON, OFF, ONLY_SCALE_OUT or ONLY_UP, got {mode!r}")
        if mode:
            policy["mode"] = "ONLY_SCALE_OUT" if mode == "ONLY_UP" else mode
    metrics = []
    if ap.get("cpuUtilization") is not None:
        cpu = rd.mapping(ap["cpuUtilization"], *at, "cpuUtilization")
        rd.unknown(cpu, {"utilizationTarget", "predictiveMethod"}, *at, "cpuUtilization")
        u = rd.number(cpu.get("utilizationTarget"), *at, "cpuUtilization", "utilizationTarget")
        tgt: dict = {"type": "Utilization"}
        if u is not None:
            _fraction_ok(rd, u, *at, "cpuUtilization", "utilizationTarget")
            tgt["average_utilization"] = num(round(u * 100, 8))
        metrics.append({"type": "resource", "name": "cpu", "target": tgt})
        pm = cpu.get("predictiveMethod")
        if pm is not None and not one_of(pm, ("NONE", "OPTIMIZE_AVAILABILITY", "STANDARD")):
            raise NativeError(rd.where(*at, "cpuUtilization", "predictiveMethod"),
                              f"expected NONE or OPTIMIZE_AVAILABILITY, got {pm!r}")
        if one_of(pm, ("OPTIMIZE_AVAILABILITY", "STANDARD")):
            policy["predictive"] = {"mode": "ForecastAndScale"}
    if ap.get("loadBalancingUtilization") is not None:
        lb = rd.mapping(ap["loadBalancingUtilization"], *at, "loadBalancingUtilization")
        rd.unknown(lb, {"utilizationTarget"}, *at, "loadBalancingUtilization")
        u = rd.number(lb.get("utilizationTarget"), *at, "loadBalancingUtilization", "utilizationTarget")
        tgt = {"type": "Utilization"}
        if u is not None:
            _fraction_ok(rd, u, *at, "loadBalancingUtilization", "utilizationTarget")
            tgt["average_utilization"] = num(round(u * 100, 8))
        metrics.append({"type": "load_balancing", "name": LB_NAME, "target": tgt})
    for i, c in enumerate(rd.listing(ap.get("customMetricUtilizations"), *at, "customMetricUtilizations")):
        cat = at + ("customMetricUtilizations", i)
        c = rd.mapping(c, *cat)
        rd.unknown(c, {"metric", "filter", "utilizationTarget", "singleInstanceAssignment",
                       "utilizationTargetType"}, *cat)
        name = rd.string(c.get("metric"), *cat, "metric")
        if not name:
            if "metric" not in c:
                raise NativeError(rd.where(*cat, "metric"), "required field is missing")
            continue
        # a Compute Engine metric standing for a neutral one is read as it (received_bytes_count: network_in)
        name = METRIC_NAMES.of(name) or name
        if c.get("filter"):
            losses.add(rd.where(*cat, "filter"), "a Cloud Monitoring filter is the metric source's business; dropped")
        ut, sia = c.get("utilizationTarget"), c.get("singleInstanceAssignment")
        if (ut is None) == (sia is None):
            raise NativeError(rd.where(*cat), "set exactly one of utilizationTarget or singleInstanceAssignment")
        kind = rd.string(c.get("utilizationTargetType"), *cat, "utilizationTargetType") or "GAUGE"
        if not one_of(kind, _RATE_BACK):
            raise NativeError(rd.where(*cat, "utilizationTargetType"),
                              f"expected GAUGE, DELTA_PER_SECOND or DELTA_PER_MINUTE, got {kind!r}")
        if ut is not None:
            v = rd.number(ut, *cat, "utilizationTarget")
            if v is None:
                continue
            tgt = {"type": "AverageValue", "average_value": v}
            if _RATE_BACK[kind]:
                tgt["rate"] = _RATE_BACK[kind]
            metrics.append({"type": "pods", "name": name, "target": tgt})
        else:
            v = rd.number(sia, *cat, "singleInstanceAssignment")
            if v is None:
                continue
            if kind != "GAUGE":
                losses.add(rd.where(*cat, "utilizationTargetType"),
                           "applies to utilizationTarget only; ignored with singleInstanceAssignment")
            metrics.append({"type": "external", "name": name, "target": {"type": "AverageValue", "average_value": v}})
    if metrics:
        policy["metrics"] = metrics
    sp = rd.number(ap.get("stabilizationPeriodSec"), *at, "stabilizationPeriodSec", integer=True)
    if sp is not None:
        policy["behavior"] = {"scale_down": {"stabilization_window_seconds": sp}}
    for key in ("scaleInControl", "scaleDownControl"):
        if ap.get(key) is None:
            continue
        sic = rd.mapping(ap[key], *at, key)
        rd.unknown(sic, {"maxScaledInReplicas", "maxScaledDownReplicas", "timeWindowSec"}, *at, key)
        inner_key = "maxScaledInReplicas" if key == "scaleInControl" else "maxScaledDownReplicas"
        if key == "scaleDownControl":
            losses.add(rd.where(*at, key), "the beta API's scaleDownControl, read as scaleInControl")
        fp = rd.mapping(sic.get(inner_key), *at, key, inner_key)
        rd.unknown(fp, {"fixed", "percent", "calculated"}, *at, key, inner_key)
        mx_in: dict = {}
        if fp.get("fixed") is not None:
            mx_in["fixed"] = rd.number(fp["fixed"], *at, key, inner_key, "fixed", integer=True)
        elif fp.get("percent") is not None:
            mx_in["percent"] = rd.number(fp["percent"], *at, key, inner_key, "percent", integer=True)
        else:
            raise NativeError(rd.where(*at, key, inner_key), "set fixed or percent")
        ctl: dict = {"max_scaled_in_replicas": mx_in}
        tw = rd.number(sic.get("timeWindowSec"), *at, key, "timeWindowSec", integer=True)
        if tw is not None:
            ctl["time_window_seconds"] = tw
        policy["scale_in_control"] = ctl
    sch = rd.mapping(ap.get("scalingSchedules"), *at, "scalingSchedules")
    if sch:
        policy["schedules"] = []
    for name, s in sch.items():
        sat = at + ("scalingSchedules", name)
        s = rd.mapping(s, *sat)
        rd.unknown(s, {"schedule", "timeZone", "durationSec", "minRequiredReplicas", "disabled", "description"}, *sat)
        for req in ("schedule", "durationSec", "minRequiredReplicas"):
            if s.get(req) is None:
                raise NativeError(rd.where(*sat, req), "required field is missing")
        out = {"name": name, "schedule": rd.string(s["schedule"], *sat, "schedule"),
               "duration_seconds": rd.number(s["durationSec"], *sat, "durationSec", integer=True),
               "min_required_replicas": rd.number(s["minRequiredReplicas"], *sat, "minRequiredReplicas",
                                                  integer=True)}
        if s.get("timeZone"):
            out["time_zone"] = s["timeZone"]
        if s.get("disabled"):
            out["disabled"] = True
        if s.get("description"):
            losses.note(rd.where(*sat, "description"), "a description is not part of a policy")
        policy["schedules"].append(out)
    return policy, losses


def _fraction_ok(rd: Reader, u: float, *parts: object) -> None:
    if not 0 < u <= 1 and parts[-2] != "customMetricUtilizations":
        raise NativeError(rd.where(*parts), f"a utilization target is a fraction in (0, 1], got {u!r}")


class AutoscalerTranslator(Translator):
    """``--to gce``: a Compute Engine ``Autoscaler`` resource (JSON)."""

    name = "gce"
    provider = "gce"
    summary = "a Compute Engine Autoscaler resource (JSON)"
    target_keys = TARGET_KEYS
    metric_names = METRIC_NAMES


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
