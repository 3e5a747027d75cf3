"""The azure provider keeps the provider contract (scalebridge.testing.check_provider),
over the real SDKs against the local ARM server."""
from __future__ import annotations

import time

from scalebridge.providers import ErrorKind
from scalebridge.testing import check_provider

from .conftest import SUB

_STATUS = {ErrorKind.THROTTLED: 429, ErrorKind.TRANSIENT: 503, ErrorKind.CONFLICT: 409,
           ErrorKind.NOT_FOUND: 404, ErrorKind.FORBIDDEN: 403}
_CALL = {"observe": r"^GET .*/virtualMachineScaleSets/web$", "read_metrics": r"/providers/Microsoft\.Insights/metrics$",
         "set_size": r"^PATCH .*/virtualMachineScaleSets/web$"}


def test_the_azure_provider_keeps_the_contract(arm, provider):
    arm.update_polls = 2
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    rid = arm.scale_set_id(SUB, "shop", "web")
    now = time.time()
    for vm in ("web_0", "web_1", "web_2", "web_3"):
        arm.put_metric(rid, "Percentage CPU", [(now - 60 * k, 50.0) for k in range(1, 30)], vm=vm)

    def provoke(target, call, kind):
        arm.fail(_STATUS[kind], match=_CALL[call], retry_after=3 if kind is ErrorKind.THROTTLED else None)
        return True

    report = check_provider(provider, {"resource_group": "shop", "scale_set": "web"}, provoke=provoke,
                            bad_refs=[{"resource_group": "shop", "scale_set": "no spaces"}])
    assert ("set_size", "throttled") in report.provoked



