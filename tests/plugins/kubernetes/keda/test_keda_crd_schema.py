"""What ``render --to keda`` writes is a ScaledObject KEDA's API server accepts whole: valid
against the openAPIV3Schema of KEDA's own CRD (kedacore/keda v2.20.2,
tests/plugins/kubernetes/keda/data/), with every field one the schema names (a field it does not
name would be pruned without a word), for random policies and for every example."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from scalebridge.translate import render

from . import keda_schema
from .keda_cases import LOSSLESS, SOURCES, ext, target
from .test_keda_round_trip import EXAMPLES, _target_for

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_schema_itself_refuses_what_keda_refuses():
    native, _ = render(LOSSLESS["every-source"][0], "keda", target())
    assert keda_schema.errors(native) == []
    bad = {**native, "spec": {**native["spec"], "fallback": {"replicas": 3}, "pollingInterval": 0, "extra": 1}}
    found = "\n".join(keda_schema.errors(bad))
    assert "'failureThreshold' is a required property" in found
    assert "0 is less than the minimum of 1" in found
    assert "Additional properties are not allowed ('extra' was unexpected)" in found
    assert keda_schema.errors({**native, "spec": {**native["spec"], "minReplicaCount": 30, "maxReplicaCount": 20}})


def test_every_example_policy_renders_valid():
    for name, policy, _ in EXAMPLES:
        native, _ = render(policy, "keda", _target_for(policy))
        assert keda_schema.errors(native) == [], name


def test_every_lossless_case_renders_valid():
    for name, (policy, _) in LOSSLESS.items():
        native, _ = render(policy, "keda", target("trig_one", "trig_two", "trig_three"))
        assert keda_schema.errors(native) == [], name


_rules = st.fixed_dictionaries({}, optional={
    "stabilization_window_seconds": st.integers(0, 3600),
    "select_policy": st.sampled_from(["Max", "Min", "Disabled"]),
    "policies": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["Pods", "Percent"]),
                                                "value": st.integers(1, 200), "period_seconds": st.integers(1, 1800)}),
                         min_size=1, max_size=2),
    "tolerance": st.sampled_from([0, 0.05, 0.1])})
_value = st.one_of(st.integers(1, 1000), st.sampled_from([0.5, 2.5, "500m", "1.5"]))


@st.composite
def policies(draw):
    lo = draw(st.integers(0, 5))
    names = draw(st.lists(st.sampled_from(sorted(SOURCES) + ["own"]), min_size=1, max_size=4, unique=True))
    metrics = [ext(n, draw(_value), draw(st.sampled_from(["AverageValue", "Value"])),
                   **({"activation_threshold": draw(st.integers(0, 5))} if draw(st.booleans()) else {}))
               for n in names]
    if draw(st.booleans()):
        metrics.append({"type": draw(st.sampled_from(["resource", "container_resource"])), "name": "cpu",
                        "container": "app", "target": {"type": "Utilization",
                                                       "average_utilization": draw(st.integers(10, 100))}})
        metrics[-1].pop("container") if metrics[-1]["type"] == "resource" else None
    formula = draw(st.sampled_from([None, "product", "failover"]))
    if formula == "product":
        metrics.append({"type": "formula", "name": "composite-metric", "expression": f"{names[0]} * 2.0",
                        "target": {"type": "Value", "value": draw(st.integers(1, 50))}})
    elif formula == "failover":   # KEDA 2.20's fallback.behavior scalingModifiers with ??
        expression = " : (".join(f"{n} != null ? {n}" for n in names) + " : 8.0" + ")" * (len(names) - 1)
        metrics.append({"type": "formula", "name": "composite-metric", "expression": expression,
                        "target": {"type": "AverageValue", "average_value": draw(st.integers(1, 50))}})
    policy: dict = {"name": "web", "min_replicas": lo, "max_replicas": draw(st.integers(max(lo, 1), 60)),
                    "metrics": metrics,
                    "mode": draw(st.sampled_from(["ON", "OFF", "ONLY_SCALE_OUT", "ONLY_SCALE_IN"]))}
    for key, value in (("force_activation", st.booleans()), ("invalid_values_as_zero", st.booleans()),
                       ("initial_scale_to_zero_delay_seconds", st.integers(0, 3600))):
        if draw(st.booleans()):
            policy[key] = draw(value)
    if draw(st.booleans()):
        policy["behavior"] = draw(st.fixed_dictionaries({}, optional={"scale_up": _rules, "scale_down": _rules}))
    if formula == "failover" or draw(st.booleans()):
        policy["fallback"] = {"failure_threshold": draw(st.integers(0, 5)), "replicas": draw(st.integers(0, 9)),
                              "behavior": "formula" if formula == "failover" else
                              draw(st.sampled_from(["static", "current_replicas", "current_replicas_if_higher",
                                                    "current_replicas_if_lower"]))}
    if lo >= 1 and draw(st.booleans()):
        policy["idle_replicas"] = 0
    if draw(st.booleans()):
        policy["scale_to_zero_delay_seconds"] = draw(st.integers(0, 3600))
    return policy


@FAST
@given(policy=policies(), ref=st.sampled_from([target("own"), {"name": "web"}, {}]),
       paused=st.sampled_from([{}, {"paused": True}, {"paused_replicas": 0}]))
def test_every_rendered_scaled_object_validates_against_kedas_crd(policy, ref, paused):
    native, _ = render(policy, "keda", {**ref, **paused})
    assert keda_schema.errors(native) == []
