"""Managed instances as the decision protocol's members, and a group's state as an
operation in flight.

A managed instance's ``currentAction`` and ``instanceStatus``
(https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers/listManagedInstances)
map to ``phase``/``ready``/``deleting``:

- ``NONE`` or ``REFRESHING`` on a ``RUNNING`` instance: ``Running``, ready — it
  serves load ("NONE The instance is running, and the managed instance group does
  not have any scheduled actions for this instance"; "REFRESHING The managed
  instance group is applying configuration changes to the instance without
  stopping it");
- ``CREATING``, ``CREATING_WITHOUT_RETRIES``, ``RECREATING``, ``VERIFYING``,
  ``STARTING``, ``RESUMING`` or an instance not yet ``RUNNING`` (``PROVISIONING``,
  ``STAGING``, ``PENDING``, ``REPAIRING``): ``Pending`` — requested, serving no load
  yet ("VERIFYING The managed instance group has created the instance and it is in
  the process of being verified");
- ``DELETING``, ``ABANDONING``: ``deleting`` (leaving the group);
- ``RESTARTING``, ``STOPPING``, ``SUSPENDING`` on a running instance: ``Running``,
  not ready;
- ``STOPPED``, ``SUSPENDED``, ``TERMINATED``: ``Failed`` (not serving, not starting).

``start_time`` is the instance's ``lastStartTimestamp`` (else its
``creationTimestamp``): the ``gce`` semantics counts the initialization period
from it — "when scaling out, the autoscaler ignores data from VMs that are still
initializing" (autoscalingPolicy.coolDownPeriodSec,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers).
``requests.cpu`` is the instance's vCPU count (its machine type's ``guestCpus``),
so that CPU utilization is that of the group's total vCPUs, as GCE computes it
(https://cloud.google.com/compute/docs/autoscaler/scaling-cpu).
"""
from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

from scalebridge.protocol import Member

__all__ = ["enum_name", "member", "rfc3339", "unsettled", "zone_of"]

_STARTING = frozenset(("CREATING", "CREATING_WITHOUT_RETRIES", "RECREATING", "VERIFYING", "STARTING",
                       "RESUMING"))
_LEAVING = frozenset(("DELETING", "ABANDONING"))
_PAUSING = frozenset(("RESTARTING", "STOPPING", "SUSPENDING"))
_BOOTING = frozenset(("PROVISIONING", "STAGING", "PENDING", "REPAIRING", ""))
_DOWN = frozenset(("STOPPED", "SUSPENDED", "TERMINATED", "DEPROVISIONING", "PENDING_STOP"))


def rfc3339(text: str) -> Optional[float]:
    """Seconds since the epoch of a Compute timestamp (``2026-12-01T10:00:00.000-08:00``)."""
    if not text:
        return None
    try:
        return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def zone_of(url: str) -> Optional[str]:
    """The zone of an instance URL (``…/zones/{zone}/instances/{name}``)."""
    parts = url.split("/")
    try:
        return parts[parts.index("zones") + 1]
    except (ValueError, IndexError):
        return None


def enum_name(value: Any) -> str:
    """An enum field's name, whether the SDK gives a string or an enum member
    (``""`` for unset and the ``UNDEFINED_*`` placeholders)."""
    name = getattr(value, "name", None)
    if name is None:
        name = str(value or "")
    return "" if name.startswith("UNDEFINED") else name


def member(mi: Any, start_time: Optional[float], vcpus: Optional[int]) -> Member:
    """The protocol member of one ``ManagedInstance``."""
    action = enum_name(mi.current_action) or "NONE"
    status = enum_name(mi.instance_status)
    out: dict[str, Any] = {}
    if action in _LEAVING:
        out.update(phase="Running" if status == "RUNNING" else "Pending", ready=False, deleting=True)
    elif action in _STARTING or status in _BOOTING:
        out.update(phase="Pending", ready=False)
    elif status in _DOWN:
        out.update(phase="Failed", ready=False)
    elif action in _PAUSING:
        out.update(phase="Running", ready=False)
    else:
        out.update(phase="Running", ready=True)
    z = zone_of(mi.instance) if mi.instance else None
    if z:                                   # for a zone_balanced scale-in
        out["zone"] = z
    return Member(name=mi.name, start_time=start_time, requests={"cpu": vcpus} if vcpus else None, **out)


def unsettled(igm: Any) -> Optional[str]:
    """Why a group is not settled (``status.isStable`` false), naming its current
    actions, or None when it is stable
    (https://cloud.google.com/compute/docs/instance-groups/working-with-managed-instances#checking_whether_a_mig_is_stable)."""
    if igm.status.is_stable:
        return None
    acts = igm.current_actions
    busy = []
    for key in ("creating", "creating_without_retries", "verifying", "recreating", "deleting", "abandoning",
                "restarting", "refreshing", "starting", "stopping", "suspending", "resuming"):
        n = getattr(acts, key, 0) if acts else 0
        if n:
            busy.append(f"{key} {n}")
    return "instance group manager not stable" + (f" ({', '.join(busy)})" if busy else "")
