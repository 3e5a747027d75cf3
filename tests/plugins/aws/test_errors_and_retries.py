"""Every failure of the three APIs comes out as one of the contract's kinds, and
botocore's retries are the ones configured.

Error codes: https://docs.aws.amazon.com/autoscaling/ec2/APIReference/CommonErrors.html
(Throttling, ValidationError, AccessDenied …); retries: botocore's standard mode
retries throttling errors and 5xx ("Transient errors", "Throttling errors",
https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html),
``total_max_attempts`` counting every attempt."""
from __future__ import annotations

import time

import pytest

from scalebridge.providers import ErrorKind, MetricQuery, ProviderError
from scalebridge_aws.fake_server import Fault

CPU = MetricQuery("cpu", "resource", {}, 300.0, 60.0, frozenset({"member_series"}))


@pytest.fixture(scope="module")
def _one_group(module_world):
    module_world.group("web")
    from scalebridge_aws.provider import AwsProvider
    made = []

    def make(**opts):
        p = AwsProvider(**{"region": "us-east-1", "endpoint_url": module_world.url, "max_attempts": 1, **opts})
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


@pytest.fixture
def shared_group(shared, _one_group):
    return shared.proxy, _one_group


def observe(provider, **opts):
    t = provider(**opts).target({"auto_scaling_group": "web"})
    return t, lambda: t.observe(time.time())


@pytest.mark.parametrize("fault, kind", [
    (Fault.throttle(), ErrorKind.THROTTLED),
    (Fault.throttle_text(), ErrorKind.THROTTLED),                       # 429 text/plain: ResponseParserError unhandled
    (Fault("status", status=429, body=b"<html>Too Many Requests</html>", content_type="text/html"),
     ErrorKind.THROTTLED),
    (Fault.server_error(503), ErrorKind.TRANSIENT),
    (Fault.server_error(500), ErrorKind.TRANSIENT),
    (Fault("status", status=502, body=b"Bad Gateway"), ErrorKind.TRANSIENT),
    (Fault.drop(), ErrorKind.TRANSIENT),
    (Fault.denied(), ErrorKind.FORBIDDEN),
    (Fault("error", status=403, code="InvalidClientTokenId", message="The security token is invalid"),
     ErrorKind.FORBIDDEN),
    (Fault("error", status=400, code="ValidationError", message="1 validation error detected"), ErrorKind.INVALID),
])
def test_describe_failures_map_to_kinds(shared_group, fault, kind):
    proxy, provider = shared_group
    fault.action = "DescribeAutoScalingGroups"
    proxy.add(fault)
    t, obs = observe(provider)
    with pytest.raises(ProviderError) as e:
        obs()
    assert e.value.kind is kind and e.value.operation == "DescribeAutoScalingGroups"
    assert obs().current_replicas == 2      # the fault was one call; the next sync works


def test_a_timeout_is_transient(world, provider, proxy):
    world.group("web")
    proxy.add(Fault.timeout(1.0, action="DescribeAutoScalingGroups"))
    t, obs = observe(provider, read_timeout=0.3)
    with pytest.raises(ProviderError) as e:
        obs()
    assert e.value.kind is ErrorKind.TRANSIENT and "timed out" in str(e.value)


def test_ec2_throttling_is_throttled(world, provider, proxy):
    world.group("web")
    proxy.add(Fault.throttle(action="DescribeInstances", code="RequestLimitExceeded", status=503))
    t, obs = observe(provider)
    with pytest.raises(ProviderError) as e:
        obs()
    assert e.value.kind is ErrorKind.THROTTLED and e.value.operation == "DescribeInstances"


@pytest.mark.parametrize("fault, kind", [
    (Fault.throttle(), ErrorKind.THROTTLED), (Fault.throttle_text(), ErrorKind.THROTTLED),
    (Fault.server_error(500), ErrorKind.TRANSIENT), (Fault.denied(code="AccessDeniedException"), ErrorKind.FORBIDDEN),
])
def test_cloudwatch_failures_map_to_kinds(world, provider, proxy, fault, kind):
    world.group("web")
    t, obs = observe(provider)
    o = obs()
    fault.action = "GetMetricData"
    proxy.add(fault)
    with pytest.raises(ProviderError) as e:
        t.read_metrics(time.time(), o, [CPU])
    assert e.value.kind is kind and e.value.operation == "GetMetricData"


