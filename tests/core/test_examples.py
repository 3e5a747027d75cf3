"""The worked examples of docs/protocol.md (examples/requests/*.json), computed by hand."""
import json
from pathlib import Path

import pytest

from scalebridge import decide

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "requests"

# name: (raw proposal, desired, value) — the arithmetic is spelled out in docs/protocol.md
EXPECTED = {
    # 1200m used of 1500m requested = 80%; ceil(3 × 80/50) = ceil(4.8) = 5
    "resource-utilization": (5, 5, "400m"),
    # the same numbers, for the container "app" alone
    "container-resource": (5, 5, "400m"),
    # average 250Mi against 200Mi: ceil(3 × 1.25) = ceil(3.75) = 4
    "resource-average-value": (4, 4, "262144k"),
    # average 25000 against 20000: ceil(3 × 1.25) = 4
    "pods": (4, 4, "25k"),
    # 2400 against 1000 with 3 ready pods: ceil(3 × 2.4) = 8; the default scale-up
    # rate allows max(3 + 4, 2 × 3) = 7 in 15 s
    "object-value": (8, 7, "2400"),
    # 2400 / (500 × 3) = 1.6 is outside tolerance: ceil(2400 / 500) = 5; value per pod ceil(2400/3)
    "object-average-value": (5, 5, "800"),
    # 30 + 70 = 100 against 40: ceil(3 × 2.5) = 8, rate-limited to 7
    "external-value": (8, 7, "100"),
    # 100 / (30 × 3) = 1.11 > 1.1: ceil(100 / 30) = 4; value per pod ceil(100/3) in milli-units
    "external-average-value": (4, 4, "33334m"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_worked_example(name):
    req = json.loads((EXAMPLES / f"{name}.json").read_text())
    raw, desired, value = EXPECTED[name]
    r = decide(req)
    assert r["metrics"][0]["replicas"] == raw
    assert r["desired_replicas"] == desired
    assert r["metrics"][0]["value"] == value
    assert r["error"] is None


def test_every_example_is_covered():
    assert {p.stem for p in EXAMPLES.glob("*.json")} == set(EXPECTED)
