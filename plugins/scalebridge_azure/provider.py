"""The ``azure`` provider: a virtual machine scale set's capacity.

- observe: the scale set (``sku.capacity``, ``provisioningState``,
  ``orchestrationMode``) and its instances with their instance views
  (https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-set-vms/list,
  ``$expand=instanceView``) as members: ``ProvisioningState/succeeded`` with
  ``PowerState/running`` is a ready member, its status ``time`` the ready transition;
  ``Creating`` is pending; ``Deleting`` is deleting; ``Failed`` failed. A scale set
  whose ``provisioningState`` is not ``Succeeded`` has an operation in flight.
- act: ``virtualMachineScaleSets.update`` (PATCH) with the new ``sku.capacity``
  (https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/update),
  sent without polling (``polling=False``): the SDK's poller would block the loop
  for 30 s per round when ARM sends no ``Retry-After``. Later observations see the
  scale set ``Updating`` until it is done.
- pacing: ARM's subscription limits (token bucket per region: writes 200, refilled
  10 a second; reads 250, refilled 25 a second —
  https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling)
  for the provider instance; per scale set, Compute's per-resource token bucket
  (https://learn.microsoft.com/azure/virtual-machines/compute-throttling-limits: a
  bucket of 12 update requests refilled by 4 a minute) — about four capacity updates
  a minute once a burst is spent. A write the bucket has no room for is not sent: it
  is reported as throttled with the seconds until a token is back. ARM's
  ``x-ms-ratelimit-remaining-resource`` / ``-subscription-writes`` /
  ``-subscription-global-writes`` headers at 0 hold writes for a minute in the same way.
- refuse: a scale set that an enabled autoscale setting targets
  (``autoscaleSettings`` of the subscription whose ``targetResourceUri`` is the scale
  set; https://learn.microsoft.com/rest/api/monitor/autoscale-settings/list-by-subscription).
"""
from __future__ import annotations

import re
import threading
import time as _time
from typing import Any, Mapping, Optional

from scalebridge.protocol import Member, MetricObservation
from scalebridge.providers import (
    Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider, ProviderError, RefError, SizeChange,
    Target, require,
)

from . import metrics as _metrics
from .client import ArmSession

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._()-]{0,89}$")

#: Compute's per-resource bucket for scale set updates (compute-throttling-limits)
UPDATE_BUCKET = 12
UPDATE_REFILL_PER_SECOND = 4 / 60.0
#: ARM's remaining-writes headers: per ARM instance, and of the regional token bucket
#: (request-limits-and-throttling, "Remaining requests")
WRITE_LIMIT_HEADERS = ("x-ms-ratelimit-remaining-subscription-writes",
                       "x-ms-ratelimit-remaining-subscription-global-writes")
#: how long writes wait when ARM says no writes remain
RATE_LIMIT_HOLD_SECONDS = 60.0
#: how long one listing of a subscription's autoscale settings answers ``managed_by``
AUTOSCALE_LIST_TTL_SECONDS = 60.0


