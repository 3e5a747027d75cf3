"""The role in docs/providers/azure.md holds exactly the actions the provider uses.

ARM authorizes a request by its operation, ``{namespace}/{type}[/{child type}…]/{read|write|delete}``
for GET / PUT and PATCH / DELETE, ``…/{action}/action`` for a POST to an action
(https://learn.microsoft.com/azure/role-based-access-control/resource-provider-operations);
the operations are derived here from the requests the ARM server recorded while the
provider observed, read metrics, resized and checked refusal, for both orchestration modes,
and read an autoscale setting's actions (shadow mode).
"""
from __future__ import annotations

import json
import pathlib
import re
import time

from scalebridge.providers import MetricQuery, Observation

from .conftest import SUB

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "providers" / "azure.md"
_VERB = {"GET": "read", "PUT": "write", "PATCH": "write", "DELETE": "delete", "POST": "action"}


def operation(method: str, path: str) -> str:
    """The RBAC operation of an ARM request: the types after the last ``/providers/``."""
    tail = re.split(r"/providers/", path, flags=re.IGNORECASE)[-1].strip("/").split("/")
    namespace, parts = tail[0], tail[1:]
    types = parts[0::2]          # type, name, child type, name, …
    return "/".join([namespace, *types, _VERB[method]])


def documented_actions() -> set[str]:
    block = re.search(r"```json\n(\{.*?\})\n```", DOC.read_text(), re.S)
    return set(json.loads(block.group(1))["Actions"])


def test_the_documented_role_is_exactly_what_the_provider_calls(arm, provider):
    arm.update_polls = 0
    now = time.time()
    for name, mode in (("web", "Uniform"), ("flex", "Flexible")):
        arm.add_scale_set(SUB, "shop", name, capacity=1, orchestration=mode)
        arm.put_metric(arm.scale_set_id(SUB, "shop", name), "Percentage CPU",
                       [(now - 60 * k, 50.0) for k in range(1, 6)], vm=f"{name}_0")
        t = provider.target({"resource_group": "shop", "scale_set": name})
        t.managed_by()
        obs = t.observe(now)
        t.read_metrics(now, obs, [MetricQuery("cpu", "resource", {}, 60.0, shapes=frozenset({"members"}))])
        t.set_size(2)
        t.observe(now)
        arm.scale_set(SUB, "shop", name).provisioning = "Succeeded"
        t.delete_members([t.observe(now).members[0].name], 1)    # a scale-in of a chosen instance
    # shadow mode: the autoscale setting's scale actions in the Activity Log
    arm.add_autoscale_setting(SUB, "shop", "web-autoscale", arm.scale_set_id(SUB, "shop", "web"))
    provider._settings.clear()
    provider.target({"resource_group": "shop", "scale_set": "web"}).native_decision(now, None)
    arm_calls = [(m, p) for m, p, _ in arm.calls if "/oauth2/" not in p and "/.well-known/" not in p]
    used = {operation(m, p) for m, p in arm_calls}
    assert {a.lower() for a in used} == {a.lower() for a in documented_actions()}


def test_operation_names_follow_arms_scheme():
    assert operation("GET", "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/"
                            "virtualMachineScaleSets/web/virtualMachines") == \
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read"
    assert operation("PATCH", "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/"
                              "virtualMachineScaleSets/web") == "Microsoft.Compute/virtualMachineScaleSets/write"
    assert operation("GET", "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/"
                            "web/providers/Microsoft.Insights/metrics") == "Microsoft.Insights/metrics/read"
