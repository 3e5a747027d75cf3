"""The provider contract: what a plugin implements so that ``scalebridge run`` can
carry a decision out on a cloud.

A plugin registers a *factory* per provider name::

    from scalebridge.hookspecs import hookimpl

    @hookimpl
    def scalebridge_register_providers(register):
        register("aws", AwsProvider)          # AwsProvider(**options) -> Provider

The controller calls ``factory(**options)`` once per entry of the run
configuration's ``providers:`` (the options are that entry's, less ``type``),
then :meth:`Provider.target` once per target, and from then on only the small
:class:`Target` methods, every sync period:

1. :meth:`Target.observe` — the current (desired) size, the members, and
   whether an operation on the target is still in flight;
2. :meth:`Target.read_metrics` — the samples each :class:`MetricQuery` asks for,
   in the decision protocol's observation shapes (``docs/protocol.md``);
3. :meth:`Target.set_size` — the absolute size (never a delta), idempotent; or, on a
   scale-in whose policy chooses who leaves (``scale_in``), :meth:`Target.delete_members`
   for a provider that declares :attr:`Capability.DELETE_MEMBERS`;
4. now and then, :meth:`Target.managed_by` — the name of another autoscaler
   that already manages the target (the controller then refuses it).

A target in shadow mode (``shadow: true``, ``run --shadow``) is never written: in
place of 3 and 4 the controller asks :meth:`Target.native_decision` — what the
autoscaler that manages it decided (:attr:`Capability.NATIVE_DECISIONS`) — and
compares. A provider whose cloud shows a controller's actions where its users look
(Kubernetes Events) records scalebridge's with :meth:`Target.record_event`
(:attr:`Capability.EVENTS`).

A provider whose API reads many targets in one call overrides
:meth:`Provider.observe_many`: the controller then observes all of that
provider's due targets in one batch at the start of a sync, and each target's
sync uses its own entry of the batch instead of calling :meth:`Target.observe`.

Before the first sync, and whenever a target's policy or settings change, the
controller calls :meth:`Target.use_policy` (a cloud's target ignores it; the
``sim`` provider builds its simulated world from the policy).

Everything a provider raises to the controller is a :class:`ProviderError` of
one of a few kinds (:class:`ErrorKind`); an SDK's own exception never crosses
this boundary. The controller backs off on ``THROTTLED`` and ``TRANSIENT``
(honouring :attr:`ProviderError.retry_after`), reports every kind in the audit
log and the ``scalebridge_provider_errors_total{provider,kind}`` counter, and
keeps every other target syncing.

The arithmetic never lives here: a provider observes and acts, the pure core
(:func:`scalebridge.decide`) decides — as Kubernetes keeps
``replica_calculator.go`` apart from the controller in ``horizontal.go``.
"""
from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Optional, Sequence, Union

from .errors import ScalebridgeError

if TYPE_CHECKING:   # annotations only: the contract imports no model at run time
    from .policy import Policy
    from .protocol import Settings

__all__ = [
    "Capability", "Elector", "ErrorKind", "MetricQuery", "NativeDecision", "Observation", "Pacing", "Provider",
    "ProviderError", "RefError", "ScaleNotice", "SizeChange", "Target", "TargetEnded", "TargetRefused",
    "observes_in_batches", "parse_retry_after",
]


class ErrorKind(str, enum.Enum):
    """What went wrong, in the terms the controller acts on."""

    NOT_FOUND = "not_found"      #: the target (or a metric's resource) does not exist
    FORBIDDEN = "forbidden"      #: credentials lack a permission (HTTP 401/403, AccessDenied)
    THROTTLED = "throttled"      #: rate or quota limit (HTTP 429, Throttling, RESOURCE_EXHAUSTED)
    CONFLICT = "conflict"        #: the object changed underneath (HTTP 409, a stale resourceVersion)
    TRANSIENT = "transient"      #: timeouts, 5xx, dropped connections: worth retrying later
    INVALID = "invalid"          #: the provider rejected the request as invalid (HTTP 400, ValidationError)
    REFUSED = "refused"          #: another autoscaler manages the target


