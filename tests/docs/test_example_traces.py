"""The traces the documents replay ship in examples/traces/, each small, each named in the
directory's notice with its source and its terms, the World Cup logs' Copyright and Disclaimer
beside them unmodified (as their terms require)."""
from __future__ import annotations

from pathlib import Path

from scalebridge.simulator.traces import read_trace

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "examples" / "traces"


def test_each_example_trace_is_small_readable_and_has_its_notice():
    notice = (TRACES / "README.md").read_text()
    csvs = sorted(TRACES.glob("*.csv"))
    assert [p.name for p in csvs] == ["azure_llm_code_2024-05-10_00-06.csv", "nasa_http_1995-07-13.csv",
                                      "worldcup98_day46-47.csv"]
    for path in csvs:
        assert path.stat().st_size < 100_000, path.name
        assert f"## `{path.name}`" in notice and "**Terms:**" in notice.split(f"## `{path.name}`", 1)[1], path.name
        trace = read_trace(path)
        assert len(trace.times) == sum(1 for _ in path.open()) - 1
        assert set(int(t) for t in (trace.times[1:] - trace.times[:-1])) == {60}   # one row a minute, no gap
        row = next(line for line in notice.splitlines() if line.startswith(f"| `{path.name}`"))
        assert f"| {len(trace.times):,} |" in row, row
        assert f"| {int(trace.values.sum()):,} |" in row, row


def test_the_world_cup_notice_is_distributed_with_its_trace():
    text = (TRACES / "WORLDCUP98_NOTICE.txt").read_text()
    assert "You have permission to use and redistribute these access logs freely" in text
    assert "Copyright (C) 1997, 1998, 1999 Hewlett-Packard Company" in text
    assert "non-commercial purposes only" in text
