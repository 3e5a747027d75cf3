"""Pods as the decision protocol's members: exactly the pod fields the HPA
controller reads.

- ``groupPods`` (pkg/controller/podautoscaler/replica_calculator.go): the pod's
  ``deletionTimestamp``, ``status.phase``, its ``Ready`` condition (status and
  ``lastTransitionTime``) and ``status.startTime``. A Ready condition of status
  ``Unknown`` is neither ``False`` nor absent there, so it counts as ready; a pod
  without ``startTime`` is treated upstream like one without a Ready condition
  (``condition == nil || pod.Status.StartTime == nil``), so it is reported with
  ``ready: null``.
- ``calculateRequests`` (same file): pod-level ``spec.resources.requests`` when
  set (KEP-2837), else the sum over the containers and the restartable
  (``restartPolicy: Always``) init containers; a resource some container does not
  request is ``null`` for the pod, and the member's ``request_errors`` carry the
  controller's own text for it: ``calculatePodRequestsFromContainers`` "missing request
  for cpu in container app of Pod web-0" (the first container without it),
  ``calculatePodLevelRequests`` "missing pod-level request for cpu in Pod web-0".
  For a ``container_resource`` metric the request is that one container's, and a pod
  without that container says "container app not found in Pod web-0".
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from scalebridge.protocol import Member
from scalebridge.units import milli_value


def _ts(value: Any) -> Optional[float]:
    return value.timestamp() if value is not None else None


def quantity_of_milli(milli: int) -> Any:
    """A milli-value as a protocol quantity: a whole number when it is one, else ``"Nm"``."""
    return milli // 1000 if milli % 1000 == 0 else f"{milli}m"


def _requests_of(containers: list[Any], resources: Iterable[str], pod: str) -> tuple[dict, dict]:
    """``calculatePodRequestsFromContainers``: the sum over ``containers`` of every
    resource some container requests, and of each of ``resources``; a resource one of
    them lacks is null, with the text for the first container lacking it."""
    out: dict[str, Any] = {}
    errors: dict[str, str] = {}
    names = set(resources)
    for c in containers:
        names.update((c.resources.requests if c.resources is not None else None) or {})
    for resource in sorted(names):
        total = 0
        for c in containers:
            req = (c.resources.requests if c.resources is not None else None) or {}
            if resource not in req:
                errors[resource] = f"missing request for {resource} in container {c.name} of Pod {pod}"
                break
            total += milli_value(req[resource])
        out[resource] = None if resource in errors else quantity_of_milli(total)
    return out, errors


def requests_and_errors(pod: Any, container: Optional[str] = None,
                        resources: Iterable[str] = ()) -> tuple[dict, dict]:
    """Requests per resource of one pod (``calculateRequests``), or of ``container``,
    and the controller's text for each resource of ``resources`` it cannot give."""
    spec = pod.spec
    name = pod.metadata.name
    if container is None and spec.resources is not None and spec.resources.requests:
        # calculatePodLevelRequests: pod-level requests, when set, are the pod's (KEP-2837)
        got = {r: quantity_of_milli(milli_value(q)) for r, q in spec.resources.requests.items()}
        return got, {r: f"missing pod-level request for {r} in Pod {name}" for r in resources if r not in got}
    containers = list(spec.containers or [])
    containers += [c for c in (spec.init_containers or []) if c.restart_policy == "Always"]
    if container is not None:
        containers = [c for c in containers if c.name == container]
        if not containers:
            return {}, {r: f"container {container} not found in Pod {name}" for r in resources}
    return _requests_of(containers, resources, name)


def pod_member(pod: Any, container: Optional[str] = None, resources: Iterable[str] = ()) -> Member:
    """One pod as a protocol member (see the module docstring); ``resources`` are those
    the policy measures, whose missing requests the member explains."""
    status = pod.status
    ready: Optional[bool] = None
    transition: Optional[float] = None
    for cond in (status.conditions or []) if status is not None else []:
        if cond.type == "Ready":
            ready = cond.status != "False"
            transition = _ts(cond.last_transition_time)
            break
    start = _ts(status.start_time) if status is not None else None
    if start is None:
        ready = None
    phase = (status.phase if status is not None else None) or "Pending"
    if phase not in ("Running", "Pending", "Failed", "Succeeded"):
        # "Unknown" (the node is unreachable): groupPods ignores only Failed and Pending
        # pods, so it is read like a running one
        phase = "Running"
    requests, errors = requests_and_errors(pod, container, resources)
    return Member(name=pod.metadata.name, phase=phase, ready=ready, start_time=start, ready_transition_time=transition,
                  deleting=pod.metadata.deletion_timestamp is not None, requests=requests or None,
                  request_errors=errors or None)
