"""The fault-injecting proxy plugin authors reuse (scalebridge_aws.fake_server):
a fault's service/action match, ``after``, ``times`` and ``probability``; calls
recorded with their IAM action (CloudWatch signs as ``monitoring``, its IAM
prefix is ``cloudwatch``)."""
from __future__ import annotations

import pytest

from scalebridge.providers import ProviderError
from scalebridge_aws.fake_server import Fault


@pytest.fixture
def client(shared):
    from scalebridge_aws.client import AwsClients
    c = AwsClients("us-east-1", shared.url, max_attempts=1)
    yield shared.proxy, c
    c.close()


def describe(c) -> bool:
    try:
        c.call("autoscaling", "describe_auto_scaling_groups")
        return True
    except ProviderError:
        return False


def test_after_and_times(client):
    proxy, c = client
    proxy.add(Fault.throttle(action="DescribeAutoScalingGroups", after=1, times=2))
    assert [describe(c) for _ in range(5)] == [True, False, False, True, True]
    assert [x.fault for x in proxy.calls] == [None, "error", "error", None, None]
    assert not proxy.faults


def test_a_fault_for_another_action_or_service_does_not_fire(client):
    proxy, c = client
    proxy.add(Fault.throttle(action="SetDesiredCapacity"), Fault.throttle(service="monitoring"))
    assert describe(c) and len(proxy.faults) == 2


def test_a_probability_fails_some_calls_not_all(client):
    proxy, c = client
    proxy.add(Fault.server_error(500, times=None, probability=0.5))
    first = [describe(c) for _ in range(40)]
    assert 5 < first.count(False) < 35
    proxy.faults.clear()


def test_iam_actions_of_the_calls(client):
    proxy, c = client
    c.call("autoscaling", "describe_auto_scaling_groups")
    c.call("cloudwatch", "list_metrics")
    c.call("ec2", "describe_instances")
    assert proxy.iam_actions() == {"autoscaling:DescribeAutoScalingGroups", "cloudwatch:ListMetrics",
                                   "ec2:DescribeInstances"}
    assert proxy.count(service="monitoring") == 1
