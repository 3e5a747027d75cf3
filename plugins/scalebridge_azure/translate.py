"""A policy as a ``Microsoft.Insights/autoscalesettings`` ARM resource, and back.

Fields as the REST reference names them
(https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update):
profiles with ``capacity`` (strings), ``rules`` (``metricTrigger``, ``scaleAction``),
``recurrence`` (weekly, Windows time-zone IDs) and ``fixedDate``; ``predictiveAutoscalePolicy``
(https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-predictive).
"""
from __future__ import annotations

import datetime as _dt
import difflib
import json
import re
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from scalebridge import constants as C
from scalebridge.policy import Policy, Rule
from scalebridge.timezones import WINDOWS_TO_IANA, resolve_zone, to_epoch
from scalebridge.translate.base import METRICS_KEY, Translator, TargetKey, pattern, source_of, valid_metric_sources
from scalebridge.translate.common import (drop_semantics, one_of, Losses, NativeError, Parameters, Reader, as_policy,
                                          drop_controls, drop_unexpressed, is_template, iso_duration, json_document,
                                          num, parse_iso_duration, path, resources)
from scalebridge.translate.metrics import MetricNames, name_lost, provider_metric

#: the neutral metrics as a scale set's platform metrics, by their REST API names
#: (https://learn.microsoft.com/azure/azure-monitor/reference/supported-metrics/microsoft-compute-virtualmachinescalesets-metrics)
METRIC_NAMES = MetricNames(
    neutral={"cpu": "Percentage CPU", "network_in": "Network In Total", "network_out": "Network Out Total",
             "memory": None},
    missing={"memory": "a scale set's platform metrics hold the memory available (Available Memory Bytes, "
                       "Available Memory Percentage), not the memory used"},
    native=frozenset({"Percentage CPU", "Network In", "Network Out", "Network In Total", "Network Out Total",
                      "Disk Read Bytes", "Disk Write Bytes", "Disk Read Operations/Sec",
                      "Disk Write Operations/Sec", "Available Memory Bytes", "Available Memory Percentage",
                      "CPU Credits Remaining", "CPU Credits Consumed", "Inbound Flows", "Outbound Flows",
                      "OS Disk Queue Depth", "Data Disk Queue Depth"}))

RESOURCE_TYPE = "Microsoft.Insights/autoscalesettings"
#: the setting's and its default profile's names for a policy without a name
UNNAMED_SETTING = "scalebridge"
UNNAMED_PROFILE = "default"
API_VERSION = "2022-10-01"
_AGG_OUT = {"Min": "Minimum", "Max": "Maximum", "Sum": "Total"}
_AGG_IN = {"Minimum": "Min", "Maximum": "Max", "Total": "Sum", "Average": "Average", "Count": "Count", "Last": "Last"}
_STATS = {"Average", "Min", "Max", "Sum", "Count"}
_OPS = {"Equals", "NotEquals", "GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual"}
_TYPES = {"ChangeCount", "PercentChangeCount", "ExactCount", "ServiceAllowedNextValue"}
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_IANA_TO_WINDOWS: dict[str, str] = {}
for _w, _i in WINDOWS_TO_IANA.items():
    _IANA_TO_WINDOWS.setdefault(_i, _w)
#: the keys of the azure provider's metric sources (plugins/scalebridge_azure/metrics.py)
SOURCE_KEYS = frozenset({"metric_name", "metric_namespace", "resource_uri", "aggregation", "per_member", "filter",
                         "interval_seconds"})
#: a resource group or scale set name as the azure provider takes it, and a subscription ID (a GUID:
#: https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules)
_RESOURCE_NAME = r"[A-Za-z0-9][A-Za-z0-9._()-]{0,89}"
_GUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

TARGET_KEYS: dict[str, TargetKey] = {
    "subscription_id": TargetKey("the subscription ID",
                                 pattern(_GUID, "a GUID such as 00000000-0000-0000-0000-000000000000")),
    "resource_group": TargetKey("the scale set's resource group", pattern(_RESOURCE_NAME, "an Azure resource name")),
    "scale_set": TargetKey("the scale set's name", pattern(_RESOURCE_NAME, "an Azure resource name")),
    "location": TargetKey("the scale set's region (the setting's location)",
                          pattern(r"[A-Za-z0-9][A-Za-z0-9 ]*", "a region such as westeurope")),
    METRICS_KEY: TargetKey("each policy metric's source, as a run configuration target's metrics:",
                           valid_metric_sources(SOURCE_KEYS, "azure")),
}
DEFAULT_COOLDOWN = C.AZURE_DEFAULT_COOLDOWN


