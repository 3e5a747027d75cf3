"""docs/known-divergences.md and tests/known_divergences.py list the same divergences, each
with the page that decides, and each is asserted by exactly one test marked with its id."""
import re
from pathlib import Path

from tests.known_divergences import DIVERGENCES

ROOT = Path(__file__).resolve().parents[2]


def test_every_known_divergence_is_listed_and_asserted_once():
    page = (ROOT / "docs" / "known-divergences.md").read_text()
    listed = re.findall(r"^\| `([a-z0-9-]+)` \|", page, re.M)
    assert sorted(listed) == sorted(DIVERGENCES)
    marks: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("*.py"):
        for key in re.findall(r'pytest\.mark\.divergence\("([a-z0-9-]+)"\)', path.read_text()):
            marks.setdefault(key, []).append(str(path.relative_to(ROOT)))
    assert {k: len(v) for k, v in marks.items()} == {k: 1 for k in DIVERGENCES}, marks
    for key, (where,) in marks.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{key}` |"))
        assert f"`{where}`" in row, (key, where)
