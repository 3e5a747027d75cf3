"""The neutral policy: what a policy file holds and what ``request.policy`` carries.

One pydantic model per concept of the protocol's ``policy`` (docs/protocol.md,
docs/policy.md), with unknown keys rejected. Semantics read these models directly; nothing here
depends on a provider.
"""
from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, Optional, Union

import dataclasses

from pydantic import (AfterValidator, BeforeValidator, ConfigDict, Field, Strict, StrictBool, TypeAdapter,
                      ValidationInfo, WithJsonSchema, field_validator, model_validator)
from pydantic.dataclasses import dataclass

from .constants import KEDA_FALLBACK_FAILURE_THRESHOLD
from .errors import FieldError
from .units import MAX_INT, MAX_NUMBER, exact, parse_duration

# ----------------------------------------------------------------------------- field types


# Limits (docs/protocol.md, limits): checked natively, before any value is expanded.
_QUANTITY_PATTERN = (r"^[+-]?(\d{1,40}(\.\d{0,40})?|\.\d{1,40})"
                     r"([eE][+-]?\d{1,2}|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
FiniteFloat = Annotated[float, Strict(), Field(allow_inf_nan=False, ge=-MAX_NUMBER, le=MAX_NUMBER)]
_BoundedInt = Annotated[int, Strict(), Field(ge=-MAX_INT, le=MAX_INT)]
# Validated natively by pydantic-core (no Python call per value: requests carry many).
# Tried left to right, the string before the float: a strict float validator refusing a
# string costs about ten times what the int and str validators do, and a quantity is
# most often a string ("500m"). The outcome is the smart union's for every input: an int
# is an int (the first alternative), a float is refused by the other two, and a union
# that fails reports the same three alternatives (errors.normalize_errors collapses them).
Quantity = Annotated[
    Union[_BoundedInt, Annotated[str, Field(pattern=_QUANTITY_PATTERN)], FiniteFloat],
    Field(union_mode="left_to_right"),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string", "pattern": _QUANTITY_PATTERN}],
                    "description": "a number or a Kubernetes quantity (\"500m\", \"1Gi\")"}),
]
Number = Annotated[Union[_BoundedInt, FiniteFloat],
                   WithJsonSchema({"type": "number"})]
Duration = Annotated[
    float, BeforeValidator(parse_duration),
    WithJsonSchema({"anyOf": [{"type": "number", "minimum": 0},
                              {"type": "string", "description": "\"90s\", \"5m\", \"1h\" or ISO-8601 \"PT5M\""}]}),
]


def _non_negative(v: float) -> float:
    if v < 0:
        raise ValueError("must be zero or more seconds")
    return v


NonNegDuration = Annotated[Duration, AfterValidator(_non_negative)]


Int = _BoundedInt
"""An integer as JSON writes it: ``"4"`` and ``4.5`` are errors, not coerced."""
Bool = StrictBool
"""``true``/``false`` only: ``"yes"`` is an error, not coerced."""


def drop_nulls(data: Any) -> Any:
    """The protocol: "`null` and a missing key mean the same thing" — a key
    whose value is null is read as absent, so it takes the field's default."""
    if type(data) is dict and None in data.values():
        return {k: v for k, v in data.items() if v is not None}
    return data


MODEL_CONFIG = ConfigDict(extra="forbid", populate_by_name=True, str_strip_whitespace=False)
"""Every policy type: unknown keys are errors."""


class ModelAPI:
    """pydantic's model methods on the core's dataclasses, for code written against the
    pydantic models they were (a plugin's tests, a script): ``model_validate`` validates
    JSON data, ``model_dump`` dumps (pydantic's options), ``model_copy(update=…)`` is
    :func:`dataclasses.replace`, ``model_construct(**fields)`` makes one,
    ``model_fields`` names the fields."""
    __slots__ = ()

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        return _adapter(cls).validate_python(data)

    @classmethod
    def model_construct(cls, **fields: Any) -> Any:
        return cls(**fields)

    @classmethod
    def model_json_schema(cls) -> dict:
        return _adapter(cls).json_schema()

    def model_dump(self, **options: Any) -> Any:
        return _adapter(type(self)).dump_python(self, **options)

    def model_copy(self, update: Optional[dict] = None, deep: bool = False) -> Any:
        import copy
        out = dataclasses.replace(self, **(update or {}))
        return copy.deepcopy(out) if deep else out


_ADAPTERS: dict = {}


def _adapter(cls: type) -> TypeAdapter:
    a = _ADAPTERS.get(cls)
    if a is None:
        a = _ADAPTERS[cls] = TypeAdapter(cls)
    return a


def model(cls: type) -> type:
    """A policy type: a pydantic dataclass, validated whenever it is made (from a file, a
    request or code), slotted and immutable. Slots are what the decision core reads at
    interpreter speed: a ``BaseModel`` defines ``__getattr__``, which keeps CPython from
    specializing any attribute read of it (about 450 instructions against 100)."""
    out = dataclass(config=MODEL_CONFIG, slots=True, frozen=True, kw_only=True)(cls)
    out.model_fields = out.__pydantic_fields__
    return out