class ProviderError(ScalebridgeError):
    """An error a provider reports to the controller.

    ``retry_after`` is the delay the provider asked for (``Retry-After``), in
    seconds, or None. ``operation`` names the API call (``SetDesiredCapacity``,
    ``instanceGroupManagers.resize``) for the audit log."""

    def __init__(self, kind: ErrorKind | str, message: str, *, retry_after: Optional[float] = None,
                 operation: Optional[str] = None):
        self.kind = ErrorKind(kind)
        self.message = message
        self.retry_after = retry_after
        self.operation = operation
        super().__init__(f"{self.kind.value}: {message}")

    @property
    def retryable(self) -> bool:
        """Worth another try on a later sync with backoff (throttling, transient faults)."""
        return self.kind in (ErrorKind.THROTTLED, ErrorKind.TRANSIENT)


class TargetRefused(ProviderError):
    """The target is managed by another autoscaler (``manager`` names it: an HPA,
    a MIG autoscaler not ``OFF``, an enabled Azure autoscale setting, an ASG's
    scaling policies). Actuating it as well would fight that autoscaler."""

    def __init__(self, manager: str, message: Optional[str] = None):
        self.manager = manager
        super().__init__(ErrorKind.REFUSED, message or f"already managed by {manager}")


class TargetEnded(ProviderError):
    """The target's world has ended (a simulated load past its last tick): the
    controller stops syncing it with one line, and it holds its size. ``ended`` says
    when and why."""

    def __init__(self, ended: str):
        self.ended = ended
        super().__init__(ErrorKind.NOT_FOUND, ended)


class RefError(ScalebridgeError):
    """A target's ``ref`` (or a provider's options) is not what the provider needs.
    ``key`` names the offending key (``ref.zone``); the message says what would be
    valid. The run configuration reports it with file, line and key (exit 2)."""

    def __init__(self, key: str, message: str):
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}")


class Capability(str, enum.Enum):
    """Optional things a provider can do, declared rather than failing at call time."""

    METRICS = "metrics"                  #: read_metrics works (else every metric must come from elsewhere)
    TRANSLATE = "translate"              #: renders a policy as the cloud's native autoscaler
    DELETE_MEMBERS = "delete_members"    #: can remove chosen members on scale-in
    VIRTUAL_CLOCK = "virtual_clock"      #: runs on the controller's virtual clock (``--clock virtual``)
    HISTORY = "history"                  #: read_history works: its monitoring keeps metric history (``backtest``)
    #: native_decision works: it reads what the autoscaler managing a target decided (shadow mode)
    NATIVE_DECISIONS = "native_decisions"
    #: record_event works: scalebridge's scale actions are recorded where the cloud shows a
    #: controller's (Kubernetes Events on the workload)
    EVENTS = "events"


@dataclass(frozen=True)
class Pacing:
    """How fast the controller may call a provider instance: token buckets refilled
    at ``*_per_second`` up to ``*_burst``. Defaults are each provider's documented
    limits (client-go: 5 QPS, burst 10; an Azure scale set: about 4 capacity
    updates a minute)."""

    writes_per_second: float = 1.0
    write_burst: int = 5
    reads_per_second: float = 20.0
    read_burst: int = 40


