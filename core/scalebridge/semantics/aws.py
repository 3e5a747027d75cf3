"""The ``aws`` semantics: Amazon EC2 Auto Scaling dynamic and predictive scaling.

What it reproduces (the rules and the choices where AWS is silent are listed in
docs/research/aws.md; the side-by-side section is docs/semantics/aws.md), one
named stage each, in this order:

- **target tracking** (:func:`target_tracking`) — ``policy.metrics``: AWS's own pair of alarms (above the
  target for 3 of 3 one-minute datapoints; below 90 % of it for 15 of 15) and
  ``ceil(capacity × value / target)``; scale-out if any policy is ready, scale-in
  only when every policy with scale-in enabled is.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html
- **step scaling** (:func:`step_and_simple_scaling`) — a rule with ``steps``: its CloudWatch alarm
  (:mod:`..stages.alarms`) in ALARM runs it once per alarm period; the step is
  chosen from the rule's ``time_aggregation`` of the evaluated datapoints
  relative to the threshold and applied to the capacity in service
  (:mod:`..stages.steps`); warming instances are left out of a scale-out's
  base (:mod:`..stages.warmup`); no cooldown.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html
- **simple scaling** — a rule with an ``action``: waits while a scaling
  activity is in progress and until the cooldown after the last one expires
  (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scaling-cooldowns.html).
- **several policies** (:func:`combine`) — "chooses the policy that provides the largest capacity
  for both scale out and scale in"; scale-in waits while a scale-out is in
  progress or instances warm up.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scale-based-on-demand.html#multiple-scaling-policy-resolution
- **predictive scaling** (:func:`predictive_scaling`) — under ``ForecastAndScale`` the forecast capacity
  joins by max (never scales in); ``IncreaseMaxCapacity`` raises the maximum to
  ``ceil(forecast × (100 + buffer) / 100)``, kept in ``state["aws.max_capacity"]``.
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html
- **bounds** (:func:`bounds`) — the result is always within ``[min_replicas, max]``, even when no
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

The policy's alarms and targets are compiled once per policy (:mod:`.aws_policy`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from .. import constants as C
from ..errors import RequestError
from ..policy import Metric, Policy, require_stated_utilization
from ..stages.alarms import (ALARM, INSUFFICIENT_DATA, aggregate, all_breaching, datapoints, evaluate_alarm,
                              series_datapoints)
from ..stages.proposals import invalid_usage
from ..stages.signals import predictive_mode
from ..stages.steps import new_capacity, select_step
from ..stages.warmup import GroupCapacity
from ..state import DecisionState, TimeLog
from ..units import exact, format_number
from .aws_policy import TT_SCALE_IN, _Compiled, ceil_ratio, compile_policy, tt_alarms
from .base import Context, Decision, MetricResult, Need, Semantics
from ..reads import SERIES

STATE_ALARMS = "aws.alarm_states"
STATE_MAX = "aws.max_capacity"
STATE_INVOKED = "aws.alarm_invoked"
_IN_PROGRESS = "aws.in_progress"


def _json(v):
    """A datapoint as JSON: an int when whole."""
    if v is None or type(v) is int:
        return v
    if type(v) is float:
        return int(v) if v.is_integer() else v
    return format_number(v)


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


# ----------------------------------------------------------------------------- one decision's working set


class _Run:
    """What the stages of one decision share: the observations read once, the
    alarms' states and invocations, and the capacities each policy asks for.
    (A plain class: one is made per decision.)"""
    __slots__ = ("ctx", "c", "metrics", "members", "end", "group", "default_cd", "policy_warmup", "prev_states",
                 "prev_invoked", "tracing", "block_warmup", "invoked", "states", "results", "out", "ins", "blocked",
                 "series")

    def __init__(self, ctx: Context, c: _Compiled):
        s, obs, state = ctx.settings, ctx.obs, ctx.state
        self.ctx = ctx
        self.c = c
        default_cd = s.default_cooldown_seconds
        if default_cd is None:
            default_cd = C.AWS_DEFAULT_COOLDOWN
        self.default_cd = default_cd                  # the group's DefaultCooldown
        # the policy's EstimatedInstanceWarmup: resolve_warmup(None, policy.initialization_period_seconds,
        # settings), whose last fallback, the default cooldown, is default_cd
        warmup = c.warmup
        if warmup is None:
            warmup = s.default_instance_warmup_seconds
            if warmup is None:
                warmup = default_cd
        self.policy_warmup = self.block_warmup = warmup   # block_warmup: the longest that blocks a scale-in
        prev_states = state.extra.get(STATE_ALARMS) or {}
        if type(prev_states) is not dict:
            _bad_alarm_states(prev_states)
        prev_invoked = state.extra.get(STATE_INVOKED) or {}
        if type(prev_invoked) is not dict:
            _bad_invoked(prev_invoked)
        self.prev_states = prev_states
        self.prev_invoked = prev_invoked
        self.end = ctx.now - (s.metric_delay_seconds or 0.0)   # the newest datapoint's period ends here
        self.metrics = obs.metrics
        self.members = members = obs.members
        self.group = GroupCapacity(ctx.now, ctx.current, obs.status_replicas, members)
        self.tracing = ctx.trace is not None
        self.invoked: dict = {}
        self.states: dict = {}
        self.results: list = []       # MetricResult, in policy order
        self.out: list = []           # scale-outs: (replicas, cause, cooldown, what)
        self.ins: list = []           # scale-ins, likewise
        self.blocked: Optional[str] = None   # why a simple policy was held
        self.series: dict = {}        # datapoints, computed once per metric and grain

    def invoke(self, key: str, grain: float) -> bool:
        """An alarm in ALARM invokes its policy once per period ("the alarm
        continues to invoke the action for every period that the alarm
        remains in the new state"): not again within ``grain`` of the last time."""
        last = self.prev_invoked.get(key)
        end = self.end
        if last is not None:
            if type(last) is not int and type(last) is not float:
                _bad_invoked(self.prev_invoked)
            if last <= end and end - last < grain:
                self.invoked[key] = last
                return False
        self.invoked[key] = end
        return True

    def points(self, key: tuple, warmup: float, need: int, resource: Optional[str] = None) -> list:
        """The datapoints of the ``need`` newest periods of one metric at one grain
        (``key``: metric, grain, statistic, divided per instance), newest first, computed
        once per decision for the longest range any alarm on it reads
        (``_Compiled.periods``) — or, from a series no other alarm reads, for the ``need``
        periods only (not kept: asked for more, all are computed). ``resource``: the
        members' samples are usage of that resource, turned into a percent of each
        member's request (a Utilization target)."""
        mo = self.metrics.get(key[0])
        series = None
        if mo is not None:
            series = mo.series
            if series is None and (mo.member_series or mo.members):   # by members: their warm-up counts
                key = (*key, warmup, resource)
        pts = self.series.get(key)
        if pts is None:
            name, grain, statistic, divided = key[:4]
            length = self.c.periods[key if len(key) == 4 else key[:4]]   # at least ``need``
            if series is not None and not divided:
                if need < length and key not in self.c.shared:
                    return series_datapoints(series, self.end, grain, length, statistic, need)
                pts = series_datapoints(series, self.end, grain, length, statistic)
            else:
                group = self.group
                by_members = len(key) > 4
                keep = group.metric_members(warmup) if by_members and group.has_members else None
                scale = utilization_scale(self.members, resource) if by_members and resource else None
                pts = datapoints(mo, self.end, grain, length, statistic, keep,
                                 (group.in_service or 1) if divided else 1, scale)
            self.series[key] = pts
        return pts if len(pts) == need else pts[:need]


# ----------------------------------------------------------------------------- the stages


def target_tracking(run: _Run) -> None:
    """Each target tracking policy, at its metric period (60 s, or 10 or 30 s for a
    high-resolution metric: constants.AWS_TT_ALARM_DATAPOINTS): its high alarm (3 of 3 one-minute datapoints
    above the target) asks for ``ceil(capacity × value / target)`` from the
    capacity in service and not warming; its low alarm (15 of 15 below 90 % of
    the target) for the same from the whole capacity. A scale-in is asked for
    only when every policy with scale-in enabled is ready to scale in
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html)."""
    ctx, group, cur = run.ctx, run.group, run.ctx.current
    tracing, results, states, prev_states = run.tracing, run.results, run.states, run.prev_states
    voters = 0
    ready: list = []
    all_ready = True
    for t in run.c.targets:
        if not t.enabled:
            results.append(MetricResult(t.name, error="disabled"))
            continue
        hi_n = t.high_n    # at the metric's period (10, 30 or 60 s): constants.AWS_TT_ALARM_DATAPOINTS
        lo_n = t.low_n
        hi_range = hi_n + C.AWS_ALARM_EXTRA_PERIODS    # each alarm's evaluation range
        lo_range = lo_n + C.AWS_ALARM_EXTRA_PERIODS
        # resolve_warmup(mt.initialization_period_seconds, policy.initialization_period_seconds, s)
        warmup = t.warmup
        if warmup is None:
            warmup = run.policy_warmup
        if warmup > run.block_warmup:
            run.block_warmup = warmup
        # the high alarm's range first: the newest datapoints most often decide both alarms
        pts = run.points(t.series_key, warmup, hi_range, t.resource)
        invalid = None
        if t.usage:
            mo = run.metrics.get(t.name)
            if mo is not None:
                invalid = invalid_usage(mo.members, mo.member_series, run.members, t.name)
        if invalid is not None:   # an impossible observation: no datapoints, as a missing metric
            pts = [None] * lo_range
        elif t.zeros:
            # "emits zeros for periods with no associated data": never insufficient data, and
            # target tracking can scale in on no traffic (UG as-scaling-target-tracking.html)
            pts = [0 if v is None else v for v in pts]
        # both alarms need every datapoint breaching: OK at the first real one that does not
        high = all_breaching(pts, t.high, hi_n, hi_range)
        low = all_breaching(pts, t.low, lo_n, lo_range)
        if high is None or low is None:
            if len(pts) < lo_range:   # the low alarm's whole range
                pts = run.points(t.series_key, warmup, lo_range, t.resource)
                if t.zeros:
                    pts = [0 if v is None else v for v in pts]
                if low is None:
                    low = all_breaching(pts, t.low, lo_n, lo_range)
            if high is None:
                high = evaluate_alarm(pts[:hi_range], t.high, hi_n, hi_n, "missing",
                                      prev_states.get(t.high_key)).state
            if low is None:
                low = evaluate_alarm(pts, t.low, lo_n, lo_n, "missing", prev_states.get(t.low_key)).state
        states[t.high_key] = high
        states[t.low_key] = low
        scale_in_enabled = t.scale_in
        if scale_in_enabled:
            voters += 1
        # the newest datapoint: the first one an alarm in ALARM evaluated, else for information
        for value in pts:
            if value is not None:
                break
        else:
            value = None
        replicas = None
        if high == ALARM:
            replicas = ceil_ratio(group.base_out(warmup), value, t.target, t.target_float)
            if run.invoke(t.high_key, t.period):
                if replicas > cur:
                    run.out.append((replicas, "metric", run.default_cd, t.name))
            elif tracing:
                ctx.note("target tracking", t.name, replicas, "held: the alarm already invoked the policy this period")
            if scale_in_enabled:
                all_ready = False
        elif low == ALARM:
            replicas = ceil_ratio(group.base_in, value, t.target, t.target_float)
            if scale_in_enabled:
                if replicas < cur:
                    ready.append((replicas, "metric", run.default_cd, t.name))
                else:
                    all_ready = False
        else:
            if scale_in_enabled:
                all_ready = False
            if value is not None:
                base = group.base_out(warmup) if t.high(value) else group.base_in
                replicas = ceil_ratio(base, value, t.target, t.target_float)
        err = invalid
        if err is None and value is None and high == INSUFFICIENT_DATA and low == INSUFFICIENT_DATA:
            err = (f"insufficient data: no datapoints for {t.name} in the last "
                   f"{lo_range} periods of {t.period:g}s")
        if type(value) is float:   # _json(value), inline for the common case
            shown = int(value) if value.is_integer() else value
        else:
            shown = _json(value)
        results.append(MetricResult(t.name, replicas, math.floor(value) if value is not None and t.utilization
                                    else None, shown, err))
        if tracing:
            ctx.note("target tracking", t.name, replicas,
                     f"high alarm {high}, low alarm {low}; value {shown} "
                     f"vs target {format_number(t.target)}")
    if voters and all_ready and len(ready) == voters:
        if run.invoke(TT_SCALE_IN, run.c.grains[TT_SCALE_IN]):
            run.ins.extend(ready)
        elif tracing:
            ctx.note("target tracking", "scale-in", None, "held: invoked already this period")


def step_and_simple_scaling(run: _Run) -> None:
    """Each rule's alarm; in ALARM, once per period: a step policy applies the
    step that holds the aggregated value's distance from the threshold (no
    cooldown, https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html);
    a simple policy its adjustment, unless a scaling activity is in progress or
    the cooldown after the last one has not expired
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scaling-cooldowns.html)."""
    ctx, group, cur = run.ctx, run.group, run.ctx.current
    tracing, results = run.tracing, run.results
    metrics_obs = run.metrics
    cooling: Optional[bool] = None
    for r in run.c.rules:
        if not r.enabled:
            results.append(MetricResult(r.name, error="disabled", triggered=False))
            continue
        pts = run.points(r.series_key, run.policy_warmup, r.periods)
        prev = run.prev_states.get(r.key)
        if prev is not None and prev not in _ALARM_STATES:
            _bad_alarm_states(run.prev_states)
        ev = evaluate_alarm(pts, r.breaches, r.n, r.m, r.treat_missing, prev)
        run.states[r.key] = ev.state
        err = None if r.metric in metrics_obs else f"no observations for metric {r.metric!r}"
        if ev.state != ALARM:
            results.append(MetricResult(r.name, value=_json(ev.evaluated[0] if ev.evaluated else None),
                                        error=err, triggered=False))
            if tracing:
                ctx.note("alarm", r.key, ev.state, f"{ev.breaching} of {len(ev.evaluated)} datapoints "
                         f"breaching, {r.m} of {r.n} needed ({r.treat_missing})")
            continue
        if not run.invoke(r.key, r.grain):
            results.append(MetricResult(r.name, value=_json(ev.evaluated[0] if ev.evaluated else None),
                                        error=err, triggered=True))
            if tracing:
                ctx.note("alarm", r.key, ev.state, "held: the alarm already invoked the policy this period")
            continue
        if r.step:
            if not ev.evaluated:   # ALARM on missing data alone: no value to choose a step from
                results.append(MetricResult(r.name, error=err, triggered=True))
                continue
            value = aggregate(ev.evaluated, r.aggregation)
            d = (value if type(value) is Fraction or type(value) is int else exact(value)) - r.threshold
            chosen = select_step(r.steps, d, r.scale_out)
            if chosen is None:
                results.append(MetricResult(r.name, value=_json(value), error=err, triggered=True))
                if tracing:
                    ctx.note("step", r.key, None, f"value {_json(value)}: no step holds "
                             f"{format_number(d)} from the threshold")
                continue
            base = group.base_out(run.policy_warmup) if r.scale_out else group.base_in
            p = new_capacity(base, r.adjustment_type, chosen[2], r.mam)
            # a step policy waits for no cooldown; the one its activity imposes on simple
            # policies is its rule's (the protocol's last_scale.cooldown_seconds), else the default
            cd = r.cooldown if r.cooldown is not None else run.default_cd
        else:
            value = ev.evaluated[0] if ev.evaluated else None
            base = group.base_in
            p = new_capacity(base, r.adjustment_type, r.adjustment, r.mam)
            cd = r.cooldown if r.cooldown is not None else run.default_cd
            # "the policy must wait for the scaling activity … to complete and the cooldown
            # period to expire before responding to additional alarms"
            why = None
            if group.activity_in_progress:
                why = "ActivityInProgress"
            else:
                if cooling is None:
                    cooling = cooling_down(ctx.state.last_scale, ctx.now, run.default_cd)
                if cooling:
                    why = "CooldownActive"
            if why is not None:
                results.append(MetricResult(r.name, p, value=_json(value), error=err, triggered=True))
                if run.blocked is None or why == "ActivityInProgress":
                    run.blocked = why
                if tracing:
                    ctx.note("simple rule", r.key, p, f"held: {why}")
                continue
        results.append(MetricResult(r.name, p, value=_json(value), error=err, triggered=True))
        if tracing:
            ctx.note("step rule" if r.step else "simple rule", r.key, p,
                     f"alarm ALARM; {r.adjustment_type} from a capacity of {base}")
        if r.scale_out:
            if p > cur:
                run.out.append((p, "rule", cd, r.key))
        elif p < cur:
            run.ins.append((p, "rule", cd, r.key))


def given_proposal(run: _Run, proposal: int) -> None:
    """``observations.proposal``: a count computed elsewhere replaces the policies."""
    cur = run.ctx.current
    if proposal > cur:
        run.out.append((proposal, "metric", run.default_cd, "observations.proposal"))
    elif proposal < cur:
        run.ins.append((proposal, "metric", run.default_cd, "observations.proposal"))


@dataclass(slots=True)
class _Outcome:
    desired: int
    reason: Optional[str]
    cause: Optional[str]
    cooldown: float


def combine(run: _Run) -> _Outcome:
    """"Amazon EC2 Auto Scaling chooses the policy that provides the largest
    capacity for both scale out and scale in"; a scale-in waits while a
    scale-out is in progress or instances warm up
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scale-based-on-demand.html#multiple-scaling-policy-resolution)."""
    group, cur = run.group, run.ctx.current
    reason: Optional[str] = None
    winner = None
    if run.out:
        winner = max(run.out, key=_first)
        desired = winner[0]
    elif run.ins:
        if group.scale_out_in_progress:
            desired, reason = cur, "ActivityInProgress"
        elif group.any_warming(run.block_warmup):
            desired, reason = cur, "ScaleDownStabilized"
        else:
            winner = max(run.ins, key=_first)
            desired = winner[0]
    else:
        desired = cur
        reason = run.blocked
    if run.tracing:
        run.ctx.note("combine", cur, desired, (f"largest capacity: {winner[3]}" if winner else
                                               (reason or "no policy changes the capacity")))
    return _Outcome(desired, reason, winner[1] if winner else None, winner[2] if winner else run.default_cd)


def predictive_scaling(run: _Run, o: _Outcome) -> Optional[int]:
    """The maximum in force, and the forecast capacity joined by max under
    ``ForecastAndScale`` (predictive scaling never scales in); ``IncreaseMaxCapacity``
    raises the maximum to ``ceil(forecast × (100 + buffer) / 100)``, kept in
    ``state["aws.max_capacity"]``
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html)."""
    ctx, state = run.ctx, run.ctx.state
    max_r = run.c.max_replicas
    eff_max = max_r
    stored = state.extra.get(STATE_MAX)
    if stored is not None:
        if type(stored) is not int or stored < 0:
            raise RequestError(f"$.state['{STATE_MAX}']",
                               f"must be a non-negative integer (a maximum raised by predictive "
                               f"scaling), got {stored!r}")
        if max_r is not None and stored > max_r:
            eff_max = stored
    p = run.c.predictive
    if p is not None and ctx.obs.forecast is not None:
        forecast = AwsSemantics.forecast_capacity(ctx)
        if forecast is not None:
            if p.max_capacity_breach_behavior == "IncreaseMaxCapacity" and eff_max is not None:
                buf = p.max_capacity_buffer_percent
                buf = exact(C.AWS_PREDICTIVE_MAX_CAPACITY_BUFFER if buf is None else buf)
                raised = math.ceil(Fraction(forecast) * (100 + buf) / 100)
                if raised > eff_max:
                    if run.tracing:
                        ctx.note("max capacity", eff_max, raised,
                                 f"IncreaseMaxCapacity: forecast {forecast} + {format_number(buf)}%")
                    eff_max = raised
                    state.extra[STATE_MAX] = raised
            if forecast > o.desired:
                if run.tracing:
                    ctx.note("forecast", o.desired, forecast, "predictive scaling: the forecast capacity is higher")
                o.desired, o.cause, o.reason, o.cooldown = forecast, "forecast", "ForecastFloor", run.default_cd
    return eff_max


def bounds(run: _Run, o: _Outcome, eff_max: Optional[int]) -> int:
    """The capacity within ``[MinSize, MaxSize]``, whether or not a policy fired
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/asg-capacity-limits.html);
    a move the bounds make (or turn around) is the boundary's."""
    cur = run.ctx.current
    final = o.desired
    min_r = run.c.min_replicas
    if eff_max is not None and final > eff_max:
        final, o.reason = eff_max, "TooManyReplicas"
    elif final < min_r:
        final, o.reason = min_r, "TooFewReplicas"
    if run.tracing and final != o.desired:
        run.ctx.note("bounds", o.desired, final, f"within [{min_r}, {eff_max}]")
    if final != cur and (o.cause is None or (final > cur) != (o.desired > cur)):
        o.cause = "boundary"
    return final


def record(run: _Run, final: int) -> None:
    """What the next decision reads: each alarm's state, when each alarm last
    invoked its policy (an alarm that left ALARM keeps its period), the
    activity's completion (:func:`track_activity`) and the recommendation."""
    state, end = run.ctx.state, run.end
    if run.states:
        state.extra[STATE_ALARMS] = run.states
    invoked = run.invoked
    if run.prev_invoked:
        grains = run.c.grains
        for key, last in run.prev_invoked.items():
            if key not in invoked and type(last) in (int, float) and last <= end \
                    and end - last < grains.get(key, 0):
                invoked[key] = last
    if invoked:
        state.extra[STATE_INVOKED] = invoked
    elif STATE_INVOKED in state.extra:
        del state.extra[STATE_INVOKED]
    last = state.last_scale
    if last and last.get("completed_at") is None:   # what track_activity looks at first
        track_activity(state, run.group)
    if state.recommendations is None:
        state.recommendations = TimeLog()
    state.recommendations.append(run.ctx.now, final)


def cooling_down(last: Optional[dict], now: float, default_cd: float) -> bool:
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


def track_activity(state: DecisionState, group: GroupCapacity) -> None:
    """Fill ``last_scale.completed_at`` when the caller has not: the first
    decision that sees the activity finished after seeing it in progress."""
    last = state.last_scale
    if not last or last.get("completed_at") is not None:
        return
    if group.activity_in_progress:
        last[_IN_PROGRESS] = True
    elif last.pop(_IN_PROGRESS, False):
        last["completed_at"] = group.now


# ----------------------------------------------------------------------------- the semantics


ALARM_MIN_PERIOD_SECONDS = 10
"""CloudWatch PutMetricAlarm ``Period``: "Valid values are 10, 30, and any multiple of 60"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html)."""
ALARM_MAX_EVALUATION_SECONDS = 86_400
"""PutMetricAlarm ``EvaluationPeriods``: "An alarm's total current evaluation period can be
no longer than one day, so this number multiplied by Period cannot be more than 86,400 seconds"
(same page). It also bounds the work of one alarm evaluation: at most 8,640 periods."""


def _check_alarm_period(k: int, rule) -> None:
    if rule.time_grain_seconds < ALARM_MIN_PERIOD_SECONDS:
        raise RequestError(f"$.policy.rules[{k}].time_grain_seconds",
                           f"an alarm's Period is at least {ALARM_MIN_PERIOD_SECONDS} seconds in the aws semantics "
                           f"(PutMetricAlarm Period: 10, 30 or a multiple of 60), got {rule.time_grain_seconds:g}")
    total = rule.evaluation_periods * rule.time_grain_seconds
    if total > ALARM_MAX_EVALUATION_SECONDS:
        raise RequestError(f"$.policy.rules[{k}].time_window_seconds",
                           f"an alarm evaluates at most {ALARM_MAX_EVALUATION_SECONDS:,} seconds in the aws semantics "
                           f"(PutMetricAlarm: EvaluationPeriods × Period), got {total:g}")


class AwsSemantics(Semantics):
    name = "aws"
    summary = ("Amazon EC2 Auto Scaling: step, simple and target-tracking scaling policies with "
               "CloudWatch alarms, instance warm-up, cooldowns and predictive scaling")
    # PredictiveScalingConfiguration.Mode: "Defaults to ForecastOnly if not specified."
    # https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PredictiveScalingConfiguration.html
    default_predictive_mode = "ForecastOnly"
    # target tracking (metrics), step and simple scaling (rules), predictive scaling
    decides_from = frozenset({"metrics", "rules", "predictive"})
    ignores = {"profiles": "an Auto Scaling group has no instance profiles",
               "schedules": "AWS's scheduled actions change a group's bounds, outside its scaling policies",
               "behavior": "AWS scaling policies have cooldowns and warm-ups, not behaviors",
               "scale_in_control": "an Auto Scaling group has no scale-in controls"}
    color = "#ff9900"
    forecast_grain_seconds = C.AWS_FORECAST_GRAIN_SECONDS

    def metric_need(self, metric: Metric) -> Need:
        """A target-tracking metric is read as CloudWatch datapoints per period (its
        ``period_seconds``: 10, 30 or 60), over its scale-in alarm's datapoints
        (constants.AWS_TT_WINDOW_SECONDS at 60 s)."""
        period, (_, low_n) = tt_alarms(metric)
        return Need(metric.name, metric.type, metric, period * low_n, period, SERIES)

    def check(self, policy: Policy) -> None:
        if policy.min_replicas is None:
            raise RequestError("$.policy.min_replicas",
                               "required by the aws semantics (the Auto Scaling group's MinSize)")
        require_stated_utilization(policy, "required by the aws semantics (TargetTrackingConfiguration."
                                           "TargetValue is required)")
        for k, r in enumerate(policy.rules):
            _check_alarm_period(k, r)
            if r.steps is not None and r.adjustment_type is None:
                raise RequestError(f"$.policy.rules[{k}].adjustment_type",
                                   "required by the aws semantics for a step-scaling rule "
                                   "(PutScalingPolicy AdjustmentType): ChangeInCapacity, "
                                   "PercentChangeInCapacity or ExactCapacity")
            if r.steps is None and r.action is not None and r.action.type == "ServiceAllowedNextValue":
                raise RequestError(f"$.policy.rules[{k}].action.type",
                                   "ServiceAllowedNextValue is an Azure action; the aws semantics takes "
                                   "ChangeCount, PercentChangeCount or ExactCount")

    def _compiled(self, policy: Policy) -> _Compiled:
        return self.cached(policy, self._build)

    def _build(self, policy: Policy) -> _Compiled:
        self.check(policy)
        return compile_policy(policy)

    _RETENTION = {"recommendations": 0.0, "sizes": 0.0, "scale_up_events": 0.0, "scale_down_events": 0.0}

    def retention(self, ctx: Context) -> dict[str, float]:
        # AWS keeps no windows over past decisions: cooldowns read last_scale, alarms the series.
        return self._RETENTION

    def decide(self, ctx: Context) -> Decision:
        c = self._compiled(ctx.policy)
        run = _Run(ctx, c)
        proposal = ctx.obs.proposal
        if proposal is None:
            if c.targets:
                target_tracking(run)
            if c.rules:
                step_and_simple_scaling(run)
        else:
            given_proposal(run, proposal)
        o = combine(run)
        if c.predictive is None and STATE_MAX not in ctx.state.extra:
            eff_max = c.max_replicas   # what predictive_scaling finds with nothing to read
        else:
            eff_max = predictive_scaling(run, o)
        final = bounds(run, o, eff_max)
        record(run, final)
        results = run.results
        reason, error = o.reason, None
        if final == ctx.current and reason is None and proposal is None and results:
            for r in results:
                if not r.error:
                    break
            else:
                # the protocol (Response, ``error``): "set, with desired_replicas == current_replicas,
                # when no decision can be made (every metric failed …)": every alarm lacks data (AWS
                # leaves the group alone in INSUFFICIENT_DATA) and nothing else moved it
                reason = "InvalidMetrics"
                error = (f"every metric failed ({len(results)} of {len(results)}), first error is: "
                         f"{results[0].error}")
        return Decision(final, final, reason or "DesiredWithinRange", results,
                        error=error, cause=o.cause or "metric", cooldown_seconds=o.cooldown)

    # ------------------------------------------------------------------------- helpers
    _cooling_down = staticmethod(cooling_down)
    _track_activity = staticmethod(track_activity)

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
