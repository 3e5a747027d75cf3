"""``scalebridge demo``'s main part: the controller on sim targets, a bar per target
on a terminal, nothing but the table when the output is not one."""
from __future__ import annotations

from pathlib import Path

import yaml
from rich.console import Console

from scalebridge.demo import RUN_CONFIG, run_controller_demo


def short_config(tmp_path: Path, until_hours: float = 1.0) -> Path:
    """examples/run/demo.yaml with each fleet's load cut to ``until_hours``."""
    spec = yaml.safe_load(RUN_CONFIG.read_text(encoding="utf-8"))
    for t in spec["targets"]:
        t["ref"] = {**t["ref"], "duration": f"{until_hours:g}h", "param": {"at_seconds": 900}}
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def test_every_target_decides_what_simulate_decides_and_the_table_says_so(tmp_path: Path) -> None:
    console = Console(record=True, width=140, force_terminal=False)
    assert run_controller_demo(console, short_config(tmp_path), until="1h")
    text = console.export_text()
    rows = [line for line in text.splitlines() if line.startswith("│ web-on-")]
    assert len(rows) == 5 and all("✓" in row and "240" in row for row in rows), text
    assert " in " not in text.split("decisions")[1].split(";")[0]   # no wall-clock time off a terminal


def test_on_a_terminal_the_live_bars_run_and_go(tmp_path: Path) -> None:
    console = Console(record=True, width=140, force_terminal=True, color_system=None)
    assert run_controller_demo(console, short_config(tmp_path), until="1h")
    text = console.export_text()
    assert text.count("✓") == 5 and "decisions in " in text


def test_a_failing_run_is_reported_not_raised(tmp_path: Path) -> None:
    spec = yaml.safe_load(RUN_CONFIG.read_text(encoding="utf-8"))
    spec["targets"][0]["ref"] = {"workload": "flash_crowd", "capacity": 10}   # no startup
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    console = Console(record=True, width=140)
    assert not run_controller_demo(console, path, until="1h")
    text = console.export_text()
    assert "scalebridge run failed" in text and "ref.startup" in text
