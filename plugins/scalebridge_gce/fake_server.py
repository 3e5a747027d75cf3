"""A local Compute Engine REST server for the ``gce`` provider: zonal and regional
managed instance groups, their managed instances, resize operations, autoscalers,
instances and machine types, with fault injection. stdlib only, on 127.0.0.1.

    from scalebridge_gce.fake_server import ComputeServer
    with ComputeServer(project="p") as compute:
        compute.add_mig("web", zone="europe-west1-b", size=2)
        # google-cloud-compute clients with transport="rest",
        # client_options={"api_endpoint": compute.endpoint}, AnonymousCredentials()

It speaks the JSON of the Compute REST reference
(https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers,
``regionInstanceGroupManagers``, ``zoneOperations``, ``regionOperations``,
``autoscalers``, ``regionAutoscalers``, ``instances``, ``machineTypes``) and is
strict where the API is: an unknown group is 404 with the API's error body,
``resize`` needs a non-negative integer ``size``, an unknown operation is 404, an
unparseable ``filter`` is 400.

Behaviour, as the documentation describes it: ``resize`` sets ``targetSize`` at once
and returns an operation that is ``DONE`` after :attr:`ComputeServer.op_polls`
reads of it ("DONE" means the resize was *scheduled*); new instances are
``CREATING`` (then ``VERIFYING``) and removed ones ``DELETING`` until
:meth:`ComputeServer.settle` (or :attr:`ComputeServer.settle_after` reads of the
group), and the group reports ``status.isStable`` false meanwhile
(https://cloud.google.com/compute/docs/instance-groups/working-with-managed-instances,
"Checking whether a MIG is stable"). Faults: :meth:`ComputeServer.fail` queues HTTP
errors for matching requests; :meth:`ComputeServer.fail_next_operation` makes the
next resize operation finish ``DONE`` with an ``error`` (403 ``QUOTA_EXCEEDED``).

Standby pools, as "About suspending and stopping VMs in a MIG"
(https://cloud.google.com/compute/docs/instance-groups/suspended-and-stopped-vms-in-mig) and
"Accelerate MIG scale out with standby pools"
(https://cloud.google.com/compute/docs/instance-groups/accelerate-mig-scale-out-with-standby-pools)
describe them: a group made with ``suspended``/``stopped`` VMs and a ``standby_mode``
answers ``standbyPolicy`` (``mode``, ``initialDelaySec``), ``targetSuspendedSize`` and
``targetStoppedSize``; ``targetSize`` counts running VMs only. ``suspendInstances``,
``resumeInstances``, ``stopInstances`` and ``startInstances`` (body ``{"instances":
[URL…]}``) move the named VMs between the pool and the running VMs, each changing
``targetSize`` and the pool's target by the number of VMs
(google-cloud-compute ``InstanceGroupManagersClient.resume_instances``: "increases the
targetSize and decreases the targetSuspendedSize … by the number of instances that you
resume"); an instance not of the group, or not in the state the call needs, is a 400. A
``resize`` up of a ``SCALE_OUT_POOL`` group resumes suspended VMs first, then starts
stopped ones, then creates the rest, and refills the pool with new VMs
(``standbyPolicy.mode`` ``SCALE_OUT_POOL``: "MIG automatically resumes or starts VMs in
the standby pool when the group scales out, and replenishes the standby pool
afterwards"); a ``MANUAL`` group ("MIG does not automatically resume or start VMs in the
standby pool") only creates. A resize down deletes running VMs, never standby ones.

Autoscaler writes, as the ``autoscalers`` / ``regionAutoscalers`` reference documents
them: ``insert`` (``POST .../autoscalers``), ``patch`` (``PATCH
.../autoscalers?autoscaler=NAME``, JSON merge patch) and ``update`` (``PUT``, same
query: the resource replaced) answer an Operation and store the resource as sent
(in :attr:`ComputeServer.autoscalers`); the group it targets then names it in
``status.autoscaler``. Inserting an existing name is 409, patching or updating a
missing one 404, an insert or update without ``name``, ``target`` or
``autoscalingPolicy`` 400, a ``target`` that is no group of the fake 404; ``GET``
and the list return what is stored.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

from scalebridge.testing.fault_queue import take_fault
from scalebridge.testing.local_server import HttpServer, QuietHandler
from scalebridge.testing.merge_patch import merge_patch

__all__ = ["ComputeServer", "Mig", "Vm"]

BASE = "https://www.googleapis.com/compute/v1"

#: guestCpus of the predefined machine types the fake knows (machineTypes reference)
MACHINE_TYPES = {"e2-micro": 2, "e2-small": 2, "e2-medium": 2, "e2-standard-2": 2, "e2-standard-4": 4,
                 "n1-standard-1": 1, "n1-standard-2": 2, "n1-standard-4": 4, "n1-standard-8": 8,
                 "n2-standard-2": 2, "n2-standard-4": 4, "n2-standard-8": 8, "c3-standard-4": 4}
_CUSTOM = re.compile(r"^(?:[a-z0-9]+-)?custom-(\d+)-(\d+)(?:-ext)?$")


def rfc3339(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="milliseconds")


def guest_cpus(machine_type: str) -> Optional[int]:
    if machine_type in MACHINE_TYPES:
        return MACHINE_TYPES[machine_type]
    m = _CUSTOM.match(machine_type)
    return int(m.group(1)) if m else None


@dataclass
class Vm:
    """One managed instance: ``status`` is the instance's (RUNNING, PROVISIONING…),
    ``action`` the group's current action on it (NONE, CREATING, VERIFYING, DELETING…)."""
    name: str
    zone: str
    id: int
    created: float
    started: Optional[float] = None
    status: str = "RUNNING"
    action: str = "NONE"
    machine_type: str = "n1-standard-2"
    goal: str = "RUNNING"   # the status the current action ends in (SUSPENDED, STOPPED for the pool)