class AzureProvider(Provider):
    """Options (run configuration ``providers:``): ``subscription_id``,
    ``arm_endpoint``, ``ca_bundle``, ``credential``."""

    name = "azure"
    semantics = "azure"
    capabilities = frozenset({Capability.METRICS, Capability.TRANSLATE, Capability.NATIVE_DECISIONS,
                              Capability.DELETE_MEMBERS})
    pacing = Pacing(writes_per_second=10.0, write_burst=200, reads_per_second=25.0, read_burst=250)
    ref_keys = frozenset({"resource_group", "scale_set"})
    path_options = frozenset({"ca_bundle"})
    secret_options = frozenset({"credential.client_secret"})

    OPTIONS = frozenset({"subscription_id", "arm_endpoint", "ca_bundle", "credential"})

    def __init__(self, **options: Any):
        for module in ("azure.mgmt.compute", "azure.mgmt.monitor", "azure.identity"):
            require(module, "azure", "azure")
        unknown = sorted(set(options) - self.OPTIONS)
        if unknown:
            raise RefError(unknown[0], f"unknown option of the azure provider; it takes "
                                       f"{', '.join(sorted(self.OPTIONS))}")
        self.subscription_id = options.get("subscription_id")
        #: the clock of the per-scale-set write bucket and hold (monotonic seconds; injectable)
        self.clock = _time.monotonic
        self._settings: dict[str, tuple[float, list]] = {}
        self._settings_lock = threading.Lock()
        self.session = ArmSession(subscription_id=self.subscription_id, arm_endpoint=options.get("arm_endpoint"),
                                  ca_bundle=options.get("ca_bundle"), credential=options.get("credential", "default"))

    def target(self, ref: Mapping[str, Any]) -> "ScaleSetTarget":
        ref = dict(ref or {})
        allowed = {"subscription_id", "resource_group", "scale_set"}
        unknown = sorted(set(ref) - allowed)
        if unknown:
            raise RefError(f"ref.{unknown[0]}", f"unknown key; an azure target takes {', '.join(sorted(allowed))}")
        for key in ("resource_group", "scale_set"):
            v = ref.get(key)
            if not isinstance(v, str) or not v:
                raise RefError(f"ref.{key}", "is required: the scale set's resource group and name "
                                             "(ref: {resource_group: shop, scale_set: web})")
            if not _NAME.match(v):
                raise RefError(f"ref.{key}", f"{v!r} is not a valid Azure resource name")
        sub = ref.get("subscription_id") or self.subscription_id
        if not sub:
            raise RefError("ref.subscription_id", "is required when the provider has no subscription_id option")
        return ScaleSetTarget(self, str(sub), ref["resource_group"], ref["scale_set"])

    def check_metric_source(self, name: str, source: Optional[Mapping[str, Any]]) -> None:
        """An Azure Monitor source's keys and aggregation (:mod:`.metrics`)."""
        _metrics.check_source(name, source)

    def autoscale_settings(self, subscription_id: str) -> list:
        """The subscription's autoscale settings, listed once per
        :data:`AUTOSCALE_LIST_TTL_SECONDS` for all of its targets (one call, not one per
        scale set)."""
        now = self.clock()
        with self._settings_lock:
            hit = self._settings.get(subscription_id)
            if hit is not None and now - hit[0] < AUTOSCALE_LIST_TTL_SECONDS:
                return hit[1]
            monitor = self.session.monitor(subscription_id)
            items = self.session.call("autoscaleSettings.listBySubscription",
                                      lambda: list(monitor.autoscale_settings.list_by_subscription()))
            self._settings[subscription_id] = (now, items)
            return items

    def close(self) -> None:
        self.session.close()


class _Bucket:
    def __init__(self, size: float, refill: float, now: float):
        self.size, self.refill, self.tokens, self.at = size, refill, size, now

    def take(self, now: float) -> Optional[float]:
        """None when a token was taken, else the seconds until one is back."""
        self.tokens = min(self.size, self.tokens + (now - self.at) * self.refill)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return None
        return (1 - self.tokens) / self.refill


