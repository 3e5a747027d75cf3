"""The droplets translator keeps the translator contract (scalebridge.testing.check_translator),
says what a pool's autoscaler cannot hold, and reads back what the API answers."""
from __future__ import annotations

import json

import pytest

from scalebridge.translate import NativeError, import_native, render
from scalebridge.testing import check_translator

CPU = {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 65}}
WEB = {"name": "web", "min_replicas": 2, "max_replicas": 20, "metrics": [CPU],
       "behavior": {"scale_down": {"stabilization_window_seconds": 300}}}
#: a policy with one of each feature a pool's autoscaler cannot express, and where its loss line starts
EVERYTHING = {
    "name": "everything", "min_replicas": 1, "max_replicas": 12, "tolerance": 0.05,
    "metrics": [CPU, {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 30}},
                {"type": "resource", "name": "memory", "target": {"type": "Utilization", "average_utilization": 70}}],
    "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 85,
               "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}],
    "profiles": [{"name": "weekend", "capacity": {"minimum": 1, "maximum": 4, "default": 1},
                  "recurrence": {"days": ["Saturday"], "hours": [0], "minutes": [0]}}],
    "schedules": [{"name": "mornings", "schedule": "0 8 * * *", "duration_seconds": 3600, "min_required_replicas": 4}],
    "behavior": {"scale_up": {"stabilization_window_seconds": 60,
                              "policies": [{"type": "Pods", "value": 2, "period_seconds": 60}]},
                 "scale_down": {"stabilization_window_seconds": 600, "select_policy": "Min"}},
    "predictive": {"mode": "ForecastAndScale", "metric": "cpu", "capacity_per_replica": 100},
    "fallback": {"replicas": 3},
}
LOST_AT = ["metrics[1]", "metrics[2]", "rules[0]", "profiles[0]", "schedules[0]", "behavior.scale_up.policies[0]",
           "behavior.scale_up.stabilization_window_seconds", "behavior.scale_down.select_policy", "tolerance",
           "predictive", "fallback"]


def test_the_droplets_translator_keeps_the_contract():
    policies = {"web": WEB, "off": {**WEB, "mode": "OFF"}, "defaults only": {"max_replicas": 8},
                "everything": EVERYTHING}
    report = check_translator("droplets", policies, target={"pool": "web"})
    for lossless in ("web", "off", "defaults only"):
        assert f"{lossless}: 16 decisions the same under scalebridge" in report.passed
    assert "everything: fixed point and decisions (render loses 11 feature(s))" in report.skipped


def test_each_feature_a_pool_cannot_hold_is_one_lost_line_and_the_rest_is_written():
    native, losses = render(EVERYTHING, "droplets", {"pool": "web"})
    for where in LOST_AT:
        assert len([line for line in losses.lines if line.startswith(f"{where}: ")]) == 1, (where, losses.lines)
    assert len(losses.lines) == len(LOST_AT), losses.lines
    assert native == {"name": "web", "autoscaler": {"enabled": True, "min": 1, "max": 12, "target_cpu_percent": 65,
                                                    "cooldown_seconds": 600}}


@pytest.mark.parametrize("target, written", [(65.5, 66), (150, 100)])
def test_a_cpu_target_the_api_cannot_take_is_written_as_the_nearest_it_can_and_said(target, written):
    cpu = {**CPU, "target": {"type": "Utilization", "average_utilization": target}}
    native, losses = render({**WEB, "metrics": [cpu]}, "droplets", {"pool": "web"})
    assert native["autoscaler"]["target_cpu_percent"] == written
    assert losses.lines == [f"metrics[0].target.average_utilization: a pool's autoscaler takes a whole percent from "
                            f"1 to 100; {target:g} written as {written}"]


def test_import_reads_a_pool_as_the_api_answers_it(api, provider):
    api.add_pool("web", size=3, autoscaler={"enabled": False, "min": 2, "max": 9, "target_cpu_percent": 55,
                                            "cooldown_seconds": 120})
    answer = provider.client.pool("web")            # GET /v1/pools/web, droplets and all
    policy, losses = import_native(json.dumps(answer), "droplets")
    assert policy == {"semantics": "scalebridge", "name": "web", "mode": "OFF", "min_replicas": 2, "max_replicas": 9,
                      "metrics": [{"type": "resource", "name": "cpu",
                                   "target": {"type": "Utilization", "average_utilization": 55}}],
                      "behavior": {"scale_down": {"stabilization_window_seconds": 120}}}
    assert not losses.lines
    bare, _ = import_native(json.dumps(provider.client.autoscaler("web")), "droplets")   # GET …/autoscaler
    assert bare == {k: v for k, v in policy.items() if k != "name"}


@pytest.mark.parametrize("document, where", [
    ({"name": "web", "autoscaler": None}, "$.autoscaler"),
    ({"name": "web", "autoscaler": {"enabled": True, "min": 1, "max": 4, "target_cpu_percent": 60}},
     "$.autoscaler.cooldown_seconds"),
    ({"name": "web", "autoscaler": {"enabled": True, "min": 1, "max": 4, "target_cpu_percent": 0,
                                    "cooldown_seconds": 0}}, "$.autoscaler.target_cpu_percent"),
    ({"name": "web", "autoscaler": {"enabled": "yes", "min": 1, "max": 4, "target_cpu_percent": 60,
                                    "cooldown_seconds": 0}}, "$.autoscaler.enabled"),
    ({"name": "web", "autoscaler": {"enabled": True, "min": 5, "max": 4, "target_cpu_percent": 60,
                                    "cooldown_seconds": 0}}, "$.autoscaler.min"),
    ({"name": "web", "region": "ams3", "autoscaler": {}}, "$.region"),
    ({"pools": []}, "$"),
])
def test_what_the_api_would_refuse_is_a_native_error_naming_the_field(document, where):
    with pytest.raises(NativeError) as e:
        import_native(json.dumps(document), "droplets")
    assert e.value.where == where
