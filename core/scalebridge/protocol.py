"""The decision request of the protocol (docs/protocol.md) as the types the core computes with.

Field names are the protocol's and fixed. Extensions (the protocol allows them, never
renames): ``Member.count`` — one entry standing for ``count`` identical members,
which lets a simulator describe a fleet of hundreds in a few entries; ``Member.standby`` — a
member kept ready outside the target's capacity (a GCE MIG's suspended or stopped VM in its
standby pool, an AWS warm-pool or Standby instance, an Azure standby-pool VM), which no
semantics counts (:func:`serving`).

What a request holds many of — members, metric observations, the observations
themselves, a capacity forecast — are plain slotted dataclasses: validated once at the
edge (:func:`parse_observations`; a request's as part of it), and made directly, with no
validation, by code that builds them from values it checked (the simulator's world, a
provider plugin). The settings and the request are validated whenever they are made, as
the policy is (:func:`scalebridge.policy.model`).
"""
from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, TypeAdapter, ValidationError, \
    model_validator
from typing_extensions import Required, TypedDict

from .policy import Bool, FiniteFloat, Int, ModelAPI, NonNegDuration, Number, Policy, Quantity, _Model, drop_nulls, model
from .units import parse_duration

MIN_TIME = -62135596800
"""0001-01-01T00:00:00Z in seconds since the Unix epoch."""
MAX_TIME = 253402300799
"""9999-12-31T23:59:59Z: the last second ``datetime`` (and so every schedule and profile) can place."""
EpochSeconds = Annotated[float, Strict(), Field(allow_inf_nan=False, ge=MIN_TIME, le=MAX_TIME)]
"""Seconds since the Unix epoch, within years 1 to 9999."""
Time = Optional[EpochSeconds]
"""Seconds since the Unix epoch; null is the distant past."""


BULK = ConfigDict(extra="forbid")
"""The validation of the types a request holds many of: unknown keys are errors. They
have no per-instance Python validator: their null-valued keys are dropped by
:func:`without_nulls`, which validation runs only when a first attempt fails, so a
well-formed request pays nothing for it."""


def bulk(cls: type) -> type:
    """A type a request holds many of: a plain slotted dataclass (``Member(name="web-0")``
    makes one, unvalidated), validated by pydantic where it comes from outside."""
    cls.__pydantic_config__ = BULK
    out = dataclasses.dataclass(slots=True, kw_only=True)(cls)
    out.model_fields = {f.name: f for f in dataclasses.fields(out)}
    return out


@model
class Settings(_Model):
    """Controller-level knobs; ``None`` means "the semantics' provider default"."""
    tolerance: Optional[Annotated[Number, Field(ge=0)]] = None
    cpu_initialization_period_seconds: Optional[NonNegDuration] = None
    initial_readiness_delay_seconds: Optional[NonNegDuration] = None
    downscale_stabilization_seconds: Optional[NonNegDuration] = None
    default_cooldown_seconds: Optional[NonNegDuration] = None
    # AWS: "To remove a value that you previously set ... specify -1" (CreateAutoScalingGroup,
    # DefaultInstanceWarmup): -1 is the same as unset
    default_instance_warmup_seconds: Annotated[Optional[NonNegDuration],
                                               BeforeValidator(lambda v: None if v == -1 else v)] = None
    percent_rounding: Optional[Literal["ceil", "floor", "nearest"]] = None
    #: None: 0, unless the caller sets a delay (the simulator's metric lag, a provider's)
    metric_delay_seconds: Optional[NonNegDuration] = None
    #: extension: the Kubernetes release the kubernetes semantics reproduces ("1.37"; None: the
    #: newest it reproduces); the kubernetes provider fills it from the API server's /version
    kubernetes_version: Optional[Annotated[str, Strict(), Field(min_length=1, max_length=64)]] = None
    #: extension: kube-controller-manager's --feature-gates the kubernetes semantics reads
    #: (HPAScaleToZero, HPAConfigurableTolerance); a gate left out has its release's default
    feature_gates: Optional[dict[Annotated[str, Strict()], Bool]] = None


@bulk
class Member(ModelAPI):
    name: str
    phase: Literal["Running", "Pending", "Failed", "Succeeded"] = "Running"
    ready: Optional[Bool] = None
    ready_transition_time: Time = None
    start_time: Time = None
    deleting: Bool = False
    requests: Optional[dict[str, Optional[Quantity]]] = None
    # extension: the provider's own words for a resource whose request is missing on this
    # member (null or absent in ``requests``), e.g. the HPA's "missing request for cpu in
    # container app of Pod web-0"; the metric's error quotes it (docs/protocol.md)
    request_errors: Optional[dict[str, str]] = None
    weight: Annotated[Number, Field(gt=0)] = 1
    count: Annotated[Int, Field(ge=1, description="extension: this entry stands for `count` identical members")] = 1
    standby: Annotated[Bool, Field(description="extension: kept ready outside the target's capacity (a standby "
                                               "pool, a warm pool): neither capacity nor a failure; no semantics "
                                               "counts it")] = False


