"""The ScaledObject examples of KEDA's documentation (tests/plugins/kubernetes/keda/data/docs/, each
file naming its page) import and decide as the documentation says."""
from __future__ import annotations

from pathlib import Path

import pytest

from scalebridge import decide
from scalebridge.testing.requests import NOW, pods
from scalebridge.translate import import_all, import_native

DOCS = Path(__file__).resolve().parent / "data" / "docs"


def _imported(name: str) -> list:
    results = import_all((DOCS / name).read_text(encoding="utf-8"), "keda")
    from scalebridge.translate.cli import _invalid
    for policy, _ in results:
        assert _invalid(policy) is None   # what `scalebridge validate --semantics kubernetes` says
    return results


def _decide(policy: dict, current: int, values: dict, state: dict | None = None, members=None) -> dict:
    obs: dict = {"metrics": {k: ({"value": v, "timestamp": NOW - 10} if not isinstance(v, dict) else v)
                             for k, v in values.items()}}
    if members is not None:
        obs["members"] = members
    req = {"now": NOW, "current_replicas": current, "policy": policy, "observations": obs}
    if state is not None:
        req["state"] = state
    return decide(req, "kubernetes")


def test_the_prometheus_example_scales_on_threshold_100_from_zero():
    # scalers/prometheus.md: threshold '100', AverageValue (the default metricType); minReplicaCount 0 (the
    # default): KEDA activates at a value above activationThreshold 0, then the HPA takes ceil(value / 100)
    ((policy, losses),) = _imported("prometheus-scaler.yaml")
    assert policy["min_replicas"] == 0 and policy["max_replicas"] == 100
    assert policy["metrics"] == [{"type": "external", "name": "prometheus_0",
                                  "target": {"type": "AverageValue", "average_value": 100}}]
    assert not losses.lines
    assert any("metrics.prometheus_0.source: {metric_source: prometheus, query: 'sum(rate(http_requests_total" in n
               for n in losses.notes)
    assert (r := _decide(policy, 0, {"prometheus_0": 450}))["desired_replicas"] == 1 and r["reason"] == "Activated"
    assert _decide(policy, 4, {"prometheus_0": 450})["desired_replicas"] == 5
    assert _decide(policy, 0, {"prometheus_0": 0})["reason"] == "Idle"


def test_the_metric_type_examples_compute_as_the_spec_says():
    # reference/scaledobject-spec.md, triggers.metricType: 3 replicas, a queue of 20 with threshold 5 as
    # AverageValue is "20 / 5 = 4 replicas, regardless of the current replica count"; an average time of 20
    # with threshold 5 as Value is "3 * 20 / 5 = 12" (a behavior without a rate limit: the page leaves out
    # the HPA's default one)
    so = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: queue}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  advanced:
    horizontalPodAutoscalerConfig:
      behavior: {scaleUp: {policies: [{type: Percent, value: 1000, periodSeconds: 15}]}}
  triggers:
  - {type: prometheus, name: queue, metadata: {serverAddress: "http://prometheus:9090", query: q, threshold: "5"}}
  - {type: prometheus, name: wait, metricType: Value,
     metadata: {serverAddress: "http://prometheus:9090", query: w, threshold: "5"}}
