"""Kubernetes HPA upstream unit-test tables, ported to protocol-level conformance cases.

Cases live in ``tests/conformance/kubernetes/{replica_calculator,horizontal}.json``; each is
``{"name", "upstream": "<file>_test.go:<Test>[/<subtest>]", "note"?, "request", "expect"}``.
Tests upstream that the protocol cannot express are listed in ``kubernetes/NOT_PORTED.md``.

``expect`` keys (every key present is asserted):

- ``desired_replicas``, ``recommended_replicas``, ``reason``: equal to the response's field.
- ``error``: ``null`` -> the response's ``error`` is null.
- ``error_contains``: the response's ``error`` is set and contains this substring.
- ``metrics``: a list of ``{"index": i, ...}`` checked against ``response["metrics"][i]``:
  ``replicas`` (raw per-metric proposal), ``utilization`` (integer percent), ``value``
  (a quantity; compared numerically, so ``"1000m"``, ``"1"`` and ``1`` are equal),
  ``error_contains`` (substring of the metric's ``error``), ``has_error`` (the metric's
  ``error`` is set), ``error: null`` (the metric's ``error`` is null).
- ``refused_contains``: the request is refused (a ``RequestError``, as the API server refuses
  the HPA) with a message containing this substring; nothing else is asserted.
- ``state_events``: ``{"key": "scale_up_events"|"scale_down_events", "within_seconds": w,
  "changes": [...]}`` -> the sorted ``change`` values of ``response["state"][key]`` whose
  ``time`` is later than ``now - w`` equal ``changes``.
"""
from __future__ import annotations

import copy
import json
import math
import pathlib
import re
from fractions import Fraction

import pytest

CASE_DIR = pathlib.Path(__file__).parent / "kubernetes"
CASE_FILES = ("replica_calculator.json", "horizontal.json")

_SUFFIXES = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def quantity(value) -> Fraction:
    """A Kubernetes quantity (string) or a JSON number as an exact Fraction of base units."""
    if isinstance(value, bool):
        raise TypeError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value)
    if isinstance(value, str):
        m = _QUANTITY.match(value.strip())
        if not m:
            raise ValueError(f"not a quantity: {value!r}")
        return Fraction(m.group(1)) * _SUFFIXES[m.group(2) or ""]
    raise TypeError(f"not a quantity: {value!r}")


def same_quantity(got, want) -> bool:
    g, w = quantity(got), quantity(want)
    if isinstance(got, float):  # a float response can only be as exact as float64
        return math.isclose(float(g), float(w), rel_tol=1e-12, abs_tol=1e-12)
    return g == w


def _load():
    params, seen = [], set()
    for fname in CASE_FILES:
        for case in json.loads((CASE_DIR / fname).read_text()):
            assert case["name"] not in seen, f"duplicate case name {case['name']!r}"
            seen.add(case["name"])
            params.append(pytest.param(case, id=case["name"]))
    return params


CASES = _load()


@pytest.mark.parametrize("case", CASES)
def test_kubernetes_upstream(case):
    from scalebridge import decide

    request = copy.deepcopy(case["request"])
    exp = case["expect"]
    if "refused_contains" in exp:
        from scalebridge.errors import RequestError
        with pytest.raises(RequestError) as refused:
            decide(request)
        assert exp["refused_contains"] in str(refused.value)
        return
    resp = decide(request)
    where = f"[{case['upstream']}] {case['name']}"
    ctx = f"{where}\nresponse: {json.dumps(resp, default=str)[:2000]}"

    for key in ("desired_replicas", "recommended_replicas", "reason"):
        if key in exp:
            assert resp.get(key) == exp[key], f"{key}: got {resp.get(key)!r}, want {exp[key]!r}\n{ctx}"

    if "error" in exp:
        assert exp["error"] is None, "expect.error may only be null; use error_contains"
        assert resp.get("error") is None, f"unexpected error {resp.get('error')!r}\n{ctx}"
    if "error_contains" in exp:
        err = resp.get("error")
        assert err, f"expected an error containing {exp['error_contains']!r}, got none\n{ctx}"
        assert exp["error_contains"] in err, f"error {err!r} lacks {exp['error_contains']!r}\n{ctx}"

    for m in exp.get("metrics", []):
        i = m["index"]
        metrics = resp.get("metrics") or []
        assert i < len(metrics), f"response has no metrics[{i}]\n{ctx}"
        got = metrics[i]
        if "replicas" in m:
            assert got.get("replicas") == m["replicas"], (
                f"metrics[{i}].replicas: got {got.get('replicas')!r}, want {m['replicas']!r}\n{ctx}")
        if "utilization" in m:
            assert got.get("utilization") == m["utilization"], (
                f"metrics[{i}].utilization: got {got.get('utilization')!r}, want {m['utilization']!r}\n{ctx}")
        if "value" in m:
            assert got.get("value") is not None and same_quantity(got["value"], m["value"]), (
                f"metrics[{i}].value: got {got.get('value')!r}, want {m['value']!r}\n{ctx}")
        if "error" in m:
            assert m["error"] is None, "metrics[].error may only be null; use error_contains/has_error"
            assert got.get("error") is None, f"metrics[{i}]: unexpected error {got.get('error')!r}\n{ctx}"
        if m.get("has_error"):
            assert got.get("error"), f"metrics[{i}]: expected an error\n{ctx}"
        if "error_contains" in m:
            assert got.get("error") and m["error_contains"] in got["error"], (
                f"metrics[{i}].error {got.get('error')!r} lacks {m['error_contains']!r}\n{ctx}")

    if "state_events" in exp:
        se = exp["state_events"]
        events = (resp.get("state") or {}).get(se["key"]) or []
        cutoff = request["now"] - se["within_seconds"]
        changes = sorted(e["change"] for e in events if e["time"] > cutoff)
        assert changes == sorted(se["changes"]), (
            f"state.{se['key']} changes within {se['within_seconds']}s: got {changes}, want {sorted(se['changes'])}\n{ctx}")