def _zone_out(zone: str, where: str, losses: Losses) -> str:
    if zone in WINDOWS_TO_IANA:
        return zone
    if zone in _IANA_TO_WINDOWS:
        return _IANA_TO_WINDOWS[zone]
    losses.add(where, f"Azure takes Windows time-zone IDs and none is known for {zone!r}; written as given")
    return zone


def _local(value: Union[int, float, str], zone: str) -> str:
    t = to_epoch(value, zone)
    return _dt.datetime.fromtimestamp(t, tz=resolve_zone(zone)).replace(tzinfo=None).isoformat()


def _scale_set_uri(ref: Mapping[str, Any], losses: Losses) -> str:
    """The scale set's resource ID, each part ``--target`` leaves out a placeholder."""
    at = "properties.targetResourceUri"
    sub = ref.get("subscription_id") or losses.placeholder(at, "pass --target subscription_id (a GUID)")
    rg = ref.get("resource_group") or losses.placeholder(at, "pass --target resource_group")
    name = ref.get("scale_set") or losses.placeholder(at, "pass --target scale_set (the scale set's name)")
    return f"/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{name}"


def render(policy: Union[Policy, dict], target_ref: Optional[Mapping[str, Any]] = None) -> tuple[dict, Losses]:
    p = as_policy(policy)
    losses = Losses()
    ref = dict(target_ref or {})
    uri = _scale_set_uri(ref, losses)
    profiles = []
    has_default = any(pr.recurrence is None and pr.fixed_date is None for pr in p.profiles)
    default_profile = next((pr for pr in p.profiles if pr.recurrence is None and pr.fixed_date is None), None)
    if default_profile is not None and default_profile.name in top_level_names(p.name or UNNAMED_SETTING):
        k = p.profiles.index(default_profile)
        losses.add(path("profiles", k, "name"), f"{default_profile.name!r} is the name the policy's own bounds and "
                                                "rules are written under: import reads this default profile back "
                                                "as them, and a decision then names no profile")
    if p.min_replicas is not None and p.max_replicas is not None:
        if has_default:
            same = (p.min_replicas, p.max_replicas) == (default_profile.capacity.minimum,
                                                         default_profile.capacity.maximum)
            if not same or p.rules or p.default_replicas is not None:
                # (the bounds of the default profile as the policy's own, for providers without profiles,
                # lose nothing: what import writes for a default profile of its own name)
                losses.add("min_replicas", "the policy's own capacity and rules apply outside its profiles, and a "
                                           "default profile already covers that in Azure; dropped with its rules")
        else:
            default = p.default_replicas if p.default_replicas is not None else p.min_replicas
            profiles.append({"name": p.name or UNNAMED_PROFILE,
                             "capacity": {"minimum": str(p.min_replicas), "maximum": str(p.max_replicas),
                                          "default": str(default)},
                             "rules": _rules(p.rules, ("rules",), uri, ref, losses,
                                             p.max_replicas - p.min_replicas)})
    elif p.rules and not has_default:
        losses.add("rules", "top-level rules need min_replicas and max_replicas for an Azure default profile; dropped")
    for k, pr in enumerate(p.profiles):
        body: dict = {"name": pr.name,
                      "capacity": {"minimum": str(pr.capacity.minimum), "maximum": str(pr.capacity.maximum),
                                   "default": str(pr.capacity.default)},
                      "rules": _rules(pr.rules + (p.rules if pr.recurrence is None and pr.fixed_date is None else []),
                                      ("profiles", k, "rules"), uri, ref, losses,
                                      pr.capacity.maximum - pr.capacity.minimum)}
        if pr.recurrence is not None:
            r = pr.recurrence
            body["recurrence"] = {"frequency": "Week", "schedule": {
                "timeZone": _zone_out(r.time_zone, path("profiles", k, "recurrence", "time_zone"), losses),
                "days": list(r.days), "hours": list(r.hours), "minutes": list(r.minutes)}}
        if pr.fixed_date is not None:
            f = pr.fixed_date
            body["fixedDate"] = {"timeZone": _zone_out(f.time_zone, path("profiles", k, "fixed_date", "time_zone"),
                                                       losses),
                                 "start": _local(f.start, f.time_zone), "end": _local(f.end, f.time_zone)}
        profiles.append(body)
    if not profiles:
        raise NativeError("min_replicas", "an Azure autoscale setting needs a profile: give min_replicas and "
                                          "max_replicas, or profiles")
    _within_limits(profiles, losses, p.min_replicas is not None and p.max_replicas is not None and not has_default)
    props: dict = {"name": p.name or UNNAMED_SETTING, "enabled": p.mode != "OFF", "targetResourceUri": uri,
                   "profiles": profiles}
    if p.mode == "OFF":
        losses.add("mode", "mode OFF approximated as enabled: false (Azure then reports no recommendation)")
    if p.mode == "ONLY_SCALE_OUT":
        losses.add("mode", "Azure has no scale-out-only mode; scale-in rules were left out")
        for pr in profiles:
            pr["rules"] = [r for r in pr["rules"] if r["scaleAction"]["direction"] != "Decrease"]
    if p.mode == "ONLY_SCALE_IN":
        losses.add("mode", "Azure has no scale-in-only mode; scale-out rules were left out")
        for pr in profiles:
            pr["rules"] = [r for r in pr["rules"] if r["scaleAction"]["direction"] != "Increase"]
    if p.predictive is not None and p.predictive.mode not in (None, "Disabled"):
        pap: dict = {"scaleMode": "Enabled" if p.predictive.mode == "ForecastAndScale" else "ForecastOnly"}
        if p.predictive.look_ahead_seconds is not None:
            pap["scaleLookAheadTime"] = iso_duration(p.predictive.look_ahead_seconds)
        props["predictiveAutoscalePolicy"] = pap
        for k in ("scheduling_buffer_seconds", "max_capacity_buffer_percent", "metric", "capacity_per_replica"):
            if getattr(p.predictive, k) is not None:
                losses.add(path("predictive", k), "Azure predictive autoscale has no such setting; dropped")
    drop_unexpressed(p, losses, {
        "metrics": "Azure autoscale has no target metrics (it scales on threshold rules); dropped",
        "behavior": "Azure has no stabilization windows or rate policies (each rule's cooldown paces it); dropped",
        "tolerance": "Azure rules have no tolerance band; dropped",
        "scale_in_control": "Azure has no scale-in control; dropped",
        "schedules": "Azure has no cron scaling schedules (recurrence profiles set whole capacities instead); "
                     "dropped",
        "allowed_replicas": "the allowed sizes are the service's own (ServiceAllowedNextValue); dropped",
        "initialization_period_seconds": "Azure has no initialization period; dropped"})
    drop_controls(p, losses, "Azure autoscale")
    drop_semantics(p, losses, "azure", "Azure autoscale")
    location = ref.get("location") or losses.placeholder("location", "pass --target location (the scale set's "
                                                                     "region, such as westeurope)")
    return {"type": RESOURCE_TYPE, "apiVersion": API_VERSION, "name": p.name or UNNAMED_SETTING,
            "location": location, "properties": props}, losses


