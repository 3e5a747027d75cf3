"""``scalebridge apply CONFIG`` for ``gce`` targets: the Compute ``Autoscaler`` of the
managed instance group (the one the group's ``status.autoscaler`` names, else the one whose
``target`` is the group's selfLink), inserted or patched through ``AutoscalersClient`` /
``RegionAutoscalersClient`` (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers/insert,
``.../patch``), waiting on the Operation as the provider's resize does. ``patch`` is a JSON
merge patch, which keeps what the body leaves out: when the autoscaler has a signal (or a
scaling schedule) the policy no longer has, the resource is replaced with ``update``
(``.../update``) instead. Every call goes through the plugin's own clients
(:class:`~scalebridge_gce.client.GceClients`).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from scalebridge.translate.apply import ApplyError, diff


if TYPE_CHECKING:
    from scalebridge.translate.base import Translator

    from .provider import GceTarget


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


def apply_native(translator: "Translator", name: str, target: "GceTarget", policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One gce target; ``target`` is the gce plugin's managed-instance-group handle
    (its ``clients`` build every Compute client and map every error)."""
    c = target.clients
    compute_v1 = c.types()
    zonal = target.zone is not None
    scope = {"zone": target.zone} if zonal else {"region": target.region}
    native, losses = translator.render(policy, {"project": target.project, "instance_group_manager": target.igm_name,
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
        op = target.wait(op)
        err = c.operation_error(op, f"{api}.{verb}")
        if err is not None:
            raise err
        if str(getattr(op.status, "name", op.status)) != "DONE":
            raise ApplyError(f"{api}.{verb}: operation {op.name} not DONE after "
                              f"{target.provider.operation_wait:g}s")
    if not d:
        say(f"{name}: unchanged")
    return bool(d)
