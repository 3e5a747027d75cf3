"""The Kubernetes release a request names (``settings.kubernetes_version``, 1.37 unless
set) and kube-controller-manager's feature gates (``settings.feature_gates``).

- KEP-4951 (configurable tolerance): ``HPAConfigurableTolerance`` alpha, off, in 1.33;
  beta, on, from 1.35 (kubernetes/enhancements ``keps/sig-autoscaling/4951-configurable-hpa-tolerance``).
  With the gate off the controller uses ``--horizontal-pod-autoscaler-tolerance`` for
  every HPA (horizontal.go: the per-HPA tolerance is read only when the gate is on).
- KEP-2021 (scale to zero): ``HPAScaleToZero`` alpha, off, from 1.16; beta, on, in 1.37.
"""
import pytest

from scalebridge.engine import decide, resolve_semantics
from scalebridge.errors import RequestError
from scalebridge.policy import Policy
from scalebridge.protocol import Settings
from scalebridge.testing.requests import cpu_request

# 4 pods at 530m of 1 core against 50 %: ratio 1.06, inside the default 0.1 band,
# outside a per-HPA scale-up tolerance of 0.05 -> ceil(1.06 x 4) = 5
TOLERANT = {"behavior": {"scale_up": {"tolerance": 0.05}}}


def desired(settings=None):
    return decide(cpu_request(4, "530m", policy=TOLERANT, settings=settings))["desired_replicas"]


@pytest.mark.parametrize("settings, want", [
    (None, 5),                                                   # 1.37: beta, on
    ({"kubernetes_version": "1.35"}, 5),
    ({"kubernetes_version": "v1.34.2"}, 4),                      # alpha, off: the flag's 0.1 band
    ({"kubernetes_version": "1.34", "feature_gates": {"HPAConfigurableTolerance": True}}, 5),
    ({"kubernetes_version": "1.36", "feature_gates": {"HPAConfigurableTolerance": False}}, 4),
])
def test_a_per_hpa_tolerance_is_honoured_only_where_its_gate_is_on(settings, want):
    assert desired(settings) == want


def test_what_a_release_ignores_of_a_policy_is_said():
    k8s = resolve_semantics("kubernetes")
    policy = Policy.model_validate({"min_replicas": 1, "max_replicas": 5, **TOLERANT})
    assert not k8s.ignored_parts(policy, Settings())
    [line] = k8s.ignored_parts(policy, Settings(kubernetes_version="1.34"))
    assert line.startswith("tolerance: ")
    [line] = k8s.ignored_parts(policy, Settings(kubernetes_version="1.40"))
    assert "decided as Kubernetes 1.37" in line
    old = k8s.ignored_parts(policy, Settings(kubernetes_version="1.29"))
    assert any("code paths of Kubernetes 1.33" in x for x in old)


@pytest.mark.parametrize("settings, where", [
    ({"kubernetes_version": "latest"}, "$.settings.kubernetes_version"),
    ({"feature_gates": {"HPAScaleToZro": True}}, "$.settings.feature_gates.HPAScaleToZro"),
    ({"kubernetes_version": "1.32", "feature_gates": {"HPAConfigurableTolerance": True}},
     "$.settings.feature_gates.HPAConfigurableTolerance"),     # the gate appears in 1.33
])
def test_a_release_or_gate_that_does_not_exist_is_refused_naming_the_setting(settings, where):
    with pytest.raises(RequestError) as e:
        decide(cpu_request(4, "530m", settings=settings))
    assert str(e.value).startswith(where)
