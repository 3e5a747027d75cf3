"""The droplets provider keeps the provider contract (scalebridge.testing.check_provider)
against the local droplets API, and maps each of the API's answers onto the contract."""
from __future__ import annotations

import time

import pytest

from scalebridge.providers import ErrorKind, MetricQuery, ProviderError, RefError, TargetRefused
from scalebridge.testing import check_provider
from scalebridge_droplets import DropletsProvider

TOKEN = "test-token-5f1c2a9e"
#: how the API fails for each kind the suite provokes (client.py's table)
STATUS = {ErrorKind.THROTTLED: 429, ErrorKind.TRANSIENT: 503, ErrorKind.CONFLICT: 409, ErrorKind.NOT_FOUND: 404,
          ErrorKind.FORBIDDEN: 403}
#: the request each call of the suite makes
REQUEST = {"observe": r"^GET /v1/pools/web$", "read_metrics": r"^GET /v1/pools/web/metrics/cpu$",
           "set_size": r"^PUT /v1/pools/web/size$"}
CPU = MetricQuery("cpu", "resource", {"type": "resource", "name": "cpu"}, 60.0, 60.0,
                  frozenset({"members", "member_series", "series"}))


def test_the_droplets_provider_keeps_the_provider_contract(api, provider):
    api.resize_seconds = 0.05          # a resize is in flight for a moment, as a cloud's is
    api.add_pool("web", size=2, max_size=5)
    api.cpu("web", 50.0)

    def provoke(target, call, kind):
        api.fail(STATUS[kind], match=REQUEST[call], retry_after=3 if kind is ErrorKind.THROTTLED else None)
        return True

    report = check_provider(provider, {"pool": "web"}, provoke=provoke, settle_wait=0.02,
                            bad_refs=[{"pool": "Web Pool"}, {"pool": "web", "zone": "a"}])
    assert {(call, kind.value) for call in REQUEST for kind in STATUS} <= set(report.provoked)
    assert "read_metrics['cpu'] is a protocol observation" in report.passed
    assert api.pool("web").size == 2 and api.count("PUT", "/size$") >= 3


def test_options_are_checked_before_any_call_and_the_token_is_never_shown():
    with pytest.raises(RefError) as e:
        DropletsProvider(endpoint="https://api.droplets.example", token=TOKEN, region="ams3")
    assert e.value.key == "region"
    with pytest.raises(RefError) as e:
        DropletsProvider(endpoint="https://api.droplets.example")
    assert e.value.key == "token"
    with pytest.raises(RefError) as e:          # a bearer token never crosses a network in clear
        DropletsProvider(endpoint="http://api.droplets.example", token=TOKEN)
    assert e.value.key == "endpoint" and "https://" in e.value.message and TOKEN not in str(e.value)
    with pytest.raises(RefError) as e:
        DropletsProvider(endpoint="https://api.droplets.example", token=12345678901)
    assert e.value.key == "token" and "12345678901" not in str(e.value)


def test_a_resize_is_in_flight_until_the_pool_settles(api, provider):
    api.resize_seconds = 3600          # settled on demand below
    api.add_pool("web", size=2)
    target = provider.target({"pool": "web"})
    change = target.set_size(4)
    assert (change.size, change.in_flight) == (4, True)
    obs = target.observe(time.time())
    assert obs.current_replicas == 4 and obs.in_flight == "pool web is resizing to 4"
    booting = [m for m in obs.members if m.phase == "Pending"]
    assert len(booting) == 2 and not any(m.ready for m in booting)
    with pytest.raises(ProviderError) as e:     # the API takes no other size meanwhile
        target.set_size(3)
    assert e.value.kind is ErrorKind.CONFLICT and "resize_in_progress" in str(e.value)
    assert target.set_size(4).size == 4        # the same size again is no change, even now
    api.settle("web")
    obs = target.observe(time.time())
    assert obs.in_flight is None and obs.status_replicas == 4 and all(m.ready for m in obs.members)


