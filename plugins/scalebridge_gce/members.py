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
- ``STOPPED``, ``SUSPENDED``, ``TERMINATED``: ``Failed`` (not serving, not starting);
- in a group with a standby pool (``targetSuspendedSize`` or ``targetStoppedSize`` above
  0): ``SUSPENDED``/``STOPPED`` VMs, and those the group is ``SUSPENDING``/``STOPPING``,
  are ``standby`` — outside the group's capacity, not failed: ``targetSize`` is "the
  target number of running instances" and the pool's VMs are counted by
  ``targetSuspendedSize``/``targetStoppedSize``
  (https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers;
  https://cloud.google.com/compute/docs/instance-groups/suspended-and-stopped-vms-in-mig).
  A stopped VM may read ``TERMINATED`` ("The instance has stopped (either by explicit
  action or underlying failure)", ``ManagedInstance.instanceStatus``): in a group with a
  stopped pool one is standby while the pool holds fewer than ``targetStoppedSize``.
  VMs the group is creating beyond ``targetSize`` refill the pool ("replenishes the standby
  pool afterwards", ``standbyPolicy.mode`` ``SCALE_OUT_POOL``): standby too
  (:func:`pool_members`).

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
from dataclasses import replace
from typing import Any, Optional

from scalebridge.protocol import Member

__all__ = ["enum_name", "member", "pool_members", "rfc3339", "standby_pool", "unsettled", "zone_of"]

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
    return Member(name=mi.name, start_time=start_time, requests={"cpu": vcpus} if vcpus else None, **out)


_TO_POOL = frozenset(("SUSPENDING", "STOPPING"))


def standby_pool(igm: Any) -> Optional[dict]:
    """The group's standby pool as ``observe`` details show it (None without one)."""
    suspended = int(getattr(igm, "target_suspended_size", 0) or 0)
    stopped = int(getattr(igm, "target_stopped_size", 0) or 0)
    policy = getattr(igm, "standby_policy", None)
    mode = enum_name(policy.mode) if policy is not None and "mode" in policy else ""
    if not (suspended or stopped or mode):
        return None
    return {"mode": mode or "MANUAL", "target_suspended_size": suspended, "target_stopped_size": stopped}


def pool_members(igm: Any, managed: list, members: list[Member]) -> list[Member]:
    """``members`` with those in the group's standby pool marked ``standby``
    (module docstring); ``members`` itself when the group has no pool."""
    pool = standby_pool(igm)
    if pool is None or not (pool["target_suspended_size"] or pool["target_stopped_size"]):
        return members
    out = list(members)
    stopped_room = pool["target_stopped_size"] - sum(
        1 for mi in managed if enum_name(mi.instance_status) in ("STOPPED", "STOPPING"))
    for i, mi in enumerate(managed):
        action = enum_name(mi.current_action) or "NONE"
        status = enum_name(mi.instance_status)
        if action in _LEAVING:
            continue
        if action in _TO_POOL or (action == "NONE" and status in ("SUSPENDED", "SUSPENDING", "STOPPED", "STOPPING")):
            out[i] = replace(out[i], standby=True, phase="Pending", ready=False)
        elif action == "NONE" and status == "TERMINATED" and stopped_room > 0:
            stopped_room -= 1
            out[i] = replace(out[i], standby=True, phase="Pending", ready=False)
    serving = sum(1 for m in out if not m.standby and not m.deleting)
    excess = serving - int(igm.target_size)
    for i in reversed(range(len(out))):   # the newest creations refill the pool
        if excess <= 0:
            break
        if not out[i].standby and not out[i].deleting and \
                (enum_name(managed[i].current_action) or "NONE") in ("CREATING", "CREATING_WITHOUT_RETRIES"):
            out[i] = replace(out[i], standby=True)
            excess -= 1
    return out


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
