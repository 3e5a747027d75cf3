"""The provider conformance suite passes on the built-in ``sim`` provider, loaded
through the entry-point group as any third-party provider is."""
from __future__ import annotations

import pytest

from scalebridge import registry
from scalebridge.providers import ErrorKind
from scalebridge.testing import check_provider


def _sim_factory():
    if "sim" not in registry.current().providers:
        pytest.skip("the sim provider is not registered")
    return registry.provider_factory("sim")


def test_the_sim_provider_keeps_the_contract():
    sim = _sim_factory()()

    from tests.plugins.sim.test_sim_provider import sim_faults
    report = check_provider(sim, {"workload": "diurnal", "capacity": 100, "startup": 60}, provoke=sim_faults(),
                            bad_refs=[{"workload": "diurnal", "capacity": 100, "startup": 60, "zone": "x"},
                                      {"workload": "no-such-load", "capacity": 100, "startup": 60},
                                      {"workload": "diurnal", "capacity": -1, "startup": 60}])
    assert len(report.provoked) == 15 and not report.skipped
    assert "resize: the size reads back" in report.passed