@dataclass
class Observation:
    """What a provider saw of one target, in the decision protocol's terms.

    ``current_replicas`` is the target's *desired* size as the provider holds it
    (Deployment ``spec.replicas``, MIG ``targetSize``, VMSS ``sku.capacity``, ASG
    ``DesiredCapacity``); ``status_replicas`` the members actually there;
    ``members`` the protocol's member objects (``name``, ``phase``, ``ready``,
    ``start_time``, ``ready_transition_time``, ``deleting``, ``requests``,
    ``weight``). ``in_flight`` describes an operation still running on the target
    (a GCE resize not DONE or a MIG not stable, an ASG scaling activity, a VMSS
    update not ``Succeeded``), or is None when it is settled: the controller never
    stacks a write on it. ``rollout`` is a protocol ``Rollout`` (``updated_replicas``,
    ``reason``) while a new version replaces the members — a Deployment's rolling
    update, a MIG's, an ASG's instance refresh, a scale set's rolling upgrade — which a
    provider reports as in flight only where a resize during it is not safe (each
    provider's page says which). ``min_size``/``max_size`` are the
    provider's own bounds where it has them (ASG MinSize/MaxSize). ``forecast`` is a
    protocol ``CapacityForecast`` dict a provider may supply (the ``sim`` provider's
    planner). ``details`` is free-form, for ``scalebridge observe``. ``paused`` and
    ``paused_replicas``: a pause the provider found on the target (below)."""

    current_replicas: int
    status_replicas: Optional[float] = None
    members: Optional[list[dict]] = None
    in_flight: Optional[str] = None
    min_size: Optional[int] = None
    max_size: Optional[int] = None
    forecast: Optional[dict] = None
    details: dict[str, Any] = field(default_factory=dict)
    #: the target is paused where it lives (a Kubernetes workload's
    #: ``autoscaling.keda.sh/paused`` or ``scalebridge.io/paused`` annotation): who
    #: paused it. The controller then decides nothing and writes nothing but
    #: ``paused_replicas``, when given, once the size differs
    paused: Optional[str] = None
    paused_replicas: Optional[int] = None
    #: protocol settings the provider knows of the target's autoscaler (the kubernetes
    #: provider: ``kubernetes_version`` from the API server's ``/version``); each fills
    #: a setting the target's configuration leaves unset
    settings: Optional[dict[str, Any]] = None
    #: a rollout in progress (a protocol ``Rollout``), passed to the decision as
    #: ``observations.rollout``; None: none the provider knows of
    rollout: Optional[Any] = None


@dataclass(frozen=True)
class MetricQuery:
    """One observation the decision needs, as the controller derives it from the
    policy (``scalebridge.controller.queries``).

    ``name`` is the key of ``observations.metrics``; ``type`` the policy metric's
    type (``resource``, ``container_resource``, ``pods``, ``object``, ``external``,
    ``load_balancing``) or ``rule`` for a threshold rule's metric; ``spec`` the
    policy metric or rule as a dict (target, selector, container, statistic …);
    ``window_seconds`` how far back samples are needed and ``grain_seconds`` the
    series resolution (rules, AWS alarms); ``shapes`` which observation fields the
    semantics reads (``members``, ``value``, ``values``, ``series``,
    ``member_series``); ``source`` the target's ``metrics.<name>.source`` from the
    run configuration, in the provider's own terms, or None for the provider's
    default source (``cpu``)."""

    name: str
    type: str
    spec: Mapping[str, Any]
    window_seconds: float
    grain_seconds: float = 60.0
    shapes: frozenset[str] = frozenset({"members"})
    source: Optional[Mapping[str, Any]] = None


@dataclass
class SizeChange:
    """What :meth:`Target.set_size` did: the size now asked of the provider
    (``size``; may differ from the one requested when the provider clamped it to its
    own bounds, and ``note`` says so), whether the change is still ``in_flight``,
    and the provider's ``operation`` id where it has one."""

    size: int
    in_flight: bool = False
    operation: Optional[str] = None
    note: Optional[str] = None


