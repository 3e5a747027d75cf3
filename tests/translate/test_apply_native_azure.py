"""``scalebridge apply CONFIG --native`` for an azure target, against the local ARM server
(HTTPS, throwaway CA) with the real azure-mgmt-monitor client: it creates the scale
set's autoscale setting, a second apply changes nothing, a changed policy updates the
same setting, ``--dry-run`` writes nothing."""
from __future__ import annotations

import pytest

from scalebridge.cli import main
from scalebridge.testing.arm_server import ArmServer

pytestmark = pytest.mark.slow   # the Azure SDK's import, a local HTTPS server and its token endpoint

SUB = "00000000-0000-0000-0000-000000000001"
CONFIG = """\
providers:
  azure:
    subscription_id: "{sub}"
    arm_endpoint: "{url}"
    ca_bundle: "{ca}"
    credential: {{tenant_id: "{tenant}", client_id: scalebridge, client_secret: secret, authority: "{authority}"}}
policies:
  web:
    name: web-autoscale
    min_replicas: 2
    max_replicas: 12
    rules:
      - {{metric: Percentage CPU, operator: GreaterThan, threshold: {threshold}, time_window_seconds: 600,
         action: {{direction: Increase, type: ChangeCount, value: 2, cooldown_seconds: 300}}}}
targets:
  - {{name: web-vmss, provider: azure, policy: web, ref: {{resource_group: shop, scale_set: web}}}}
"""


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
    code = main(["apply", str(f), "--native", *flags])
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
    assert _apply(arm, tmp_path, capsys, 70) == "web-vmss: unchanged\n"
    out = _apply(arm, tmp_path, capsys, 80)
    assert out == ("web-vmss: autoscalesettings shop/web-autoscale: "
                   "profiles[0].rules[0].metricTrigger.threshold: 70.0 -> 80\n")
    [setting] = arm.autoscale_settings.values()
    assert setting["properties"]["profiles"][0]["rules"][0]["metricTrigger"]["threshold"] == 80
