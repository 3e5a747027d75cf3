"""The ``prometheus`` metric source against the local Prometheus-API server: its
options, Prometheus's errors as the providers' kinds, the conformance checks, and
history read in requests Prometheus accepts (at most 11,000 points each,
``web/api/v1/api.go``)."""
from __future__ import annotations

import pytest

from scalebridge.metric_sources import SourceQuery
from scalebridge.providers import ErrorKind, ProviderError, RefError
from scalebridge.testing import check_metric_source
from scalebridge_prometheus.fake_server import PrometheusServer
from scalebridge_prometheus.source import PrometheusSource

T0 = 1_700_000_040.0   # a multiple of 60


@pytest.fixture
def prom():
    with PrometheusServer() as server:
        server.add({"__name__": "rps", "job": "web"}, [(T0 + 60 * i, 100.0 + i) for i in range(30)])
        for m, base in (("web-0", 0.25), ("web-1", 0.5)):
            server.add({"__name__": "cpu", "pod": m}, [(T0 + 60 * i, base + i / 100) for i in range(30)])
        yield server


def source(server, **kw) -> PrometheusSource:
    s = PrometheusSource(url=server.url, **kw)
    s.name = "prom"
    return s


def test_it_keeps_the_metric_source_contract(prom):
    series = {("rps", None): {None: [(T0 + 60 * i, 100.0 + i) for i in range(30)]},
              ("cpu", "pod"): {m: [(T0 + 60 * i, b + i / 100) for i in range(30)] for m, b in
                               (("web-0", 0.25), ("web-1", 0.5))}}
    faults = {ErrorKind.THROTTLED: (429, "too_many"), ErrorKind.TRANSIENT: (503, "unavailable"),
              ErrorKind.FORBIDDEN: (403, "forbidden"), ErrorKind.NOT_FOUND: (404, "not_found"),
              ErrorKind.INVALID: (422, "execution")}

    def provoke(kind):
        status, kind_name = faults[kind]
        prom.fail("/api/v1/query", status, error_type=kind_name, retry_after=3 if status == 429 else None)

    report = check_metric_source(source(prom), series, provoke=provoke)
    assert not report.skipped and len(report.passed) >= 15


def test_a_throttle_carries_retry_after_and_a_bad_promql_prometheus_message(prom):
    s = source(prom)
    prom.fail("/api/v1/query", 429, error_type="too_many", retry_after=7)
    with pytest.raises(ProviderError) as e:
        s.instant("rps", T0)
    assert e.value.kind is ErrorKind.THROTTLED and e.value.retry_after == 7
    with pytest.raises(ProviderError) as e:
        s.instant("sum(rps", T0)
    assert e.value.kind is ErrorKind.INVALID
    assert e.value.message.endswith('HTTP 400 bad_data: invalid parameter "query": 1:8: parse error: '
                                    "unexpected <EOF>, expected ')'")


def test_history_longer_than_11000_points_is_read_in_requests_prometheus_accepts(prom):
    s = source(prom)
    steps = 25_000
    got = s.read_history(SourceQuery("rps", "prom", "rps"), T0, T0 + steps * 0.05, 0.05)
    ranges = [p for path, p in prom.requests if path == "/api/v1/query_range"]
    assert len(ranges) == 3
    for p in ranges:
        assert (float(p["end"]) - float(p["start"])) / float(p["step"]) <= 11_000
    assert len(got) == 1 and len(got[0].points) == steps
    # one request of the whole range is what Prometheus refuses
    with pytest.raises(ProviderError, match="exceeded maximum resolution of 11,000 points per timeseries"):
        s.range("rps", T0, T0 + steps * 0.05, 0.05)


def test_headers_and_the_bearer_token_file_are_sent_at_every_request(prom, tmp_path):
    token = tmp_path / "token"
    token.write_text("first\n")
    s = source(prom, headers={"X-Scope-OrgID": "tenant-a"}, bearer_token_file=str(token))
    requests = []
    handler = prom._httpd.RequestHandlerClass
    old = handler._serve

    def record(self, params):
        requests.append((self.headers.get("Authorization"), self.headers.get("X-Scope-OrgID")))
        return old(self, params)

    handler._serve = record
    try:
        s.instant("rps", T0)
        token.write_text("rotated")
        s.instant("rps", T0)
    finally:
        handler._serve = old
    assert requests == [("Bearer first", "tenant-a"), ("Bearer rotated", "tenant-a")]


@pytest.mark.parametrize("options, key", [
    ({}, "url"), ({"url": "prometheus:9090"}, "url"), ({"url": "http://p", "timeout_seconds": 0}, "timeout_seconds"),
    ({"url": "http://p", "headers": ["x"]}, "headers"), ({"url": "http://p", "bearer_token_file": "/nope"},
                                                           "bearer_token_file"),
    ({"url": "http://p", "ca_bundle": "/nope"}, "ca_bundle")])
def test_a_bad_option_names_its_key(options, key):
    with pytest.raises(RefError) as e:
        PrometheusSource(**options)
    assert e.value.key == key


def test_the_retention_is_read_from_runtimeinfo(prom):
    assert source(prom).retention_seconds() == 15 * 86400
