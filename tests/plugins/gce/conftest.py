"""A local Compute REST server and a Monitoring gRPC server per test session (reset
for each test), and ``gce`` providers built on them the way a run configuration
builds them (anonymous credentials, plaintext gRPC to loopback)."""
from __future__ import annotations

import time

import pytest

from scalebridge_gce.fake_server import ComputeServer
from scalebridge_gce.fake_monitoring import MonitoringServer

PROJECT = "test-project"
ZONE = "europe-west1-b"
REGION = "europe-west1"
CPU = "compute.googleapis.com/instance/cpu/utilization"
QUEUE = "pubsub.googleapis.com/subscription/num_undelivered_messages"


@pytest.fixture(scope="session")
def _compute():
    with ComputeServer(project=PROJECT) as server:
        yield server


@pytest.fixture(scope="session")
def _monitoring():
    with MonitoringServer() as server:
        yield server


@pytest.fixture
def compute(_compute):
    _compute.reset()
    _compute.op_polls, _compute.settle_after = 0, None
    yield _compute
    _compute.reset()


@pytest.fixture
def monitoring(_monitoring):
    _monitoring.reset()
    yield _monitoring
    _monitoring.reset()


@pytest.fixture
def options(compute, monitoring):
    """The provider options of a run configuration pointing at the local servers."""
    return {"project": PROJECT, "compute_endpoint": compute.endpoint, "monitoring_endpoint": monitoring.address,
            "monitoring_insecure": True, "credentials": "anonymous", "timeout_seconds": 5,
            "operation_wait_seconds": 2}


@pytest.fixture
def provider(options):
    from scalebridge_gce.provider import GceProvider
    p = GceProvider(**options)
    yield p
    p.close()


@pytest.fixture
def now():
    return time.time()


def cpu_series(monitoring, mig, utilizations, now, *, age=60.0):
    """One CPU utilization series (a fraction) per instance of ``mig``; None: no series."""
    for vm, u in zip(mig.vms, utilizations):
        if u is not None:
            monitoring.add_series(CPU, resource_labels={"instance_id": str(vm.id), "zone": vm.zone},
                                  points=[(now - age - 60, u), (now - age, u)], project=mig.project)
