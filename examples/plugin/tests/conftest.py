"""What the example's tests stand on: the droplets API on 127.0.0.1 (a fresh
:class:`~scalebridge_droplets.fake_server.DropletsServer` per test), a token in a file
as a run configuration reads it, and run configurations naming the ``droplets``
provider (``run_config`` is scalebridge's own pytest fixture).

The plugin is found through its entry point, as a user's would be: install it first
(``pip install -e examples/plugin``; ``make test`` does).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from scalebridge_droplets import DropletsProvider
from scalebridge_droplets.fake_server import DropletsServer

TOKEN = "test-token-5f1c2a9e"
#: the run configurations' policy unless a test gives one: 1 to 10 droplets at 60 % CPU
CPU_60 = {"min_replicas": 1, "max_replicas": 10,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}],
          "behavior": {"scale_down": {"stabilization_window_seconds": 300}}}


@pytest.fixture
def api() -> DropletsServer:
    with DropletsServer(tokens={TOKEN}, read_only_tokens={"read-only-token-77"}) as server:
        yield server


@pytest.fixture
def provider(api: DropletsServer) -> DropletsProvider:
    return DropletsProvider(endpoint=api.url, token=TOKEN)


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    f = tmp_path / "droplets-token"
    f.write_text(TOKEN + "\n")
    return f


@pytest.fixture
def droplets_config(api: DropletsServer, token_file: Path, run_config: Callable[..., Path]) -> Callable[..., Path]:
    """``droplets_config(policy, pools=("web",))``: a run configuration with the droplets
    provider on ``api`` (its token from ``token_file``) and a target ``POOL-pool`` per pool."""
    def write(policy: dict = CPU_60, pools: tuple[str, ...] = ("web",)) -> Path:
        return run_config([{"name": f"{pool}-pool", "provider": "droplets", "policy": "web", "ref": {"pool": pool}}
                           for pool in pools],
                          providers={"droplets": {"endpoint": api.url, "token_file": str(token_file)}},
                          policies={"web": policy})
    return write
