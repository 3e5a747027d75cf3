"""Compute's throttling through the controller: a 429 with a ``Retry-After`` of a
day (seconds or an HTTP date) holds the provider for its ``max_retry_after_seconds``
and no longer, audited as throttled with the server's value; a rate quota's 403
``rateLimitExceeded`` ("a 403 error with the reason rateLimitExceeded",
https://cloud.google.com/compute/api-quota) carries no hint and backs off."""
from __future__ import annotations

import email.utils
import time

import pytest

from tests.plugins.gce.conftest import ZONE
from tests.throttling import DAY, check_bounded, throttled_syncs

REF = {"zone": ZONE, "instance_group_manager": "web"}


@pytest.mark.parametrize("status,reason,header,expected", [
    (429, "rateLimitExceeded", "86400", DAY),
    (429, "rateLimitExceeded", "date", DAY),
    (403, "rateLimitExceeded", None, None),
], ids=["429-seconds", "429-http-date", "403-rateLimitExceeded"])
def test_a_throttled_compute_call_is_held_at_most_the_bound(compute, options, tmp_path, status, reason, header,
                                                            expected):
    compute.add_mig("web", zone=ZONE, size=2)
    ra = email.utils.formatdate(time.time() + DAY, usegmt=True) if header == "date" else header

    def inject():
        compute.fail(status, path="instanceGroupManagers/web", reason=reason, retry_after=ra)
    records, gauge = throttled_syncs(tmp_path, {"type": "gce", **options}, REF, inject)
    check_bounded(records, gauge, expected)
