"""AWS throttling through the controller. Auto Scaling's ``Throttling`` (HTTP 400,
the query protocol's error shape) carries no hint: the target backs off on the
controller's backoff (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-api-throttling.html
— none documented). A 429 with a ``Retry-After`` of a day — from a proxy or a load
balancer in front of the endpoint, in ``text/plain`` — holds the provider for its
``max_retry_after_seconds`` and no longer, audited as throttled with the server's
value."""
from __future__ import annotations

import email.utils
import time

import pytest

from scalebridge_aws.fake_server import Fault
from tests.plugins.aws.conftest import REGION
from tests.throttling import DAY, check_bounded, throttled_syncs


@pytest.mark.parametrize("fault,expected", [
    (lambda: Fault.throttle(action="DescribeAutoScalingGroups"), None),
    (lambda: Fault.throttle(action="DescribeAutoScalingGroups", headers={"Retry-After": "86400"}), DAY),
    (lambda: Fault.throttle_text(action="DescribeAutoScalingGroups",
                                 headers={"Retry-After": email.utils.formatdate(time.time() + DAY, usegmt=True)}),
     DAY),
], ids=["Throttling", "Throttling-with-Retry-After", "429-text-http-date"])
def test_a_throttled_aws_call_is_held_at_most_the_bound(world, tmp_path, fault, expected):
    world.group("web", desired=2)
    records, gauge = throttled_syncs(
        tmp_path, {"type": "aws", "region": REGION, "endpoint_url": world.url, "max_attempts": 1},
        {"auto_scaling_group": "web"}, lambda: world.proxy.add(fault()))
    check_bounded(records, gauge, expected)
