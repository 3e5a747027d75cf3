"""README.md against the tool, and a new user's walkthrough of README.md and docs/ through
the installed command: ``decide --semantics all``, validating and deciding rule
policies, ``compare`` on a real trace, AWS reading a sample without requests."""
from __future__ import annotations

import copy
import re
import json
import subprocess
from pathlib import Path

import pytest

import scalebridge
from scalebridge import decide_all


ROOT = Path(__file__).resolve().parents[2]


REQUESTS = ROOT / "examples" / "requests"


def request(name: str) -> dict:
    return json.loads((REQUESTS / name).read_text())


def test_readme_decide_all_gives_one_response_per_builtin():
    got = [r["semantics"] for r in decide_all(request("pods.json"))]
    assert got[:5] == ["kubernetes", "gce", "azure", "aws", "scalebridge"]


def test_readme_python_api_decider_with_dict_policy():
    req = request("pods.json")
    assert scalebridge.decide(req)["desired_replicas"] == 4
    decider = scalebridge.Decider(req["policy"], "kubernetes")
    from scalebridge.protocol import Request
    obs = Request.model_validate(req).observations
    assert decider.step(req["now"], 3, obs).desired == 4


def test_readme_cross_references_exist():
    for p in ("docs/policy.md", "docs/protocol.md", "docs/kubernetes.md", "docs/semantics.md", "docs/simulation.md",
              "docs/predictive.md", "docs/plugins.md", "core/scalebridge/hookspecs.py",
              "benchmarks/decide.py", "benchmarks/simulate.py", "benchmarks/frontier.py",
              "benchmarks/forecast_accuracy.py", "examples/requests/object-value.json",
              "examples/policies/web.yaml", "examples/simulate/policy.yaml", "examples/predictive/policy.yaml"):
        assert (ROOT / p).exists(), p


CLI = [str(ROOT / ".venv" / "bin" / "scalebridge")]


TRACE = ROOT / "examples" / "traces" / "worldcup98_day46-47.csv"     # shipped, with its notice


SCALE_OUT = ROOT / "examples" / "situations" / "scale-out.json"


WEB_YAML = """\
name: web
min_replicas: 2
max_replicas: 60
metrics:
  - type: resource
    name: cpu
    target: {type: Utilization, average_utilization: 60}
"""


AZURE_YAML = """\
name: web-azure
min_replicas: 2
max_replicas: 20
rules:
  - metric: cpu
    statistic: Average
    time_grain_seconds: 60
    time_window_seconds: 5m
    time_aggregation: Average
    operator: GreaterThan
    threshold: 70
    action: {direction: Increase, type: ChangeCount, value: 2, cooldown_seconds: 5m}
  - metric: cpu
    statistic: Average
    time_grain_seconds: 60
    time_window_seconds: 10m
    time_aggregation: Average
    operator: LessThan
    threshold: 30
    action: {direction: Decrease, type: ChangeCount, value: 1, cooldown_seconds: 5m}
"""


AWS_YAML = """\
name: web-aws
min_replicas: 2
max_replicas: 20
rules:
  - metric: cpu
    statistic: Average
    operator: GreaterThanOrEqual
    threshold: 70
    adjustment_type: ChangeInCapacity
    steps:
      - {lower: 0, upper: 15, adjustment: 1}
      - {lower: 15, upper: null, adjustment: 3}
    datapoints_to_alarm: 3
  - metric: cpu
    statistic: Average
    operator: LessThan
    threshold: 30
    adjustment_type: ChangeInCapacity
    steps:
      - {lower: null, upper: 0, adjustment: -1}
"""


NOW = 1767225600


def _web_request(requests: bool = True) -> dict:
    """4 members at 90% CPU (0.9 cores of a 1-core request), CPU target 60%, bounds 2-20."""
    members = []
    for i in range(4):
        m = {"name": f"vm-{i}", "phase": "Running", "ready": True,
             "start_time": NOW - 7200, "ready_transition_time": NOW - 7000}
        if requests:
            m["requests"] = {"cpu": 1}
        members.append(m)
    return {
        "now": NOW,
        "current_replicas": 4,
        "policy": {"name": "web", "min_replicas": 2, "max_replicas": 20,
                   "metrics": [{"type": "resource", "name": "cpu",
                                "target": {"type": "Utilization", "average_utilization": 60}}]},
        "observations": {"members": members,
                         "metrics": {"cpu": {"members": {f"vm-{i}": 0.9 for i in range(4)},
                                             "timestamp": NOW - 15, "window": 60}}},
        "state": {"recommendations": []},
    }


def _run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_decide_all_semantics_cli(tmp_path):
    req = tmp_path / "req.json"
    req.write_text(json.dumps(_web_request()))
    proc = _run("decide", "--semantics", "all", str(req))
    assert proc.returncode == 0, proc.stderr
    got = {d["semantics"]: (d["desired_replicas"], d["reason"])
           for d in map(json.loads, proc.stdout.splitlines())}
    # as docs/semantics.md's `scale-out` row: Azure has no target metrics
    assert got == {"kubernetes": (6, "DesiredWithinRange"), "gce": (6, "DesiredWithinRange"),
                   "azure": (4, "DesiredWithinRange"), "aws": (6, "DesiredWithinRange"),
                   "scalebridge": (6, "DesiredWithinRange")}


