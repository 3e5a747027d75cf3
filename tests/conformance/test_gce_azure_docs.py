"""GCE autoscaler and Azure Monitor autoscale: cases taken from the providers' documentation.

Each case in ``gce/cases.json`` and ``azure/cases.json`` is one protocol request
(docs/protocol.md) with the answer the documentation implies.
``source`` and ``quote`` say where the numbers come from; ``note`` says how the
numbers were checked, and ``gap`` (when present) names the undocumented choice
in ``docs/research/gce.md`` / ``docs/research/azure.md`` that the case encodes.

``expect`` keys:
  desired_replicas      required
  recommended_replicas  optional
  reason, profile       optional, compared for equality
  error_contains        optional, a substring of the response's ``error``
  metrics               optional list of {"index": i, ...}: ``response["metrics"][i]``
                        must carry each other key with that value (replicas, triggered)
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FILES = {"gce": HERE / "gce" / "cases.json", "azure": HERE / "azure" / "cases.json"}
CASE_KEYS = {"name", "source", "quote", "note", "gap", "request", "expect"}
EXPECT_KEYS = {"desired_replicas", "recommended_replicas", "reason", "profile", "error_contains", "metrics"}


def _load() -> list[tuple[str, dict]]:
    out = []
    for semantics, path in FILES.items():
        for case in json.loads(path.read_text(encoding="utf-8")):
            out.append((semantics, case))
    return out


CASES = _load()


def _decide():
    try:
        from scalebridge import decide
    except ImportError as exc:  # the engine is being written alongside these cases
        pytest.fail(f"scalebridge.decide is not importable yet: {exc}")
    return decide


def test_case_files_are_well_formed():
    names = [c["name"] for _, c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    for semantics, case in CASES:
        assert set(case) <= CASE_KEYS, f"{case['name']}: unknown keys {set(case) - CASE_KEYS}"
        assert {"name", "source", "quote", "request", "expect"} <= set(case), case["name"]
        assert case["request"]["semantics"] == semantics, case["name"]
        assert set(case["expect"]) <= EXPECT_KEYS, f"{case['name']}: unknown expect keys"
        assert isinstance(case["expect"]["desired_replicas"], int), case["name"]
    assert sum(1 for s, _ in CASES if s == "gce") >= 25
    assert sum(1 for s, _ in CASES if s == "azure") >= 35


@pytest.mark.parametrize(("semantics", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_documented_decision(semantics: str, case: dict) -> None:
    decide = _decide()
    request = copy.deepcopy(case["request"])
    response = decide(request)
    expect = case["expect"]
    where = f"{case['name']} ({case['source']}): {case.get('note', '')}"

    assert response["desired_replicas"] == expect["desired_replicas"], where
    if "recommended_replicas" in expect:
        assert response["recommended_replicas"] == expect["recommended_replicas"], where
    if "reason" in expect:
        assert response["reason"] == expect["reason"], where
    if "profile" in expect:
        assert response["profile"] == expect["profile"], where
    if "error_contains" in expect:
        assert expect["error_contains"] in (response.get("error") or ""), where
    for want in expect.get("metrics", []):
        got = response["metrics"][want["index"]]
        for key, value in want.items():
            if key != "index":
                assert got.get(key) == value, f"metrics[{want['index']}].{key}: {where}"
    # the request must not be modified by a pure function
    assert request == case["request"], f"decide() mutated its request: {case['name']}"