@model
class _Model(ModelAPI):
    """The base of every policy type: unknown keys are errors, and a null value is a
    missing key."""

    @model_validator(mode="before")
    @classmethod
    def _null_is_missing(cls, data: Any) -> Any:
        return drop_nulls(data)


# ----------------------------------------------------------------------------- metrics

MetricType = Literal["resource", "container_resource", "pods", "object", "external", "load_balancing", "formula"]
TargetType = Literal["Utilization", "AverageValue", "Value"]


@model
class MetricTarget(_Model):
    type: TargetType
    average_utilization: Optional[Number] = Field(
        None, description="percent, for Utilization targets; left out, the semantics' default where the provider "
                          "has one (gce, scalebridge: cpu 60, load balancing 80) and an error where it has none")
    average_value: Optional[Quantity] = Field(None, description="per replica, for AverageValue targets")
    value: Optional[Quantity] = Field(None, description="total, for Value targets")
    rate: Optional[Literal["per_second", "per_minute"]] = Field(
        None, description="the samples are a cumulative counter (GCE DELTA_PER_SECOND / DELTA_PER_MINUTE)")

    @model_validator(mode="after")
    def _needs_its_value(self) -> "MetricTarget":
        need = {"Utilization": "average_utilization", "AverageValue": "average_value", "Value": "value"}[self.type]
        if self.type == "Utilization":
            if self.average_utilization is not None and self.average_utilization <= 0:
                raise FieldError(need, "average_utilization must be greater than 0")
            return self         # unstated: each semantics' default, or its refusal (unstated_utilization)
        if getattr(self, need) is None:
            raise FieldError(need, f"required field is missing: a {self.type} target needs `{need}`")
        if exact(getattr(self, need)) <= 0:
            raise FieldError(need, f"{need} must be greater than 0")
        return self


@model
class Metric(_Model):
    type: MetricType
    name: str = Field(description="the key of this metric in observations.metrics (cpu, memory, …)")
    container: Optional[str] = Field(None, description="container_resource: the container measured")
    target: MetricTarget
    enabled: Bool = True
    disable_scale_in: Bool = Field(False, description="AWS target tracking DisableScaleIn")
    initialization_period_seconds: Optional[NonNegDuration] = None
    expression: Optional[str] = Field(
        None, description="formula metrics: a CEL expression over the other metrics of the policy by name "
                          "(KEDA advanced.scalingModifiers.formula); it replaces them as one composite metric")
    activation_threshold: Optional[Number] = Field(
        None, description="scale to and from zero: the metric is active while its value is above this "
                          "(default 0; KEDA activationThreshold, activationTarget for a formula)")
    period_seconds: Optional[Literal[10, 30, 60]] = Field(
        None, description="AWS target tracking: the metric period its alarms evaluate, 10, 30 or 60 s "
                          "(CustomizedMetricSpecification.Period, TargetTrackingMetricStat.Period; default 60); "
                          "read by the aws semantics only")

    @model_validator(mode="after")
    def _target_fits_type(self) -> "Metric":
        t = self.target.type
        if self.type == "formula":
            if not self.expression:
                raise FieldError("expression", "required field is missing: a formula metric needs `expression` (CEL)")
            if t == "Utilization":
                raise FieldError(("target", "type"), "a formula metric takes an AverageValue or Value target "
                                                     "(KEDA scalingModifiers.metricType)")
            return self
        if self.expression is not None:
            raise FieldError("expression", f"only a formula metric has an `expression` (this one is {self.type})")
        if t == "Utilization" and self.type not in ("resource", "container_resource", "load_balancing"):
            raise FieldError(("target", "type"),
                             f"a {self.type} metric cannot have a Utilization target; use AverageValue or Value")
        if self.type in ("resource", "container_resource", "pods") and t == "Value":
            raise FieldError(("target", "type"),
                             f"a {self.type} metric takes a Utilization or AverageValue target, not Value")
        if self.type == "container_resource" and not self.container:
            raise FieldError("container", "required field is missing: a container_resource metric needs `container`")
        return self


def require_stated_utilization(policy: "Policy", why: str) -> None:
    """Refuse the first Utilization target without ``average_utilization``, for a
    semantics whose provider has no default for it (``why``: which field requires it)."""
    from .errors import RequestError
    for i in unstated_utilization(policy):
        raise RequestError(f"$.policy.metrics[{i}].target.average_utilization", why)


def unstated_utilization(policy: "Policy") -> list[int]:
    """Indexes of ``policy.metrics`` with a Utilization target that states no
    ``average_utilization``: GCE defaults it (cpuUtilization 0.6, load balancing
    0.8), Kubernetes' API refuses it and AWS requires a TargetValue — each
    semantics decides."""
    return [i for i, m in enumerate(policy.metrics or [])
            if m.target.type == "Utilization" and m.target.average_utilization is None]


