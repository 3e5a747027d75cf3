"""``scalebridge apply CONFIG --native``: create or update each target's native
autoscaler from its policy, through its provider plugin's SDK client.

For an ``azure`` target: the ``Microsoft.Insights/autoscalesettings`` resource of the
scale set, in its resource group and location, through ``autoscale_settings.create_or_update``
(https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update).

For a ``kubernetes`` target: the ``autoscaling/v2`` HorizontalPodAutoscaler, created
in the workload's namespace or replaced (its ``resourceVersion`` guarding the write)
when it differs.

For an ``aws`` target: ``UpdateAutoScalingGroup``, ``PutScalingPolicy`` (each
policy by name: a second apply updates it, never duplicates it), then
``PutMetricAlarm`` with the ``PolicyARN`` PutScalingPolicy returned, and
``PutScheduledUpdateGroupAction``; a scaling policy an earlier apply of the same policy
wrote (its generated name) that the policy no longer has is deleted with its alarm,
any other policy on the group is left as it is
(https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutScalingPolicy.html: "Creates or
updates a scaling policy").

For a ``gce`` target: the Compute ``Autoscaler`` of the managed instance group (the
one the group's ``status.autoscaler`` names, else the one whose ``target`` is the
group's selfLink), inserted or patched through ``AutoscalersClient`` /
``RegionAutoscalersClient`` (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers/insert,
``.../patch``), waiting on the Operation as the plugin's resize does. ``patch`` is a
JSON merge patch, which keeps what the body leaves out: when the autoscaler has a
signal (or a scaling schedule) the policy no longer has, the resource is replaced
with ``update`` (``.../update``) instead. ``--dry-run`` reads what is there and prints the
difference, writing nothing.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterator, Mapping, Optional

from ..errors import ScalebridgeError
from .aws import RENDERED_POLICY_NAME, policy_arn, render as render_aws
from .common import as_policy
from .azure import render as render_azure
from .gce import render as render_gce
from .kubernetes import render as render_hpa


class ApplyError(ScalebridgeError):
    """What the provider's native autoscaler API refused or lacks (a group not found, an
    operation not done): the target failed, not the translator."""


def _flat(obj: Any, at: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flat(v, f"{at}.{k}" if at else k)
    elif isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        for i, v in enumerate(obj):
            yield from _flat(v, f"{at}[{i}]")
    else:
        yield at, obj


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def diff(desired: dict, current: dict, skip: tuple = ()) -> list[str]:
    """``key: old -> new`` for every field of ``desired`` that ``current`` does not hold."""
    have = dict(_flat(current))
    return [f"{k}: {have.get(k)!r} -> {v!r}" for k, v in _flat(desired)
            if k not in skip and not _same(have.get(k), v)]


def _said_diff(say: Callable[[str], None], name: str, op: str, key: str, body: dict, have: Optional[dict],
               skip: tuple = ()) -> list[str]:
    """What ``op`` of ``body`` would change over ``have`` (None: it creates the
    resource), each change said as a line."""
    d = diff(body, have or {}, skip=skip)
    if have is None:
        say(f"{name}: {op} {key}: create")
    else:
        for line in d:
            say(f"{name}: {op} {key}: {line}")
    return d


def apply_aws(name: str, target: Any, policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One aws target; ``target`` is the aws plugin's Auto Scaling group handle
    (its ``clients`` make every call). Returns whether anything changed (or would)."""
    group = target.group
    call = lambda service, op, **kw: target.clients.call(service, op, region=target.region, **kw)  # noqa: E731
    native, losses = render_aws(policy, {"auto_scaling_group": group, "metrics": metrics or {}})
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    groups = call("autoscaling", "describe_auto_scaling_groups", AutoScalingGroupNames=[group])
    if not groups.get("AutoScalingGroups"):
        raise ApplyError(f"Auto Scaling group {group!r} not found")
    changed = False
    for body in native["UpdateAutoScalingGroup"]:
        d = diff(body, groups["AutoScalingGroups"][0], skip=("AutoScalingGroupName",))
        for line in d:
            say(f"{name}: UpdateAutoScalingGroup {group}: {line}")
        if d:
            changed = True
            if not dry_run:
                call("autoscaling", "update_auto_scaling_group", **body)
    existing = {p["PolicyName"]: p for p in
                call("autoscaling", "describe_policies", AutoScalingGroupName=group).get("ScalingPolicies", [])}
    arns: dict[str, str] = {}
    for body in native["PutScalingPolicy"]:
        pname = body["PolicyName"]
        have = existing.get(pname)
        d = _said_diff(say, name, "PutScalingPolicy", pname, body, have, skip=("AutoScalingGroupName",))
        if have is not None:
            arns[pname] = have.get("PolicyARN", policy_arn(pname, group))
        if d:
            changed = True
            if not dry_run:
                arns[pname] = call("autoscaling", "put_scaling_policy", **body).get("PolicyARN", policy_arn(pname, group))
    if changed and not dry_run and native["PutMetricAlarm"]:
        # the ARNs as the group now holds them (a PutScalingPolicy response may leave PolicyARN out)
        for p in call("autoscaling", "describe_policies", AutoScalingGroupName=group).get("ScalingPolicies", []):
            if p.get("PolicyARN"):
                arns[p["PolicyName"]] = p["PolicyARN"]
    base = as_policy(policy).name or "scalebridge"
    for pname in sorted(set(existing) - {b["PolicyName"] for b in native["PutScalingPolicy"]}):
        m = RENDERED_POLICY_NAME.match(pname)
        if m is None or m.group(1) != base:
            say(f"{name}: PutScalingPolicy {pname}: on the group but not in the policy; left as it is")
            continue
        # one this policy rendered before (NAME-metric-i, NAME-rule-i, NAME-predictive) that it no longer
        # has: DeletePolicy, and the rule's alarm, which "DeletePolicy ... does not delete"
        # (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DeletePolicy.html)
        changed = True
        say(f"{name}: DeletePolicy {pname}: no longer in the policy")
        alarm = f"{pname}-alarm"
        has_alarm = bool(call("cloudwatch", "describe_alarms", AlarmNames=[alarm]).get("MetricAlarms"))
        if has_alarm:
            say(f"{name}: DeleteAlarms {alarm}: no longer in the policy")
        if not dry_run:
            call("autoscaling", "delete_policy", AutoScalingGroupName=group, PolicyName=pname)
            if has_alarm:
                call("cloudwatch", "delete_alarms", AlarmNames=[alarm])
    alarms = native["PutMetricAlarm"]
    current_alarms = {}
    if alarms:
        current_alarms = {a["AlarmName"]: a for a in call("cloudwatch", "describe_alarms",
                                                          AlarmNames=[a["AlarmName"] for a in alarms])
                          .get("MetricAlarms", [])}
    for body in alarms:
        body = dict(body, AlarmActions=[arns.get(a.rsplit("policyName/", 1)[-1], a) for a in body["AlarmActions"]])
        d = _said_diff(say, name, "PutMetricAlarm", body["AlarmName"], body, current_alarms.get(body["AlarmName"]))
        if d:
            changed = True
            if not dry_run:
                call("cloudwatch", "put_metric_alarm", **body)
    scheduled = native["PutScheduledUpdateGroupAction"]
    current_scheduled = {a["ScheduledActionName"]: a for a in call(
        "autoscaling", "describe_scheduled_actions", AutoScalingGroupName=group).get("ScheduledUpdateGroupActions", [])}
    wanted = {b["ScheduledActionName"] for b in scheduled}
    stale = set(current_scheduled) - wanted
    for start in sorted(a for a in stale if a.startswith(f"{base}-") and a.endswith("-start")):
        # the pair an earlier apply of this policy wrote for a schedule it no longer has
        # (NAME-SCHEDULE-start and NAME-SCHEDULE-end); a lone action is someone else's
        end = start[:-len("start")] + "end"
        if end not in stale:
            continue
        changed = True
        for aname in (start, end):
            say(f"{name}: DeleteScheduledAction {aname}: no longer in the policy")
            if not dry_run:
                call("autoscaling", "delete_scheduled_action", AutoScalingGroupName=group, ScheduledActionName=aname)
    for body in scheduled:
        d = _said_diff(say, name, "PutScheduledUpdateGroupAction", body["ScheduledActionName"], body,
                       current_scheduled.get(body["ScheduledActionName"]), skip=("AutoScalingGroupName",))
        if d:
            changed = True
            if not dry_run:
                call("autoscaling", "put_scheduled_update_group_action", **body)
    if not changed:
        say(f"{name}: unchanged")
    return changed


