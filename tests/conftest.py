import subprocess
import sys

import pytest

NOW = 1767225600.0


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """The real `scalebridge` command in a subprocess (the installed entry point's module)."""
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *args], input=stdin,
                          capture_output=True, text=True, check=False)


@pytest.fixture
def cli():
    return run_cli


def pods(n: int, cpu_request: str | None = "1", ready: bool | None = True, start_offset: float = -3600,
         transition_offset: float = -3500, prefix: str = "web"):
    return [{"name": f"{prefix}-{i}", "phase": "Running", "ready": ready,
             "start_time": NOW + start_offset, "ready_transition_time": NOW + transition_offset,
             "requests": None if cpu_request is None else {"cpu": cpu_request}} for i in range(n)]


def cpu_request(current: int, usage: str | list, *, policy: dict | None = None, semantics: str = "kubernetes",
                state: dict | None = None, settings: dict | None = None, members=None) -> dict:
    members = members if members is not None else pods(current)
    usages = usage if isinstance(usage, list) else [usage] * len(members)
    pol = {"min_replicas": 1, "max_replicas": 100,
           "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 50}}]}
    pol.update(policy or {})
    req = {"semantics": semantics, "now": NOW, "current_replicas": current, "policy": pol,
           "observations": {"members": members,
                            "metrics": {"cpu": {"members": {m["name"]: u for m, u in zip(members, usages)},
                                                "timestamp": NOW - 10, "window": 30}}}}
    if state is not None:
        req["state"] = state
    if settings is not None:
        req["settings"] = settings
    return req