def fraction_targets(policy: "Policy") -> list[tuple[tuple, str]]:
    """``(location, warning)`` for each Utilization target written as a fraction: an
    ``average_utilization`` of 1 or less is a percent of (at most) 1 %, which is what
    GCE's ``utilizationTarget`` 0.6 becomes when it is copied as it is — a policy that
    asks for tens of times the members it means. Valid (a provider takes it), so a
    warning: ``validate`` (an error with ``--strict``), ``decide`` and a ``note:`` of
    ``render`` say it."""
    out = []
    for i, m in enumerate(policy.metrics or ()):
        v = m.target.average_utilization
        if m.target.type == "Utilization" and v is not None and 0 < v <= 1:
            out.append((("metrics", i, "target", "average_utilization"),
                        f"{v:g} is a fraction where a percent is expected; did you mean {round(v * 100, 6):g}, "
                        "a percent?"))
    return out


# ----------------------------------------------------------------------------- behavior


@model
class ScalingPolicy(_Model):
    type: Literal["Pods", "Percent"]
    value: Annotated[Int, Field(gt=0)]
    period_seconds: Annotated[Duration, AfterValidator(lambda v: _positive_period(v))]


def _positive_period(v: float) -> float:
    if v <= 0 or v > 1800:
        raise ValueError("period_seconds must be greater than 0 and at most 1800 (autoscaling/v2)")
    return v


@model
class ScalingRules(_Model):
    stabilization_window_seconds: Optional[Annotated[Duration, AfterValidator(lambda v: _window(v))]] = None
    select_policy: Optional[Literal["Max", "Min", "Disabled"]] = None
    policies: Optional[list[ScalingPolicy]] = None
    tolerance: Optional[Annotated[Number, Field(ge=0)]] = None


def _window(v: float) -> float:
    if v < 0 or v > 3600:
        raise ValueError("stabilization_window_seconds must be between 0 and 3600")
    return v


@model
class Behavior(_Model):
    scale_up: Optional[ScalingRules] = None
    scale_down: Optional[ScalingRules] = None


# ----------------------------------------------------------------------------- GCE scale-in control


@model
class MaxScaledIn(_Model):
    fixed: Optional[Annotated[Int, Field(ge=0)]] = None
    percent: Optional[Annotated[Number, Field(ge=0, le=100)]] = None

    @model_validator(mode="after")
    def _one(self) -> "MaxScaledIn":
        if (self.fixed is None) == (self.percent is None):
            raise ValueError("give exactly one of `fixed` or `percent`")
        return self


@model
class ScaleInControl(_Model):
    max_scaled_in_replicas: MaxScaledIn
    time_window_seconds: NonNegDuration = 600.0


# ----------------------------------------------------------------------------- rules

Operator = Literal["GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual", "Equals", "NotEquals"]
_AGG_ALIASES = {"Minimum": "Min", "Maximum": "Max", "Total": "Sum"}


def _aggregation(v: Any) -> Any:
    if isinstance(v, str):
        return _AGG_ALIASES.get(v, v)
    return v


TimeAggregation = Annotated[Literal["Average", "Min", "Max", "Sum", "Count", "Last"], BeforeValidator(_aggregation)]
_STATISTIC = re.compile(r"^(Average|Min|Max|Sum|Count|Percentile(\d{1,2}(\.\d+)?|100))$")


def _statistic(v: Any) -> Any:
    v = _aggregation(v)
    if not isinstance(v, str) or not _STATISTIC.match(v):
        raise ValueError("statistic must be Average, Min, Max, Sum, Count or PercentileN (e.g. Percentile95)")
    return v


@model
class RuleAction(_Model):
    direction: Optional[Literal["Increase", "Decrease"]] = None
    type: Optional[Literal["ChangeCount", "PercentChangeCount", "ExactCount", "ServiceAllowedNextValue"]] = None
    value: Optional[Number] = None
    cooldown_seconds: Optional[NonNegDuration] = None


@model
class StepAdjustment(_Model):
    lower: Optional[Number] = None
    upper: Optional[Number] = None
    adjustment: Number


