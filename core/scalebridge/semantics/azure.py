"""The ``azure`` semantics: Azure Monitor autoscale (virtual machine scale sets,
App Service plans and the other resources it scales).

A composition of shared stages with Azure's defaults, one named stage each, in
this order:

1. **profile** (:func:`..stages.profiles.scope_in_force`): the fixed-date
   profile in force, else the recurrence with the latest start, else the
   default profile — its capacity (minimum, maximum, default) and its rules
   replace the policy's;
2. **rules** (:func:`evaluate_rules`, :func:`combine`; :mod:`..stages.rules`):
   every rule's metric over its window; scale out if any scale-out rule fires
   (highest count), in only if all scale-in rules fire (smallest reduction);
   Azure predictive autoscale lets a forecast fire a scale-out rule within the
   look-ahead;
3. **default capacity** (:func:`default_capacity`, :func:`default_floor`): when
   a metric cannot be read, ``max(current, default)`` (reason
   ``ProfileDefault``); when a readable scale-out rule fires as well, the
   default is a floor below its count (current < default);
4. **cooldown** (:func:`rule_cooldowns`, :func:`given_proposal`;
   :mod:`..stages.cooldown`): a fired rule counts only once its own cooldown
   has elapsed since the last rule-caused action; a direction the cooling rules
   hold keeps the size (``CooldownActive``);
5. **flapping** (:func:`flapping`; :mod:`..stages.flapping`): a scale-in whose
   estimate would fire a scale-out rule is reduced or skipped;
6. **capacity forecast** (:func:`capacity_forecast`): ``observations.forecast``
   is a floor, never a scale-in by itself;
7. **bounds** (:func:`bounds`): the profile's ``[minimum, maximum]``, which
   ignore cooldowns;
8. **record** (:func:`record`): the scale action's cause and cooldown; a move
   that is not a rule's keeps the rule action it overwrites.

Every rule and choice is cited in ``docs/semantics/azure.md``;
``docs/research/azure.md`` holds the sources and the undocumented points.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import RequestError
from ..policy import Policy
from ..stages.cooldown import (combine_eligible, cooldown_horizon, cooldown_until, note_scale_action,
                               remember_rule_action, rule_cooldown, start_of_cooldowns)
from ..stages.flapping import prevent_flapping, scale_out_projections
from ..stages.profiles import ProfileTimeline, Scope, scope_in_force
from ..stages.rules import CombinedRules, RuleEvaluation, combine_rules, evaluate_rule, forecast_fires
from ..stages.signals import forecast_floor, predictive_mode
from ..state import TimeLog
from ..units import format_number
from .base import Context, Decision, MetricResult, Semantics, carried_out


@dataclass(slots=True)
class _Compiled:
    timeline: Optional[ProfileTimeline]
    scopes: dict            # id(Profile) -> Scope
    top: Optional[Scope]    # the policy's own fields (no profile in force)
    event_horizon: float    # seconds of scale events the cooldown may need
    retention: dict         # settings.default_cooldown_seconds -> retention() answer
    # the policy's fields a decision reads, read once (a model's attribute read costs 4x, protocol._Bulk)
    has_metrics: bool
    allowed: Optional[list]
    look_ahead: Optional[float]


# ----------------------------------------------------------------------------- the stages


@dataclass(slots=True)
class _Outcome:
    """The count the rules (or ``observations.proposal``) ask for, as the stages after
    them hold, reduce, floor and bound it."""
    proposal: int
    direction: Optional[str]            # what was asked: "Increase", "Decrease" or None
    winners: list                       # the rule evaluations whose count was chosen
    cause: str                          # "rule", or "metric" for observations.proposal
    rules: Optional[CombinedRules] = None   # the rules' combination (none for a proposal)
    unreadable: Optional[list] = None   # the rules whose metric cannot be read
    reason: str = "DesiredWithinRange"
    held: bool = False                  # a cooldown keeps the size
    floor: Optional[int] = None         # the default capacity below a scale-out (a metric unreadable)
    from_default: bool = False          # that default set the count
    error: Optional[str] = None


def evaluate_rules(ctx: Context, comp: _Compiled, scope: Scope, mode: str) -> tuple[list, list]:
    """Every enabled rule in force (:func:`..stages.rules.evaluate_rule`: the statistic
    per grain, the time aggregation over the window, per instance, against the threshold)
    and each rule's response entry, in order (a disabled rule has an entry only).

    Azure predictive autoscale
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-predictive): under
    ``Enabled`` (``ForecastAndScale``) a forecast point within the look-ahead (none given:
    the rule's time grain) fires a scale-out rule — "actual or predicted data shows that
    CPU usage is or will be over 70%, then a scale out will occur"; under ``ForecastOnly``
    the entry says whether it would (``forecast_triggered``) and nothing acts on it."""
    look_ahead = comp.look_ahead
    settings = ctx.settings
    rounding = settings.percent_rounding or "ceil"
    allowed = comp.allowed
    delay = settings.metric_delay_seconds or 0.0
    now, current = ctx.now, ctx.current
    metrics_obs = ctx.obs.metrics
    evals: list[RuleEvaluation] = []
    out: list = []
    points: dict = {}
    for index, rule in scope.rules:
        if not rule.enabled:
            out.append(MetricResult(rule.name or rule.metric, triggered=False))
            continue
        obs = metrics_obs.get(rule.metric)
        horizon = None
        if mode == "ForecastAndScale":
            horizon = look_ahead if look_ahead is not None else rule.time_grain_seconds
        e = evaluate_rule(rule, index, obs, now, current, delay=delay, forecast_horizon=horizon,
                          allowed=allowed, rounding=rounding, cache=points)
        evals.append(e)
        v = e.value
        if v is not None:
            v = v.approx
            if type(v) is not int:
                v = format_number(v)
        r = MetricResult(rule.name or rule.metric, e.result, value=v, error=e.error, triggered=e.fired)
        if e.forecast is not None:
            r.forecast_triggered = True
        elif mode == "ForecastOnly" and rule.direction == "Increase" and obs is not None and obs.forecast:
            h = look_ahead if look_ahead is not None else rule.time_grain_seconds
            r.forecast_triggered = forecast_fires(rule, obs, now, h, current) is not None
        out.append(r)
    return evals, out


def combine(ctx: Context, evals: list) -> _Outcome:
    """The fired rules combined (:func:`..stages.rules.combine_rules`): "If more than one
    scale-out rule is triggered, autoscale scales to the highest specified capacity";
    "Autoscale only scales in if all the scale-in rules are triggered", and then "by as
    little as possible"
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings);
    and which rules' metrics cannot be read (no value, and no forecast fired them)."""
    current = ctx.current
    combined = combine_rules(evals, current)
    if ctx.trace is not None:
        ctx.note("rules", current, combined.count, combined.why)
    o = _Outcome(combined.count, combined.direction, combined.winners, "rule", combined)
    if evals:
        o.unreadable = [e for e in evals if e.value is None and not e.fired]
    return o


