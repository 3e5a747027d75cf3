"""``scalebridge observe`` on a MIG: what the gce provider saw, written nowhere."""
from __future__ import annotations

import json

import yaml

from scalebridge.cli import main
from tests.plugins.gce.conftest import ZONE, cpu_series

POLICY = {"semantics": "gce", "min_replicas": 1, "max_replicas": 20}


def _config(tmp_path, options, **target):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(yaml.safe_dump({"providers": {"gce": options}, "policies": {"p": POLICY},
                                   "targets": [{"name": "web", "provider": "gce", "policy": "p",
                                                "ref": {"zone": ZONE, "instance_group_manager": "web"}, **target}]}))
    return str(cfg)


def test_observe_prints_the_group_its_members_and_cpu_samples(compute, monitoring, options, tmp_path, now, capsys):
    mig = compute.add_mig("web", zone=ZONE, size=2, machine_type="e2-standard-4")
    cpu_series(monitoring, mig, [0.5, 0.25], now)
    rc = main(["observe", _config(tmp_path, options), "--output", "json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    [seen] = json.loads(out)
    assert seen["current_replicas"] == 2 and seen["in_flight"] is None and seen["managed_by"] is None
    assert seen["metrics"]["cpu"]["members"] == {mig.vms[0].name: 2.0, mig.vms[1].name: 1.0}   # of 4 vCPUs each
    assert compute.count("resize") == 0


def test_observe_names_the_autoscaler_of_a_group_it_would_refuse(compute, monitoring, options, tmp_path, now, capsys):
    compute.add_mig("web", zone=ZONE, size=2, autoscaler_mode="ON")
    rc = main(["observe", _config(tmp_path, options)])
    out = capsys.readouterr().out
    assert rc == 1 and "autoscalers/web-as (mode ON)" in out
