"""Every run configuration under examples/run validates (providers and targets
built, no cloud called)."""
from __future__ import annotations

from pathlib import Path

import pytest

from scalebridge.controller.configfile import load_config

from scalebridge.controller.build import build

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "run").glob("*.yaml"))


def test_there_is_an_example_per_provider():
    names = {p.stem for p in EXAMPLES}
    assert {"kubernetes", "gce", "azure", "aws", "sim"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_validates(path, scalebridge):
    code, out, err = scalebridge("validate", path)
    # one policy across semantics: what a target's semantics does not read is a warning, never an error
    assert code == 0 and all(": warning: " in line for line in err.splitlines()), err
    runtime = build(load_config(path))
    try:
        assert runtime.targets
        if path.stem in ("kubernetes", "gce", "azure", "aws", "sim"):
            assert {getattr(s.provider, "name", None) for s in runtime.targets} == {path.stem}
    finally:
        runtime.close()
