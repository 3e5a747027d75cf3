"""An Auto Scaling group's instances as the decision protocol's members.

Lifecycle states: https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-lifecycle.html
and the ``LifecycleState`` values of
https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Instance.html. How the
``aws`` semantics reads members (``scalebridge.stages.warmup``): a ``Pending``
member is launching (a scale-out in progress, in no capacity); a ``Running``
member not ``ready: false`` and not ``deleting`` is in service; a ``deleting``
``Running`` member is terminating (counted in a scale-in's base).

| LifecycleState | member |
|---|---|
| ``Pending``, ``Pending:Wait``, ``Pending:Proceed`` | ``phase: Pending``, ``ready: false`` |
| ``InService`` (``HealthStatus: Healthy``) | ``phase: Running``, ``ready: true`` |
| ``InService`` (``HealthStatus: Unhealthy``) | ``phase: Running``, ``ready: false`` (to be replaced) |
| ``ReplacingRootVolume``, ``ReplacingRootVolume:Wait``, ``ReplacingRootVolume:Proceed``, ``RootVolumeReplaced`` | ``phase: Running``, ``ready: false``: the instance stays in the group while an instance refresh replaces its root volume, then is health-checked before it is back ``InService`` (UG replace-root-volume.html) |
| ``Terminating``, ``Terminating:Wait``, ``Terminating:Proceed`` | ``phase: Running``, ``deleting: true`` |
| ``Terminating:Retained`` | not a member: "Retained instances do not count toward your Amazon EC2 Auto Scaling group's desired capacity. When an instance enters a retained state, Auto Scaling launches a replacement instance" (UG manage-retained-instances.html) |
| ``EnteringStandby``, ``Standby`` | ``standby: true`` (neither capacity nor a failure; ``phase: Pending``, ``ready: false``): "instances that are on standby are still part of the Auto Scaling group, but they do not actively handle load" and leave the desired capacity when put on standby with a decrement (UG as-enter-exit-standby.html) |
| ``Detaching``, ``Detached``, ``Terminated``, ``Quarantined`` | not a member |
| ``Warmed:Pending*``, ``Warmed:Stopped``, ``Warmed:Running``, ``Warmed:Hibernated`` | ``standby: true``: warm pool instances are outside the group's capacity until they leave the pool ("As instances leave the warm pool, they count toward the desired capacity of the group", UG ec2-auto-scaling-warm-pools.html, "Core concepts") |
| ``Warmed:Terminating*``, ``Warmed:Terminated`` | not a member: leaving the warm pool for good |

Every value of the API's ``LifecycleState`` enum is in exactly one of the sets
below (:data:`KNOWN`); a state this module does not know is not a member.

A member's ``start_time`` is its EC2 ``LaunchTime``; its
``ready_transition_time`` is when the provider first saw it ``InService`` after
seeing it in another state (an instance leaving the warm pool, finishing a
lifecycle hook or back from a root volume replacement), else absent — the
semantics then counts warm-up from the launch time. ``weight`` is the instance's ``WeightedCapacity`` (capacity units,
UG ec2-auto-scaling-mixed-instances-groups-instance-weighting.html).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

from scalebridge.protocol import Member

__all__ = ["PENDING", "IN_SERVICE", "REPLACING_ROOT_VOLUME", "TERMINATING", "STANDBY", "RETAINED", "GONE",
           "WARM_POOL", "IN_POOL", "KNOWN", "member_of", "unsettled", "weight"]

PENDING = frozenset({"Pending", "Pending:Wait", "Pending:Proceed"})
IN_SERVICE = frozenset({"InService"})
REPLACING_ROOT_VOLUME = frozenset({"ReplacingRootVolume", "ReplacingRootVolume:Wait", "ReplacingRootVolume:Proceed",
                                   "RootVolumeReplaced"})
TERMINATING = frozenset({"Terminating", "Terminating:Wait", "Terminating:Proceed"})
STANDBY = frozenset({"EnteringStandby", "Standby"})
RETAINED = frozenset({"Terminating:Retained"})
GONE = frozenset({"Detaching", "Detached", "Terminated", "Quarantined"})
WARM_POOL = frozenset({"Warmed:Pending", "Warmed:Pending:Wait", "Warmed:Pending:Proceed", "Warmed:Pending:Retained",
                       "Warmed:Terminating", "Warmed:Terminating:Wait", "Warmed:Terminating:Proceed",
                       "Warmed:Terminating:Retained", "Warmed:Terminated", "Warmed:Stopped", "Warmed:Running",
                       "Warmed:Hibernated"})
#: kept ready outside the group's capacity: ``standby`` members (neither capacity nor failures)
IN_POOL = STANDBY | frozenset({"Warmed:Pending", "Warmed:Pending:Wait", "Warmed:Pending:Proceed",
                               "Warmed:Pending:Retained", "Warmed:Stopped", "Warmed:Running", "Warmed:Hibernated"})
KNOWN = PENDING | IN_SERVICE | REPLACING_ROOT_VOLUME | TERMINATING | STANDBY | RETAINED | GONE | WARM_POOL
#: outside the group's capacity and no sign of an activity (a retained instance
#: stays until someone terminates it; its replacement shows as Pending)
_OUTSIDE = IN_POOL | RETAINED


def weight(instance: Mapping) -> int:
    """An instance's capacity units (``WeightedCapacity``, default 1)."""
    w = instance.get("WeightedCapacity")
    if w in (None, ""):
        return 1
    try:
        return max(1, int(w))
    except (TypeError, ValueError):
        return 1


def member_of(instance: Mapping, launch_time: Optional[float],
              ready_since: Optional[float] = None) -> Optional[Member]:
    """The protocol member of one ``Instances[]`` entry (``standby`` in the warm pool or
    on standby), or None when the instance is leaving the group (detaching, retained,
    terminated)."""
    state = instance.get("LifecycleState") or ""
    m: dict = {"name": instance["InstanceId"], "start_time": launch_time}
    w = weight(instance)
    if w != 1:
        m["weight"] = w
    if state in PENDING:
        m.update(phase="Pending", ready=False)
    elif state in IN_SERVICE:
        healthy = (instance.get("HealthStatus") or "Healthy") == "Healthy"
        m.update(phase="Running", ready=healthy)
        if ready_since is not None:
            m["ready_transition_time"] = ready_since
    elif state in REPLACING_ROOT_VOLUME:
        m.update(phase="Running", ready=False)
    elif state in TERMINATING:
        m.update(phase="Running", ready=False, deleting=True)
    elif state in IN_POOL:
        m.update(phase="Pending", ready=False, standby=True)
    else:
        return None
    return Member(**m)


def unsettled(desired: int, instances: Iterable[Mapping]) -> bool:
    """The group looks busy: an instance is not ``InService`` or the capacity in
    service differs from the desired capacity (a scaling activity is likely in
    progress: worth a ``DescribeScalingActivities``)."""
    cap = 0
    for i in instances:
        state = i.get("LifecycleState")
        if state in _OUTSIDE:
            continue
        if state not in IN_SERVICE:
            return True
        cap += weight(i)
    return cap != desired
