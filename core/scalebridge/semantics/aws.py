"""The ``aws`` semantics: Amazon EC2 Auto Scaling dynamic and predictive scaling.

What it reproduces (rules W1–W30 and choices G1–G16 of docs/research/aws.md;
the side-by-side section is docs/semantics/aws.md):

- **step scaling** — a rule with ``steps``: its CloudWatch alarm
  (:mod:`..stages.alarms`) in ALARM runs it once per alarm period; the step is
  chosen from the rule's ``time_aggregation`` of the evaluated datapoints
  relative to the threshold and applied to the capacity in service
  (:mod:`..stages.steps`); warming instances are left out of a scale-out's
  base (:mod:`..stages.warmup`); no cooldown.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html
- **simple scaling** — a rule with an ``action``: waits while a scaling
  activity is in progress and until the cooldown after the last one expires
  (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scaling-cooldowns.html).
- **target tracking** — ``policy.metrics``: AWS's own pair of alarms (above the
  target for 3 of 3 one-minute datapoints; below 90 % of it for 15 of 15) and
  ``ceil(capacity × value / target)``; scale-out if any policy is ready, scale-in
  only when every policy with scale-in enabled is.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html
- **several policies** — "chooses the policy that provides the largest capacity
  for both scale out and scale in"; scale-in waits while a scale-out is in
  progress or instances warm up.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scale-based-on-demand.html#multiple-scaling-policy-resolution
- **predictive scaling** — under ``ForecastAndScale`` the forecast capacity
  joins by max (never scales in); ``IncreaseMaxCapacity`` raises the maximum to
  ``ceil(forecast × (100 + buffer) / 100)``, kept in ``state["aws.max_capacity"]``.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html
- **bounds** — the result is always within ``[min_replicas, max]``, even when no
  policy fires. https://docs.aws.amazon.com/autoscaling/ec2/userguide/asg-capacity-limits.html

Metric shapes read: a rule's or target's ``observations.metrics[name].series``
is the CloudWatch datapoint per period — the group aggregate over in-service,
non-warming instances, compared with a target as it is (a per-instance value
for ``Utilization``/``AverageValue`` targets), except that ``object``/``external``
metrics with an ``AverageValue`` target are totals, divided by the in-service
capacity (AWS's backlog-per-instance recipe); ``member_series`` is
aggregated per period over in-service, non-warming members; a snapshot
(``members``/``value``/``values`` with a ``timestamp`` inside the alarm's range)
stands for every period.

State: ``aws.alarm_states`` (each alarm's state, for ``treat_missing_data:
ignore``), ``aws.alarm_invoked`` (when each alarm last invoked its policy: once
per period), ``aws.max_capacity`` (a maximum raised by predictive scaling), and
``last_scale.completed_at`` filled in when an activity seen in progress is seen
finished (cooldowns count from it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Optional

from .. import constants as C
from ..errors import RequestError
from ..hookspecs import hookimpl
from ..policy import Metric, Policy, Rule, unstated_utilization
from ..stages.alarms import ALARM, INSUFFICIENT_DATA, aggregate, breach_test, datapoints, evaluate_alarm
from ..stages.signals import predictive_mode
from ..stages.steps import SIMPLE_TYPES, compile_steps, new_capacity, select_step
from ..stages.warmup import Fleet, resolve_warmup
from ..state import TimeLog
from ..units import exact, format_number
from .base import Context, Decision, Semantics

STATE_ALARMS = "aws.alarm_states"
STATE_MAX = "aws.max_capacity"
STATE_INVOKED = "aws.alarm_invoked"
_TT_SCALE_IN = "metrics.scale_in"
_IN_PROGRESS = "aws.in_progress"


# ----------------------------------------------------------------------------- compiled policy


@dataclass(slots=True)
class _Rule:
    index: int
    rule: Rule
    key: str                  # its entry in aws.alarm_states
    name: str
    step: bool                # step scaling (else simple)
    scale_out: bool
    n: int                    # evaluation periods
    m: int                    # datapoints to alarm
    periods: int              # evaluation range (N + 2)
    breaches: Callable
    threshold: object         # exact
    steps: tuple
    adjustment_type: str
    adjustment: object        # simple rules: the signed adjustment (exact)
    mam: Optional[int]
    cooldown: Optional[float]


@dataclass(slots=True)
class _Target:
    index: int
    metric: Metric
    target: object            # exact target value
    total: bool               # object/external AverageValue: the series is a group total
    utilization: bool
    high_key: str
    low_key: str
    high: Callable
    low: Callable
    zeros: bool               # ALBRequestCountPerTarget: a period without data is a zero


@dataclass(slots=True)
class _Compiled:
    rules: tuple
    targets: tuple
    min_replicas: int
    max_replicas: Optional[int]
    periods: dict             # (metric, grain, statistic, divided) -> the longest range any alarm reads
    grains: dict              # alarm key -> its period (aws.alarm_invoked)


def _ceil_ratio(base: int, value, target) -> int:
    """``ceil(base × value / target)`` exactly (numbers as written: 0.1 is 1/10)."""
    if type(value) is float:
        vn, vd = _float_pair(value)
    else:
        v = value if type(value) is int or type(value) is Fraction else exact(value)
        vn, vd = v.numerator, v.denominator
    return -((-base * vn * target.denominator) // (vd * target.numerator))


@lru_cache(maxsize=4096)
def _float_pair(x: float) -> tuple[int, int]:
    """``(n, d)`` with ``n / d == exact(x)``, the decimal ``repr(x)`` writes (not
    reduced: a ratio's floor is the same for any n/d of the same value)."""
    text = repr(x)
    whole, dot, frac = text.partition(".")
    if not dot or not frac.isdigit():   # an exponent, or not finite: exact() decides
        q = exact(x)
        return q.numerator, q.denominator
    return int(whole + frac), 10 ** len(frac)


def _json(v):
    """A datapoint as JSON: an int when whole."""
    if v is None or type(v) is int:
        return v
    if type(v) is float:
        return int(v) if v.is_integer() else v
    return format_number(v)


def _result(name: str, replicas=None, utilization=None, value=None, error=None, triggered=None) -> dict:
    """One ``response.metrics`` entry (as :meth:`MetricResult.to_dict` writes it)."""
    d = {"name": name, "replicas": replicas, "utilization": utilization, "value": value, "error": error}
    if triggered is not None:
        d["triggered"] = triggered
    return d


_ALARM_STATES = frozenset(("OK", "ALARM", "INSUFFICIENT_DATA"))


def _bad_alarm_states(value) -> None:
    raise RequestError(f"$.state['{STATE_ALARMS}']",
                       f"must be an object mapping an alarm (\"rules[0]\", \"metrics[0].high\") to OK, "
                       f"ALARM or INSUFFICIENT_DATA, got {value!r}")


def _bad_invoked(value) -> None:
    raise RequestError(f"$.state['{STATE_INVOKED}']",
                       f"must be an object mapping an alarm to the time it last invoked its policy, got {value!r}")


def _first(x):
    return x[0]


def _emits_zeros(name: str) -> bool:
    """A target-tracking metric named after the predefined ``ALBRequestCountPerTarget``
    (any case or punctuation): UG as-scaling-target-tracking.html, "the
    ALBRequestCountPerTarget metric emits zeros for periods with no associated data"."""
    return "".join(ch for ch in name.lower() if ch.isalnum()).startswith("albrequestcountpertarget")


def compile_policy(policy: Policy) -> _Compiled:
    extra = C.AWS_ALARM_EXTRA_PERIODS
    rules = []
    for k, r in enumerate(policy.rules):
        n = r.evaluation_periods
        m = r.datapoints_to_alarm or n
        step = r.steps is not None
        if step:
            scale_out = r.operator.startswith("Greater")
            adj_type = r.adjustment_type
            adjustment = None
            steps = compile_steps(r.steps)
            cooldown = r.action.cooldown_seconds if r.action is not None else None
        else:
            a = r.action
            scale_out = a.direction == "Increase"
            adj_type = SIMPLE_TYPES[a.type]
            v = exact(a.value)
            adjustment = v if adj_type == "ExactCapacity" or scale_out else -v
            steps = ()
            cooldown = a.cooldown_seconds
        rules.append(_Rule(k, r, f"rules[{k}]", r.name or r.metric, step, scale_out, n, m, n + extra,
                           breach_test(r.operator, r.threshold), exact(r.threshold), steps, adj_type,
                           adjustment, r.min_adjustment_magnitude, cooldown))
    targets = []
    for i, mt in enumerate(policy.metrics or []):
        t = mt.target
        value = {"Utilization": t.average_utilization, "AverageValue": t.average_value,
                 "Value": t.value}[t.type]
        tv = exact(value)
        low = Fraction(tv * C.AWS_TT_LOW_PERCENT, 100)
        targets.append(_Target(i, mt, tv, mt.type in ("object", "external") and t.type == "AverageValue",
                               t.type == "Utilization", f"metrics[{i}].high", f"metrics[{i}].low",
                               breach_test("GreaterThan", tv), breach_test("LessThan", low),
                               _emits_zeros(mt.name)))
    periods: dict = {}
    for r in rules:
        if r.rule.enabled:
            key = (r.rule.metric, r.rule.time_grain_seconds, r.rule.statistic, r.rule.divide_per_instance)
            periods[key] = max(periods.get(key, 0), r.periods)
    tt_periods = C.AWS_TT_LOW_DATAPOINTS + extra
    for t in targets:
        if t.metric.enabled:
            key = (t.metric.name, C.AWS_TT_PERIOD, "Average", t.total)
            periods[key] = max(periods.get(key, 0), tt_periods)
    grains = {r.key: r.rule.time_grain_seconds for r in rules}
    for t in targets:
        grains[t.high_key] = C.AWS_TT_PERIOD
    grains[_TT_SCALE_IN] = C.AWS_TT_PERIOD
    return _Compiled(tuple(rules), tuple(targets), policy.min_replicas, policy.max_replicas, periods, grains)


# ----------------------------------------------------------------------------- the semantics


class AwsSemantics(Semantics):
    name = "aws"
    summary = ("Amazon EC2 Auto Scaling: step, simple and target-tracking scaling policies with "
               "CloudWatch alarms, instance warm-up, cooldowns and predictive scaling")
    # PredictiveScalingConfiguration.Mode: "Defaults to ForecastOnly if not specified."
    # https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PredictiveScalingConfiguration.html
    default_predictive_mode = "ForecastOnly"

    def check(self, policy: Policy) -> None:
        cache = policy.compiled()
        if cache.get("aws.checked"):
            return
        if policy.min_replicas is None:
            raise RequestError("$.policy.min_replicas",
                               "required by the aws semantics (the Auto Scaling group's MinSize)")
        for i in unstated_utilization(policy):
            raise RequestError(f"$.policy.metrics[{i}].target.average_utilization",
                               "required by the aws semantics (TargetTrackingConfiguration.TargetValue "
                               "is required)")
        for k, r in enumerate(policy.rules):
            if r.steps is not None and r.adjustment_type is None:
                raise RequestError(f"$.policy.rules[{k}].adjustment_type",
                                   "required by the aws semantics for a step-scaling rule "
                                   "(PutScalingPolicy AdjustmentType): ChangeInCapacity, "
                                   "PercentChangeInCapacity or ExactCapacity")
            if r.steps is None and r.action is not None and r.action.type == "ServiceAllowedNextValue":
                raise RequestError(f"$.policy.rules[{k}].action.type",
                                   "ServiceAllowedNextValue is an Azure action; the aws semantics takes "
                                   "ChangeCount, PercentChangeCount or ExactCount")
        cache["aws.checked"] = True

    def _compiled(self, policy: Policy) -> _Compiled:
        return self.cached(policy, self._build)

    def _build(self, policy: Policy) -> _Compiled:
        self.check(policy)
        return compile_policy(policy)

    _RETENTION = {"recommendations": 0.0, "sizes": 0.0, "scale_up_events": 0.0, "scale_down_events": 0.0}

    def retention(self, ctx: Context) -> dict[str, float]:
        # AWS keeps no windows over past decisions: cooldowns read last_scale, alarms the series.
        return self._RETENTION

    # ------------------------------------------------------------------------- decide
    def decide(self, ctx: Context) -> Decision:
        policy = ctx.policy
        c = self._compiled(policy)
        now, cur, s, obs, state = ctx.now, ctx.current, ctx.settings, ctx.obs, ctx.state
        tracing = ctx.trace is not None
        end = now - s.metric_delay_seconds
        fleet = Fleet(now, cur, obs.status_replicas, obs.members)
        default_cd = s.default_cooldown_seconds
        if default_cd is None:
            default_cd = C.AWS_DEFAULT_COOLDOWN
        policy_warmup = resolve_warmup(None, policy.initialization_period_seconds, s)
        prev_states = state.extra.get(STATE_ALARMS) or {}
        if type(prev_states) is not dict:
            _bad_alarm_states(prev_states)
        prev_invoked = state.extra.get(STATE_INVOKED) or {}
        if type(prev_invoked) is not dict:
            _bad_invoked(prev_invoked)
        invoked: dict = {}

        def invoke(key: str, grain: float) -> bool:
            """An alarm in ALARM invokes its policy once per period ("the alarm
            continues to invoke the action for every period that the alarm
            remains in the new state"): not again within ``grain`` of the last time."""
            last = prev_invoked.get(key)
            if last is not None:
                if type(last) is not int and type(last) is not float:
                    _bad_invoked(prev_invoked)
                if last <= end and end - last < grain:
                    invoked[key] = last
                    return False
            invoked[key] = end
            return True

        states: dict = {}
        metrics_obs = obs.metrics
        results: list = []
        out: list = []     # (replicas, cause, cooldown, what)
        ins: list = []
        blocked: Optional[str] = None
        block_warmup = policy_warmup
        series_cache: dict = {}

        def points_of(name: str, grain: float, statistic: str, divided: bool, warmup: float, need: int,
                      resource: Optional[str] = None) -> list:
            """The datapoints of one metric at one grain, newest first, computed once
            per decision for the longest range any alarm on it reads. ``resource``: the
            members' samples are usage of that resource, turned into a percent of each
            member's request (a Utilization target)."""
            mo = metrics_obs.get(name)
            by_members = mo is not None and mo.series is None and bool(mo.member_series or mo.members)
            key = (name, grain, statistic, divided, warmup if by_members else None, resource if by_members else None)
            pts = series_cache.get(key)
            if pts is None:
                length = c.periods.get(key[:4], need)
                if length < need:
                    length = need
                keep = fleet.metric_members(obs.members, warmup) if by_members and fleet.has_members else None
                scale = utilization_scale(obs.members, resource) if by_members and resource else None
                pts = series_cache[key] = datapoints(mo, end, grain, length, statistic, keep,
                                                     (fleet.in_service or 1) if divided else 1, scale)
            return pts if len(pts) == need else pts[:need]

        # -- target tracking ----------------------------------------------------------------
        tt_voters = 0
        tt_ready: list = []
        tt_all_ready = True
        hi_n = C.AWS_TT_HIGH_DATAPOINTS
        lo_n = C.AWS_TT_LOW_DATAPOINTS
        extra_periods = C.AWS_ALARM_EXTRA_PERIODS
        proposal = obs.proposal    # a count computed elsewhere replaces the policies (spec)
        for t in (c.targets if proposal is None else ()):
            mt = t.metric
            if not mt.enabled:
                results.append(_result(mt.name, error="disabled"))
                continue
            # resolve_warmup(mt.initialization_period_seconds, policy.initialization_period_seconds, s)
            warmup = mt.initialization_period_seconds
            if warmup is None:
                warmup = policy_warmup
            if warmup > block_warmup:
                block_warmup = warmup
            resource = mt.name if mt.type in ("resource", "container_resource") and \
                mt.target.type == "Utilization" else None
            pts = points_of(mt.name, C.AWS_TT_PERIOD, "Average", t.total, warmup, lo_n + extra_periods, resource)
            if t.zeros:
                # "emits zeros for periods with no associated data": never insufficient data, and
                # target tracking can scale in on no traffic (UG as-scaling-target-tracking.html)
                pts = [0 if v is None else v for v in pts]
            high = evaluate_alarm(pts[:hi_n + extra_periods], t.high, hi_n, hi_n, "missing",
                                  prev_states.get(t.high_key))
            low = evaluate_alarm(pts, t.low, lo_n, lo_n, "missing", prev_states.get(t.low_key))
            states[t.high_key] = high.state
            states[t.low_key] = low.state
            scale_in_enabled = not mt.disable_scale_in
            if scale_in_enabled:
                tt_voters += 1
            value = None
            replicas = None
            if high.state == ALARM and high.evaluated:
                value = high.evaluated[0]
                replicas = _ceil_ratio(fleet.base_out(warmup), value, t.target)
                if invoke(t.high_key, C.AWS_TT_PERIOD):
                    if replicas > cur:
                        out.append((replicas, "metric", default_cd, mt.name))
                elif tracing:
                    ctx.note("target tracking", mt.name, replicas, "held: the alarm already invoked the policy this period")
                if scale_in_enabled:
                    tt_all_ready = False
            elif low.state == ALARM and low.evaluated:
                value = low.evaluated[0]
                replicas = _ceil_ratio(fleet.base_in, value, t.target)
                if scale_in_enabled:
                    if replicas < cur:
                        tt_ready.append((replicas, "metric", default_cd, mt.name))
                    else:
                        tt_all_ready = False
            else:
                if scale_in_enabled:
                    tt_all_ready = False
                for v in pts:
                    if v is not None:   # the newest datapoint, for information
                        value = v
                        base = fleet.base_out(warmup) if t.high(v) else fleet.base_in
                        replicas = _ceil_ratio(base, v, t.target)
                        break
            err = None
            if value is None and high.state == INSUFFICIENT_DATA and low.state == INSUFFICIENT_DATA:
                err = (f"insufficient data: no datapoints for {mt.name} in the last "
                       f"{lo_n + extra_periods} periods of {C.AWS_TT_PERIOD:g}s")
            util = math.floor(value) if value is not None and t.utilization else None
            results.append(_result(mt.name, replicas, util, _json(value), err))
            if tracing:
                ctx.note("target tracking", mt.name, replicas,
                         f"high alarm {high.state}, low alarm {low.state}; value {_json(value)} "
                         f"vs target {format_number(t.target)}")
        if tt_voters and tt_all_ready and len(tt_ready) == tt_voters:
            if invoke(_TT_SCALE_IN, C.AWS_TT_PERIOD):
                ins.extend(tt_ready)
            elif tracing:
                ctx.note("target tracking", "scale-in", None, "held: invoked already this period")

        # -- step and simple scaling ----------------------------------------------------------
        cooling: Optional[bool] = None
        for r in (c.rules if proposal is None else ()):
            rule = r.rule
            if not rule.enabled:
                results.append(_result(r.name, error="disabled", triggered=False))
                continue
            pts = points_of(rule.metric, rule.time_grain_seconds, rule.statistic, rule.divide_per_instance,
                            policy_warmup, r.periods)
            prev = prev_states.get(r.key)
            if prev is not None and prev not in _ALARM_STATES:
                _bad_alarm_states(prev_states)
            ev = evaluate_alarm(pts, r.breaches, r.n, r.m, rule.treat_missing_data, prev)
            states[r.key] = ev.state
            err = None if rule.metric in metrics_obs else f"no observations for metric {rule.metric!r}"
            if ev.state != ALARM:
                results.append(_result(r.name, value=_json(ev.evaluated[0] if ev.evaluated else None),
                                       error=err, triggered=False))
                if tracing:
                    ctx.note("alarm", r.key, ev.state, f"{ev.breaching} of {len(ev.evaluated)} datapoints "
                             f"breaching, {r.m} of {r.n} needed ({rule.treat_missing_data})")
                continue
            if not invoke(r.key, rule.time_grain_seconds):
                results.append(_result(r.name, value=_json(ev.evaluated[0] if ev.evaluated else None),
                                       error=err, triggered=True))
                if tracing:
                    ctx.note("alarm", r.key, ev.state, "held: the alarm already invoked the policy this period")
                continue
            if r.step:
                if not ev.evaluated:   # ALARM on missing data alone: no value to choose a step from
                    results.append(_result(r.name, error=err, triggered=True))
                    continue
                value = aggregate(ev.evaluated, rule.time_aggregation)
                d = (value if type(value) is Fraction or type(value) is int else exact(value)) - r.threshold
                chosen = select_step(r.steps, d, r.scale_out)
                if chosen is None:
                    results.append(_result(r.name, value=_json(value), error=err, triggered=True))
                    if tracing:
                        ctx.note("step", r.key, None, f"value {_json(value)}: no step holds "
                                 f"{format_number(d)} from the threshold")
                    continue
                base = fleet.base_out(policy_warmup) if r.scale_out else fleet.base_in
                p = new_capacity(base, r.adjustment_type, chosen[2], r.mam)
                # a step policy waits for no cooldown; the one its activity imposes on simple
                # policies is its rule's (spec: last_scale.cooldown_seconds), else the default
                cd = r.cooldown if r.cooldown is not None else default_cd
            else:
                value = ev.evaluated[0] if ev.evaluated else None
                base = fleet.base_in
                p = new_capacity(base, r.adjustment_type, r.adjustment, r.mam)
                cd = r.cooldown if r.cooldown is not None else default_cd
                # "the policy must wait for the scaling activity … to complete and the cooldown
                # period to expire before responding to additional alarms"
                why = None
                if fleet.activity_in_progress:
                    why = "ActivityInProgress"
                else:
                    if cooling is None:
                        cooling = self._cooling_down(state.last_scale, now, default_cd)
                    if cooling:
                        why = "CooldownActive"
                if why is not None:
                    results.append(_result(r.name, p, value=_json(value), error=err, triggered=True))
                    if blocked is None or why == "ActivityInProgress":
                        blocked = why
                    if tracing:
                        ctx.note("simple rule", r.key, p, f"held: {why}")
                    continue
            results.append(_result(r.name, p, value=_json(value), error=err, triggered=True))
            if tracing:
                ctx.note("step rule" if r.step else "simple rule", r.key, p,
                         f"alarm ALARM; {r.adjustment_type} from a capacity of {base}")
            if r.scale_out:
                if p > cur:
                    out.append((p, "rule", cd, r.key))
            elif p < cur:
                ins.append((p, "rule", cd, r.key))

        if proposal is not None:
            if proposal > cur:
                out.append((proposal, "metric", default_cd, "observations.proposal"))
            elif proposal < cur:
                ins.append((proposal, "metric", default_cd, "observations.proposal"))

        # -- combine: the largest capacity wins, both ways ---------------------------------------
        reason: Optional[str] = None
        winner = None
        if out:
            winner = max(out, key=_first)
            desired = winner[0]
        elif ins:
            if fleet.scale_out_in_progress:
                desired, reason = cur, "ActivityInProgress"
            elif fleet.any_warming(block_warmup):
                desired, reason = cur, "ScaleDownStabilized"
            else:
                winner = max(ins, key=_first)
                desired = winner[0]
        else:
            desired = cur
            reason = blocked
        if tracing:
            ctx.note("combine", cur, desired, (f"largest capacity: {winner[3]}" if winner else
                                               (reason or "no policy changes the capacity")))
        cause = winner[1] if winner else None
        cooldown = winner[2] if winner else default_cd

        # -- predictive scaling ---------------------------------------------------------------------
        max_r = c.max_replicas
        eff_max = max_r
        stored = state.extra.get(STATE_MAX)
        if stored is not None:
            if type(stored) is not int or stored < 0:
                raise RequestError(f"$.state['{STATE_MAX}']",
                                   f"must be a non-negative integer (a maximum raised by predictive "
                                   f"scaling), got {stored!r}")
            if max_r is not None and stored > max_r:
                eff_max = stored
        if policy.predictive is not None and obs.forecast is not None:
            forecast = self.forecast_capacity(ctx)
            if forecast is not None:
                p = policy.predictive
                if p.max_capacity_breach_behavior == "IncreaseMaxCapacity" and eff_max is not None:
                    buf = p.max_capacity_buffer_percent
                    buf = exact(C.AWS_PREDICTIVE_MAX_CAPACITY_BUFFER if buf is None else buf)
                    raised = math.ceil(Fraction(forecast) * (100 + buf) / 100)
                    if raised > eff_max:
                        if tracing:
                            ctx.note("max capacity", eff_max, raised,
                                     f"IncreaseMaxCapacity: forecast {forecast} + {format_number(buf)}%")
                        eff_max = raised
                        state.extra[STATE_MAX] = raised
                if forecast > desired:
                    if tracing:
                        ctx.note("forecast", desired, forecast, "predictive scaling: the forecast capacity is higher")
                    desired, cause, reason, cooldown = forecast, "forecast", "ForecastFloor", default_cd

        # -- bounds --------------------------------------------------------------------------------
        final = desired
        min_r = c.min_replicas
        if eff_max is not None and final > eff_max:
            final, reason = eff_max, "TooManyReplicas"
        elif final < min_r:
            final, reason = min_r, "TooFewReplicas"
        if tracing and final != desired:
            ctx.note("bounds", desired, final, f"within [{min_r}, {eff_max}]")
        if final != cur and (cause is None or (final > cur) != (desired > cur)):
            cause = "boundary"

        if states:
            state.extra[STATE_ALARMS] = states
        for key, last in prev_invoked.items():   # an alarm that left ALARM keeps its period
            if key not in invoked and type(last) in (int, float) and last <= end \
                    and end - last < c.grains.get(key, 0):
                invoked[key] = last
        if invoked:
            state.extra[STATE_INVOKED] = invoked
        elif STATE_INVOKED in state.extra:
            del state.extra[STATE_INVOKED]
        self._track_activity(state, fleet)
        if state.recommendations is None:
            state.recommendations = TimeLog()
        state.recommendations.append(now, final)
        error = None
        if final == cur and reason is None and proposal is None and results and \
                all(r.get("error") for r in results):
            # spec (Response, error): "set, with desired_replicas == current_replicas, when no
            # decision can be made (every metric failed …)": every alarm lacks data (AWS
            # leaves the group alone in INSUFFICIENT_DATA) and nothing else moved it
            reason = "InvalidMetrics"
            error = f"every metric failed ({len(results)} of {len(results)}), first error is: {results[0]['error']}"
        return Decision(final, final, reason or "DesiredWithinRange", results, error=error,
                        cause=cause or "metric", cooldown_seconds=cooldown)

    # ------------------------------------------------------------------------- helpers
    @staticmethod
    def _cooling_down(last: Optional[dict], now: float, default_cd: float) -> bool:
        """A simple policy waits while ``now < completed_at + cooldown`` (the cooldown
        counts from when the last activity finished; default: its start)."""
        if not last:
            return False
        start = last.get("completed_at")
        if start is None:
            start = last.get("time")
        if start is None:
            return False
        cd = last.get("cooldown_seconds")
        if cd is None:
            cd = default_cd
        return now < start + cd

    @staticmethod
    def _track_activity(state, fleet: Fleet) -> None:
        """Fill ``last_scale.completed_at`` when the caller has not: the first
        decision that sees the activity finished after seeing it in progress."""
        last = state.last_scale
        if not last or last.get("completed_at") is not None:
            return
        if fleet.activity_in_progress:
            last[_IN_PROGRESS] = True
        elif last.pop(_IN_PROGRESS, False):
            last["completed_at"] = fleet.now

    @staticmethod
    def forecast_capacity(ctx: Context) -> Optional[int]:
        """The forecast capacity predictive scaling acts on now, or None.

        ``observations.forecast.replicas`` is the capacity for the coming period
        (its producer applied ``SchedulingBufferTime``). When the forecast also
        carries ``series`` ``[[t, replicas], …]`` (hourly capacities, an
        extension the protocol model must accept), the buffer is applied here:
        the hour in force, raised to a later hour whose launch time
        ``t − scheduling_buffer_seconds`` has come ("the forecast says to add
        capacity at 10:00 AM, and you choose to pre-launch instances by 5 minutes
        … launched at 9:55 AM"); a lower hour waits for its start (:func:`forecast_at`)."""
        f = ctx.obs.forecast
        if f is None or predictive_mode(ctx, AwsSemantics.default_predictive_mode) != "ForecastAndScale":
            return None
        series = getattr(f, "series", None)
        if series:
            buf = ctx.policy.predictive.scheduling_buffer_seconds
            buf = C.AWS_PREDICTIVE_SCHEDULING_BUFFER if buf is None else buf
            return forecast_at(series, ctx.now, buf, f.replicas)
        return f.replicas


def utilization_scale(members, resource: str) -> dict:
    """``100 / request`` per member with a request for ``resource``: its usage
    samples become a utilization percent (CloudWatch's ``CPUUtilization``).
    Members without a request are taken to report a percent already."""
    out = {}
    for m in members or ():
        r = None if m.requests is None else m.requests.get(resource)
        if r is not None:
            q = exact(r)
            if q > 0:
                out[m.name] = Fraction(100) / q
    return out


def forecast_at(series, now: float, buffer: float, default: Optional[int] = None) -> Optional[int]:
    """The forecast capacity in force at ``now`` from points ``(t, replicas)``: the
    latest point with ``t ≤ now`` (``default`` when none has begun), raised to any
    point whose launch time ``t − buffer`` has come. SchedulingBufferTime advances
    *launches* only ("the instance launch time can be advanced … launched at
    9:55 AM"): a lower hour takes effect when it begins, not ``buffer`` early."""
    cur_t = None
    value = default
    ahead = None
    for t, r in series:
        if r is None:
            continue
        if t <= now:
            if cur_t is None or t >= cur_t:
                cur_t, value = t, r
        elif t - buffer <= now and (ahead is None or r > ahead):
            ahead = r
    if ahead is not None and (value is None or ahead > value):
        value = ahead
    return None if value is None else int(math.ceil(value))


@hookimpl
def scalebridge_register_semantics(register):
    register(AwsSemantics())