@model
class Rule(_Model):
    name: Optional[str] = None
    metric: str = Field(description="an opaque key into observations.metrics")
    statistic: Annotated[str, BeforeValidator(_statistic)] = "Average"
    time_grain_seconds: Annotated[Duration, AfterValidator(lambda v: _positive("time_grain_seconds", v))] = 60.0
    time_window_seconds: Annotated[Duration, AfterValidator(lambda v: _positive("time_window_seconds", v))] = 300.0
    time_aggregation: TimeAggregation = "Average"
    operator: Operator
    threshold: Number
    divide_per_instance: Bool = False
    enabled: Bool = True
    # AWS step scaling (declared before `action`: the validators below read them)
    steps: Optional[list[StepAdjustment]] = None
    adjustment_type: Optional[Literal["ChangeInCapacity", "PercentChangeInCapacity", "ExactCapacity"]] = None
    min_adjustment_magnitude: Optional[Annotated[Int, Field(ge=1)]] = None
    action: Optional[RuleAction] = None
    # AWS alarm shape
    datapoints_to_alarm: Optional[Annotated[Int, Field(ge=1)]] = None
    treat_missing_data: Literal["missing", "notBreaching", "breaching", "ignore"] = "missing"

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: Optional[list[StepAdjustment]], info: ValidationInfo):
        if v is None:
            return v
        if not v:
            raise ValueError("`steps` must hold at least one step adjustment")
        if info.data.get("operator") in ("Equals", "NotEquals"):
            raise ValueError("a step-scaling rule needs a GreaterThan* or LessThan* operator (it gives the direction)")
        _check_steps(v)
        return v

    @field_validator("action")
    @classmethod
    def _action(cls, v: Optional[RuleAction], info: ValidationInfo):
        if info.data.get("steps") is not None:
            if v is not None and (v.value is not None or v.type is not None or v.direction is not None):
                raise ValueError("a step-scaling rule takes its adjustments from `steps`; "
                                 "its `action` may only hold cooldown_seconds")
            return v
        if "steps" not in info.data:   # steps itself was invalid; that error is reported
            return v
        if v is None:
            raise ValueError("a rule needs an `action` (or `steps` for an AWS step-scaling rule)")
        missing = [k for k in ("direction", "type") if getattr(v, k) is None]
        if missing:
            raise FieldError(missing[0], f"required field is missing: action needs {', '.join(missing)}")
        if v.type != "ServiceAllowedNextValue" and v.value is None:
            # Azure ScaleAction.value: "This value must be 1 or greater. The default value is 1."
            # (https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update)
            v = dataclasses.replace(v, value=1)
        if v.value is not None and v.value < 0:
            raise FieldError("value", "action.value must be zero or more (direction says which way)")
        return v

    @field_validator("datapoints_to_alarm")
    @classmethod
    def _datapoints(cls, v: Optional[int], info: ValidationInfo):
        grain, window = info.data.get("time_grain_seconds"), info.data.get("time_window_seconds")
        if v is not None and grain and window and v > max(1, int(round(window / grain))):
            raise ValueError("datapoints_to_alarm cannot exceed the evaluation periods "
                             "(time_window_seconds / time_grain_seconds)")
        return v

    @model_validator(mode="after")
    def _needs_action(self) -> "Rule":
        if self.steps is None and self.action is None:
            raise FieldError("action", "required field is missing: a rule needs an `action` "
                                       "(or `steps` for an AWS step-scaling rule)")
        return self

    @property
    def evaluation_periods(self) -> int:
        return max(1, int(round(self.time_window_seconds / self.time_grain_seconds)))

    @property
    def direction(self) -> str:
        if self.steps is not None:
            return "Increase" if self.operator.startswith("Greater") else "Decrease"
        return self.action.direction  # type: ignore[union-attr]


def _positive(name: str, v: float) -> float:
    if v <= 0:
        raise ValueError(f"{name} must be greater than 0")
    return v


def _check_steps(steps: list[StepAdjustment]) -> None:
    """AWS StepAdjustment rules: no overlap, no gap, at most one null bound on each side.
    https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#step-scaling-considerations"""
    lows = [s for s in steps if s.lower is None]
    highs = [s for s in steps if s.upper is None]
    for s in steps:
        if s.lower is None and s.upper is None:
            raise ValueError("a step cannot have both bounds null")
    if any(s.lower is not None and s.lower < 0 for s in steps) and not lows:
        raise ValueError("a step has a negative lower bound, so one step must have a null lower bound")
    if any(s.upper is not None and s.upper > 0 for s in steps) and not highs:
        raise ValueError("a step has a positive upper bound, so one step must have a null upper bound")
    if len(lows) > 1:
        raise ValueError("two steps have a null lower bound; only one step may be unbounded below")
    if len(highs) > 1:
        raise ValueError("two steps have a null upper bound; only one step may be unbounded above")
    for s in steps:
        if s.lower is not None and s.upper is not None and s.lower >= s.upper:
            raise ValueError(f"step [{s.lower}, {s.upper}) has its lower bound at or above its upper bound")
    ordered = sorted(steps, key=lambda s: -math.inf if s.lower is None else s.lower)
    for a, b in zip(ordered, ordered[1:]):
        a_hi = math.inf if a.upper is None else a.upper
        b_lo = -math.inf if b.lower is None else b.lower
        if a_hi > b_lo:
            raise ValueError(f"steps overlap: [{a.lower}, {a.upper}) and [{b.lower}, {b.upper})")
        if a_hi < b_lo:
            raise ValueError(f"steps leave a gap between {a.upper} and {b.lower}")


# ----------------------------------------------------------------------------- profiles

Day = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _check_zone(v: Any) -> Any:
    if v is None:
        return v
    from .timezones import resolve_zone  # local import: zoneinfo is only needed for profiles
    resolve_zone(v)
    return v