@dataclass
class Mig:
    name: str
    project: str
    zone: Optional[str]
    region: Optional[str]
    zones: list[str]
    target_size: int
    vms: list[Vm] = field(default_factory=list)
    machine_type: str = "n1-standard-2"
    autoscaler_mode: Optional[str] = None   # None: no autoscaler; else ON, OFF, ONLY_SCALE_OUT
    autoscaler: Optional[str] = None        # the selfLink of an inserted autoscaler targeting it
    id: int = 0
    reads: int = 0
    settle_at: Optional[int] = None
    standby_mode: Optional[str] = None   # standbyPolicy.mode (MANUAL, SCALE_OUT_POOL); None: no standbyPolicy
    initial_delay_sec: int = 0
    target_suspended_size: int = 0
    target_stopped_size: int = 0

    @property
    def scope(self) -> str:
        return f"zones/{self.zone}" if self.zone else f"regions/{self.region}"

    @property
    def link(self) -> str:
        return f"{BASE}/projects/{self.project}/{self.scope}/instanceGroupManagers/{self.name}"

    @property
    def stable(self) -> bool:
        return all(v.action == "NONE" for v in self.vms)


class _Fault:
    __slots__ = ("method", "path", "status", "reason", "message", "times", "retry_after")

    def __init__(self, method, path, status, reason, message, times, retry_after):
        self.method, self.path, self.status, self.reason = method, path, status, reason
        self.message, self.times, self.retry_after = message, times, retry_after


_PENDING = ("CREATING", "VERIFYING", "RECREATING", "CREATING_WITHOUT_RETRIES", "DELETING")


