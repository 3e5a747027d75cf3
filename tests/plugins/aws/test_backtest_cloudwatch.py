"""``scalebridge backtest`` of an Auto Scaling group whose history is in CloudWatch
(moto's server): its metric through GetMetricData, the size it had through
GroupDesiredCapacity / GroupInServiceInstances — and the same group reading its
metric from Prometheus — give simulate's sizes tick for tick and its scores on the
same trace.

CloudWatch keeps one-minute datapoints for 15 days ("Metrics retention",
cloudwatch_concepts.html), so the trace's first six hours are moved to yesterday:
``simulate`` replays that CSV, the same counts per minute at the new times."""
from __future__ import annotations

import json
import time

import pytest

from scalebridge.simulator.traces import read_trace
from scalebridge_prometheus.fake_server import PrometheusServer
from tests.backtest.conftest import FLEET, HOURS, POLICY, TRACE, assert_same_as_simulate, run, simulate


def _shifted_trace(tmp_path):
    raw = read_trace(TRACE)
    n = HOURS * 60
    start = (time.time() // 86400 - 1) * 86400            # yesterday, 00:00 UTC
    times = raw.times[:n] - raw.times[0] + start
    path = tmp_path / "trace.csv"
    path.write_text("timestamp,value\n" + "".join(f"{t:.0f},{v:.0f}\n" for t, v in zip(times, raw.values[:n])))
    return path, times, raw.values[:n] * (1 / 60)


def test_backtest_through_cloudwatch_and_through_prometheus_is_simulate(tmp_path, world):
    trace, times, rps = _shifted_trace(tmp_path)
    world.put("Shop", "RequestsPerSecond", list(zip(times, rps.tolist())), {"AutoScalingGroupName": "web"})
    half = len(times) // 2
    sizes = [(t, 8.0 if i < half else 12.0) for i, t in enumerate(times)]
    world.put("AWS/AutoScaling", "GroupDesiredCapacity", sizes, {"AutoScalingGroupName": "web"})
    world.put("AWS/AutoScaling", "GroupInServiceInstances", sizes, {"AutoScalingGroupName": "web"})
    (tmp_path / "policy.yaml").write_text(POLICY)
    with PrometheusServer(retention="100y") as prom:
        prom.add_arrays({"__name__": "rps", "job": "web"}, times, rps)
        (tmp_path / "run.yaml").write_text(f"""\
metric_sources:
  prom: {{type: prometheus, url: '{prom.url}'}}
providers:
  aws: {{region: us-east-1, endpoint_url: '{world.url}'}}
targets:
  - name: web-cloudwatch
    provider: aws
    policy: policy.yaml
    ref: {{auto_scaling_group: web}}
    metrics:
      rps: {{source: {{namespace: Shop, metric_name: RequestsPerSecond,
                      dimensions: {{AutoScalingGroupName: '{{auto_scaling_group}}'}}}}}}
  - name: web-prometheus
    provider: aws
    policy: policy.yaml
    ref: {{auto_scaling_group: web}}
    metrics:
      rps: {{source: {{metric_source: prom, query: 'sum(rps{{job="web"}})'}}}}
""")
        code, out = run("backtest", str(tmp_path / "run.yaml"), "--start", f"{times[0]:.0f}", "--end",
                        f"{times[0] + HOURS * 3600:.0f}", *FLEET, "--output", "json", "--timeline",
                        str(tmp_path / "timeline"), "--jobs", "1")
    assert code == 0, out
    got = json.loads(out)
    sim, rows = simulate(tmp_path, tmp_path / "policy.yaml", trace=trace)
    for target in ("web-cloudwatch", "web-prometheus"):
        assert_same_as_simulate(got, tmp_path / "timeline" / f"{target}.csv", target, sim, rows)
        rec = got["targets"][target]["recorded"]       # what CloudWatch recorded of the group
        assert rec["instance_hours"] == pytest.approx(8 * 3 + 12 * 3)
        assert rec["scaling_actions"] == 1
    demand = got["targets"]["web-cloudwatch"]["demand"]
    assert demand["source"].startswith("CloudWatch Shop RequestsPerSecond Average (AutoScalingGroupName=web), 60 s")
    assert demand["recorded_size"].startswith("CloudWatch AWS/AutoScaling GroupDesiredCapacity")
    # the metric once and the two sizes for one target, the two sizes for the other
    assert world.proxy.count("GetMetricData") == 3 + 2
