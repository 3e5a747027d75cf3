"""Where the modules that moved out of the core live now, and the aliases that keep old
imports working for one release.

Each built-in cloud is one plugin package (``plugins/scalebridge_<cloud>/``) holding its
translator and its local API server; they were ``scalebridge.translate.<cloud>`` and
``scalebridge.testing.<cloud>_server``. The plugin registry was ``scalebridge.plugins``, the
predictive planner and its risk budget ``scalebridge.predictive`` and ``scalebridge.risk``. A published plugin's tests that import an old
name keep working: the import finds the new module, under the old name too, with a
``DeprecationWarning`` naming the new home (docs/plugins.md, "Where things moved").

This table is the one place in the core that names a plugin package, and it names
them only as strings: nothing here imports a plugin until an old name is asked for.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from typing import Optional

#: old module -> the module it is now
MODULES = {
    "scalebridge.testing.kubernetes_server": "scalebridge_kubernetes.fake_server",
    "scalebridge.testing.compute_server": "scalebridge_gce.fake_server",
    "scalebridge.testing.monitoring_server": "scalebridge_gce.fake_monitoring",
    "scalebridge.testing.arm_server": "scalebridge_azure.fake_server",
    "scalebridge.testing.aws_proxy": "scalebridge_aws.fake_server",
    "scalebridge.testing.prometheus_server": "scalebridge_prometheus.fake_server",
    "scalebridge.testing.promql": "scalebridge_prometheus.promql",
    "scalebridge.translate.kubernetes": "scalebridge_kubernetes.translate",
    "scalebridge.translate.keda": "scalebridge_kubernetes.keda",
    "scalebridge.translate.keda_expr": "scalebridge_kubernetes.keda_expr",
    "scalebridge.translate.gce": "scalebridge_gce.translate",
    "scalebridge.translate.azure": "scalebridge_azure.translate",
    "scalebridge.translate.aws": "scalebridge_aws.translate",
    "scalebridge.plugins": "scalebridge.registry",
    "scalebridge.predictive": "scalebridge.forecasting.planner",
    "scalebridge.risk": "scalebridge.forecasting.risk",
}

#: names ``from scalebridge.testing import NAME`` gave -> the module that defines them now
TESTING_NAMES = {
    "KubernetesServer": "scalebridge_kubernetes.fake_server",
    "ComputeServer": "scalebridge_gce.fake_server",
    "MonitoringServer": "scalebridge_gce.fake_monitoring",
    "ArmServer": "scalebridge_azure.fake_server",
    "AwsProxy": "scalebridge_aws.fake_server",
    "PrometheusServer": "scalebridge_prometheus.fake_server",
}


def warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new} (docs/plugins.md, \"Where things moved\"); the old name goes in the "
                  "next release",
                  DeprecationWarning, stacklevel=3)


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):   # the new module itself stands under the old name
        return importlib.import_module(self.new)

    def exec_module(self, module) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Finds an old module name as the module it moved to (the same module object)."""

    def find_spec(self, fullname: str, path, target=None) -> Optional[importlib.machinery.ModuleSpec]:
        new = MODULES.get(fullname)
        if new is None:
            return None
        warn(fullname, new)
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