def _trigger_metric(r: Rule, where: str, uri: str, ref: Mapping[str, Any], losses: Losses) -> Optional[dict]:
    """A rule's ``metricName``, ``metricNamespace`` and ``metricResourceUri``: its source's
    (``--target`` metrics), else the scale set's own metric for a neutral name
    (``cpu``: ``Percentage CPU``); None, with a loss line, when the scale set has none."""
    source = source_of(ref, r.metric)
    native, none_because = provider_metric(r.metric, METRIC_NAMES, "azure")
    if none_because is not None and not source.get("metric_name"):
        losses.add(path(where, "metric"), f"{none_because}; rule dropped")
        return None
    out: dict = {"metricName": source.get("metric_name") or native or r.metric}
    if native is not None and not source.get("metric_name"):
        renamed = name_lost(r.metric, f"the scale set's {native!r}")
        if renamed is not None:
            losses.add(path(where, "metric"), renamed)
    if source.get("metric_namespace"):
        out["metricNamespace"] = source["metric_namespace"]
    out["metricResourceUri"] = source.get("resource_uri") or uri
    if not source and native is None:
        losses.note(path(where, "metric"), f"{r.metric!r} is written as the scale set's metric {r.metric!r}: pass "
                                           f"--target metrics.{r.metric}.source (metric_name, metric_namespace, "
                                           "resource_uri) if it is another")
    return out


def _within_limits(profiles: list[dict], losses: Losses, default_first: bool) -> None:
    """Azure's limits on a setting (:data:`~scalebridge.constants.AZURE_MAX_PROFILES`
    profiles, :data:`~scalebridge.constants.AZURE_MAX_RULES_PER_PROFILE` rules each):
    what is beyond them is left out and said, rather than sent and refused."""
    for k, pr in enumerate(profiles):
        rules = pr["rules"]
        if len(rules) > C.AZURE_MAX_RULES_PER_PROFILE:
            where = "rules" if default_first and k == 0 else path("profiles", k - default_first, "rules")
            losses.add(where, f"Azure takes at most {C.AZURE_MAX_RULES_PER_PROFILE} rules a profile; the "
                              f"{len(rules) - C.AZURE_MAX_RULES_PER_PROFILE} after the first "
                              f"{C.AZURE_MAX_RULES_PER_PROFILE} left out")
            del rules[C.AZURE_MAX_RULES_PER_PROFILE:]
    if len(profiles) > C.AZURE_MAX_PROFILES:
        kept = C.AZURE_MAX_PROFILES - default_first
        losses.add("profiles", f"Azure takes at most {C.AZURE_MAX_PROFILES} profiles a setting"
                               f"{' (the default one among them)' if default_first else ''}; profiles[{kept}:] "
                               f"({len(profiles) - C.AZURE_MAX_PROFILES}) left out")
        del profiles[C.AZURE_MAX_PROFILES:]


