"""The ``gce`` provider: zonal and regional managed instance groups (MIGs).

A target is one instance group manager, ``ref: {zone|region, instance_group_manager,
project}``. Each sync:

- observe: ``instanceGroupManagers.get`` (``targetSize``, ``status.isStable``,
  ``currentActions``, ``status.autoscaler``), ``listManagedInstances`` (each
  instance's ``instanceStatus`` and ``currentAction``) and, for instances not seen
  running before, ``instances.list`` per zone (start times, machine types; each
  machine type's ``guestCpus`` is read once). A group that is not stable, or a resize operation that is not ``DONE``,
  is the operation in flight: "DONE" means the resize was scheduled, the group has
  its new VMs when ``status.isStable`` is true
  (https://cloud.google.com/compute/docs/instance-groups/working-with-managed-instances#checking_whether_a_mig_is_stable);
- metrics: Cloud Monitoring ``ListTimeSeries`` (:mod:`.metrics`);
- act: ``instanceGroupManagers.resize`` / ``regionInstanceGroupManagers.resize``
  with the absolute size, polled through the operations API until ``DONE`` or
  ``operation_wait_seconds``;
- standby pools (``standbyPolicy``, ``targetSuspendedSize``, ``targetStoppedSize``): the
  pool's suspended and stopped VMs are ``standby`` members, neither capacity nor failures
  (:func:`.members.pool_members`); ``targetSize`` stays the running VMs. A scale-out of a
  ``SCALE_OUT_POOL`` group is the same ``resize``: the MIG "automatically resumes or starts
  VMs in the standby pool when the group scales out, and replenishes the standby pool
  afterwards" (``InstanceGroupManagerStandbyPolicy.Mode``), which is how Google's
  "Accelerate MIG scale out with standby pools" page
  (https://cloud.google.com/compute/docs/instance-groups/accelerate-mig-scale-out-with-standby-pools,
  "Use MIG API for autoscaling") asks another autoscaler to "use the endpoints of the MIG
  API to handle suspended and stopped VMs". A ``MANUAL`` pool is the operator's: "MIG does
  not automatically resume or start VMs in the standby pool", and scalebridge neither
  resumes, starts, suspends nor stops its VMs (``observe`` says so);
- refuse: a group whose autoscaler (``status.autoscaler``) is not in mode ``OFF``;
  an autoscaler in mode ``OFF`` still computes a recommended size but leaves the
  target size alone
  (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions).

Pacing follows Compute Engine's default rate quotas, 1,500 read requests and 1,500
mutation ("queries") requests a minute per project, enforced per 60-second
interval (https://cloud.google.com/compute/api-quota). A steady sync reads the
group and lists its managed instances (two read requests), so a read token is one
sync at half the read rate (12.5 a second, a minute's worth in a burst); a write
is one resize.
"""
from __future__ import annotations

import re
import time
from typing import Any, Mapping, Optional

from scalebridge.providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider,
                                   ProviderError, RefError, SizeChange, Target)

from .client import GceClients, check_compute_endpoint, is_loopback, operation_error
from .members import enum_name, member, pool_members, rfc3339, standby_pool, unsettled, zone_of

__all__ = ["GceProvider", "GceTarget"]

#: a Compute resource name (RFC 1035 label, the REST reference's ``[a-z]([-a-z0-9]*[a-z0-9])?``)
_NAME = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")
_PROJECT = re.compile(r"^(?:[a-z][-a-z0-9.:]{4,61}[a-z0-9]|\d+)$")
OPTIONS = ("project", "compute_endpoint", "monitoring_endpoint", "monitoring_insecure", "credentials",
           "timeout_seconds", "operation_wait_seconds")
REF_KEYS = ("project", "zone", "region", "instance_group_manager")
#: instances.list filters name at most this many instances per call
_NAMES_PER_LIST = 100
_DONE = "DONE"
_POOL_NOTE = ("standbyPolicy.mode SCALE_OUT_POOL: a resize up resumes or starts the pool's VMs first and the "
              "MIG refills the pool; its VMs are neither capacity nor failures")
