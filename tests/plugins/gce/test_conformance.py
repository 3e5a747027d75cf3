"""The provider conformance suite on a zonal and a regional MIG, with faults
provoked through the Compute and Monitoring servers."""
from __future__ import annotations

import pytest

from scalebridge.providers import ErrorKind
from scalebridge.testing.conformance import check_provider
from tests.plugins.gce.conftest import REGION, ZONE, cpu_series

_HTTP = {ErrorKind.THROTTLED: 429, ErrorKind.TRANSIENT: 500, ErrorKind.CONFLICT: 409,
         ErrorKind.NOT_FOUND: 404, ErrorKind.FORBIDDEN: 403}
_GRPC = {ErrorKind.THROTTLED: "RESOURCE_EXHAUSTED", ErrorKind.TRANSIENT: "INTERNAL",
         ErrorKind.CONFLICT: "ABORTED", ErrorKind.NOT_FOUND: "NOT_FOUND", ErrorKind.FORBIDDEN: "PERMISSION_DENIED"}


@pytest.mark.parametrize("scope", [{"zone": ZONE}, {"region": REGION}])
def test_the_gce_provider_keeps_the_contract(compute, monitoring, options, now, scope):
    from scalebridge_gce.provider import GceProvider
    compute.settle_after = 1          # new VMs are up on the next read of the group
    mig = compute.add_mig("web", size=2, **scope)
    cpu_series(monitoring, mig, [0.5, 0.7], now)
    provider = GceProvider(**{**options, "timeout_seconds": 0.5})

    def provoke(target, call, kind):
        compute.clear_faults()      # a transient fault lasts past the call's retries; the next one replaces it
        monitoring.clear_faults()
        times = 1000 if kind is ErrorKind.TRANSIENT else 1
        if call == "read_metrics":
            monitoring.fail(_GRPC[kind], times=times)
        elif call == "set_size":
            compute.fail(_HTTP[kind], method="POST", path="/resize", times=times)
        else:
            compute.fail(_HTTP[kind], method="GET", path="instanceGroupManagers/web", times=times)
        return True

    try:
        report = check_provider(provider, {**scope, "instance_group_manager": "web"}, provoke=provoke,
                                bad_refs=[{**scope}, {"zone": ZONE, "region": REGION, "instance_group_manager": "web"}])
    finally:
        compute.clear_faults()
        monitoring.clear_faults()
        provider.close()
    assert ("set_size", "throttled") in report.provoked
    assert not [s for s in report.skipped if "read_metrics" in s]