def _rules(rules: list[Rule], at: tuple, uri: str, ref: Mapping[str, Any], losses: Losses,
           spread: int) -> list[dict]:
    """The rules of a profile whose capacity spans ``spread`` (maximum - minimum)."""
    out = []
    for i, r in enumerate(rules):
        where = path(*at, i)
        if not r.enabled:
            losses.add(where, "an Azure rule cannot be disabled; left out")
            continue
        if r.steps is not None:
            losses.add(where, "an AWS step-scaling rule is not an Azure rule (one action per rule); dropped")
            continue
        if r.statistic not in _STATS:
            losses.add(path(where, "statistic"), f"Azure has no {r.statistic} statistic; rule dropped")
            continue
        if r.name:
            losses.add(path(where, "name"), "Azure rules have no name; dropped")
        if r.datapoints_to_alarm is not None:
            losses.add(path(where, "datapoints_to_alarm"), "Azure compares the whole window's aggregate; dropped")
        if r.treat_missing_data != "missing":
            losses.add(path(where, "treat_missing_data"), "Azure has no missing-data treatment; dropped")
        if r.adjustment_type is not None or r.min_adjustment_magnitude is not None:
            losses.add(where, "AWS adjustment settings have no Azure equivalent; dropped")
        a = r.action
        cd = a.cooldown_seconds if a.cooldown_seconds is not None else DEFAULT_COOLDOWN
        if not C.AZURE_MIN_COOLDOWN <= cd <= C.AZURE_MAX_COOLDOWN:
            kept = min(max(cd, C.AZURE_MIN_COOLDOWN), C.AZURE_MAX_COOLDOWN)
            losses.add(path(where, "action", "cooldown_seconds"),
                       f"Azure's cooldown is from 1 minute to 1 week; {cd:g} s written as {iso_duration(kept)}")
            cd = kept
        action = {"direction": a.direction, "type": a.type, "cooldown": iso_duration(cd)}
        if a.value is not None:
            action["value"] = str(num(a.value))
            if a.value != int(a.value):
                losses.add(path(where, "action", "value"), f"Azure takes a whole count; {a.value:g} truncated")
                action["value"] = str(int(a.value))
            if a.type == "ChangeCount" and int(a.value) > spread >= 1:
                # Azure refuses the count (InvalidActionValue); written as the span, the change ends at
                # the same bound from inside the capacity, not from a size outside it (a profile whose
                # minimum is its maximum is left as it is: what Azure says of it is not documented)
                losses.add(path(where, "action", "value"), f"Azure refuses a ChangeCount beyond the profile's "
                                                           f"maximum - minimum (InvalidActionValue); {int(a.value)} "
                                                           f"written as {spread}")
                action["value"] = str(spread)
        elif a.type == "ServiceAllowedNextValue":
            action["value"] = "1"
        metric = _trigger_metric(r, where, uri, ref, losses)
        if metric is None:
            continue
        trig = {**metric, "timeGrain": iso_duration(r.time_grain_seconds), "statistic": r.statistic,
                "timeWindow": iso_duration(r.time_window_seconds),
                "timeAggregation": _AGG_OUT.get(r.time_aggregation, r.time_aggregation),
                "operator": r.operator, "threshold": num(r.threshold), "dividePerInstance": r.divide_per_instance}
        out.append({"metricTrigger": trig, "scaleAction": action})
    return out


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=2) + "\n"


# ----------------------------------------------------------------------------- import


def _setting(obj: dict) -> Optional[dict]:
    """``obj`` as an autoscale setting: a resource of that type, a REST response's
    setting, or bare ``properties``."""
    t = obj.get("type")
    if isinstance(t, str) and t.lower() == RESOURCE_TYPE.lower():
        return obj
    if "profiles" in obj and "type" not in obj:
        return {"properties": obj}
    if isinstance(obj.get("properties"), dict) and "profiles" in obj["properties"] and "type" not in obj:
        return obj
    return None


def _holding_settings(obj: dict) -> Iterable[tuple[str, Any]]:
    """Where settings stand in a document: an ARM template's ``resources``, a REST
    response's ``value`` list, a nested deployment's ``properties.template``."""
    for key in ("resources", "value"):
        if key in obj:
            yield key, obj[key]
    props = obj.get("properties")
    if isinstance(props, dict) and "template" in props:
        yield "properties.template", props["template"]