class ScaleSetTarget(Target):
    def __init__(self, provider: AzureProvider, subscription_id: str, resource_group: str, scale_set: str):
        self.provider = provider
        self.session = provider.session
        self.subscription_id = subscription_id
        self.resource_group = resource_group
        self.scale_set = scale_set
        self.name = f"{resource_group}/{scale_set}"
        self.id = (f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}/providers/"
                   f"Microsoft.Compute/virtualMachineScaleSets/{scale_set}")
        self._sku: Optional[tuple[str, Optional[str]]] = None
        self._lock = threading.Lock()
        self._bucket: Optional[_Bucket] = None
        self._hold_until = 0.0
        self._operation: Optional[str] = None
        self._last_members: Optional[list[Member]] = None
        self._last_capacity: Optional[int] = None

    # -- observe -------------------------------------------------------------------------------

    def observe(self, now: float) -> Observation:
        compute = self.session.compute(self.subscription_id)
        call = self.session.call
        vmss = call("virtualMachineScaleSets.get", compute.virtual_machine_scale_sets.get,
                    self.resource_group, self.scale_set)
        sku = vmss.sku
        if sku is None or sku.capacity is None:
            raise ProviderError(ErrorKind.INVALID, f"scale set {self.name} has no sku.capacity",
                                operation="virtualMachineScaleSets.get")
        with self._lock:
            self._sku = (sku.name, sku.tier)
            self._capacity = int(sku.capacity)
        mode = str(getattr(vmss.orchestration_mode, "value", vmss.orchestration_mode) or "Uniform")
        members = self._members(compute, mode)
        self._last_members, self._last_capacity = members, int(sku.capacity)
        state = vmss.provisioning_state or "Succeeded"
        in_flight = None if state == "Succeeded" else f"scale set provisioningState is {state}"
        live = [m for m in members if not m.deleting and not m.standby] if members is not None else None
        details = {"provisioning_state": state, "orchestration_mode": mode, "sku": sku.name,
                   "location": vmss.location}
        pool = sum(1 for m in members or () if m.standby)
        if pool:
            details["standby_pool"] = {"standby_members": pool, "managed_by_scalebridge": False,
                                       "note": _STANDBY_POOL_NOTE}
        return Observation(
            current_replicas=int(sku.capacity),
            status_replicas=len(live) if live is not None else None,
            members=members, in_flight=in_flight, details=details)

    def _members(self, compute: Any, mode: str) -> Optional[list[Member]]:
        call = self.session.call
        if mode == "Flexible":
            # Flexible orchestration: the scale set's VMs are plain virtual machines
            # (https://learn.microsoft.com/rest/api/compute/virtual-machines/list, $filter on the scale set)
            vms = call("virtualMachines.list", lambda: list(compute.virtual_machines.list(
                self.resource_group, filter=f"'virtualMachineScaleSet/id' eq '{self.id}'", expand="instanceView")))
        else:
            vms = call("virtualMachineScaleSetVMs.list", lambda: list(compute.virtual_machine_scale_set_vms.list(
                self.resource_group, self.scale_set, expand="instanceView")))
        # a member's name -> the id deleteInstances takes (Uniform: instanceId; Flexible: the VM's name)
        self._ids = {vm.name: (getattr(vm, "instance_id", None) or vm.name) for vm in vms}
        return [member(vm) for vm in vms]

    # -- metrics -------------------------------------------------------------------------------

    def read_metrics(self, now: float, observation: Observation,
                     queries: list[MetricQuery]) -> dict[str, MetricObservation]:
        monitor = self.session.monitor(self.subscription_id)
        out: dict[str, MetricObservation] = {}
        for q in queries:
            _metrics.check_source(q.name, q.source)
            plan = _metrics.MetricPlan(q, self.id)
            obs = _metrics.read(monitor, self.session.call, plan, now, self.metric_delay_seconds)
            if obs is not None:
                out[q.name] = MetricObservation(**obs)   # the core's own type: read and checked here
        return out

    # -- act -----------------------------------------------------------------------------------

    def _take_write(self, now: float) -> None:
        """One write of this scale set's budget (called under ``self._lock``): refused while
        ARM's hold lasts or Compute's update bucket is spent. These limits are this scale
        set's: reported without a Retry-After, so that the controller backs this target off
        and not the whole provider."""
        if now < self._hold_until:
            raise ProviderError(ErrorKind.THROTTLED, f"ARM reports no writes left; writes to {self.name} "
                                                     f"wait {self._hold_until - now:.0f} s more")
        if self._bucket is None:
            self._bucket = _Bucket(UPDATE_BUCKET, UPDATE_REFILL_PER_SECOND, now)
        wait = self._bucket.take(now)
        if wait is not None:
            raise ProviderError(ErrorKind.THROTTLED, f"Compute's update limit for {self.name} is spent "
                                                     f"(12 updates, 4 more a minute): next in {wait:.0f} s")

    def set_size(self, size: int) -> SizeChange:
        if size < 0:
            raise ProviderError(ErrorKind.INVALID, f"a scale set's capacity is >= 0, not {size}")
        now = self.provider.clock()
        with self._lock:
            self._take_write(now)
            sku = self._sku
        compute = self.session.compute(self.subscription_id)
        if sku is None:
            vmss = self.session.call("virtualMachineScaleSets.get", compute.virtual_machine_scale_sets.get,
                                     self.resource_group, self.scale_set)
            sku = (vmss.sku.name, vmss.sku.tier)
        models = require("azure.mgmt.compute.models", "azure", "azure")
        update = models.VirtualMachineScaleSetUpdate(sku=models.Sku(name=sku[0], tier=sku[1], capacity=int(size)))
        headers: dict[str, str] = {}
        self.session.call("virtualMachineScaleSets.update", compute.virtual_machine_scale_sets.begin_update,
                          self.resource_group, self.scale_set, update, polling=False,
                          on_headers=lambda h: headers.update(h))
        self._note_limits(headers, now)
        op = headers.get("Azure-AsyncOperation") or headers.get("azure-asyncoperation")
        return SizeChange(size=int(size), in_flight=True, operation=op)

    def delete_members(self, members: list[str], size: int) -> SizeChange:
        """A scale-in of chosen instances: ``virtualMachineScaleSets.deleteInstances``
        (``begin_delete_instances``) naming their instance ids, which lowers the capacity
        by the instances deleted
        (https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/delete-instances);
        then a capacity update for any rest (a partial selection). Only instances the
        last observation saw, not leaving and not protected from scale-in, are named:
        a retry or a restart deletes no one twice. The same update limit as
        :meth:`set_size` applies."""
        if size < 0:
            raise ProviderError(ErrorKind.INVALID, f"a scale set's capacity is >= 0, not {size}")
        ids = getattr(self, "_ids", None)
        if ids is None:
            self.observe(self.provider.clock())
            ids = self._ids
        seen = {m.name: m for m in (self._last_members or [])}
        current = self._last_capacity if self._last_capacity is not None else len(seen)
        room = max(0, current - size)
        chosen = [n for n in members if n in ids and n in seen and not seen[n].deleting
                  and not seen[n].protected][:room]
        if not chosen:
            return self.set_size(size)
        now = self.provider.clock()
        with self._lock:
            self._take_write(now)
        compute = self.session.compute(self.subscription_id)
        models = require("azure.mgmt.compute.models", "azure", "azure")
        body = models.VirtualMachineScaleSetVMInstanceRequiredIDs(instance_ids=[ids[n] for n in chosen])
        headers: dict[str, str] = {}
        self.session.call("virtualMachineScaleSets.deleteInstances",
                          compute.virtual_machine_scale_sets.begin_delete_instances,
                          self.resource_group, self.scale_set, body, polling=False,
                          on_headers=lambda h: headers.update(h))
        self._note_limits(headers, now)
        for n in chosen:
            seen[n].deleting = True
        self._last_capacity = current - len(chosen)
        op = headers.get("Azure-AsyncOperation") or headers.get("azure-asyncoperation")
        note = f"deleteInstances {', '.join(chosen)}"
        if current - len(chosen) > size:     # a partial selection: ARM takes one operation at a time
            return SizeChange(size=current - len(chosen), in_flight=True, operation=op,
                              note=f"{note}; the rest (to {size}) is for a later sync, once the operation ends")
        return SizeChange(size=int(size), in_flight=True, operation=op, note=note)

    def _note_limits(self, headers: Mapping[str, str], now: float) -> None:
        """ARM's call-rate headers: a policy at 0 holds writes for a minute."""
        lowered = {k.lower(): v for k, v in headers.items()}
        spent = any(lowered.get(h) == "0" for h in WRITE_LIMIT_HEADERS)
        for part in (lowered.get("x-ms-ratelimit-remaining-resource") or "").split(","):
            name, _, count = part.strip().partition(";")
            if count.strip() == "0":
                spent = True
        if spent:
            with self._lock:
                self._hold_until = now + RATE_LIMIT_HOLD_SECONDS

    # -- refusal -------------------------------------------------------------------------------

    def native_decision(self, now: float, since: Optional[float]) -> Any:
        """The enabled autoscale setting that targets this scale set, and its scale
        actions in the Activity Log (``activity_logs.list`` with the documented filter:
        a time window and the setting as ``resourceUri``; the scale-up and scale-down
        operations kept, their ``OldInstancesCount``/``NewInstancesCount`` strings read
        as numbers). The newest action after ``since`` is its decision (from, to, when);
        with none, it held the capacity observed this sync. The Activity Log says
        neither the metrics the engine read nor which rule decided (``metrics`` empty,
        ``stage`` None), and it can lag the action by minutes. None when no enabled
        setting targets the scale set."""
        return _native_decision(self, now, since)

    def managed_by(self) -> Optional[str]:
        settings = self.provider.autoscale_settings(self.subscription_id)
        mine = self.id.lower()
        for s in settings:
            if (s.target_resource_uri or "").lower() == mine and s.enabled:
                group = _group_of(s.id) or "?"
                return f"Azure autoscale setting {s.name!r} (resource group {group}), enabled"
        return None


