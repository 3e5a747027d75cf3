"""Shadow mode beside an Azure autoscale setting, with the real azure-mgmt-monitor and
azure-mgmt-compute against the local ARM server: the autoscale engine's scale actions
are read from the Activity Log (``Microsoft.Insights/AutoscaleSettings/Scaleup/Action``,
old and new instance counts as strings,
https://learn.microsoft.com/azure/azure-monitor/essentials/activity-log-schema) and
compared; the scale set is never written."""
from __future__ import annotations

import json
import time

import yaml

from scalebridge.controller.loop import build_controller

from .conftest import SUB
from .test_run_once import CPU_RULES


def test_the_autoscale_engines_activity_log_events_are_read_and_compared(arm, options, tmp_path):
    arm.update_polls = 0
    ss = arm.add_scale_set(SUB, "shop", "web", capacity=2)
    vmss = arm.scale_set_id(SUB, "shop", "web")
    now = time.time()
    for vm in ("web_0", "web_1"):
        arm.put_metric(vmss, "Percentage CPU", [(now - 60 * k, 90.0) for k in range(1, 11)], vm=vm)
    setting = arm.add_autoscale_setting(SUB, "shop", "web-autoscale", vmss)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"azure": options}, "policies": {"p": CPU_RULES},
        "targets": [{"name": "web", "provider": "azure", "policy": "p", "shadow": True,
                     "ref": {"resource_group": "shop", "scale_set": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), state=str(tmp_path / "s.db"), audit=str(audit))
    try:
        # 90 % above the 70 % rule: scalebridge's azure semantics scale out by 1 → 3
        assert c.run(once=True) == 0
        # the engine, with a scale-out rule of its own of +2, went from 2 to 4
        ss.capacity = 4
        arm.add_autoscale_event(setting["id"], 2, 4)
        assert c.run(once=True) == 0
    finally:
        c.close()
    first, second = [json.loads(x) for x in audit.read_text().splitlines()]
    # a scale set an enabled setting targets is compared with it, not refused
    assert first["action"] == "shadow" and first["desired_replicas"] == 3
    s = second["shadow"]
    assert s["native_autoscaler"] == "Azure autoscale setting 'web-autoscale' (resource group shop)"
    assert (s["current_replicas"], s["scalebridge_replicas"]) == (2, 3)
    assert (s["native_current"], s["native_replicas"], s["difference"]) == (2, 4, -1)
    assert s["agree"] is False and s["stage"] and s["detail"].endswith("; native 4")
    [act] = s["native_actions"]
    assert (act["from"], act["to"], act["status"]) == (2, 4, "Succeeded")
    assert "from 2 instances count to 4 instances count" in act["reason"]
    # the Activity Log was read with the documented filter: a start time and the setting
    [(_, _, q)] = [x for x in arm.calls if "eventtypes/management/values" in x[1]][-1:]
    assert q["$filter"].startswith("eventTimestamp ge '") and f"resourceUri eq '{setting['id']}'" in q["$filter"]
    # never written
    assert not [(m, p) for m, p, _ in arm.calls if m != "GET" and "/oauth2/" not in p]


def test_a_filter_without_a_start_time_is_refused_as_the_service_refuses_it(arm, options):
    from azure.core.exceptions import HttpResponseError
    from scalebridge_azure import AzureProvider
    p = AzureProvider(**options)
    try:
        monitor = p.session.monitor(SUB)
        try:
            list(monitor.activity_logs.list(filter="resourceGroupName eq 'shop'"))
        except HttpResponseError as e:
            assert e.status_code == 400
        else:
            raise AssertionError("accepted a filter without eventTimestamp ge")
    finally:
        p.close()


def test_a_shadow_scale_set_is_never_written_when_the_activity_log_fails(arm, options, tmp_path):
    arm.update_polls = 0
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    vmss = arm.scale_set_id(SUB, "shop", "web")
    now = time.time()
    for vm in ("web_0", "web_1"):
        arm.put_metric(vmss, "Percentage CPU", [(now - 60 * k, 90.0) for k in range(1, 11)], vm=vm)
    arm.add_autoscale_setting(SUB, "shop", "web-autoscale", vmss)
    arm.fail(500, match=".*eventtypes.*", times=100)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"azure": options}, "policies": {"p": CPU_RULES},
        "targets": [{"name": "web", "provider": "azure", "policy": "p", "shadow": True,
                     "ref": {"resource_group": "shop", "scale_set": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), state=str(tmp_path / "s.db"), audit=str(audit))
    try:
        for _ in range(2):
            assert c.run(once=True) == 0
    finally:
        c.close()
    records = [json.loads(x) for x in audit.read_text().splitlines()]
    assert all(r["action"] == "shadow" and r["desired_replicas"] == 3 for r in records)
    assert all("native_read_error" in r["shadow"] for r in records)
    assert not [(m, p) for m, p, _ in arm.calls if m != "GET" and "/oauth2/" not in p]
