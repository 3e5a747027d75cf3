"""A flag's bad value is one line on stderr, ``scalebridge COMMAND: --flag: why``, exit 2
— the shape of the commands' other bad-input lines — while a flag argparse cannot place
(unknown, or without its value) keeps argparse's usage block, which is the answer there.

Source: docs/policy.md (simulate's flag ranges), docs/run.md (run's flags); argparse's
exit status 2 (https://docs.python.org/3/library/argparse.html#exiting-methods)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scalebridge.cli import main

ROOT = Path(__file__).resolve().parents[2]
POLICY = str(ROOT / "examples/policies/web.yaml")
CONFIG = str(ROOT / "examples/run/sim.yaml")


def _stderr_of_refusal(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    captured = capsys.readouterr()
    assert e.value.code == 2, captured.err
    assert captured.out == ""
    return captured.err


@pytest.mark.parametrize("argv, flag, why", [
    (["simulate", POLICY, "--tick", "999999999999999999999999s"], "--tick", "at most 1e+11 seconds"),
    (["simulate", POLICY, "--tick", "soon"], "--tick", "invalid duration 'soon'"),
    (["simulate", POLICY, "--offset=-5"], "--offset", "zero or more seconds"),
    (["simulate", POLICY, "--workload", "tsunami"], "--workload", "invalid choice: 'tsunami'"),
    (["simulate", POLICY, "--seed", "1.5"], "--seed", "'1.5'"),
    (["simulate", POLICY, "--scale", "1/0"], "--scale", "a fraction like 1/60"),
    (["compare", POLICY, "--capacity", "-1"], "--capacity", "expected a positive number, got '-1'"),
    (["compare", POLICY, "--price", "nan"], "--price", "expected a price of 0 or more, got 'nan'"),
    (["run", CONFIG, "--until", "0"], "--until", "more than 0 seconds"),
    (["run", CONFIG, "--metrics-port", "65536"], "--metrics-port", "0-65535, got '65536'"),
    (["run", CONFIG, "--workers", "257"], "--workers", "from 1 to 256, got '257'"),
    (["run", CONFIG, "--log-format", "xml"], "--log-format", "invalid choice: 'xml'"),
    (["observe", CONFIG, "--output", "yaml"], "--output/-o", "invalid choice: 'yaml'"),
    (["render", POLICY, "--to", "openstack"], "--to", "invalid choice: 'openstack'"),
])
def test_a_bad_flag_value_is_one_line_naming_the_command_and_flag(capsys, argv, flag, why):
    err = _stderr_of_refusal(capsys, argv)
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"scalebridge {argv[0]}: {flag}: ") and why in err, err


@pytest.mark.parametrize("argv, why", [
    (["simulate", POLICY, "--tick"], "argument --tick: expected one argument"),
    (["run"], "the following arguments are required: CONFIG"),
    (["simulate", POLICY, "--tik", "15"], "unrecognized arguments: --tik"),
])
def test_a_flag_out_of_place_keeps_the_usage(capsys, argv, why):
    err = _stderr_of_refusal(capsys, argv)
    assert err.startswith("usage: scalebridge") and why in err.splitlines()[-1], err


def test_the_installed_command_says_an_out_of_range_tick_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", "simulate", POLICY, "--tick",
                           "999999999999999999999999s"], capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == ["scalebridge simulate: --tick: a duration must be finite and at most "
                                        "1e+11 seconds"]
