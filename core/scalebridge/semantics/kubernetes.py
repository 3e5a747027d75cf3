"""The ``kubernetes`` semantics: the HorizontalPodAutoscaler controller.

Port of ``reconcileAutoscaler``, ``computeReplicasForMetrics``,
``computeReplicasForMetric``, ``normalizeDesiredReplicas`` and
``normalizeDesiredReplicasWithBehaviors`` in
pkg/controller/podautoscaler/horizontal.go (kubernetes/kubernetes); the
per-metric arithmetic is in :mod:`.kubernetes_replicas`. Defaults come from
the kube-controller-manager flags (``settings``) and
pkg/apis/autoscaling/v2/defaults.go. The release reproduced and its feature
gates (``settings.kubernetes_version``, ``settings.feature_gates``; Kubernetes 1.37
by default) are :mod:`.kubernetes_release`'s: what differs by release is where a
workload is at zero (:meth:`KubernetesSemantics.at_zero`) and whether a per-HPA
tolerance is honoured (:func:`tolerances`).
"""
from __future__ import annotations

from typing import Optional

from .. import constants as C
from ..compiled import derived
from ..errors import RequestError
from ..policy import Metric, MetricTarget, Policy, ScalingRules, require_stated_utilization
from ..protocol import Member, MetricObservation
from ..stages.signals import forecast_floor
from ..stages.rate_limits import RatePolicy, limit_with_behavior, limit_without_behavior
from ..stages.stabilization import stabilize_both_ways, stabilize_down
from ..stages.zero import record_zero, scaled_to_zero
from ..state import TimeLog
from ..units import format_milli, milli_value
from .base import Context, Decision, MetricResult, Semantics, carried_out
from .kubernetes_release import NEWEST, OLDEST_EXACT, Release, release, tolerance_note, version_text
from .kubernetes_replicas import (MetricError, ReplicaCount, Tolerances, external_per_pod_sum,
                                  external_value_sum, per_pod_replicas, plain_metric_replicas,
                                  resource_utilization_replicas, usage_ratio_replicas)

DEFAULT_CPU_METRIC = Metric(type="resource", name="cpu",
                            target=MetricTarget(type="Utilization",
                                                average_utilization=C.K8S_DEFAULT_CPU_UTILIZATION))


class Behavior:
    """A present ``spec.behavior`` with the API server's defaults filled in
    (``SetDefaults_HorizontalPodAutoscalerBehavior``) and the scale-down
    window from the controller flag when unset
    (``maybeInitScaleDownStabilizationWindow``)."""
    __slots__ = ("up_window", "up_select", "up_policies", "down_window", "down_select",
                 "down_policies", "longest_up", "longest_down")

    def __init__(self, policy: Policy, downscale_default: float):
        b = policy.behavior
        up = b.scale_up or ScalingRules()
        down = b.scale_down or ScalingRules()
        self.up_window = up.stabilization_window_seconds if up.stabilization_window_seconds is not None \
            else float(C.K8S_SCALE_UP_STABILIZATION)
        self.up_select = up.select_policy or "Max"
        self.up_policies = tuple(RatePolicy(p.type, p.value, p.period_seconds) for p in up.policies) \
            if up.policies is not None else (RatePolicy("Pods", C.K8S_SCALE_UP_PODS, C.K8S_SCALE_UP_PERIOD),
                                             RatePolicy("Percent", C.K8S_SCALE_UP_PERCENT, C.K8S_SCALE_UP_PERIOD))
        self.down_window = down.stabilization_window_seconds if down.stabilization_window_seconds is not None \
            else downscale_default
        self.down_select = down.select_policy or "Max"
        self.down_policies = tuple(RatePolicy(p.type, p.value, p.period_seconds) for p in down.policies) \
            if down.policies is not None else (RatePolicy("Percent", C.K8S_SCALE_DOWN_PERCENT, C.K8S_SCALE_DOWN_PERIOD),)
        self.longest_up = max((p.period_seconds for p in self.up_policies), default=0.0)
        self.longest_down = max((p.period_seconds for p in self.down_policies), default=0.0)


