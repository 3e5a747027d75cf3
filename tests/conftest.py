"""Fixtures every test may use, and the ``divergence`` mark (see tests/known_divergences.py)."""
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings

from tests.known_divergences import DIVERGENCES

# No test asserts a duration (speed is the benchmarks' business): Hypothesis's default
# 200 ms deadline per example, and its too-slow health check, fail a correct property
# on a loaded CI machine. A test's own @settings still sets the rest.
settings.register_profile("scalebridge", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("scalebridge")


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """The real `scalebridge` command in a subprocess (the installed entry point's module)."""
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *args], input=stdin,
                          capture_output=True, text=True, check=False)


@pytest.fixture
def cli():
    return run_cli


def pytest_configure(config):
    config.addinivalue_line("markers", "divergence(id): a known divergence of tests/known_divergences.py, "
                                       "run as a strict xfail")


def pytest_collection_modifyitems(config, items):
    for item in items:
        mark = item.get_closest_marker("divergence")
        if mark is None:
            continue
        (key,) = mark.args
        if key not in DIVERGENCES:
            raise pytest.UsageError(f"{item.nodeid}: divergence {key!r} is not in tests/known_divergences.py")
        d = DIVERGENCES[key]
        item.add_marker(pytest.mark.xfail(strict=True, reason=f"{d.id}: {d.summary} ({d.source})"))
