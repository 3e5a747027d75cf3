"""docs/semantics.md and docs/semantics/*.md against the tool: the side-by-side table is
what ``decide --semantics all`` answers, the conformance counts, the situation files, the
stage functions and the test files the pages name."""

import json
import re
from pathlib import Path

import pytest

from scalebridge import decide_all


ROOT = Path(__file__).resolve().parents[2]


def read(name: str) -> str:
    return (ROOT / name).read_text()


def test_semantics_md_conformance_counts():
    conf = ROOT / "tests" / "conformance"
    n = lambda p: len(json.loads((conf / p).read_text()))  # noqa: E731
    k8s = n("kubernetes/horizontal.json") + n("kubernetes/replica_calculator.json")
    # the pages say how many there are: the files are what they count
    assert f"{k8s} ported upstream test cases" in read("docs/semantics.md")
    assert f"holds {k8s} cases ported" in read("docs/kubernetes.md")
    assert (n("gce/cases.json"), n("azure/cases.json"), n("aws/cases.json"), n("aws/bad_input.json")) == (42, 91, 82, 14)


def test_semantics_md_situation_files_exist():
    names = re.findall(r"^\| `([a-z0-9-]+)`: ", read("docs/semantics.md"), re.M)
    assert len(names) == 8
    for name in names:
        assert (ROOT / "examples" / "situations" / f"{name}.json").exists()


@pytest.mark.parametrize("module,names", [
    ("scalebridge.stages.profiles", ["ProfileTimeline", "active_profile", "recurrence_last_start",
                                     "recurrence_next_start"]),
    ("scalebridge.stages.rules", ["window_points", "aggregate", "aggregate_exact", "rule_value", "compare",
                                  "forecast_fires", "percent_change", "action_result", "evaluate_rule",
                                  "combine_rules"]),
    ("scalebridge.stages.cooldown", ["cooldown_until", "rule_cooldown_until", "last_rule_action",
                                     "remember_rule_action", "forget_expired_rule_action"]),
    ("scalebridge.stages.flapping", ["prevent_flapping", "would_scale_out"]),
    ("scalebridge.stages.alarms", ["datapoints", "breach_test", "evaluate_alarm", "aggregate"]),
    ("scalebridge.stages.steps", ["compile_steps", "select_step", "round_percent", "percent_change",
                                  "new_capacity"]),
    ("scalebridge.stages.warmup", ["resolve_warmup", "GroupCapacity"]),
    ("scalebridge.semantics.aws", ["forecast_at"]),
])
def test_semantics_pages_stage_functions_exist(module, names):
    import importlib
    mod = importlib.import_module(module)
    for n in names:
        assert hasattr(mod, n), (module, n)


def test_semantics_pages_named_tests_exist():
    for p in ("tests/semantics/gce", "tests/semantics/gce/test_cpu_utilization.py",
              "tests/semantics/gce/test_monitoring_metrics.py", "tests/semantics/azure", "tests/semantics/azure/test_invariants.py",
              "tests/semantics/azure/test_default_capacity.py", "tests/semantics/azure/test_profiles.py",
              "tests/semantics/azure/test_metric_aggregation.py", "tests/semantics/azure/test_validation.py", "tests/semantics/aws",
              "tests/semantics/aws/test_invariants.py", "tests/semantics/aws/test_target_tracking.py", "tests/stages/test_rules.py",
              "tests/stages/test_profiles.py", "tests/stages/test_alarms.py", "tests/stages/test_steps.py", "tests/stages/test_warmup.py",
              "core/scalebridge/semantics/kubernetes_replicas.py", "tests/docs/test_protocol_md.py", "tests/docs/test_semantics_md.py",
              "tests/known_divergences.py"):
        assert (ROOT / p).exists(), p


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