def tolerances(policy: Policy, settings_tolerance: Optional[float], honoured: bool = True) -> Tolerances:
    """Per-direction tolerance: ``behavior.scale_*.tolerance``, else the policy's,
    else ``--horizontal-pod-autoscaler-tolerance`` (0.1). A release without
    ``HPAConfigurableTolerance`` (``honoured`` False: before 1.33, or 1.33–1.34 with the
    alpha gate off) has no per-HPA tolerance: only the flag's (KEP-4951; upstream
    ``TestConfigurableTolerance``, "no scaling because the configurable tolerance is
    ignored when feature gate is disabled")."""
    flag = float(settings_tolerance if settings_tolerance is not None else C.K8S_TOLERANCE)
    if not honoured:
        return Tolerances(scale_down=flag, scale_up=flag)
    base = policy.tolerance if policy.tolerance is not None else flag
    up = down = float(base)
    b = policy.behavior
    if b is not None:
        if b.scale_up is not None and b.scale_up.tolerance is not None:
            up = float(b.scale_up.tolerance)
        if b.scale_down is not None and b.scale_down.tolerance is not None:
            down = float(b.scale_down.tolerance)
    return Tolerances(scale_down=down, scale_up=up)


def has_object_or_external(policy: Policy) -> bool:
    """``hasObjectOrExternalMetrics`` (horizontal.go): an enabled Object or External metric;
    a formula is one (it reaches an HPA as KEDA's composite External metric)."""
    return any(m.enabled and m.type in ("object", "external", "formula") for m in policy.metrics or ())


def has_tolerance(policy: Policy) -> bool:
    """Whether the policy sets a per-HPA tolerance (its own, or a behavior direction's)."""
    b = policy.behavior
    return policy.tolerance is not None or (b is not None and any(
        r is not None and r.tolerance is not None for r in (b.scale_up, b.scale_down)))


SCALED_TO_ZERO = "kubernetes.scaled_to_zero"
"""The state key of the HPA's ``ScaledToZero=True`` condition: the time this autoscaler
scaled the target to zero (the condition's lastTransitionTime); absent is ``False`` or no
condition, which upstream does not tell apart."""


class _Compiled:
    """What the kubernetes semantics derives from one policy (kept with it): the HPA's
    metrics (its default when the policy names none), its bounds, its tolerances."""
    __slots__ = ("policy", "specs", "min_r", "max_r", "behavior", "object_or_external", "_tolerances")

    def __init__(self, policy: Policy):
        self.policy = policy
        self.specs = tuple(m for m in policy.metrics if m.enabled) if policy.metrics else (DEFAULT_CPU_METRIC,)
        self.min_r = policy.min_replicas if policy.min_replicas is not None else C.K8S_MIN_REPLICAS
        self.max_r = policy.max_replicas
        self.behavior = policy.behavior
        self.object_or_external = has_object_or_external(policy)
        self._tolerances: dict = {}

    def tolerances(self, settings_tolerance: Optional[float], honoured: bool) -> Tolerances:
        """:func:`tolerances` of the policy, per ``settings.tolerance`` and release."""
        key = (settings_tolerance, honoured)
        t = self._tolerances.get(key)
        if t is None:
            t = self._tolerances[key] = tolerances(self.policy, settings_tolerance, honoured)
        return t


def pods_of(ctx: Context, obs: Optional[MetricObservation]) -> list[Member]:
    """The pods the selector returns: ``observations.members``; when absent, one
    running, ready pod per sampled member (documented scalebridge default)."""
    members = ctx.obs.members
    if members is not None:
        return members
    if obs is not None and obs.members:
        return [Member(name=n, ready=True) for n in obs.members]
    return [Member(name=f"replica-{i}", ready=True) for i in range(ctx.current)]