@dataclass
class NativeDecision:
    """What the autoscaler that manages a target (the cloud's own: an HPA, a GCE
    autoscaler, an Azure autoscale setting, an ASG's scaling policies) decided, as
    its cloud records it — what shadow mode compares scalebridge's decision with.

    ``desired`` is the size it decided at its latest evaluation (HPA
    ``status.desiredReplicas``, GCE ``recommendedSize``, the ASG's
    ``DesiredCapacity`` its last scaling activity set, the scale set's capacity its
    last autoscale action set), or None when it has not decided. ``current`` is the
    size that decision started from, where the source says so (HPA
    ``status.currentReplicas``, an activity's "from 2 to 3"), and ``time`` when it
    was made, where the source says (HPA ``lastScaleTime`` for a rescale, an
    activity's start, an Activity Log event's timestamp); both None when the source
    does not say. ``reason`` is the autoscaler's own words (a ``SuccessfulRescale``
    message, an activity's ``Cause``, ``statusDetails``). ``stage`` names the first of
    its stages that the autoscaler itself says moved its size, in the words of the
    scalebridge semantics' trace (``stabilization``, ``limits``, ``bounds``;
    ``metrics`` when none did: its size is its metrics' proposal), where its status
    tells (HPA conditions ``ScaleDownStabilized``, ``ScalingLimited``), else None. ``metrics`` are the metric values it reports having read, by the
    policy metric's name, in the units of the decision's metric entries (a
    utilization target: percent; else the value); empty when it reports none.
    ``actions`` are its scale actions since the time the controller asked about
    (``{"time", "from", "to", "reason"}``, oldest first). ``error`` is the
    autoscaler's own failure to decide (HPA ``ScalingActive=False``, a GCE
    autoscaler in ``ERROR``), else None. ``autoscaler`` names it; ``source`` says
    what was read."""

    autoscaler: str
    desired: Optional[int]
    current: Optional[int] = None
    time: Optional[float] = None
    reason: Optional[str] = None
    stage: Optional[str] = None
    metrics: dict[str, float] = field(default_factory=dict)
    actions: list[dict] = field(default_factory=list)
    error: Optional[str] = None
    source: str = ""


@dataclass(frozen=True)
class ScaleNotice:
    """A scale action of scalebridge's, for :meth:`Target.record_event`: ``kind`` is
    ``rescaled`` (a size written), ``failed`` (a write that failed, ``error`` says
    why) or ``shadow`` (a size decided in shadow mode and not written; ``native``
    is the size the target's own autoscaler holds, ``stage`` where scalebridge
    departs from it). ``current`` and ``desired`` are the sizes; ``reason`` the
    decision's reason (``DesiredWithinRange``, ``TooManyReplicas``…) and ``cause``
    its scale event's cause (``metric``, ``rule``, ``boundary``, ``schedule``,
    ``forecast``, ``default``); ``signal`` the metric or rule whose proposal
    decided (the highest, the first of equals, as the HPA names its
    ``rescaleMetric``) and ``signal_type`` its policy type (``resource``,
    ``pods``… or ``rule``), None when none did; ``time`` the decision's."""

    kind: str
    current: int
    desired: int
    reason: str
    time: float
    cause: Optional[str] = None
    signal: Optional[str] = None
    signal_type: Optional[str] = None
    error: Optional[str] = None
    native: Optional[int] = None
    stage: Optional[str] = None


