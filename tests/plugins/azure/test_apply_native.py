"""``scalebridge apply CONFIG`` for an azure target, against the local ARM server
(HTTPS, throwaway CA) with the real azure-mgmt-monitor client: it creates the scale
set's autoscale setting, a second apply changes nothing, a changed policy updates the
same setting, ``--dry-run`` writes nothing."""
from __future__ import annotations

import pytest

from scalebridge.cli import main
from scalebridge_azure.fake_server import ArmServer

pytestmark = pytest.mark.slow   # the Azure SDK's import, a local HTTPS server and its token endpoint

SUB = "00000000-0000-0000-0000-000000000001"
PROVIDER = """\
providers:
  azure:
    subscription_id: "{sub}"
    arm_endpoint: "{url}"
    ca_bundle: "{ca}"
    credential: {{tenant_id: "{tenant}", client_id: scalebridge, client_secret: secret, authority: "{authority}"}}
"""
TARGET = """\
targets:
  - {{name: web-vmss, provider: azure, policy: web, ref: {{resource_group: shop, scale_set: web}}}}
"""
CONFIG = PROVIDER + """\
policies:
  web:
    name: web-autoscale
    min_replicas: 2
    max_replicas: 12
    rules:
      - {{metric: cpu, operator: GreaterThan, threshold: {threshold}, time_window_seconds: 600,
         action: {{direction: Increase, type: ChangeCount, value: 2, cooldown_seconds: 300}}}}
""" + TARGET


@pytest.fixture
def arm(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # the default state file is looked for here
    with ArmServer() as server:
        server.add_scale_set(SUB, "shop", "web")
        yield server


def _apply(arm, tmp_path, capsys, threshold, *flags):
    f = tmp_path / "run.yaml"
    f.write_text(CONFIG.format(sub=SUB, url=arm.url, ca=arm.ca_file, tenant=arm.tenant_id,
                               authority=arm.authority, threshold=threshold))
    code = main(["apply", str(f), *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_apply_native_creates_then_updates_one_setting(arm, tmp_path, capsys):
    assert _apply(arm, tmp_path, capsys, 70, "--dry-run") == \
        "web-vmss: autoscalesettings shop/web-autoscale: create\n"
    assert arm.autoscale_settings == {}
    _apply(arm, tmp_path, capsys, 70)
    [setting] = arm.autoscale_settings.values()
    props = setting["properties"]
    assert props["targetResourceUri"].lower().endswith("/virtualmachinescalesets/web")
    assert props["profiles"][0]["capacity"] == {"minimum": "2", "maximum": "12", "default": "2"}
    assert props["profiles"][0]["rules"][0]["metricTrigger"]["threshold"] == 70
    assert props["profiles"][0]["rules"][0]["metricTrigger"]["metricName"] == "Percentage CPU"   # the neutral cpu
    assert _apply(arm, tmp_path, capsys, 70) == "web-vmss: unchanged\n"
    out = _apply(arm, tmp_path, capsys, 80)
    assert out == ("web-vmss: autoscalesettings shop/web-autoscale: "
                   "profiles[0].rules[0].metricTrigger.threshold: 70.0 -> 80\n")
    [setting] = arm.autoscale_settings.values()
    assert setting["properties"]["profiles"][0]["rules"][0]["metricTrigger"]["threshold"] == 80


OVER_LIMITS = PROVIDER + """\
policies:
  web:
    name: web-autoscale
    min_replicas: 2
    max_replicas: 5
    rules: {rules}
    profiles: {profiles}
""" + TARGET


def _over_limits(arm, tmp_path) -> str:
    import json
    rules = [{"metric": "Percentage CPU", "operator": "GreaterThan", "threshold": 50 + k, "time_window_seconds": 600,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 6, "cooldown_seconds": 30}}
             for k in range(11)]
    profiles = [{"name": f"hour-{h}", "capacity": {"minimum": 2, "maximum": 5, "default": 3},
                 "recurrence": {"frequency": "Week", "days": ["Monday"], "hours": [h], "minutes": [0],
                                "time_zone": "UTC"}} for h in range(21)]
    f = tmp_path / "run.yaml"
    f.write_text(OVER_LIMITS.format(sub=SUB, url=arm.url, ca=arm.ca_file, tenant=arm.tenant_id, authority=arm.authority,
                                    rules=json.dumps(rules), profiles=json.dumps(profiles)))
    return str(f)


def test_a_policy_beyond_azures_limits_is_applied_within_them_and_says_what_it_left_out(arm, tmp_path, capsys):
    code = main(["apply", _over_limits(arm, tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    [setting] = arm.autoscale_settings.values()
    profiles = setting["properties"]["profiles"]
    assert len(profiles) == 20 and len(profiles[0]["rules"]) == 10
    actions = [r["scaleAction"] for r in profiles[0]["rules"]]
    assert {a["cooldown"] for a in actions} == {"PT1M"} and {a["value"] for a in actions} == {"3"}
    err = out + err   # apply says what it does, and what it lost, on standard output
    assert "rules: Azure takes at most 10 rules a profile" in err
    assert "profiles: Azure takes at most 20 profiles a setting" in err
    assert "Azure's cooldown is from 1 minute to 1 week; 30 s written as PT1M" in err


@pytest.mark.parametrize("change, message", [
    (lambda s: s["properties"]["profiles"].extend([s["properties"]["profiles"][0]] * 20), "20 profiles"),
    (lambda s: s["properties"]["profiles"][0]["rules"].extend([s["properties"]["profiles"][0]["rules"][0]] * 10),
     "10 rules"),
    (lambda s: s["properties"]["profiles"][0]["rules"][0]["scaleAction"].update(cooldown="PT30S"), "1 minute"),
    (lambda s: s["properties"]["profiles"][0]["rules"][0]["scaleAction"].update(value="4"), "InvalidActionValue"),
])
def test_the_arm_server_refuses_a_setting_beyond_the_limits_through_the_real_client(arm, tmp_path, capsys,
                                                                                    change, message):
    import copy

    from azure.core.exceptions import HttpResponseError
    from scalebridge_azure.client import ArmSession
    code = main(["apply", _over_limits(arm, tmp_path)])
    assert code == 0, capsys.readouterr().err
    [setting] = arm.autoscale_settings.values()
    body = copy.deepcopy({k: setting[k] for k in ("location", "properties")})
    change(body)
    session = ArmSession(subscription_id=SUB, arm_endpoint=arm.url, ca_bundle=arm.ca_file,
                         credential={"tenant_id": arm.tenant_id, "client_id": "scalebridge", "client_secret": "secret",
                                     "authority": arm.authority})
    with pytest.raises(HttpResponseError) as e:   # the SDK's own call, not the session's error mapping
        session.monitor(SUB).autoscale_settings.create_or_update("shop", "web-autoscale", body)
    assert e.value.status_code == 400 and message in str(e.value)
