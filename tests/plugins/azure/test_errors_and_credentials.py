"""ARM's errors as the provider contract's kinds, credentials, and refusing a scale set
that Azure autoscale already manages.

Throttling: https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling
(429 with ``Retry-After``). Autoscale settings:
https://learn.microsoft.com/rest/api/monitor/autoscale-settings/list-by-subscription.
"""
from __future__ import annotations

import time

import pytest

from scalebridge.providers import ErrorKind, ProviderError

from .conftest import SUB


@pytest.fixture
def target(arm, provider):
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    return provider.target({"resource_group": "shop", "scale_set": "web"})


@pytest.mark.parametrize("status, kind", [
    (429, ErrorKind.THROTTLED), (403, ErrorKind.FORBIDDEN), (404, ErrorKind.NOT_FOUND),
    (409, ErrorKind.CONFLICT), (400, ErrorKind.INVALID), (500, ErrorKind.TRANSIENT), (503, ErrorKind.TRANSIENT)])
def test_status_codes_map_to_error_kinds(arm, target, status, kind):
    arm.fail(status, match=r"^GET .*/virtualMachineScaleSets/web$")
    with pytest.raises(ProviderError) as e:
        target.observe(time.time())
    assert e.value.kind is kind


def test_a_throttled_call_carries_retry_after_and_is_not_retried_by_the_sdk(arm, target):
    arm.fail(429, retry_after=17, match=r"^GET .*/virtualMachineScaleSets/web$")
    started = time.monotonic()
    with pytest.raises(ProviderError) as e:
        target.observe(time.time())
    assert e.value.kind is ErrorKind.THROTTLED and e.value.retry_after == 17
    assert time.monotonic() - started < 5          # the SDK did not sleep the 17 s itself
    gets = [c for c in arm.calls if c[0] == "GET" and c[1].endswith("/web")]
    assert len(gets) == 1


def test_a_dropped_connection_is_transient(arm, target):
    arm.fail(drop=True, times=3, match=r"^GET .*/virtualMachineScaleSets/web$")
    with pytest.raises(ProviderError) as e:
        target.observe(time.time())
    assert e.value.kind is ErrorKind.TRANSIENT


def test_a_wrong_client_secret_is_forbidden(arm, options):
    from scalebridge_azure import AzureProvider
    arm.add_scale_set(SUB, "shop", "web", capacity=2)
    p = AzureProvider(**{**options, "credential": {**options["credential"], "client_secret": "wrong"}})
    with pytest.raises(ProviderError) as e:
        p.target({"resource_group": "shop", "scale_set": "web"}).observe(time.time())
    assert e.value.kind is ErrorKind.FORBIDDEN
    assert not [c for c in arm.calls if "virtualMachineScaleSets" in c[1]]   # no ARM call without a token


def test_the_real_client_secret_credential_gets_its_token_from_the_authority(arm, target):
    target.observe(time.time())
    assert any(c[0] == "POST" and c[1] == f"/{arm.tenant_id}/oauth2/v2.0/token" for c in arm.calls)


def test_a_scale_set_with_an_enabled_autoscale_setting_is_refused(arm, target):
    arm.add_autoscale_setting(SUB, "ops", "web-autoscale", arm.scale_set_id(SUB, "shop", "web"))
    assert target.managed_by() == "Azure autoscale setting 'web-autoscale' (resource group ops), enabled"


def test_one_listing_of_autoscale_settings_answers_for_every_scale_set(arm, provider):
    for name in ("a", "b", "c"):
        arm.add_scale_set(SUB, "shop", name, capacity=1)
    arm.add_autoscale_setting(SUB, "shop", "b-autoscale", arm.scale_set_id(SUB, "shop", "b"))
    answers = [provider.target({"resource_group": "shop", "scale_set": n}).managed_by() for n in ("a", "b", "c")]
    assert answers == [None, "Azure autoscale setting 'b-autoscale' (resource group shop), enabled", None]
    assert sum(1 for c in arm.calls if c[1].endswith("/autoscalesettings")) == 1


def test_a_disabled_autoscale_setting_or_another_targets_setting_is_no_refusal(arm, target):
    arm.add_autoscale_setting(SUB, "shop", "off", arm.scale_set_id(SUB, "shop", "web"), enabled=False)
    arm.add_autoscale_setting(SUB, "shop", "other", arm.scale_set_id(SUB, "shop", "api"))
    assert target.managed_by() is None


def test_a_missing_service_principal_key_is_named(options):
    from scalebridge.providers import RefError
    from scalebridge_azure import AzureProvider
    cred = dict(options["credential"])
    del cred["client_id"]
    with pytest.raises(RefError) as e:
        AzureProvider(**{**options, "credential": cred})
    assert e.value.key == "credential.client_id"