class Target(ABC):
    """One scalable thing (a Deployment, a MIG, a scale set, an ASG) of a provider.

    Methods raise :class:`ProviderError` (never an SDK exception). ``now`` is the
    controller's clock (seconds since the epoch): metric windows end there, and a
    provider on a virtual clock advances its world to it."""

    #: a short human name for logs and ``observe`` (``shop/Deployment/web``)
    name: str = "target"
    #: how far before ``now`` the provider's metric windows end (CloudWatch and
    #: Cloud Monitoring publish with a delay): the decision's
    #: ``settings.metric_delay_seconds`` unless the run configuration sets it
    metric_delay_seconds: float = 0.0
    #: where a target on a virtual clock starts (the ``sim`` provider's trace start),
    #: or None: under ``--clock virtual`` the controller starts at the earliest one
    start_time: Optional[float] = None

    @abstractmethod
    def observe(self, now: float) -> Observation:
        """Current size, members, and any operation in flight."""

    def read_metrics(self, now: float, observation: Observation,
                     queries: list[MetricQuery]) -> dict[str, dict]:
        """The protocol's ``observations.metrics``: query name → observation dict
        (``members``, ``timestamp``, ``window``, ``value``, ``values``, ``series``,
        ``member_series``). A metric that could not be read is left out (the
        semantics then reports it missing, with its provider's damping), or raises
        for a failure of the whole call. Missing datapoints are missing, never 0.
        The default reads nothing: a provider with metrics declares
        :attr:`Capability.METRICS`."""
        return {}

    @abstractmethod
    def set_size(self, size: int) -> SizeChange:
        """Set the absolute desired size (idempotent: setting the current size again
        is harmless, and a retry after a timeout cannot double a change)."""

    def delete_members(self, members: list[str], size: int) -> SizeChange:
        """Optional (:attr:`Capability.DELETE_MEMBERS`): a scale-in that removes the
        members named (as :meth:`observe` named them), in that order of preference, and
        leaves the target's desired size at ``size`` — with the cloud's own call (a pod's
        deletion cost and the new replicas, ``TerminateInstanceInAutoScalingGroup`` with a
        decrement, ``instanceGroupManagers.deleteInstances``, ``virtualMachineScaleSets
        .deleteInstances``). ``size`` may be below the current size less the members
        named (a partial selection): the provider's own order removes the rest. It
        removes at most the current size less ``size`` members, skips a named member
        that is already gone or leaving, and is idempotent: a retry after a lost reply,
        or a restart finishing an interrupted scale-in, removes no one twice. The
        controller persists its intent (the size and the members) before the call."""
        raise ProviderError(ErrorKind.INVALID, f"{self.name}: this provider cannot remove chosen members "
                            "(it does not declare Capability.DELETE_MEMBERS): set the size instead")

    def read_history(self, query: MetricQuery, start: float, end: float, step: float) -> dict:
        """Optional (:attr:`Capability.HISTORY`), for ``scalebridge backtest``: the
        history of ``query``'s metric from the provider's own monitoring over
        ``[start, end)``, at ``step`` seconds or the nearest resolution it keeps
        (CloudWatch's 60 s, 5 min, 1 h by age). Returns ``{"series": [[t, v], …]}``
        (the group's) or ``{"member_series": {member: [[t, v], …]}}`` (per member),
        each point stamped at its period's *start* and holding until the next, and
        ``"resolution"`` (seconds). Raises :class:`ProviderError`. The default keeps
        no history."""
        raise ProviderError(ErrorKind.INVALID, f"the provider's own monitoring keeps no history of {query.name!r}: "
                            "read the metric from a metric source (metrics.NAME.source: {metric_source: …, query: …})")

    def size_history(self, start: float, end: float, step: float) -> Optional[dict]:
        """Optional, for ``scalebridge backtest``: the size the target had over
        ``[start, end)`` where the provider records it — ``{"desired": [[t, n], …],
        "serving": [[t, n], …] or None, "resolution": seconds, "source": "…"}``,
        points stamped at their period's start — or None where it records none
        (the default)."""
        return None

    def size_history_query(self) -> Optional[str]:
        """Optional: a query a metric source answers with the size this target had
        (kube-state-metrics' ``kube_deployment_spec_replicas{…}`` for a Deployment),
        for a provider whose own API keeps no history of it. None by default."""
        return None

    def managed_by(self) -> Optional[str]:
        """The name of another autoscaler managing this target, or None. The
        controller asks on the first sync and every few minutes after."""
        return None

    def native_decision(self, now: float, since: Optional[float]) -> Optional[NativeDecision]:
        """Optional (:attr:`Capability.NATIVE_DECISIONS`), for shadow mode: what the
        autoscaler that manages this target decided, read from where the cloud
        records it (:class:`NativeDecision`), with its scale actions after ``since``
        (the controller's previous sync, None on the first); None when no autoscaler
        manages the target. Reads only, never writes. Raises :class:`ProviderError`.
        The default reads nothing: the controller then compares with the size the
        target holds."""
        return None

    def record_event(self, notice: ScaleNotice) -> None:
        """Optional (:attr:`Capability.EVENTS`): record one of scalebridge's scale
        actions where the cloud shows a controller's (a Kubernetes ``events.k8s.io/v1``
        Event on the workload, rate-limited and aggregated as client-go's recorder
        does). Best effort: the controller logs a :class:`ProviderError` and goes
        on; a notice is never a reason to fail a sync. Default: nothing."""

    def use_policy(self, policy: "Policy", settings: "Settings") -> None:
        """The policy (validated) and the protocol settings this target is decided
        with, as its :class:`~scalebridge.engine.Decider` holds them. The controller
        calls it once before the target's first :meth:`observe`, and again when the
        policy or the settings change. Default: nothing — a cloud's target does not
        depend on the policy. A simulated target (``sim``) builds its world from
        them, as ``scalebridge simulate`` does: the size the policy holds for the
        first load, the metrics the policy names, its predictive planner."""

    def use_clock(self, virtual: bool) -> None:
        """The kind of clock the controller runs on, once before the first
        :meth:`observe`. A target with a :attr:`start_time` of its own (a simulated
        load) plays from there on the virtual clock, and from its first observe on
        the real one. Default: nothing."""

    def snapshot(self) -> Optional[dict]:
        """What this target keeps in the controller's process and must survive a
        restart, as a JSON object (the ``sim`` provider's fleet and load position),
        persisted with the target's decision state after every sync; None (the
        default) for a target whose world is the cloud's."""
        return None

    def restore(self, snapshot: dict) -> None:
        """The :meth:`snapshot` a previous controller persisted, given back once at
        start, before the first :meth:`observe` (default: nothing)."""

    def close(self) -> None:
        """Release what this target holds (default: nothing)."""