#: the autoscale engine's scale actions in the Activity Log
#: (https://learn.microsoft.com/azure/azure-monitor/essentials/activity-log-schema, "Autoscale category")
AUTOSCALE_OPERATIONS = ("microsoft.insights/autoscalesettings/scaleup/action",
                        "microsoft.insights/autoscalesettings/scaledown/action")
#: how far back the first read looks for the autoscale engine's actions (the Activity Log
#: keeps 90 days; one hour covers any profile's cooldown)
NATIVE_LOOKBACK_SECONDS = 3600.0


def _native_decision(target: "ScaleSetTarget", now: float, since: Optional[float]) -> Any:
    """See :meth:`ScaleSetTarget.native_decision`."""
    import datetime as dt
    from scalebridge.providers import NativeDecision
    mine = target.id.lower()
    setting = next((s for s in target.provider.autoscale_settings(target.subscription_id)
                    if (s.target_resource_uri or "").lower() == mine and s.enabled), None)
    if setting is None:
        return None

    def stamp(t: float) -> str:
        return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    # the service's filter patterns: a start time, then the autoscale setting as the resource
    start = (since if since is not None else now - NATIVE_LOOKBACK_SECONDS)
    flt = f"eventTimestamp ge '{stamp(start)}' and eventTimestamp le '{stamp(now + 60)}' and " \
          f"resourceUri eq '{setting.id}'"
    monitor = target.session.monitor(target.subscription_id)
    events = target.session.call(
        "activityLogs.list", lambda: list(monitor.activity_logs.list(
            filter=flt, select="eventTimestamp,operationName,properties,status,resourceId")))
    actions = []
    for e in events:
        op = (getattr(e.operation_name, "value", None) or "").lower()
        if op not in AUTOSCALE_OPERATIONS:
            continue
        props = e.properties or {}
        try:
            old, new = int(props.get("OldInstancesCount")), int(props.get("NewInstancesCount"))
        except (TypeError, ValueError):
            continue
        t = e.event_timestamp.timestamp() if e.event_timestamp is not None else None
        if t is None or (since is not None and t <= since):
            continue
        actions.append({"time": t, "from": old, "to": new, "reason": props.get("Description"),
                        "status": getattr(e.status, "value", None)})
    actions.sort(key=lambda a: a["time"])
    last = actions[-1] if actions else None
    held = getattr(target, "_capacity", None)
    group = _group_of(setting.id) or "?"
    return NativeDecision(f"Azure autoscale setting {setting.name!r} (resource group {group})",
                          last["to"] if last else held, current=last["from"] if last else held,
                          time=last["time"] if last else None, reason=last["reason"] if last else None,
                          actions=actions, source="the autoscale engine's scale actions in the Activity Log")


