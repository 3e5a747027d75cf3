"""docs/semantics.md's side-by-side table is what `decide --semantics all` answers."""
import json
import re
from pathlib import Path

import pytest

from scalebridge import decide_all

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `([a-z0-9-]+)`: .*?\| (.+) \|$")


def table_rows():
    rows = []
    for line in (ROOT / "docs" / "semantics.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            rows.append((m.group(1), [(int(c.split()[0]), c.split("`")[1]) for c in cells]))
    return rows


ROWS = table_rows()


def test_the_table_covers_every_situation():
    assert sorted(name for name, _ in ROWS) == sorted(p.stem for p in (ROOT / "examples" / "situations").glob("*.json"))


@pytest.mark.parametrize("name,cells", ROWS, ids=[r[0] for r in ROWS])
def test_row(name, cells):
    req = json.loads((ROOT / "examples" / "situations" / f"{name}.json").read_text())
    got = [(r["desired_replicas"], r["reason"]) for r in decide_all(req)]
    assert got == cells