def test_a_scale_in_marks_the_newest_droplets_deleting_then_leaves_them_out(api, provider):
    api.resize_seconds = 3600
    pool = api.add_pool("web", size=3)
    target = provider.target({"pool": "web"})
    target.set_size(1)
    obs = target.observe(time.time())
    newest = sorted(pool.droplets, key=lambda d: d.id)[1:]
    assert {m.name for m in obs.members if m.deleting} == {d.id for d in newest}
    assert obs.status_replicas == 1
    api.settle("web")
    assert [m.name for m in target.observe(time.time()).members] == ["web-1"]


def test_cpu_is_each_droplets_average_over_the_window_and_a_silent_droplet_is_missing(api, provider):
    api.add_pool("web", size=3)
    now = float(int(time.time()))
    api.put_samples("web", "web-1", [(now - 90, 20.0), (now - 30, 40.0)])
    api.put_samples("web", "web-2", [(now - 30, 80.0)])
    target = provider.target({"pool": "web"})
    obs = target.observe(now)
    q = MetricQuery("cpu", "resource", {}, 120.0, 60.0, frozenset({"members", "series"}))
    got = target.read_metrics(now, obs, [q, MetricQuery("queue", "external", {}, 60.0)])
    assert set(got) == {"cpu"}                  # the API has no other metric
    # CPU in use against each droplet's request of one CPU; web-3 sent nothing: missing, not 0
    assert got["cpu"].members == {"web-1": 0.3, "web-2": 0.8}
    assert {m.name: m.requests for m in obs.members}["web-1"] == {"cpu": 1}
    assert got["cpu"].series == [[now - 90, 20.0], [now - 30, 60.0]]
    assert got["cpu"].value == 60.0


@pytest.mark.parametrize("arrange, call, kind", [
    (lambda api: None, lambda t: DropletsProvider(endpoint=t.client.endpoint, token="not-a-token-000")
     .target({"pool": "web"}).observe(0), ErrorKind.FORBIDDEN),
    (lambda api: None, lambda t: DropletsProvider(endpoint=t.client.endpoint, token="read-only-token-77")
     .target({"pool": "web"}).set_size(3), ErrorKind.FORBIDDEN),
    (lambda api: None, lambda t: t.set_size(99), ErrorKind.INVALID),
    (lambda api: api.fail(drop=True, times=2), lambda t: t.observe(0), ErrorKind.TRANSIENT),
    (lambda api: api.fail(500, body={"unexpected": True}), lambda t: t.observe(0), ErrorKind.TRANSIENT),
], ids=["unknown token", "read-only token writing", "size beyond max_size", "connection dropped twice",
        "5xx with another body"])
def test_each_answer_of_the_api_is_a_provider_error_of_its_kind(api, provider, arrange, call, kind):
    api.add_pool("web", size=2, max_size=20)
    arrange(api)
    with pytest.raises(ProviderError) as e:
        call(provider.target({"pool": "web"}))
    assert e.value.kind is kind


def test_a_connection_dropped_once_is_retried(api, provider):
    api.add_pool("web", size=2)
    api.fail(drop=True)
    assert provider.target({"pool": "web"}).observe(0).current_replicas == 2
    assert api.count("GET", "^/v1/pools/web$") == 2


def test_throttling_carries_the_apis_retry_after(api, provider):
    api.add_pool("web", size=2)
    api.fail(429, retry_after=42, match="^GET ")
    with pytest.raises(ProviderError) as e:
        provider.target({"pool": "web"}).observe(0)
    assert (e.value.kind, e.value.retry_after) == (ErrorKind.THROTTLED, 42.0)


def test_a_pool_its_own_autoscaler_sizes_is_refused_naming_it(api, provider):
    api.add_pool("web", size=2, autoscaler={"enabled": True, "min": 1, "max": 8, "target_cpu_percent": 70,
                                            "cooldown_seconds": 300})
    target = provider.target({"pool": "web"})
    assert target.managed_by() == "pool web's own autoscaler (enabled: 1 to 8 droplets at 70 % CPU)"
    with pytest.raises(TargetRefused) as e:     # and the API's own refusal, should it be enabled meanwhile
        target.set_size(3)
    assert e.value.manager == "pool web's own autoscaler" and "409 autoscaler_enabled" in str(e.value)
    assert api.pool("web").size == 2
    api.pool("web").autoscaler["enabled"] = False
    assert target.managed_by() is None