def default_capacity(ctx: Context, scope: Scope, evals: list, unreadable: list, results: list,
                     fallback_cd: float) -> Decision:
    """A rule's metric cannot be read and no readable scale-out rule fires: ``max(current,
    default)`` within ``[minimum, maximum]``, reason ``ProfileDefault`` — "If there's a
    problem reading the resource metric, and the current capacity is below the default,
    autoscale scales out to the default. … If the current capacity is already higher than
    the default capacity, autoscale doesn't scale in"
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings).
    The move starts no cooldown, and keeps the rule action it overwrites."""
    state, now, current = ctx.state, ctx.now, ctx.current
    lo, hi = scope.minimum, scope.maximum
    target = max(current, scope.default)
    final = min(max(target, lo), hi)
    state.recommendations.append(now, target)
    ctx.note("default capacity", current, final,
             f"metrics cannot be read: max(current {current}, default {scope.default}) "
             f"within [{lo}, {hi}]")
    if final != current:
        remember_rule_action(state, now, fallback_cd)
    error = (f"metrics unavailable ({len(unreadable)} of {len(evals)} rules): {unreadable[0].error}; "
             f"using the default capacity {scope.default}")
    return Decision(final, final, "ProfileDefault", results, profile=scope.name, error=error,
                    cause="default" if final == target else "boundary")


