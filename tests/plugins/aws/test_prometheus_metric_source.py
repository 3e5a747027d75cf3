"""``scalebridge run`` with a Prometheus metric source on an Auto Scaling group
decides as with CloudWatch carrying the same numbers: two groups alike under the
``aws`` semantics' target tracking on CPU, one reading ``AWS/EC2 CPUUtilization``
per instance from CloudWatch (moto), one reading a Prometheus series per instance
(``member_label: instance``) whose samples are the same datapoints at their
periods' ends (the protocol's stamps), observe the same series and are set alike."""
from __future__ import annotations

import json

import yaml

from scalebridge.cli import main
from scalebridge_prometheus.fake_server import PrometheusServer
from tests.plugins.aws.conftest import REGION, minutes
from tests.plugins.aws.test_run_once import TT_POLICY

CPU = [40, 60, 70, 75, 80, 75, 78, 74, 76, 80, 82, 79, 75, 77, 80, 81, 79, 78, 80, 76]


def test_prometheus_and_cloudwatch_carrying_the_same_numbers_decide_alike(world, tmp_path, capsys):
    native = world.group("web-native", desired=3, max_size=10)
    mine = world.group("web-prom", desired=3, max_size=10)
    world.age(3600, "web-native")
    world.age(3600, "web-prom")
    with PrometheusServer() as prom:
        for i, (a, b) in enumerate(zip(native, mine)):
            values = [v + i for v in CPU]
            world.put_cpu(a, values)
            prom.add({"__name__": "cpu_utilization", "instance": b},
                     [(t + 30, v) for t, v in minutes(values)])     # CloudWatch's period ends
        targets = [{"name": "web-native", "provider": "aws", "policy": "p", "ref": {"auto_scaling_group": "web-native"}},
                   {"name": "web-prom", "provider": "aws", "policy": "p", "ref": {"auto_scaling_group": "web-prom"},
                    "metrics": {"cpu": {"source": {"metric_source": "prom", "query": "cpu_utilization",
                                                   "member_label": "instance"}}}}]
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump({
            "metric_sources": {"prom": {"type": "prometheus", "url": prom.url}},
            "providers": {"aws": {"region": REGION, "endpoint_url": world.url, "max_attempts": 1}},
            "policies": {"p": TT_POLICY}, "targets": targets}))
        capsys.readouterr()
        assert main(["observe", str(path), "--output", "json"]) == 0
        seen = {o["target"]: o["metrics"]["cpu"] for o in json.loads(capsys.readouterr().out)}
        audit = tmp_path / "audit.jsonl"
        assert main(["run", str(path), "--once", "--audit", str(audit), "--state", str(tmp_path / "s.db")]) == 0
    rename = dict(zip(mine, native))
    assert {rename[m]: pts for m, pts in seen["web-prom"]["member_series"].items()} == \
        {m: [[t, float(v)] for t, v in pts] for m, pts in seen["web-native"]["member_series"].items()}
    assert len(next(iter(seen["web-prom"]["member_series"].values()))) == 16   # 15 one-minute periods and the one
    recs = {r["target"]: r for r in map(json.loads, audit.read_text().splitlines())}
    keys = ("current_replicas", "recommended_replicas", "desired_replicas", "reason", "action")
    assert {k: recs["web-prom"][k] for k in keys} == {k: recs["web-native"][k] for k in keys}
    assert recs["web-prom"]["desired_replicas"] > 3 and world.desired("web-prom") == world.desired("web-native")