def import_all(text_or_obj: Any, parameters: Optional[Parameters] = None) -> list[tuple[dict, Losses]]:
    """Every autoscale setting of the input (an ARM template's, nested ones too), its
    template's parameters resolved (:func:`resolve_parameters`)."""
    doc = json_document(text_or_obj)
    used: list[str] = []
    doc = resolve_parameters(doc, parameters or Parameters(), used)
    found = resources(doc, _setting, _holding_settings)
    if not found:
        raise NativeError("$", f"no {RESOURCE_TYPE} resource in the input")
    out = [_import_one(s, root) for root, s in found]
    if used:
        for _, losses in out:
            losses.note("$.parameters", "read as their defaultValue: " + ", ".join(used)
                        + " (set one with --parameters KEY=VALUE)")
    return out


#: a whole value that is one template parameter, as ARM writes it: ``[parameters('name')]``
#: (https://learn.microsoft.com/azure/azure-resource-manager/templates/template-functions-deployment#parameters)
_PARAMETER = re.compile(r"^\s*\[\s*parameters\(\s*'([^']*)'\s*\)\s*\]\s*$")


def resolve_parameters(doc: Any, given: Parameters, used: list) -> Any:
    """``doc`` with each value that is exactly ``[parameters('NAME')]`` replaced by the
    parameter's value, as a deployment would: ``--parameters`` (``given``, a later one
    winning), else the template's ``defaultValue`` — itself resolved when it is another
    plain parameter, never when it needs the deployment (``[resourceGroup().location]``).
    Anything else (``variables(…)``, ``concat(…)``, a parameter with no value) stays an
    expression, a loss line where it matters; a nested template (``properties.template``)
    resolves its own parameters from their defaults. ``used`` collects ``NAME=VALUE`` of
    each default read. A ``KEY=VALUE`` is read as the declared type, as the az CLI reads it
    (azure-cli src/azure-cli/azure/cli/command_modules/resource/custom.py,
    ``_try_parse_key_value_object``: object/array JSON, bool ``true``, int ``int()``); a
    name the template does not declare is refused, listing the ones it does."""
    if not isinstance(doc, dict) or not isinstance(doc.get("parameters"), dict) or "resources" not in doc:
        if given:
            raise NativeError("--parameters", "the input is no ARM template with parameters (a deployment "
                                              "template's \"parameters\" and \"resources\")")
        return doc
    declared = {k: v for k, v in doc["parameters"].items() if isinstance(v, dict)}
    values: dict = {}
    for key, value, is_text, where in given.items:
        if key not in declared:
            close = difflib.get_close_matches(key, list(declared), n=1)
            raise NativeError(where, f"unrecognized template parameter {key!r}"
                                     + (f"; did you mean {close[0]!r}?" if close else "")
                                     + f" allowed parameters: {', '.join(sorted(declared)) or 'none'}")
        values[key] = _typed(value, declared[key].get("type"), where) if is_text else value
    defaults: dict = {}
    for key, decl in declared.items():
        if key in values or "defaultValue" not in decl:
            continue
        default = decl["defaultValue"]
        m = _PARAMETER.match(default) if isinstance(default, str) else None
        if m and m.group(1) in values:
            default = values[m.group(1)]
        elif m and isinstance(declared.get(m.group(1)), dict) and "defaultValue" in declared[m.group(1)] \
                and not is_template(declared[m.group(1)]["defaultValue"]):
            default = declared[m.group(1)]["defaultValue"]
        if is_template(default):
            continue        # a deployment's function: left as the expression it is
        defaults[key] = default

    def read(name: str) -> Any:
        if name in values:
            return values[name]
        if name in defaults:
            shown = f"{name}={json.dumps(defaults[name])}"
            if shown not in used:
                used.append(shown)
            return defaults[name]
        raise KeyError(name)

    def walk(v: Any, nested: bool = False) -> Any:
        if isinstance(v, str):
            m = _PARAMETER.match(v)
            if m:
                try:
                    return read(m.group(1))
                except KeyError:
                    return v
            return v
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k == "template" and isinstance(x, dict):
                    out[k] = resolve_parameters(x, Parameters(), used)   # a nested template's own
                else:
                    out[k] = walk(x)
            return out
        return v

    return {**doc, "resources": walk(doc["resources"])}


def _typed(value: str, declared_type: Any, where: str) -> Any:
    kind = declared_type.lower() if isinstance(declared_type, str) else "string"
    if kind in ("object", "array", "secureobject"):
        try:
            return json.loads(value)
        except ValueError as e:
            raise NativeError(where, f"the parameter is of type {declared_type}: not JSON: {e}") from None
    if kind == "bool":
        return value.lower() == "true"
    if kind == "int":
        try:
            return int(value)
        except ValueError:
            raise NativeError(where, f"the parameter is of type {declared_type}: expected an integer, "
                                     f"got {value!r}") from None
    return value


