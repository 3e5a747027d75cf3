"""What KEDA 2.17-2.20 added to a ScaledObject, as neutral controls under every built-in
semantics (docs/policy.md): ``mode: ONLY_SCALE_IN`` (``autoscaling.keda.sh/paused-scale-out``),
``force_activation`` (``autoscaling.keda.sh/force-activation``),
``initial_scale_to_zero_delay_seconds`` (``initialCooldownPeriod``), ``fallback.behavior:
formula`` (``fallback.behavior: scalingModifiers`` with the formula's ``??``) and
``invalid_values_as_zero`` (KEDA >= 2.20.2 reads a negative scaler value as 0).

Sources: kedacore/keda v2.20.2 (commit 68a5b5028f35b22d50597c69819ab32c4e92f21a) and
kedacore/keda-docs content/docs/2.20 (https://keda.sh/docs/2.20/), cited at each test."""
import json

import pytest

from scalebridge.engine import BUILTIN_SEMANTICS, decide
from scalebridge.errors import RequestError

T0 = 1_767_225_600.0
STEP = 60.0
FAIL = "prometheus: connection refused"


def policy(**extra):
    p = {"min_replicas": 1, "max_replicas": 20,
         "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}],
         # azure (no target metrics): add 1 above 40 queued, remove 1 below 10
         "rules": [{"metric": "queue", "operator": "GreaterThan", "threshold": 40, "time_window_seconds": 60,
                    "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 0}},
                   {"metric": "queue", "operator": "LessThan", "threshold": 10, "time_window_seconds": 60,
                    "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1, "cooldown_seconds": 0}}]}
    p.update(extra)
    return p


def observation(now, v):
    if isinstance(v, str):
        return {"error": v}
    return {"value": v, "timestamp": now}   # a snapshot: AWS reads it as the value of every period


def run(semantics, pol, steps, current, state=None):
    """Decide each step (``{name: value or error}`` or a value of ``queue``), carrying the
    state (through JSON, as a store keeps it) and the size; returns the responses."""
    out = []
    state = {"recommendations": []} if state is None else state
    for i, step in enumerate(steps):
        now = T0 + i * STEP
        step = step if isinstance(step, dict) else {"queue": step}
        r = decide({"semantics": semantics, "now": now, "current_replicas": current, "policy": pol,
                    "observations": {"metrics": {k: observation(now, v) for k, v in step.items()}},
                    "state": state})
        state = json.loads(json.dumps(r["state"]))
        current = r["desired_replicas"]
        out.append(r)
    return out


# -- mode ONLY_SCALE_IN: autoscaling.keda.sh/paused-scale-out ----------------------------------

@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_only_scale_in_holds_the_size_on_a_scale_out_and_reports_the_recommendation(semantics):
    # keda-docs 2.20 concepts/scaling-deployments.md "Pausing autoscaling": paused-scale-out sets "the HPA's
    # Scale Up Select Policy to Disabled"; scale-in goes on
    pol = policy(mode="ONLY_SCALE_IN", behavior={"scale_down": {"stabilization_window_seconds": 0}})
    up = run(semantics, pol, [300], 3)[0]
    assert up["desired_replicas"] == 3 and up["reason"] == "ScalingDisabled"
    assert up["recommended_replicas"] > 3
    down = run(semantics, pol, [0], 3)[0]
    assert down["desired_replicas"] < 3


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_only_scale_in_blocks_the_scale_from_zero_and_only_scale_out_the_scale_to_zero(semantics):
    # kedacore/keda v2.20.2 pkg/scaling/executor/scale_scaledobjects.go: scaleFromZeroOrIdle returns early
    # when NeedToPauseScaleOut(), scaleToZeroOrIdle when NeedToPauseScaleIn()
    zero = dict(min_replicas=0, scale_to_zero_delay_seconds=0,
                metrics=[{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}])
    r = run(semantics, policy(mode="ONLY_SCALE_IN", **zero), [50], 0)[0]
    assert r["desired_replicas"] == 0 and r["recommended_replicas"] == 1
    r = run(semantics, policy(mode="ONLY_SCALE_OUT", **zero), [0], 2)[0]
    assert r["desired_replicas"] == 2


# -- force_activation: autoscaling.keda.sh/force-activation ------------------------------------

ZERO = dict(min_replicas=0, scale_to_zero_delay_seconds=60,
            metrics=[{"type": "external", "name": "queue", "activation_threshold": 5,
                      "target": {"type": "AverageValue", "average_value": 10}}])


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_force_activation_scales_up_from_zero_with_nothing_active_and_never_goes_idle(semantics):
    # keda-docs 2.20 "Forcing activation": "KEDA will treat all configured scalers as active. If the scalers
    # were previously not active, KEDA will scale the service up from 0"; RequestScale:
    # `if isActive || scaledObject.NeedToForceActivation()`
    rs = run(semantics, policy(force_activation=True, **ZERO), [0, 0, 0, 0, 0], 0)
    assert rs[0]["desired_replicas"] == 1 and rs[0]["reason"] == "Activated"
    assert all(r["desired_replicas"] >= 1 for r in rs[1:])
    assert rs[0]["activation"]["forced"] is True


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_without_force_activation_the_same_readings_stay_idle(semantics):
    rs = run(semantics, policy(**ZERO), [0, 0], 0)
    assert [r["reason"] for r in rs] == ["Idle", "Idle"]


# -- initial_scale_to_zero_delay_seconds: initialCooldownPeriod --------------------------------

@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_the_initial_delay_keeps_a_never_active_target_up_until_it_has_passed(semantics):
    # keda-docs 2.20 reference/scaledobject-spec.md#initialcooldownperiod: "KEDA will not scale the resource
    # back to 0 until 120 seconds have passed since the ScaledObject creation"; kedacore/keda v2.20.2
    # scaleToZeroOrIdle: LastActiveTime == nil && CreationTimestamp.Add(initialCooldownPeriod).Before(now)
    pol = policy(initial_scale_to_zero_delay_seconds=120, **ZERO)
    rs = run(semantics, pol, [0, 0, 0, 0], 2)
    # first decision at T0 (its "creation"); T0+60, T0+120 are not after T0+120; T0+180 is
    assert [r["desired_replicas"] > 0 for r in rs] == [True, True, True, False]
    assert rs[3]["reason"] == "Deactivated"
    assert rs[0]["state"]["activation.since"] == T0


def test_without_an_initial_delay_a_never_active_target_goes_idle_at_once():
    # KEDA's default initialCooldownPeriod 0: "the cooldownPeriod begins immediately upon creation"
    r = run("kubernetes", policy(**ZERO), [0], 2)[0]
    assert r["desired_replicas"] == 0 and "activation.since" not in r["state"]


def test_the_initial_delay_no_longer_counts_once_a_metric_was_active():
    # after the first activity only cooldownPeriod counts (LastActiveTime != nil)
    pol = policy(initial_scale_to_zero_delay_seconds=3600, **ZERO)
    rs = run("kubernetes", pol, [20, 0, 0, 0], 2)
    assert "activation.since" not in rs[0]["state"]
    assert rs[-1]["desired_replicas"] == 0    # 60 s after the last activity, not 3600 after the first sight


def test_a_malformed_initial_delay_state_is_a_request_error_naming_the_key():
    with pytest.raises(RequestError, match=r"activation\.since"):
        run("kubernetes", policy(initial_scale_to_zero_delay_seconds=120, **ZERO), [0], 2,
            state={"activation.since": "yesterday"})


# -- fallback.behavior: formula (scalingModifiers with ??) --------------------------------------

def failover(expression, **extra):
    # keda-docs 2.20 reference/scaledobject-spec.md "scalingModifiers behavior":
    # best_metric ?? slower_metric ?? metric_backup ?? 8, target "2", fallback failureThreshold 3 replicas 10
    ext = [{"type": "external", "name": n, "target": {"type": "AverageValue", "average_value": 1}}
           for n in ("best", "slower", "backup")]
    return policy(min_replicas=1, rules=[], metrics=ext + [
        {"type": "formula", "name": "composite-metric", "expression": expression,
         "target": {"type": "AverageValue", "average_value": 2}}],
        fallback={"failure_threshold": 3, "replicas": 10, "behavior": "formula"},
        behavior={"scale_up": {"stabilization_window_seconds": 0,
                               "policies": [{"type": "Percent", "value": 1000, "period_seconds": 15}]},
                  "scale_down": {"stabilization_window_seconds": 0}}, **extra)


CHAIN = "best != null ? best : (slower != null ? slower : (backup != null ? backup : 8.0))"
TARGET_SEMANTICS = [s for s in BUILTIN_SEMANTICS if s != "azure"]   # azure decides on rules, not targets


@pytest.mark.parametrize("semantics", TARGET_SEMANTICS)
def test_a_metric_failing_past_the_threshold_is_routed_around_in_the_formula(semantics):
    # pkg/scaling/modifiers/formula.go scalingModifierTriggerValue: nil once NumberOfFailures > FailureThreshold
    ok = {"best": 8, "slower": 12, "backup": 40}
    down = {**ok, "best": FAIL}
    rs = run(semantics, failover(CHAIN), [ok] + [down] * 4, 2)
    assert rs[0]["desired_replicas"] == 4                           # best 8 / target 2
    # failures 1..3 of best: not past failure_threshold 3: the formula fails, the size is held
    # (GetMetricsWithFallback returns the scaler's error while NumberOfFailures <= FailureThreshold)
    assert [r["desired_replicas"] for r in rs[1:4]] == [4, 4, 4]
    assert all(r["reason"] != "Fallback" for r in rs[1:4])
    assert rs[3]["state"]["fallback.failures"] == {"best": 3}
    assert rs[4]["desired_replicas"] == 6                           # the 4th: slower 12 / 2
    assert rs[4]["fallback"]["failures"] == {"best": 4}


@pytest.mark.parametrize("semantics", TARGET_SEMANTICS)
def test_every_metric_failing_gives_the_formulas_literal(semantics):
    # "and finally returns the literal 8 if every trigger is unhealthy": 8 / target 2 = 4 replicas
    all_down = {"best": FAIL, "slower": FAIL, "backup": FAIL}
    r = run(semantics, failover(CHAIN), [all_down], 2,
            state={"recommendations": [], "fallback.failures": {"best": 3, "slower": 3, "backup": 3}})[0]
    assert r["desired_replicas"] == 4 and r["reason"] != "Fallback"


@pytest.mark.parametrize("semantics", TARGET_SEMANTICS)
def test_a_formula_that_is_null_falls_back_to_the_fallback_count(semantics):
    # "If the literal ?? 8 is omitted and every trigger fails, KEDA falls back to fallback.replicas":
    # calculateScalingModifiersFormula sets the composite metric to fallback.replicas × target
    all_down = {"best": FAIL, "slower": FAIL, "backup": FAIL}
    pol = failover("best != null ? best : (slower != null ? slower : backup)")
    r = run(semantics, pol, [all_down], 2,
            state={"recommendations": [], "fallback.failures": {"best": 3, "slower": 3, "backup": 3}})[0]
    assert r["desired_replicas"] == 10 and r["reason"] == "Fallback"


def test_arithmetic_on_a_null_metric_fails_the_formula_as_exprs_nil_does():
    all_down = {"best": FAIL, "slower": 4, "backup": 4}
    r = run("kubernetes", failover("best + slower + backup"), [all_down], 2,
            state={"recommendations": [], "fallback.failures": {"best": 3}})[0]
    assert r["desired_replicas"] == 2
    composite = [m for m in r["metrics"] if m["name"] == "composite-metric"][0]
    assert "formula composite-metric" in composite["error"] and "null_type" in composite["error"]


def test_the_formula_behavior_needs_a_formula_and_only_it_accepts_null():
    from scalebridge.policy import parse_policy
    with pytest.raises(Exception, match="requires scalingModifiers.formula"):
        parse_policy(policy(fallback={"failure_threshold": 3, "replicas": 10, "behavior": "formula"}))
    static = failover(CHAIN)
    static["fallback"] = {**static["fallback"], "behavior": "static"}
    with pytest.raises(Exception, match="no matching overload"):   # null compared with a double: refused
        parse_policy(static)


# -- invalid_values_as_zero: KEDA >= 2.20.2 ------------------------------------------------------

@pytest.mark.parametrize("semantics", TARGET_SEMANTICS)
def test_a_negative_external_value_reads_as_zero_under_invalid_values_as_zero(semantics):
    # kedacore/keda v2.20.2 pkg/scalers/scaler.go quantityFromFloat64 (#7889): "NaN, Inf, and negative values
    # are treated as zero"; without the key, a negative value is an invalid metric (stages/impossible.py)
    pol = policy(rules=[], behavior={"scale_down": {"stabilization_window_seconds": 0}})
    zero = run(semantics, {**pol, "invalid_values_as_zero": True}, [-5], 4)[0]
    as_zero = run(semantics, pol, [0], 4)[0]
    assert zero["desired_replicas"] == as_zero["desired_replicas"] < 4
    invalid = run(semantics, pol, [-5], 4)[0]
    assert invalid["desired_replicas"] == 4 and "invalid observation" in invalid["metrics"][0]["error"]


def test_activation_compares_the_value_as_read_not_as_zeroed():
    # prometheus_scaler.go GetMetricsAndActivity: `GenerateMetricInMili(metricName, val)` is reported, while
    # `val > s.metadata.ActivationThreshold` is computed on the raw value: -5 above -10 is active
    pol = policy(rules=[], invalid_values_as_zero=True, min_replicas=0, scale_to_zero_delay_seconds=60,
                 metrics=[{"type": "external", "name": "queue", "activation_threshold": -10,
                           "target": {"type": "AverageValue", "average_value": 10}}])
    r = run("kubernetes", pol, [-5], 0)[0]
    assert r["reason"] == "Activated" and r["desired_replicas"] == 1
    assert run("kubernetes", pol, [-15], 0)[0]["reason"] == "Idle"


def test_a_formula_reads_its_external_inputs_zeroed():
    # the scalers clamp what they report, which is what the formula (modifiers/formula.go) reads
    pol = policy(rules=[], invalid_values_as_zero=True, metrics=[
        {"type": "external", "name": "a", "target": {"type": "AverageValue", "average_value": 1}},
        {"type": "external", "name": "b", "target": {"type": "AverageValue", "average_value": 1}},
        {"type": "formula", "name": "composite-metric", "expression": "a + b",
         "target": {"type": "AverageValue", "average_value": 1}}])
    r = run("kubernetes", pol, [{"a": -30, "b": 6}], 2)[0]
    a, _, composite = r["metrics"]
    assert a["value"] == 0                          # -30 read as 0
    assert float(composite["value"]) * 2 == 6.0     # the composite total 0 + 6, an average over 2 replicas


def test_a_value_is_zeroed_as_kedas_quantity_from_float64_does():
    # `if math.IsNaN(value) || math.IsInf(value, 0) || value < 0 { return resource.MustParse("0") }`
    from scalebridge.stages.impossible import zero_value
    assert [zero_value(v) for v in (-1, 0, 2.5, float("nan"), float("inf"), float("-inf"), None)] == \
        [0, 0, 2.5, 0, 0, 0, None]


# -- where scalebridge is older or other than KEDA 2.20 (docs/known-divergences.md) ---------------

@pytest.mark.divergence("keda-initial-cooldown-from-first-decision")
def test_a_scaled_object_created_before_the_initial_delay_goes_to_zero_at_once():
    # KEDA: CreationTimestamp.Add(initialCooldownPeriod).Before(now): a ScaledObject created 600 s ago with
    # initialCooldownPeriod 120 and nothing ever active goes to zero on its first poll by this controller
    pol = policy(initial_scale_to_zero_delay_seconds=120, **ZERO)
    r = run("kubernetes", pol, [0], 2)[0]
    assert r["desired_replicas"] == 0


@pytest.mark.divergence("keda-non-finite-values")
def test_a_nan_value_reads_as_zero_under_invalid_values_as_zero():
    # quantityFromFloat64: `if math.IsNaN(value) || math.IsInf(value, 0) || value < 0 { return "0" }`
    pol = policy(rules=[], invalid_values_as_zero=True, behavior={"scale_down": {"stabilization_window_seconds": 0}})
    r = decide({"semantics": "kubernetes", "now": T0, "current_replicas": 4, "policy": pol,
                "observations": {"metrics": {"queue": {"value": float("nan"), "timestamp": T0}}}})
    assert r["desired_replicas"] == 1
