"""``scalebridge apply CONFIG`` for ``azure`` targets: the
``Microsoft.Insights/autoscalesettings`` resource of the scale set, in its resource group
and location, through ``autoscale_settings.create_or_update``
(https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update),
with the plugin's own ARM session (:class:`~scalebridge_azure.client.ArmSession`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from scalebridge.providers import ErrorKind, ProviderError
from scalebridge.translate.apply import diff


if TYPE_CHECKING:
    from scalebridge.translate.base import Translator

    from .provider import ScaleSetTarget


def apply_native(translator: "Translator", name: str, target: "ScaleSetTarget", policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One azure target; ``target`` is the azure plugin's scale-set handle (its
    ``session`` makes the clients and maps every error)."""
    s, sub, rg = target.session, target.subscription_id, target.resource_group
    vmss = s.call("VirtualMachineScaleSets.Get", s.compute(sub).virtual_machine_scale_sets.get, rg, target.scale_set)
    setting, losses = translator.render(policy, {"subscription_id": sub, "resource_group": rg,
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