def apply_kubernetes(name: str, target: Any, policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One kubernetes target; ``target`` is the kubernetes plugin's workload handle
    (its ``client`` makes every call)."""
    from ..providers import ErrorKind, ProviderError
    c = target.client
    ref = {"kind": target.kind, "api_version": target.api_version, "namespace": target.namespace,
           "name": target.workload, "metrics": metrics or {}}
    hpa, losses = render_hpa(policy, ref)
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    hpa_name, ns = hpa["metadata"]["name"], target.namespace
    try:
        have = c.call("read HorizontalPodAutoscaler", c.autoscaling.read_namespaced_horizontal_pod_autoscaler,
                      hpa_name, ns)
    except ProviderError as e:
        if e.kind != ErrorKind.NOT_FOUND:
            raise
        have = None
    if have is None:
        say(f"{name}: HorizontalPodAutoscaler {ns}/{hpa_name}: create")
        if not dry_run:
            c.call("create HorizontalPodAutoscaler", c.autoscaling.create_namespaced_horizontal_pod_autoscaler,
                   ns, hpa)
        return True
    current = c.api_client.sanitize_for_serialization(have)
    d = diff(hpa["spec"], current.get("spec") or {})
    # the API server fills in behavior defaults the policy did not state: only what the policy states counts
    for line in d:
        say(f"{name}: HorizontalPodAutoscaler {ns}/{hpa_name}: spec.{line}")
    if d and not dry_run:
        body = dict(hpa, metadata=dict(hpa["metadata"], resourceVersion=current["metadata"].get("resourceVersion")))
        c.call("replace HorizontalPodAutoscaler", c.autoscaling.replace_namespaced_horizontal_pod_autoscaler,
               hpa_name, ns, body)
    if not d:
        say(f"{name}: unchanged")
    return bool(d)


def apply_azure(name: str, target: Any, policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One azure target; ``target`` is the azure plugin's scale-set handle (its
    ``session`` makes the clients and maps every error)."""
    from ..providers import ErrorKind, ProviderError
    s, sub, rg = target.session, target.subscription_id, target.resource_group
    vmss = s.call("VirtualMachineScaleSets.Get", s.compute(sub).virtual_machine_scale_sets.get, rg, target.scale_set)
    setting, losses = render_azure(policy, {"subscription_id": sub, "resource_group": rg,
                                            "scale_set": target.scale_set, "location": vmss.location,
                                            "metrics": metrics or {}})
    setting["properties"]["targetResourceUri"] = target.id
    for prof in setting["properties"]["profiles"]:
        for rule in prof["rules"]:
            rule["metricTrigger"]["metricResourceUri"] = target.id
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    monitor = s.monitor(sub)
    sname = setting["name"]
    try:
        have = s.call("AutoscaleSettings.Get", monitor.autoscale_settings.get, rg, sname)
    except ProviderError as e:
        if e.kind != ErrorKind.NOT_FOUND:
            raise
        have = None
    d = diff(setting["properties"], have.serialize()["properties"]) if have is not None else ["create"]
    for line in d:
        say(f"{name}: autoscalesettings {rg}/{sname}: {line if have is not None else 'create'}")
    if d and not dry_run:
        # a dict body: the client's serializer reads it as its AutoscaleSettingResource
        s.call("AutoscaleSettings.CreateOrUpdate", monitor.autoscale_settings.create_or_update, rg, sname,
               {k: v for k, v in setting.items() if k not in ("type", "apiVersion", "name")})
    if not d:
        say(f"{name}: unchanged")
    return bool(d)


#: autoscalingPolicy fields a policy states or leaves out (server defaults aside)
_GCE_SIGNALS = ("cpuUtilization", "loadBalancingUtilization", "customMetricUtilizations", "scalingSchedules",
                "scaleInControl")


def _gce_stale(desired: dict, current: dict) -> list[str]:
    """``key: old -> None`` for each signal or schedule ``current`` has and ``desired``
    does not. With no signal at all the API itself uses CPU at 0.6
    (autoscalers reference, ``autoscalingPolicy.cpuUtilization``): that one is not stale."""
    out = []
    for k in _GCE_SIGNALS:
        have = current.get(k)
        if have is None or have == {} or have == []:
            continue
        if k not in desired:
            signals = any(s in desired for s in _GCE_SIGNALS if s != "scalingSchedules")
            if k != "cpuUtilization" or signals:
                out.append(f"autoscalingPolicy.{k}: {have!r} -> None")
        elif k == "scalingSchedules":
            for sname in sorted(set(have) - set(desired[k])):
                out.append(f"autoscalingPolicy.scalingSchedules.{sname}: {have[sname]!r} -> None")
    return out


def apply_gce(name: str, target: Any, policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One gce target; ``target`` is the gce plugin's managed-instance-group handle
    (its ``clients`` build every Compute client and map every error)."""
    import json

    c = target.clients
    compute_v1 = c.types()
    zonal = target.zone is not None
    scope = {"zone": target.zone} if zonal else {"region": target.region}
    native, losses = render_gce(policy, {"project": target.project, "instance_group_manager": target.igm_name,
                                         "metrics": metrics or {}, **scope})
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    igm_api = "instanceGroupManagers" if zonal else "regionInstanceGroupManagers"
    igm = c.call(f"{igm_api}.get", c.compute("InstanceGroupManagersClient" if zonal else
                                              "RegionInstanceGroupManagersClient").get,
                 project=target.project, instance_group_manager=target.igm_name, **scope)
    api = "autoscalers" if zonal else "regionAutoscalers"
    client = c.compute("AutoscalersClient" if zonal else "RegionAutoscalersClient")
    have = None
    if igm.status.autoscaler:
        have = c.call(f"{api}.get", client.get, project=target.project,
                      autoscaler=igm.status.autoscaler.rsplit("/", 1)[-1], **scope)
    else:
        have = next((a for a in c.pages(f"{api}.list", client.list, project=target.project, **scope)
                     if a.target == igm.self_link), None)
    where = f"{'zones/' + target.zone if zonal else 'regions/' + target.region}/autoscalers"
    body = compute_v1.Autoscaler.from_json(json.dumps(native))
    if have is None:
        say(f"{name}: {where}/{native['name']}: create")
        d = ["create"]
    else:
        current = json.loads(compute_v1.Autoscaler.to_json(have, use_integers_for_enums=False))
        d = diff({k: native[k] for k in ("target", "autoscalingPolicy")}, current)
        stale = _gce_stale(native["autoscalingPolicy"], current.get("autoscalingPolicy") or {})
        d += stale
        for line in d:
            say(f"{name}: {where}/{have.name}: {line}")
    if d and not dry_run:
        if have is None:
            req_cls = compute_v1.InsertAutoscalerRequest if zonal else compute_v1.InsertRegionAutoscalerRequest
            req, verb = req_cls(project=target.project, autoscaler_resource=body, request_id=c.request_id(),
                                **scope), "insert"
        else:
            body.name = have.name   # changed in place, under the name it has
            verb = "update" if stale else "patch"
            req_cls = getattr(compute_v1, f"{verb.capitalize()}{'' if zonal else 'Region'}AutoscalerRequest")
            req = req_cls(project=target.project, autoscaler=have.name, autoscaler_resource=body,
                          request_id=c.request_id(), **scope)
        op = c.call(f"{api}.{verb}", getattr(client, f"{verb}_unary"), request=req)
        op = target._wait(op)
        err = c.operation_error(op, f"{api}.{verb}")
        if err is not None:
            raise err
        if str(getattr(op.status, "name", op.status)) != "DONE":
            raise ApplyError(f"{api}.{verb}: operation {op.name} not DONE after "
                              f"{target.provider.operation_wait:g}s")
    if not d:
        say(f"{name}: unchanged")
    return bool(d)


def cmd_apply(args: Any) -> int:
    """Apply every target of the run configuration natively, through the translator
    registered for its provider; exit 1 when any target failed, its provider declares
    no ``Capability.TRANSLATE`` or a translator failed, 2 for a bad configuration."""
    from .. import plugins
    from ..controller.config import build, load_config
    from ..providers import Capability
    from . import call
    loaded = load_config(args.config)
    runtime = build(loaded)
    failed = 0

    def say(line: str) -> None:
        print(line, file=sys.stdout)

    def refuse(spec: Any, why: str) -> None:
        nonlocal failed
        print(f"scalebridge apply: {spec.name}: {why}", file=sys.stderr)
        failed += 1

    actuated = _actuated(loaded, runtime, getattr(args, "state", None))
    try:
        for spec in runtime.targets:
            if spec.name in actuated:
                refuse(spec, f"refused: `scalebridge run` actuates this target (it has decision state in "
                             f"{actuated[spec.name]}); a target is actuated or translated, never both "
                             "(`scalebridge state reset` forgets it)")
                continue
            kind = spec.provider.name
            entry = plugins.translator_for_provider(kind)
            if Capability.TRANSLATE not in spec.provider.capabilities:
                refuse(spec, f"--native is not available for {kind} targets: the {kind} provider does not declare "
                             f"Capability.TRANSLATE (providers that do: {', '.join(_translating()) or 'none'})")
                continue
            if entry is None or not type(entry.obj).can("apply"):
                refuse(spec, f"the {kind} provider declares Capability.TRANSLATE, but no translator registered for "
                             f"it can apply (scalebridge_register_translators: a translator with provider = {kind!r} "
                             "and an apply method)")
                continue
            metrics = {q.name: {"source": dict(q.source)} for q in spec.queries if q.source}
            try:
                call(entry, "apply", spec.name, spec.target, spec.policy, args.dry_run, say, metrics)
            except ScalebridgeError as e:   # a provider's refusal or error: this target failed, the others go on
                refuse(spec, str(e))
    finally:
        runtime.close()
    return 1 if failed else 0


def _translating() -> list[str]:
    """The registered providers that declare ``Capability.TRANSLATE``."""
    from .. import plugins
    from ..providers import Capability
    return sorted(name for name, r in plugins.registry().providers.items()
                  if Capability.TRANSLATE in getattr(r.obj, "capabilities", ()))


def _actuated(loaded: Any, runtime: Any, override: Any) -> dict[str, str]:
    """Targets with decision state in the run configuration's store, by name (where).
    A state file that does not exist yet holds none (and is not created)."""
    from pathlib import Path

    from ..controller.config import DEFAULT_STATE_PATH
    from ..controller.store import SQLiteStore, open_store
    state = override if override is not None else runtime.state
    if isinstance(state, dict):
        store = open_store(state, runtime.providers, base=loaded.path.parent)
        where = f"the {state.get('provider')} store"
    else:
        p = Path(state or DEFAULT_STATE_PATH).expanduser()
        if override is None and state and not p.is_absolute():
            p = loaded.path.parent / p
        if not p.exists():
            return {}
        store, where = SQLiteStore(p, readonly=True), str(p)
    try:
        return {name: where for name in store.load_all()}
    finally:
        store.close()
