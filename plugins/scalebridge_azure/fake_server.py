"""A local Azure Resource Manager over HTTPS, for testing code that uses the real
Azure SDKs (azure-mgmt-compute, azure-mgmt-monitor, azure-identity).

    with ArmServer() as arm:
        arm.add_scale_set("sub", "shop", "web", capacity=2)
        arm.put_metric(arm.scale_set_id("sub", "shop", "web"), "Percentage CPU", vm="web_0",
                       points=[(t, 90.0), ...])
        client = ComputeManagementClient(arm.credential(), "sub", base_url=arm.url,
                                         connection_verify=arm.ca_file)

What it speaks, in the shapes the REST references document:

- ``Microsoft.Compute/virtualMachineScaleSets``: GET, PATCH (``sku.capacity``; the
  scale set stays ``Updating`` for ``update_polls`` reads, answering with an
  ``Azure-AsyncOperation`` header and its operation status resource), and
  ``…/virtualMachines`` with ``$expand=instanceView``
  (https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/update,
  https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-set-vms/list);
- ``…/delete`` (``deleteInstances``: ``instanceIds``, the capacity lowered by the
  instances deleted, https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/delete-instances);
- ``Microsoft.Insights/metrics`` on any resource: ``timespan``, ``interval`` (ISO 8601
  only — ``0:01:00`` is a 400, as ARM answers), ``metricnames``, ``aggregation``,
  ``$filter`` ``VMName eq '*'`` splitting by instance; points stamped at the start
  of their grain (https://learn.microsoft.com/rest/api/monitor/metrics/list);
- ``Microsoft.Insights/autoscalesettings``: list by subscription and resource group,
  GET, PUT (https://learn.microsoft.com/rest/api/monitor/autoscale-settings), a PUT
  beyond the service's limits refused (``_autoscale_refused``);
- the Activity Log (``/subscriptions/{id}/providers/Microsoft.Insights/eventtypes/management/values``,
  what ``activity_logs.list`` reads): its ``$filter`` must start with ``eventTimestamp ge '…'``
  (a 400 otherwise, as the service answers) and may add ``eventTimestamp le``,
  ``resourceUri eq`` and ``resourceGroupName eq``; the autoscale engine's
  ``Microsoft.Insights/AutoscaleSettings/Scaleup/Action`` and ``…/Scaledown/Action`` events
  are added with :meth:`ArmServer.add_autoscale_event`, in the shape of the "Autoscale
  category" of https://learn.microsoft.com/azure/azure-monitor/essentials/activity-log-schema
  (the instance counts are strings);
- a Microsoft Entra token endpoint (``/{tenant}/v2.0/.well-known/openid-configuration``,
  ``/{tenant}/oauth2/v2.0/token``, client-credentials grant) for azure-identity's
  ``ClientSecretCredential`` with ``authority`` pointed here; ARM calls need a bearer
  token it issued.

Strict where ARM is: a missing ``api-version`` is a 400, an unknown resource a 404 with
ARM's error body, a capacity outside 0…1000 (100 with a single placement group) a 400,
a second update while one is in progress a 409. Paths are case-insensitive, as ARM's
are, and a doubled slash (azure-mgmt-monitor sends ``//subscriptions/…``) is one slash.
Every response carries ``x-ms-ratelimit-remaining-subscription-{reads,writes}``;
:meth:`ArmServer.fail` queues faults (status, ``Retry-After``, headers, delay, a
dropped connection). :attr:`ArmServer.calls` records every request (method, path,
query) so tests can count calls and check role-assignment actions.

The server's clock is ``clock()`` (default ``time.time``), injectable so that metric
windows line up with a test's ``now``.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
import json
import os
import re
import shutil
import ssl
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import parse_qs, unquote, urlsplit

from scalebridge.testing.fault_queue import take_fault
from scalebridge.testing.local_server import HttpServer, QuietHandler

__all__ = ["ArmServer", "Fault", "make_ca"]

_ISO_DURATION = re.compile(r"^P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+)S)?)?$")
_AGGREGATIONS = {"average": "average", "minimum": "minimum", "maximum": "maximum", "total": "total",
                 "count": "count"}


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(s: str) -> float:
    s = s.strip().replace("Z", "+00:00")
    d = _dt.datetime.fromisoformat(s)
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.timezone.utc)
    return d.timestamp()


def _duration(s: str) -> Optional[float]:
    m = _ISO_DURATION.match(s or "")
    if not m or s in ("P", "PT"):
        return None
    return (int(m["d"] or 0) * 86400 + int(m["h"] or 0) * 3600 + int(m["m"] or 0) * 60 + int(m["s"] or 0))


def _autoscale_refused(profiles: list) -> Optional[tuple[str, str]]:
    """Why ARM refuses an autoscale setting's profiles (error code, message), or None:
    the limits of the REST reference and the SDK models (at most 20 profiles, 10 rules
    a profile, a cooldown from PT1M to P7D — scalebridge.constants.AZURE_*) and
    ``InvalidActionValue`` (its message as the service words it) for a ChangeCount
    beyond the profile's maximum - minimum. The service's code for the limits is not
    documented: ``InvalidRequestContent`` stands for it."""
    from scalebridge.constants import AZURE_MAX_COOLDOWN, AZURE_MAX_PROFILES, AZURE_MAX_RULES_PER_PROFILE, AZURE_MIN_COOLDOWN
    if len(profiles) > AZURE_MAX_PROFILES:
        return "InvalidRequestContent", (f"The autoscale setting has {len(profiles)} profiles; a maximum of "
                                         f"{AZURE_MAX_PROFILES} profiles can be specified.")
    for k, pr in enumerate(profiles):
        rules = pr.get("rules") if isinstance(pr, dict) else None
        if not isinstance(rules, list):
            continue
        if len(rules) > AZURE_MAX_RULES_PER_PROFILE:
            return "InvalidRequestContent", (f"Profile {k} has {len(rules)} rules; a maximum of "
                                             f"{AZURE_MAX_RULES_PER_PROFILE} rules can be specified.")
        cap = pr.get("capacity") if isinstance(pr.get("capacity"), dict) else {}
        try:
            lo, hi = int(cap.get("minimum")), int(cap.get("maximum"))
        except (TypeError, ValueError):
            lo = hi = None
        for rule in rules:
            action = rule.get("scaleAction") if isinstance(rule, dict) else None
            if not isinstance(action, dict):
                continue
            cooldown = _duration(action.get("cooldown")) if isinstance(action.get("cooldown"), str) else None
            if cooldown is None or not AZURE_MIN_COOLDOWN <= cooldown <= AZURE_MAX_COOLDOWN:
                return "InvalidRequestContent", (f"The scale action cooldown {action.get('cooldown')!r} is not "
                                                 "valid: it must be between 1 week and 1 minute in ISO 8601 format.")
            if action.get("type") == "ChangeCount" and lo is not None and hi > lo:
                try:
                    value = int(action.get("value"))
                except (TypeError, ValueError):
                    continue
                if value > hi - lo:
                    return "InvalidActionValue", (f"The autoscale setting you provided has an invalid scale action "
                                                  f"value ('{action.get('value')}'). Specify a scale value less than "
                                                  f"or equal to the difference between the capacity maximum {hi} and "
                                                  f"the capacity minimum {lo}.")
    return None


def make_ca(directory: str) -> tuple[str, str, str]:
    """A throwaway CA and a server certificate for 127.0.0.1/localhost, signed by it.
    Returns (ca.pem, server.pem, server.key) paths inside ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = _dt.datetime.now(_dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "scalebridge test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - _dt.timedelta(minutes=5))
          .not_valid_after(now + _dt.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - _dt.timedelta(minutes=5)).not_valid_after(now + _dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = tuple(os.path.join(directory, n) for n in ("ca.pem", "server.pem", "server.key"))
    with open(paths[0], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths[2], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths  # type: ignore[return-value]


@dataclass
class Fault:
    """One injected answer: ``status`` with ``body`` and ``headers`` (``Retry-After``
    goes in ``retry_after``), after ``delay`` seconds; ``drop`` closes the connection
    without answering. ``match`` (a regex over ``METHOD path``) picks the requests it
    applies to; ``times`` how many it answers."""

    status: int = 503
    retry_after: Optional[float] = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Optional[dict] = None
    delay: float = 0.0
    drop: bool = False
    match: str = ".*"
    times: int = 1


@dataclass
class _ScaleSet:
    subscription: str
    group: str
    name: str
    capacity: int
    sku: str = "Standard_D2s_v3"
    tier: str = "Standard"
    location: str = "westeurope"
    orchestration: str = "Uniform"
    single_placement_group: bool = True
    provisioning: str = "Succeeded"
    polls_left: int = 0
    operation: Optional[str] = None
    created: float = 0.0
    next_instance: int = 0
    vms: dict[str, dict] = field(default_factory=dict)   # instance id → vm state
    boot_seconds: float = 0.0                            # a new VM is Creating for this long
    standby_pool: int = 0   # VMs of an attached standby pool (Flexible only), deallocated, in no capacity

    @property
    def id(self) -> str:
        return (f"/subscriptions/{self.subscription}/resourceGroups/{self.group}/providers/"
                f"Microsoft.Compute/virtualMachineScaleSets/{self.name}")


class ArmServer(HttpServer):
    """See the module docstring. Use as a context manager, or :meth:`start`/:meth:`stop`."""

    thread_name = "arm-server"

    MAX_CAPACITY = 1000
    MAX_CAPACITY_SINGLE_PLACEMENT_GROUP = 100

    def __init__(self, *, clock: Callable[[], float] = time.time, update_polls: int = 1,
                 client_secret: str = "secret", tenant_id: str = "tenant"):
        self.clock = clock
        self.update_polls = update_polls
        self.client_secret = client_secret
        self.tenant_id = tenant_id
        self.scale_sets: dict[str, _ScaleSet] = {}
        self.metrics: dict[str, dict[str, dict[Optional[str], list[tuple[float, float]]]]] = {}
        self.metric_namespaces: dict[str, str] = {}
        self.autoscale_settings: dict[str, dict] = {}
        #: the Activity Log's events (EventData JSON), oldest first
        self.activity_log: list[dict] = []
        self.operations: dict[str, dict] = {}
        self.faults: list[Fault] = []
        self.random_fault: Optional[tuple[float, Fault, Any]] = None
        #: faults answered so far, as (method, path, status or "drop")
        self.faults_served: list[tuple[str, str, object]] = []
        self.calls: list[tuple[str, str, dict]] = []
        #: every instance ``deleteInstances`` deleted (its name), in order
        self.deleted: list[str] = []
        self.tokens: set[str] = {"static-test-token"}
        self.remaining_writes = 1199
        self.remaining_reads = 11999
        #: more headers on every answer (e.g. ARM's regional
        #: ``x-ms-ratelimit-remaining-subscription-global-writes``, Compute's
        #: ``x-ms-ratelimit-remaining-resource``)
        self.response_headers: dict[str, str] = {}
        self._lock = threading.RLock()
        self._dir: Optional[str] = None
        self.ca_file = ""

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> "ArmServer":
        """Serve HTTPS on a free port of 127.0.0.1 with a certificate of a fresh CA
        (:attr:`ca_file`); :attr:`url` is then the ARM endpoint (``base_url`` of the
        management clients)."""
        self._dir = tempfile.mkdtemp(prefix="scalebridge-arm-")
        self.ca_file, cert, key = make_ca(self._dir)
        server = self

        class Handler(_Handler):
            arm = server

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self._bind(Handler, "127.0.0.1", 0, tls=ctx)
        return super().start()

    def stop(self) -> None:
        super().stop()
        self._httpd = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    @property
    def authority(self) -> str:
        """azure-identity's ``authority`` for the token endpoint here."""
        return f"127.0.0.1:{self.port}"

    def credential(self):
        """A ``TokenCredential`` handing out a token this server accepts (for tests of
        code that takes a credential; the real ``ClientSecretCredential`` also works
        against :attr:`authority`)."""
        from azure.core.credentials import AccessToken

        class _Static:
            def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
                return AccessToken("static-test-token", int(time.time()) + 3600)

        return _Static()

    # -- the world -----------------------------------------------------------------------------

    @staticmethod
    def scale_set_id(subscription: str, group: str, name: str) -> str:
        return (f"/subscriptions/{subscription}/resourceGroups/{group}/providers/"
                f"Microsoft.Compute/virtualMachineScaleSets/{name}")

    def add_scale_set(self, subscription: str, group: str, name: str, *, capacity: int = 2,
                      orchestration: str = "Uniform", boot_seconds: float = 0.0, created: Optional[float] = None,
                      single_placement_group: bool = True, sku: str = "Standard_D2s_v3") -> _ScaleSet:
        with self._lock:
            ss = _ScaleSet(subscription, group, name, capacity=0, orchestration=orchestration,
                           single_placement_group=single_placement_group, sku=sku, boot_seconds=boot_seconds,
                           created=self.clock() - 3600 if created is None else created)
            self.scale_sets[ss.id.lower()] = ss
            self._resize(ss, capacity, at=ss.created)
            return ss

    def scale_set(self, subscription: str, group: str, name: str) -> _ScaleSet:
        return self.scale_sets[self.scale_set_id(subscription, group, name).lower()]

    def _resize(self, ss: _ScaleSet, capacity: int, at: float) -> None:
        live = [i for i, vm in ss.vms.items() if vm["state"] != "Deleting"]
        while len(live) < capacity:
            iid = str(ss.next_instance)
            ss.next_instance += 1
            ss.vms[iid] = {"created": at, "ready_at": at + ss.boot_seconds, "state": "Creating"}
            live.append(iid)
        # scale-in removes the highest instance ids first (the default scale-in policy
        # removes VMs balanced across zones, then the highest instance id)
        for iid in sorted(live, key=int)[capacity:]:
            del ss.vms[iid]
        ss.capacity = capacity

    def put_metric(self, resource_id: str, metric: str, points: list[tuple[float, float]],
                   vm: Optional[str] = None, namespace: Optional[str] = None) -> None:
        """Samples of ``metric`` on ``resource_id`` (per instance when ``vm`` names its
        ``VMName`` dimension). One point per minute, at the minute it describes."""
        with self._lock:
            series = self.metrics.setdefault(resource_id.lower(), {}).setdefault(metric.lower(), {})
            series.setdefault(vm, []).extend(points)
            series[vm].sort()
            self.metric_namespaces[resource_id.lower()] = namespace or _namespace_of(resource_id)

    def add_autoscale_setting(self, subscription: str, group: str, name: str, target_resource_uri: str, *,
                              enabled: bool = True) -> dict:
        with self._lock:
            rid = f"/subscriptions/{subscription}/resourceGroups/{group}/providers/microsoft.insights/autoscalesettings/{name}"
            body = {"id": rid, "name": name, "type": "Microsoft.Insights/autoscaleSettings", "location": "westeurope",
                    "tags": {}, "properties": {"enabled": enabled, "targetResourceUri": target_resource_uri,
                                               "name": name, "notifications": [],
                                               "profiles": [{"name": "default", "capacity":
                                                             {"minimum": "1", "maximum": "10", "default": "2"},
                                                             "rules": []}]}}
            self.autoscale_settings[rid.lower()] = body
            return body

    def add_autoscale_event(self, setting_id: str, old: int, new: int, *, at: Optional[float] = None,
                            target_resource_uri: Optional[str] = None, status: str = "Succeeded") -> dict:
        """The autoscale engine's Activity Log event for a scale action of the autoscale
        setting ``setting_id`` from ``old`` to ``new`` instances (its scale-up or
        scale-down operation, category ``Autoscale``, caller ``Microsoft.Insights/autoscaleSettings``)."""
        t = self.clock() if at is None else at
        stamp = _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
        op = f"Microsoft.Insights/AutoscaleSettings/{'Scaleup' if new > old else 'Scaledown'}/Action"
        group = re.search(r"/resourceGroups/([^/]+)/", setting_id, re.IGNORECASE)
        with self._lock:
            target = target_resource_uri or \
                self.autoscale_settings.get(setting_id.lower(), {}).get("properties", {}).get("targetResourceUri", "")
            ev = {"caller": "Microsoft.Insights/autoscaleSettings", "channels": "Admin, Operation",
                  "correlationId": str(uuid.uuid4()), "eventDataId": str(uuid.uuid4()),
                  "description": "", "level": "Informational",
                  "eventName": {"value": "AutoscaleAction", "localizedValue": "AutoscaleAction"},
                  "category": {"value": "Autoscale", "localizedValue": "Autoscale"},
                  "id": f"{setting_id}/events/{uuid.uuid4()}", "resourceId": setting_id,
                  "resourceGroupName": group.group(1) if group else "",
                  "resourceProviderName": {"value": "Microsoft.Insights", "localizedValue": "Microsoft.Insights"},
                  "resourceType": {"value": "Microsoft.Insights/AutoscaleSettings",
                                   "localizedValue": "Microsoft.Insights/AutoscaleSettings"},
                  "operationName": {"value": op, "localizedValue": op},
                  "status": {"value": status, "localizedValue": status},
                  "subStatus": {"value": "", "localizedValue": ""},
                  "eventTimestamp": stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                  "submissionTimestamp": stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                  "subscriptionId": setting_id.split("/")[2],
                  "properties": {"Description": f"The autoscale engine attempting to scale resource '{target}' "
                                                f"from {old} instances count to {new} instances count.",
                                 "ResourceName": target, "OldInstancesCount": str(old),
                                 "NewInstancesCount": str(new),
                                 "LastScaleActionTime": stamp.strftime("%a, %d %b %Y %H:%M:%S GMT")}}
            self.activity_log.append(ev)
            return ev

    def fail(self, status: int = 503, *, retry_after: Optional[float] = None, match: str = ".*", times: int = 1,
             headers: Optional[dict] = None, body: Optional[dict] = None, delay: float = 0.0,
             drop: bool = False) -> None:
        """Queue a fault for the next ``times`` requests matching ``match``."""
        with self._lock:
            self.faults.append(Fault(status, retry_after, dict(headers or {}), body, delay, drop, match, times))

    def fail_randomly(self, rate: float, status: int = 503, *, retry_after: Optional[float] = None,
                      match: str = ".*", seed: int = 0) -> None:
        """From now on, answer a share ``rate`` of the requests matching ``match`` with
        ``status`` (seeded, so a test sees the same faults every run)."""
        import random
        with self._lock:
            self.random_fault = (rate, Fault(status, retry_after, match=match, times=1 << 62), random.Random(seed))

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()
            self.random_fault = None

    def _take_fault(self, method: str, path: str) -> Optional[Fault]:
        with self._lock:
            if self.random_fault is not None:
                rate, f, rng = self.random_fault
                if re.search(f.match, f"{method} {path}", re.IGNORECASE) and rng.random() < rate:
                    self.faults_served.append((method, path, f.status))
                    return f
            f = take_fault(self.faults, lambda f: re.search(f.match, f"{method} {path}", re.IGNORECASE) is not None)
            if f is not None:
                self.faults_served.append((method, path, "drop" if f.drop else f.status))
            return f

    # -- views ---------------------------------------------------------------------------------

    def _vm_state(self, ss: _ScaleSet, iid: str, now: float) -> dict:
        vm = ss.vms[iid]
        if vm["state"] == "Creating" and now >= vm["ready_at"]:
            vm["state"] = "Succeeded"
        return vm

    def scale_set_json(self, ss: _ScaleSet) -> dict:
        return {"name": ss.name, "id": ss.id, "type": "Microsoft.Compute/virtualMachineScaleSets",
                "location": ss.location,
                "sku": {"name": ss.sku, "tier": ss.tier, "capacity": ss.capacity},
                "properties": {"provisioningState": ss.provisioning, "orchestrationMode": ss.orchestration,
                               "singlePlacementGroup": ss.single_placement_group,
                               "upgradePolicy": {"mode": "Manual"}, "uniqueId": str(uuid.uuid5(uuid.NAMESPACE_URL, ss.id)),
                               "timeCreated": _iso(ss.created)}}

    def vm_json(self, ss: _ScaleSet, iid: str, now: float) -> dict:
        vm = self._vm_state(ss, iid, now)
        state = vm["state"]
        statuses = [{"code": f"ProvisioningState/{state.lower()}", "level": "Info",
                     "displayStatus": f"Provisioning {state.lower()}"}]
        if state == "Succeeded":
            statuses[0]["time"] = _iso(vm["ready_at"])
            statuses.append({"code": "PowerState/running", "level": "Info", "displayStatus": "VM running"})
        elif state == "Creating":
            statuses.append({"code": "PowerState/starting", "level": "Info", "displayStatus": "VM starting"})
        name = f"{ss.name}_{iid}"
        return {"name": name, "id": f"{ss.id}/virtualMachines/{iid}", "instanceId": iid,
                "type": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines", "location": ss.location,
                "sku": {"name": ss.sku, "tier": ss.tier},
                "properties": {"provisioningState": state, "latestModelApplied": True,
                               "timeCreated": _iso(vm["created"]), "osProfile": {"computerName": name},
                               "instanceView": {"statuses": statuses}}}

    def vms_json(self, ss: _ScaleSet, now: float, *, instance_view: bool, flexible: bool = False) -> list[dict]:
        """The scale set's instances as ``virtualMachineScaleSetVMs.list`` gives them, or, for
        Flexible orchestration, as ``virtualMachines.list`` does (plain VMs naming their scale set)."""
        out = []
        for iid in sorted(ss.vms, key=int):
            vm = self.vm_json(ss, iid, now)
            if flexible:
                vm["type"] = "Microsoft.Compute/virtualMachines"
                vm["id"] = (f"/subscriptions/{ss.subscription}/resourceGroups/{ss.group}/providers/"
                            f"Microsoft.Compute/virtualMachines/{vm['name']}")
                vm.pop("instanceId")
                vm["properties"]["virtualMachineScaleSet"] = {"id": ss.id}
            if not instance_view:
                vm["properties"].pop("instanceView")
            out.append(vm)
        if flexible:
            # an attached Microsoft.StandbyPool/standbyVirtualMachinePools: its VMs are no scale set instances
            # (not in sku.capacity); their instance view says ``isVMInStandbyPool`` ("[Preview Feature]
            # Specifies whether the VM is currently in or out of the Standby Pool",
            # azure-mgmt-compute VirtualMachineInstanceView.is_vm_in_standby_pool)
            for k in range(ss.standby_pool):
                name = f"{ss.name}_pool_{k}"
                vm = {"name": name, "type": "Microsoft.Compute/virtualMachines", "location": ss.location,
                      "id": (f"/subscriptions/{ss.subscription}/resourceGroups/{ss.group}/providers/"
                             f"Microsoft.Compute/virtualMachines/{name}"),
                      "properties": {"provisioningState": "Succeeded", "timeCreated": _iso(ss.created),
                                     "virtualMachineScaleSet": {"id": ss.id},
                                     "instanceView": {"isVMInStandbyPool": True, "statuses": [
                                         {"code": "ProvisioningState/succeeded", "level": "Info"},
                                         {"code": "PowerState/deallocated", "level": "Info",
                                          "displayStatus": "VM deallocated"}]}}}
                if not instance_view:
                    vm["properties"].pop("instanceView")
                out.append(vm)
        return out


def _namespace_of(resource_id: str) -> str:
    m = re.search(r"/providers/([^/]+/[^/]+)/[^/]+$", resource_id)
    return m.group(1) if m else "Microsoft.Resources"


def _error(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


_VMSS = re.compile(r"^/subscriptions/([^/]+)/resourcegroups/([^/]+)/providers/microsoft\.compute/"
                   r"virtualmachinescalesets/([^/]+)$", re.IGNORECASE)
_VMSS_DELETE = re.compile(r"^(/subscriptions/[^/]+/resourcegroups/[^/]+/providers/microsoft\.compute/"
                          r"virtualmachinescalesets/[^/]+)/delete$", re.IGNORECASE)
_VMSS_VMS = re.compile(r"^(/subscriptions/[^/]+/resourcegroups/[^/]+/providers/microsoft\.compute/"
                       r"virtualmachinescalesets/[^/]+)/virtualmachines$", re.IGNORECASE)
_VMS = re.compile(r"^/subscriptions/([^/]+)/resourcegroups/([^/]+)/providers/microsoft\.compute/virtualmachines$",
                  re.IGNORECASE)
_OPERATION = re.compile(r"^/subscriptions/[^/]+/providers/microsoft\.compute/locations/[^/]+/operations/([^/]+)$",
                        re.IGNORECASE)
_METRICS = re.compile(r"^(/.+)/providers/microsoft\.insights/metrics$", re.IGNORECASE)
_AUTOSCALE_LIST = re.compile(r"^/subscriptions/([^/]+)(?:/resourcegroups/([^/]+))?/providers/"
                             r"microsoft\.insights/autoscalesettings$", re.IGNORECASE)
_AUTOSCALE_ONE = re.compile(r"^(/subscriptions/[^/]+/resourcegroups/[^/]+/providers/microsoft\.insights/"
                            r"autoscalesettings/[^/]+)$", re.IGNORECASE)
_ACTIVITY_LOG = re.compile(r"^/subscriptions/([^/]+)/providers/microsoft\.insights/eventtypes/management/values$",
                           re.IGNORECASE)
_FILTER_TERM = re.compile(r"^\s*(eventTimestamp|resourceUri|resourceGroupName)\s+(ge|le|eq)\s+'([^']*)'\s*$",
                          re.IGNORECASE)
_OPENID = re.compile(r"^/([^/]+)/v2\.0/\.well-known/openid-configuration$")
_TOKEN = re.compile(r"^/([^/]+)/oauth2/v2\.0/token$")


class _Handler(QuietHandler):
    arm: ArmServer

    # -- plumbing ------------------------------------------------------------------------------

    def _send(self, status: int, body: Optional[dict] = None, headers: Optional[dict] = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        arm = self.arm
        self.send(status, data, "application/json; charset=utf-8",
                  {"x-ms-request-id": str(uuid.uuid4()),
                   "x-ms-ratelimit-remaining-subscription-reads": str(arm.remaining_reads),
                   "x-ms-ratelimit-remaining-subscription-writes": str(arm.remaining_writes),
                   **arm.response_headers, **(headers or {})})

    def _body(self) -> Any:
        raw = self.read_body()
        if not raw:
            return None
        ctype = self.headers.get("Content-Type", "")
        if "x-www-form-urlencoded" in ctype:
            return {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        return json.loads(raw)

    def _route(self, method: str) -> None:
        split = urlsplit(self.path)
        path = re.sub(r"/{2,}", "/", unquote(split.path))
        query = {k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        arm = self.arm
        with arm._lock:
            arm.calls.append((method, path, query))
        try:
            body = self._body()
        except (ValueError, UnicodeDecodeError):
            return self._send(400, _error("InvalidRequestContent", "The request content is not valid JSON."))
        fault = arm._take_fault(method, path)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop:
                self.close_connection = True
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass
                return
            headers = dict(fault.headers)
            if fault.retry_after is not None:
                headers["Retry-After"] = str(int(fault.retry_after) if float(fault.retry_after).is_integer()
                                             else fault.retry_after)
            default = _error("TooManyRequests" if fault.status == 429 else "InternalServerError",
                             "injected fault")
            return self._send(fault.status, fault.body if fault.body is not None else default, headers)
        # identity endpoints need no bearer token
        m = _OPENID.match(path)
        if m and method == "GET":
            return self._send(200, self._openid(m.group(1)))
        m = _TOKEN.match(path)
        if m and method == "POST":
            return self._token(m.group(1), body or {})
        if not self._authorized():
            return self._send(401, _error("AuthenticationFailed", "Authentication failed. The 'Authorization' "
                                                                  "header is missing or not a valid bearer token."))
        if "api-version" not in query:
            return self._send(400, _error("MissingApiVersionParameter",
                                          "The api-version query parameter (?api-version=) is required for all "
                                          "requests."))
        with arm._lock:
            handled = self._arm(method, path, query, body)
        if handled is None:
            self._send(404, _error("ResourceNotFound" if method == "GET" else "NoRegisteredProviderFound",
                                   f"The resource '{path}' was not found."))

    def do_GET(self) -> None:     # noqa: N802
        self._route("GET")

    def do_PATCH(self) -> None:   # noqa: N802
        self._route("PATCH")

    def do_PUT(self) -> None:     # noqa: N802
        self._route("PUT")

    def do_POST(self) -> None:    # noqa: N802
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")

    # -- identity ------------------------------------------------------------------------------

    def _openid(self, tenant: str) -> dict:
        base = f"https://127.0.0.1:{self.arm.port}/{tenant}"
        return {"token_endpoint": f"{base}/oauth2/v2.0/token", "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "issuer": f"{base}/v2.0", "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt"],
                "response_types_supported": ["code", "id_token", "token"], "jwks_uri": f"{base}/discovery/v2.0/keys"}

    def _token(self, tenant: str, form: dict) -> None:
        arm = self.arm
        if tenant != arm.tenant_id:
            return self._send(400, {"error": "invalid_tenant", "error_description": f"AADSTS90002: Tenant '{tenant}' not found."})
        if form.get("grant_type") != "client_credentials":
            return self._send(400, {"error": "unsupported_grant_type",
                                    "error_description": "AADSTS70003: The grant type is not supported."})
        if form.get("client_secret") != arm.client_secret:
            return self._send(401, {"error": "invalid_client",
                                    "error_description": "AADSTS7000215: Invalid client secret provided."})
        token = "tok-" + uuid.uuid4().hex
        with arm._lock:
            arm.tokens.add(token)
        self._send(200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token})

    def _authorized(self) -> bool:
        auth = self.headers.get("Authorization", "")
        return auth.startswith("Bearer ") and auth[7:] in self.arm.tokens

    # -- ARM -----------------------------------------------------------------------------------

    def _activity_log(self, subscription: str, query: dict) -> bool:
        """``activity_logs.list``: the filter's fixed patterns, a start time required."""
        terms = [t for t in re.split(r"\s+and\s+", query.get("$filter", ""), flags=re.IGNORECASE) if t.strip()]
        parsed = [_FILTER_TERM.match(t) for t in terms]
        if not parsed or any(p is None for p in parsed) or \
                not any(p.group(1).lower() == "eventtimestamp" and p.group(2).lower() == "ge" for p in parsed):
            self._send(400, _error("BadRequest", "The $filter is invalid: it needs eventTimestamp ge '<start>' and "
                                                 "only the documented patterns."))
            return True

        def when(v: str) -> float:
            return _dt.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()

        out = []
        for ev in self.arm.activity_log:
            if ev["subscriptionId"].lower() != subscription.lower():
                continue
            t = when(ev["eventTimestamp"])
            ok = True
            for p in parsed:
                key, op, value = p.group(1).lower(), p.group(2).lower(), p.group(3)
                if key == "eventtimestamp":
                    ok &= t >= when(value) if op == "ge" else t <= when(value)
                elif key == "resourceuri":
                    ok &= ev["resourceId"].lower() == value.lower()
                else:
                    ok &= ev["resourceGroupName"].lower() == value.lower()
            if ok:
                out.append(ev)
        out.sort(key=lambda e: e["eventTimestamp"], reverse=True)   # newest first, as the service lists
        select = query.get("$select")
        if select:
            keep = {k.strip() for k in select.split(",")}
            out = [{k: v for k, v in e.items() if k in keep} for e in out]
        self._send(200, {"value": out})
        return True

    def _arm(self, method: str, path: str, query: dict, body: Any) -> Optional[bool]:
        arm = self.arm
        now = arm.clock()
        m = _VMSS.match(path)
        if m:
            ss = arm.scale_sets.get(path.lower())
            if ss is None:
                self._send(404, _error("ResourceNotFound", f"The Resource 'Microsoft.Compute/virtualMachineScaleSets/"
                                                           f"{m.group(3)}' under resource group '{m.group(2)}' was "
                                                           "not found."))
                return True
            if method == "GET":
                self._settle(ss)
                self._send(200, arm.scale_set_json(ss))
                return True
            if method == "PATCH":
                return self._update(ss, body, now)
            return None
        m = _VMSS_DELETE.match(path)
        if m and method == "POST":
            ss = arm.scale_sets.get(m.group(1).lower())
            if ss is None:
                self._send(404, _error("ResourceNotFound", "The scale set was not found."))
                return True
            return self._delete_instances(ss, body, now)
        m = _VMSS_VMS.match(path)
        if m and method == "GET":
            ss = arm.scale_sets.get(m.group(1).lower())
            if ss is None:
                self._send(404, _error("ParentResourceNotFound", "The parent scale set was not found."))
                return True
            if ss.orchestration == "Flexible":
                self._send(400, _error("OperationNotAllowed", "The scale set uses Flexible orchestration: list "
                                                              "its virtual machines with virtualMachines.list."))
                return True
            expand = query.get("$expand")
            self._send(200, {"value": arm.vms_json(ss, now, instance_view=expand == "instanceView")})
            return True
        m = _VMS.match(path)
        if m and method == "GET":
            # Flexible orchestration: the scale set's VMs are virtual machines, listed with
            # $filter='virtualMachineScaleSet/id' eq '<id>'; $expand=instanceView needs the filter
            flt = re.search(r"'virtualMachineScaleSet/id'\s+eq\s+'([^']+)'", query.get("$filter", ""), re.IGNORECASE)
            if query.get("$expand") == "instanceView" and not flt:
                self._send(400, _error("InvalidParameter", "$expand=instanceView requires a valid $filter."))
                return True
            items = [vm for ss in arm.scale_sets.values()
                     if ss.orchestration == "Flexible" and ss.group.lower() == m.group(2).lower()
                     and (not flt or flt.group(1).lower() == ss.id.lower())
                     for vm in arm.vms_json(ss, now, instance_view=query.get("$expand") == "instanceView",
                                            flexible=True)]
            self._send(200, {"value": items})
            return True
        m = _OPERATION.match(path)
        if m and method == "GET":
            op = arm.operations.get(m.group(1))
            if op is None:
                return None
            ss = op["scale_set"]
            self._settle(ss)
            status = "Succeeded" if ss.operation != m.group(1) or ss.provisioning == "Succeeded" else "InProgress"
            self._send(200, {"name": m.group(1), "status": status, "startTime": _iso(op["start"])},
                       {"Retry-After": "0"})
            return True
        m = _METRICS.match(path)
        if m and method == "GET":
            return self._metrics(m.group(1), query)
        m = _ACTIVITY_LOG.match(path)
        if m and method == "GET":
            return self._activity_log(m.group(1), query)
        m = _AUTOSCALE_LIST.match(path)
        if m and method == "GET":
            sub, group = m.group(1).lower(), (m.group(2) or "").lower()
            items = [s for rid, s in arm.autoscale_settings.items()
                     if rid.startswith(f"/subscriptions/{sub}/") and (not group or f"/resourcegroups/{group}/" in rid)]
            self._send(200, {"value": items})
            return True
        m = _AUTOSCALE_ONE.match(path)
        if m:
            key = m.group(1).lower()
            if method == "GET":
                s = arm.autoscale_settings.get(key)
                if s is None:
                    self._send(404, _error("ResourceNotFound", "The autoscale setting was not found."))
                else:
                    self._send(200, s)
                return True
            if method == "PUT":
                props = (body or {}).get("properties") or {}
                if not isinstance(props.get("profiles"), list) or not props.get("profiles"):
                    self._send(400, _error("InvalidRequestContent", "properties.profiles is required."))
                    return True
                refused = _autoscale_refused(props["profiles"])
                if refused is not None:
                    self._send(400, _error(*refused))
                    return True
                name = path.rsplit("/", 1)[1]
                s = {"id": path, "name": name, "type": "Microsoft.Insights/autoscaleSettings",
                     "location": (body or {}).get("location", "westeurope"), "tags": (body or {}).get("tags", {}),
                     "properties": {**props, "name": name}}
                created = key not in arm.autoscale_settings
                arm.autoscale_settings[key] = s
                self._send(201 if created else 200, s)
                return True
        return None

    def _settle(self, ss: _ScaleSet) -> None:
        """An update stays ``Updating`` for ``update_polls`` reads of the scale set or
        its operation, then succeeds."""
        if ss.provisioning == "Updating":
            if ss.polls_left <= 0:
                ss.provisioning = "Succeeded"
            else:
                ss.polls_left -= 1

    def _start_operation(self, ss: _ScaleSet, now: float) -> str:
        """A write accepted on ``ss``: an async operation it is ``Updating`` under (polled
        ``update_polls`` times), one of ARM's remaining writes spent; its
        ``Azure-AsyncOperation`` URL."""
        arm = self.arm
        op = uuid.uuid4().hex
        arm.operations[op] = {"scale_set": ss, "start": now}
        ss.operation = op
        ss.provisioning = "Updating"
        ss.polls_left = arm.update_polls
        arm.remaining_writes = max(0, arm.remaining_writes - 1)
        return (f"https://127.0.0.1:{arm.port}/subscriptions/{ss.subscription}/providers/Microsoft.Compute/"
                f"locations/{ss.location}/operations/{op}?api-version=2024-11-01")

    def _update(self, ss: _ScaleSet, body: Any, now: float) -> bool:
        arm = self.arm
        if not isinstance(body, dict):
            self._send(400, _error("InvalidRequestContent", "The request content was invalid and could not be "
                                                           "deserialized."))
            return True
        if ss.provisioning == "Updating":
            self._send(409, _error("OperationNotAllowed", f"Operation 'Update' is not allowed on VM scale set "
                                                          f"'{ss.name}' since another operation is in progress."))
            return True
        sku = body.get("sku")
        if sku is not None:
            cap = sku.get("capacity") if isinstance(sku, dict) else None
            limit = arm.MAX_CAPACITY_SINGLE_PLACEMENT_GROUP if ss.single_placement_group else arm.MAX_CAPACITY
            if not isinstance(cap, int) or isinstance(cap, bool) or cap < 0 or cap > limit:
                self._send(400, _error("InvalidParameter", f"The value {cap!r} of parameter 'sku.capacity' is out of "
                                                          f"range. The value must be between 0 and {limit}, "
                                                          "inclusive.") | {"target": "sku.capacity"})
                return True
            if sku.get("name") not in (None, ss.sku):
                self._send(409, _error("OperationNotAllowed", "Changing the VM size of a scale set is not "
                                                              "supported by this test server."))
                return True
            self._resize(ss, cap, now)
        async_url = self._start_operation(ss, now)
        self._send(200, arm.scale_set_json(ss), {"Azure-AsyncOperation": async_url, "Retry-After": "0"})
        return True

    def _resize(self, ss: _ScaleSet, cap: int, now: float) -> None:
        self.arm._resize(ss, cap, now)

    def _delete_instances(self, ss: _ScaleSet, body: Any, now: float) -> bool:
        """``virtualMachineScaleSets.deleteInstances``: ``POST …/delete`` with
        ``{"instanceIds": [...]}`` (required: "The virtual machine scale set instance
        ids"), 202 with ``Azure-AsyncOperation``; the capacity drops by the instances
        deleted (https://learn.microsoft.com/rest/api/compute/virtual-machine-scale-sets/delete-instances).
        An id that is not an instance of the scale set is a 400 and deletes nothing; one
        being deleted already is accepted and not counted twice; a second operation while
        one is in progress is a 409 (the error texts are this server's, not ARM's verbatim)."""
        arm = self.arm
        ids = (body or {}).get("instanceIds") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            self._send(400, _error("InvalidParameter", "Required parameter 'instanceIds' is missing (null)."))
            return True
        if ss.provisioning == "Updating":
            self._send(409, _error("OperationNotAllowed", f"Operation 'DeleteInstances' is not allowed on VM scale "
                                                          f"set '{ss.name}' since another operation is in progress."))
            return True
        by_name = {f"{ss.name}_{iid}": iid for iid in ss.vms}
        wanted = [i if i in ss.vms else by_name.get(i) for i in ids]
        if any(w is None for w in wanted):
            bad = [i for i, w in zip(ids, wanted) if w is None]
            self._send(400, _error("InvalidParameter", f"Instance ids {', '.join(bad)} are not instances of "
                                                       f"scale set '{ss.name}'.") | {"target": "instanceIds"})
            return True
        gone = [w for w in dict.fromkeys(wanted) if ss.vms[w]["state"] != "Deleting"]
        for iid in gone:
            del ss.vms[iid]
            arm.deleted.append(f"{ss.name}_{iid}")
        ss.capacity = max(0, ss.capacity - len(gone))
        async_url = self._start_operation(ss, now)
        self._send(202, None, {"Azure-AsyncOperation": async_url, "Location": async_url, "Retry-After": "0"})
        return True

    def _metrics(self, resource: str, query: dict) -> bool:
        arm = self.arm
        names = [n for n in (query.get("metricnames") or "").split(",") if n]
        if not names:
            self._send(400, _error("BadRequest", "metricnames is required"))
            return True
        interval = query.get("interval", "PT1M")
        grain = _duration(interval)
        if grain is None or grain <= 0:
            self._send(400, _error("BadRequest", f"Invalid interval '{interval}': it must be an ISO 8601 duration "
                                                 "such as PT1M."))
            return True
        try:
            start, end = (_parse_time(x) for x in query["timespan"].split("/"))
        except (KeyError, ValueError):
            self._send(400, _error("BadRequest", "timespan must be 'start/end' in ISO 8601"))
            return True
        aggs = [a.strip().lower() for a in (query.get("aggregation") or "average").split(",")]
        bad = [a for a in aggs if a not in _AGGREGATIONS]
        if bad:
            self._send(400, _error("BadRequest", f"Invalid aggregation '{bad[0]}'"))
            return True
        flt = query.get("$filter", "")
        split = re.search(r"vmname\s+eq\s+'([^']*)'", flt, re.IGNORECASE)
        # `top`: "the maximum number of records to retrieve per resource ID in the
        # request. Valid only if filter is specified. Defaults to 10." (metrics/list)
        try:
            top = int(query.get("top", 10))
        except ValueError:
            self._send(400, _error("BadRequest", f"Detected invalid TopN value '{query.get('top')}'"))
            return True
        known = arm.metrics.get(resource.lower())
        if known is None and resource.lower() not in arm.scale_sets:
            self._send(404, _error("ResourceNotFound", f"The resource '{resource}' was not found."))
            return True
        known = known or {}
        value = []
        for name in names:
            series = known.get(name.lower())
            if series is None:
                self._send(400, _error("BadRequest", f"Failed to find metric configuration for provider: "
                                                     f"{_namespace_of(resource)}, resource Id: {resource}, metric: "
                                                     f"{name}. Valid metrics: "
                                                     f"{', '.join(sorted(known)) or 'none'}"))
                return True
            timeseries = []
            if split:
                for vm in sorted(k for k in series if k is not None):
                    if split.group(1) not in ("*", vm):
                        continue
                    if len(timeseries) >= top:
                        break
                    timeseries.append({"metadatavalues": [{"name": {"value": "vmname", "localizedValue": "vmname"},
                                                           "value": vm}],
                                       "data": _bucket(series[vm], start, end, grain, aggs)})
            else:
                points = series.get(None)
                if points is None:   # the resource's own series: all instances together
                    points = sorted(p for k, v in series.items() if k is not None for p in v)
                timeseries.append({"metadatavalues": [], "data": _bucket(points, start, end, grain, aggs)})
            value.append({"id": f"{resource}/providers/Microsoft.Insights/metrics/{name}",
                          "type": "Microsoft.Insights/metrics",
                          "name": {"value": name, "localizedValue": name}, "unit": "Percent",
                          "timeseries": timeseries, "errorCode": "Success"})
        self._send(200, {"cost": 0, "timespan": query["timespan"], "interval": interval, "value": value,
                         "namespace": arm.metric_namespaces.get(resource.lower(), _namespace_of(resource)),
                         "resourceregion": "westeurope"})
        return True


def _bucket(points: list[tuple[float, float]], start: float, end: float, grain: float, aggs: list[str]) -> list[dict]:
    """Azure Monitor's aggregation: one data point per grain from ``start``, stamped
    at the grain's start, holding the chosen aggregations of the samples in it; a
    grain without samples has a point with no values."""
    out = []
    t = start - (start % grain)
    while t < end:
        vals = [v for ts, v in points if t <= ts < t + grain]
        d: dict[str, Any] = {"timeStamp": _iso(t)}
        if vals:
            for a in aggs:
                d[a] = {"average": sum(vals) / len(vals), "minimum": min(vals), "maximum": max(vals),
                        "total": sum(vals), "count": float(len(vals))}[a]
        out.append(d)
        t += grain
    return out