Point = tuple[EpochSeconds, Optional[FiniteFloat]]


@bulk
class MetricObservation(ModelAPI):
    members: Optional[dict[str, Optional[Quantity]]] = None
    timestamp: Time = None
    window: Optional[NonNegDuration] = None
    # extensions: each member's own sample time and window where the metrics API gives
    # them per member (metrics.k8s.io's PodMetrics each carry a timestamp and a window);
    # a member without one has ``timestamp``/``window``
    member_timestamps: Optional[dict[str, EpochSeconds]] = None
    member_windows: Optional[dict[str, NonNegDuration]] = None
    value: Optional[Quantity] = None
    values: Optional[list[Quantity]] = None
    series: Optional[list[Point]] = None
    member_series: Optional[dict[str, list[Point]]] = None
    forecast: Optional[list[Point]] = None
    # extension: the metric could not be read (the provider's or metric source's error, as
    # the controller got it); the metric is a failed one in this decision whatever else the
    # observation holds (docs/protocol.md, "A metric that failed to be read")
    error: Optional[str] = None


@bulk
class CapacityForecast(ModelAPI):
    replicas: Annotated[Int, Field(ge=0)]
    source: Optional[str] = None
    # extensions: the forecaster's own reason when it fell back, reported in the response;
    # hourly capacities [[hour_start, replicas], …] (AWS predictive scaling's forecast), from
    # which aws takes the hour that starts within scheduling_buffer_seconds of now
    reason: Optional[str] = None
    series: Optional[list[Point]] = None


@bulk
class Observations(ModelAPI):
    status_replicas: Optional[Annotated[Number, Field(ge=0)]] = None
    members: Optional[list[Member]] = None
    metrics: dict[str, MetricObservation] = dataclasses.field(default_factory=dict)
    forecast: Optional[CapacityForecast] = None
    proposal: Optional[Annotated[Int, Field(ge=0)]] = None


OBSERVATIONS = TypeAdapter(Observations)
MEMBER = TypeAdapter(Member)
METRIC_OBSERVATION = TypeAdapter(MetricObservation)


def without_nulls(x: Any) -> Any:
    """``x`` with every null-valued object key removed, at any depth (``x`` itself when it
    has none): the protocol's "`null` and a missing key mean the same thing", and a metric
    observed as null is a metric not observed. List items are kept: a null there is a
    value (a series gap)."""
    if type(x) is dict:
        out = {k: without_nulls(v) for k, v in x.items() if v is not None}
        if len(out) == len(x) and all(out[k] is x[k] for k in out):
            return x
        return out
    if type(x) is list:
        out = [without_nulls(v) for v in x]
        if all(a is b for a, b in zip(out, x)):
            return x
        return out
    return x


def _observations_model_validate(cls: type, data: Any) -> Observations:
    return parse_observations(data)


def parse_observations(data: Any) -> Observations:
    """The protocol's ``observations`` (a dict) validated into :class:`Observations`: the
    edge where observations from outside the process enter the core (raises pydantic's
    ``ValidationError``)."""
    try:
        return OBSERVATIONS.validate_python(data)
    except ValidationError:
        cleaned = without_nulls(data)
        if cleaned is data:
            raise
        return OBSERVATIONS.validate_python(cleaned)


Observations.model_validate = classmethod(_observations_model_validate)   # a null is a missing key there too


def serving(members: Optional[list]) -> tuple[Optional[list], int]:
    """``members`` without the standby ones, and how many standby members (with
    ``count``) were left out: ``members`` itself when none is standby.

    A standby member is outside the target's capacity: GCE's ``targetSize`` is "the
    target number of running instances" and a standby pool's suspended and stopped VMs
    are counted by ``targetSuspendedSize`` and ``targetStoppedSize`` instead
    (https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers);
    AWS warm-pool instances "count toward the desired capacity" only "as instances
    leave the warm pool" (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-warm-pools.html);
    Azure's standby pool VMs join the scale set when it scales out
    (https://learn.microsoft.com/azure/virtual-machine-scale-sets/standby-pools-overview). So no
    semantics counts one: not in the current size, not starting, not failed, and its
    samples are no sample of the group."""
    if not members:
        return members, 0
    for m in members:
        if m.standby:
            break
    else:
        return members, 0
    kept = []
    left = 0
    for m in members:
        if m.standby:
            left += m.count
        else:
            kept.append(m)
    return kept, left


