"""The local Prometheus-API server answers as Debian's Prometheus 2.42 does, on the
same history (backfilled with promtool from the same OpenMetrics text): instant and
range queries over selectors, rate/increase/irate (``extrapolatedRate``),
*_over_time, aggregations and arithmetic, and the errors it is strict about — a
bad PromQL, a range vector in a range query, more than 11,000 points."""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from scalebridge_prometheus.fake_server import PrometheusServer, openmetrics
from tests.plugins.prometheus.real import real_prometheus

T0 = 1_700_000_000
SERIES = [({"__name__": "rps", "job": "web"}, [(T0 + 60 * i, 10.0 * i + 0.1) for i in range(100)]),
          ({"__name__": "reqs_total", "job": "web", "instance": "a:9100"},
           [(T0 + 15 * i, 7.0 * i + (3 if i % 7 == 0 else 0)) for i in range(400)]),
          ({"__name__": "reqs_total", "job": "web", "instance": "b:9100"},
           [(T0 + 15 * i + 5, 11.0 * (i % 50)) for i in range(400)])]   # a counter that resets

INSTANT = ["rps", 'rps{job="web"}', "rps[5m]", "rate(reqs_total[5m])", "rate(reqs_total[1m])",
           "increase(reqs_total[2m])", "irate(reqs_total[2m])", "avg_over_time(rps[3m])",
           "max_over_time(rps[10m])", "sum by (job) (rate(reqs_total[5m]))", "sum(rate(reqs_total[5m])) / 2",
           "avg without (instance) (reqs_total)", "count(reqs_total)", "100 * rps / 3", "sum(rps) + sum(reqs_total)",
           "rate(", "foo(rps)", '{job=~".*"}', "rps[5m] + 1"]
TIMES = [T0 + 600, T0 + 1000.5, T0 + 3007, T0 + 5990, T0 + 9000]
RANGES = [("rps", T0, T0 + 1200, 15), ("rate(reqs_total[1m])", T0, T0 + 600, 30), ("rps[5m]", T0, T0 + 60, 15),
          ("rps", 0, 20_000, 1), ("rps", 0, 11_000, 1)]


def _ask(base: str, path: str, **params) -> dict:
    data = urllib.parse.urlencode(params).encode()
    try:
        with urllib.request.urlopen(base + path, data, timeout=10) as r:
            body = r.read()
    except urllib.error.HTTPError as e:
        body = e.read()
    out = json.loads(body)
    out.get("data", {}).pop("warnings", None)
    return out


def test_the_same_answers_as_prometheus_2_42(tmp_path):
    text = openmetrics(SERIES)
    with real_prometheus(tmp_path, text) as real, PrometheusServer(retention="100y") as local:
        local.load_openmetrics(text)
        for q in INSTANT:
            for t in TIMES:
                want, got = _ask(real, "/api/v1/query", query=q, time=t), _ask(local.url, "/api/v1/query", query=q,
                                                                              time=t)
                if want["status"] == "error":
                    assert got["status"] == "error" and got["errorType"] == want["errorType"], (q, t, got)
                    if q in ("foo(rps)", '{job=~".*"}'):
                        assert got["error"] == want["error"]
                else:
                    assert got == want, (q, t)
        for q, start, end, step in RANGES:
            want = _ask(real, "/api/v1/query_range", query=q, start=start, end=end, step=step)
            got = _ask(local.url, "/api/v1/query_range", query=q, start=start, end=end, step=step)
            assert got == want, (q, start, end, step)
