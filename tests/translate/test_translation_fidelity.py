"""For random policies each target expresses losslessly and random decision requests,
``decide`` under the provider's semantics gives the same response for the policy
and for ``import(render(policy))``; and ``render(import(render(p))) == render(p)``."""
from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings, strategies as st

from scalebridge import decide
from scalebridge.testing.requests import (AZURE_NOW, GCE_NOW, NOW, aws_request, azure_request, azure_series,
                                         cpu_request, per_vm, pods, vms)
from scalebridge.translate import import_native, render

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_decision(request: dict, provider: str) -> None:
    native, losses = render(request["policy"], provider)
    assert not losses, losses.lines   # the strategy draws only policies the target expresses
    back, back_losses = import_native(native, provider)
    assert not back_losses.lines, back_losses.lines
    again, _ = render(back, provider)
    assert again == native
    other = copy.deepcopy(request)
    other["policy"] = back
    # a rule on a neutral metric is rendered on the provider's own (cpu: Azure's Percentage CPU, AWS's
    # CPUUtilization), which import reads back as the neutral name: the same observations are read
    assert decide(other, provider) == decide(request, provider)


bounds = st.integers(1, 5).flatmap(lambda lo: st.tuples(st.just(lo), st.integers(lo, 40)))
cores = st.sampled_from(["100m", "250m", "400m", "500m", "750m", "900m", "1", "1500m"])


def _hpa_rules(side: str):
    policy = st.fixed_dictionaries({"type": st.sampled_from(["Pods", "Percent"]), "value": st.integers(1, 200),
                                    "period_seconds": st.integers(1, 1800)})
    return st.fixed_dictionaries({}, optional={
        "stabilization_window_seconds": st.integers(0, 3600),
        "select_policy": st.sampled_from(["Max", "Min", "Disabled"]),
        "policies": st.lists(policy, min_size=1, max_size=3),
        "tolerance": st.sampled_from([0, 0.05, 0.1, 0.25]),
    })