_MANUAL_NOTE = ("standbyPolicy.mode MANUAL: scalebridge does not manage this standby pool (it resizes; the MIG "
                "creates new VMs and leaves the pool's VMs to suspendInstances/resumeInstances by hand); its VMs "
                "are neither capacity nor failures")


class GceProvider(Provider):
    """``gce``: options ``project``, ``compute_endpoint``, ``monitoring_endpoint``,
    ``monitoring_insecure``, ``credentials`` (run-config.md), and
    ``timeout_seconds`` (each API call, retries included; default 30) and
    ``operation_wait_seconds`` (how long ``set_size`` polls a resize operation
    before reporting it in flight; default 20)."""

    name = "gce"
    semantics = "gce"
    capabilities = frozenset({Capability.METRICS, Capability.TRANSLATE, Capability.HISTORY})
    pacing = Pacing(writes_per_second=25.0, write_burst=100, reads_per_second=12.5, read_burst=750)
    ref_keys = frozenset({"instance_group_manager"})
    path_options = frozenset({"credentials"})

    def __init__(self, project: Optional[str] = None, compute_endpoint: Optional[str] = None,
                 monitoring_endpoint: Optional[str] = None, monitoring_insecure: bool = False,
                 credentials: str = "default", timeout_seconds: float = 30.0,
                 operation_wait_seconds: float = 20.0, **unknown: Any):
        for key in unknown:
            raise RefError(key, f"unknown gce option; valid: {', '.join(OPTIONS)}")
        if project is not None and (not isinstance(project, str) or not _PROJECT.match(project)):
            raise RefError("project", f"must be a project ID such as my-project, got {project!r}")
        if compute_endpoint is not None:
            compute_endpoint = check_compute_endpoint(compute_endpoint)
        if not isinstance(monitoring_insecure, bool):
            raise RefError("monitoring_insecure", f"must be true or false, got {monitoring_insecure!r}")
        if monitoring_endpoint is not None:
            m = re.fullmatch(r"(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})", str(monitoring_endpoint))
            if not m:
                raise RefError("monitoring_endpoint", f"must be HOST:PORT (the Monitoring gRPC API), "
                                                      f"got {monitoring_endpoint!r}")
            if monitoring_insecure and not is_loopback(m.group(1)):
                raise RefError("monitoring_insecure", f"plaintext gRPC only to a loopback endpoint "
                                                      f"(127.0.0.1, localhost), not {m.group(1)!r}")
        elif monitoring_insecure:
            raise RefError("monitoring_insecure", "needs monitoring_endpoint (a loopback HOST:PORT)")
        if not isinstance(credentials, str) or not credentials:
            raise RefError("credentials", "default (Application Default Credentials), anonymous, or the "
                                          f"path of a service-account key file; got {credentials!r}")
        if credentials not in ("default", "anonymous"):
            import os
            path = os.path.expanduser(credentials)
            if not os.path.isfile(path):
                raise RefError("credentials", f"no service-account key file at {credentials!r} "
                                              "(or say default or anonymous)")
            credentials = path
        for key, value in (("timeout_seconds", timeout_seconds), ("operation_wait_seconds", operation_wait_seconds)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise RefError(key, f"must be a number of seconds >= 0, got {value!r}")
        if timeout_seconds <= 0:
            raise RefError("timeout_seconds", "must be greater than 0")
        self.project = project
        self.operation_wait = float(operation_wait_seconds)
        self.clients = GceClients(compute_endpoint=compute_endpoint, monitoring_endpoint=monitoring_endpoint,
                                  monitoring_insecure=monitoring_insecure, credentials=credentials,
                                  timeout=float(timeout_seconds))
        #: guestCpus by (project, zone, machine type): machine types do not change
        self.machine_types: dict[tuple[str, str, str], int] = {}

    def target(self, ref: Mapping[str, Any]) -> "GceTarget":
        if not isinstance(ref, Mapping):
            raise RefError("ref", "must be a mapping: {zone or region, instance_group_manager}")
        for key in ref:
            if key not in REF_KEYS:
                raise RefError(f"ref.{key}", f"unknown key; a gce ref has {', '.join(REF_KEYS)}")
        name = ref.get("instance_group_manager")
        if not isinstance(name, str) or not _NAME.match(name):
            raise RefError("ref.instance_group_manager",
                           f"must be the instance group manager's name (lowercase letters, digits, '-'), got {name!r}")
        zone, region = ref.get("zone"), ref.get("region")
        if (zone is None) == (region is None):
            raise RefError("ref.zone", "give exactly one of zone (a zonal MIG) or region (a regional MIG)")
        key = "ref.zone" if zone is not None else "ref.region"
        loc = zone if zone is not None else region
        if not isinstance(loc, str) or not _NAME.match(loc):
            raise RefError(key, f"must be a {'zone such as europe-west1-b' if zone else 'region such as europe-west1'}, "
                                f"got {loc!r}")
        project = ref.get("project", self.project)
        if project is None:
            raise RefError("ref.project", "no project: give ref.project or the gce provider option project")
        if not isinstance(project, str) or not _PROJECT.match(project):
            raise RefError("ref.project", f"must be a project ID such as my-project, got {project!r}")
        return GceTarget(self, project, name, zone=zone, region=region)

    def close(self) -> None:
        self.clients.close()


class GceTarget(Target):
    def __init__(self, provider: GceProvider, project: str, name: str, *, zone: Optional[str],
                 region: Optional[str]):
        self.provider = provider
        self.clients = provider.clients
        self.project, self.igm_name, self.zone, self.region = project, name, zone, region
        self.name = f"{project}/{'zones/' + zone if zone else 'regions/' + region}/{name}"
        self._igm: Any = None
        self.instance_ids: dict[str, str] = {}   # instance id -> managed instance name (metrics.py reads it)
        self._known: dict[str, tuple[Optional[float], Optional[int]]] = {}   # id -> (start time, vCPUs)
        self._operation: Optional[str] = None   # the last resize operation not yet seen DONE
        self._checked_operations = False

    # -- the API, zonal or regional ------------------------------------------------------
    def _scope(self) -> dict:
        return {"zone": self.zone} if self.zone else {"region": self.region}

    def _igm_client(self):
        return self.clients.compute("InstanceGroupManagersClient" if self.zone else
                                    "RegionInstanceGroupManagersClient")

    def _ops_client(self):
        return self.clients.compute("ZoneOperationsClient" if self.zone else "RegionOperationsClient")

    @property
    def _api(self) -> str:
        return "instanceGroupManagers" if self.zone else "regionInstanceGroupManagers"

    def _get(self) -> Any:
        igm = self.clients.call(f"{self._api}.get", self._igm_client().get, project=self.project,
                                instance_group_manager=self.igm_name, **self._scope())
        self._igm = igm
        return igm

    # -- observe -------------------------------------------------------------------------
    def observe(self, now: float) -> Observation:
        igm = self._get()
        managed = self.clients.pages(f"{self._api}.listManagedInstances",
                                     self._igm_client().list_managed_instances, project=self.project,
                                     instance_group_manager=self.igm_name, **self._scope())
        info = self._instances(managed)
        members = []
        self.instance_ids = {}
        for mi in managed:
            started, vcpus = info.get(mi.name, (None, None))
            members.append(member(mi, started, vcpus))
            if mi.id:
                self.instance_ids[str(mi.id)] = mi.name
        members = pool_members(igm, managed, members)
        in_flight = unsettled(igm) or self._operation_in_flight(igm)
        present = sum(1 for m in members if not m.deleting and not m.standby)
        acts = {k: getattr(igm.current_actions, k) for k in ("creating", "verifying", "recreating", "deleting",
                                                             "abandoning", "restarting", "refreshing")
                if igm.current_actions and getattr(igm.current_actions, k, 0)}
        details = {"self_link": igm.self_link, "is_stable": bool(igm.status.is_stable),
                   "current_actions": acts, "autoscaler": igm.status.autoscaler or None,
                   "instance_template": igm.instance_template or None}
        pool = standby_pool(igm)
        if pool is not None:
            pool["standby_members"] = sum(1 for m in members if m.standby)
            pool["managed_by_scalebridge"] = pool["mode"] == "SCALE_OUT_POOL"
            pool["note"] = (_POOL_NOTE if pool["mode"] == "SCALE_OUT_POOL" else _MANUAL_NOTE)
            details["standby_pool"] = pool
        return Observation(current_replicas=int(igm.target_size), status_replicas=present, members=members,
                           in_flight=in_flight, details=details)

    def _instances(self, managed: list) -> dict[str, tuple[Optional[float], Optional[int]]]:
        """name -> (start time, vCPUs), from ``instances.list`` in each zone the group
        spans, for the instances not read before: an instance keeps its start time and
        machine type while it runs; one that is not ``RUNNING`` with no current action
        is read again (a restart changes its ``lastStartTimestamp``, a recreation its id)."""
        by_zone: dict[str, list[str]] = {}
        out: dict[str, tuple[Optional[float], Optional[int]]] = {}
        settled: dict[str, str] = {}
        for mi in managed:
            if not mi.instance:   # an instance still being created may have no URL yet
                continue
            key = str(mi.id) if mi.id else ""
            steady = enum_name(mi.instance_status) == "RUNNING" and (enum_name(mi.current_action) or "NONE") == "NONE"
            known = self._known.get(key) if key else None
            if known is not None and steady:
                out[mi.name] = known
                continue
            if steady and key:
                settled[mi.name] = key
            elif key:
                self._known.pop(key, None)   # read again once it runs
            z = zone_of(mi.instance) or self.zone
            if z:
                by_zone.setdefault(z, []).append(mi.name)
        if by_zone:
            compute_v1 = self.clients.types()
            client = self.clients.compute("InstancesClient")
            for z, names in sorted(by_zone.items()):
                for k in range(0, len(names), _NAMES_PER_LIST):
                    chunk = names[k:k + _NAMES_PER_LIST]
                    req = compute_v1.ListInstancesRequest(project=self.project, zone=z,
                                                          filter=f'name eq "({"|".join(chunk)})"')
                    for inst in self.clients.pages("instances.list", client.list, request=req):
                        started = rfc3339(inst.last_start_timestamp) or rfc3339(inst.creation_timestamp)
                        out[inst.name] = (started, self._vcpus(z, inst.machine_type))
        ids = {str(mi.id) for mi in managed if mi.id}
        self._known = {k: v for k, v in self._known.items() if k in ids}   # forget instances gone
        for name, key in settled.items():
            if name in out:
                self._known[key] = out[name]
        return out

    def _vcpus(self, zone: str, url: str) -> Optional[int]:
        if not url:
            return None
        mt = url.rsplit("/", 1)[-1]
        parts = url.split("/")
        if "zones" in parts:
            zone = parts[parts.index("zones") + 1]
        key = (self.project, zone, mt)
        cpus = self.provider.machine_types.get(key)
        if cpus is None:
            got = self.clients.call("machineTypes.get", self.clients.compute("MachineTypesClient").get,
                                    project=self.project, zone=zone, machine_type=mt)
            cpus = self.provider.machine_types[key] = int(got.guest_cpus) or None
        return cpus

    def _operation_in_flight(self, igm: Any) -> Optional[str]:
        """The resize this target started, if not DONE; on a target's first sync,
        any operation on the group not DONE (another process's resize)."""
        ops = self._ops_client()
        if self._operation is not None:
            op = self.clients.call(f"{'zone' if self.zone else 'region'}Operations.get", ops.get,
                                   project=self.project, operation=self._operation, **self._scope())
            if enum_name(op.status) != _DONE:
                return f"operation {op.name} {enum_name(op.status)}"
            self._operation = None
            err = operation_error(op, f"{self._api}.resize")
            if err is not None:
                raise err
            return None
        if not self._checked_operations:
            self._checked_operations = True
            compute_v1 = self.clients.types()
            req_cls = compute_v1.ListZoneOperationsRequest if self.zone else compute_v1.ListRegionOperationsRequest
            req = req_cls(project=self.project, filter=f'(targetId = {igm.id}) (status != "DONE")', **self._scope())
            running = self.clients.pages(f"{'zone' if self.zone else 'region'}Operations.list", ops.list,
                                         request=req)
            if running:
                op = running[0]
                return f"operation {op.name} {enum_name(op.status)} ({op.operation_type})"
        return None

    # -- metrics -------------------------------------------------------------------------
    def read_metrics(self, now: float, observation: Observation, queries: list[MetricQuery]) -> dict[str, dict]:
        from .metrics import read_metrics
        return read_metrics(self, now, observation, queries)

    def read_history(self, query: MetricQuery, start: float, end: float, step: float) -> dict:
        import time
        from .metrics import read_history
        return read_history(self, query, start, end, step, time.time())

    def size_history(self, start: float, end: float, step: float) -> Optional[dict]:
        import time
        from .metrics import size_history
        return size_history(self, start, end, step, time.time())

    # -- act -----------------------------------------------------------------------------
    def set_size(self, size: int) -> SizeChange:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProviderError(ErrorKind.INVALID, f"size must be an integer >= 0, got {size!r}",
                                operation=f"{self._api}.resize")
        name = f"{self._api}.resize"
        compute_v1 = self.clients.types()
        req_cls = compute_v1.ResizeInstanceGroupManagerRequest if self.zone else \
            compute_v1.ResizeRegionInstanceGroupManagerRequest
        req = req_cls(project=self.project, instance_group_manager=self.igm_name, size=size,
                      request_id=self.clients.request_id(), **self._scope())
        op = self.clients.call(name, self._igm_client().resize_unary, request=req)
        op = self.wait(op)
        if enum_name(op.status) != _DONE:
            self._operation = op.name
            return SizeChange(size, in_flight=True, operation=op.name,
                              note=f"operation {enum_name(op.status)} after {self.provider.operation_wait:g}s")
        err = operation_error(op, name)
        if err is not None:
            raise err
        # DONE: scheduled; the group has the VMs when status.isStable
        note = "resize scheduled (operation DONE); the group settles when status.isStable"
        pool = standby_pool(self._igm) if self._igm is not None else None
        if pool is not None and pool["mode"] == "SCALE_OUT_POOL" and size > int(self._igm.target_size):
            note += "; standbyPolicy SCALE_OUT_POOL: the MIG resumes or starts standby VMs first"
        return SizeChange(size, in_flight=True, operation=op.name, note=note)

    def wait(self, op: Any) -> Any:
        """Poll with ``operations.wait`` (the server answers when the operation is DONE
        or after its own deadline) until DONE or ``operation_wait_seconds``."""
        deadline = time.monotonic() + self.provider.operation_wait
        ops = self._ops_client()
        kind = "zoneOperations.wait" if self.zone else "regionOperations.wait"
        while enum_name(op.status) != _DONE and time.monotonic() < deadline:
            op = self.clients.call(kind, ops.wait, project=self.project, operation=op.name, **self._scope())
            if enum_name(op.status) != _DONE:
                time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        return op

    # -- refuse --------------------------------------------------------------------------
    def managed_by(self) -> Optional[str]:
        igm = self._igm if self._igm is not None else self._get()
        url = igm.status.autoscaler
        if not url:
            return None
        parts = url.split("/")
        try:
            project = parts[parts.index("projects") + 1]
            name = parts[-1]
        except (ValueError, IndexError):
            return f"the autoscaler {url}"
        if "zones" in parts:
            zone = parts[parts.index("zones") + 1]
            client, scope, api = self.clients.compute("AutoscalersClient"), {"zone": zone}, "autoscalers.get"
        else:
            region = parts[parts.index("regions") + 1]
            client, scope, api = (self.clients.compute("RegionAutoscalersClient"), {"region": region},
                                  "regionAutoscalers.get")
        try:
            a = self.clients.call(api, client.get, project=project, autoscaler=name, **scope)
        except ProviderError as e:
            if e.kind is ErrorKind.NOT_FOUND:   # deleted since the group was read
                return None
            raise
        mode = enum_name(a.autoscaling_policy.mode) or "ON"   # the API's default mode is ON
        if mode == "OFF":
            return None
        where = f"zones/{scope['zone']}" if "zone" in scope else f"regions/{scope['region']}"
        return f"the GCE autoscaler projects/{project}/{where}/autoscalers/{name} (mode {mode})"

    def close(self) -> None:
        pass
