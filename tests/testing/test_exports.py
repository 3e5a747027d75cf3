"""scalebridge.testing exports the local API servers the built-in providers are tested
against, imported only when asked for (the Monitoring server needs grpc)."""
from __future__ import annotations

import subprocess
import sys


def test_the_local_servers_are_exported_lazily():
    code = ("import sys, scalebridge.testing as t; "
            "assert 'scalebridge.testing.monitoring_server' not in sys.modules; "
            "from scalebridge.testing import KubernetesServer, ComputeServer, MonitoringServer, ArmServer, AwsProxy; "
            "print(KubernetesServer.__module__, MonitoringServer.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["scalebridge.testing.kubernetes_server", "scalebridge.testing.monitoring_server"]


def test_an_unknown_name_is_an_attribute_error():
    import pytest
    import scalebridge.testing
    with pytest.raises(AttributeError):
        scalebridge.testing.NoSuchServer  # noqa: B018
