"""The distribution's metadata: installing scalebridge printed setuptools' "`project.license` as a
TOML table is deprecated" twice; the license is an SPDX expression (PEP 639), with a setuptools
that reads one (77 and later), and the installed metadata carries it as License-Expression."""
from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_license_is_an_spdx_expression_with_a_setuptools_that_reads_it():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "Apache-2.0"
    [setuptools] = [r for r in pyproject["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", setuptools)
    assert minimum and int(minimum.group(1)) >= 77, setuptools
    assert not any(c.startswith("License ::") for c in pyproject["project"].get("classifiers", ()))  # PEP 639


def test_the_installed_metadata_has_the_license_expression():
    meta = importlib.metadata.metadata("scalebridge")
    assert meta.get("License-Expression") == "Apache-2.0"
