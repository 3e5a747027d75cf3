"""A local ARM server (HTTPS, throwaway CA) per test module, and providers built
on it the way a run configuration builds them."""
from __future__ import annotations

import pytest

from scalebridge_azure.fake_server import ArmServer

SUB = "00000000-0000-0000-0000-000000000001"


@pytest.fixture
def arm():
    with ArmServer() as server:
        yield server


@pytest.fixture
def options(arm):
    """The run configuration's provider options for a service principal against ``arm``."""
    return {"subscription_id": SUB, "arm_endpoint": arm.url, "ca_bundle": arm.ca_file,
            "credential": {"tenant_id": arm.tenant_id, "client_id": "scalebridge", "client_secret": "secret",
                           "authority": arm.authority}}


@pytest.fixture
def provider(options):
    from scalebridge_azure import AzureProvider
    p = AzureProvider(**options)
    yield p
    p.close()