class KubernetesSemantics(Semantics):
    name = "kubernetes"
    decides_from = frozenset({"metrics", "behavior", "predictive"})
    ignores = {"rules": "an HPA has no threshold rules",
               "profiles": "an HPA has no instance profiles",
               "schedules": "an HPA has no schedules",
               "scale_in_control": "an HPA limits scale-in with behavior.scale_down"}
    color = "#326ce5"
    summary = "Kubernetes HorizontalPodAutoscaler (autoscaling/v2), ported from kube-controller-manager"

    def _check_bounds(self, policy: Policy) -> None:
        if policy.max_replicas is None:
            # profiles are Azure's: their capacity does not stand in for maxReplicas here
            # (as under gce)
            raise RequestError("$.policy.max_replicas",
                               "required by the kubernetes semantics (HorizontalPodAutoscalerSpec.maxReplicas)")
        # pkg/apis/autoscaling/validation/validation.go, validateResourceSource
        require_stated_utilization(policy, "required by the kubernetes semantics (the API server: \"must set "
                                           "either a target raw value or a target utilization\")")

    def check(self, policy: Policy) -> None:
        self._check_bounds(policy)
        from ..stages.activation import phases_of
        # pkg/apis/autoscaling/validation/validation.go, validateMetrics (whatever the gate):
        # "must specify at least one Object or External metric to support scaling to zero
        # replicas"; a formula is an External metric, and under an activation phase (KEDA)
        # the HPA's own minimum is 1
        if policy.min_replicas == 0 and phases_of(policy) is None and not has_object_or_external(policy):
            raise RequestError("$.policy.metrics", "Forbidden: must specify at least one Object or External metric "
                                                   "to support scaling to zero replicas (the kubernetes semantics "
                                                   "refuses min_replicas: 0 as the API server does: "
                                                   "pkg/apis/autoscaling/validation/validation.go, validateMetrics)")

    def check_settings(self, settings) -> None:
        release(settings.kubernetes_version, settings.feature_gates)

    def ignored_parts(self, policy: Policy, settings=None) -> list[str]:
        """Also what the release in ``settings`` (Kubernetes 1.37 without) ignores or
        refuses of the policy: a per-HPA tolerance without ``HPAConfigurableTolerance``;
        ``minReplicas: 0`` without ``HPAScaleToZero`` ("spec.minReplicas: Invalid value: 0:
        must be greater than or equal to 1", validateHorizontalPodAutoscalerSpec — the
        controller decides such an HPA all the same, and so does this semantics); a
        release newer or older than the ones reproduced."""
        lines = super().ignored_parts(policy)
        r = release(getattr(settings, "kubernetes_version", None), getattr(settings, "feature_gates", None))
        if r.version > NEWEST:
            lines.append(f"settings.kubernetes_version: {r.name} is decided as Kubernetes {version_text(NEWEST)}, "
                         "the newest release this semantics reproduces")
        elif r.version < OLDEST_EXACT:
            lines.append(f"settings.kubernetes_version: {r.name} is decided with the code paths of Kubernetes "
                         f"{version_text(OLDEST_EXACT)}, the oldest release this semantics reproduces "
                         "(docs/known-divergences.md)")
        if has_tolerance(policy):
            why = tolerance_note(r)
            if why is not None:
                lines.append(f"tolerance: {why}")
        if policy.min_replicas == 0 and not r.scale_to_zero:
            lines.append(f"min_replicas: 0 is refused by the API server of {r.name} without the HPAScaleToZero "
                         "feature gate (\"spec.minReplicas: Invalid value: 0: must be greater than or equal to 1\")"
                         + ("; were the HPA there, its controller would not wake it from zero" if
                            r.scaled_to_zero_condition else ""))
        return lines

    def default_metrics(self, policy) -> tuple:
        """With no metric, the HPA's CPU at 80 % (autoscaling/v2 defaults.go)."""
        return () if policy.metrics else (DEFAULT_CPU_METRIC,)

    # -- computeReplicasForMetric ---------------------------------------------------------
    def metric_proposal(self, ctx: Context, spec: Metric, tol: Tolerances, status_replicas: int) -> ReplicaCount:
        obs = ctx.obs.metrics.get(spec.name)
        s = ctx.settings
        cpu_init = s.cpu_initialization_period_seconds
        cpu_init = C.K8S_CPU_INITIALIZATION_PERIOD if cpu_init is None else cpu_init
        delay = s.initial_readiness_delay_seconds
        delay = C.K8S_INITIAL_READINESS_DELAY if delay is None else delay
        kind = spec.type
        if kind in ("resource", "container_resource"):
            resource = spec.name
            if obs is None or not obs.members:
                raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API")
            pods = pods_of(ctx, obs)
            if spec.target.type == "AverageValue":
                return plain_metric_replicas(ctx.current, milli_value(spec.target.average_value), tol, pods, obs,
                                             resource, ctx.now, cpu_init, delay)
            return resource_utilization_replicas(ctx.current, spec.target.average_utilization, resource, tol, pods, obs,
                                                 ctx.now, cpu_init, delay)
        if kind == "pods":
            if obs is None or not obs.members:
                raise MetricError(f"unable to get metric {spec.name}: no metrics returned from custom metrics API")
            return plain_metric_replicas(ctx.current, milli_value(spec.target.average_value), tol, pods_of(ctx, obs), obs,
                                         None, ctx.now, cpu_init, delay)
        if kind == "object":
            if obs is None or obs.value is None:
                raise MetricError(f"unable to get metric {spec.name}: no metrics returned from custom metrics API")
            usage = milli_value(obs.value)
            if spec.target.type == "AverageValue":
                return per_pod_replicas(status_replicas, usage, milli_value(spec.target.average_value), tol)
            ratio = float(usage) / float(milli_value(spec.target.value))
            replicas, within = usage_ratio_replicas(ctx.current, ratio, tol, pods_of(ctx, obs))
            return ReplicaCount(replicas, None, usage, within)
        if kind == "external":
            if obs is None or (not obs.values and obs.value is None):
                raise MetricError(f"unable to get external metric {spec.name}: no metrics returned from external metrics API")
            samples = [milli_value(v) for v in obs.values] if obs.values else [milli_value(obs.value)]
            if spec.target.type == "AverageValue":
                return per_pod_replicas(status_replicas, external_per_pod_sum(samples),
                                        milli_value(spec.target.average_value), tol, external=True)
            usage = external_value_sum(samples)
            ratio = float(usage) / float(milli_value(spec.target.value))
            replicas, within = usage_ratio_replicas(ctx.current, ratio, tol, pods_of(ctx, obs))
            return ReplicaCount(replicas, None, usage, within)
        raise MetricError(f"invalid metric source type {kind!r}: the kubernetes semantics supports "
                          "resource, container_resource, pods, object and external")

    def _error_text(self, spec: Metric, err: str) -> str:
        """The error as ``computeReplicasForMetric`` wraps what ``computeStatusFor*Metric``
        returns (horizontal.go)."""
        kind, name = spec.type, spec.name
        if kind in ("resource", "container_resource"):
            what = "utilization" if spec.target.type == "Utilization" else "usage"
            inner = f"failed to get {name} {what}: {err}"   # computeStatusForResourceMetricGeneric
            if kind == "container_resource":
                return f"failed to get {spec.container} container metric value: {inner}"
            return f"failed to get {name} resource metric value: {inner}"
        if kind == "pods":
            return f"failed to get pods metric value: {err}"
        if kind == "object":
            if spec.target.type == "AverageValue":
                err = f"failed to get {name} object metric: {err}"
            return f"failed to get object metric value: {err}"
        if kind == "external":
            if spec.target.type == "AverageValue":
                inner = f"failed to get {name} external metric: {err}"
            else:
                inner = f"failed to get external metric {name}: {err}"
            return f"failed to get {name} external metric value: {inner}"
        return err

    # -- computeReplicasForMetrics ------------------------------------------------------------
    def compute_replicas_for_metrics(self, ctx: Context, specs: tuple[Metric, ...], tol: Tolerances):
        status = ctx.obs.status_replicas
        status_replicas = int(status) if status is not None else ctx.current
        results: list[MetricResult] = []
        replicas = 0
        winner: Optional[ReplicaCount] = None
        invalid = 0
        first_error: Optional[str] = None
        for spec in specs:
            try:
                p = self.metric_proposal(ctx, spec, tol, status_replicas)
            except MetricError as e:
                text = self._error_text(spec, str(e))
                results.append(MetricResult(spec.name, error=text))
                if first_error is None:
                    first_error = text
                invalid += 1
                continue
            util = p.utilization
            value = format_milli(p.value_milli) if p.value_milli is not None else None
            results.append(MetricResult(spec.name, p.replicas, util, value))
            if replicas == 0 or p.replicas > replicas:
                replicas = p.replicas
                winner = p
        error = None
        if first_error is not None:
            error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"
        if invalid >= len(specs) or (invalid > 0 and replicas < ctx.current):
            return -1, results, error, winner
        return replicas, results, error, winner

    # -- reconcileAutoscaler ------------------------------------------------------------------
    def decide(self, ctx: Context) -> Decision:
        policy, state, now, current = ctx.policy, ctx.state, ctx.now, ctx.current
        c = self._compiled(policy)
        tr = ctx.trace is not None   # explain: notes are built only when asked for
        min_r = c.min_r
        max_r = c.max_r
        behavior = c.behavior
        if state.recommendations is None:   # recordInitialRecommendation
            state.recommendations = TimeLog([(now, current, None)])
        specs = c.specs
        settings = ctx.settings
        rel = release(settings.kubernetes_version, settings.feature_gates)
        tol = c.tolerances(settings.tolerance, rel.configurable_tolerance)
        if tr and not rel.configurable_tolerance and has_tolerance(policy):
            ctx.note("tolerance", current, current, f"the policy's tolerance: {tolerance_note(rel)}")

        from_zero = False
        if current == 0:
            paused = self.at_zero(rel, c, state)
            if paused is not None:
                ctx.note("bounds", current, current, paused)
                return Decision(0, 0, "ScalingDisabled", able_to_scale=False, extra={"paused": paused})
            from_zero = min_r != 0
        elif current > max_r or current < min_r:
            # the controller does not read metrics here; they are reported for information
            _, results, _, _ = self.compute_replicas_for_metrics(ctx, specs, tol) if specs else (0, [], None, None)
            desired = max_r if current > max_r else min_r
            reason = "TooManyReplicas" if current > max_r else "TooFewReplicas"
            ctx.note("bounds", current, desired, f"current number of replicas {'above Spec.MaxReplicas' if current > max_r else 'below Spec.MinReplicas'}")
            if carried_out(policy.mode, current, desired):
                if behavior is not None:
                    window = ctx.settings.downscale_stabilization_seconds
                    b = self._behavior(policy, C.K8S_DOWNSCALE_STABILIZATION if window is None else window)
                    _overwrite_outdated_event(state, now, desired > current, b)   # storeScaleEvent
                _record_scaled_to_zero(state, rel, c, now, current, desired)
            return Decision(desired, desired, reason, results, cause="boundary")

        if ctx.obs.proposal is not None:
            metric_desired, results, error, winner = ctx.obs.proposal, [], None, None
        elif specs:
            metric_desired, results, error, winner = self.compute_replicas_for_metrics(ctx, specs, tol)
        else:
            metric_desired, results, error, winner = -1, [], "no enabled metrics", None
        metrics_out = results
        if tr:
            ctx.note("metrics", current, metric_desired,
                     "highest proposal of all metrics" if metric_desired >= 0 else (error or ""))
        if metric_desired == -1:
            return Decision(current, current, "InvalidMetrics", metrics_out, error=error or "no metrics")

        desired = metric_desired if metric_desired > 0 else 0
        cause = "metric"
        forecast = forecast_floor(ctx, self.default_predictive_mode)
        if forecast is not None and forecast > desired:   # a forecast joins the signals by max
            if tr:
                ctx.note("forecast", desired, forecast, "capacity forecast above the metrics' proposal")
            desired, cause = forecast, "forecast"
        if behavior is None:
            window = ctx.settings.downscale_stabilization_seconds
            window = C.K8S_DOWNSCALE_STABILIZATION if window is None else window
            stabilized, stab_reason = stabilize_down(state.recommendations, now, desired, window, closed=True)
            final, limit_reason = limit_without_behavior(current, stabilized, min_r, max_r)
            if tr:
                ctx.note("stabilization", desired, stabilized, f"highest recommendation of the last {window:g}s")
                ctx.note("limits", stabilized, final, limit_reason)
        else:
            window = ctx.settings.downscale_stabilization_seconds
            b = self._behavior(policy, C.K8S_DOWNSCALE_STABILIZATION if window is None else window)
            stabilized, stab_reason = stabilize_both_ways(state.recommendations, now, current, desired,
                                                          b.up_window, b.down_window)
            final, limit_reason = limit_with_behavior(state, now, current, stabilized, min_r, max_r,
                                                      b.up_select, b.up_policies, b.down_select, b.down_policies)
            if tr:
                ctx.note("stabilization", desired, stabilized,
                         f"scale-up window {b.up_window:g}s, scale-down window {b.down_window:g}s")
                ctx.note("rate limits", stabilized, final, limit_reason)
            if final != current and carried_out(policy.mode, current, final):
                _overwrite_outdated_event(state, now, final > current, b)
        if from_zero and final < min_r:
            # scaled to zero, then minReplicas raised: never below it on the way up
            # (reconcileAutoscaler, 1.36+)
            final = min_r
        if final != current and carried_out(policy.mode, current, final):
            _record_scaled_to_zero(state, rel, c, now, current, final)
        if final != stabilized:
            reason = limit_reason
        elif stab_reason is not None:
            reason = stab_reason
        elif final == current and winner is not None and winner.within_tolerance and not error:
            reason = "WithinTolerance"
        else:
            reason = "DesiredWithinRange"
        cause = "boundary" if reason in ("TooFewReplicas", "TooManyReplicas") else cause
        return Decision(final, final, reason, metrics_out, error=error, cause=cause)

    def at_zero(self, rel: Release, c: "_Compiled", state) -> Optional[str]:
        """Why a workload at zero replicas stays paused, or None when it is decided.

        Before 1.36 (``reconcileAutoscaler``): "scaling is disabled since the replica
        count of the target is zero" unless ``minReplicas`` is 0, whoever set the zero —
        the alpha scale-to-zero of 1.16–1.35, which cannot tell a pause from its own zero.

        From 1.36 (kubernetes/kubernetes#135118, "KEP-2021: HPA condition based scaling
        to zero"; ``shouldComputeMetricsForZeroReplicas``): it is decided only when the HPA
        itself scaled it to zero — ``ScaledToZero=True``, which only the HPAScaleToZero gate
        writes — and either it has an Object or External metric, or ``minReplicas`` was
        raised above 0 since. A zero set by hand, by an HPA before 1.36 or with the gate
        off stays paused (KEP-2021 README, "How the HPA distinguishes zero from paused";
        upstream ``TestScaleToZeroBehavior``, "manual scale to zero disables HPA")."""
        base = "scaling is disabled since the replica count of the target is zero"
        if not rel.scaled_to_zero_condition:
            return base if c.min_r != 0 else None
        recorded = rel.scale_to_zero and scaled_to_zero(state, SCALED_TO_ZERO)
        if recorded and (c.min_r != 0 or c.object_or_external):
            return None
        if not rel.scale_to_zero:
            why = f"the HPAScaleToZero feature gate is off in {rel.name}: zero is a pause"
        elif not recorded:
            why = ("this autoscaler did not scale it to zero (no ScaledToZero=True): someone else set it to zero, "
                   "which pauses autoscaling until the size is set above zero")
        else:
            why = "no Object or External metric can wake it (minReplicas 0 needs one)"
        return f"{base}: {why}"

    def _compiled(self, policy: Policy) -> "_Compiled":
        return self.cached(policy, self._build)

    def _build(self, policy: Policy) -> "_Compiled":
        self.check(policy)   # raises before anything is cached: every decision on this policy raises
        return _Compiled(policy)

    def _behavior(self, policy: Policy, downscale_default: float) -> Behavior:
        return derived(policy, ("k8s-behavior", downscale_default), lambda p: Behavior(p, downscale_default))

    def retention(self, ctx: Context) -> dict[str, float]:
        policy = ctx.policy
        window = ctx.settings.downscale_stabilization_seconds
        window = C.K8S_DOWNSCALE_STABILIZATION if window is None else window
        return derived(policy, ("k8s-retention", window), lambda p: self._retention(p, window))

    def _retention(self, policy: Policy, window: float) -> dict[str, float]:
        if policy.behavior is None:
            return {"recommendations": window, "scale_up_events": 0, "scale_down_events": 0, "sizes": 0}
        # both logs feed both limits (period start = current - added + deleted, each summed over
        # the limiting direction's policy period): keep either for the longest period of any
        # policy; storeScaleEvent never deletes events
        b = self._behavior(policy, window)
        longest = max(b.longest_up, b.longest_down)
        return {"recommendations": max(b.up_window, b.down_window), "scale_up_events": longest,
                "scale_down_events": longest, "sizes": 0}


