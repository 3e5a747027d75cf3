"""The ``scalebridge`` semantics: the neutral composition of the providers' stages.

A per-metric ceil formula with tolerance, the highest of all signals, a
10-minute downscale stabilization by default, Azure-style rules and instance
profiles, Kubernetes-style rate policies, GCE scale-in controls. Each step is
a shared stage the provider semantics use too — nothing here re-implements a
provider:

1. **profile** (:mod:`..stages.profiles`, Azure): the profile in force gives
   min, max, default and the rules; without profiles, the policy's own.
2. **signals, the highest wins** (GCE's rule for several signals):

   - each target metric: ``ceil(N × value / target)`` in exact arithmetic
     (:func:`..stages.proposals.signal_proposal`), held at the current count
     inside the tolerance band (Kubernetes); initializing members' data is
     left out when deciding to scale out (GCE); for per-member signals ``N``
     is the members the average was taken over — members still starting
     carry no load yet, and counting them would compound a scale-out;
   - the threshold rules (:mod:`..stages.rules`, Azure): out if any scale-out
     rule fires, in only if every scale-in rule fires; a rule-caused action is
     each fired rule held in its own cooldown (:mod:`..stages.cooldown`),
     and a rule-caused scale-in that its own projection says would flap back
     out is reduced or skipped (:mod:`..stages.flapping`);
   - the greatest active schedule (:mod:`..stages.schedules`, GCE);
   - a capacity forecast under ``ForecastAndScale`` (:mod:`..stages.signals`);
   - ``observations.proposal`` replaces the metrics and the rules;
   - during a rollout (``observations.rollout``), a per-member signal's tolerance is
     judged on the demand its members carry against the intended size
     (``current_replicas``), not on their average over the surge: a rollout never
     moves the size by itself.

   A metric that cannot be read blocks a scale-in but not a scale-out
   (Kubernetes, GCE); when nothing at all can be read and a default capacity
   exists, ``max(current, default)`` (Azure).
3. **stabilization** (:mod:`..stages.stabilization`, Kubernetes behaviors):
   the lowest recommendation of the scale-up window and the highest of the
   scale-down window bound the count — 0 s and **600 s** by default.
4. **rate policies** (:mod:`..stages.rate_limits`, Kubernetes), in exact
   arithmetic: by default at most max(+4, +100%) per 15 s up, −100% per 15 s down.
5. **bounds**, then **scale-in controls** (:mod:`..stages.scale_in_control`, GCE).

Defaults and why (docs/semantics.md has the table):

- tolerance 0.1 — Kubernetes' default: the most widely deployed, and without
  one a noisy signal flaps (GCE has none and relies on its window);
- downscale stabilization 600 s — GCE's: a gradual scale-down, and a longer memory than Kubernetes' 300 s for traffic that comes back;
- scale-up stabilization 0 s and Kubernetes' scale-up rate — capacity is
  added at once, which is what every provider does when load rises;
- no metrics, no rules, no schedules → 60% CPU — GCE's default, the safer of
  the documented defaults (Kubernetes: 80%);
- min_replicas 1 (Kubernetes), max_replicas required (no provider guesses it);
- initialization period 60 s (GCE), rule cooldown 300 s (Azure, AWS);
- on first sight the current count is recorded as a recommendation
  (Kubernetes), so a restarted controller that lost its state cannot scale
  down inside the window.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import constants as C
from ..errors import RequestError
from ..policy import Metric, MetricTarget, Policy, ScalingRules
from ..stages.cooldown import (combine_eligible, cooldown_horizon, note_scale_action, rule_cooldown,
                               start_of_cooldowns)
from ..stages.flapping import Projection, prevent_flapping
from ..stages.profiles import ProfileTimeline
from ..stages.proposals import Proposal, ProposalError, Signal, check_utilization_targets, signal_proposal
from ..stages.rate_limits import RatePolicy, limit_with_behavior
from ..stages.rules import combine_rules, evaluate_rule
from ..stages.scale_in_control import limit_scale_in
from ..stages.schedules import schedule_floor
from ..stages.signals import forecast_floor, predictive_mode
from ..stages.stabilization import stabilize_both_ways
from ..state import TimeLog
from ..units import format_number
from .base import Context, Decision, MetricResult, Semantics, carried_out, rules_of

DEFAULT_CPU_METRIC = Metric(type="resource", name="cpu",
                            target=MetricTarget(type="Utilization",
                                                average_utilization=round(C.GCE_DEFAULT_CPU_UTILIZATION * 100)))


@dataclass(slots=True)
class _Scope:
    name: Optional[str]
    minimum: int
    maximum: int
    default: Optional[int]
    rules: tuple            # (index, Rule)


def _rates(rules: Optional[ScalingRules], default: tuple) -> tuple:
    if rules is None or rules.policies is None:
        return default
    return tuple(RatePolicy(p.type, p.value, p.period_seconds) for p in rules.policies)


class _Compiled:
    """What the neutral semantics derives from one policy (cached on it)."""

    def __init__(self, policy: Policy):
        check_utilization_targets(policy, "scalebridge")     # GCE's defaults (docs/semantics/scalebridge.md)
        self.init = policy.initialization_period_seconds if policy.initialization_period_seconds is not None \
            else C.GCE_INITIALIZATION_PERIOD
        has_rules = bool(policy.rules) or any(p.rules for p in policy.profiles)
        if policy.metrics:
            metrics = [m for m in policy.metrics if m.enabled]
        elif has_rules or policy.schedules:
            metrics = []
        else:
            metrics = [DEFAULT_CPU_METRIC]
        self.signals = tuple(Signal(m, self.init) for m in metrics)
        b = policy.behavior
        up = b.scale_up if b is not None else None
        down = b.scale_down if b is not None else None
        base_tol = policy.tolerance
        self.tol_up = up.tolerance if up is not None and up.tolerance is not None else base_tol
        self.tol_down = down.tolerance if down is not None and down.tolerance is not None else base_tol
        self.up_window = up.stabilization_window_seconds if up is not None and \
            up.stabilization_window_seconds is not None else 0.0
        self.down_window = down.stabilization_window_seconds if down is not None and \
            down.stabilization_window_seconds is not None else C.NEUTRAL_DOWNSCALE_STABILIZATION
        self.up_select = (up.select_policy if up is not None and up.select_policy else "Max")
        self.down_select = (down.select_policy if down is not None and down.select_policy else "Max")
        self.up_policies = _rates(up, (RatePolicy("Pods", C.K8S_SCALE_UP_PODS, C.K8S_SCALE_UP_PERIOD),
                                       RatePolicy("Percent", C.K8S_SCALE_UP_PERCENT, C.K8S_SCALE_UP_PERIOD)))
        self.down_policies = _rates(down, (RatePolicy("Percent", C.K8S_SCALE_DOWN_PERCENT, C.K8S_SCALE_DOWN_PERIOD),))

        def scope_rules(rules: list, path: str) -> tuple:
            for i, r in enumerate(rules):
                if r.steps is not None:
                    raise RequestError(f"{path}[{i}].steps", "AWS step scaling runs under the aws semantics; "
                                       "the scalebridge semantics takes Azure-style rules with an `action`")
            return tuple(enumerate(rules))

        self.scopes = {id(p): _Scope(p.name, p.capacity.minimum, p.capacity.maximum, p.capacity.default,
                                     scope_rules(p.rules, f"$.policy.profiles[{k}].rules"))
                       for k, p in enumerate(policy.profiles)}
        self.timeline = ProfileTimeline(policy.profiles) if policy.profiles else None
        lo = policy.min_replicas if policy.min_replicas is not None else C.K8S_MIN_REPLICAS
        self.top: Optional[_Scope] = None
        if policy.max_replicas is not None:
            self.top = _Scope(None, lo, max(lo, policy.max_replicas), policy.default_replicas,
                              scope_rules(policy.rules, "$.policy.rules"))
        elif not any(p.fixed_date is None for p in policy.profiles):
            raise RequestError("$.policy.max_replicas", "required by the scalebridge semantics "
                               "(or profiles with a capacity, one of them without a fixed date)")
        self.cooldown_horizon = cooldown_horizon(policy)
        longest_rate = max([p.period_seconds for p in self.up_policies + self.down_policies] or [0.0])
        control = self.scale_in_control = policy.scale_in_control
        self.schedules = bool(policy.schedules)
        self.retention = {"recommendations": max(self.up_window, self.down_window),
                          "sizes": control.time_window_seconds if control is not None else 0.0,
                          "scale_up_events": max(longest_rate, self.cooldown_horizon),
                          "scale_down_events": max(longest_rate, self.cooldown_horizon)}


def _within_intended(p, current: int, tol_down: object, tol_up: object) -> bool:
    """During a rollout: whether the demand a per-member signal's members carry
    (``members × average / target``) is within the tolerance of the workload's intended
    size, ``current_replicas`` — the question the tolerance asks of a settled workload,
    where the members are the intended size. Asked of the members' average instead, the
    surge's extra members lower it by themselves (13 members carrying 10.5 members' worth
    of load average 0.81 of the target) and the band is left without any change in load:
    the size would move because of the rollout (the HPA's over-scaling,
    kubernetes/kubernetes#72775, #138505). A group signal (no members) is judged as it is."""
    if p.members is None:
        return p.within(tol_down, tol_up)
    return Proposal(p.replicas, p.members * p.num, p.den * current).within(tol_down, tol_up)


class NeutralSemantics(Semantics):
    name = "scalebridge"
    summary = ("the neutral composition: per-metric ceil with tolerance, highest signal, Azure rules and "
               "profiles, 10-minute downscale stabilization, Kubernetes rate policies, GCE scale-in controls")
    color = "#2e7d32"

    def default_metrics(self, policy) -> tuple:
        """With no metric, no rule and no schedule, CPU at GCE's 60 %."""
        if policy.metrics or any(True for _ in rules_of(policy)) or policy.schedules:
            return ()
        return (DEFAULT_CPU_METRIC,)

    def check(self, policy: Policy) -> None:
        self._compiled(policy)

    def _compiled(self, policy: Policy) -> _Compiled:
        return self.cached(policy, _Compiled)

    def decide(self, ctx: Context) -> Decision:
        c = self._compiled(ctx.policy)
        policy, state, now, current, settings = ctx.policy, ctx.state, ctx.now, ctx.current, ctx.settings
        tr = ctx.trace is not None
        fallback_cd = start_of_cooldowns(state, now, settings)
        if state.recommendations is None:        # first sight: the current count was recommended
            state.recommendations = TimeLog([(now, current, None)])

        scope = c.top
        if c.timeline is not None:
            prof, why = c.timeline.at(now)
            if prof is not None:
                scope = c.scopes[id(prof)]
            if tr:
                ctx.note("profile", None, scope.name if scope is not None else None, why)
        lo, hi = scope.minimum, scope.maximum

        # 2. signals ----------------------------------------------------------------------
        results: list = []
        opinions: list[tuple[int, str]] = []       # (replicas, cause)
        failed = 0
        first_error: Optional[str] = None
        within_tolerance = False
        rule_cooldown: Optional[float] = None
        reason_hint: Optional[str] = None
        rules_read = rules_unread = 0           # enabled rules whose metric could / could not be read
        proposal = ctx.obs.proposal
        tol = settings.tolerance
        if tol is None:
            tol = C.NEUTRAL_TOLERANCE
        tol_up = c.tol_up if c.tol_up is not None else tol
        tol_down = c.tol_down if c.tol_down is not None else tol
        if proposal is not None:
            opinions.append((proposal, "metric"))
            if tr:
                ctx.note("signals", current, proposal, "observations.proposal: metrics and rules skipped")
        else:
            initializing: dict = {}
            rollout = ctx.obs.rollout is not None and current > 0
            if rollout and tr:
                r = ctx.obs.rollout
                ctx.note("rollout", current, current, "a rollout is in progress" + (f" ({r.reason})" if r.reason else "")
                         + ": each metric's tolerance is judged on the demand its members carry against the "
                           "intended size, not on their average over the surge")
            for sig in c.signals:
                try:
                    p = signal_proposal(ctx, sig, initializing, "scale_out")
                except ProposalError as e:
                    failed += 1
                    first_error = first_error or str(e)
                    results.append(MetricResult(sig.name, error=str(e)))
                    continue
                replicas = p.replicas
                if p.members is not None and p.members != current:
                    # the load the sampled members serve, over the target: members still
                    # starting (no samples) add capacity, not load (Kubernetes scales its
                    # ready pods, not spec.replicas)
                    replicas = max(0, -((-p.members * p.num) // p.den))
                if replicas != current and (_within_intended(p, current, tol_down, tol_up) if rollout
                                            else p.within(tol_down, tol_up)):
                    replicas, within_tolerance = current, True
                results.append(MetricResult(sig.name, replicas, p.utilization, p.value))
                opinions.append((replicas, "metric"))
            rule_count, rule_cooldown, reason_hint, rules_read, rules_unread = \
                self._rules(ctx, c, scope, results, fallback_cd)
            if rule_count is not None:
                opinions.append((rule_count, "rule"))
        sched, sched_name = schedule_floor(policy, now) if c.schedules else (None, None)
        if sched is not None:
            opinions.append((sched, "schedule"))
        forecast = forecast_floor(ctx, self.default_predictive_mode)
        if forecast is not None and (opinions or forecast > current):
            # a forecast "joins the signals by max; it never causes a scale-in by itself"
            # (the protocol, ``observations.forecast``)
            opinions.append((forecast, "forecast"))

        error = None
        if failed:
            error = f"invalid metrics ({failed} invalid out of {len(c.signals)}), first error is: {first_error}"
        read = [o for o in opinions if o[1] in ("metric", "rule")]
        # nothing could be read: no metric and no rule (a rule that reads but does not fire
        # still counts as read)
        unreadable = (failed or rules_unread) and not read and len(c.signals) == failed and not rules_read
        if unreadable and error is None:
            error = f"no rule's metric can be read ({rules_unread} of {rules_unread} rules)"
        if unreadable and scope.default is not None:
            # every metric failed and no rule could speak: the documented fallback,
            # max(current, default) — a schedule's or forecast's floor above it still counts
            target = max([current, scope.default] + [o[0] for o in opinions])
            final = min(max(target, lo), hi)
            ctx.note("default capacity", current, final, f"no signal can be read: max(current, default {scope.default})")
            state.recommendations.append(now, target)
            return Decision(final, final, "ProfileDefault", results, profile=scope.name, error=error,
                            cause="default")
        if not opinions:
            if failed or unreadable:
                return Decision(current, current, "InvalidMetrics", results, profile=scope.name, error=error)
            raw, cause = current, "metric"
        else:
            raw, cause = max(opinions)
            if cause == "forecast" and raw < current and read:
                cause = max(read)[1]   # a scale-in the forecast only limited is the signals'
            if tr:
                ctx.note("signals", current, raw, f"highest of {len(opinions)} signal(s): {cause}")
        if failed and raw < current:   # an unreadable metric blocks a scale-in
            state.recommendations.append(now, current)
            return Decision(current, current, "InvalidMetrics", results, profile=scope.name, error=error)

        # 3. stabilization; 4. rate policies and bounds --------------------------------------
        stabilized, stab_reason = stabilize_both_ways(state.recommendations, now, current, raw,
                                                      c.up_window, c.down_window)
        if tr:
            ctx.note("stabilization", raw, stabilized,
                     f"scale-up window {c.up_window:g}s, scale-down window {c.down_window:g}s")
        limited, limit_reason = limit_with_behavior(state, now, current, stabilized, lo, hi,
                                                    c.up_select, c.up_policies, c.down_select, c.down_policies,
                                                    exact=True)
        final = min(max(limited, lo), hi)
        if final != limited:
            limit_reason = "TooFewReplicas" if final == lo else "TooManyReplicas"
        if tr:
            ctx.note("rate limits and bounds", stabilized, final, f"{limit_reason}; range [{lo}, {hi}]")

        # 5. scale-in controls ---------------------------------------------------------------
        control = c.scale_in_control
        controlled = False
        if control is not None:
            bounded = final
            final, controlled = limit_scale_in(state.sizes, now, final, control, hi)
            if tr:
                ctx.note("scale-in controls", bounded, final, "peak size of the window less the allowed scale-in")

        if controlled:
            reason = "ScaleInControlled"
        elif final != stabilized:
            reason = limit_reason
        elif stab_reason is not None:
            reason = stab_reason
        elif reason_hint is not None and final == current:
            reason = reason_hint
        elif cause in ("schedule", "forecast") and final == raw and final > current:
            reason = "ScheduleFloor" if cause == "schedule" else "ForecastFloor"
        elif within_tolerance and final == current:
            reason = "WithinTolerance"
        else:
            reason = "DesiredWithinRange"
        if reason in ("TooFewReplicas", "TooManyReplicas") and not (
                cause == "rule" and final != current and (raw > current) == (final > current)):
            # a move into [min, max]; a rule action the bounds only cut short stays the
            # rule's, with its cooldown (as under azure)
            cause = "boundary"
        cooldown = rule_cooldown if cause == "rule" else None
        if final != current and carried_out(policy.mode, current, final):
            # (a move the mode blocks is not carried out: it neither starts nor ends a cooldown)
            note_scale_action(state, now, cause, fallback_cd)
        return Decision(final, final, reason, results, profile=scope.name, error=error, cause=cause,
                        cooldown_seconds=cooldown)

    def _rules(self, ctx: Context, c: _Compiled, scope: _Scope, results: list,
               fallback_cd: float) -> tuple[Optional[int], Optional[float], Optional[str], int, int]:
        """The rules' count (None: no opinion), its cooldown, a reason when a
        cooldown or flapping prevention changed what the rules asked for, and how
        many enabled rules could and could not read their metric."""
        if not scope.rules:
            return None, None, None, 0, 0
        now, current, settings = ctx.now, ctx.current, ctx.settings
        horizon = None
        if predictive_mode(ctx, self.default_predictive_mode) == "ForecastAndScale":
            p = ctx.policy.predictive
            horizon = p.look_ahead_seconds if p is not None and p.look_ahead_seconds is not None else None
        evals = []
        cache: dict = {}
        for index, rule in scope.rules:
            if not rule.enabled:
                results.append(MetricResult(rule.name or rule.metric, triggered=False))
                continue
            obs = ctx.obs.metrics.get(rule.metric)
            e = evaluate_rule(rule, index, obs, now, current, delay=settings.metric_delay_seconds or 0.0,
                              forecast_horizon=horizon if horizon is not None else None,
                              allowed=ctx.policy.allowed_replicas, rounding=settings.percent_rounding or "ceil",
                              cache=cache)
            evals.append(e)
            v = e.value.approx if e.value is not None else None
            results.append(MetricResult(rule.name or rule.metric, e.result,
                                        value=v if v is None or type(v) is int else format_number(v),
                                        error=e.error, triggered=e.fired))
        unread = sum(1 for e in evals if e.value is None and e.error)
        read = len(evals) - unread
        combined = combine_rules(evals, current)
        if ctx.trace is not None:
            ctx.note("rules", current, combined.count, combined.why)
        if combined.direction is None or combined.count == current:
            return None, None, None, read, unread
        elig = combine_eligible(evals, combined, ctx.state, now, fallback_cd, current)
        if elig.held:
            ctx.note("cooldown", combined.count, None, f"the fired rules are in their own cooldowns until "
                                                       f"{elig.until:g}")
            return None, None, "CooldownActive", read, unread
        combined = elig.combined
        if combined.direction is None or combined.count == current:
            return None, None, None, read, unread
        count, hint = combined.count, None
        if combined.direction == "Decrease":
            projections = [Projection(e.value, e.rule.operator, e.rule.threshold, e.rule.name or e.rule.metric)
                           for e in evals if e.increase and e.value is not None]
            fr = prevent_flapping(current, count, scope.minimum, scope.maximum, projections)
            if fr.why:
                ctx.note("flapping", count, fr.count, fr.why)
            count, hint = fr.count, fr.reason
            if count >= current:
                return None, None, hint, read, unread
        cooldown = max(rule_cooldown(w.rule, fallback_cd) for w in combined.winners)
        return count, cooldown, hint, read, unread

    def retention(self, ctx: Context) -> dict[str, float]:
        return self._compiled(ctx.policy).retention