TimeZoneName = Annotated[str, AfterValidator(_check_zone)]


@model
class Capacity(_Model):
    minimum: Annotated[Int, Field(ge=0)]
    maximum: Annotated[Int, Field(ge=0)]
    default: Annotated[Int, Field(ge=0)]

    @model_validator(mode="after")
    def _order(self) -> "Capacity":
        if self.minimum > self.maximum:
            raise ValueError(f"minimum ({self.minimum}) is greater than maximum ({self.maximum})")
        return self


@model
class Recurrence(_Model):
    frequency: Literal["Week"] = "Week"
    time_zone: TimeZoneName = "UTC"
    days: list[Day] = Field(min_length=1)
    hours: list[Annotated[Int, Field(ge=0, le=23)]] = Field(default_factory=lambda: [0], min_length=1)
    minutes: list[Annotated[Int, Field(ge=0, le=59)]] = Field(default_factory=lambda: [0], min_length=1)


@model
class FixedDate(_Model):
    start: Union[Number, str]
    end: Union[Number, str]
    time_zone: TimeZoneName = "UTC"

    @model_validator(mode="after")
    def _times(self) -> "FixedDate":
        from .timezones import to_epoch
        s, e = to_epoch(self.start, self.time_zone), to_epoch(self.end, self.time_zone)
        if e <= s:
            raise FieldError("end", "fixed_date end must be after start")
        return self