"""
    policy, _ = import_native(so, "keda")
    queue_only = {**policy, "metrics": [policy["metrics"][0]]}
    wait_only = {**policy, "metrics": [policy["metrics"][1]]}
    assert _decide(queue_only, 3, {"queue": 20})["desired_replicas"] == 4
    assert _decide(wait_only, 3, {"wait": 20})["desired_replicas"] == 12


def test_the_cpu_examples_are_resource_and_container_resource_utilization():
    # scalers/cpu.md: value "50" Utilization, of the whole pod and of container foo
    (pod, _), (container, _) = _imported("cpu-scaler.yaml")
    assert pod["metrics"] == [{"type": "resource", "name": "cpu",
                               "target": {"type": "Utilization", "average_utilization": 50}}]
    assert container["metrics"][0] == {"type": "container_resource", "name": "cpu", "container": "foo",
                                       "target": {"type": "Utilization", "average_utilization": 50}}
    # 2 pods at 100 % of their 1-core request, target 50 %: ceil(2 × 100 / 50) = 4 (the HPA's formula)
    members = pods(2)
    cpu = {"members": {m["name"]: "1" for m in members}, "timestamp": NOW - 10, "window": 30}
    assert _decide(pod, 2, {"cpu": cpu}, members=members)["desired_replicas"] == 4


def test_the_compose_average_example_averages_and_activates_above_2():
    # concepts/scaling-deployments.md, "Example: compose average value": (trig_one + trig_two)/2, target 2,
    # activationTarget 2 — "If the calculated value is <=2, the ScaledObject is not Active and it'll scale
    # to 0"; the two scalers scalebridge has no source for are kept as external metrics, each a loss line
    ((policy, losses),) = _imported("scaling-modifiers-average.yaml")
    formula = policy["metrics"][-1]
    assert formula == {"type": "formula", "name": "composite-metric", "expression": "(trig_one + trig_two) / 2.0",
                       "target": {"type": "AverageValue", "average_value": 2}, "activation_threshold": 2}
    assert [line.split(":")[0] for line in losses.lines] == ["$.spec.triggers[0]", "$.spec.triggers[1]"]
    assert "no kubernetes-workload metric source: kept as external metric 'trig_one'" in losses.lines[0]
    assert _decide(policy, 3, {"trig_one": 4, "trig_two": 6})["desired_replicas"] == 3     # ceil(5 / 2)
    assert _decide(policy, 0, {"trig_one": 1, "trig_two": 3})["reason"] == "Idle"          # 2 is not above 2
    assert _decide(policy, 0, {"trig_one": 2, "trig_two": 3})["reason"] == "Activated"


def test_the_count_example_computes_5_when_two_metrics_are_above_1():
    # "If at least 2 metrics (from the list trig_one,trig_two,trig_three) have value of more than 1, then
    # return 5, otherwise return 0"
    ((policy, losses),) = _imported("scaling-modifiers-count.yaml")
    assert not losses.lines
    assert policy["metrics"][-1]["expression"] == \
        "[trig_one, trig_two, trig_three].filter(x, x > 1.0).size() > 1 ? 5 : 0"
    r = _decide(policy, 2, {"trig_one": 2, "trig_two": 3, "trig_three": 0})
    assert r["desired_replicas"] == 3    # 5 against 2 per replica
    assert _decide(policy, 2, {"trig_one": 2, "trig_two": 0, "trig_three": 0})["desired_replicas"] == 0  # idle


def test_the_fallback_example_goes_to_6_replicas_once_failures_pass_3():
    # reference/scaledobject-spec.md, fallback: failureThreshold 3, replicas 6, static — "Once that value
    # passes the failureThreshold" the deployment goes to fallback.replicas
    ((policy, _),) = _imported("fallback.yaml")
    assert policy["fallback"] == {"failure_threshold": 3, "behavior": "static", "replicas": 6}
    failed = {"prometheus_0": {"error": "prometheus: connection refused"}}
    held = _decide(policy, 3, failed, state={"fallback.failures": {"prometheus_0": 2}})
    assert held["desired_replicas"] == 3 and held["reason"] != "Fallback"          # the 3rd failure: not past
    fell = _decide(policy, 3, failed, state={"fallback.failures": {"prometheus_0": 3}})
    assert (fell["desired_replicas"], fell["reason"]) == (6, "Fallback")            # the 4th: past 3


def test_the_pause_annotations_hold_the_size_and_say_how_to_pause_a_target():
    # concepts/scaling-deployments.md, "Pausing autoscaling": paused-replicas "0" and paused "true"
    ((policy, losses),) = _imported("pause.yaml")
    assert policy["mode"] == "OFF"
    assert any("autoscaling.keda.sh/paused-replicas" in line and "scalebridge pause CONFIG TARGET --replicas 0"
               in line for line in losses.lines)
    members = pods(5)
    cpu = {"members": {m["name"]: "1" for m in members}, "timestamp": NOW - 10, "window": 30}
    assert _decide(policy, 5, {"cpu": cpu}, members=members)["desired_replicas"] == 5


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.yaml")))
def test_every_docs_example_imports_to_a_valid_policy(name):
    for policy, losses in _imported(name):
        assert policy["semantics"] == "kubernetes"
        for line in losses.lines + losses.notes:
            assert line.startswith("$"), line


# -- KEDA 2.17-2.20 (kedacore/keda v2.20.2; keda-docs content/docs/2.20) -------------------------

def _failover_decide(policy, current, values, failures=None):
    state = {"recommendations": [], "fallback.failures": failures} if failures else None
    return _decide(policy, current, values, state=state)


def test_the_per_trigger_failover_example_routes_around_failing_triggers_to_the_literal_8():
    # concepts/scaling-deployments.md, "Example: per-trigger failover with the ?? operator": "evaluates
    # best_metric first, falls back to slower_metric when best_metric has exceeded failureThreshold, falls back
    # to metric_backup if slower_metric is also failing, and finally returns the literal 8 if every trigger is
    # unhealthy"; target "2" (AverageValue): the HPA takes ceil(composite / 2)
    ((policy, losses),) = _imported("scaling-modifiers-fallback.yaml")
    assert policy["fallback"] == {"failure_threshold": 3, "behavior": "formula", "replicas": 10}
    assert policy["metrics"][-1]["expression"] == (
        "best_metric != null ? best_metric : (slower_metric != null ? slower_metric : "
        "(metric_backup != null ? metric_backup : 8.0))")
    assert not any("fallback" in line for line in losses.lines)      # the page's fallback is carried whole
    down = {"error": "prometheus: connection refused"}
    ok = {"best_metric": 10, "slower_metric": 6, "metric_backup": 4}
    assert _failover_decide(policy, 5, ok)["desired_replicas"] == 5                      # 10 / 2
    # best_metric failing 4 times in a row: past failureThreshold 3, nil in the formula: slower_metric 6 / 2
    r = _failover_decide(policy, 5, {**ok, "best_metric": down}, {"best_metric": 3})
    assert r["desired_replicas"] == 3
    r = _failover_decide(policy, 5, {**ok, "best_metric": down, "slower_metric": down},
                         {"best_metric": 3, "slower_metric": 3})
    assert r["desired_replicas"] == 2                                                    # metric_backup 4 / 2
    r = _failover_decide(policy, 5, {k: down for k in ok}, {k: 3 for k in ok})
    assert r["desired_replicas"] == 4                                                    # the literal 8 / 2


def test_without_the_trailing_literal_every_trigger_failing_falls_back_to_fallback_replicas():
    # same section: "If the trailing literal is omitted (e.g. best_metric ?? slower_metric) and every trigger is
    # unhealthy, the formula evaluates to nil and KEDA falls back to spec.fallback.replicas"
    text = (DOCS / "scaling-modifiers-fallback.yaml").read_text(encoding="utf-8").replace(
        '"best_metric ?? slower_metric ?? metric_backup ?? 8"', '"best_metric ?? slower_metric"')
    ((policy, _),) = import_all(text, "keda")
    down = {"error": "prometheus: connection refused"}
    # from 5 (the HPA's default scale-up limit, max(2 × 5, 4), lets 10 through at once)
    r = _failover_decide(policy, 5, {"best_metric": down, "slower_metric": down, "metric_backup": 1},
                         {"best_metric": 3, "slower_metric": 3})
    assert (r["desired_replicas"], r["reason"]) == (10, "Fallback")


def test_the_initial_cooldown_example_keeps_the_target_up_120_seconds_from_the_first_decision():
    # reference/scaledobject-spec.md#initialcooldownperiod: "KEDA will not scale the resource back to 0 until
    # 120 seconds have passed since the ScaledObject creation, regardless of the activity triggers"
    ((policy, losses),) = _imported("initial-cooldown-period.yaml")
    assert policy["initial_scale_to_zero_delay_seconds"] == 120 and not losses.lines
    first = _decide(policy, 2, {"prometheus_0": 0})
    assert first["desired_replicas"] == 2 and first["state"]["activation.since"] == NOW
    later = _decide(policy, 2, {"prometheus_0": 0}, state={"activation.since": NOW - 121})
    assert (later["desired_replicas"], later["reason"]) == (0, "Deactivated")


def test_the_paused_scale_in_example_blocks_scale_in_and_the_scale_to_zero():
    # concepts/scaling-deployments.md, "Pausing autoscaling": paused-scale-in disables the HPA's scale-down
    # "and if the service has scale to zero configured, will block scale to zero"
    ((policy, losses),) = _imported("pause-scale-in.yaml")
    assert policy["mode"] == "ONLY_SCALE_OUT" and not losses.lines
    r = _decide(policy, 4, {"prometheus_0": 0})
    assert r["desired_replicas"] == 4 and r["recommended_replicas"] == 0
    assert _decide(policy, 4, {"prometheus_0": 900})["desired_replicas"] > 4


def test_the_paused_scale_out_example_blocks_scale_out_and_the_scale_from_zero():
    # same section: paused-scale-out sets "the HPA's Scale Up Select Policy to Disabled" and "will block scale
    # from zero"
    ((policy, losses),) = _imported("pause-scale-out.yaml")
    assert policy["mode"] == "ONLY_SCALE_IN" and not losses.lines
    r = _decide(policy, 0, {"prometheus_0": 900})
    assert r["desired_replicas"] == 0 and r["recommended_replicas"] == 1
    assert _decide(policy, 4, {"prometheus_0": 900})["desired_replicas"] == 4
    assert _decide(policy, 4, {"prometheus_0": 150}, state={"recommendations": []})["desired_replicas"] == 2


def test_the_force_activation_example_scales_up_from_zero_with_no_active_trigger():
    # concepts/scaling-deployments.md, "Forcing activation": "KEDA will treat all configured scalers as active.
    # If the scalers were previously not active, KEDA will scale the service up from 0"
    ((policy, losses),) = _imported("force-activation.yaml")
    assert policy["force_activation"] is True and not losses.lines
    r = _decide(policy, 0, {"prometheus_0": 0})
    assert (r["desired_replicas"], r["reason"]) == (1, "Activated")


@pytest.mark.parametrize("value, paused", [("true", True), ("yes", True), ("", True), ("1", True),
                                           ("false", False), ("0", False), ("F", False)])
def test_an_annotation_that_is_not_a_go_boolean_reads_as_true(value, paused):
    # kedacore/keda v2.20.2 apis/keda/v1alpha1/scaledobject_types.go getBoolAnnotation: strconv.ParseBool, and
    # "if annotation value is not a boolean, we assume true"
    text = (DOCS / "force-activation.yaml").read_text(encoding="utf-8").replace(
        'force-activation: "true"', f'force-activation: "{value}"')
    ((policy, _),) = import_all(text, "keda")
    assert bool(policy.get("force_activation")) is paused


def test_an_imported_scaledobject_reads_a_negative_scaler_value_as_zero():
    # kedacore/keda v2.20.2 pkg/scalers/scaler.go quantityFromFloat64 (#7889): "NaN, Inf, and negative values are
    # treated as zero to prevent panics and incorrect HPA scaling"
    ((policy, _),) = _imported("prometheus-scaler.yaml")
    assert policy["invalid_values_as_zero"] is True
    r = _decide(policy, 4, {"prometheus_0": -250}, state={"recommendations": []})
    # read as 0, not an error; -250 is not above activationThreshold 0 (compared raw), and the target was never
    # seen active: it goes to zero at once
    assert r["metrics"][0]["error"] is None and (r["desired_replicas"], r["reason"]) == (0, "Deactivated")
    strict = {**policy, "invalid_values_as_zero": False}
    r = _decide(strict, 4, {"prometheus_0": -250}, state={"recommendations": []})
    assert "invalid observation" in r["metrics"][0]["error"] and r["desired_replicas"] == 4   # an invalid metric


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.yaml")))
def test_every_docs_example_renders_back_valid_and_is_a_fixed_point(name):
    # render -> import -> render gives the same ScaledObject, which KEDA 2.20's CRD accepts
    from scalebridge.translate import render
    from . import keda_schema
    for policy, _ in _imported(name):
        native, _ = render(policy, "keda", {})
        assert keda_schema.errors(native) == [], name
        back, _ = import_native(native, "keda")
        assert render(back, "keda", {})[0] == native


def test_the_reference_pages_scaling_modifiers_behavior_example_is_the_same_failover():
    # reference/scaledobject-spec.md "scalingModifiers behavior" gives the concepts page's example with the formula
    # unquoted: the same policy
    ((reference, _),) = _imported("scaling-modifiers-behavior.yaml")
    ((concepts, _),) = _imported("scaling-modifiers-fallback.yaml")
    assert {**reference, "name": None} == {**concepts, "name": None}