def rule_cooldowns(ctx: Context, evals: list, o: _Outcome, fallback_cd: float) -> None:
    """Each fired rule counts only once its own cooldown has elapsed since the most recent
    rule action (:func:`..stages.cooldown.combine_eligible`): "A rule becomes eligible to
    initiate a scale action when its own cooldown has elapsed since the most recent scale
    action. Cooldown isn't applied globally based on the rule that performed the most recent
    scale action"
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings,
    the cooldown section). The eligible rules decide; when the cooling rules hold the
    direction asked for, the size is kept (``o.held``: ``CooldownActive``)."""
    now = ctx.now
    asked = o.rules
    elig = combine_eligible(evals, asked, ctx.state, now, fallback_cd, ctx.current)
    if elig.until is not None and ctx.trace is not None:
        ctx.note("cooldown", asked.count, elig.combined.count,
                 "a fired rule is still in its own cooldown (eligible from "
                 f"{elig.until:g}, {elig.until - now:g}s from now)" +
                 ("; nothing moves" if elig.held else "; the eligible rules decide"))
    if elig.held:
        o.held = True
    else:
        c = elig.combined
        o.proposal, o.direction, o.winners = c.count, c.direction, c.winners


def given_proposal(ctx: Context, given: int, fallback_cd: float) -> _Outcome:
    """``observations.proposal``: a count computed elsewhere replaces the rules. Having no
    rules of its own, it waits the last rule action's recorded cooldown
    (``last_scale.cooldown_seconds``; ScaleAction.cooldown, "the amount of time to wait
    since the last scaling action before this action occurs",
    https://learn.microsoft.com/rest/api/monitor/autoscale-settings/create-or-update)."""
    current = ctx.current
    direction = "Increase" if given > current else ("Decrease" if given < current else None)
    ctx.note("proposal", current, given, "observations.proposal replaces the rules")
    o = _Outcome(given, direction, [], "metric")
    if direction is not None:
        until = cooldown_until(ctx.state, fallback_cd)
        if until is not None and ctx.now < until:
            if ctx.trace is not None:
                ctx.note("cooldown", given, current,
                         f"the last rule-caused scale action holds every scale action until {until:g} "
                         f"({until - ctx.now:g}s from now)")
            o.held = True
    return o


def flapping(ctx: Context, evals: list, scope: Scope, o: _Outcome) -> None:
    """Before a scale-in, each scale-out rule's value is estimated at the new count
    (:func:`..stages.flapping.prevent_flapping`): "autoscale may skip the scale action and
    reevaluate at the next run, or autoscale may scale by less than the specified number of
    resource instances" (``FlappingPrevented``, ``FlappingReduced``); "checking for potential
    flapping doesn't occur for scale-out events"
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-flapping)."""
    fr = prevent_flapping(ctx.current, o.proposal, scope.minimum, scope.maximum, scale_out_projections(evals))
    if fr.why and ctx.trace is not None:
        ctx.note("flapping", o.proposal, fr.count, fr.why)
    o.proposal = fr.count
    if fr.reason is not None:
        o.reason = fr.reason


def default_floor(ctx: Context, o: _Outcome, evals: list) -> None:
    """A readable scale-out rule fires while another rule's metric cannot be read, and the
    current capacity is below the default: the default still applies below the rule's count
    ("If there's a problem reading the resource metric, and the current capacity is below
    the default, autoscale scales out to the default",
    https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings).
    Like :func:`default_capacity` it ignores the cooldown, which holds only the rule's own
    action."""
    floor, unreadable = o.floor, o.unreadable
    if ctx.trace is not None:
        ctx.note("default capacity", o.proposal, floor,
                 f"a metric cannot be read and current {ctx.current} < default {floor}: "
                 f"the default capacity applies below the scale-out")
    o.proposal, o.reason, o.from_default = floor, "ProfileDefault", True
    o.error = (f"metrics unavailable ({len(unreadable)} of {len(evals)} rules): {unreadable[0].error}; "
               f"using the default capacity {floor}")


