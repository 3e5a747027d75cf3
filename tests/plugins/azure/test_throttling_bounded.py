"""ARM's throttling through the controller: a 429 with a ``Retry-After`` of a day —
delay-seconds, an HTTP date, or ``retry-after-ms`` (the three azure-core's
``RetryPolicy`` reads) — holds the provider for its ``max_retry_after_seconds`` and
no longer, audited as throttled with the server's value
(https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling)."""
from __future__ import annotations

import email.utils
import time

import pytest

from tests.plugins.azure.conftest import SUB
from tests.throttling import DAY, check_bounded, throttled_syncs

REF = {"resource_group": "shop", "scale_set": "web"}


@pytest.mark.parametrize("headers", [{"Retry-After": "86400"}, {"Retry-After": "date"},
                                     {"retry-after-ms": "86400000"}, {}],
                         ids=["seconds", "http-date", "retry-after-ms", "no-hint"])
def test_a_throttled_arm_call_is_held_at_most_the_bound(arm, options, tmp_path, headers):
    arm.add_scale_set(SUB, "shop", "web", capacity=2, created=time.time() - 3600)
    if headers.get("Retry-After") == "date":
        headers = {"Retry-After": email.utils.formatdate(time.time() + DAY, usegmt=True)}

    def inject():
        arm.fail(429, headers=headers, match=r"^GET .*/virtualMachineScaleSets/web$")
    records, gauge = throttled_syncs(tmp_path, {"type": "azure", **options}, REF, inject)
    check_bounded(records, gauge, DAY if headers else None)