def _hint(v: Any) -> str:
    """How to resolve an expression left in: a parameter with no value is set with --parameters."""
    m = _PARAMETER.match(v) if isinstance(v, str) else None
    return f"no defaultValue: pass --parameters {m.group(1)}=VALUE" if m else ""


def _import_one(res: dict, root: str) -> tuple[dict, Losses]:
    losses = Losses()
    rd = Reader(losses, root, _hint)
    props = rd.mapping(res.get("properties"), "properties")
    policy: dict = {"semantics": "azure"}
    name = props.get("name", res.get("name"))
    if isinstance(name, str) and not rd.template(name, *(("properties", "name") if "name" in props else ("name",))) \
            and not _unnamed(name, props.get("profiles")):
        policy["name"] = name
    if props.get("enabled") is False:
        policy["mode"] = "OFF"
        losses.add(rd.where("properties", "enabled"), "a disabled setting read as mode OFF")
    elif props.get("enabled") is not None and not isinstance(props.get("enabled"), bool):
        rd.template(props["enabled"], "properties", "enabled")
    for key in ("notifications",):
        if props.get(key):
            losses.add(rd.where("properties", key), "notifications are not part of a policy; dropped")
    profiles = rd.listing(props.get("profiles"), "properties", "profiles")
    if not profiles and not rd.template(props.get("profiles"), "properties", "profiles"):
        raise NativeError(rd.where("properties", "profiles"), "required: at least one profile")
    out_profiles = []
    default_seen = False
    for k, pr in enumerate(profiles):
        at = ("properties", "profiles", k)
        pr = rd.mapping(pr, *at)
        rd.unknown(pr, {"name", "capacity", "rules", "recurrence", "fixedDate"}, *at)
        cap = rd.mapping(pr.get("capacity"), *at, "capacity")
        if not cap and "capacity" not in pr:
            raise NativeError(rd.where(*at, "capacity"), "required field is missing")
        c = {f: rd.count(cap.get(f), *at, "capacity", f) for f in ("minimum", "maximum", "default")}
        rd.ordered(c["minimum"], c["maximum"], at + ("capacity", "minimum"), at + ("capacity", "maximum"))
        rules = [r for r in (_rule(rd, rule, at + ("rules", i), props.get("targetResourceUri"))
                             for i, rule in enumerate(rd.listing(pr.get("rules"), *at, "rules"))) if r]
        pname = pr.get("name") if isinstance(pr.get("name"), str) else f"profile-{k}"
        if "recurrence" not in pr and "fixedDate" not in pr and not default_seen:
            default_seen = True
            if c["minimum"] is not None:
                policy["min_replicas"] = c["minimum"]
            if c["maximum"] is not None:
                policy["max_replicas"] = c["maximum"]
            if pname in top_level_names(name) or None in c.values():
                # the policy's own bounds and rules, as render writes them (named after the policy)
                if c["default"] is not None and c["default"] != c["minimum"]:
                    policy["default_replicas"] = c["default"]
                if rules:
                    policy["rules"] = rules
                continue
            # a default profile of its own name, which Azure reports a decision under: kept as one (and
            # its bounds as the policy's, for the providers that have no profiles)
        if None in c.values():
            losses.add(rd.where(*at, "capacity"), "a profile with unresolved capacity; dropped")
            continue
        body: dict = {"name": pname, "capacity": c}
        if rules:
            body["rules"] = rules
        if "recurrence" in pr:
            body["recurrence"] = _recurrence(rd, rd.mapping(pr["recurrence"], *at, "recurrence"), at + ("recurrence",))
        if "fixedDate" in pr:
            body["fixed_date"] = _fixed(rd, rd.mapping(pr["fixedDate"], *at, "fixedDate"), at + ("fixedDate",))
        out_profiles.append(body)
    if out_profiles:
        policy["profiles"] = out_profiles
    pap = props.get("predictiveAutoscalePolicy")
    if isinstance(pap, dict):
        mode = pap.get("scaleMode")
        if mode is not None and not one_of(mode, ("Disabled", "ForecastOnly", "Enabled")):
            if not rd.template(mode, "properties", "predictiveAutoscalePolicy", "scaleMode"):
                raise NativeError(rd.where("properties", "predictiveAutoscalePolicy", "scaleMode"),
                                  f"expected Disabled, ForecastOnly or Enabled, got {mode!r}")
        elif one_of(mode, ("ForecastOnly", "Enabled")):
            pred: dict = {"mode": "ForecastAndScale" if mode == "Enabled" else "ForecastOnly"}
            la = parse_iso_duration(pap.get("scaleLookAheadTime"), rd, "properties", "predictiveAutoscalePolicy",
                                    "scaleLookAheadTime")
            if la is not None:
                pred["look_ahead_seconds"] = num(la)
            policy["predictive"] = pred
    return policy, losses


