"""A MIG whose own autoscaler is not OFF is refused, naming the autoscaler: in
mode ON "the MIG sets its target size to the recommended size", in
ONLY_SCALE_OUT it may still raise it; only OFF leaves the target size alone
(https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions)."""
from __future__ import annotations

import pytest

from tests.plugins.gce.conftest import REGION, ZONE


@pytest.mark.parametrize("mode", ["ON", "ONLY_SCALE_OUT"])
def test_an_autoscaler_not_off_manages_the_group(compute, provider, mode):
    compute.add_mig("web", zone=ZONE, size=2, autoscaler_mode=mode)
    who = provider.target({"zone": ZONE, "instance_group_manager": "web"}).managed_by()
    assert who == f"the GCE autoscaler projects/test-project/zones/{ZONE}/autoscalers/web-as (mode {mode})"


def test_a_regional_autoscaler_is_named_with_its_region(compute, provider):
    compute.add_mig("api", region=REGION, size=3, autoscaler_mode="ON")
    who = provider.target({"region": REGION, "instance_group_manager": "api"}).managed_by()
    assert f"regions/{REGION}/autoscalers/api-as" in who and "mode ON" in who


def test_an_autoscaler_off_or_none_leaves_the_group_to_scalebridge(compute, provider):
    compute.add_mig("off", zone=ZONE, size=2, autoscaler_mode="OFF")
    compute.add_mig("bare", zone=ZONE, size=2)
    assert provider.target({"zone": ZONE, "instance_group_manager": "off"}).managed_by() is None
    assert provider.target({"zone": ZONE, "instance_group_manager": "bare"}).managed_by() is None
    assert provider.clients.calls.get("autoscalers.get") == 1   # only the group that has one
