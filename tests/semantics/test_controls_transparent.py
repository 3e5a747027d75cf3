"""Differential: the neutral controls change nothing where they do not apply.

For random requests under every built-in semantics, the decision of a policy equals
the decision of the same policy with a control that cannot act — a fallback whose
threshold is never reached, a formula that is the identity of the metric it replaces,
activation keys with ``min_replicas`` ≥ 1 (KEDA: "If the minimum replicas is >= 1, the
scaler is always active and the activation value will be ignored"). The controls layer
itself is then the semantics' own decision, untouched; a policy with none of the keys
does not even enter it (``scalebridge.controls.controls_of`` is None)."""
import copy

from hypothesis import given, settings, strategies as st

from scalebridge.engine import BUILTIN_SEMANTICS, decide

T0 = 1_767_225_600.0
KEYS = ("recommended_replicas", "desired_replicas", "reason", "able_to_scale", "profile")


def base(min_r):
    return {"min_replicas": min_r, "max_replicas": 30, "default_replicas": 3,
            "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}},
                        {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}],
            "rules": [{"metric": "queue", "operator": "GreaterThan", "threshold": 50, "time_window_seconds": 120,
                       "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}},
                      {"metric": "queue", "operator": "LessThan", "threshold": 20, "time_window_seconds": 120,
                       "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}


@st.composite
def requests(draw):
    current = draw(st.integers(1, 12))
    min_r = draw(st.integers(1, 3))
    queue = draw(st.one_of(st.none(), st.integers(0, 400)))
    cpu = draw(st.lists(st.integers(0, 1500), min_size=current, max_size=current))
    history = draw(st.lists(st.tuples(st.integers(1, 900), st.integers(0, 30)), max_size=4))
    metrics = {"cpu": {"members": {f"m{i}": f"{v}m" for i, v in enumerate(cpu)}, "timestamp": T0 - 10, "window": 30}}
    if queue is not None:
        metrics["queue"] = {"value": queue, "timestamp": T0 - 10, "series": [[T0 - 70, queue], [T0 - 10, queue]]}
    return {"now": T0, "current_replicas": current, "policy": base(min_r),
            "observations": {"members": [{"name": f"m{i}", "ready": True, "requests": {"cpu": "1"}}
                                         for i in range(current)], "metrics": metrics},
            "state": {"recommendations": [{"time": T0 - a, "replicas": r} for a, r in sorted(history, reverse=True)]}}


def same(a, b):
    assert {k: a[k] for k in KEYS} == {k: b[k] for k in KEYS}
    assert a["error"] == b["error"]


def strip(state):
    return {k: v for k, v in state.items() if not k.startswith(("fallback.", "activation."))}


@settings(max_examples=40, deadline=None)
@given(requests())
def test_an_unreached_fallback_changes_nothing(req):
    for sem in BUILTIN_SEMANTICS:
        plain = decide(req, sem)
        other = copy.deepcopy(req)
        other["policy"]["fallback"] = {"failure_threshold": 1000, "replicas": 0}
        with_fb = decide(other, sem)
        same(plain, with_fb)
        assert plain["metrics"] == with_fb["metrics"]
        assert plain["state"] == strip(with_fb["state"])


@settings(max_examples=40, deadline=None)
@given(requests())
def test_an_identity_formula_decides_as_its_metric(req):
    for sem in BUILTIN_SEMANTICS:
        plain = decide(req, sem)
        other = copy.deepcopy(req)
        m = other["policy"]["metrics"]
        m[0] = {**m[0], "name": "queue"}
        m.insert(0, {"type": "external", "name": "raw", "target": {"type": "AverageValue", "average_value": 10}})
        m[1] = {"type": "formula", "name": "queue", "expression": "raw", "target": m[1]["target"]}
        obs = other["observations"]["metrics"]
        if "queue" in obs:
            obs["raw"] = obs.pop("queue")
        with_formula = decide(other, sem)
        same(plain, with_formula)
        mine = [e for e in with_formula["metrics"] if e["name"] == "queue"]
        theirs = [e for e in plain["metrics"] if e["name"] == "queue"]
        assert [e["replicas"] for e in mine] == [e["replicas"] for e in theirs]


@settings(max_examples=40, deadline=None)
@given(requests())
def test_activation_keys_above_a_minimum_of_one_change_nothing(req):
    for sem in BUILTIN_SEMANTICS:
        plain = decide(req, sem)
        other = copy.deepcopy(req)
        other["policy"]["scale_to_zero_delay_seconds"] = 60
        other["policy"]["metrics"][0]["activation_threshold"] = 1000
        same(plain, decide(other, sem))