def member_name(m: Any) -> str:
    """A member's name, whether a provider gave it as the core's :class:`Member` or as the
    protocol's dict."""
    return m["name"] if type(m) is dict else m.name


def as_json(x: Any, exclude_none: bool = False) -> Any:
    """A member, a metric observation or a forecast as the protocol's JSON object, whether
    it is the core's own type or already that dict (what a provider plugin may return)."""
    if isinstance(x, ModelAPI):
        return x.model_dump(mode="json", exclude_none=exclude_none)
    return x


class TimedReplicas(TypedDict):
    """``{"time", "replicas"}`` (a TypedDict: history lists are long, models cost time)."""
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    time: EpochSeconds
    replicas: Int


class ScaleEvent(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    time: Required[EpochSeconds]
    change: Required[Int]
    cause: Optional[str]


class LastScale(BaseModel):
    """The state's ``last_scale`` (read once, into :class:`~scalebridge.state.DecisionState`):
    namespaced keys a semantics adds are kept."""
    model_config = ConfigDict(extra="allow")
    time: EpochSeconds
    direction: Optional[Literal["Increase", "Decrease"]] = None
    cause: Optional[str] = None
    completed_at: Optional[EpochSeconds] = None
    # a duration: seconds, or "5m", "PT5M" … (docs/protocol.md, conventions)
    cooldown_seconds: Annotated[Optional[Number],
                                BeforeValidator(lambda v: parse_duration(v) if isinstance(v, str) else v)] = None

    @model_validator(mode="before")
    @classmethod
    def _null_is_missing(cls, data: Any) -> Any:
        return drop_nulls(data)


class StateModel(BaseModel):
    """The previous response's state. Semantics may add namespaced keys (kept)."""
    model_config = ConfigDict(extra="allow")
    recommendations: Optional[list[TimedReplicas]] = None
    sizes: Optional[list[TimedReplicas]] = None
    scale_up_events: Optional[list[ScaleEvent]] = None
    scale_down_events: Optional[list[ScaleEvent]] = None
    last_scale: Optional[LastScale] = None

    @model_validator(mode="before")
    @classmethod
    def _null_is_missing(cls, data: Any) -> Any:
        return drop_nulls(data)


@model
class Request(_Model):
    semantics: Optional[str] = None
    now: EpochSeconds
    current_replicas: Annotated[Int, Field(ge=0)]
    policy: Policy = Field(default_factory=Policy)
    settings: Settings = Field(default_factory=Settings)
    observations: Observations = Field(default_factory=Observations)
    state: Optional[StateModel] = None


def parse_settings(data: Any) -> Settings:
    """The protocol's ``settings`` (a dict, or None for every default) as :class:`Settings`."""
    return data if isinstance(data, Settings) else SETTINGS.validate_python(data or {})


SETTINGS = TypeAdapter(Settings)


MAX_DEPTH = 200
"""The deepest nesting of objects and arrays a request (or a policy) may have;
the JSON parser's own limit (pydantic-core); the protocol's shapes need fewer than ten."""


def check_json_value(value: Any, root: tuple = ()) -> None:
    """Refuse, before any model sees it, a value nested deeper than :data:`MAX_DEPTH`
    levels or holding a string that is not Unicode text (a lone surrogate such as
    ``"\\udfff"``, which JSON's ``\\u`` escapes can write and no UTF-8 output can carry).
    Iterative: no depth costs a recursion."""
    from .errors import RequestError
    stack: list[tuple[Any, tuple]] = [(value, root)]
    pop, push = stack.pop, stack.append
    while stack:
        x, path = pop()
        t = type(x)
        if t is dict:
            if len(path) - len(root) >= MAX_DEPTH:
                raise RequestError(path, f"nested deeper than {MAX_DEPTH} levels of objects and arrays")
            for k, v in x.items():
                if type(k) is str and not k.isascii():
                    _check_text(k, path + (k,))
                if type(v) in (dict, list):
                    push((v, path + (k,)))
                elif type(v) is str and not v.isascii():
                    _check_text(v, path + (k,))
        elif t is list:
            if len(path) - len(root) >= MAX_DEPTH:
                raise RequestError(path, f"nested deeper than {MAX_DEPTH} levels of objects and arrays")
            for i, v in enumerate(x):
                tv = type(v)
                if tv is dict or tv is list:
                    push((v, path + (i,)))
                elif tv is str and not v.isascii():
                    _check_text(v, path + (i,))
        elif t is str and not x.isascii():
            _check_text(x, path)


def _check_text(s: str, path: tuple) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        from .errors import RequestError
        raise RequestError(path, f"not Unicode text: a lone surrogate {s[e.start]!r} at character {e.start}") from None
