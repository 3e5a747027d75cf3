"""Helpers for the controller's tests: run configurations written to a temporary
directory, and the ``scalebridge`` command run in-process."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
import yaml

from scalebridge.cli import main

FAKE = "scalebridge.testing.fake:FakeProvider"

CPU_POLICY = {"min_replicas": 1, "max_replicas": 20,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 60}}]}


def config_text(targets: list[dict], *, providers: dict | None = None, policies: dict | None = None,
                **top) -> str:
    providers = {"fake": {"type": FAKE}} if providers is None else providers
    policies = {"web": CPU_POLICY} if policies is None else policies
    body = {**top, "providers": providers, "policies": policies,
            "targets": [{"provider": "fake", "policy": "web", **t} for t in targets]}
    return yaml.safe_dump(body, sort_keys=False)


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    n = iter(range(10_000))

    def write(targets_or_text, **kwargs) -> Path:
        p = tmp_path / f"run-{next(n)}.yaml"
        p.write_text(targets_or_text if isinstance(targets_or_text, str) else config_text(targets_or_text, **kwargs))
        return p

    return write


@pytest.fixture
def scalebridge(capsys) -> Callable[..., tuple[int, str, str]]:
    """``scalebridge(*args)`` → (exit status, stdout, stderr), in-process."""
    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run
