"""``min_replicas: 0`` without the activation keys: each provider's own (docs/semantics.md,
"min_replicas: 0 without the activation keys") — what each semantics does at and towards
0 replicas, members or instances."""
import pytest

from scalebridge.engine import decide

T0 = 1_767_225_600.0
QUEUE = {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}
CPU = {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}
NO_WINDOW = {"scale_down": {"stabilization_window_seconds": 0}}


def queued(n):
    return {"queue": {"value": n, "timestamp": T0 - 5, "series": [[T0 - 30, n]]}}


def ask(semantics, policy, current, metrics, members=(), state=None, settings=None):
    r = decide({"semantics": semantics, "now": T0, "current_replicas": current, "policy": policy,
                "observations": {"members": list(members), "metrics": metrics},
                "state": {"recommendations": [], **(state or {})}, "settings": settings or {}})
    return r["desired_replicas"], r["reason"]


#: the HPA's own scale to zero on record (the ScaledToZero condition, Kubernetes 1.36+)
OWN_ZERO = {"kubernetes.scaled_to_zero": T0 - 600}


def rule(metric, threshold=20, value=2):
    return {"metric": metric, "operator": "GreaterThan", "threshold": threshold, "time_window_seconds": 60,
            "action": {"direction": "Increase", "type": "ChangeCount", "value": value, "cooldown_seconds": 0}}


def members(n, cpu="0m"):
    return [{"name": f"m{i}", "ready": True, "requests": {"cpu": "1"}} for i in range(n)], \
        {"cpu": {"members": {f"m{i}": cpu for i in range(n)}, "timestamp": T0 - 5, "window": 60}}


# -- kubernetes ----------------------------------------------------------------------------
# reconcileAutoscaler: "if currentReplicas == 0 && minReplicas != 0 { ... scaling is disabled
# since the replica count of the target is zero }"; GetExternalPerPodMetricReplicas:
# ceil(usage / target per pod), whatever the current count (replica_calculator.go).
# Kubernetes 1.36+ (KEP-2021, kubernetes/kubernetes#135118) computes from zero only when the
# HPA scaled the workload to zero itself (ScaledToZero=True); 1.16-1.35 whenever minReplicas is 0.

def test_kubernetes_scales_from_zero_on_an_external_metric_when_it_scaled_to_zero_itself():
    assert ask("kubernetes", {"min_replicas": 0, "max_replicas": 10, "metrics": [QUEUE]}, 0, queued(35),
               state=OWN_ZERO) == (4, "DesiredWithinRange")


def test_kubernetes_does_not_wake_a_workload_someone_else_set_to_zero():
    pol = {"min_replicas": 0, "max_replicas": 10, "metrics": [QUEUE]}
    assert ask("kubernetes", pol, 0, queued(35)) == (0, "ScalingDisabled")
    # before 1.36 the controller could not tell, and computed from zero whenever minReplicas was 0
    assert ask("kubernetes", pol, 0, queued(35), settings={"kubernetes_version": "1.35"}) == (4, "DesiredWithinRange")
    # 1.36 with the gate off (its default there): no ScaledToZero, so a workload at zero stays paused
    assert ask("kubernetes", pol, 0, queued(35), state=OWN_ZERO, settings={"kubernetes_version": "1.36"}) == \
        (0, "ScalingDisabled")
    assert ask("kubernetes", pol, 0, queued(35), state=OWN_ZERO,
               settings={"kubernetes_version": "1.36", "feature_gates": {"HPAScaleToZero": True}}) == \
        (4, "DesiredWithinRange")


def test_kubernetes_does_not_scale_a_target_at_zero_when_min_replicas_is_not_zero():
    assert ask("kubernetes", {"min_replicas": 1, "max_replicas": 10, "metrics": [QUEUE]}, 0, queued(35)) == \
        (0, "ScalingDisabled")


def test_kubernetes_has_no_pod_to_sample_at_zero_for_a_resource_metric():
    # the CPU metric fails (no pod), the queue scales up: a scale-up with a failed metric is made
    d, reason = ask("kubernetes", {"min_replicas": 0, "max_replicas": 10, "metrics": [CPU, QUEUE]}, 0,
                    {"cpu": {"members": {}}, **queued(35)}, state=OWN_ZERO)
    assert (d, reason) == (4, "DesiredWithinRange")


def test_kubernetes_refuses_a_minimum_of_zero_with_only_resource_metrics():
    # validateMetrics (pkg/apis/autoscaling/validation/validation.go): "must specify at
    # least one Object or External metric to support scaling to zero replicas"
    from scalebridge.errors import RequestError
    with pytest.raises(RequestError, match="at least one Object or External metric"):
        ask("kubernetes", {"min_replicas": 0, "max_replicas": 10, "metrics": [CPU]}, 2, {})