def capacity_forecast(ctx: Context, o: _Outcome, default_mode: str) -> None:
    """``observations.forecast`` under ``ForecastAndScale`` (:func:`..stages.signals.forecast_floor`):
    a floor under the rules' count, never a scale-in by itself (the protocol; "Predictive
    autoscale supports scale-out only",
    https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-predictive)."""
    floor = forecast_floor(ctx, default_mode)
    if floor is not None and floor > o.proposal:
        if ctx.trace is not None:
            ctx.note("forecast", o.proposal, floor, "capacity forecast above the rules' count")
        if floor > ctx.current:
            o.cause = "forecast"
        o.proposal, o.reason = floor, "ForecastFloor"


def bounds(ctx: Context, scope: Scope, o: _Outcome) -> int:
    """The count within the profile's (or the policy's) ``[minimum, maximum]``, cooldown or
    not: "you set the range between 3 and 6. If you have one running instance, the autoscale
    engine scales to three instances on its next run"
    (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-best-practices)."""
    proposal = o.proposal
    lo, hi = scope.minimum, scope.maximum
    final = proposal
    if final > hi:
        final, o.reason = hi, "TooManyReplicas"
    elif final < lo:
        final, o.reason = lo, "TooFewReplicas"
    if final != proposal and ctx.trace is not None:
        ctx.note("bounds", proposal, final, f"the {'profile' if scope.name is not None else 'policy'} "
                                            f"range is [{lo}, {hi}]")
    return final


def record(ctx: Context, o: _Outcome, final: int, moved: bool, fallback_cd: float) -> Optional[float]:
    """The scale action's cause and the cooldown it starts (returned): a move the rules made
    (``moved``: not held, not skipped) in the direction they asked is the rules', with the
    longest cooldown of the winning rules (:func:`..stages.cooldown.rule_cooldown`); a move
    the bounds made or turned around is the boundary's and the default capacity's its own —
    neither starts a cooldown, and each keeps the rule action it overwrites
    (:func:`..stages.cooldown.note_scale_action`)."""
    current = ctx.current
    cooldown = None
    if o.cause == "rule":
        if o.from_default:
            o.cause = "default" if final == o.floor else "boundary"
        elif not moved or (o.direction == "Increase") != (final > current) or final == current:
            o.cause = "boundary"
        else:
            cooldown = max(rule_cooldown(w.rule, fallback_cd) for w in o.winners)
    if final != current and carried_out(ctx.policy.mode, current, final):
        note_scale_action(ctx.state, ctx.now, o.cause, fallback_cd)
    return cooldown


# ----------------------------------------------------------------------------- the semantics


