"""The decision request of the protocol (docs/protocol.md) as pydantic models.

Field names are the protocol's and fixed. Extensions (the protocol allows them, never
renames): ``Member.count`` — one entry standing for ``count`` identical members,
which lets a simulator describe a fleet of hundreds in a few entries.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, model_validator
from typing_extensions import Required, TypedDict

from .policy import Bool, FiniteFloat, Int, NonNegDuration, Number, Policy, Quantity, _Model, drop_nulls
from .units import parse_duration

MIN_TIME = -62135596800
"""0001-01-01T00:00:00Z in seconds since the Unix epoch."""
MAX_TIME = 253402300799
"""9999-12-31T23:59:59Z: the last second ``datetime`` (and so every schedule and profile) can place."""
EpochSeconds = Annotated[float, Strict(), Field(allow_inf_nan=False, ge=MIN_TIME, le=MAX_TIME)]
"""Seconds since the Unix epoch, within years 1 to 9999."""
Time = Optional[EpochSeconds]
"""Seconds since the Unix epoch; null is the distant past."""


class _Bulk(BaseModel):
    """Models a request holds many of (members, metric observations): no per-instance
    Python validator. Their null-valued keys are dropped by the engine, which
    validates again without them only when a first validation fails
    (``engine.parse_request``), so a well-formed request pays nothing for it.

    The per-member loops of the semantics read a member's fields from its ``__dict__``
    (where a pydantic model keeps every declared field, defaults included, however it
    was made): an attribute read goes through ``BaseModel.__getattr__``'s slot, which
    the interpreter cannot specialize — about 450 instructions against 100."""
    model_config = ConfigDict(extra="forbid")


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
    metric_delay_seconds: NonNegDuration = 0.0


class Member(_Bulk):
    name: str
    phase: Literal["Running", "Pending", "Failed", "Succeeded"] = "Running"
    ready: Optional[Bool] = None
    ready_transition_time: Time = None
    start_time: Time = None
    deleting: Bool = False
    requests: Optional[dict[str, Optional[Quantity]]] = None
    weight: Annotated[Number, Field(gt=0)] = 1
    count: Annotated[Int, Field(ge=1)] = Field(1, description="extension: this entry stands for `count` identical members")


Point = tuple[EpochSeconds, Optional[FiniteFloat]]


class MetricObservation(_Bulk):
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


class CapacityForecast(_Model):
    replicas: Annotated[Int, Field(ge=0)]
    source: Optional[str] = None
    # extensions: the forecaster's own reason when it fell back, reported in the response;
    # hourly capacities [[hour_start, replicas], …] (AWS predictive scaling's forecast), from
    # which aws takes the hour that starts within scheduling_buffer_seconds of now
    reason: Optional[str] = None
    series: Optional[list[Point]] = None


class Observations(_Model):
    status_replicas: Optional[Annotated[Number, Field(ge=0)]] = None
    members: Optional[list[Member]] = None
    metrics: dict[str, MetricObservation] = Field(default_factory=dict)
    forecast: Optional[CapacityForecast] = None
    proposal: Optional[Annotated[Int, Field(ge=0)]] = None

    @model_validator(mode="before")
    @classmethod
    def _null_is_missing(cls, data: Any) -> Any:
        # a metric observed as null is a metric not observed
        data = drop_nulls(data)
        if type(data) is dict and type(data.get("metrics")) is dict:
            data = {**data, "metrics": drop_nulls(data["metrics"])}
        return data


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


class LastScale(_Model):
    model_config = ConfigDict(extra="allow")
    time: EpochSeconds
    direction: Optional[Literal["Increase", "Decrease"]] = None
    cause: Optional[str] = None
    completed_at: Optional[EpochSeconds] = None
    # a duration: seconds, or "5m", "PT5M" … (docs/protocol.md, conventions)
    cooldown_seconds: Annotated[Optional[Number],
                                BeforeValidator(lambda v: parse_duration(v) if isinstance(v, str) else v)] = None


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


class Request(_Model):
    semantics: Optional[str] = None
    now: EpochSeconds
    current_replicas: Annotated[Int, Field(ge=0)]
    policy: Policy = Field(default_factory=Policy)
    settings: Settings = Field(default_factory=Settings)
    observations: Observations = Field(default_factory=Observations)
    state: Optional[StateModel] = None


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
