"""Helpers for the controller's tests: run configurations written to a temporary
directory, and the ``scalebridge`` command run in-process."""
from __future__ import annotations

import os
import subprocess
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


@pytest.fixture
def tmpfs(tmp_path):
    """A small tmpfs of its own (a disk that fills, a file system that turns
    read-only), where the test may mount one (root); else the test is skipped."""
    where = tmp_path / "mnt"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root (the full-disk and read-only cases use one)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(where: Path, leave: int = 0) -> Path:
    """Fill the file system at ``where`` but ``leave`` bytes; the filler file."""
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    if leave:
        size = os.fstat(fd).st_size
        os.ftruncate(fd, max(0, size - leave))
    os.close(fd)
    return filler
