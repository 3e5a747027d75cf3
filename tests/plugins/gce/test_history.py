"""History for ``scalebridge backtest`` from Cloud Monitoring ``ListTimeSeries``
(the local Monitoring server): a group-level metric whose points are a shared
trace back-tests to simulate's sizes and scores, and ``instance_group/size`` is
the size the group had. A per-instance source is refused: the instances of a
past week are gone."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.backtest.conftest import FLEET, HOURS, POLICY, assert_same_as_simulate, run, simulate
from tests.plugins.aws.test_backtest_cloudwatch import _shifted_trace
from tests.plugins.gce.conftest import ZONE

RPS = "custom.googleapis.com/web/requests_per_second"


def _config(tmp_path, options, source):
    (tmp_path / "policy.yaml").write_text(POLICY)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"providers": {"gce": options}, "targets": [
        {"name": "web-mig", "provider": "gce", "policy": "policy.yaml",
         "ref": {"zone": ZONE, "instance_group_manager": "web"}, "metrics": {"rps": {"source": source}}}]}))
    return path


def test_a_group_metric_in_cloud_monitoring_back_tests_to_simulate(tmp_path, options, monitoring):
    trace, times, rps = _shifted_trace(tmp_path)
    # a gauge point stands for the minute ending at its end time
    monitoring.add_series(RPS, resource_type="global", points=[(t + 60, v) for t, v in zip(times, rps.tolist())])
    half = len(times) // 2
    monitoring.add_series("compute.googleapis.com/instance_group/size", resource_type="instance_group",
                          resource_labels={"instance_group_name": "web"},
                          points=[(t + 60, 8.0 if i < half else 12.0) for i, t in enumerate(times)])
    path = _config(tmp_path, options, {"metric_type": RPS, "per_member": False, "resource_type": "global"})
    code, out = run("backtest", str(path), "--start", f"{times[0]:.0f}", "--end", f"{times[0] + HOURS * 3600:.0f}",
                    *FLEET, "--output", "json", "--timeline", str(tmp_path / "timeline"), "--jobs", "1")
    assert code == 0, out
    got = json.loads(out)
    sim, rows = simulate(tmp_path, tmp_path / "policy.yaml", trace=trace)
    assert_same_as_simulate(got, tmp_path / "timeline" / "web-mig.csv", "web-mig", sim, rows)
    assert got["targets"]["web-mig"]["recorded"]["instance_hours"] == pytest.approx(8 * 3 + 12 * 3)
    assert got["targets"]["web-mig"]["demand"]["source"] == f"Cloud Monitoring {RPS} ALIGN_MEAN, 60 s"


def test_a_per_instance_source_is_refused_naming_what_to_give(tmp_path, options, monitoring):
    _, times, _ = _shifted_trace(tmp_path)
    path = _config(tmp_path, options, {"metric_type": RPS, "per_member": True})
    code, out = run("backtest", str(path), "--start", f"{times[0]:.0f}", "--end", f"{times[0] + 3600:.0f}", *FLEET,
                    "--output", "json", "--jobs", "1")
    assert code == 1
    why = json.loads(out)["failed"]["web-mig"]
    assert why.startswith("metric 'rps': metrics.rps.source.per_member: a per-instance source keeps no history")
