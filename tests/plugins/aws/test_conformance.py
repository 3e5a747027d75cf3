"""The provider conformance suite (scalebridge.testing.conformance) on an Auto
Scaling group in moto, every fault provoked at the proxy as AWS answers it
(CommonErrors: Throttling 400, InternalFailure 500, AccessDenied 403; a group
that does not exist: an empty DescribeAutoScalingGroups, and SetDesiredCapacity's
ValidationError "AutoScalingGroup name not found")."""
from __future__ import annotations

import time

from scalebridge.providers import ErrorKind
from scalebridge_aws.fake_server import Fault
from scalebridge.testing.conformance import check_provider

_CALLS = {"observe": "DescribeAutoScalingGroups", "read_metrics": "GetMetricData",
          "set_size": "SetDesiredCapacity"}
_FAULTS = {
    ErrorKind.THROTTLED: lambda a: Fault.throttle(action=a),
    ErrorKind.TRANSIENT: lambda a: Fault.server_error(500, action=a),
    ErrorKind.CONFLICT: lambda a: Fault("error", status=400, code="ScalingActivityInProgress",
                                        message="Scaling activity in progress", action=a),
    ErrorKind.FORBIDDEN: lambda a: Fault.denied(action=a),
    ErrorKind.NOT_FOUND: lambda a: Fault("error", status=400, code="ValidationError",
                                         message="AutoScalingGroup name not found - null", action=a),
}


def test_the_aws_provider_keeps_the_contract(world, provider, proxy):
    ids = world.group("web", desired=2, min_size=1, max_size=5)
    now = time.time()
    for i in ids:
        world.put_cpu(i, [40, 45, 50], now)
    p = provider()

    def provoke(target, call, kind):
        proxy.faults.clear()
        if kind is ErrorKind.NOT_FOUND and call == "read_metrics":
            return False       # CloudWatch has no not-found for a metric: its datapoints are absent
        proxy.add(_FAULTS[kind](_CALLS[call]))
        return True

    report = check_provider(p, {"auto_scaling_group": "web"}, provoke=provoke, now=now,
                            bad_refs=[{"auto_scaling_group": "web", "zone": "us-east-1a"}])
    proxy.faults.clear()
    assert ("set_size", "throttled") in report.provoked and ("observe", "not_found") in report.provoked
    assert world.desired() == 2
