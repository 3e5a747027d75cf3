"""The ``scalebridge`` semantics: the neutral composition of the providers' stages.

A per-metric ceil formula with tolerance, the highest of all signals, a
10-minute downscale stabilization by default, Azure-style rules and instance
profiles, Kubernetes-style rate policies, GCE scale-in controls. Each step is
a shared stage the provider semantics use too — nothing here re-implements a
provider. One named stage each, in this order:

0. **at zero** (:mod:`..stages.zero`, Kubernetes 1.36+): a target at zero replicas
   that this semantics did not scale to zero was paused by someone else, and is not
   woken (reason ``ScalingDisabled``); one it scaled to zero itself is decided as any
   other. (Under a KEDA activation phase the activation control wakes it, as KEDA does.)
1. **profile** (:func:`..stages.profiles.scope_in_force`, Azure): the profile
   in force gives min, max, default and the rules; without profiles, the
   policy's own.
2. **signals, the highest wins** (GCE's rule for several signals):

   - each target metric (:func:`target_metrics`): ``ceil(N × value / target)``
     in exact arithmetic (:func:`..stages.proposals.signal_proposal`), held at
     the current count inside the tolerance band (Kubernetes); initializing
     members' data is left out when deciding to scale out (GCE); for
     per-member signals ``N`` is the members the average was taken over —
     members still starting carry no load yet, and counting them would
     compound a scale-out;
   - the threshold rules (:func:`threshold_rules`; :mod:`..stages.rules`,
     Azure): out if any scale-out rule fires, in only if every scale-in rule
     fires; a rule-caused action is each fired rule held in its own cooldown
     (:mod:`..stages.cooldown`), and a rule-caused scale-in that its own
     projection says would flap back out is reduced or skipped
     (:mod:`..stages.flapping`);
   - the greatest active schedule (:func:`floors`; :mod:`..stages.schedules`,
     GCE) and a capacity forecast under ``ForecastAndScale``
     (:mod:`..stages.signals`);
   - ``observations.proposal`` (:func:`given_proposal`) replaces the metrics
     and the rules;
   - the highest opinion (:func:`highest`).

   A metric that cannot be read blocks a scale-in but not a scale-out
   (Kubernetes, GCE; :func:`unread`); when nothing at all can be read and a
   default capacity exists, ``max(current, default)`` (Azure;
   :func:`default_capacity`).
3. **stabilization** (:func:`stabilization`; :mod:`..stages.stabilization`,
   Kubernetes behaviors): the lowest recommendation of the scale-up window and
   the highest of the scale-down window bound the count — 0 s and **600 s** by
   default.
4. **rate policies**, then **bounds** (:func:`rate_limits_and_bounds`;
   :mod:`..stages.rate_limits`, Kubernetes), in exact arithmetic: by default at
   most max(+4, +100%) per 15 s up, −100% per 15 s down.
5. **scale-in controls** (:func:`scale_in_controls`;
   :mod:`..stages.scale_in_control`, GCE).
6. **record** (:func:`record`): the reason, the scale action's cause and the
   cooldown it starts.

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

from typing import Optional

from .. import constants as C
from ..errors import RequestError
from ..policy import Metric, MetricTarget, Policy, ScalingRules
from ..stages.cooldown import (combine_eligible, cooldown_horizon, note_scale_action, rule_cooldown,
                               start_of_cooldowns)
from ..stages.flapping import prevent_flapping, scale_out_projections
from ..stages.profiles import ProfileTimeline, Scope, scope_in_force
from ..stages.proposals import ProposalError, Signal, check_utilization_targets, signal_proposal
from ..stages.rate_limits import RatePolicy, limit_with_behavior
from ..stages.rules import combine_rules, evaluate_rule
from ..stages.scale_in_control import limit_scale_in
from ..stages.schedules import schedule_floor
from ..stages.signals import forecast_floor, predictive_mode
from ..stages.stabilization import stabilize_both_ways
from ..stages.zero import paused_at_zero, record_zero
from ..state import TimeLog
from ..units import format_number
from .base import Context, Decision, MetricResult, Semantics, carried_out, rules_of

SCALED_TO_ZERO = "scalebridge.scaled_to_zero"
"""The state key of this semantics' own scale to zero (:mod:`..stages.zero`): a target
found at zero without it was paused by someone else, and is not woken."""

DEFAULT_CPU_METRIC = Metric(type="resource", name="cpu",
                            target=MetricTarget(type="Utilization",
                                                average_utilization=round(C.GCE_DEFAULT_CPU_UTILIZATION * 100)))


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

        self.scopes = {id(p): Scope(p.name, p.capacity.minimum, p.capacity.maximum, p.capacity.default,
                                    scope_rules(p.rules, f"$.policy.profiles[{k}].rules"))
                       for k, p in enumerate(policy.profiles)}
        self.timeline = ProfileTimeline(policy.profiles) if policy.profiles else None
        lo = policy.min_replicas if policy.min_replicas is not None else C.K8S_MIN_REPLICAS
        self.top: Optional[Scope] = None
        if policy.max_replicas is not None:
            self.top = Scope(None, lo, max(lo, policy.max_replicas), policy.default_replicas,
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


# ----------------------------------------------------------------------------- the stages


class _Signals:
    """What the signals found: each signal's opinion, the response entries, and what
    could not be read. (A plain class: one is made per decision.)"""
    __slots__ = ("opinions", "results", "failed", "first_error", "within_tolerance", "rule_cooldown",
                 "reason_hint", "rules_read", "rules_unread", "error", "unreadable")

    def __init__(self) -> None:
        self.opinions: list = []       # (replicas, cause) of each signal with an opinion
        self.results: list = []        # MetricResult: the target metrics', then the rules'
        self.failed = 0                # target metrics that could not be read
        self.first_error: Optional[str] = None
        self.within_tolerance = False  # a metric held at the current count by its tolerance
        self.rule_cooldown: Optional[float] = None   # the cooldown of the rules' count
        self.reason_hint: Optional[str] = None       # why a cooldown or flapping changed the rules' count
        self.rules_read = 0            # enabled rules whose metric could be read
        self.rules_unread = 0          # ... and could not
        self.error: Optional[str] = None
        self.unreadable = False        # no metric and no rule could be read at all


def _read(opinions: list) -> list:
    """The opinions of the signals that read a metric: target metrics and rules."""
    return [o for o in opinions if o[1] in ("metric", "rule")]


def given_proposal(ctx: Context, s: _Signals, proposal: int) -> None:
    """``observations.proposal``: a count computed elsewhere replaces the metrics and the
    rules (the protocol); the schedules and the forecast still join it."""
    s.opinions.append((proposal, "metric"))
    if ctx.trace is not None:
        ctx.note("signals", ctx.current, proposal, "observations.proposal: metrics and rules skipped")


def target_metrics(ctx: Context, c: _Compiled, s: _Signals) -> None:
    """Each enabled target metric's ``ceil(N × value / target)`` in exact arithmetic
    (:func:`..stages.proposals.signal_proposal`; initializing members' data left out when
    deciding to scale out, as GCE does), held at the current count inside the tolerance band
    (Kubernetes: ``--horizontal-pod-autoscaler-tolerance``, per direction
    ``behavior.scale_*.tolerance``; pkg/controller/podautoscaler/replica_calculator.go). For a
    per-member signal ``N`` is the members the average was taken over: members still starting
    carry no load yet, and counting them would compound a scale-out. A metric that cannot be
    read has an entry with its error and no opinion."""
    current = ctx.current
    tol = ctx.settings.tolerance
    if tol is None:
        tol = C.NEUTRAL_TOLERANCE
    tol_up = c.tol_up if c.tol_up is not None else tol
    tol_down = c.tol_down if c.tol_down is not None else tol
    results, opinions = s.results, s.opinions
    initializing: dict = {}
    for sig in c.signals:
        try:
            p = signal_proposal(ctx, sig, initializing, "scale_out")
        except ProposalError as e:
            s.failed += 1
            s.first_error = s.first_error or str(e)
            results.append(MetricResult(sig.name, error=str(e)))
            continue
        replicas = p.replicas
        if p.members is not None and p.members != current:
            # the load the sampled members serve, over the target: members still
            # starting (no samples) add capacity, not load (Kubernetes scales its
            # ready pods, not spec.replicas)
            replicas = max(0, -((-p.members * p.num) // p.den))
        if replicas != current and p.within(tol_down, tol_up):
            replicas, s.within_tolerance = current, True
        results.append(MetricResult(sig.name, replicas, p.utilization, p.value))
        opinions.append((replicas, "metric"))


def threshold_rules(ctx: Context, c: _Compiled, scope: Scope, s: _Signals, fallback_cd: float,
                    default_mode: str) -> None:
    """Azure Monitor autoscale's rules in force, as the ``azure`` semantics reads them
    (:mod:`..stages.rules`): out if any scale-out rule fires, in only if every scale-in rule
    fires (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings);
    each fired rule held in its own cooldown (:func:`..stages.cooldown.combine_eligible`); a
    scale-in its own projection says would flap back out reduced or skipped
    (:func:`..stages.flapping.prevent_flapping`,
    https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-flapping). Their count
    is one opinion, with the winning rules' cooldown; no opinion when they keep the count,
    with why in ``reason_hint`` when a cooldown or flapping made them."""
    now, current, settings = ctx.now, ctx.current, ctx.settings
    horizon = None
    if predictive_mode(ctx, default_mode) == "ForecastAndScale":
        p = ctx.policy.predictive
        horizon = p.look_ahead_seconds if p is not None and p.look_ahead_seconds is not None else None
    evals = []
    cache: dict = {}
    results = s.results
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
    unread = s.rules_unread = sum(1 for e in evals if e.value is None and e.error)
    s.rules_read = len(evals) - unread
    combined = combine_rules(evals, current)
    if ctx.trace is not None:
        ctx.note("rules", current, combined.count, combined.why)
    if combined.direction is None or combined.count == current:
        return
    elig = combine_eligible(evals, combined, ctx.state, now, fallback_cd, current)
    if elig.held:
        ctx.note("cooldown", combined.count, None, f"the fired rules are in their own cooldowns until "
                                                   f"{elig.until:g}")
        s.reason_hint = "CooldownActive"
        return
    combined = elig.combined
    if combined.direction is None or combined.count == current:
        return
    count = combined.count
    if combined.direction == "Decrease":
        fr = prevent_flapping(current, count, scope.minimum, scope.maximum, scale_out_projections(evals))
        if fr.why:
            ctx.note("flapping", count, fr.count, fr.why)
        count, s.reason_hint = fr.count, fr.reason
        if count >= current:
            return
    s.opinions.append((count, "rule"))
    s.rule_cooldown = max(rule_cooldown(w.rule, fallback_cd) for w in combined.winners)


def floors(ctx: Context, c: _Compiled, s: _Signals, default_mode: str) -> None:
    """The signals that only raise the count: the greatest active schedule
    (:func:`..stages.schedules.schedule_floor`, GCE's scaling schedules) and a capacity
    forecast under ``ForecastAndScale`` (:func:`..stages.signals.forecast_floor`), which "joins
    the signals by max; it never causes a scale-in by itself" (the protocol,
    ``observations.forecast``): alone, it counts only above the current count."""
    opinions = s.opinions
    if c.schedules:
        sched, _ = schedule_floor(ctx.policy, ctx.now)
        if sched is not None:
            opinions.append((sched, "schedule"))
    forecast = forecast_floor(ctx, default_mode)
    if forecast is not None and (opinions or forecast > ctx.current):
        opinions.append((forecast, "forecast"))


def unread(c: _Compiled, s: _Signals) -> None:
    """What a metric or a rule that cannot be read leaves: the response's ``error``, and
    whether nothing at all could be read — no target metric and no rule (a rule that reads
    but does not fire still counts as read). A metric that cannot be read blocks a scale-in
    but not a scale-out (Kubernetes, GCE); nothing read at all falls back on the default
    capacity (:func:`default_capacity`)."""
    failed, rules_unread = s.failed, s.rules_unread
    if failed:
        s.error = f"invalid metrics ({failed} invalid out of {len(c.signals)}), first error is: {s.first_error}"
    s.unreadable = not _read(s.opinions) and len(c.signals) == failed and not s.rules_read
    if s.unreadable and s.error is None:
        s.error = f"no rule's metric can be read ({rules_unread} of {rules_unread} rules)"


def default_capacity(ctx: Context, scope: Scope, s: _Signals) -> Decision:
    """No metric and no rule can be read, and a default capacity exists: ``max(current,
    default)`` within the bounds — Azure's fallback ("If there's a problem reading the
    resource metric, and the current capacity is below the default, autoscale scales out to
    the default",
    https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings);
    a schedule's or forecast's floor above it still counts."""
    current = ctx.current
    target = max([current, scope.default] + [o[0] for o in s.opinions])
    final = min(max(target, scope.minimum), scope.maximum)
    ctx.note("default capacity", current, final, f"no signal can be read: max(current, default {scope.default})")
    ctx.state.recommendations.append(ctx.now, target)
    return Decision(final, final, "ProfileDefault", s.results, profile=scope.name, error=s.error,
                    cause="default")


def highest(ctx: Context, s: _Signals) -> tuple[int, str]:
    """The highest opinion and its cause — GCE: "calculating the recommended number of VMs
    for each signal and then picking the signal that results in the largest number of VMs"
    (https://cloud.google.com/compute/docs/autoscaler/multiple-signals); a scale-in the
    forecast only limited is the signals' that read a metric. No opinion: the current count."""
    opinions, current = s.opinions, ctx.current
    if not opinions:
        return current, "metric"
    raw, cause = max(opinions)
    if cause == "forecast" and raw < current:
        read = _read(opinions)
        if read:
            cause = max(read)[1]
    if ctx.trace is not None:
        ctx.note("signals", current, raw, f"highest of {len(opinions)} signal(s): {cause}")
    return raw, cause


def stabilization(ctx: Context, c: _Compiled, raw: int) -> tuple[int, Optional[str]]:
    """The lowest recommendation of the scale-up window and the highest of the scale-down
    window bound the count (:func:`..stages.stabilization.stabilize_both_ways`, Kubernetes'
    ``stabilizeRecommendationWithBehaviors`` in pkg/controller/podautoscaler/horizontal.go);
    by default 0 s up and GCE's 600 s down
    (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions#stabilization_period)."""
    stabilized, why = stabilize_both_ways(ctx.state.recommendations, ctx.now, ctx.current, raw,
                                          c.up_window, c.down_window)
    if ctx.trace is not None:
        ctx.note("stabilization", raw, stabilized,
                 f"scale-up window {c.up_window:g}s, scale-down window {c.down_window:g}s")
    return stabilized, why


def rate_limits_and_bounds(ctx: Context, c: _Compiled, scope: Scope, stabilized: int) -> tuple[int, str]:
    """The behaviors' rate policies in exact arithmetic, then the bounds
    (:func:`..stages.rate_limits.limit_with_behavior`, Kubernetes'
    ``convertDesiredReplicasWithBehaviorRate`` in pkg/controller/podautoscaler/horizontal.go;
    by default at most max(+4, +100 %) per 15 s up, −100 % per 15 s down)."""
    lo, hi = scope.minimum, scope.maximum
    limited, why = limit_with_behavior(ctx.state, ctx.now, ctx.current, stabilized, lo, hi,
                                       c.up_select, c.up_policies, c.down_select, c.down_policies, exact=True)
    final = min(max(limited, lo), hi)
    if final != limited:
        why = "TooFewReplicas" if final == lo else "TooManyReplicas"
    if ctx.trace is not None:
        ctx.note("rate limits and bounds", stabilized, final, f"{why}; range [{lo}, {hi}]")
    return final, why


def scale_in_controls(ctx: Context, c: _Compiled, scope: Scope, bounded: int) -> tuple[int, bool]:
    """GCE's ``scaleInControl``: the size never drops further below the peak of the window
    than allowed (:func:`..stages.scale_in_control.limit_scale_in`; "Maximum allowed number
    (or %) of VMs that can be deducted from the peak recommendation during the window",
    https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers)."""
    final, controlled = limit_scale_in(ctx.state.sizes, ctx.now, bounded, c.scale_in_control, scope.maximum)
    if ctx.trace is not None:
        ctx.note("scale-in controls", bounded, final, "peak size of the window less the allowed scale-in")
    return final, controlled


def record(ctx: Context, s: _Signals, raw: int, cause: str, final: int, stabilized: int,
           stab_reason: Optional[str], limit_reason: str, controlled: bool,
           fallback_cd: float) -> tuple[str, str, Optional[float]]:
    """The response's reason — the last stage that changed the count says why — the scale
    action's cause (a move into ``[min, max]`` is the boundary's; a rule action the bounds
    only cut short stays the rule's, with its cooldown, as under ``azure``) and the cooldown
    it starts; a move the mode lets through is noted (:func:`..stages.cooldown.note_scale_action`:
    a move that is not a rule's keeps the rule action it overwrites)."""
    current = ctx.current
    if controlled:
        reason = "ScaleInControlled"
    elif final != stabilized:
        reason = limit_reason
    elif stab_reason is not None:
        reason = stab_reason
    elif s.reason_hint is not None and final == current:
        reason = s.reason_hint
    elif cause in ("schedule", "forecast") and final == raw and final > current:
        reason = "ScheduleFloor" if cause == "schedule" else "ForecastFloor"
    elif s.within_tolerance and final == current:
        reason = "WithinTolerance"
    else:
        reason = "DesiredWithinRange"
    if reason in ("TooFewReplicas", "TooManyReplicas") and not (
            cause == "rule" and final != current and (raw > current) == (final > current)):
        cause = "boundary"
    cooldown = s.rule_cooldown if cause == "rule" else None
    if final != current and carried_out(ctx.policy.mode, current, final):
        # (a move the mode blocks is not carried out: it neither starts nor ends a cooldown)
        note_scale_action(ctx.state, ctx.now, cause, fallback_cd)
    return reason, cause, cooldown


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
        state, current = ctx.state, ctx.current
        fallback_cd = start_of_cooldowns(state, ctx.now, ctx.settings)
        if state.recommendations is None:        # first sight: the current count was recommended
            state.recommendations = TimeLog([(ctx.now, current, None)])
        if current == 0:
            paused = paused_at_zero(current, state, SCALED_TO_ZERO)
            if paused is not None:
                if ctx.trace is not None:
                    ctx.note("at zero", 0, 0, paused)
                return Decision(0, 0, "ScalingDisabled", able_to_scale=False, extra={"paused": paused})
        scope = c.top if c.timeline is None else scope_in_force(ctx, c.timeline, c.scopes, c.top)
        # signals: each one's opinion; the highest wins
        s = _Signals()
        if ctx.obs.proposal is not None:
            given_proposal(ctx, s, ctx.obs.proposal)
        else:
            if c.signals:
                target_metrics(ctx, c, s)
            if scope.rules:
                threshold_rules(ctx, c, scope, s, fallback_cd, self.default_predictive_mode)
        if c.schedules or ctx.obs.forecast is not None:
            floors(ctx, c, s, self.default_predictive_mode)
        if s.failed or s.rules_unread:
            unread(c, s)
        if s.unreadable and scope.default is not None:
            return default_capacity(ctx, scope, s)
        if not s.opinions and (s.failed or s.unreadable):
            return Decision(current, current, "InvalidMetrics", s.results, profile=scope.name, error=s.error)
        raw, cause = highest(ctx, s)
        if s.failed and raw < current:   # an unreadable metric blocks a scale-in
            state.recommendations.append(ctx.now, current)
            return Decision(current, current, "InvalidMetrics", s.results, profile=scope.name, error=s.error)
        stabilized, stab_reason = stabilization(ctx, c, raw)
        final, limit_reason = rate_limits_and_bounds(ctx, c, scope, stabilized)
        controlled = False
        if c.scale_in_control is not None:
            final, controlled = scale_in_controls(ctx, c, scope, final)
        reason, cause, cooldown = record(ctx, s, raw, cause, final, stabilized, stab_reason, limit_reason,
                                         controlled, fallback_cd)
        if final != current and carried_out(ctx.policy.mode, current, final):
            record_zero(state, SCALED_TO_ZERO, ctx.now, final == 0)
        return Decision(final, final, reason, s.results, profile=scope.name, error=s.error, cause=cause,
                        cooldown_seconds=cooldown)

    def retention(self, ctx: Context) -> dict[str, float]:
        return self._compiled(ctx.policy).retention
