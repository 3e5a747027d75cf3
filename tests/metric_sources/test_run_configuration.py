"""``metric_sources:`` in a run configuration: each instance built with its
options (file paths read from the configuration's directory), a target's
``metrics.<name>.source`` naming one routed to it, every problem one
``file:line:column: key: message`` line (exit 2) — and a configuration without
metric sources builds and decides exactly as before."""
from __future__ import annotations

import pytest

from scalebridge.controller.configfile import ConfigError, load_config

from scalebridge.controller.build import build
from tests.backtest.conftest import run

TARGET = """\
  - name: web
    provider: sim
    policy: {{min_replicas: 1, max_replicas: 5, metrics: [{{type: external, name: rps,
             target: {{type: AverageValue, average_value: 2}}}}]}}
    ref: {{workload: flash_crowd, capacity: 10, startup: 60}}
    metrics:
      rps: {{source: {source}}}
"""


def _config(tmp_path, sources: str, source: str):
    path = tmp_path / "run.yaml"
    path.write_text(f"metric_sources:\n{sources}targets:\n" + TARGET.format(source=source))
    return path


def test_a_routed_metric_goes_to_its_instance(tmp_path):
    (tmp_path / "token").write_text("t")
    path = _config(tmp_path, "  prom: {type: prometheus, url: 'http://p:9090', bearer_token_file: token}\n",
                   "{metric_source: prom, query: 'sum(rps)'}")
    rt = build(load_config(path))
    try:
        [spec] = rt.targets
        sq, instance = spec.metric_sources["rps"]
        assert (sq.query, instance.name, instance.url) == ("sum(rps)", "prom", "http://p:9090")
        assert instance.bearer_token_file == str(tmp_path / "token")
    finally:
        rt.close()


@pytest.mark.parametrize("sources, source, line", [
    ("  prom: {type: prometheus}\n", "{metric_source: prom, query: q}",
     "run.yaml:2:9: metric_sources.prom.url: required: the Prometheus server's base URL"),
    ("  prom: {type: prometheus, url: 'http://p', timeout: 3}\n", "{metric_source: prom, query: q}",
     "run.yaml:2:54: metric_sources.prom.timeout: not an option of the prometheus metric source (did you mean "
     "'timeout_seconds'?); its options are: url, headers, bearer_token_file, ca_bundle, timeout_seconds"),
    ("  prom: {type: graphite, url: 'http://p'}\n", "{metric_source: prom, query: q}",
     "run.yaml:2:16: metric_sources.prom.type: unknown metric source type 'graphite'; installed metric sources "
     "are: prometheus"),
    ("  prom: {url: 'http://p'}\n", "{metric_source: prom, query: q}",
     "run.yaml:2:9: metric_sources.prom: 'prom' is not a metric source type, so it needs `type:`"),
    ("  prom: {type: prometheus, url: 'http://p'}\n", "{metric_source: promm, query: q}",
     "run.yaml:10:37: targets[0].metrics.rps.source.metric_source: no metric source 'promm' in `metric_sources:` "
     "(configured: prom)"),
    ("  prom: {type: prometheus, url: 'http://p'}\n", "{metric_source: prom, qurey: q}",
     "run.yaml:10:50: targets[0].metrics.rps.source.qurey: unknown key (did you mean 'query'?)"),
])
def test_each_problem_is_one_line_naming_file_line_and_key(tmp_path, sources, source, line):
    path = _config(tmp_path, sources, source)
    with pytest.raises(ConfigError) as e:
        build(load_config(path))
    [problem] = e.value.problems
    assert problem.startswith(str(tmp_path / line.split(":", 1)[0]) + ":" + line.split(":", 1)[1]), problem
    code, _ = run("validate", str(path))
    assert code == 2
