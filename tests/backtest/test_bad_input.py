"""Bad input: an unreachable Prometheus, a query returning a matrix where a vector
is needed, a series per member that names no member, a period with no data, a
period longer than the source's retention → one line per target naming the metric
and why, exit 1, and the other targets still reported."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr

from scalebridge_prometheus.fake_server import PrometheusServer
from tests.backtest.conftest import FLEET, HOURS, SIM_TARGET, config, run, trace_rps

PER_MEMBER_POLICY = """\
name: conns
min_replicas: 1
max_replicas: 50
metrics:
  - {type: pods, name: conns, target: {type: AverageValue, average_value: 20}}
"""


def _target(name: str, query: str, source: str = "prom", policy: str = "policy.yaml", label: str = "") -> str:
    member = f", member_label: {label}" if label else ""
    metric = "conns" if policy != "policy.yaml" else "rps"
    return f"""\
  - name: {name}
    provider: sim
    policy: {policy}
    ref: {{workload: flash_crowd, capacity: 10, startup: 60}}
    metrics:
      {metric}: {{source: {{metric_source: {source}, query: '{query}'{member}}}}}
"""


def test_each_bad_target_is_one_line_naming_its_metric_and_the_others_are_reported(tmp_path):
    times, values = trace_rps()
    with PrometheusServer(retention="100y") as prom, PrometheusServer(retention="1h") as short:
        prom.add_arrays({"__name__": "rps", "job": "web"}, times, values)
        prom.add_arrays({"__name__": "conns", "instance": "10.0.0.1:9100"}, times, values)   # no `pod` label
        short.add_arrays({"__name__": "rps", "job": "web"}, times, values)
        (tmp_path / "conns.yaml").write_text(PER_MEMBER_POLICY)
        targets = (SIM_TARGET + _target("unreachable", "sum(rps)", "dead")
                   + _target("matrix", 'rps{job="web"}[5m]')
                   + _target("no-member", "conns", policy="conns.yaml", label="pod")
                   + _target("no-data", 'sum(rps{job="nothing"})')
                   + _target("retention", "sum(rps)", "short"))
        extra = (f"  dead: {{type: prometheus, url: 'http://127.0.0.1:9', timeout_seconds: 2}}\n"
                 f"  short: {{type: prometheus, url: '{short.url}'}}\n")
        path = config(tmp_path, prom.url, targets)
        path.write_text(path.read_text().replace("targets:\n", extra + "targets:\n", 1))
        err = io.StringIO()
        with redirect_stderr(err):
            code, out = run("backtest", str(path), "--start", f"{times[0]:.0f}", "--end",
                            f"{times[0] + HOURS * 3600:.0f}", *FLEET, "--semantics", "kubernetes", "--output",
                            "json", "--jobs", "1")
    assert code == 1
    got = json.loads(out)
    assert list(got["targets"]) == ["web"]          # the good target is still replayed and reported
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 5, lines
    by_target = {name: why for name, why in got["failed"].items()}
    assert set(by_target) == {"unreachable", "matrix", "no-member", "no-data", "retention"}
    for line, (name, why) in zip(lines, by_target.items()):
        assert line == f"scalebridge backtest: target {name!r}: {why}"
    assert by_target["unreachable"].startswith("metric 'rps': dead: http://127.0.0.1:9/api/v1/") and \
        ": cannot reach Prometheus: " in by_target["unreachable"]
    assert by_target["matrix"].startswith("metric 'rps': prom: ") and \
        'invalid expression type "range vector" for range query' in by_target["matrix"]
    assert by_target["no-member"].startswith("metric 'conns': prom: a series of 'conns' has no label 'pod'")
    assert by_target["no-data"].startswith("metric 'rps': no samples between 2024-05-10T00:00:00Z and "
                                           "2024-05-10T06:00:00Z")
    assert by_target["retention"] == ("metric 'rps': short: the period is 6h, longer than the source's retention "
                                      "of 1h: its samples before that are gone (shorten --start)")