class ComputeServer(HttpServer):
    """The fake. ``op_polls``: reads of an operation before it is DONE (0: DONE at
    once); ``settle_after``: reads of a group after a resize before its instances
    settle (None: only :meth:`settle` settles them)."""

    thread_name = "compute-fake"

    def __init__(self, project: str = "test-project", *, host: str = "127.0.0.1", port: int = 0,
                 op_polls: int = 0, settle_after: Optional[int] = None, clock=None):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the Compute fake serves on loopback only")
        self.project = project
        self.op_polls = op_polls
        self.settle_after = settle_after
        self.clock = clock or (lambda: _dt.datetime.now(_dt.timezone.utc).timestamp())
        self.migs: dict[tuple[str, str, str], Mig] = {}
        self.operations: dict[tuple[str, str, str], dict] = {}
        #: inserted autoscalers by (project, scope, name), as stored (the API's JSON)
        self.autoscalers: dict[tuple[str, str, str], dict] = {}
        self.calls: list[tuple[str, str]] = []
        #: the Authorization header of each request (None when absent), in order
        self.authorizations: list[Optional[str]] = []
        self._faults: list[_Fault] = []
        self._op_errors: list[tuple[int, str, str]] = []
        self._requests: dict[str, dict] = {}
        self._ids = itertools.count(1000)
        self._lock = threading.RLock()
        self._bind(self._handler(), host, port)

    @property
    def endpoint(self) -> str:
        """The ``api_endpoint`` of google-cloud-compute clients: :attr:`url`."""
        return self.url

    def reset(self) -> None:
        with self._lock:
            self.migs.clear()
            self.operations.clear()
            self.autoscalers.clear()
            self.calls.clear()
            self.authorizations.clear()
            self._faults.clear()
            self._op_errors.clear()
            self._requests.clear()

    # -- world ---------------------------------------------------------------------------
    def add_mig(self, name: str, *, zone: Optional[str] = None, region: Optional[str] = None,
                size: int = 2, zones: Optional[list[str]] = None, machine_type: str = "n1-standard-2",
                autoscaler_mode: Optional[str] = None, project: Optional[str] = None,
                started: Optional[list[float]] = None, actions: Optional[list[str]] = None,
                names: Optional[list[str]] = None, suspended: int = 0, stopped: int = 0,
                standby_mode: Optional[str] = None) -> Mig:
        """A group of ``size`` RUNNING instances (``started``: each one's start time,
        default an hour ago; ``actions``: each one's current action, default NONE).
        A regional group spreads its instances over ``zones`` (default ``{region}-a,b,c``).
        ``suspended``/``stopped`` VMs beside them make its standby pool (``standby_mode``:
        its ``standbyPolicy.mode``, default MANUAL when it has a pool)."""
        if (zone is None) == (region is None):
            raise ValueError("give zone or region")
        project = project or self.project
        zs = [zone] if zone else (zones or [f"{region}-{s}" for s in "abc"])
        mig = Mig(name, project, zone, region, zs, size, machine_type=machine_type,
                  autoscaler_mode=autoscaler_mode, id=next(self._ids))
        now = self.clock()
        for i in range(size):
            t = started[i] if started else now - 3600
            vm = self._new_vm(mig, i, t, names[i] if names else None)
            vm.action = actions[i] if actions else "NONE"
            if vm.action in ("CREATING", "CREATING_WITHOUT_RETRIES"):
                vm.status = "PROVISIONING"
            mig.vms.append(vm)
        for status, n in (("SUSPENDED", suspended), ("STOPPED", stopped)):
            for _ in range(n):
                vm = self._new_vm(mig, len(mig.vms), now - 3600)
                vm.status = vm.goal = status
                mig.vms.append(vm)
        mig.target_suspended_size, mig.target_stopped_size = suspended, stopped
        if standby_mode is not None or suspended or stopped:
            if standby_mode not in (None, "MANUAL", "SCALE_OUT_POOL"):
                raise ValueError(f"standby_mode: MANUAL or SCALE_OUT_POOL, not {standby_mode!r}")
            mig.standby_mode = standby_mode or "MANUAL"
        with self._lock:
            self.migs[(project, mig.scope, name)] = mig
        return mig

    def mig(self, name: str, *, zone: Optional[str] = None, region: Optional[str] = None,
            project: Optional[str] = None) -> Mig:
        scope = f"zones/{zone}" if zone else f"regions/{region}"
        return self.migs[(project or self.project, scope, name)]

    def _new_vm(self, mig: Mig, i: int, started: float, name: Optional[str] = None) -> Vm:
        n = next(self._ids)
        return Vm(name or f"{mig.name}-{n:04x}", mig.zones[i % len(mig.zones)], n, started - 30, started,
                  machine_type=mig.machine_type)

    def settle(self, mig: Optional[Mig] = None) -> None:
        """Finish every pending instance action (created ones RUNNING, deleted ones gone)."""
        with self._lock:
            for m in ([mig] if mig else list(self.migs.values())):
                now = self.clock()
                kept = []
                for v in m.vms:
                    if v.action == "DELETING":
                        continue
                    if v.action != "NONE":
                        v.action, v.status = "NONE", v.goal
                        if v.goal == "RUNNING":
                            v.started = now
                    kept.append(v)
                m.vms = kept
                m.settle_at = None

    def fail(self, status: int, *, method: str = "", path: str = "", reason: str = "",
             message: str = "", times: int = 1, retry_after: Optional[float] = None) -> None:
        """Answer the next ``times`` requests whose method and path contain ``method``
        and ``path`` with HTTP ``status`` (``reason``: the error's ``errors[].reason``,
        e.g. ``rateLimitExceeded``, ``notFound``)."""
        with self._lock:
            self._faults.append(_Fault(method.upper(), path, status, reason, message or f"injected {status}",
                                       times, retry_after))

    def clear_faults(self) -> None:
        """Forget every queued fault."""
        with self._lock:
            self._faults.clear()
            self._op_errors.clear()

    def fail_next_operation(self, code: str = "QUOTA_EXCEEDED", message: str = "", status: int = 403) -> None:
        """The next resize operation finishes DONE with this error (and changes nothing)."""
        with self._lock:
            self._op_errors.append((status, code, message or f"Quota 'CPUS' exceeded. Limit: 8.0 in region."))

    def count(self, what: str = "") -> int:
        """Requests received whose ``METHOD path`` contains ``what``."""
        return sum(1 for m, p in self.calls if what in f"{m} {p}")

    # -- JSON ----------------------------------------------------------------------------
    def _mig_json(self, m: Mig) -> dict:
        counts = {k: 0 for k in ("abandoning", "creating", "creatingWithoutRetries", "deleting", "none",
                                 "recreating", "refreshing", "restarting", "resuming", "starting",
                                 "stopping", "suspending", "verifying")}
        for v in m.vms:
            key = re.sub(r"_(\w)", lambda g: g.group(1).upper(), v.action.lower())
            counts[key] = counts.get(key, 0) + 1
        status: dict[str, Any] = {"isStable": m.stable}
        if m.autoscaler is not None:
            status["autoscaler"] = m.autoscaler
        elif m.autoscaler_mode is not None:
            status["autoscaler"] = f"{BASE}/projects/{m.project}/{m.scope}/autoscalers/{m.name}-as"
        out = {"kind": "compute#instanceGroupManager", "id": str(m.id), "name": m.name,
               "creationTimestamp": rfc3339(self.clock() - 86400), "baseInstanceName": m.name,
               "instanceGroup": f"{BASE}/projects/{m.project}/{m.scope}/instanceGroups/{m.name}",
               "instanceTemplate": f"{BASE}/projects/{m.project}/global/instanceTemplates/{m.name}-tpl",
               "targetSize": m.target_size, "currentActions": counts, "status": status,
               "selfLink": m.link, "fingerprint": "fp"}
        if m.standby_mode is not None:
            out["standbyPolicy"] = {"mode": m.standby_mode, "initialDelaySec": m.initial_delay_sec}
            out["targetSuspendedSize"] = m.target_suspended_size
            out["targetStoppedSize"] = m.target_stopped_size
        if m.zone:
            out["zone"] = f"{BASE}/projects/{m.project}/zones/{m.zone}"
        else:
            out["region"] = f"{BASE}/projects/{m.project}/regions/{m.region}"
            out["distributionPolicy"] = {"zones": [{"zone": f"{BASE}/projects/{m.project}/zones/{z}"}
                                                   for z in m.zones]}
        return out

    def _managed_json(self, m: Mig, v: Vm) -> dict:
        out = {"instance": f"{BASE}/projects/{m.project}/zones/{v.zone}/instances/{v.name}",
               "name": v.name, "currentAction": v.action,
               "version": {"instanceTemplate": f"{BASE}/projects/{m.project}/global/instanceTemplates/{m.name}-tpl"}}
        if v.action not in ("CREATING", "CREATING_WITHOUT_RETRIES") or v.status != "PROVISIONING":
            out["id"] = str(v.id)
            out["instanceStatus"] = v.status
        return out

    def _instance_json(self, project: str, v: Vm) -> dict:
        out = {"kind": "compute#instance", "id": str(v.id), "name": v.name, "status": v.status,
               "creationTimestamp": rfc3339(v.created),
               "machineType": f"{BASE}/projects/{project}/zones/{v.zone}/machineTypes/{v.machine_type}",
               "zone": f"{BASE}/projects/{project}/zones/{v.zone}",
               "selfLink": f"{BASE}/projects/{project}/zones/{v.zone}/instances/{v.name}"}
        if v.started is not None and v.status == "RUNNING":
            out["lastStartTimestamp"] = rfc3339(v.started)
        return out

    def _autoscaler_json(self, m: Mig) -> dict:
        name = f"{m.name}-as"
        return {"kind": "compute#autoscaler", "id": str(m.id + 1), "name": name, "target": m.link,
                "autoscalingPolicy": {"mode": m.autoscaler_mode, "minNumReplicas": 1, "maxNumReplicas": 10,
                                      "coolDownPeriodSec": 60, "cpuUtilization": {"utilizationTarget": 0.6}},
                "status": "ACTIVE", "recommendedSize": m.target_size,
                "selfLink": f"{BASE}/projects/{m.project}/{m.scope}/autoscalers/{name}",
                **({"zone": f"{BASE}/projects/{m.project}/zones/{m.zone}"} if m.zone else
                   {"region": f"{BASE}/projects/{m.project}/regions/{m.region}"})}

    # -- operations ----------------------------------------------------------------------
    def _operation(self, project: str, scope: str, verb: str, op_type: str, target_link: str,
                   target_id: str) -> dict:
        now = self.clock()
        n = next(self._ids)
        name = f"operation-{n}-{verb}"
        op = {"kind": "compute#operation", "id": str(n), "name": name, "operationType": op_type,
              "targetLink": target_link, "targetId": target_id, "status": "RUNNING", "progress": 0,
              "user": "scalebridge@test", "insertTime": rfc3339(now), "startTime": rfc3339(now),
              "selfLink": f"{BASE}/projects/{project}/{scope}/operations/{name}"}
        op["zone" if scope.startswith("zones/") else "region"] = f"{BASE}/projects/{project}/{scope}"
        op["_polls"] = self.op_polls
        if self.op_polls <= 0:
            self._finish(op)
        self.operations[(project, scope, name)] = op
        return op

    def _autoscaler_write(self, project: str, scope: str, query: dict, body: bytes, name: Optional[str],
                          replace: bool = False) -> dict:
        """``insert`` (``name`` None), ``patch`` or (``replace``) ``update`` of an
        autoscaler; the Operation."""
        where = f"projects/{project}/{scope}"
        try:
            sent = json.loads(body or b"{}")
        except ValueError:
            raise _HttpError(400, "Invalid JSON payload received.") from None
        if not isinstance(sent, dict):
            raise _HttpError(400, "Invalid JSON payload received. The body must be an Autoscaler object.")
        rid = query.get("requestId")
        if rid and rid in self._requests:   # a retried request is answered with its first operation
            return self._poll_view(self._requests[rid])
        for key in ("name", "target", "autoscalingPolicy") if name is None or replace else ():
            if not sent.get(key):
                raise _HttpError(400, f"Invalid value for field 'resource.{key}': ''. Required field is missing.")
        for key in ("target", "autoscalingPolicy"):
            if key in sent and not isinstance(sent[key], dict if key == "autoscalingPolicy" else str):
                raise _HttpError(400, f"Invalid value for field 'resource.{key}': {json.dumps(sent[key])}.")
        if replace and not name:
            name = sent["name"]
        mig = None
        if "target" in sent:
            mig = next((g for g in self.migs.values() if g.link == sent["target"]), None)
            if mig is None:
                raise _HttpError(404, f"The resource '{sent['target']}' was not found")
        if name is None:
            name = sent["name"]
            if (project, scope, name) in self.autoscalers or self._derived(project, scope, name) is not None:
                raise _HttpError(409, f"The resource '{where}/autoscalers/{name}' already exists")
            stored = {"kind": "compute#autoscaler", "id": str(next(self._ids)),
                      "creationTimestamp": rfc3339(self.clock()), **sent, "name": name,
                      "selfLink": f"{BASE}/{where}/autoscalers/{name}", "status": "ACTIVE",
                      ("zone" if scope.startswith("zones/") else "region"): f"{BASE}/{where}"}
            verb, op_type = "insert", "compute.autoscalers.insert"
        else:
            current = self.autoscalers.get((project, scope, name)) or self._derived(project, scope, name)
            if current is None:
                raise _HttpError(404, f"The resource '{where}/autoscalers/{name}' was not found")
            kept = ("kind", "id", "creationTimestamp", "name", "selfLink", "status", "zone", "region")
            sent = {k: v for k, v in sent.items() if k not in kept}
            if replace:
                stored = {**{k: current[k] for k in kept if k in current}, **sent}
                verb, op_type = "update", "compute.autoscalers.update"
            else:
                stored = merge_patch(current, sent)
                verb, op_type = "patch", "compute.autoscalers.patch"
        if scope.startswith("regions/"):
            op_type = op_type.replace("compute.autoscalers", "compute.regionAutoscalers")
        old = next((g for g in self.migs.values() if g.autoscaler == stored["selfLink"]), None)
        if old is not None and old is not mig and mig is not None:
            old.autoscaler = None
        if mig is not None:
            mig.autoscaler = stored["selfLink"]
        self.autoscalers[(project, scope, name)] = stored
        op = self._operation(project, scope, verb, op_type, stored["selfLink"], stored["id"])
        if rid:
            self._requests[rid] = op
        return self._poll_view(op)

    def _derived(self, project: str, scope: str, name: str) -> Optional[dict]:
        """The autoscaler an ``autoscaler_mode`` group stands for, by name."""
        for mig in self.migs.values():
            if mig.project == project and mig.scope == scope and mig.autoscaler_mode is not None \
                    and f"{mig.name}-as" == name:
                return self._autoscaler_json(mig)
        return None

    def _resize(self, m: Mig, size: int) -> dict:
        op = self._operation(m.project, m.scope, "resize", "compute.instanceGroupManagers.resize", m.link,
                             str(m.id))
        if self._op_errors:
            status, code, message = self._op_errors.pop(0)
            op["_error"] = {"errors": [{"code": code, "message": message}]}
            op["_http"] = status
        else:
            self._apply_resize(m, size)
        if op["status"] == "DONE" and "_error" in op:
            self._finish(op)
        return op

    def _create(self, m: Mig, goal: str = "RUNNING") -> Vm:
        v = self._new_vm(m, len(m.vms), self.clock())
        v.action, v.status, v.started, v.goal = "CREATING", "PROVISIONING", None, goal
        m.vms.append(v)
        return v

    def _apply_resize(self, m: Mig, size: int) -> None:
        live = [v for v in m.vms if v.action != "DELETING" and v.goal == "RUNNING"]
        if size > len(live):
            need = size - len(live)
            if m.standby_mode == "SCALE_OUT_POOL":
                # suspended first, then stopped, then new VMs; the pool is refilled after
                for status, action in (("SUSPENDED", "RESUMING"), ("STOPPED", "STARTING")):
                    for v in [v for v in m.vms if v.status == status and v.action == "NONE"][:need]:
                        v.action, v.goal = action, "RUNNING"
                        need -= 1
                        self._create(m, status)
            for _ in range(need):
                self._create(m)
        elif size < len(live):
            # newest first, as a MIG deletes on resize down
            for v in sorted(live, key=lambda v: v.created, reverse=True)[:len(live) - size]:
                v.action = "DELETING"
        m.target_size = size
        if self.settle_after is not None:
            m.settle_at = m.reads + self.settle_after

    _STANDBY_VERBS = {   # verb: (the status it needs, its action, the goal, the pool it moves from or to)
        "suspendInstances": ("RUNNING", "SUSPENDING", "SUSPENDED", "target_suspended_size"),
        "stopInstances": ("RUNNING", "STOPPING", "STOPPED", "target_stopped_size"),
        "resumeInstances": ("SUSPENDED", "RESUMING", "RUNNING", "target_suspended_size"),
        "startInstances": ("STOPPED", "STARTING", "RUNNING", "target_stopped_size"),
    }

    def _standby_verb(self, m: Mig, verb: str, body: bytes) -> dict:
        need, action, goal, pool = self._STANDBY_VERBS[verb]
        try:
            sent = json.loads(body or b"{}")
        except ValueError:
            raise _HttpError(400, "Invalid JSON payload received.") from None
        urls = sent.get("instances") if isinstance(sent, dict) else None
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
            raise _HttpError(400, "Invalid value for field 'resource.instances': must name at least one instance.")
        if len(urls) > 1000:
            raise _HttpError(400, "Invalid value for field 'resource.instances': at most 1000 instances.")
        by_name = {v.name: v for v in m.vms}
        chosen = []
        for u in urls:
            v = by_name.get(u.rstrip("/").rsplit("/", 1)[-1])
            if v is None or not u.endswith(f"/zones/{v.zone}/instances/{v.name}"):
                raise _HttpError(400, f"Instance '{u}' is not a member of the managed instance group.")
            if v.status != need or v.action != "NONE":
                raise _HttpError(400, f"Instance '{u}' is {v.status} ({v.action}), not {need}.")
            chosen.append(v)
        for v in chosen:
            v.action, v.goal = action, goal
        n = len(chosen)
        sign = 1 if goal == "RUNNING" else -1
        m.target_size += sign * n
        setattr(m, pool, getattr(m, pool) - sign * n)
        if self.settle_after is not None:
            m.settle_at = m.reads + self.settle_after
        op = self._operation(m.project, m.scope, verb, f"compute.instanceGroupManagers.{verb}", m.link, str(m.id))
        return self._poll_view(op)

    def _finish(self, op: dict) -> None:
        op["status"], op["progress"], op["endTime"] = "DONE", 100, rfc3339(self.clock())
        if "_error" in op:
            op["error"] = op.pop("_error")
            op["httpErrorStatusCode"] = op.pop("_http")
            op["httpErrorMessage"] = "FORBIDDEN" if op["httpErrorStatusCode"] == 403 else "ERROR"

    def _poll(self, op: dict) -> dict:
        if op["status"] != "DONE":
            op["_polls"] -= 1
            if op["_polls"] <= 0:
                self._finish(op)
        return {k: v for k, v in op.items() if not k.startswith("_")}

    # -- HTTP ----------------------------------------------------------------------------
    def _handler(self):
        server = self

        class Handler(QuietHandler):
            def _send(self, status: int, body: dict, headers: Optional[dict] = None) -> None:
                self.send(status, json.dumps(body).encode(), "application/json; charset=UTF-8", headers)

            def _error(self, status: int, message: str, reason: str = "", headers: Optional[dict] = None):
                reason = reason or {400: "invalid", 403: "forbidden", 404: "notFound", 409: "conflict",
                                    429: "rateLimitExceeded", 503: "backendError"}.get(status, "error")
                self._send(status, {"error": {"code": status, "message": message,
                                              "errors": [{"message": message, "domain": "global",
                                                          "reason": reason}]}}, headers)

            def _dispatch(self, method: str) -> None:
                body = self.read_body()
                url = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                with server._lock:
                    server.calls.append((method, url.path))
                    server.authorizations.append(self.headers.get("Authorization"))
                    f = take_fault(server._faults,
                                   lambda f: f.times > 0 and f.method in method and f.path in url.path)
                    if f is not None:
                        headers = {"Retry-After": str(f.retry_after)} if f.retry_after is not None else None
                        return self._error(f.status, f.message, f.reason, headers)
                    try:
                        status, out = server._route(method, url.path, query, body)
                    except _HttpError as e:
                        return self._error(e.status, e.message)
                self._send(status, out)

            def do_GET(self):
                self._dispatch("GET")

            def do_POST(self):
                self._dispatch("POST")

            def do_PATCH(self):
                self._dispatch("PATCH")

            def do_PUT(self):
                self._dispatch("PUT")

        return Handler

    _PATH = re.compile(r"^/compute/v1/projects/(?P<project>[^/]+)/(?P<scope>(?:zones|regions)/[^/]+)/"
                       r"(?P<collection>[A-Za-z]+)(?:/(?P<name>[^/]+))?(?:/(?P<verb>[A-Za-z]+))?$")

    def _route(self, method: str, path: str, query: dict, body: bytes) -> tuple[int, dict]:
        m = self._PATH.match(path)
        if not m:
            raise _HttpError(404, f"The requested URL {path} was not found on this server.")
        project, scope, coll, name, verb = m.group("project", "scope", "collection", "name", "verb")
        where = f"projects/{project}/{scope}"
        if coll == "instanceGroupManagers" and name:
            mig = self.migs.get((project, scope, name))
            if mig is None:
                raise _HttpError(404, f"The resource '{where}/instanceGroupManagers/{name}' was not found")
            if method == "GET" and verb is None:
                mig.reads += 1
                if mig.settle_at is not None and mig.reads >= mig.settle_at:
                    self.settle(mig)
                return 200, self._mig_json(mig)
            if method == "POST" and verb == "listManagedInstances":
                return 200, self._page(query, [self._managed_json(mig, v) for v in mig.vms], "managedInstances")
            if method == "POST" and verb == "resize":
                raw = query.get("size")
                if raw is None or not re.fullmatch(r"\d+", raw):
                    raise _HttpError(400, f"Invalid value for field 'size': '{raw}'. "
                                          "Must be greater than or equal to 0")
                rid = query.get("requestId")
                op = self._requests.get(rid) if rid else None
                if op is None:   # requestId: a retried request is answered with its first operation
                    op = self._resize(mig, int(raw))
                    if rid:
                        self._requests[rid] = op
                return 200, {k: v for k, v in op.items() if not k.startswith("_")}
            if method == "POST" and verb in self._STANDBY_VERBS:
                return 200, self._standby_verb(mig, verb, body)
        elif coll == "operations" and name:
            op = self.operations.get((project, scope, name))
            if op is None:
                raise _HttpError(404, f"The resource '{where}/operations/{name}' was not found")
            if (method == "GET" and verb is None) or (method == "POST" and verb == "wait"):
                return 200, self._poll(op)
        elif coll == "operations" and method == "GET":
            flt = _Filter(query.get("filter", ""))
            items = [self._poll_view(op) for (p, s, _), op in self.operations.items()
                     if p == project and s == scope]
            return 200, self._page(query, [o for o in items if flt(o)], "items")
        elif coll == "autoscalers" and name and method == "GET" and verb is None:
            found = self.autoscalers.get((project, scope, name)) or self._derived(project, scope, name)
            if found is None:
                raise _HttpError(404, f"The resource '{where}/autoscalers/{name}' was not found")
            return 200, found
        elif coll == "autoscalers" and not name and method == "GET":
            flt = _Filter(query.get("filter", ""))
            items = [a for (p, s, _), a in self.autoscalers.items() if p == project and s == scope]
            items += [self._autoscaler_json(g) for g in self.migs.values()
                      if g.project == project and g.scope == scope and g.autoscaler_mode is not None
                      and (project, scope, f"{g.name}-as") not in self.autoscalers]
            return 200, self._page(query, [a for a in items if flt(a)], "items")
        elif coll == "autoscalers" and not name and method == "POST":
            return 200, self._autoscaler_write(project, scope, query, body, None)
        elif coll == "autoscalers" and not name and method == "PATCH":
            if not query.get("autoscaler"):
                raise _HttpError(400, "Required parameter 'autoscaler' is missing.")
            return 200, self._autoscaler_write(project, scope, query, body, query["autoscaler"])
        elif coll == "autoscalers" and not name and method == "PUT":
            # ``autoscaler``: "Name of the autoscaler to update" (else the body's name)
            return 200, self._autoscaler_write(project, scope, query, body, query.get("autoscaler", ""),
                                               replace=True)
        elif coll == "instances" and not name and method == "GET" and scope.startswith("zones/"):
            zone = scope.split("/", 1)[1]
            flt = _Filter(query.get("filter", ""))
            items = [self._instance_json(project, v) for mig in self.migs.values() if mig.project == project
                     for v in mig.vms if v.zone == zone]
            return 200, self._page(query, [i for i in items if flt(i)], "items")
        elif coll == "machineTypes" and name and method == "GET" and scope.startswith("zones/"):
            cpus = guest_cpus(name)
            if cpus is None:
                raise _HttpError(404, f"The resource '{where}/machineTypes/{name}' was not found")
            return 200, {"kind": "compute#machineType", "name": name, "guestCpus": cpus,
                         "selfLink": f"{BASE}/{where}/machineTypes/{name}"}
        raise _HttpError(404, f"The requested URL {path} was not found on this server.")

    @staticmethod
    def _poll_view(op: dict) -> dict:
        return {k: v for k, v in op.items() if not k.startswith("_")}

    @staticmethod
    def _page(query: dict, items: list, key: str) -> dict:
        raw = query.get("maxResults")
        size = int(raw) if raw and raw.isdigit() and int(raw) > 0 else 500
        if size > 500:
            raise _HttpError(400, "Invalid value for field 'maxResults': must be less than or equal to 500")
        start = int(query.get("pageToken") or 0)
        out: dict[str, Any] = {key: items[start:start + size]}
        if start + size < len(items):
            out["nextPageToken"] = str(start + size)
        return out


