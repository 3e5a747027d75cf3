"""Compute and Monitoring failures as the contract's error kinds. Compute answers a
rate quota with "a 403 error with the reason rateLimitExceeded"
(https://cloud.google.com/compute/api-quota); 404 is NOT_FOUND, 429 and gRPC
RESOURCE_EXHAUSTED are throttling, 5xx are retried within the call's timeout
and then transient."""
from __future__ import annotations

import json

import pytest

from scalebridge.providers import ErrorKind, MetricQuery, ProviderError
from tests.plugins.gce.conftest import ZONE

IGM = "instanceGroupManagers/web"


def _target(compute, provider):
    compute.add_mig("web", zone=ZONE, size=2)
    return provider.target({"zone": ZONE, "instance_group_manager": "web"})


@pytest.mark.parametrize("status, reason, kind", [
    (429, "rateLimitExceeded", ErrorKind.THROTTLED),
    (403, "rateLimitExceeded", ErrorKind.THROTTLED),
    (403, "quotaExceeded", ErrorKind.THROTTLED),
    (403, "forbidden", ErrorKind.FORBIDDEN),
    (401, "authError", ErrorKind.FORBIDDEN),
    (404, "notFound", ErrorKind.NOT_FOUND),
    (409, "conflict", ErrorKind.CONFLICT),
    (400, "invalid", ErrorKind.INVALID),
])
def test_compute_errors_are_the_contracts_kinds(compute, provider, now, status, reason, kind):
    target = _target(compute, provider)
    compute.fail(status, path=IGM, reason=reason)
    with pytest.raises(ProviderError) as e:
        target.observe(now)
    assert e.value.kind is kind and e.value.operation == "instanceGroupManagers.get"
    if status != 401:   # a 401 makes google-auth try to refresh the anonymous credentials first
        assert f"HTTP {status}" in e.value.message


def test_retry_after_reaches_the_controller(compute, provider, now):
    target = _target(compute, provider)
    compute.fail(429, path=IGM, retry_after=7)
    with pytest.raises(ProviderError) as e:
        target.observe(now)
    assert e.value.retry_after == 7.0


def test_a_5xx_is_retried_within_the_call(compute, provider, now):
    target = _target(compute, provider)
    compute.fail(503, path=IGM, times=2)
    assert target.observe(now).current_replicas == 2
    assert compute.count(f"GET /compute/v1/projects/test-project/zones/{ZONE}/{IGM}") == 3


def test_a_5xx_that_lasts_is_transient_after_the_timeout(compute, options, now):
    from scalebridge_gce.provider import GceProvider
    compute.add_mig("web", zone=ZONE, size=2)
    target = GceProvider(**{**options, "timeout_seconds": 0.5}).target({"zone": ZONE, "instance_group_manager": "web"})
    compute.fail(503, path=IGM, times=1000)
    with pytest.raises(ProviderError) as e:
        target.observe(now)
    assert e.value.kind is ErrorKind.TRANSIENT


def test_an_unreachable_endpoint_is_transient(options, now):
    import socket
    from scalebridge_gce.provider import GceProvider
    with socket.socket() as s:       # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = GceProvider(**{**options, "compute_endpoint": f"http://127.0.0.1:{port}", "timeout_seconds": 0.5}) \
        .target({"zone": ZONE, "instance_group_manager": "web"})
    with pytest.raises(ProviderError) as e:
        target.observe(now)
    assert e.value.kind is ErrorKind.TRANSIENT


@pytest.mark.parametrize("code, kind", [("RESOURCE_EXHAUSTED", ErrorKind.THROTTLED),
                                        ("PERMISSION_DENIED", ErrorKind.FORBIDDEN),
                                        ("NOT_FOUND", ErrorKind.NOT_FOUND)])
def test_monitoring_errors_are_the_contracts_kinds(compute, monitoring, provider, now, code, kind):
    target = _target(compute, provider)
    obs = target.observe(now)
    monitoring.fail(code)
    with pytest.raises(ProviderError) as e:
        target.read_metrics(now, obs, [MetricQuery("cpu", "resource", {}, 60.0)])
    assert e.value.kind is kind and e.value.operation == "monitoring.ListTimeSeries"


def test_a_service_account_key_file_signs_requests(compute, options, tmp_path, now):
    """Requests carry a bearer token signed with the key file's key (google-auth's
    self-signed JWT for a service account), issued by its client_email."""
    import base64
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from scalebridge_gce.provider import GceProvider
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = tmp_path / "sa.json"
    path.write_text(json.dumps({"type": "service_account", "project_id": "test-project", "private_key_id": "k1",
                                "private_key": pem, "client_email": "sb@test-project.iam.gserviceaccount.com",
                                "client_id": "1", "token_uri": "http://127.0.0.1:9/token"}))
    compute.add_mig("web", zone=ZONE, size=2)
    provider = GceProvider(**{**options, "credentials": str(path), "timeout_seconds": 2})
    provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    auth = compute.authorizations[0]
    assert auth.startswith("Bearer ")
    payload = auth.split()[1].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["iss"] == "sb@test-project.iam.gserviceaccount.com"
    header = auth.split()[1].split(".")[0]
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"] == "k1"


def test_a_malformed_key_file_is_forbidden_not_a_traceback(options, tmp_path, now):
    from scalebridge_gce.provider import GceProvider
    path = tmp_path / "sa.json"
    path.write_text("{}")
    provider = GceProvider(**{**options, "credentials": str(path)})
    with pytest.raises(ProviderError) as e:
        provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    assert e.value.kind is ErrorKind.FORBIDDEN and "sa.json" in e.value.message


def test_no_application_default_credentials_is_forbidden(options, tmp_path, monkeypatch, now):
    from scalebridge_gce.provider import GceProvider
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "absent.json"))
    provider = GceProvider(**{**options, "credentials": "default"})
    with pytest.raises(ProviderError) as e:
        provider.target({"zone": ZONE, "instance_group_manager": "web"}).observe(now)
    assert e.value.kind is ErrorKind.FORBIDDEN and "credentials 'default'" in e.value.message