def neutral_name(name: Any, trigger: dict, target_uri: Any) -> Any:
    """The policy metric name of a rule's metric: the neutral name a scale set's platform
    metric stands for (``Percentage CPU`` → ``cpu``, :data:`METRIC_NAMES`) when it is the
    setting's own scale set's (``metricResourceUri`` the setting's ``targetResourceUri``, or
    none) in the platform namespace; else the metric's own name."""
    uri = trigger.get("metricResourceUri")
    own = uri is None or (isinstance(uri, str) and isinstance(target_uri, str) and uri.lower() == target_uri.lower())
    namespace = trigger.get("metricNamespace")
    platform = namespace is None or (isinstance(namespace, str) and
                                     namespace.lower() == "microsoft.compute/virtualmachinescalesets")
    if isinstance(name, str) and own and platform:
        return METRIC_NAMES.of(name) or name
    return name


def top_level_names(setting: Any) -> tuple:
    """The names render gives the default profile it writes from a policy's own bounds and
    rules: the policy's name (the setting's), else ``default``."""
    return (setting, UNNAMED_PROFILE) if setting == UNNAMED_SETTING or not isinstance(setting, str) else (setting,)


def _unnamed(setting: str, profiles: Any) -> bool:
    """A setting render wrote for a policy without a name: named ``scalebridge``, its default
    profile ``default`` (a named policy names both after itself). Its import has no name,
    so that render → import → render is a fixed point."""
    if setting != UNNAMED_SETTING or not isinstance(profiles, list):
        return False
    default = next((p for p in profiles if isinstance(p, dict) and "recurrence" not in p and "fixedDate" not in p),
                   None)
    return default is not None and default.get("name") == UNNAMED_PROFILE


def _rule(rd: Reader, rule: Any, at: tuple, target_uri: Any = None) -> Optional[dict]:
    rule = rd.mapping(rule, *at)
    rd.unknown(rule, {"metricTrigger", "scaleAction"}, *at)
    t = rd.mapping(rule.get("metricTrigger"), *at, "metricTrigger")
    a = rd.mapping(rule.get("scaleAction"), *at, "scaleAction")
    ta, aa = at + ("metricTrigger",), at + ("scaleAction",)
    rd.unknown(t, {"metricName", "metricNamespace", "metricResourceUri", "metricResourceLocation", "timeGrain",
                   "statistic", "timeWindow", "timeAggregation", "operator", "threshold", "dimensions",
                   "dividePerInstance"}, *ta)
    rd.unknown(a, {"direction", "type", "value", "cooldown"}, *aa)
    for req, obj, where in (("metricName", t, ta), ("operator", t, ta), ("threshold", t, ta),
                            ("direction", a, aa), ("type", a, aa), ("cooldown", a, aa)):
        if obj.get(req) is None:
            raise NativeError(rd.where(*where, req), "required field is missing")
    if t.get("dimensions"):
        rd.losses.add(rd.where(*ta, "dimensions"), "metric dimensions are the metric source's business; dropped")
    if t.get("metricNamespace"):
        rd.losses.note(rd.where(*ta, "metricNamespace"), "the metric namespace is the metric source's business")
    out: dict = {"metric": neutral_name(rd.string(t["metricName"], *ta, "metricName"), t, target_uri)}
    stat = t.get("statistic", "Average")
    if not one_of(stat, _STATS):
        raise NativeError(rd.where(*ta, "statistic"), f"expected one of {', '.join(sorted(_STATS))}, got {stat!r}")
    agg = t.get("timeAggregation", "Average")
    if not one_of(agg, _AGG_IN):
        raise NativeError(rd.where(*ta, "timeAggregation"), f"expected one of {', '.join(_AGG_IN)}, got {agg!r}")
    if not one_of(t["operator"], _OPS):
        raise NativeError(rd.where(*ta, "operator"), f"expected one of {', '.join(sorted(_OPS))}, got {t['operator']!r}")
    out.update(statistic=stat, time_aggregation=_AGG_IN[agg], operator=t["operator"])
    for key, field in (("timeGrain", "time_grain_seconds"), ("timeWindow", "time_window_seconds")):
        if t.get(key) is not None:
            v = parse_iso_duration(t[key], rd, *ta, key)
            if v is not None:
                out[field] = num(v)
    th = rd.number(t["threshold"], *ta, "threshold")
    if th is None:
        return None
    out["threshold"] = th
    if t.get("dividePerInstance") is True:
        out["divide_per_instance"] = True
    if not one_of(a["direction"], ("Increase", "Decrease", "None")):
        raise NativeError(rd.where(*aa, "direction"), f"expected Increase, Decrease or None, got {a['direction']!r}")
    if a["direction"] == "None":
        rd.losses.add(rd.where(*at), "a rule with direction None never acts; dropped")
        return None
    if not one_of(a["type"], _TYPES):
        raise NativeError(rd.where(*aa, "type"), f"expected one of {', '.join(sorted(_TYPES))}, got {a['type']!r}")
    action: dict = {"direction": a["direction"], "type": a["type"]}
    if a.get("value") is not None:
        v = rd.number(a["value"], *aa, "value")
        if v is None:
            return None
        action["value"] = v
    cd = parse_iso_duration(a["cooldown"], rd, *aa, "cooldown")
    if cd is not None:
        action["cooldown_seconds"] = num(cd)
    out["action"] = action
    return out