class _HttpError(Exception):
    def __init__(self, status: int, message: str):
        self.status, self.message = status, message
        super().__init__(message)


class _Filter:
    """The list ``filter`` expressions the provider sends, as the Compute reference
    describes them: ``field = value``, ``field != value`` and the regular-expression
    forms ``field eq "re"`` / ``field ne "re"`` (RE2, whole field), each optionally
    parenthesized, joined by whitespace or ``AND``. Anything else is a 400."""

    _TERM = re.compile(r'\(?\s*([A-Za-z][\w.]*)\s+(=|!=|eq|ne)\s+("(?:[^"\\]|\\.)*"|[^\s()]+)\s*\)?')

    def __init__(self, text: str):
        self.terms: list[tuple[str, str, str]] = []
        rest = text.strip()
        while rest:
            m = self._TERM.match(rest)
            if not m:
                raise _HttpError(400, f"Invalid list filter expression '{text}'.")
            key, op, value = m.groups()
            if value.startswith('"'):
                value = value[1:-1]
            if op in ("eq", "ne"):
                try:
                    re.compile(value)
                except re.error:
                    raise _HttpError(400, f"Invalid regular expression in filter '{text}'.") from None
            self.terms.append((key, op, value))
            rest = rest[m.end():].lstrip()
            if rest.startswith("AND "):
                rest = rest[4:].lstrip()

    def __call__(self, item: dict) -> bool:
        for key, op, value in self.terms:
            v: Any = item
            for part in key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            s = "" if v is None else str(v)
            if op == "=" and s != value or op == "!=" and s == value:
                return False
            if op == "eq" and not re.fullmatch(value, s) or op == "ne" and re.fullmatch(value, s):
                return False
        return True