def _record_scaled_to_zero(state, rel: Release, c: _Compiled, now: float, current: int, final: int) -> None:
    """The ``ScaledToZero`` condition, set after a rescale as ``reconcileAutoscaler``
    does (1.36+): ``True`` when it scaled from above zero to zero with ``minReplicas`` 0
    and an Object or External metric, else ``False`` (reason ``NotScaledToZero``) — and
    removed on a rescale with the gate off (upstream ``TestScaleToZeroBehavior``, "stale
    ScaledToZero condition removed on normal rescale, FG off")."""
    if rel.scaled_to_zero_condition:
        record_zero(state, SCALED_TO_ZERO, now, rel.scale_to_zero and current > 0 and final == 0 and c.min_r == 0
                    and c.object_or_external)


SLOT_KEYS = {True: "kubernetes.scale_up_order", False: "kubernetes.scale_down_order"}
"""The times of a direction's scale events in the controller's slice order, kept in
``state`` only while that order is not the time order (see :func:`_overwrite_outdated_event`)."""


def _slice_order(state, up: bool) -> list:
    """The event times of one direction in upstream's slice order: the recorded
    order for the times still in the log, then any other logged time in time order
    (absent a record, time order: what appending alone produces)."""
    log = state.scale_up_events if up else state.scale_down_events
    times = [e[0] for e in log.entries]
    recorded = state.extra.get(SLOT_KEYS[up]) if state.extra else None
    if not isinstance(recorded, list):
        return times
    left: dict = {}
    for t in times:
        left[t] = left.get(t, 0) + 1
    order = []
    for t in recorded:
        if left.get(t, 0) > 0:
            order.append(t)
            left[t] -= 1
    for t in times:
        if left.get(t, 0) > 0:
            order.append(t)
            left[t] -= 1
    return order