def _zone_in(rd: Reader, zone: Any, *parts: object) -> Optional[str]:
    z = rd.string(zone, *parts)
    if z is None:
        return None
    try:
        resolve_zone(z)
    except ValueError:
        raise NativeError(rd.where(*parts), f"unknown time zone {z!r}: Azure takes Windows time-zone IDs "
                                            "(\"Pacific Standard Time\")") from None
    return z


def _recurrence(rd: Reader, r: dict, at: tuple) -> dict:
    rd.unknown(r, {"frequency", "schedule"}, *at)
    if r.get("frequency") != "Week":
        raise NativeError(rd.where(*at, "frequency"), f"Azure recurrence frequency must be Week, got "
                                                      f"{r.get('frequency')!r}")
    s = rd.mapping(r.get("schedule"), *at, "schedule")
    sat = at + ("schedule",)
    rd.unknown(s, {"timeZone", "days", "hours", "minutes"}, *sat)
    out: dict = {}
    z = _zone_in(rd, s.get("timeZone"), *sat, "timeZone")
    if z:
        out["time_zone"] = z
    days = rd.listing(s.get("days"), *sat, "days")
    if not days:
        raise NativeError(rd.where(*sat, "days"), "required: at least one day")
    for i, d in enumerate(days):
        if not one_of(d, _DAYS):
            raise NativeError(rd.where(*sat, "days", i), f"expected a day name (Monday … Sunday), got {d!r}")
    out["days"] = days
    for key, hi in (("hours", 23), ("minutes", 59)):
        vals = rd.listing(s.get(key), *sat, key)
        if not vals:
            raise NativeError(rd.where(*sat, key), "required: at least one value")
        for i, v in enumerate(vals):
            n = rd.number(v, *sat, key, i, integer=True)
            if n is None or not 0 <= n <= hi:
                raise NativeError(rd.where(*sat, key, i), f"expected 0 to {hi}, got {v!r}")
        out[key] = [int(v) for v in vals]
    return out


def _fixed(rd: Reader, f: dict, at: tuple) -> dict:
    rd.unknown(f, {"timeZone", "start", "end"}, *at)
    out: dict = {}
    z = _zone_in(rd, f.get("timeZone"), *at, "timeZone")
    if z:
        out["time_zone"] = z
    for key in ("start", "end"):
        v = rd.string(f.get(key), *at, key)
        if v is None:
            raise NativeError(rd.where(*at, key), "required field is missing")
        try:
            to_epoch(v, z or "UTC")
        except ValueError as e:
            raise NativeError(rd.where(*at, key), str(e)) from None
        out[key] = v
    if to_epoch(out["end"], z or "UTC") <= to_epoch(out["start"], z or "UTC"):
        raise NativeError(rd.where(*at, "end"), "end must be after start")
    return out


class AutoscaleSettingTranslator(Translator):
    """``--to azure``: a ``Microsoft.Insights/autoscalesettings`` ARM resource (JSON)."""

    name = "azure"
    provider = "azure"
    summary = "a Microsoft.Insights/autoscalesettings ARM resource (JSON); imports ARM templates and REST responses"
    target_keys = TARGET_KEYS
    metric_names = METRIC_NAMES


    def render(self, policy: Policy, target: Mapping[str, Any]) -> tuple[Any, Losses]:
        return render(policy, target)

    def dump(self, native: Any) -> str:
        return dump(native)

    parameters = "an ARM template's parameters (its defaultValues otherwise)"

    def import_all(self, text: str, parameters: Optional[Parameters] = None) -> list[tuple[dict, Losses]]:
        return import_all(text, parameters)

    def apply(self, name: str, target: Any, policy: Policy, dry_run: bool, say: Callable[[str], None],
              metrics: Mapping[str, Any]) -> bool:
        from .apply import apply_native   # the SDK calls: imported only by apply
        return apply_native(self, name, target, policy, dry_run, say, metrics)
