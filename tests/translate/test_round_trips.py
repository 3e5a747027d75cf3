"""render → import → render is a fixed point, and every policy that renders without a
``lost:`` line decides the same after import — on the observations the policy itself
reads (a neutral ``cpu`` read back as ``CPUUtilization`` reads none of them) — for every
registered translator, over generated policies and each translator's documented examples
(scalebridge.testing.check_round_trip, the round-trip part of check_translator)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from scalebridge import registry
from scalebridge.engine import load_policy
from scalebridge.errors import ScalebridgeError
from scalebridge.testing import check_round_trip

ROOT = Path(__file__).resolve().parents[2]
TRANSLATORS = sorted(registry.current().translators)

names = st.sampled_from(["cpu", "memory", "network_in", "network_out", "rps", "websocket_connections",
                         "Percentage CPU", "CPUUtilization", "queue_depth"])
#: the semantics a policy may name: none, or each built-in's
SEMANTICS = st.sampled_from([None, "kubernetes", "gce", "azure", "aws", "scalebridge"])


def _target(kind: str):
    if kind == "Utilization":
        return st.fixed_dictionaries({"type": st.just("Utilization"),
                                      "average_utilization": st.sampled_from([30, 50, 60, 75, 90, 62.5, 150])})
    if kind == "AverageValue":
        return st.fixed_dictionaries({"type": st.just("AverageValue"),
                                      "average_value": st.sampled_from([1, 2, 5, 100, 20000, 0.5])})
    return st.fixed_dictionaries({"type": st.just("Value"), "value": st.sampled_from([10, 100, 2500])})


@st.composite
def metrics(draw, kinds=("resource", "pods", "external", "object", "container_resource", "load_balancing"),
            options: bool = True):
    kind = draw(st.sampled_from(kinds))
    if kind in ("resource", "container_resource"):
        name = draw(st.sampled_from(["cpu", "memory"]))
        target = draw(_target(draw(st.sampled_from(["Utilization", "AverageValue"]))))
    elif kind == "load_balancing":
        name, target = draw(st.sampled_from(["load_balancing", "lb"])), draw(_target("Utilization"))
    elif kind == "pods":
        name, target = draw(names), draw(_target("AverageValue"))
        if draw(st.integers(0, 4)) == 0:
            target["rate"] = draw(st.sampled_from(["per_second", "per_minute"]))
    else:
        name, target = draw(names), draw(_target(draw(st.sampled_from(["AverageValue", "Value"]))))
    m = {"type": kind, "name": name, "target": target}
    if kind == "container_resource":
        m["container"] = "app"
    for key, values in (("enabled", [False]), ("disable_scale_in", [True]),
                        ("initialization_period_seconds", [60, 300])):
        if options and draw(st.integers(0, 5)) == 0:
            m[key] = draw(st.sampled_from(values))
    return m


@st.composite
def rules(draw, steps: bool = False):
    direction = draw(st.sampled_from(["Increase", "Decrease"]))
    rule = {"metric": draw(names), "operator": draw(st.sampled_from(["GreaterThan", "GreaterThanOrEqual",
                                                                      "LessThan", "LessThanOrEqual"])),
            "threshold": draw(st.sampled_from([10, 30, 70, 85, 1000])),
            "statistic": draw(st.sampled_from(["Average", "Max", "Min", "Sum"])),
            "time_grain_seconds": 60, "time_window_seconds": draw(st.sampled_from([60, 300, 600]))}
    if steps and draw(st.booleans()):
        up = rule["operator"].startswith("Greater")
        rule["steps"] = ([{"lower": 0, "upper": 20, "adjustment": 1}, {"lower": 20, "adjustment": 3}] if up else
                         [{"upper": 0, "lower": -20, "adjustment": -1}, {"upper": -20, "adjustment": -2}])
    else:
        rule["action"] = {"direction": direction,
                          "type": draw(st.sampled_from(["ChangeCount", "PercentChangeCount", "ExactCount"])),
                          "value": draw(st.sampled_from([1, 2, 3])), "cooldown_seconds": draw(st.sampled_from([60, 300]))}
    if draw(st.booleans()):
        rule["time_aggregation"] = draw(st.sampled_from(["Average", "Max", "Min"]))
    return rule


#: what each built-in translator's native autoscaler expresses, drawn three times in four so
#: that lossless renders (the ones the round trip is held to) are many: the semantics it decides
#: as, its metric kinds, whether it holds per-metric options, rules and step rules, and the other
#: policy keys it holds
EXPRESSES = {
    "kubernetes": ("kubernetes", ("resource", "container_resource", "pods", "object", "external"), False, False,
                   False, ("behavior", "tolerance")),
    "keda": ("kubernetes", ("resource", "container_resource", "external"), False, False, False, ("behavior",)),
    "gce": ("gce", ("resource", "pods", "external", "load_balancing"), False, False, False,
            ("scale_down_window", "scale_in_control", "initialization", "mode", "schedules")),
    "azure": ("azure", (), False, True, False, ("default_replicas", "profiles")),
    "aws": ("aws", ("resource", "pods", "external", "object"), True, True, True, ("initialization",)),
    "droplets": ("scalebridge", ("resource",), False, False, False, ("scale_down_window",)),
}
EVERYTHING = (None, ("resource", "pods", "external", "object", "container_resource", "load_balancing"), True, True,
              True, ("behavior", "tolerance", "scale_down_window", "scale_in_control", "initialization", "mode",
                     "schedules", "default_replicas", "profiles"))


@st.composite
def policies(draw, translator: str = ""):
    own, kinds, options, with_rules, with_steps, keys = EXPRESSES.get(translator, EVERYTHING) \
        if draw(st.integers(0, 3)) else EVERYTHING      # a quarter of the time, anything
    lo = draw(st.integers(0, 4))
    policy: dict = {"min_replicas": lo, "max_replicas": draw(st.integers(max(lo, 1), 40))}
    name = draw(st.sampled_from([None, "web", "shop-web", "scalebridge", "default"]))
    if name:
        policy["name"] = name
    sem = draw(st.sampled_from([None, own]) if own and draw(st.integers(0, 3)) else SEMANTICS)
    if sem:
        policy["semantics"] = sem
    ms = draw(st.lists(metrics(kinds, options), max_size=2)) if kinds else []
    if ms:
        policy["metrics"] = ms
    rs = draw(st.lists(rules(with_steps), min_size=1 if not kinds else 0, max_size=3)) if with_rules else []
    if rs:
        policy["rules"] = rs

    def some(key: str, n: int = 2) -> bool:
        return key in keys and draw(st.integers(0, n)) == 0

    if some("behavior"):
        side = {"stabilization_window_seconds": draw(st.sampled_from([0, 60, 300])),
                "policies": [{"type": draw(st.sampled_from(["Pods", "Percent"])), "value": draw(st.integers(1, 100)),
                              "period_seconds": draw(st.sampled_from([15, 60]))}]}
        policy["behavior"] = {draw(st.sampled_from(["scale_up", "scale_down"])): side}
    elif some("scale_down_window"):
        policy["behavior"] = {"scale_down": {"stabilization_window_seconds": draw(st.sampled_from([0, 300, 600]))}}
    if some("tolerance", 3):
        policy["tolerance"] = 0.1
    if some("initialization", 3):
        policy["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 120]))
    if some("scale_in_control", 3):
        policy["scale_in_control"] = {"max_scaled_in_replicas": {"fixed": 2}, "time_window_seconds": 600}
    if some("mode", 4):
        policy["mode"] = draw(st.sampled_from(["OFF", "ONLY_SCALE_OUT"]))
    if some("schedules", 4):
        policy["schedules"] = [{"name": "office", "schedule": "0 8 * * MON-FRI", "time_zone": "Europe/Paris",
                                "duration_seconds": 36000, "min_required_replicas": draw(st.integers(0, 5))}]
    if some("default_replicas", 3):
        policy["default_replicas"] = policy["max_replicas"]
    if some("profiles", 2):   # Azure's: a default profile of its own name (no bounds of the policy's), a weekly one
        lo, hi = policy.pop("min_replicas"), policy.pop("max_replicas")
        policy.pop("default_replicas", None)
        capacity = {"minimum": lo, "maximum": hi, "default": hi}
        policy["profiles"] = [{"name": draw(st.sampled_from(["Auto created scale condition", "default", "web"])),
                               "capacity": capacity, "rules": policy.pop("rules", [])}]
        if draw(st.booleans()):
            policy["profiles"].append({"name": "weekdays", "capacity": {**capacity, "default": lo},
                                       "recurrence": {"time_zone": "Europe/Paris", "days": ["Monday", "Friday"],
                                                      "hours": [8], "minutes": [0]}})
        if draw(st.booleans()):   # and its bounds as the policy's, as import writes them
            policy.update(min_replicas=lo, max_replicas=hi)
    try:
        load_policy(policy)
    except ScalebridgeError:
        assume(False)
    return policy


@pytest.mark.parametrize("name", TRANSLATORS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_lossless_render_is_a_fixed_point_that_decides_as_the_policy(name, data):
    check_round_trip(name, {"generated": data.draw(policies(name), label="policy")})


def _documented() -> dict[str, dict]:
    """Every policy under examples/ (files and run configurations' inline policies)."""
    found: dict[str, dict] = {}
    for f in sorted((ROOT / "examples").rglob("*.yaml")):
        doc = yaml.safe_load(f.read_text())
        where = f.relative_to(ROOT).as_posix()
        if isinstance(doc, dict) and "targets" in doc:
            found.update({f"{where}: policies.{k}": v for k, v in (doc.get("policies") or {}).items()
                          if isinstance(v, dict)})
        elif isinstance(doc, dict) and "max_replicas" in doc:
            found[where] = doc
    return found


@pytest.mark.parametrize("name", TRANSLATORS)
def test_each_documented_policy_round_trips(name):
    report = check_round_trip(name, _documented())
    assert any("decisions the same" in line for line in report.passed), report.skipped