def test_kubernetes_scales_to_zero_on_an_external_metric():
    pol = {"min_replicas": 0, "max_replicas": 10, "metrics": [QUEUE], "behavior": NO_WINDOW}
    assert ask("kubernetes", pol, 3, queued(0)) == (0, "DesiredWithinRange")
    r = decide({"semantics": "kubernetes", "now": T0, "current_replicas": 3, "policy": pol,
                "observations": {"metrics": queued(0)}, "state": {"recommendations": []}})
    # ...and records it (ScaledToZero=True, lastTransitionTime now), so it will wake it
    assert r["state"]["kubernetes.scaled_to_zero"] == T0


# -- gce -----------------------------------------------------------------------------------
# "If the policy includes these metrics [per-instance], then the autoscaler requires at least
# one instance in the group to obtain a signal, and the group won't scale in to zero
# instances" (G-GAP-7, docs/semantics/gce.md); per-group signals reach 0.

def test_gce_never_scales_in_to_zero_with_a_per_instance_signal():
    ms, obs = members(2, "0m")
    pol = {"min_replicas": 0, "max_replicas": 10, "metrics": [CPU], "behavior": NO_WINDOW}
    assert ask("gce", pol, 2, obs, ms) == (1, "TooFewReplicas")


def test_gce_scales_to_and_from_zero_on_a_per_group_signal():
    pol = {"min_replicas": 0, "max_replicas": 10, "metrics": [QUEUE], "behavior": NO_WINDOW}
    assert ask("gce", pol, 3, queued(0))[0] == 0
    assert ask("gce", pol, 0, queued(35))[0] == 4


# -- azure ---------------------------------------------------------------------------------
# a scale set at 0 has no per-VM metric; "If there's a problem reading the resource metric,
# and the current capacity is below the default, autoscale scales out to the default"
# (docs/semantics.md, research A6); a rule on another resource's metric scales from 0.

def test_azure_at_zero_takes_its_default_capacity_when_a_vm_metric_cannot_be_read():
    pol = {"min_replicas": 0, "max_replicas": 10, "default_replicas": 1, "rules": [rule("cpu")]}
    assert ask("azure", pol, 0, {}) == (1, "ProfileDefault")
    assert ask("azure", {**pol, "default_replicas": 0}, 0, {})[0] == 0


def test_azure_scales_from_zero_on_a_rule_over_another_resources_metric():
    pol = {"min_replicas": 0, "max_replicas": 10, "default_replicas": 0, "rules": [rule("queue")]}
    assert ask("azure", pol, 0, queued(35)) == (2, "DesiredWithinRange")


# -- aws -----------------------------------------------------------------------------------
# target tracking is proportional to the capacity in service (ceil(base × value / target),
# docs/semantics/aws.md G11): 0 at 0 instances; a step policy on a per-group metric adds
# instances from 0.

def test_aws_target_tracking_stays_at_zero_instances():
    pol = {"min_replicas": 0, "max_replicas": 10, "metrics": [QUEUE]}
    assert ask("aws", pol, 0, queued(35))[0] == 0


def test_aws_a_step_policy_on_a_group_metric_scales_out_from_zero():
    pol = {"min_replicas": 0, "max_replicas": 10, "rules": [rule("queue")]}
    assert ask("aws", pol, 0, queued(35)) == (2, "DesiredWithinRange")


@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "azure", "aws", "scalebridge"])
def test_a_minimum_of_zero_is_accepted_by_every_semantics(semantics):
    pol = {"min_replicas": 0, "max_replicas": 10, "default_replicas": 0, "metrics": [QUEUE], "rules": [rule("queue")]}
    d, _ = ask(semantics, pol, 0, queued(0))
    assert d == 0


@pytest.mark.parametrize("metrics, refused", [([CPU], True), ([CPU, QUEUE], False), ([], True)])
def test_a_minimum_of_zero_no_hpa_could_have_is_refused(metrics, refused):
    # HorizontalPodAutoscalerSpec.minReplicas: "allowed to be 0 if the alpha feature gate
    # HPAScaleToZero is enabled and at least one Object or External metric is configured"
    from scalebridge.engine import resolve_semantics
    from scalebridge.errors import RequestError
    from scalebridge.policy import Policy
    k8s = resolve_semantics("kubernetes")
    policy = Policy.model_validate({"min_replicas": 0, "max_replicas": 5, "metrics": metrics})
    try:
        k8s.check(policy)
        said = None
    except RequestError as e:
        said = str(e)
    assert (said is not None and "at least one Object or External metric" in said) is refused
    # the 1.36 API server without the gate refuses any minReplicas 0: the ignored lines say so
    from scalebridge.protocol import Settings
    lines = k8s.ignored_parts(policy, Settings(kubernetes_version="1.36"))
    assert any(line.startswith("min_replicas: 0 is refused by the API server of Kubernetes 1.36") for line in lines)
    # with an activation phase the HPA's minimum is 1 (docs/policy.md, scale to and from zero)
    assert not resolve_semantics("kubernetes").ignored_parts(Policy.model_validate(
        {"min_replicas": 0, "max_replicas": 5, "metrics": [{**CPU, "activation_threshold": 1}]}))
