"""The ``gce`` semantics: the Compute Engine managed-instance-group autoscaler.

A composition of shared stages with GCE's defaults:

1. signals (:mod:`..stages.proposals`, :mod:`..stages.schedules`,
   :mod:`..stages.signals`): one exact ``ceil`` proposal per metric, the
   greatest active schedule, a capacity forecast; "the autoscaler ... picking
   the signal that results in the largest number of VMs"
   (https://cloud.google.com/compute/docs/autoscaler/multiple-signals); CPU
   utilization is that of the group's total vCPUs (:func:`total_vcpu_proposal`);
2. stabilization (:func:`..stages.stabilization.stabilize_down`): the peak
   recommendation of the stabilization period, 600 s by default and never
   shorter than the initialization period
   (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions);
3. bounds: ``min_replicas``/``max_replicas`` ("The recommended size is
   constrained by the minimum and maximum number of instances");
4. scale-in controls (:mod:`..stages.scale_in_control`): "If your autoscaling
   policy includes scale-in controls, then the recommended size is further
   constrained by your scale-in controls."

``mode`` (ON / ONLY_SCALE_OUT / OFF) is applied by the engine for every
semantics; it is exactly GCE's: the recommended size is always computed.

Undocumented points follow docs/research/gce.md (G-GAP-1 … G-GAP-11); the
choices are listed in docs/semantics/gce.md.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Optional

from .. import constants as C
from ..errors import RequestError
from ..policy import Metric, MetricTarget, Policy
from ..stages.proposals import (PER_INSTANCE, Proposal, ProposalError, Signal, check_utilization_targets,
                                exact_pair, initializing_members, not_running, number, signal_proposal)
from ..stages.scale_in_control import limit_scale_in
from ..stages.schedules import schedule_floor
from ..stages.signals import forecast_floor
from ..stages.stabilization import stabilize_down
from ..state import TimeLog
from ..units import exact
from .base import Context, Decision, MetricResult, Need, Semantics

# "If none of these are specified, the default will be to autoscale based on
# cpuUtilization to 0.6 or 60%." (autoscalingPolicy, REST reference)
DEFAULT_CPU_METRIC = Metric(type="resource", name="cpu",
                            target=MetricTarget(type="Utilization",
                                                average_utilization=int(exact(C.GCE_DEFAULT_CPU_UTILIZATION) * 100)))

_RESOURCE = frozenset(("resource", "container_resource"))


def _vcpu_samples(ctx, spec: Signal):
    """``(samples, members)`` of a CPU-like Utilization signal whose members do not
    all have the same request (vCPU count), or None when the shared per-member
    average gives GCE's answer already (equal requests) or cannot run."""
    if spec.type not in _RESOURCE or not spec.utilization or spec.rate is not None:
        return None
    members = ctx.obs.members
    obs = ctx.obs.metrics.get(spec.name)
    if not members or obs is None:
        return None
    samples = obs.members
    if not samples and obs.member_series:   # a gauge given as series: each member's latest sample
        samples = {k: pts[-1][1] for k, pts in obs.member_series.items() if pts}
    if not samples:
        return None
    first = None
    first_r = None
    for m in members:
        if samples.get(m.name) is None:
            continue
        requests = m.requests
        r = requests.get(spec.resource) if requests else None
        if r is None:
            return None   # the shared path reports the missing request
        if r is first_r:   # the same request object as the first: the same vCPUs
            continue
        q = exact_pair(r)   # cached: this check runs on every decision
        if first is None:
            first, first_r = q, r
        elif q != first:
            return samples, members
    return None