def test_validate_rule_policies(tmp_path):
    (tmp_path / "azure.yaml").write_text(AZURE_YAML)
    (tmp_path / "aws.yaml").write_text(AWS_YAML)
    ok = _run("validate", "--semantics", "all", str(tmp_path / "azure.yaml"))
    assert ok.returncode == 0, ok.stderr
    ok = _run("validate", "--semantics", "aws", str(tmp_path / "aws.yaml"))
    assert ok.returncode == 0, ok.stderr
    # step scaling cannot run under azure or scalebridge: every such semantics is named
    bad = _run("validate", "--semantics", "all", str(tmp_path / "aws.yaml"))
    assert bad.returncode == 2
    assert "azure:" in bad.stderr and "scalebridge:" in bad.stderr
    assert "aws:" not in bad.stderr


def test_rule_policies_decide_on_scale_out_situation():
    import yaml

    base = json.loads(SCALE_OUT.read_text())  # 4 members at 90% CPU, per-minute series of 90
    azure = copy.deepcopy(base)
    azure["policy"] = yaml.safe_load(AZURE_YAML)
    assert scalebridge.decide(azure, semantics="azure")["desired_replicas"] == 6  # 4 + 2
    aws = copy.deepcopy(base)
    aws["policy"] = yaml.safe_load(AWS_YAML)
    resp = scalebridge.decide(aws, semantics="aws")
    assert resp["desired_replicas"] == 7  # 90 - 70 = 20 >= 15: the second step, +3


def test_compare_worldcup_day_units(tmp_path):
    (tmp_path / "web.yaml").write_text(WEB_YAML)
    proc = _run("compare", str(tmp_path / "web.yaml"), "--trace", str(TRACE), "--scale", "1/60",
                "--unit", "requests/s", "--capacity", "50", "--startup", "120",
                "--duration", "6h", "-s", "kubernetes,aws", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["workload"]["unit"] == "requests/s"
    assert out["workload"]["scale"] == pytest.approx(1 / 60)
    assert out["workload"]["ticks"] == 6 * 3600 // 15
    assert out["oracle"][0]["underprovisioned_seconds"] == 0  # 60 members x 50 req/s cover the peak
    assert {r["semantics"] for r in out["runs"]} == {"kubernetes", "aws"}
    assert all(r["errors"] == 0 for r in out["runs"])


def test_aws_reads_a_sample_without_requests_as_a_percent():
    """docs/semantics/aws.md (G19): under `aws` a member's sample without `requests` is read as a
    utilization percent already (CloudWatch's CPUUtilization is one); the other semantics need
    the request. The walkthrough's 0.9 cores without requests therefore reads as 0.9 %: give
    `requests` when the samples are usage."""
    resp = scalebridge.decide(_web_request(requests=False), semantics="aws")
    assert resp["metrics"][0]["error"] is None and resp["desired_replicas"] < 4
    assert scalebridge.decide(_web_request(requests=True), semantics="aws")["desired_replicas"] == 6


def test_readme_run_section_names_what_exists():
    text = (ROOT / "README.md").read_text()
    for p in ("docs/run.md", "docs/architecture.md", "docs/providers/kubernetes.md", "docs/providers/gce.md",
              "docs/providers/azure.md", "docs/providers/aws.md", "examples/run/demo.yaml",
              "examples/run/kubernetes.yaml", "examples/run/aws.yaml", "examples/run/gce.yaml",
              "examples/run/azure.yaml", "deploy/Dockerfile", "benchmarks/run.py"):
        assert (ROOT / p).exists(), p
    for cmd in ("scalebridge run", "scalebridge observe", "scalebridge state show", "scalebridge validate"):
        assert cmd in text


def test_readme_virtual_clock_command_runs(tmp_path):
    out = subprocess.run(CLI + ["run", str(ROOT / "examples" / "run" / "demo.yaml"), "--clock", "virtual",
                                "--until", "5m", "--state", str(tmp_path / "s.db"), "--audit", "-"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert records and {r["action"] for r in records} <= {"applied", "unchanged"}


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_links_every_page_under_docs():
    """A newcomer found no link to docs/translate.md or docs/known-divergences.md in the README:
    every page under docs/ is linked from it."""
    links = set(re.findall(r"\]\((docs/[^)#\s]+)\)", (ROOT / "README.md").read_text()))
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert sorted(pages - links) == []
    assert all((ROOT / link).exists() for link in links), sorted(link for link in links if not (ROOT / link).exists())


def test_readme_using_it_shows_every_way_of_applying_a_policy():
    """README's "Using it" omitted render, import and apply: it shows each command a newcomer
    applies a policy with, each as a command line."""
    section = _section((ROOT / "README.md").read_text(), "Using it")
    shown = [line.strip() for line in section.splitlines() if line.strip().startswith("scalebridge ")]
    for words in (["render", "--to"], ["import", "--from"], ["apply"], ["run", "--once"],
                  ["run", "--clock", "virtual"], ["observe"], ["state", "show", "--state"],
                  ["state", "show", "--config"], ["validate"], ["decide"], ["simulate"], ["compare"]):
        assert any(line.split()[1] == words[0] and all(w in line.split() for w in words) for line in shown), words
    assert "docs/translate.md" in section and "docs/run.md" in section
