"""The ``azure`` semantics: Azure Monitor autoscale (virtual machine scale sets,
App Service plans and the other resources it scales).

A composition of shared stages with Azure's defaults:

1. **profile** (:mod:`..stages.profiles`): the fixed-date profile in force, else
   the recurrence with the latest start, else the default profile — its
   capacity (minimum, maximum, default) and its rules replace the policy's;
2. **rules** (:mod:`..stages.rules`): every rule's metric over its window; scale
   out if any scale-out rule fires (highest count), in only if all scale-in
   rules fire (smallest reduction); Azure predictive autoscale lets a forecast
   fire a scale-out rule within the look-ahead;
3. **default capacity**: when a metric cannot be read, ``max(current,
   default)`` (reason ``ProfileDefault``); when a readable scale-out rule fires
   as well, the default is a floor below its count (current < default);
4. **cooldown** (:mod:`..stages.cooldown`): a fired rule counts only once its
   own cooldown has elapsed since the last rule-caused action; a direction the
   cooling rules hold keeps the size (``CooldownActive``);
5. **flapping** (:mod:`..stages.flapping`): a scale-in whose estimate would
   fire a scale-out rule is reduced or skipped;
6. **bounds**: the profile's ``[minimum, maximum]``, which ignore cooldowns.

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
from ..stages.flapping import Projection, prevent_flapping
from ..stages.profiles import ProfileTimeline
from ..stages.rules import RuleEvaluation, combine_rules, evaluate_rule, forecast_fires
from ..stages.signals import forecast_floor, predictive_mode
from ..state import TimeLog
from ..units import format_number
from .base import Context, Decision, MetricResult, Semantics, carried_out


@dataclass(slots=True)
class _Scope:
    """What one profile (or the profile-less policy) puts in force."""
    name: Optional[str]
    minimum: int
    maximum: int
    default: int
    rules: tuple            # (index, Rule) of every rule, in order


@dataclass(slots=True)
class _Compiled:
    timeline: Optional[ProfileTimeline]
    scopes: dict            # id(Profile) -> _Scope
    top: Optional[_Scope]   # the policy's own fields (no profile in force)
    event_horizon: float    # seconds of scale events the cooldown may need
    retention: dict         # settings.default_cooldown_seconds -> retention() answer
    # the policy's fields a decision reads, read once (a model's attribute read costs 4x, protocol._Bulk)
    has_metrics: bool
    allowed: Optional[list]
    look_ahead: Optional[float]


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
            scopes[id(p)] = _Scope(p.name, cap.minimum, cap.maximum, cap.default,
                                   rules_of(p.rules, f"$.policy.profiles[{k}].rules"))
        top_rules = rules_of(policy.rules, "$.policy.rules")
        # a recurrence (weekly, it runs until the next start) or a default profile is always in force
        covered = any(p.fixed_date is None for p in policy.profiles)
        top: Optional[_Scope] = None
        if policy.min_replicas is not None and policy.max_replicas is not None:
            default = policy.default_replicas if policy.default_replicas is not None else policy.min_replicas
            top = _Scope(None, policy.min_replicas, policy.max_replicas, default, top_rules)
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
        policy, state, now, current, settings = ctx.policy, ctx.state, ctx.now, ctx.current, ctx.settings
        comp = self._compiled(policy)
        fallback_cd = start_of_cooldowns(state, now, settings)

        # 1. profile
        scope = comp.top
        if comp.timeline is not None:
            prof, why = comp.timeline.at(now)
            if prof is not None:
                scope = comp.scopes[id(prof)]
            if ctx.trace is not None:
                ctx.note("profile", None, scope.name if scope is not None else None, why)
        assert scope is not None   # guaranteed by _compile
        lo, hi = scope.minimum, scope.maximum
        if comp.has_metrics and ctx.trace is not None:
            ctx.note("metrics", None, None, "the azure semantics has no target metrics: policy.metrics are ignored")

        # 2. rules
        mode = predictive_mode(ctx, self.default_predictive_mode)
        look_ahead = comp.look_ahead
        rounding = settings.percent_rounding or "ceil"
        allowed = comp.allowed
        delay = settings.metric_delay_seconds or 0.0
        obs_all = ctx.obs
        metrics_obs = obs_all.metrics
        given = obs_all.proposal   # observations.proposal: replaces the rules
        evals: list[RuleEvaluation] = []
        out: list[dict] = []
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
        if state.recommendations is None:
            state.recommendations = TimeLog()

        # 3. the default capacity when a metric cannot be read
        default_floor: Optional[int] = None
        if given is None:
            combined = combine_rules(evals, current)
            if ctx.trace is not None:
                ctx.note("rules", current, combined.count, combined.why)
            unreadable = [e for e in evals if e.value is None and not e.fired]
            if unreadable and combined.direction != "Increase":
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
                return Decision(final, final, "ProfileDefault", out, profile=scope.name, error=error,
                                cause="default" if final == target else "boundary")
            # each fired rule counts once its own cooldown has elapsed since the last rule action
            elig = combine_eligible(evals, combined, state, now, fallback_cd, current)
            if elig.until is not None and ctx.trace is not None:
                ctx.note("cooldown", combined.count, elig.combined.count,
                         "a fired rule is still in its own cooldown (eligible from "
                         f"{elig.until:g}, {elig.until - now:g}s from now)" +
                         ("; nothing moves" if elig.held else "; the eligible rules decide"))
            cooldown_held = elig.held
            combined = elig.combined if not elig.held else combined
            proposal, direction, winners = combined.count, combined.direction, combined.winners
            # a readable scale-out rule fired, but another metric cannot be read: the default capacity
            # still applies below it (settings: "If there's a problem reading the resource metric, and
            # the current capacity is below the default, autoscale scales out to the default")
            if unreadable and scope.default > current:
                default_floor = scope.default
        else:
            unreadable = []
            cooldown_held = False
            proposal = given
            direction = "Increase" if proposal > current else ("Decrease" if proposal < current else None)
            winners = []
            ctx.note("proposal", current, proposal, "observations.proposal replaces the rules")
        state.recommendations.append(now, proposal)

        # 4. cooldown: the rules' own (above); a proposal, which has no rules, waits the last
        # rule action's recorded cooldown
        reason = "DesiredWithinRange"
        held = False
        if cooldown_held:
            proposal, reason, held = current, "CooldownActive", True
        elif given is not None and direction is not None and proposal != current:
            until = cooldown_until(state, fallback_cd)
            if until is not None and now < until:
                if ctx.trace is not None:
                    ctx.note("cooldown", proposal, current,
                             f"the last rule-caused scale action holds every scale action until {until:g} "
                             f"({until - now:g}s from now)")
                proposal, reason, held = current, "CooldownActive", True

        # 5. flapping (scale-in only)
        if not held and direction == "Decrease" and proposal < current and given is None:
            projections = [Projection(e.value, e.rule.operator, e.rule.threshold, e.rule.name or e.rule.metric)
                           for e in evals if e.increase and e.value is not None]
            fr = prevent_flapping(current, proposal, lo, hi, projections)
            if fr.why and ctx.trace is not None:
                ctx.note("flapping", proposal, fr.count, fr.why)
            proposal = fr.count
            if fr.reason is not None:
                reason = fr.reason

        moved = proposal > current if direction == "Increase" else (proposal < current and direction is not None)

        # the default capacity below a scale-out (a metric unreadable): like the fallback in 3., it
        # ignores the cooldown, which holds only the rule's own action
        error = None
        from_default = False
        if default_floor is not None and default_floor > proposal:
            if ctx.trace is not None:
                ctx.note("default capacity", proposal, default_floor,
                         f"a metric cannot be read and current {current} < default {default_floor}: "
                         f"the default capacity applies below the scale-out")
            proposal, reason, from_default = default_floor, "ProfileDefault", True
            error = (f"metrics unavailable ({len(unreadable)} of {len(evals)} rules): {unreadable[0].error}; "
                     f"using the default capacity {default_floor}")

        # capacity forecast (observations.forecast): a floor, never a scale-in by itself
        cause = "rule" if given is None else "metric"
        floor = forecast_floor(ctx, self.default_predictive_mode)
        if floor is not None and floor > proposal:
            if ctx.trace is not None:
                ctx.note("forecast", proposal, floor, "capacity forecast above the rules' count")
            if floor > current:
                cause = "forecast"
            proposal, reason = floor, "ForecastFloor"

        # 6. bounds
        final = proposal
        if final > hi:
            final, reason = hi, "TooManyReplicas"
        elif final < lo:
            final, reason = lo, "TooFewReplicas"
        if final != proposal and ctx.trace is not None:
            ctx.note("bounds", proposal, final, f"the {'profile' if scope.name is not None else 'policy'} "
                                                f"range is [{lo}, {hi}]")
        cooldown = None
        if cause == "rule" and from_default:
            cause = "default" if final == default_floor else "boundary"
        elif cause == "rule":
            # the rules moved the count (not held, not skipped) and the bounds kept that direction
            if not moved or (direction == "Increase") != (final > current) or final == current:
                cause = "boundary"
            else:
                cooldown = max(rule_cooldown(w.rule, fallback_cd) for w in winners)
        if final != current and carried_out(ctx.policy.mode, current, final):
            note_scale_action(state, now, cause, fallback_cd)
        return Decision(final, final, reason, out, profile=scope.name, error=error, cause=cause,
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