class Provider(ABC):
    """A cloud (or a simulated one), made from the run configuration's options.

    Subclasses set :attr:`name` (the registered provider name), :attr:`semantics`
    (the provider's own semantics: ``gce`` for ``gce``…), :attr:`capabilities`,
    :attr:`pacing`, and :attr:`ref_keys` (the ``ref`` keys a target must give,
    for error messages), and implement :meth:`target`. The factory registered
    through ``scalebridge_register_providers`` is usually the class itself."""

    name: ClassVar[str] = "provider"
    semantics: ClassVar[str] = "scalebridge"
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    pacing: Pacing = Pacing()
    #: ref keys a target must give (``{"auto_scaling_group"}``), for ``validate``
    ref_keys: ClassVar[frozenset[str]] = frozenset()
    #: options that are file paths (``kubeconfig``, ``ca_bundle``): the controller reads a
    #: relative one from the run configuration's directory, as every relative path there is
    path_options: ClassVar[frozenset[str]] = frozenset()
    #: ``ref`` keys that are file paths (the ``sim`` provider's ``trace``), read the same way
    ref_path_keys: ClassVar[frozenset[str]] = frozenset()
    #: options that hold secrets, as dotted paths (``credential.client_secret``): each also
    #: takes ``<option>_file`` (the file's content, a Kubernetes Secret mounted as a file),
    #: must be a string, and is never shown in a message, log or audit record
    #: (:mod:`scalebridge.secrets`)
    secret_options: ClassVar[frozenset[str]] = frozenset()
    #: whether its calls wait on something outside the process (a cloud API): the
    #: controller syncs such a provider's targets on its worker pool (``workers``), so
    #: that one slow call does not hold the others up. An in-process provider (the
    #: ``sim`` provider, the test suite's fake) sets False: its targets are synced on
    #: the controller's own thread, where a pool would add thread switches and no overlap
    blocking: ClassVar[bool] = True

    def observe_many(self, batch: Sequence[tuple[Target, Sequence[MetricQuery]]],
                     now: float) -> list[Union[Observation, ProviderError, None]]:
        """Observe many of this provider's targets at once, for one sync: ``batch``
        pairs each target with the metric queries its sync will ask the provider
        for (a provider may read those ahead in the same batched calls and answer
        them from :meth:`Target.read_metrics`). Returns one entry per target, in
        order: its :class:`Observation`, the :class:`ProviderError` that target
        alone failed with, or None (the target observes itself, on its own) — one
        target's failure never fails its batch-mates, and a batched call that fails
        leaves its targets to their per-target reads (each failure then attributed
        to its own target).

        The default observes each target on its own (:meth:`Target.observe`), so a
        provider that does not batch keeps working unchanged; the controller then
        keeps calling :meth:`Target.observe` on its worker pool instead
        (:func:`observes_in_batches`). A provider that overrides it groups the
        reads into as few calls as its API allows (a Kubernetes namespace's
        workloads and pods in one list each, Auto Scaling groups by pages of names)."""
        out: list[Union[Observation, ProviderError, None]] = []
        for target, _queries in batch:
            try:
                out.append(target.observe(now))
            except ProviderError as e:
                out.append(e)
        return out

    @abstractmethod
    def target(self, ref: Mapping[str, Any]) -> Target:
        """A handle on the target ``ref`` names. Checks the ref's shape only
        (raises :class:`RefError` naming the key); it does not call the cloud."""

    def check_metric_source(self, name: str, source: Optional[Mapping[str, Any]]) -> None:
        """Check a target's ``metrics.<name>.source`` (in the provider's own terms)
        without calling the cloud, raising :class:`RefError` naming the key
        (``metrics.queue_depth.source.statistc``) — so that ``validate`` and a
        start-up report a bad source with its file and line (exit 2) instead of the
        first sync failing. Default: every source is accepted."""

    def state_store(self, **options: Any) -> Any:
        """Optional: a store of decision state this provider keeps (a
        :class:`scalebridge.controller.store.StateStore`), for a run configuration's
        ``state: {provider: NAME, ...options}``; None (the default) when it has none.
        Raise :class:`RefError` naming an option that is not valid."""
        return None

    def elector(self, namespace: str, name: str, identity: str, clock: Any) -> Optional["Elector"]:
        """Optional: a leader election on this provider (``--leader-elect``), on the
        lease ``namespace``/``name``, holding as ``identity``; ``clock`` has ``now()``
        (seconds) and ``sleep(seconds)``. None (the default) when it has none."""
        return None

    def close(self) -> None:
        """Release the SDK session (default: nothing)."""