@pytest.mark.parametrize("fault, kind", [
    (Fault.throttle(), ErrorKind.THROTTLED),
    (Fault("error", status=400, code="ScalingActivityInProgress", message="Scaling activity in progress"),
     ErrorKind.CONFLICT),
    (Fault("error", status=400, code="ResourceContention", message="You already have a pending update"),
     ErrorKind.TRANSIENT),
    (Fault.denied(), ErrorKind.FORBIDDEN),
])
def test_write_failures_map_to_kinds(world, provider, proxy, fault, kind):
    world.group("web")
    t, obs = observe(provider)
    obs()
    fault.action = "SetDesiredCapacity"
    proxy.add(fault)
    with pytest.raises(ProviderError) as e:
        t.set_size(4)
    assert e.value.kind is kind and e.value.operation == "SetDesiredCapacity"
    assert world.desired() == 2


@pytest.mark.slow
@pytest.mark.parametrize("fault", [Fault.throttle_text(), Fault.throttle(), Fault.server_error(503), Fault.drop()])
def test_botocore_retries_what_is_retryable_up_to_the_configured_attempts(world, provider, proxy, fault):
    """A text-bodied 429 is retried like a parseable Throttling (the before-parse
    handler gives it the protocol's error shape); two faults and max_attempts 3:
    the third attempt succeeds."""
    world.group("web")
    fault.action = "DescribeAutoScalingGroups"
    fault.times = 2
    proxy.add(fault)
    t, obs = observe(provider, max_attempts=3)
    assert obs().current_replicas == 2
    assert proxy.count("DescribeAutoScalingGroups") == 3


def test_max_attempts_one_makes_one_attempt(world, provider, proxy):
    world.group("web")
    proxy.add(Fault.throttle(action="DescribeAutoScalingGroups"))
    t, obs = observe(provider, max_attempts=1)
    with pytest.raises(ProviderError):
        obs()
    assert proxy.count("DescribeAutoScalingGroups") == 1


def test_the_client_config_is_explicit(provider):
    cfg = provider(max_attempts=4, connect_timeout=2, read_timeout=7).clients.config()
    assert cfg.retries == {"mode": "standard", "total_max_attempts": 4}
    assert (cfg.connect_timeout, cfg.read_timeout) == (2.0, 7.0)


def test_no_credentials_is_forbidden(world, monkeypatch, tmp_path):
    from scalebridge_aws.client import AwsClients
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr("scalebridge_aws.client._SESSIONS", {})
    c = AwsClients("us-east-1", world.url, max_attempts=1)
    with pytest.raises(ProviderError) as e:
        c.call("autoscaling", "describe_auto_scaling_groups")
    assert e.value.kind is ErrorKind.FORBIDDEN and "credentials" in str(e.value)


def test_an_unknown_profile_is_forbidden(world, monkeypatch, tmp_path):
    from scalebridge_aws.client import AwsClients
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    c = AwsClients("us-east-1", world.url, profile="nobody", max_attempts=1)
    with pytest.raises(ProviderError) as e:
        c.call("autoscaling", "describe_auto_scaling_groups")
    assert e.value.kind is ErrorKind.FORBIDDEN and "nobody" in str(e.value)


def test_a_request_boto3_refuses_to_send_is_invalid(world):
    from scalebridge_aws.client import AwsClients
    c = AwsClients("us-east-1", world.url, max_attempts=1)
    with pytest.raises(ProviderError) as e:
        c.call("autoscaling", "set_desired_capacity", AutoScalingGroupName="", DesiredCapacity=1)
    assert e.value.kind is ErrorKind.INVALID and e.value.operation == "SetDesiredCapacity"
    assert world.proxy.count() == 0       # never sent
