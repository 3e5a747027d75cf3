"""Shadow mode beside a GCE autoscaler, through the real Compute client against the
local server: its ``recommendedSize`` ("computed even when the autoscaling policy mode
is different from ON") and ``statusDetails`` are read and compared, the group never
resized (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers)."""
from __future__ import annotations

import json

import yaml

from scalebridge.controller.loop import build_controller
from tests.plugins.gce.conftest import ZONE, cpu_series
from tests.plugins.gce.test_run_once import CPU_POLICY


def test_the_autoscalers_recommended_size_is_read_and_compared(compute, monitoring, options, tmp_path, now):
    # 4 VMs at 90 % against 60 %: the gce semantics recommend ceil(4 × 90 / 60) = 6
    mig = compute.add_mig("web", zone=ZONE, size=4, autoscaler_mode="ON", started=[now - 3600] * 4)
    cpu_series(monitoring, mig, [0.9] * 4, now)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"gce": options}, "policies": {"p": CPU_POLICY},
        "targets": [{"name": "web", "provider": "gce", "policy": "p", "shadow": True,
                     "ref": {"zone": ZONE, "instance_group_manager": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), state=str(tmp_path / "s.db"), audit=str(audit))
    try:
        assert c.run(once=True) == 0
        # its autoscaler, capped by its maxNumReplicas, recommends 5
        mig.recommended_size = 5
        mig.status_details = [{"type": "CAPPED_AT_MAX_NUM_REPLICAS",
                               "message": "The autoscaler is capped at maxNumReplicas 5."}]
        assert c.run(once=True) == 0
        mig.recommended_size = 6
        mig.status_details = []
        assert c.run(once=True) == 0
    finally:
        c.close()
    first, second, third = [json.loads(x) for x in audit.read_text().splitlines()]
    # a group its autoscaler manages (mode ON) is compared with it, not refused
    assert first["action"] == "shadow" and first["desired_replicas"] == 6
    s = second["shadow"]
    assert s["native_autoscaler"] == f"the GCE autoscaler projects/test-project/zones/{ZONE}/autoscalers/web-as (mode ON)"
    assert (s["scalebridge_replicas"], s["native_replicas"], s["difference"]) == (6, 5, 1)
    assert s["agree"] is False and s["native_stage"] == "bounds"
    assert s["stage"] == "bounds" and s["detail"].endswith("; native 5")
    assert "CAPPED_AT_MAX_NUM_REPLICAS" in s["native_reason"]
    assert third["shadow"]["agree"] is True and third["shadow"]["native_replicas"] == 6
    # never written
    assert mig.target_size == 4
    assert compute.count("/resize") == 0 and compute.count("deleteInstances") == 0
    # (listManagedInstances is a POST that reads)
    assert not [c_ for c_ in compute.calls if c_[0] != "GET" and not c_[1].endswith("/listManagedInstances")]


def test_a_shadow_group_is_never_resized_when_reading_its_autoscaler_fails(compute, monitoring, options, tmp_path,
                                                                           now):
    mig = compute.add_mig("web", zone=ZONE, size=4, autoscaler_mode="ON", started=[now - 3600] * 4)
    cpu_series(monitoring, mig, [0.9] * 4, now)
    compute.fail(503, path="/autoscalers/", times=100)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "providers": {"gce": options}, "policies": {"p": CPU_POLICY},
        "targets": [{"name": "web", "provider": "gce", "policy": "p", "shadow": True,
                     "ref": {"zone": ZONE, "instance_group_manager": "web"}}]}))
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(config), state=str(tmp_path / "s.db"), audit=str(audit))
    try:
        for _ in range(2):
            assert c.run(once=True) == 0
    finally:
        c.close()
    records = [json.loads(x) for x in audit.read_text().splitlines()]
    assert all(r["action"] == "shadow" and r["desired_replicas"] == 6 for r in records)
    assert all("native_read_error" in r["shadow"] for r in records)
    assert mig.target_size == 4
    assert not [c_ for c_ in compute.calls if c_[0] != "GET" and not c_[1].endswith("/listManagedInstances")]