@model
class Profile(_Model):
    name: str
    capacity: Capacity
    recurrence: Optional[Recurrence] = None
    fixed_date: Optional[FixedDate] = None
    rules: list[Rule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> "Profile":
        if self.recurrence is not None and self.fixed_date is not None:
            raise ValueError("a profile has `recurrence`, `fixed_date`, or neither — not both")
        return self


# ----------------------------------------------------------------------------- schedules


@model
class Schedule(_Model):
    name: str
    schedule: str = Field(description="cron: minute hour day-of-month month day-of-week [year]")
    time_zone: TimeZoneName = "UTC"
    duration_seconds: Annotated[Duration, AfterValidator(lambda v: _min_duration(v))]
    min_required_replicas: Annotated[Int, Field(ge=0)]
    disabled: Bool = False

    @field_validator("schedule")
    @classmethod
    def _cron(cls, v: str) -> str:
        from .cron import CronSchedule
        CronSchedule.parse(v)
        return v


def _min_duration(v: float) -> float:
    if v < 300:
        raise ValueError("duration_seconds must be at least 300 (GCE scaling schedules)")
    return v


# ----------------------------------------------------------------------------- predictive


@model
class Predictive(_Model):
    mode: Optional[Annotated[Literal["Disabled", "ForecastOnly", "ForecastAndScale"],
                             BeforeValidator(lambda v: "ForecastAndScale" if v == "Enabled" else v)]] = None
    look_ahead_seconds: Optional[NonNegDuration] = None
    scheduling_buffer_seconds: Optional[NonNegDuration] = None
    max_capacity_breach_behavior: Literal["HonorMaxCapacity", "IncreaseMaxCapacity"] = "HonorMaxCapacity"
    max_capacity_buffer_percent: Optional[Annotated[Number, Field(ge=0, le=100)]] = None
    # forecasting (scalebridge): the signal, its per-member capacity and the model
    metric: Optional[str] = Field(None, description="the observations.metrics key the forecast follows")
    capacity_per_replica: Optional[Annotated[Number, Field(gt=0)]] = Field(
        None, description="load one member serves at 100% (e.g. 25000 websocket connections)")
    target_utilization: Annotated[Number, Field(gt=0, le=1)] = Field(
        1.0, description="fraction of capacity_per_replica to plan for")
    model: str = Field("auto", description="forecasting model: linear, quadratic, seasonal, auto")
    history_seconds: Optional[NonNegDuration] = None
    lead_time_seconds: Optional[NonNegDuration] = Field(None, description="default: the start-up time")
    headroom_percent: Annotated[Number, Field(ge=0)] = 0
    margin_quantile: Optional[Annotated[Number, Field(gt=0, lt=1)]] = Field(
        None, description="plan for this quantile of the forecast's recent error (observed peak over the lead "
                          "window / forecast peak, modelled per level) instead of a fixed target_utilization; "
                          "e.g. 0.99, or 0.9995 to be short minutes a week")
    margin_history_seconds: Annotated[Duration, AfterValidator(lambda v: _positive("margin_history_seconds", v))] = \
        Field(86400.0, description="how much forecast-error history the margin is taken from")
    reactive_baseline_utilization: Optional[Annotated[Number, Field(gt=0, le=1)]] = Field(
        None, description="the utilization target of the reactive autoscaler this plan stands in for (e.g. 0.6): "
                          "the margin buys no more safety than that autoscaler had on the same load — its quantile "
                          "is lowered from margin_quantile until the plan is short about as often as a default "
                          "HPA at this target would have been (needs margin_quantile; docs/predictive.md)")
    scale_down_rate_percent: Annotated[Number, Field(ge=0, le=100)] = 5
    scale_down_period_seconds: Optional[NonNegDuration] = None
    extrapolate_ramps: Bool = Field(
        True, description="extrapolate a significant recent rise over the lead time (the seed's line through the "
                          "last 5 values, and a 5-minute trend); false for count noise — a few events per "
                          "member-minute — where an apparent ramp is noise (docs/predictive.md)")

    # the planner's inner constants (scalebridge.forecasting.planner, scalebridge.forecasting.risk), selected by the
    # leave-one-out of benchmarks/frontier.py rather than fixed: defaults are the values they had
    ramp_significance: Annotated[Number, Field(gt=0)] = Field(
        3.0, description="the line through the last 5 values is extrapolated when its rise is more than this many "
                         "times what the margin covers (docs/predictive.md, step 3)")
    trend_significance: Annotated[Number, Field(gt=0)] = Field(
        5.0, description="the line through the last 5 minutes is extrapolated when its slope is more than this "
                         "many standard errors above zero...")
    trend_size: Annotated[Number, Field(ge=0)] = Field(
        2.0, description="...and its rise over the 5 minutes is more than this many σ of the forecast's error")
    trend_window_seconds: Annotated[Duration, AfterValidator(lambda v: _positive("trend_window_seconds", v))] = \
        Field(300.0, description="the span of that second line: the samples of the last this many seconds "
                                 "(5 minutes)")
    margin_first_fit_seconds: Annotated[Duration,
                                        AfterValidator(lambda v: _positive("margin_first_fit_seconds", v))] = \
        Field(3600.0, description="the margin is first fitted once this much forecast-error history is known; "
                                  "until then it is 1 / target_utilization (an hour)")
    guard_max_mape: Annotated[Number, Field(gt=0)] = Field(
        0.5, description="the forecast is unreliable, and the plan falls back to the reactive decision, while "
                         "its mean absolute percentage error over the last forecasts is above this "
                         "(scalebridge.forecasting.guard.DEFAULT_MAX_MAPE)")
    outlier_fence_iqr: Annotated[Number, Field(gt=0)] = Field(
        3.0, description="forecast errors beyond Q1 − k·IQR and Q3 + k·IQR (Tukey's fences; 3: the outer ones) are "
                         "left out of the margin's error model")
    baseline_reaction_seconds: NonNegDuration = Field(
        45.0, description="the replayed HPA's members serve this long after their start-up (metric age, sync "
                          "period, a first sample; scalebridge.forecasting.risk.REACTION_SECONDS)")
    scale_down_adaptation: Optional[Literal["rebound"]] = Field(
        None, description="rebound: learn from the load whether its significant drops come back within the HPA's "
                          "5-minute stabilization window; while most do not, a new drop releases the held "
                          "proposal at once, down to the reactive need (never below it), instead of at "
                          "scale_down_rate_percent; needs margin_quantile (docs/predictive.md)")

    margin_adaptation: Optional[Literal["aci"]] = Field(
        None, description="aci: learn the margin online toward a target shortfall rate (adaptive conformal "
                          "inference, Gibbs & Candès 2021): raised after every sample the plan was short, lowered "
                          "a little after every other one; the target is the shortfall rate of the reactive "
                          "baseline (reactive_baseline_utilization) on the same load, never below "
                          "1 − margin_quantile; needs margin_quantile (docs/predictive.md)")

    @model_validator(mode="after")
    def _adaptation_needs_quantile(self) -> "Predictive":
        if self.margin_adaptation is not None and self.margin_quantile is None:
            raise FieldError("margin_adaptation",
                             "needs margin_quantile: the margin starts at that quantile of the forecast's error "
                             "and its complement is the lowest shortfall rate aimed at")
        return self

    @model_validator(mode="after")
    def _rebound_needs_quantile(self) -> "Predictive":
        if self.scale_down_adaptation is not None and self.margin_quantile is None:
            raise FieldError("scale_down_adaptation",
                             "needs margin_quantile: a drop is significant beyond what the margin's error "
                             "model covers")
        return self

    @model_validator(mode="after")
    def _baseline_needs_quantile(self) -> "Predictive":
        if self.reactive_baseline_utilization is not None and self.margin_quantile is None:
            raise FieldError("reactive_baseline_utilization",
                             "needs margin_quantile: it lowers the margin's quantile, and without "
                             "margin_quantile the margin is the fixed target_utilization")
        return self


# ----------------------------------------------------------------------------- the policy


@model
class Fallback(_Model):
    """KEDA's ``fallback``: the count a metric that keeps failing stands for
    (https://keda.sh/docs/latest/reference/scaledobject-spec/#fallback)."""
    failure_threshold: Annotated[Int, Field(ge=0)] = Field(
        KEDA_FALLBACK_FAILURE_THRESHOLD, description="consecutive failed decisions of a metric after which it falls back")
    replicas: Optional[Annotated[Int, Field(ge=0)]] = Field(
        None, description="the fallback count (required unless behavior is current_replicas)")
    behavior: Literal["static", "current_replicas", "current_replicas_if_higher", "current_replicas_if_lower",
                      "formula"] = Field(
        "static", description="formula: per metric, in the formulas (KEDA 2.20 scalingModifiers): a metric failing "
                              "past failure_threshold is null in every formula that names it, the formula routes "
                              "around it (`m != null ? m : other`, KEDA's `m ?? other`), and a formula that is "
                              "null stands for `replicas`")

    @model_validator(mode="after")
    def _needs_replicas(self) -> "Fallback":
        if self.replicas is None and self.behavior != "current_replicas":
            raise FieldError("replicas", f"required field is missing: fallback behavior {self.behavior} needs "
                                         "`replicas` (KEDA fallback.replicas)")
        return self


def _mode(v: Any) -> Any:
    return "ONLY_SCALE_OUT" if v == "ONLY_UP" else v


@model
class Policy(_Model):
    """The neutral policy (the protocol's ``policy``)."""
    name: Optional[str] = None
    semantics: Optional[str] = None
    min_replicas: Optional[Annotated[Int, Field(ge=0)]] = None
    max_replicas: Optional[Annotated[Int, Field(ge=0)]] = None
    default_replicas: Optional[Annotated[Int, Field(ge=0)]] = None
    allowed_replicas: Optional[list[Annotated[Int, Field(ge=0)]]] = None
    metrics: Optional[list[Metric]] = None
    tolerance: Optional[Annotated[Number, Field(ge=0)]] = None
    behavior: Optional[Behavior] = None
    scale_in_control: Optional[ScaleInControl] = None
    initialization_period_seconds: Optional[NonNegDuration] = None
    mode: Annotated[Literal["ON", "ONLY_SCALE_OUT", "ONLY_SCALE_IN", "OFF"], BeforeValidator(_mode)] = "ON"
    rules: list[Rule] = Field(default_factory=list)
    profiles: list[Profile] = Field(default_factory=list)
    schedules: list[Schedule] = Field(default_factory=list)
    predictive: Optional[Predictive] = None
    # neutral controls (docs/policy.md): KEDA's fallback, scale to and from zero
    fallback: Optional[Fallback] = None
    scale_to_zero_delay_seconds: Optional[NonNegDuration] = Field(
        None, description="how long every metric must be at or below its activation threshold before the size goes "
                          "to idle_replicas (or 0); default 300 (KEDA cooldownPeriod)")
    idle_replicas: Optional[Annotated[Int, Field(ge=0)]] = Field(
        None, description="the size while no metric is active; less than min_replicas (KEDA idleReplicaCount)")
    initial_scale_to_zero_delay_seconds: Optional[NonNegDuration] = Field(
        None, description="while no metric has ever been seen active, how long after the first decision on the "
                          "target before the size may go to idle; default 0 (KEDA initialCooldownPeriod, counted "
                          "there from the ScaledObject's creation)")
    force_activation: Optional[Bool] = Field(
        None, description="true: every metric counts as active, so an idle target is activated and an active one "
                          "never goes to idle (KEDA's autoscaling.keda.sh/force-activation annotation)")
    invalid_values_as_zero: Optional[Bool] = Field(
        None, description="true: a negative, NaN or infinite value of an external metric is read as 0, not as an "
                          "invalid metric; activation still compares the value as read (KEDA >= 2.20.2, "
                          "kedacore/keda#7889: pkg/scalers/scaler.go quantityFromFloat64); import --from keda sets it")

    @model_validator(mode="after")
    def _bounds(self) -> "Policy":
        if self.min_replicas is not None and self.max_replicas is not None and self.min_replicas > self.max_replicas:
            raise FieldError("min_replicas", f"min_replicas ({self.min_replicas}) is greater than max_replicas "
                                             f"({self.max_replicas})")
        if self.allowed_replicas is not None and self.allowed_replicas != sorted(set(self.allowed_replicas)):
            raise FieldError("allowed_replicas", "allowed_replicas must be strictly ascending")
        defaults = [p.name for p in self.profiles if p.recurrence is None and p.fixed_date is None]
        if len(defaults) > 1:
            raise FieldError("profiles", f"at most one default profile (no recurrence, no fixed_date); found {', '.join(defaults)}")
        _check_controls(self)
        return self


def uses_activation(policy: "Policy") -> bool:
    """Whether the policy states a key of the activation phase (scale to and from zero,
    docs/policy.md): without one, ``min_replicas: 0`` is each provider's own."""
    return policy.idle_replicas is not None or policy.scale_to_zero_delay_seconds is not None or \
        policy.initial_scale_to_zero_delay_seconds is not None or bool(policy.force_activation) or \
        any(m.activation_threshold is not None for m in policy.metrics or ())


def _check_controls(policy: "Policy") -> None:
    """Formulas (each a CEL expression over the policy's other metrics) and the
    activation keys (KEDA's ScaledObject validation: idleReplicaCount below minReplicaCount)."""
    metrics = policy.metrics or []
    names = tuple(m.name for m in metrics if m.type != "formula")
    has_formula = len(names) < len(metrics)
    nullable = policy.fallback is not None and policy.fallback.behavior == "formula"
    seen: set = set()
    for i, m in enumerate(metrics):
        if has_formula and m.name in seen:
            raise FieldError(("metrics", i, "name"), f"two metrics are named {m.name!r}: a formula names metrics "
                                                     "by name, so each must be unique")
        seen.add(m.name)
        if m.type != "formula":
            continue
        from .cel import CelError, compile_formula   # lazy: CEL loads only for a formula
        try:
            c = compile_formula(m.expression, tuple(n for n in names if n != m.name), nullable)
        except CelError as e:
            raise FieldError(("metrics", i, "expression"), f"{e}") from None
        if not c.references:
            raise FieldError(("metrics", i, "expression"), "the expression names no metric of the policy")
    if policy.idle_replicas is not None:
        lo = policy.min_replicas
        if lo is None or policy.idle_replicas >= lo:
            raise FieldError("idle_replicas", f"idle_replicas ({policy.idle_replicas}) must be less than "
                                              f"min_replicas ({'unset' if lo is None else lo}) "
                                              "(KEDA: idleReplicaCount must be less than minReplicaCount)")
    if policy.fallback is not None and policy.fallback.behavior == "formula" and not has_formula:
        raise FieldError(("fallback", "behavior"), "the formula behavior falls back inside a formula: the policy "
                                                   "has no formula metric (KEDA: \"scalingModifiers fallback behavior "
                                                   "requires scalingModifiers.formula to be defined\")")
    if uses_activation(policy) and not any(m.enabled for m in metrics):
        key = "idle_replicas" if policy.idle_replicas is not None else "scale_to_zero_delay_seconds" \
            if policy.scale_to_zero_delay_seconds is not None else "metrics"
        raise FieldError(key, "scaling to and from zero needs a metric in policy.metrics: a metric above its "
                              "activation_threshold is what activates the target")


# values the validators accept and rewrite, which the generated enums leave out
_ENUM_ALIASES = {"ONLY_SCALE_OUT": ("ONLY_UP",), "ForecastAndScale": ("Enabled",),
                 **{canonical: (alias,) for alias, canonical in _AGG_ALIASES.items()}}


def _nullable(schema: dict) -> dict:
    """``schema`` also accepting null (the protocol: null means a missing key)."""
    if "anyOf" in schema:
        if {"type": "null"} not in schema["anyOf"]:
            schema["anyOf"].append({"type": "null"})
        return schema
    if "enum" in schema:
        if None not in schema["enum"]:
            schema["enum"].append(None)
        if isinstance(schema.get("type"), str):
            schema["type"] = [schema["type"], "null"]
        return schema
    if isinstance(schema.get("type"), str) and "$ref" not in schema:
        schema["type"] = [schema["type"], "null"]
        return schema
    keep = {k: schema.pop(k) for k in ("title", "description", "default") if k in schema}
    return {**keep, "anyOf": [schema, {"type": "null"}]}


def _accepting(node: Any) -> Any:
    """The generated schema widened to what validation accepts: enum aliases, and null
    for every property."""
    if isinstance(node, dict):
        for k, v in node.items():
            node[k] = _accepting(v)
        enum = node.get("enum")
        if isinstance(enum, list):
            for value in list(enum):
                for alias in _ENUM_ALIASES.get(value, ()):
                    if alias not in enum:
                        enum.append(alias)
        props = node.get("properties")
        if isinstance(props, dict):
            for name in props:
                props[name] = _nullable(props[name])
    elif isinstance(node, list):
        return [_accepting(v) for v in node]
    return node


def policy_json_schema() -> dict:
    """The policy's JSON Schema, as wide as validation: it accepts every policy
    ``scalebridge validate`` accepts (aliases such as ``ONLY_UP``, ``Enabled``,
    ``Total``, and null for a missing key) — for editors, which must not flag a
    valid policy."""
    schema = _accepting(POLICY.json_schema())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "scalebridge policy"
    return schema


POLICY = TypeAdapter(Policy)
"""Validates a policy's JSON (a dict) into a :class:`Policy`, and dumps one back."""


def parse_policy(data: Any) -> "Policy":
    """A :class:`Policy` validated from its JSON form (raises pydantic's ``ValidationError``)."""
    return POLICY.validate_python(data)


def policy_json(policy: Any, **options: Any) -> Any:
    """A policy type as JSON data (``mode="json"``; ``exclude_none`` and the other dump
    options of pydantic as given): what a policy file or a request would hold."""
    return TypeAdapter(type(policy)).dump_python(policy, mode="json", **options)
