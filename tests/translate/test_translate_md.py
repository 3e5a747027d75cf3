"""docs/translate.md's worked example is what ``render`` writes: each of the four
configurations (and the KEDA ScaledObject) and its note and loss lines, as the page shows them."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from scalebridge.translate import dump, render

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "translate.md").read_text(encoding="utf-8")
EXAMPLE = PAGE.split("## Worked example, five ways", 1)[1]
POLICY = yaml.safe_load(re.search(r"```yaml\n(.*?)```", EXAMPLE, re.S).group(1))


def _section(provider: str) -> tuple[str, str, list[str]]:
    head = re.search(rf"### `--to {provider} --target '(.*?)'`\n\n```\w+\n(.*?)```\n\n```\n(.*?)```", EXAMPLE, re.S)
    return head.group(1), head.group(2), head.group(3).splitlines()


@pytest.mark.parametrize("provider", ["kubernetes", "gce", "azure", "aws", "keda"])
def test_the_worked_example_is_what_render_writes(provider):
    target, shown, lost = _section(provider)
    native, losses = render(POLICY, provider, yaml.safe_load(target))
    text = dump(native, provider)
    if provider in ("kubernetes", "keda"):
        assert yaml.safe_load(shown) == yaml.safe_load(text)
    else:
        assert json.loads(shown) == json.loads(text)
    assert lost == [f"scalebridge render: note: {line}" for line in losses.notes] + \
        [f"scalebridge render: lost: {line}" for line in losses.lines]