class AzureSemantics(Semantics):
    name = "azure"
    decides_from = frozenset({"rules", "profiles", "predictive"})
    ignores = {"metrics": "an autoscale setting has no target metrics: it scales on its profiles' rules",
               "behavior": "an autoscale setting's rules carry their own cooldowns",
               "schedules": "Azure's schedules are recurrence and fixed-date profiles",
               "scale_in_control": "an autoscale setting has no scale-in controls"}
    color = "#0089d6"
    summary = ("Azure Monitor autoscale: instance profiles, threshold rules (scale out if any fires, "
               "in only if all fire), cooldowns, flapping prevention, default capacity")

    # -- policy --------------------------------------------------------------------------
    def check(self, policy: Policy) -> None:
        self._compiled(policy)

    def _compiled(self, policy: Policy) -> _Compiled:
        return self.cached(policy, self._compile)

    def _compile(self, policy: Policy) -> _Compiled:
        def rules_of(rules: list, path: str) -> tuple:
            for i, r in enumerate(rules):
                if r.steps is not None:
                    raise RequestError(f"{path}[{i}].steps",
                                       "AWS step scaling is not an Azure rule: the azure semantics needs an "
                                       "`action` (direction, type, value) on every rule")
            return tuple(enumerate(rules))

        scopes: dict = {}
        for k, p in enumerate(policy.profiles):
            cap = p.capacity
            scopes[id(p)] = Scope(p.name, cap.minimum, cap.maximum, cap.default,
                                  rules_of(p.rules, f"$.policy.profiles[{k}].rules"))
        top_rules = rules_of(policy.rules, "$.policy.rules")
        # a recurrence (weekly, it runs until the next start) or a default profile is always in force
        covered = any(p.fixed_date is None for p in policy.profiles)
        top: Optional[Scope] = None
        if policy.min_replicas is not None and policy.max_replicas is not None:
            default = policy.default_replicas if policy.default_replicas is not None else policy.min_replicas
            top = Scope(None, policy.min_replicas, policy.max_replicas, default, top_rules)
        elif not covered:
            missing = "max_replicas" if policy.min_replicas is not None else "min_replicas"
            where = ("a policy whose profiles are all fixed dates needs a default profile or top-level "
                     "min_replicas/max_replicas" if policy.profiles else
                     "required by the azure semantics for a policy without profiles (Azure capacity "
                     "minimum/maximum); or give `profiles` with `capacity`")
            raise RequestError(f"$.policy.{missing}", where)
        horizon = cooldown_horizon(policy)
        timeline = ProfileTimeline(policy.profiles) if policy.profiles else None
        look_ahead = policy.predictive.look_ahead_seconds if policy.predictive is not None else None
        return _Compiled(timeline, scopes, top, horizon, {}, bool(policy.metrics), policy.allowed_replicas,
                         look_ahead)

    # -- one decision --------------------------------------------------------------------------
    def decide(self, ctx: Context) -> Decision:
        comp = self._compiled(ctx.policy)
        state, current = ctx.state, ctx.current
        fallback_cd = start_of_cooldowns(state, ctx.now, ctx.settings)
        scope = comp.top if comp.timeline is None else scope_in_force(ctx, comp.timeline, comp.scopes, comp.top)
        assert scope is not None   # guaranteed by _compile
        if comp.has_metrics and ctx.trace is not None:
            ctx.note("metrics", None, None, "the azure semantics has no target metrics: policy.metrics are ignored")
        evals, results = evaluate_rules(ctx, comp, scope, predictive_mode(ctx, self.default_predictive_mode))
        if state.recommendations is None:
            state.recommendations = TimeLog()
        given = ctx.obs.proposal
        if given is None:
            o = combine(ctx, evals)
            if o.unreadable and o.direction != "Increase":
                return default_capacity(ctx, scope, evals, o.unreadable, results, fallback_cd)
            if o.direction is not None:
                rule_cooldowns(ctx, evals, o, fallback_cd)
            if o.unreadable and scope.default > current:
                o.floor = scope.default
        else:
            o = given_proposal(ctx, given, fallback_cd)
        state.recommendations.append(ctx.now, o.proposal)   # what was asked for, held or not
        if o.held:
            o.proposal, o.reason = current, "CooldownActive"
        elif o.direction == "Decrease" and o.proposal < current and given is None:
            flapping(ctx, evals, scope, o)
        # the rules moved the count: not held, not skipped
        moved = o.proposal > current if o.direction == "Increase" else (
            o.proposal < current and o.direction is not None)
        if o.floor is not None and o.floor > o.proposal:
            default_floor(ctx, o, evals)
        if ctx.obs.forecast is not None:
            capacity_forecast(ctx, o, self.default_predictive_mode)
        final = bounds(ctx, scope, o)
        cooldown = record(ctx, o, final, moved, fallback_cd)
        return Decision(final, final, o.reason, results, profile=scope.name, error=o.error, cause=o.cause,
                        cooldown_seconds=cooldown)

    def retention(self, ctx: Context) -> dict[str, float]:
        """Scale events as long as the longest cooldown (a rule action's start may be read
        back from them); no stabilization window needs recommendations or sizes."""
        comp = self._compiled(ctx.policy)
        s = ctx.settings.default_cooldown_seconds
        out = comp.retention.get(s)
        if out is None:
            h = comp.event_horizon if s is None or s <= comp.event_horizon else s
            out = comp.retention[s] = {"recommendations": 0.0, "sizes": 0.0,
                                       "scale_up_events": h, "scale_down_events": h}
        return out