def _vcpu_sums(samples, members, resource: str, skip) -> tuple[Fraction, Fraction, int, int]:
    """``(usage, vcpus, members, excluded)`` summed over the members with a sample,
    leaving out the names in ``skip`` (each member weighs its ``count``)."""
    used, vcpus, n, excluded = Fraction(0), Fraction(0), 0, 0
    for m in members:
        name = m.name
        v = samples.get(name)
        if v is None:
            continue
        count = m.count
        if name in skip:
            excluded += count
            continue
        requests = m.requests
        r = requests.get(resource) if requests else None
        if r is None:
            raise ProposalError(f"missing request for {resource} on member {name}")
        rq = exact(r)
        if rq <= 0:
            raise ProposalError(f"request for {resource} on member {name} must be greater than 0")
        used += exact(v) * count
        vcpus += rq * count
        n += count
    return used, vcpus, n, excluded


def _vcpu_proposal(n: int, used: Fraction, vcpus: Fraction, members: int, target) -> Proposal:
    pct = used / vcpus * 100
    ratio = pct / exact(target)
    replicas = -((-n * ratio.numerator) // ratio.denominator)
    avg = used / members
    return Proposal(max(0, replicas), ratio.numerator, ratio.denominator, number(avg.numerator, avg.denominator),
                    pct.numerator // pct.denominator, members=members)


def total_vcpu_proposal(ctx, spec: Signal, initializing: dict) -> Optional[Proposal]:
    """GCE's CPU utilization is the utilization of the group's *total* vCPUs: "The
    autoscaler treats the target CPU utilization level as a fraction of the average
    use of all vCPUs over time in the instance group. If the average utilization of
    your total vCPUs exceeds the target utilization, the autoscaler adds more VM
    instances" (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu):
    Σ usage / Σ vCPUs, not the mean of each VM's percentage. The two differ only
    when the VMs' requests (vCPU counts) differ; then this computes
    ``ceil(N × Σ usage / Σ requests × 100 / target)``, with the initialization
    period applied as the shared stage does (G-GAP-1: the settled VMs decide a
    scale-out; every VM with data a scale-in, capped at N). None: the shared
    per-member average is already exact."""
    found = _vcpu_samples(ctx, spec)
    if found is None:
        return None
    samples, members = found
    n = ctx.current
    init = initializing.get(spec.init)
    if init is None:
        init = initializing[spec.init] = initializing_members(members, ctx.now, spec.init)
    used, vcpus, count, excluded = _vcpu_sums(samples, members, spec.resource, init)
    starting = not_running(members)   # requested, not running: no load to multiply (see signal_proposal)
    if excluded or starting:
        if count:
            p = _vcpu_proposal(n - starting, used, vcpus, count, spec.target)
            if p.replicas > n:
                p.excluded = excluded
                return p
        used, vcpus, count, _ = _vcpu_sums(samples, members, spec.resource, ())
        p = _vcpu_proposal(n, used, vcpus, count, spec.target)
        if p.replicas > n:
            p.replicas = n
        return p
    if count == 0:
        raise ProposalError(f"no samples for {spec.name} matched known members")
    return _vcpu_proposal(n, used, vcpus, count, spec.target)


class _Compiled:
    """What the gce semantics derives from one policy (cached on it)."""
    __slots__ = ("specs", "no_metrics_error", "min_r", "max_r", "floor_r", "init", "window", "retention",
                 "scale_in_control", "schedules")

    def __init__(self, policy: Policy):
        self.init = policy.initialization_period_seconds if policy.initialization_period_seconds is not None \
            else C.GCE_INITIALIZATION_PERIOD
        metrics = policy.metrics
        self.no_metrics_error: Optional[str] = None
        if metrics:
            enabled = [m for m in metrics if m.enabled]
            if not enabled:
                self.no_metrics_error = "no enabled metrics"
        else:
            # GCE's default signal (scaling-cpu: CPU utilization 0.6 when a policy names none);
            # threshold rules are not part of GCE, so a rules-only policy gets the default too
            enabled = [DEFAULT_CPU_METRIC]
        self.specs = tuple(Signal(m, self.init) for m in enabled)
        self.min_r = policy.min_replicas
        self.max_r = policy.max_replicas
        # G-GAP-7: with any per-instance signal the group cannot go below 1 VM: "The autoscaling
        # policy must not use any of the following metrics that depend on running instances. If
        # the policy includes these metrics, then the autoscaler requires at least one instance
        # in the group to obtain a signal, and the group won't scale in to zero instances."
        # (understanding-autoscaler-decisions, "Autoscale a MIG to zero instances")
        floor = self.min_r
        if any(s.metric.type in PER_INSTANCE for s in self.specs):
            floor = max(floor, C.GCE_PER_INSTANCE_MIN_SIZE)
        self.floor_r = min(floor, self.max_r)
        down = policy.behavior.scale_down if policy.behavior is not None else None
        stab = down.stabilization_window_seconds if down is not None and \
            down.stabilization_window_seconds is not None else C.GCE_STABILIZATION_PERIOD
        # the stabilization period is never shorter than the initialization period (a rule of
        # the protocol; docs/semantics/gce.md, "stabilization period")
        self.window = max(float(stab), float(self.init))
        # history each window needs: recommendations for stabilization, sizes for scale-in controls
        control = self.scale_in_control = policy.scale_in_control
        self.schedules = bool(policy.schedules)
        self.retention = {"recommendations": self.window,
                          "sizes": control.time_window_seconds if control is not None else 0.0,
                          "scale_up_events": 0.0, "scale_down_events": 0.0}


class GceSemantics(Semantics):
    name = "gce"
    decides_from = frozenset({"metrics", "behavior", "scale_in_control", "schedules", "predictive"})
    ignores = {"rules": "a MIG autoscaler has no threshold rules",
               "profiles": "a MIG autoscaler has no instance profiles"}
    color = "#ea4335"

    def metric_need(self, metric: Metric) -> Need:
        """A per-instance metric is read per instance, as samples or as each instance's
        series (a counter's rate needs two points: ``target.rate``)."""
        need = super().metric_need(metric)
        if metric.type in ("resource", "container_resource", "pods"):
            return dataclasses.replace(need, shapes=frozenset({"members", "member_series"}))
        return need

    def default_metrics(self, policy) -> tuple:
        """With no signal, CPU at 0.6 (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu)."""
        return () if policy.metrics else (DEFAULT_CPU_METRIC,)
    summary = "Compute Engine managed instance group autoscaler (autoscalingPolicy), from its documentation"

    def check(self, policy: Policy) -> None:
        if policy.min_replicas is None:
            raise RequestError("$.policy.min_replicas",
                               "required by the gce semantics (autoscalingPolicy.minNumReplicas: GCE's own "
                               "default depends on the maximum and is not documented)")
        if policy.max_replicas is None:
            raise RequestError("$.policy.max_replicas",
                               "required by the gce semantics (autoscalingPolicy.maxNumReplicas \"is required "
                               "when creating or updating an autoscaler\")")
        check_utilization_targets(policy, self.name)

    def compiled(self, policy: Policy) -> _Compiled:
        return self.cached(policy, self._build)

    def _build(self, policy: Policy) -> _Compiled:
        self.check(policy)
        return _Compiled(policy)

    # -- one signal ------------------------------------------------------------------------
    def decide(self, ctx: Context) -> Decision:
        c = self.compiled(ctx.policy)
        state, now, current = ctx.state, ctx.now, ctx.current
        tr = ctx.trace is not None   # explain: notes are built only when asked for
        if state.recommendations is None:
            # G-GAP-9, first sight: "When you have a non-autoscaled MIG and you configure
            # autoscaling from scratch, the autoscaler uses the current MIG size as a starting
            # point. Before scaling in, the autoscaler uses the stabilization period and then it
            # uses scale-in controls to constrain the scale-in rate"
            # (https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions)
            state.recommendations = TimeLog([(now, current, None)])

        # 1. signals: the highest wins
        results: list = []
        failed = 0
        first_error: Optional[str] = None
        raw: Optional[int] = None
        cause = "metric"
        proposal = ctx.obs.proposal
        if proposal is not None:
            raw = proposal
            if tr:
                ctx.note("signals", current, raw, "observations.proposal: metric calculation skipped")
        else:
            initializing: dict = {}
            for spec in c.specs:
                try:
                    p = total_vcpu_proposal(ctx, spec, initializing)
                    if p is None:
                        p = signal_proposal(ctx, spec, initializing, "scale_out")
                except ProposalError as e:
                    text = str(e)
                    results.append(MetricResult(spec.name, error=text))
                    failed += 1
                    if first_error is None:
                        first_error = text
                    continue
                if spec.resource == "cpu" and p.utilization is not None and \
                        p.utilization >= C.GCE_HEAVY_CPU_PERCENT and p.replicas > current + (current + 1) // 2:
                    # G-GAP-12: "During periods of heavy CPU utilization, if utilization is close to
                    # 100%, the autoscaler estimates that the group might already be heavily
                    # overloaded. In these cases, the autoscaler increases the number of virtual
                    # machines by 50% at most." (https://cloud.google.com/compute/docs/autoscaler/scaling-cpu)
                    p.replicas = current + (current + 1) // 2
                    if tr:
                        ctx.note("signals", current, p.replicas,
                                 f"{spec.name} at {p.utilization}% CPU: at most 50% more VMs")
                results.append(MetricResult(spec.name, p.replicas, p.utilization, p.value))
                if raw is None or p.replicas > raw:
                    raw = p.replicas
            if tr:
                ctx.note("signals", current, raw, "highest proposal of all metrics")
        sched, sched_name = schedule_floor(ctx.policy, now) if c.schedules else (None, None)
        if sched is not None and (raw is None or sched > raw):
            if tr:
                ctx.note("schedules", raw, sched, f"schedule {sched_name!r} is active")
            raw, cause = sched, "schedule"
        forecast = forecast_floor(ctx, self.default_predictive_mode)
        if forecast is not None and (raw is None or forecast > raw):
            if tr:
                ctx.note("forecast", raw, forecast, "capacity forecast above the other signals")
            raw, cause = forecast, "forecast"

        # G-GAP-6: no working signal, or a failed one while the rest would scale in
        error: Optional[str] = None
        if failed:
            error = f"invalid metrics ({failed} invalid out of {len(c.specs)}), first error is: {first_error}"
        elif raw is None and c.no_metrics_error is not None:
            error = c.no_metrics_error
        if raw is None or (failed and raw < current):
            if tr:
                ctx.note("signals", current, current, error or "no signal")
            return Decision(current, current, "InvalidMetrics", results, error=error or "no signal")
        reason = "ScheduleFloor" if cause == "schedule" else "ForecastFloor" if cause == "forecast" \
            else "DesiredWithinRange"

        # 2. stabilization: the peak of the period, this recommendation included (then recorded)
        stabilized, why = stabilize_down(state.recommendations, now, raw, c.window)
        if tr:
            ctx.note("stabilization", raw, stabilized, f"peak recommendation of the last {c.window:g}s")
        if why is not None:
            reason = why

        # 3. bounds
        bounded = stabilized
        if bounded > c.max_r:
            bounded, reason, cause = c.max_r, "TooManyReplicas", "boundary"
        elif bounded < c.floor_r:
            bounded, reason, cause = c.floor_r, "TooFewReplicas", "boundary"
        if tr:
            ctx.note("bounds", stabilized, bounded, f"[{c.floor_r}, {c.max_r}]")

        # 4. scale-in controls
        control = c.scale_in_control
        final = bounded
        if control is not None:
            final, limited = limit_scale_in(state.sizes, now, bounded, control, c.max_r)
            if tr:
                ctx.note("scale-in controls", bounded, final,
                         f"peak size of the last {control.time_window_seconds:g}s less the allowed scale-in")
            if limited:
                reason = "ScaleInControlled"
        return Decision(final, final, reason, results, error=error, cause=cause)

    def retention(self, ctx: Context) -> dict[str, float]:
        return self.compiled(ctx.policy).retention
