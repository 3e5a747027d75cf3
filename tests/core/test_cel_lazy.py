"""CEL is imported lazily (core/scalebridge/cel.py): ``import scalebridge`` and a decision
of a policy without formulas never load the binding; a formula loads it."""
import subprocess
import sys

import pytest

PLAIN = {"now": 1000.0, "current_replicas": 2, "observations": {"metrics": {"queue": {"value": 50}}},
         "policy": {"max_replicas": 10, "fallback": {"replicas": 3}, "min_replicas": 0,
                    "metrics": [{"type": "external", "name": "queue", "activation_threshold": 1,
                                 "target": {"type": "AverageValue", "average_value": 10}}]}}
FORMULA = {**PLAIN, "policy": {**PLAIN["policy"], "metrics": PLAIN["policy"]["metrics"] + [
    {"type": "formula", "name": "half", "expression": "queue / 2.0", "target": {"type": "Value", "value": 5}}]}}


def loaded(code: str) -> set:
    """The CEL modules ``python -X importtime -c code`` imported (its stderr)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True)
    return {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
            if "cel_expr_python" in line.rsplit("|", 1)[-1]}


def test_import_scalebridge_does_not_load_cel():
    assert loaded("import scalebridge") == set()


@pytest.mark.parametrize("request_, cel", [(PLAIN, False), (FORMULA, True)])
def test_only_a_formula_loads_cel(request_, cel):
    names = loaded(f"import scalebridge; scalebridge.decide({request_!r})")
    assert bool(names) is cel, names
