"""Fixtures for the kubernetes provider's tests: the test API server on 127.0.0.1,
a kubeconfig pointing at it, and a provider made from that kubeconfig (the real
``kubernetes`` client over HTTP)."""
from __future__ import annotations

import pytest

from scalebridge_kubernetes.fake_server import KubernetesServer

TOKEN = "test-token"


@pytest.fixture
def k8s():
    """A fresh API server requiring ``Authorization: Bearer test-token``."""
    with KubernetesServer(token=TOKEN) as server:
        yield server


@pytest.fixture
def kubeconfig(k8s, tmp_path):
    return k8s.kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def provider(kubeconfig):
    from scalebridge_kubernetes import KubernetesProvider
    p = KubernetesProvider(kubeconfig=kubeconfig, qps=1000, burst=1000)
    yield p
    p.close()

