"""Every rendered configuration is one its provider's own schema accepts: HPAs validate
against the Kubernetes schemas (kubernetes-validate), GCE autoscalers parse as
``compute_v1.Autoscaler`` with no unknown field, Azure settings deserialize into
azure-mgmt-monitor's ``AutoscaleSettingResource`` and pass its validation, AWS requests
pass botocore's parameter validation for their operation (no network). With a complete
``--target`` (each cloud's ``COMPLETE``: the ref, what else the configuration needs, and
the metric sources of the policy's own metrics) no placeholder is left — but an AWS
alarm's policy ARN, whose id AWS makes when it creates the policy — and every rule's
metric is the provider's own."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from scalebridge.translate import render

#: a subscription ID is a GUID (--target refuses anything else)
SUBSCRIPTION = "6f0a3c3e-1c2b-4c8e-9d1f-2a3b4c5d6e7f"
# what a native configuration needs that a policy does not hold, for each cloud
COMPLETE = {
    "kubernetes": {"kind": "Deployment", "namespace": "shop", "name": "web",
                   "metrics": {"rps": {"source": {"described_object": {"api_version": "networking.k8s.io/v1",
                                                                       "kind": "Ingress", "name": "main"}}}}},
    "gce": {"project": "shop-prod", "zone": "europe-west1-b", "instance_group_manager": "web",
            "metrics": {"conn": {"source": {"metric_type": "custom.googleapis.com/conn"}},
                        "queue": {"source": {"metric_type": "pubsub.googleapis.com/subscription/num_undelivered_messages",
                                             "filter": 'resource.labels.subscription_id = "jobs"'}}}},
    "azure": {"subscription_id": SUBSCRIPTION, "resource_group": "shop", "scale_set": "web", "location": "westeurope"},
    "aws": {"auto_scaling_group": "web", "region": "eu-west-1", "account": "123456789012",
            "metrics": {"conn": {"source": {"namespace": "Shop", "metric_name": "Connections",
                                            "dimensions": {"AutoScalingGroupName": "{auto_scaling_group}"}}},
                        "queue": {"source": {"namespace": "AWS/SQS", "metric_name": "ApproximateNumberOfMessagesVisible",
                                             "dimensions": {"QueueName": "jobs"}}},
                        "rps": {"source": {"namespace": "Shop", "metric_name": "RequestsPerSecond"}}}},
}


def _complete(provider: str, policy: dict):
    """``render`` with ``COMPLETE``: no placeholder left (an AWS alarm's policy id aside)."""
    native, losses = render(policy, provider, COMPLETE[provider])
    left = [n for n in losses.placeholders if not (provider == "aws" and "'PLACEHOLDER-policy-id'" in n)]
    assert left == []
    return native


VALID = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_metric = st.one_of(
    st.builds(lambda u: {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": u}},
              st.integers(1, 100)),
    st.builds(lambda v: {"type": "pods", "name": "conn", "target": {"type": "AverageValue", "average_value": v}},
              st.integers(1, 10_000)),
    st.builds(lambda v: {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": v}},
              st.sampled_from([10, "500m", 2.5])),
    st.builds(lambda v: {"type": "object", "name": "rps", "target": {"type": "Value", "value": v}}, st.integers(1, 99)),
    st.builds(lambda c: {"type": "container_resource", "name": "memory", "container": c,
                         "target": {"type": "AverageValue", "average_value": "512Mi"}}, st.sampled_from(["app", "side"])),
    st.just({"type": "load_balancing", "name": "lb", "target": {"type": "Utilization", "average_utilization": 80}}),
)
_sp = st.fixed_dictionaries({"type": st.sampled_from(["Pods", "Percent"]), "value": st.integers(1, 100),
                             "period_seconds": st.integers(1, 1800)})
_side = st.fixed_dictionaries({}, optional={"stabilization_window_seconds": st.integers(0, 3600),
                                            "select_policy": st.sampled_from(["Max", "Min", "Disabled"]),
                                            "policies": st.lists(_sp, min_size=1, max_size=2),
                                            "tolerance": st.sampled_from([0.05, 0.2])})
_simple = st.builds(
    lambda op, th, d, t, v, cd: {"metric": "cpu", "operator": op, "threshold": th,
                                 "action": {"direction": d, "type": t, "value": v, "cooldown_seconds": cd}},
    st.sampled_from(["GreaterThan", "LessThan", "GreaterThanOrEqual", "LessThanOrEqual"]), st.integers(1, 99),
    st.sampled_from(["Increase", "Decrease"]), st.sampled_from(["ChangeCount", "PercentChangeCount", "ExactCount"]),
    st.integers(1, 5), st.sampled_from([60, 300]))
_step = st.builds(
    lambda out, th, agg: {"metric": "cpu", "operator": "GreaterThan" if out else "LessThan", "threshold": th,
                          "adjustment_type": "ChangeInCapacity", "time_aggregation": agg,
                          "steps": ([{"lower": 0, "upper": 10, "adjustment": 1}, {"lower": 10, "adjustment": 3}]
                                    if out else [{"upper": 0, "adjustment": -1}])},
    st.booleans(), st.integers(1, 99), st.sampled_from(["Average", "Min", "Max"]))


@st.composite
def policies(draw):
    lo = draw(st.integers(0, 5))
    p: dict = {"name": "web", "min_replicas": lo, "max_replicas": draw(st.integers(max(lo, 1), 50)),
               "metrics": draw(st.lists(_metric, max_size=3)), "rules": draw(st.lists(_simple | _step, max_size=3))}
    if draw(st.booleans()):
        p["behavior"] = draw(st.fixed_dictionaries({}, optional={"scale_up": _side, "scale_down": _side}))
    if draw(st.booleans()):
        p["scale_in_control"] = {"max_scaled_in_replicas": draw(st.sampled_from([{"fixed": 2}, {"percent": 25}])),
                                 "time_window_seconds": 600}
    if draw(st.booleans()):
        p["schedules"] = [{"name": "office", "schedule": "0 8 * * MON-FRI", "time_zone": "Europe/Paris",
                           "duration_seconds": 36000, "min_required_replicas": 4}]
    if draw(st.booleans()):
        p["profiles"] = [{"name": "weekend", "capacity": {"minimum": 1, "maximum": 5, "default": 2},
                          "recurrence": {"time_zone": "Europe/Paris", "days": ["Saturday", "Sunday"],
                                         "hours": [0], "minutes": [0]}},
                         {"name": "launch", "capacity": {"minimum": 5, "maximum": 20, "default": 5},
                          "fixed_date": {"start": "2026-03-01T08:00:00", "end": "2026-03-02T08:00:00",
                                         "time_zone": "Pacific Standard Time"}}]
    if draw(st.booleans()):
        p["predictive"] = {"mode": draw(st.sampled_from(["ForecastOnly", "ForecastAndScale"])),
                           "scheduling_buffer_seconds": 300, "look_ahead_seconds": 600}
    p["mode"] = draw(st.sampled_from(["ON", "ONLY_SCALE_OUT", "OFF"]))
    if draw(st.booleans()):
        p["initialization_period_seconds"] = draw(st.integers(0, 600))
    return p


@VALID
@given(policies())
def test_every_rendered_hpa_validates_against_the_kubernetes_schema(policy):
    import kubernetes_validate
    hpa = _complete("kubernetes", policy)
    kubernetes_validate.validate(hpa, "1.37.0", strict=True)


@pytest.fixture(scope="session")
def compute_v1():
    from google.cloud import compute_v1   # ~2 s: once per session
    return compute_v1


@VALID
@given(policy=policies())
def test_every_rendered_gce_autoscaler_parses_as_compute_v1_autoscaler(compute_v1, policy):
    native = _complete("gce", policy)
    parsed = compute_v1.Autoscaler.from_json(json.dumps(native), ignore_unknown_fields=False)
    back = json.loads(compute_v1.Autoscaler.to_json(parsed))
    assert back["autoscalingPolicy"]["maxNumReplicas"] == policy["max_replicas"]


@VALID
@given(policies())
def test_every_rendered_azure_setting_deserializes_and_validates(policy):
    from azure.mgmt.monitor.models import AutoscaleSettingResource
    native = _complete("azure", policy)
    for prof in native["properties"]["profiles"]:     # every rule on a scale set metric (cpu: Percentage CPU)
        assert {r["metricTrigger"]["metricName"] for r in prof["rules"]} <= {"Percentage CPU"}
    obj = AutoscaleSettingResource.deserialize(native)
    assert _azure_violations(obj) == []
    again = obj.serialize()
    for prof in again["properties"]["profiles"]:   # the SDK writes a date-time in full, with its UTC marker
        for k in ("start", "end"):
            if "fixedDate" in prof:
                prof["fixedDate"][k] = prof["fixedDate"][k].removesuffix(".000Z")
    # nothing the model does not know: every field comes back as written
    assert again["properties"] == native["properties"]


def _azure_violations(obj, where: str = "$") -> list[str]:
    """The model's own declared constraints (``_validation``: required, min/max items,
    min/max values), applied to it and every model it holds; azure-mgmt-monitor 7's
    serializer declares them without checking them."""
    from azure.mgmt.monitor._utils.serialization import Model
    out = []
    for attr, rules in type(obj)._validation.items():
        v = getattr(obj, attr, None)
        if rules.get("required") and v is None:
            out.append(f"{where}.{attr}: required")
        if isinstance(v, list):
            if "max_items" in rules and len(v) > rules["max_items"]:
                out.append(f"{where}.{attr}: more than {rules['max_items']} items")
            if "min_items" in rules and len(v) < rules["min_items"]:
                out.append(f"{where}.{attr}: fewer than {rules['min_items']} items")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if "minimum" in rules and v < rules["minimum"]:
                out.append(f"{where}.{attr}: below {rules['minimum']}")
            if "maximum" in rules and v > rules["maximum"]:
                out.append(f"{where}.{attr}: above {rules['maximum']}")
    for attr in type(obj)._attribute_map:
        v = getattr(obj, attr, None)
        for k, item in enumerate(v if isinstance(v, list) else [v]):
            if isinstance(item, Model):
                out += _azure_violations(item, f"{where}.{attr}[{k}]" if isinstance(v, list) else f"{where}.{attr}")
    return out


@pytest.fixture(scope="module")
def aws_models():
    import botocore.session
    s = botocore.session.get_session()
    return {"autoscaling": s.get_service_model("autoscaling"), "cloudwatch": s.get_service_model("cloudwatch")}


@VALID
@given(policy=policies())
def test_every_rendered_aws_request_passes_botocore_validation(aws_models, policy):
    from botocore.validate import ParamValidator
    native = _complete("aws", policy)
    for alarm in native["PutMetricAlarm"]:            # every alarm on an AWS metric of the group (cpu: CPUUtilization)
        assert (alarm["Namespace"], alarm["MetricName"], alarm["Dimensions"]) == \
            ("AWS/EC2", "CPUUtilization", [{"Name": "AutoScalingGroupName", "Value": "web"}])
    for op, bodies in native.items():
        model = aws_models["cloudwatch" if op == "PutMetricAlarm" else "autoscaling"].operation_model(op)
        for body in bodies:
            report = ParamValidator().validate(body, model.input_shape)
            assert not report.has_errors(), report.generate_report()