@st.composite
def hpa_requests(draw):
    lo, hi = draw(bounds)
    n = draw(st.integers(1, 12))
    policy: dict = {"name": "web", "min_replicas": lo, "max_replicas": hi,
                    "metrics": [{"type": "resource", "name": "cpu",
                                 "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 100))}}]}
    if draw(st.booleans()):
        policy["behavior"] = draw(st.fixed_dictionaries({}, optional={"scale_up": _hpa_rules("up"),
                                                                      "scale_down": _hpa_rules("down")}))
    return cpu_request(n, draw(st.lists(cores, min_size=n, max_size=n)), policy=policy)


@FAST
@given(hpa_requests())
def test_kubernetes_round_trip_decides_the_same(request):
    _same_decision(request, "kubernetes")


@st.composite
def gce_requests(draw):
    lo, hi = draw(bounds)
    n = draw(st.integers(1, 12))
    init = draw(st.sampled_from([None, 0, 60, 120, 300]))
    policy: dict = {"name": "web", "min_replicas": lo, "max_replicas": hi,
                    "metrics": [{"type": "resource", "name": "cpu",
                                 "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 95))}}]}
    if init is not None:
        policy["initialization_period_seconds"] = init
    if draw(st.booleans()):
        policy["behavior"] = {"scale_down": {"stabilization_window_seconds": draw(st.sampled_from([300, 600, 900]))}}
    if draw(st.booleans()):
        mx = (st.fixed_dictionaries({"fixed": st.integers(0, 5)}) |
              st.fixed_dictionaries({"percent": st.integers(0, 100)}))
        policy["scale_in_control"] = {"max_scaled_in_replicas": draw(mx),
                                      "time_window_seconds": draw(st.sampled_from([60, 600, 1200]))}
    policy["mode"] = draw(st.sampled_from(["ON", "ONLY_SCALE_OUT", "OFF"]))
    if draw(st.booleans()):
        policy["schedules"] = [{"name": "office", "schedule": "0 8 * * MON-FRI", "time_zone": "Europe/Paris",
                                "duration_seconds": 36000, "min_required_replicas": draw(st.integers(0, 10))}]
    req = cpu_request(n, draw(st.lists(cores, min_size=n, max_size=n)), policy=policy, semantics="gce")
    req["state"] = {"recommendations": [{"time": NOW - 60 * k, "replicas": draw(st.integers(1, 40))} for k in range(1, 4)]}
    return req


@FAST
@given(gce_requests())
def test_gce_round_trip_decides_the_same(request):
    _same_decision(request, "gce")


@st.composite
def azure_rules(draw):
    direction = draw(st.sampled_from(["Increase", "Decrease"]))
    return {"metric": "cpu", "statistic": draw(st.sampled_from(["Average", "Min", "Max"])),
            "time_grain_seconds": 60, "time_window_seconds": draw(st.sampled_from([300, 600])),
            "time_aggregation": draw(st.sampled_from(["Average", "Min", "Max", "Last"])),
            "operator": draw(st.sampled_from(["GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual"])),
            "threshold": draw(st.integers(5, 95)),
            "action": {"direction": direction, "type": draw(st.sampled_from(["ChangeCount", "PercentChangeCount"])),
                       "value": draw(st.integers(1, 3)), "cooldown_seconds": draw(st.sampled_from([60, 300, 600]))}}


@st.composite
def azure_requests(draw):
    lo, hi = draw(bounds)
    rules = _accepted_by_azure(draw(st.lists(azure_rules(), min_size=1, max_size=3)), lo, hi)
    series = draw(st.lists(st.integers(0, 100), min_size=10, max_size=10))
    req = azure_request(draw(st.integers(lo, hi)), rules, {"cpu": azure_series(series)},
                        min_replicas=lo, max_replicas=hi, default_replicas=draw(st.integers(lo, hi)))
    req["policy"]["name"] = "web"
    if req["policy"]["default_replicas"] == lo:
        del req["policy"]["default_replicas"]
    return req


@FAST
@given(azure_requests())
def test_azure_round_trip_decides_the_same(request):
    _same_decision(request, "azure")


@st.composite
def aws_rules(draw):
    out = draw(st.booleans())
    if draw(st.booleans()):   # step scaling: one open step beyond the threshold
        steps = [{"lower": 0, "adjustment": draw(st.integers(1, 3))}] if out else \
            [{"upper": 0, "adjustment": -draw(st.integers(1, 3))}]
        return {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60 * draw(st.integers(1, 3)),
                "operator": "GreaterThan" if out else "LessThan", "threshold": draw(st.integers(5, 95)),
                "adjustment_type": draw(st.sampled_from(["ChangeInCapacity", "PercentChangeInCapacity"])),
                "steps": steps}
    return {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60 * draw(st.integers(1, 3)),
            "operator": "GreaterThanOrEqual" if out else "LessThanOrEqual", "threshold": draw(st.integers(5, 95)),
            "action": {"direction": "Increase" if out else "Decrease", "type": "ChangeCount",
                       "value": draw(st.integers(1, 3)), "cooldown_seconds": draw(st.sampled_from([60, 300]))}}


@st.composite
def aws_requests(draw):
    lo, hi = draw(bounds)
    rules = draw(st.lists(aws_rules(), max_size=2))
    metrics = [{"type": "resource", "name": "cpu",
                "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 90))}}] \
        if draw(st.booleans()) or not rules else None
    cpu = draw(st.integers(0, 100))
    return aws_request(draw(st.integers(lo, hi)), cpu, rules=rules, metrics=metrics, min_replicas=lo,
                       max_replicas=hi, name="web")


@FAST
@given(aws_requests())
def test_aws_round_trip_decides_the_same(request):
    _same_decision(request, "aws")


# ----------------------------------------------------------------------------- every HPA metric type, with history

_MEMBER_CPU = st.integers(0, 1500)


@st.composite
def hpa_requests_every_metric(draw):
    """Every autoscaling/v2 metric source and target type
    (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/horizontal-pod-autoscaler-v2/),
    each with its observation, a decision history, and a behavior with its tolerance."""
    lo, hi = draw(bounds)
    n = draw(st.integers(1, 8))
    members = pods(n, cpu_request=draw(cores))
    names = [m["name"] for m in members]
    kinds = draw(st.lists(st.sampled_from(["cpu", "cpu_value", "memory", "pods", "object_value", "object_average",
                                           "external_value", "external_average", "container"]),
                          min_size=1, max_size=4, unique=True))
    metrics, obs = [], {}
    for k in kinds:
        if k in ("cpu", "cpu_value", "container"):
            obs["cpu"] = {"members": {p: f"{draw(_MEMBER_CPU)}m" for p in names}, "timestamp": NOW - 10, "window": 30}
        if k == "cpu":
            metrics.append({"type": "resource", "name": "cpu",
                            "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 100))}})
        elif k == "cpu_value":
            metrics.append({"type": "resource", "name": "cpu",
                            "target": {"type": "AverageValue", "average_value": f"{draw(st.integers(50, 900))}m"}})
        elif k == "container":
            metrics.append({"type": "container_resource", "name": "cpu", "container": "app",
                            "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 100))}})
        elif k == "memory":
            obs["memory"] = {"members": {p: f"{draw(st.integers(50, 900))}Mi" for p in names},
                             "timestamp": NOW - 10, "window": 30}
            metrics.append({"type": "resource", "name": "memory",
                            "target": {"type": "AverageValue", "average_value": f"{draw(st.integers(50, 900))}Mi"}})
        elif k == "pods":
            obs["conn"] = {"members": {p: draw(st.integers(0, 30000)) for p in names}}
            metrics.append({"type": "pods", "name": "conn",
                            "target": {"type": "AverageValue", "average_value": draw(st.integers(100, 20000))}})
        elif k.startswith("object"):
            obs["rps"] = {"value": draw(st.integers(0, 5000))}
            t = {"type": "Value", "value": draw(st.integers(1, 2000))} if k == "object_value" else \
                {"type": "AverageValue", "average_value": draw(st.integers(1, 2000))}
            metrics.append({"type": "object", "name": "rps", "target": t})
        else:
            obs["queue"] = {"values": draw(st.lists(st.integers(0, 500), min_size=1, max_size=3))}
            t = {"type": "Value", "value": draw(st.integers(1, 300))} if k == "external_value" else \
                {"type": "AverageValue", "average_value": draw(st.integers(1, 300))}
            metrics.append({"type": "external", "name": "queue", "target": t})
    policy: dict = {"name": "web", "min_replicas": lo, "max_replicas": hi, "metrics": metrics,
                    "behavior": draw(st.fixed_dictionaries({}, optional={"scale_up": _hpa_rules("up"),
                                                                         "scale_down": _hpa_rules("down")}))}
    if draw(st.booleans()):
        policy["tolerance"] = draw(st.sampled_from([0.05, 0.1, 0.3]))
    history = draw(st.lists(st.tuples(st.integers(1, 600), st.integers(1, 40)), max_size=5))
    state = {"recommendations": [{"time": NOW - dt, "replicas": r} for dt, r in sorted(history, reverse=True)]}
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": n, "policy": policy, "state": state,
            "observations": {"members": members, "status_replicas": n, "metrics": obs}}


@FAST
@given(hpa_requests_every_metric())
def test_kubernetes_round_trip_of_every_metric_type_decides_the_same(request):
    _same_decision(request, "kubernetes")


# ----------------------------------------------------------------------------- Azure profiles, every rule field, cooldowns

@st.composite
def azure_full_rules(draw, metrics=("cpu", "queue")):
    """A rule with every field an Azure metric trigger and scale action have
    (https://learn.microsoft.com/en-us/rest/api/monitor/autoscale-settings/create-or-update)."""
    return {"metric": draw(st.sampled_from(metrics)),
            "statistic": draw(st.sampled_from(["Average", "Min", "Max", "Sum", "Count"])),
            "time_grain_seconds": 60, "time_window_seconds": draw(st.sampled_from([300, 600])),
            "time_aggregation": draw(st.sampled_from(["Average", "Min", "Max", "Sum", "Count", "Last"])),
            "operator": draw(st.sampled_from(["Equals", "NotEquals", "GreaterThan", "GreaterThanOrEqual", "LessThan",
                                              "LessThanOrEqual"])),
            "threshold": draw(st.integers(0, 100)), "divide_per_instance": draw(st.booleans()),
            "action": {"direction": draw(st.sampled_from(["Increase", "Decrease"])),
                       "type": draw(st.sampled_from(["ChangeCount", "PercentChangeCount", "ExactCount"])),
                       "value": draw(st.integers(1, 5)), "cooldown_seconds": draw(st.sampled_from([60, 300, 600, 1200]))}}


def _accepted_by_azure(rules: list, lo: int, hi: int) -> list:
    """The rules as Azure accepts them in a profile of capacity ``lo``..``hi``: it refuses
    a ChangeCount beyond the span (InvalidActionValue, scalebridge.constants)."""
    for r in rules:
        a = r["action"]
        if a["type"] == "ChangeCount" and hi > lo:
            a["value"] = min(a["value"], hi - lo)
    return rules


def _capacity(draw):
    lo = draw(st.integers(1, 5))
    hi = draw(st.integers(lo, 20))
    return {"minimum": lo, "maximum": hi, "default": draw(st.integers(lo, hi))}


@st.composite
def azure_profile_requests(draw):
    """Recurrence and fixed-date profiles in their time zones, rules on two metrics, and a last
    rule action some minutes before ``now`` (a cooldown that may or may not hold)."""
    cap = _capacity(draw)
    profiles = []
    if draw(st.booleans()):
        profiles.append({"name": "weekend", "capacity": _capacity(draw),
                         "rules": draw(st.lists(azure_full_rules(), max_size=2)),
                         "recurrence": {"time_zone": draw(st.sampled_from(["UTC", "Pacific Standard Time",
                                                                           "W. Europe Standard Time"])),
                                        "days": draw(st.lists(st.sampled_from(["Monday", "Wednesday", "Saturday",
                                                                               "Sunday"]), min_size=1, max_size=2,
                                                              unique=True)),
                                        "hours": [draw(st.integers(0, 23))], "minutes": [draw(st.sampled_from([0, 30]))]}})
    if draw(st.booleans()):
        profiles.append({"name": "launch", "capacity": _capacity(draw),
                         "rules": draw(st.lists(azure_full_rules(), max_size=2)),
                         "fixed_date": {"start": "2026-01-14T06:00:00", "end": "2026-01-14T12:00:00",
                                        "time_zone": draw(st.sampled_from(["UTC", "Pacific Standard Time"]))}})
    now = AZURE_NOW + 60 * draw(st.integers(-24 * 60, 4 * 24 * 60))
    for pr in profiles:
        _accepted_by_azure(pr["rules"], pr["capacity"]["minimum"], pr["capacity"]["maximum"])
    rules = _accepted_by_azure(draw(st.lists(azure_full_rules(), min_size=1, max_size=3)), cap["minimum"],
                               cap["maximum"])
    policy = {"name": "web", "min_replicas": cap["minimum"], "max_replicas": cap["maximum"],
              "default_replicas": cap["default"], "rules": rules, "profiles": profiles}
    if policy["default_replicas"] == policy["min_replicas"]:
        del policy["default_replicas"]
    metrics = {m: azure_series(draw(st.lists(st.integers(0, 100), min_size=10, max_size=10)), now=now)
               for m in ("cpu", "queue")}
    req = {"semantics": "azure", "now": now, "current_replicas": draw(st.integers(1, 20)), "policy": policy,
           "observations": {"metrics": metrics}}
    if draw(st.booleans()):
        req["state"] = {"last_scale": {"time": now - 60 * draw(st.integers(1, 30)),
                                       "direction": draw(st.sampled_from(["Increase", "Decrease"])), "cause": "rule",
                                       "cooldown_seconds": draw(st.sampled_from([60, 300, 1200]))}}
    return req


@FAST
@given(azure_profile_requests())
def test_azure_round_trip_with_profiles_and_cooldowns_decides_the_same(request):
    _same_decision(request, "azure")


# ----------------------------------------------------------------------------- AWS steps, warm-ups, cooldowns

@st.composite
def aws_multi_step_rules(draw):
    """Step scaling with two or three contiguous steps above or below the alarm threshold
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-scaling-steps)."""
    out = draw(st.booleans())
    cuts = sorted(draw(st.lists(st.integers(1, 40), min_size=1, max_size=2, unique=True)))
    adj = draw(st.lists(st.integers(1, 4), min_size=len(cuts) + 1, max_size=len(cuts) + 1))
    if out:
        edges = [0] + cuts
        steps = [{"lower": edges[i], **({"upper": edges[i + 1]} if i + 1 < len(edges) else {}), "adjustment": a}
                 for i, a in enumerate(adj)]
    else:
        edges = [0] + [-c for c in cuts]
        steps = [{"upper": edges[i], **({"lower": edges[i + 1]} if i + 1 < len(edges) else {}), "adjustment": -a}
                 for i, a in enumerate(adj)]
    rule = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60 * draw(st.integers(1, 3)),
            "operator": draw(st.sampled_from(["GreaterThan", "GreaterThanOrEqual"] if out else
                                             ["LessThan", "LessThanOrEqual"])),
            "threshold": draw(st.integers(20, 80)),
            "adjustment_type": draw(st.sampled_from(["ChangeInCapacity", "PercentChangeInCapacity"])),
            "steps": steps}
    if rule["adjustment_type"] == "PercentChangeInCapacity" and draw(st.booleans()):
        rule["min_adjustment_magnitude"] = draw(st.integers(1, 3))
    rule["time_aggregation"] = draw(st.sampled_from(["Average", "Min", "Max"]))   # MetricAggregationType
    return rule


@st.composite
def aws_rich_requests(draw):
    lo, hi = draw(bounds)
    rules = draw(st.lists(aws_multi_step_rules() | aws_rules(), min_size=1, max_size=3))
    metrics = None
    if draw(st.booleans()):
        m = {"type": "resource", "name": "cpu",
             "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 90))}}
        if draw(st.booleans()):
            m["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 300]))
        if draw(st.booleans()):
            m["disable_scale_in"] = True
        metrics = [m]
    series = [[NOW - 60 * j, draw(st.integers(0, 100))] for j in range(20, -1, -1)]
    extra = {}
    if draw(st.booleans()):
        extra["initialization_period_seconds"] = draw(st.sampled_from([0, 120, 300]))
    state = None
    if draw(st.booleans()):
        state = {"last_scale": {"time": NOW - 60 * draw(st.integers(1, 10)), "cause": "rule",
                                "direction": draw(st.sampled_from(["Increase", "Decrease"])),
                                "cooldown_seconds": draw(st.sampled_from([60, 300]))}}
    return aws_request(draw(st.integers(lo, hi)), series, rules=rules, metrics=metrics, state=state,
                       min_replicas=lo, max_replicas=hi, name="web", **extra)


@FAST
@given(aws_rich_requests())
def test_aws_round_trip_of_steps_warmups_and_cooldowns_decides_the_same(request):
    _same_decision(request, "aws")


# ----------------------------------------------------------------------------- GCE's every signal

@st.composite
def gce_every_signal_requests(draw):
    """CPU (with its predictive method), load-balancing utilization, per-instance and per-group
    Cloud Monitoring metrics (gauge and delta), scale-in controls and schedules
    (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers)."""
    lo, hi = draw(bounds)
    n = draw(st.integers(1, 12))
    members = vms(n, now=GCE_NOW)
    metrics, obs = [], {}
    if draw(st.booleans()):
        metrics.append({"type": "resource", "name": "cpu",
                        "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 95))}})
        obs["cpu"] = {"members": per_vm(members, draw(st.integers(0, 100)) / 100)}
    if draw(st.booleans()):
        # GCE's loadBalancingUtilization has no metric name: import names it load_balancing
        metrics.append({"type": "load_balancing", "name": "load_balancing",
                        "target": {"type": "Utilization", "average_utilization": draw(st.integers(10, 95))}})
        obs["load_balancing"] = {"value": draw(st.integers(0, 100))}
    if draw(st.booleans()):
        t: dict = {"type": "AverageValue", "average_value": draw(st.integers(10, 2000))}
        rate = draw(st.sampled_from([None, "per_second", "per_minute"]))
        if rate:
            t["rate"] = rate
        metrics.append({"type": "pods", "name": "conn", "target": t})
        if rate:    # a counter: each VM's samples, whose growth is the rate
            obs["conn"] = {"member_series": {m["name"]: [[GCE_NOW - 60, 1000], [GCE_NOW, 1000 + draw(st.integers(0, 90000))]]
                                             for m in members}}
        else:
            obs["conn"] = {"members": per_vm(members, draw(st.integers(0, 3000)))}
    if draw(st.booleans()) or not metrics:
        metrics.append({"type": "external", "name": "queue",
                        "target": {"type": "AverageValue", "average_value": draw(st.integers(1, 100))}})
        obs["queue"] = {"values": [draw(st.integers(0, 2000))]}
    policy: dict = {"name": "web", "min_replicas": lo, "max_replicas": hi, "metrics": metrics,
                    "mode": draw(st.sampled_from(["ON", "ONLY_SCALE_OUT", "OFF"]))}
    if any(m["name"] == "cpu" for m in metrics) and draw(st.booleans()):
        policy["predictive"] = {"mode": "ForecastAndScale"}
    if draw(st.booleans()):
        policy["initialization_period_seconds"] = draw(st.sampled_from([0, 60, 300]))
    if draw(st.booleans()):
        mx = st.fixed_dictionaries({"fixed": st.integers(0, 5)}) | st.fixed_dictionaries({"percent": st.integers(0, 100)})
        policy["scale_in_control"] = {"max_scaled_in_replicas": draw(mx),
                                      "time_window_seconds": draw(st.sampled_from([60, 600, 1200]))}
    if draw(st.booleans()):
        policy["schedules"] = [{"name": "office", "schedule": "0 9 * * MON-FRI", "time_zone": "America/New_York",
                                "duration_seconds": draw(st.sampled_from([3600, 28800])),
                                "min_required_replicas": draw(st.integers(0, 15))}]
    history = draw(st.lists(st.tuples(st.integers(1, 1200), st.integers(1, 40)), max_size=5))
    state = {"recommendations": [{"time": GCE_NOW - dt, "replicas": r} for dt, r in sorted(history, reverse=True)]}
    return {"semantics": "gce", "now": GCE_NOW, "current_replicas": n, "policy": policy, "state": state,
            "observations": {"members": members, "metrics": obs}}


@FAST
@given(gce_every_signal_requests())
def test_gce_round_trip_of_every_signal_decides_the_same(request):
    _same_decision(request, "gce")