def _overwrite_outdated_event(state, now: float, up: bool, b: Behavior) -> None:
    """``storeScaleEvent``: before the new event of this direction is stored, the events of
    that direction older than its longest policy period are marked outdated
    (``markScaleEventsOutdated``: ``timestamp.Before(now - longest)``) and the last of them
    *in the slice* is overwritten by the new event in place, so it no longer counts for the
    other direction's (longer) periods; with none outdated the new event is appended.

    After an overwrite in the middle the slice is no longer in time order, and which event
    the next overwrite takes depends on it (two scale-ups 10 s apart, both outdated later:
    the one at the higher slot goes, not the newer). The protocol's event lists are in time
    order, so the slice order is kept under ``kubernetes.scale_up_order`` /
    ``kubernetes.scale_down_order`` — only while it differs from the time order."""
    log = state.scale_up_events if up else state.scale_down_events
    cutoff = now - (b.longest_up if up else b.longest_down)
    order = _slice_order(state, up)
    victim = None
    for i, t in enumerate(order):
        if t < cutoff:
            victim = i
    if victim is None:
        order.append(now)
    else:
        gone = order[victim]
        order[victim] = now
        entries = list(log.entries)
        for k, e in enumerate(entries):
            if e[0] == gone:
                del entries[k]
                break
        fresh = TimeLog(entries)
        if up:
            state.scale_up_events = fresh
        else:
            state.scale_down_events = fresh
    key = SLOT_KEYS[up]
    if any(x > y for x, y in zip(order, order[1:])):
        state.extra[key] = order
    elif state.extra:
        state.extra.pop(key, None)
