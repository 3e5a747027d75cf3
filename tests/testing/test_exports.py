"""What moved out of scalebridge.testing (each cloud's local API server, into its plugin
package) still imports under its old name for one release, with a DeprecationWarning
naming the new home, and is loaded only when asked for (the Monitoring server needs grpc)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from scalebridge import moved


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning:__main__", "-c", code],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_old_names_import_the_moved_servers_lazily_and_warn():
    code = ("import sys, warnings\n"
            "import scalebridge.testing as t\n"
            "assert 'scalebridge_gce.fake_monitoring' not in sys.modules\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    from scalebridge.testing import KubernetesServer, MonitoringServer\n"
            "    from scalebridge.testing.arm_server import ArmServer\n"
            "    import scalebridge.translate.aws as aws\n"
            "print(KubernetesServer.__module__, MonitoringServer.__module__, ArmServer.__module__, aws.__name__)\n"
            "print(len([x for x in w if issubclass(x.category, DeprecationWarning)]))\n"
            "print('scalebridge_azure.fake_server' in str(w[2].message))\n")
    assert _run(code) == ["scalebridge_kubernetes.fake_server", "scalebridge_gce.fake_monitoring",
                          "scalebridge_azure.fake_server", "scalebridge_aws.translate", "4", "True"]


@pytest.mark.parametrize("old,new", sorted(moved.MODULES.items()))
def test_every_old_module_name_is_the_module_it_moved_to(old, new):
    import importlib
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        was = importlib.import_module(old)
    assert was is importlib.import_module(new)


def test_an_unknown_name_is_an_attribute_error():
    import scalebridge.testing
    with pytest.raises(AttributeError):
        scalebridge.testing.NoSuchServer  # noqa: B018
