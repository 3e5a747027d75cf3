"""Amazon EC2 Auto Scaling (and the CloudWatch alarms it acts on): cases taken
from the providers' documentation.

Each case in ``aws/cases.json`` is one protocol request (docs/protocol.md,
``"semantics": "aws"``) with the answer the documentation implies. ``source`` and
``quote`` say where the numbers come from ("constructed" when the numbers are ours,
checked by hand against the quoted rule); ``gap`` (when present) names the
undocumented choice in ``docs/research/aws.md`` that the case encodes.

``expect`` keys:
  desired_replicas      required
  recommended_replicas  optional
  reason                optional, compared for equality
  error_contains        optional, a substring of the response's ``error``
  metrics               optional list of {"index": i, ...}: ``response["metrics"][i]``
                        must carry each other key with that value (replicas, triggered)
  state_contains        optional object: every key must be in ``response["state"]`` with an
                        equal value (objects compared recursively, as subsets)

``aws/bad_input.json`` holds requests that must be rejected as malformed:
``decide`` raises, and ``scalebridge decide`` exits 2 with one line on stderr; both
messages contain ``error_contains`` (the JSON path of the offending field).
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CASES = json.loads((HERE / "aws" / "cases.json").read_text(encoding="utf-8"))
BAD_INPUT = json.loads((HERE / "aws" / "bad_input.json").read_text(encoding="utf-8"))
CASE_KEYS = {"name", "source", "quote", "gap", "request", "expect"}
EXPECT_KEYS = {"desired_replicas", "recommended_replicas", "reason", "error_contains", "metrics",
               "state_contains"}
BAD_KEYS = {"name", "source", "quote", "request", "error_contains"}


def _decide():
    try:
        from scalebridge import decide
    except ImportError as exc:  # the engine is being written alongside these cases
        pytest.fail(f"scalebridge.decide is not importable yet: {exc}")
    return decide


def _contains(expected, actual, path: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} is missing from {actual!r}"
            _contains(value, actual[key], f"{path}.{key}")
    else:
        assert actual == expected, f"{path}: expected {expected!r}, got {actual!r}"


def test_case_files_are_well_formed():
    names = [c["name"] for c in CASES] + [c["name"] for c in BAD_INPUT]
    assert len(names) == len(set(names)), "case names must be unique"
    assert len(CASES) >= 35
    for case in CASES:
        assert set(case) <= CASE_KEYS, f"{case['name']}: unknown keys {set(case) - CASE_KEYS}"
        assert {"name", "source", "quote", "request", "expect"} <= set(case), case["name"]
        assert case["request"]["semantics"] == "aws", case["name"]
        assert set(case["expect"]) <= EXPECT_KEYS, f"{case['name']}: unknown expect keys"
        assert isinstance(case["expect"]["desired_replicas"], int), case["name"]
    for case in BAD_INPUT:
        assert set(case) == BAD_KEYS, case["name"]
        assert case["request"]["semantics"] == "aws", case["name"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_documented_decision(case: dict) -> None:
    decide = _decide()
    response = decide(copy.deepcopy(case["request"]))
    expect = case["expect"]
    where = f"{case['name']} ({case['source']}; gap {case.get('gap', '-')}): {case['quote']}"

    assert response["desired_replicas"] == expect["desired_replicas"], where
    if "recommended_replicas" in expect:
        assert response["recommended_replicas"] == expect["recommended_replicas"], where
    if "reason" in expect:
        assert response["reason"] == expect["reason"], where
    if "error_contains" in expect:
        assert expect["error_contains"] in (response.get("error") or ""), where
    for want in expect.get("metrics", []):
        entries = response.get("metrics") or []
        i = want["index"]
        assert i < len(entries), f"metrics[{i}] is missing: {where}"
        for key, value in want.items():
            if key != "index":
                assert entries[i].get(key) == value, f"metrics[{i}].{key}: {entries[i]!r}; {where}"
    if "state_contains" in expect:
        _contains(expect["state_contains"], response.get("state") or {}, "state")


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c["name"] for c in BAD_INPUT])
def test_malformed_request_is_rejected(case: dict) -> None:
    decide = _decide()
    try:
        response = decide(copy.deepcopy(case["request"]))
    except Exception as exc:  # noqa: BLE001 - the protocol names the field, not the exception class
        assert case["error_contains"] in str(exc), f"{case['name']} ({case['quote']}): {exc}"
    else:
        pytest.fail(f"{case['name']}: a malformed request was answered: {response!r}")


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c["name"] for c in BAD_INPUT])
def test_cli_exits_2_naming_the_field(case: dict) -> None:
    proc = subprocess.run([sys.executable, "-m", "scalebridge.cli", "decide"],
                          input=json.dumps(case["request"]), capture_output=True, text=True,
                          check=False, timeout=120)
    err = proc.stderr.strip()
    assert proc.returncode == 2, proc.stdout or err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert case["error_contains"] in err, err