class Elector:
    """A leader election (``--leader-elect``): only the holder writes targets; the
    other replicas observe and decide. Kubernetes implements it on a
    ``coordination.k8s.io/v1`` Lease, as kube-controller-manager does
    (client-go ``tools/leaderelection``)."""

    def start(self) -> None:
        """Begin campaigning (default: nothing)."""

    def is_leader(self) -> bool:
        """Whether this replica holds the lease now (checked before every write)."""
        return True

    def stop(self) -> None:
        """Stop campaigning and release the lease if held (default: nothing)."""


def observes_in_batches(provider: Any) -> bool:
    """Whether ``provider`` overrides :meth:`Provider.observe_many` (the controller
    then observes its due targets in one batch per sync, before deciding them) and
    has not turned it off (an instance's ``batched = False``: one target at a time,
    as ``benchmarks/fleet.py --before`` measures)."""
    method = getattr(type(provider), "observe_many", None)
    return method is not None and method is not Provider.observe_many and getattr(provider, "batched", True)


def provider_semantics(provider: Any) -> str:
    """The provider's own semantics name (``scalebridge`` when it declares none)."""
    return getattr(provider, "semantics", None) or "scalebridge"


class MissingExtra(ScalebridgeError):
    """A provider's SDK is not installed: the message names the extra to install."""


def require(module: str, extra: str, provider: str) -> Any:
    """Import an SDK module for ``provider``, or say which extra installs it::

        boto3 = require("boto3", "aws", "aws")
        # MissingExtra: the aws provider needs boto3: pip install 'scalebridge[aws]'
    """
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtra(f"the {provider} provider needs {module.split('.')[0]} ({e}): "
                           f"pip install 'scalebridge[{extra}]'") from None


def parse_retry_after(value: Any, now: Optional[float] = None) -> Optional[float]:
    """A ``Retry-After`` header's delay in seconds, as the server sent it: either
    delay-seconds (``120``; a fraction is accepted) or an HTTP-date (``Wed, 21 Oct
    2026 07:28:00 GMT``, and the obsolete RFC 850 and asctime forms), counted from
    ``now`` (default: the wall clock) — RFC 9110, section 10.2.3
    (https://www.rfc-editor.org/rfc/rfc9110#field.retry-after). A date in the past
    is 0; a value that is neither is None (no hint). Bounding the delay is the
    controller's business (a provider's ``max_retry_after_seconds``), not the
    parser's: what the server asked for is kept for the audit."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1", "replace")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
        return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
    text = str(value).strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
    from email.utils import parsedate_to_datetime
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:   # HTTP dates are GMT
        import datetime as _dt
        when = when.replace(tzinfo=_dt.timezone.utc)
    import time as _time
    return max(0.0, when.timestamp() - (_time.time() if now is None else now))
