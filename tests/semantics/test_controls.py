"""The neutral controls through ``decide`` under every built-in semantics: fallback on
metric failure, formulas, scale to and from zero (docs/policy.md, docs/semantics.md).

Every semantics reads the same observations: an ``external`` metric (a snapshot with a
timestamp, which AWS target tracking reads as one value for every period) for the
target-metric semantics, and a threshold rule on the same key for ``azure`` (which has
no target metrics)."""
import json

import pytest

from scalebridge.engine import BUILTIN_SEMANTICS, decide

T0 = 1_767_225_600.0
STEP = 60.0


def policy(**extra):
    p = {"min_replicas": 1, "max_replicas": 20, "default_replicas": 2,
         "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}],
         # azure: add 1 above 40 queued, remove 1 below 10
         "rules": [{"metric": "queue", "operator": "GreaterThan", "threshold": 40, "time_window_seconds": 60,
                    "action": {"direction": "Increase", "type": "ChangeCount", "value": 1, "cooldown_seconds": 0}},
                   {"metric": "queue", "operator": "LessThan", "threshold": 10, "time_window_seconds": 60,
                    "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1, "cooldown_seconds": 0}}]}
    p.update(extra)
    return p


def queue(now, value):
    return {"value": value, "timestamp": now, "series": [[now - 30, value]]}


def run(semantics, pol, steps, current, state=None):
    """Decide each step (an observation of ``queue``, or an error string), carrying the
    state and the size out; returns the responses."""
    out = []
    state = {"recommendations": []} if state is None else state
    for i, step in enumerate(steps):
        now = T0 + i * STEP
        obs = {"queue": {"error": step}} if isinstance(step, str) else {"queue": queue(now, step)}
        r = decide({"semantics": semantics, "now": now, "current_replicas": current, "policy": pol,
                    "observations": {"metrics": obs}, "state": state})
        state = json.loads(json.dumps(r["state"]))   # what a store keeps: JSON
        current = r["desired_replicas"]
        out.append(r)
    return out


FAIL = "prometheus: connection refused"


# -- fallback -------------------------------------------------------------------------------

@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
@pytest.mark.parametrize("behavior, replicas, current, expected", [
    ("static", 6, 3, 6),
    ("current_replicas", None, 3, 3),
    ("current_replicas_if_higher", 6, 3, 6),
    ("current_replicas_if_higher", 2, 3, 3),
    ("current_replicas_if_lower", 6, 3, 3),
    ("current_replicas_if_lower", 2, 3, 2),
])
def test_fallback_applies_after_exactly_failure_threshold_failed_decisions(semantics, behavior, replicas, current,
                                                                          expected):
    fb = {"failure_threshold": 2, "behavior": behavior, **({"replicas": replicas} if replicas is not None else {})}
    pol = policy(fallback=fb, behavior={"scale_down": {"stabilization_window_seconds": 0}},
                 default_replicas=None)
    rs = run(semantics, pol, [FAIL] * 4, current)
    # the first failure_threshold decisions fail as without fallback: no decision, size held
    for r in rs[:2]:
        assert r["desired_replicas"] == current and r["reason"] != "Fallback"
        assert r["fallback"]["active"] is False
    # "Once that value passes the failureThreshold": the third failure falls back
    for r in rs[2:]:
        assert r["reason"] == "Fallback", r
        assert r["desired_replicas"] == expected
        assert r["fallback"] == {"active": True, "failures": {"queue": rs.index(r) + 1}, "metrics": ["queue"],
                                 "replicas": expected}
        assert r["able_to_scale"] is True and r["error"].startswith("fallback: queue failed")
    assert [r["state"]["fallback.failures"]["queue"] for r in rs] == [1, 2, 3, 4]


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_fallback_ends_when_the_metric_is_read_again(semantics):
    pol = policy(fallback={"failure_threshold": 1, "replicas": 8})
    rs = run(semantics, pol, [FAIL, FAIL, 25], 4)   # (the HPA without behavior adds at most max(2 × 4, 4))
    assert rs[1]["reason"] == "Fallback" and rs[1]["desired_replicas"] == 8
    last = rs[2]
    assert last["reason"] != "Fallback"
    assert last["fallback"] == {"active": False, "failures": {}, "metrics": [], "replicas": None}
    assert "fallback.failures" not in last["state"]
    assert last["metrics"][0]["error"] is None


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_the_failure_count_survives_a_restart(semantics):
    pol = policy(fallback={"failure_threshold": 3, "replicas": 7})
    first = run(semantics, pol, [FAIL] * 3, 4)
    assert first[-1]["reason"] != "Fallback"
    stored = json.dumps(first[-1]["state"])          # the store, then a new process
    after = run(semantics, pol, [FAIL], 4, state=json.loads(stored))
    assert after[0]["reason"] == "Fallback" and after[0]["desired_replicas"] == 7


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_without_fallback_the_size_is_held_and_the_response_says_why(semantics):
    rs = run(semantics, policy(default_replicas=None), [FAIL] * 5, 3)
    for r in rs:
        assert r["desired_replicas"] == 3 and r["reason"] != "Fallback"
        assert "fallback.failures" not in r["state"]
        entry = next(m for m in r["metrics"] if m["name"] == "queue")
        assert entry["error"] == f"metric could not be read: {FAIL}"


def test_a_metric_absent_counts_as_failed_too():
    pol = policy(fallback={"failure_threshold": 0, "replicas": 5})
    r = decide({"semantics": "kubernetes", "now": T0, "current_replicas": 3, "policy": pol,
                "observations": {"metrics": {}}, "state": {"recommendations": []}})
    assert r["reason"] == "Fallback" and r["desired_replicas"] == 5


def test_an_invalid_value_counts_as_failed():
    # a cpu Utilization metric whose members lack a request: the semantics' own error
    pol = {"max_replicas": 10, "fallback": {"failure_threshold": 0, "replicas": 4},
           "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 50}}]}
    r = decide({"semantics": "kubernetes", "now": T0, "current_replicas": 2, "policy": pol,
                "observations": {"members": [{"name": "a", "ready": True}, {"name": "b", "ready": True}],
                                 "metrics": {"cpu": {"members": {"a": "100m", "b": "100m"}}}},
                "state": {"recommendations": []}})
    assert r["reason"] == "Fallback" and r["desired_replicas"] == 4
    assert "missing request" in r["metrics"][0]["error"]


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_fallback_covers_cpu_and_memory_too(semantics, resource):
    # KEDA leaves cpu and memory to the HPA (no fallback); scalebridge reads them itself (issue #27).
    # 3 running: the HPA without behavior adds at most max(2 × 3, 4)
    pol = {"min_replicas": 1, "max_replicas": 10, "fallback": {"failure_threshold": 1, "replicas": 5},
           "metrics": [{"type": "resource", "name": resource,
                        "target": {"type": "Utilization", "average_utilization": 60}}],
           "rules": [{"metric": resource, "operator": "GreaterThan", "threshold": 70, "time_window_seconds": 60,
                      "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]}
    state = {"recommendations": []}
    out = []
    for i in range(2):
        r = decide({"semantics": semantics, "now": T0 + 60 * i, "current_replicas": 3, "policy": pol,
                    "observations": {"metrics": {resource: {"error": "metrics.k8s.io: the server is currently "
                                                                     "unable to handle the request"}}},
                    "state": state})
        state = r["state"]
        out.append((r["desired_replicas"], r["reason"]))
    assert out[0][1] != "Fallback" and out[1] == (5, "Fallback")


def test_a_read_metric_above_the_fallback_count_wins():
    # the HPA takes the highest of its metrics; the one in fallback stands for 4
    pol = policy(fallback={"failure_threshold": 0, "replicas": 4},
                 metrics=policy()["metrics"] + [{"type": "external", "name": "backlog",
                                                 "target": {"type": "AverageValue", "average_value": 5}}])
    r = decide({"semantics": "kubernetes", "now": T0, "current_replicas": 5, "policy": pol,
                "observations": {"metrics": {"queue": {"error": FAIL}, "backlog": {"value": 45}}},
                "state": {"recommendations": []}})
    assert r["reason"] == "Fallback" and r["desired_replicas"] == 9


# -- formulas -------------------------------------------------------------------------------

def _ext(name):
    return {"type": "external", "name": name, "target": {"type": "AverageValue", "average_value": 1}}


COUNT_POLICY = {
    "min_replicas": 1, "max_replicas": 20, "behavior": {},
    "metrics": [_ext("trig_one"), _ext("trig_two"), _ext("trig_three"),
                # KEDA's count example, target "2" (AverageValue, KEDA's default metricType)
                {"type": "formula", "name": "composite", "target": {"type": "AverageValue", "average_value": 2},
                 "expression": "[trig_one, trig_two, trig_three].filter(x, x > 1.0).size() > 1 ? 5.0 : 0.0"}],
    # azure reads the formula by name, as any custom metric: add 2 above 4
    "rules": [{"metric": "composite", "operator": "GreaterThan", "threshold": 4, "time_window_seconds": 60,
               "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}],
}


# KEDA "Scaling Deployments", Scaling Modifiers, "Example: count function"
# (https://keda.sh/docs/latest/concepts/scaling-deployments/#scaling-modifiers):
#   formula: "count([trig_one,trig_two,trig_three],{#>1}) > 1 ? 5 : 0"
#   "If at least 2 metrics (from the list trig_one,trig_two,trig_three) have value of more
#   than 1, then return 5, otherwise return 0"
# the composite metric against its target (AverageValue 2, KEDA's default metricType) is
# ceil(5 / 2) = 3 replicas; 0 is below min_replicas 1. Under azure a rule on the formula
# adds 2 above 4 (1 + 2 = 3) and nothing otherwise.
@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
@pytest.mark.parametrize("values, composite, expected", [((2, 3, 0), 5.0, 3), ((2, 1, 0), 0.0, 1)])
def test_a_formula_of_three_metrics_computes_kedas_documented_value(semantics, values, composite, expected):
    obs = {n: {"value": v, "timestamp": T0} for n, v in zip(("trig_one", "trig_two", "trig_three"), values)}
    r = decide({"semantics": semantics, "now": T0, "current_replicas": 1, "policy": COUNT_POLICY,
                "observations": {"metrics": obs}, "state": {"recommendations": []}})
    assert r["desired_replicas"] == expected, r
    entry = [m for m in r["metrics"] if m["name"] == "composite"][0]
    assert float(entry["value"]) == composite
    if semantics != "azure":
        assert [m.get("formula") for m in r["metrics"][:3]] == ["composite"] * 3
        assert [m["value"] for m in r["metrics"][:3]] == list(values)
        assert entry["replicas"] == (3 if composite else 0)


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_formula_that_fails_at_run_time_is_an_invalid_metric(semantics):
    pol = {**COUNT_POLICY, "metrics": COUNT_POLICY["metrics"][:3] + [
        {"type": "formula", "name": "composite", "target": {"type": "AverageValue", "average_value": 2},
         "expression": "trig_one / trig_three"}]}
    obs = {n: {"value": v, "timestamp": T0} for n, v in (("trig_one", 2), ("trig_two", 3), ("trig_three", 0))}
    r = decide({"semantics": semantics, "now": T0, "current_replicas": 4, "policy": pol,
                "observations": {"metrics": obs}, "state": {"recommendations": []}})
    assert r["desired_replicas"] == 4
    composite = [m for m in r["metrics"] if m["name"] == "composite"][0]
    assert composite["error"].startswith("formula composite: the expression failed")


# -- scale to and from zero -------------------------------------------------------------------

ZERO = policy(min_replicas=0, scale_to_zero_delay_seconds=120, default_replicas=None,
              metrics=[{"type": "external", "name": "queue", "activation_threshold": 5,
                        "target": {"type": "AverageValue", "average_value": 10}}])


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_the_activation_phases(semantics):
    # queue per minute: 3 is at or below the threshold (5); 8 is above it
    steps = [0, 3, 8, 30, 30, 4, 4, 4, 0]
    rs = run(semantics, ZERO, steps, 0)
    sizes = [r["desired_replicas"] for r in rs]
    reasons = [r["reason"] for r in rs]
    assert sizes[:2] == [0, 0] and reasons[:2] == ["Idle", "Idle"]       # idle at or below the threshold
    assert sizes[2] == 1 and reasons[2] == "Activated"                    # 0 -> 1 above it
    assert all(s >= 1 for s in sizes[3:7])                                # the semantics scales, never to 0
    # last active at minute 4; 4 < 5 from minute 5; 0 only when last_active + 120 < now: minute 7
    assert rs[4]["activation"] == {"active": True, "last_active": T0 + 4 * STEP}
    assert sizes[7] == 0 and reasons[7] == "Deactivated"
    assert rs[7]["state"]["activation.last_active"] == T0 + 4 * STEP
    assert sizes[8] == 0 and reasons[8] == "Idle"


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_idle_replicas_is_the_size_while_idle_and_min_replicas_when_active(semantics):
    pol = {**ZERO, "min_replicas": 3, "idle_replicas": 0}
    rs = run(semantics, pol, [0, 9, 9, 0, 0, 0, 0], 0)
    assert [r["desired_replicas"] for r in rs[:2]] == [0, 3]             # "immediately to minReplicaCount"
    assert min(r["desired_replicas"] for r in rs[1:4]) >= 3
    assert rs[-1]["desired_replicas"] == 0 and rs[-1]["reason"] in ("Deactivated", "Idle")


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_failed_metric_never_takes_the_target_to_zero(semantics):
    rs = run(semantics, ZERO, [30, FAIL, FAIL, FAIL, FAIL, FAIL], 0)
    assert rs[0]["reason"] == "Activated"
    assert all(r["desired_replicas"] >= 1 for r in rs[1:])


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_metric_in_fallback_activates_from_zero(semantics):
    # "When fallback is active, the scaler should be considered active"
    pol = {**ZERO, "fallback": {"failure_threshold": 1, "replicas": 4}}
    rs = run(semantics, pol, [FAIL, FAIL, FAIL], 0)
    assert [r["reason"] for r in rs[:2]] == ["Idle", "Activated"]
    assert [r["fallback"]["active"] for r in rs] == [False, True, True]   # scalebridge_fallback_active
    assert rs[2]["reason"] == "Fallback" and rs[2]["desired_replicas"] == 4


def test_first_sight_with_nothing_active_goes_to_idle_at_once():
    # KEDA: "when you first create your Deployment ... KEDA will immediately scale it to minReplicaCount"
    r = run("scalebridge", ZERO, [0], 5, state={})[0]
    assert r["desired_replicas"] == 0 and r["reason"] == "Deactivated"


def test_the_activation_threshold_is_strict():
    # "Activation only occurs when this value is greater than the set value"
    assert run("kubernetes", ZERO, [5], 0)[0]["reason"] == "Idle"
    assert run("kubernetes", ZERO, [5.5], 0)[0]["reason"] == "Activated"


def test_min_replicas_zero_without_activation_keys_is_the_providers_own():
    # no activation key: the HPA itself scales an external AverageValue metric to 0 (HPAScaleToZero)
    pol = policy(min_replicas=0, behavior={"scale_down": {"stabilization_window_seconds": 0}})
    r = run("kubernetes", pol, [0], 3)[0]
    assert r["desired_replicas"] == 0 and "activation" not in r


# -- what does not change -------------------------------------------------------------------

@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_policy_without_the_new_keys_has_no_new_fields(semantics):
    r = run(semantics, policy(), [25, 25], 3)[-1]
    assert "fallback" not in r and "activation" not in r
    assert not any(k.startswith(("fallback.", "activation.")) for k in r["state"])


# -- docs/semantics.md: the controls' table ----------------------------------------------------

def test_the_docs_table_of_the_controls_is_what_decide_answers():
    import re
    from pathlib import Path

    from scalebridge import decide_all
    root = Path(__file__).resolve().parents[2]
    rows = re.findall(r"^\| `(controls/[a-z-]+\.json)`: .*?\| (.+) \|$", (root / "docs/semantics.md").read_text(), re.M)
    assert len(rows) == 8
    for name, cells in rows:
        want = [(int(c.split()[0]), c.split("`")[1]) for c in (x.strip() for x in cells.split("|"))]
        req = json.loads((root / "examples" / name).read_text())
        got = [(r["desired_replicas"], r["reason"]) for r in decide_all(req)]
        assert got == want, name