def _group_of(resource_id: Optional[str]) -> Optional[str]:
    m = re.search(r"/resourceGroups/([^/]+)/", resource_id or "", re.IGNORECASE)
    return m.group(1) if m else None


_STANDBY_POOL_NOTE = (
    "scalebridge does not manage this standby pool (Microsoft.StandbyPool/standbyVirtualMachinePools, "
    "azure-mgmt-standbypool): it sets sku.capacity and the scale set draws VMs from the pool first; the pool's "
    "VMs are neither capacity nor failures")


def member(vm: Any) -> Member:
    """A scale set instance as a protocol member; a VM of an attached standby pool
    (instance view ``isVMInStandbyPool``) is ``standby``: no scale set instance, so in no
    capacity ("When your scale set requires more instances, rather than creating new
    instances from scratch, the scale set instead uses virtual machines from the standby
    pool", https://learn.microsoft.com/azure/virtual-machine-scale-sets/standby-pools-overview,
    "Scaling"), and no failure."""
    view = getattr(vm, "instance_view", None)
    if getattr(view, "is_vm_in_standby_pool", None) is True:
        created = getattr(vm, "time_created", None)
        return Member(name=vm.name, phase="Pending", ready=False, standby=True,
                      start_time=created.timestamp() if created is not None else None)
    state = vm.provisioning_state or "Succeeded"
    statuses = list(getattr(view, "statuses", None) or [])
    codes = {s.code for s in statuses if s.code}
    running = "PowerState/running" in codes
    ready_at = next((s.time for s in statuses if (s.code or "").lower() == "provisioningstate/succeeded"
                     and s.time is not None), None)
    created = getattr(vm, "time_created", None)
    phase = {"Creating": "Pending", "Failed": "Failed"}.get(state, "Running")
    protection = getattr(vm, "protection_policy", None)
    zones = list(getattr(vm, "zones", None) or ())
    return Member(name=vm.name, phase=phase, ready=state == "Succeeded" and running, deleting=state == "Deleting",
                  start_time=created.timestamp() if created is not None else None,
                  ready_transition_time=ready_at.timestamp() if ready_at is not None else None,
                  zone=zones[0] if zones else None,
                  # instance protection from scale-in: never chosen to leave
                  # (https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-instance-protection)
                  protected=True if protection is not None and protection.protect_from_scale_in else None)
