"""For random policies each target expresses losslessly and random decision requests,
``decide`` under the provider's semantics gives the same response for the policy
and for ``import(render(policy))``; and ``render(import(render(p))) == render(p)``."""
from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings, strategies as st

from scalebridge import decide
from scalebridge.testing.requests import NOW, aws_request, azure_request, azure_series, cpu_request
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
    rules = draw(st.lists(azure_rules(), min_size=1, max_size=3))
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
