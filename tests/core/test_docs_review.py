"""Doc claims checked against behaviour (README.md, docs/*.md, docs/semantics/*.md).

Each test pins one statement a page makes. A confirmed mismatch asserts what
the doc says and is a strict xfail naming the mismatch.
"""
import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scalebridge
from scalebridge import cli, decide, decide_all
from scalebridge.errors import PolicyError
from scalebridge.policyfile import load_policy_file, parse_policy_text

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REQUESTS = ROOT / "examples" / "requests"


def read(name: str) -> str:
    return (ROOT / name).read_text()


def yaml_blocks(name: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", read(name), re.S)


def request(name: str) -> dict:
    return json.loads((REQUESTS / name).read_text())


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


BOUNDS = "name: t\nmin_replicas: 1\nmax_replicas: 20\n"


# --- docs/protocol.md: worked examples, one per metric type -------------------------------

WORKED = [
    # file, desired, reason, metrics[0].replicas, metrics[0].value   (docs/protocol.md)
    ("resource-utilization.json", 5, "DesiredWithinRange", 5, "400m"),
    ("container-resource.json", 5, "DesiredWithinRange", 5, "400m"),
    ("resource-average-value.json", 4, "DesiredWithinRange", 4, "262144k"),
    ("pods.json", 4, "DesiredWithinRange", 4, None),
    ("object-value.json", 7, "ScaleUpLimit", 8, None),
    ("object-average-value.json", 5, "DesiredWithinRange", 5, "800"),
    ("external-value.json", 7, "ScaleUpLimit", 8, None),
    ("external-average-value.json", 4, "DesiredWithinRange", 4, None),
]


@pytest.mark.parametrize("name,desired,reason,raw,value", WORKED, ids=[w[0] for w in WORKED])
def test_protocol_worked_example(name, desired, reason, raw, value):
    resp = decide(request(name))
    assert (resp["desired_replicas"], resp["reason"], resp["error"]) == (desired, reason, None)
    assert resp["metrics"][0]["replicas"] == raw
    if value is not None:
        assert resp["metrics"][0]["value"] == value


def test_protocol_examples_share_the_described_setup():
    # "3 running, ready pods, state: {recommendations: []} ... a present, empty behavior"
    for p in sorted(REQUESTS.glob("*.json")):
        req = json.loads(p.read_text())
        assert req["semantics"] == "kubernetes" and req["current_replicas"] == 3
        assert req["state"] == {"recommendations": []} and req["policy"]["behavior"] == {}
        members = req["observations"]["members"]
        assert len(members) == 3 and all(m["phase"] == "Running" and m["ready"] for m in members)


def test_protocol_resource_utilization_response_shape():
    resp = decide(request("resource-utilization.json"))
    assert resp["metrics"] == [{"name": "cpu", "replicas": 5, "utilization": 80, "value": "400m", "error": None}]
    assert resp["profile"] is None and resp["able_to_scale"] is True
    assert resp["recommended_replicas"] == 5
    assert resp["state"]["recommendations"] == [{"time": 1767225600, "replicas": 5}]
    assert resp["state"]["scale_up_events"] == [{"time": 1767225600, "change": 2, "cause": "metric"}]


def test_protocol_policy_snippet_matches_example_file():
    snippet = json.loads(re.search(r"```json\n(\{\"type\": \"resource\".*?)\n```", read("docs/protocol.md")).group(1))
    assert request("resource-utilization.json")["policy"]["metrics"] == [snippet]


def test_protocol_malformed_request_messages(capsys, tmp_path):
    # docs/protocol.md: exit 2, one stderr line naming the JSON path (stdin form)
    bad = request("resource-utilization.json")
    bad["observations"]["members"][1]["ready"] = "yes"
    with pytest.raises(scalebridge.RequestError) as e:
        decide(bad)
    assert str(e.value) == "$.observations.members[1].ready: Input should be a valid boolean, got a string 'yes'"
    bad = request("resource-utilization.json")
    bad["policy"]["max_replica"] = 5
    with pytest.raises(scalebridge.RequestError) as e:
        decide(bad)
    assert str(e.value) == "$.policy.max_replica: unknown field (not part of the protocol; check its spelling)"


def test_protocol_json_lines_errors_and_exit_status(capsys, tmp_path):
    good = json.dumps(request("pods.json"))
    typo = json.dumps(request("pods.json")).replace('"now"', '"nwo"')
    f = tmp_path / "reqs.jsonl"
    f.write_text("\n".join([good, typo, good, "{'a': 1}", good]) + "\n")
    rc, out, err = run_main(capsys, "decide", str(f))
    assert rc == 2
    assert len(out.splitlines()) == 3
    assert err.splitlines() == [
        "scalebridge decide: line 2: $.nwo: unknown field; did you mean 'now'?",
        "scalebridge decide: line 4: $: invalid JSON at column 2: Expecting property name enclosed in double quotes",
    ]


def test_protocol_array_and_non_utf8(capsys, tmp_path):
    f = tmp_path / "arr.json"
    f.write_text(json.dumps([request("pods.json"), request("pods.json")], indent=1))
    rc, out, _ = run_main(capsys, "decide", str(f))
    assert rc == 0 and len(out.splitlines()) == 2
    g = tmp_path / "bin.json"
    g.write_bytes(b"\xff\xfe{}\n")
    rc, out, err = run_main(capsys, "decide", str(g))
    assert rc == 2 and out == "" and len(err.splitlines()) == 1


def test_protocol_huge_number_is_that_requests_error(capsys, tmp_path):
    # docs/protocol.md: "a number no arithmetic survives (1e308 members' worth of load) is that
    # request's error" -- exit 2, the other requests still decided. Holds at HEAD (95bb3ae); the
    # uncommitted engine.py change that wraps a semantics' exception ("semantics ... failed", exit 1)
    # turns this OverflowError into an internal error.
    big = request("pods.json")
    for k in ("web-0", "web-1"):
        big["observations"]["metrics"]["websocket_connections"]["members"][k] = 1e308
    f = tmp_path / "big.jsonl"
    f.write_text(json.dumps(big) + "\n" + json.dumps(request("pods.json")) + "\n")
    rc, out, err = run_main(capsys, "decide", str(f))
    assert rc == 2 and len(out.splitlines()) == 1 and err.startswith("scalebridge decide: line 1: ")


def test_protocol_semantics_all_with_unrunnable_policy():
    req = request("pods.json")
    del req["policy"]["min_replicas"]
    req["state"] = {"recommendations": [{"time": 1767225500, "replicas": 3}]}
    by = {r["semantics"]: r for r in decide_all(req)}
    for name in ("gce", "aws"):
        r = by[name]
        assert r["error"] and r["reason"] == "InvalidMetrics"
        assert r["desired_replicas"] == r["current_replicas"] == 3
        assert r["state"]["recommendations"] == [{"time": 1767225500, "replicas": 3}]
    assert by["kubernetes"]["error"] is None and by["kubernetes"]["desired_replicas"] == 4


# --- README.md --------------------------------------------------------------------------

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


# --- docs/policy.md ---------------------------------------------------------------------

@pytest.mark.parametrize("i", range(5))
def test_policy_md_yaml_blocks_validate(i):
    blocks = yaml_blocks("docs/policy.md")
    assert len(blocks) == 5
    parse_policy_text(BOUNDS + blocks[i], f"block{i}.yaml")


def test_policy_md_example_files_validate_under_every_semantics(capsys):
    rc, out, err = run_main(capsys, "validate", "--semantics", "all", "examples/policies/web.yaml",
                            "examples/simulate/policy.yaml", "examples/predictive/policy.yaml",
                            "examples/predictive/count-noise.yaml")
    assert rc == 0 and err == ""


def _bad_policy(tmp_path) -> Path:
    f = tmp_path / "policy.yaml"
    f.write_text("name: web\nmin_replicas: 2\nmax_replica: 10\nmetrics:\n  - type: resource\n    name: cpu\n"
                 "    target: {type: Utilization, average_utilization: sixty}\n")
    return f


def test_policy_md_validate_reports_every_problem_with_position(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _bad_policy(tmp_path)
    rc, _, err = run_main(capsys, "validate", "policy.yaml")
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 2
    assert lines[0].startswith("policy.yaml:3:1: policy.max_replica: unknown field 'max_replica'; "
                               "did you mean 'max_replicas'?")
    assert lines[1] == ("policy.yaml:7:54: policy.metrics[0].target.average_utilization: "
                        "expected a number, got a string 'sixty'")


def test_policy_md_unknown_field_message_punctuation(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _bad_policy(tmp_path)
    _, _, err = run_main(capsys, "validate", "policy.yaml")
    assert "did you mean 'max_replicas'? valid fields here: " in err.splitlines()[0]


def test_policy_md_validate_semantics_all_names_every_semantics(capsys, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmax_replicas: 10\n")
    rc, _, err = run_main(capsys, "validate", "--semantics", "all", str(f))
    assert rc == 2
    assert "gce semantics" in err and "aws semantics" in err


@pytest.mark.parametrize("semantics", ["gce", "aws"])
def test_policy_md_gce_and_aws_need_min_replicas(capsys, tmp_path, semantics):
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmax_replicas: 10\n")
    rc, _, err = run_main(capsys, "validate", "--semantics", semantics, str(f))
    assert rc == 2 and "$.policy.min_replicas" in err


def test_policy_md_max_replicas_unbounded_under_aws_required_under_scalebridge(capsys, tmp_path):
    """docs/policy.md: max_replicas is "required by kubernetes, gce and scalebridge, and by azure
    when there are no profiles ...; aws: absent = unbounded"."""
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmin_replicas: 1\n")
    assert run_main(capsys, "validate", "--semantics", "aws", str(f))[0] == 0
    for semantics in ("scalebridge", "azure"):
        rc, _, err = run_main(capsys, "validate", "--semantics", semantics, str(f))
        assert rc == 2 and "$.policy.max_replicas" in err, semantics


@pytest.mark.parametrize("semantics", ["kubernetes", "gce"])
def test_policy_md_max_replicas_required_by(capsys, tmp_path, semantics):
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nmin_replicas: 1\n")
    rc, _, err = run_main(capsys, "validate", "--semantics", semantics, str(f))
    assert rc == 2 and "$.policy.max_replicas" in err


def test_policy_md_values():
    p = parse_policy_text(BOUNDS + "mode: OFF\ninitialization_period_seconds: 1h30m\nbehavior:\n"
                          "  scale_down: {stabilization_window_seconds: PT5M}\n"
                          "metrics:\n  - type: resource\n    name: memory\n"
                          "    target: {type: AverageValue, average_value: 1Gi}\n")
    assert p.mode == "OFF"
    for bad in ("min_replicas: \"4\"", "min_replicas: yes"):
        with pytest.raises(PolicyError):
            parse_policy_text(f"name: t\nmax_replicas: 10\n{bad}\n")
    with pytest.raises(PolicyError, match="duplicate key"):
        parse_policy_text("name: t\nmax_replicas: 10\nmax_replicas: 12\n")


def test_policy_md_yaml_tag_is_a_policy_problem(tmp_path):
    f = tmp_path / "tag.yaml"
    f.write_text("name: x\nmin_replicas: 1\nmax_replicas: !!python/object:os.system 1\n")
    with pytest.raises(PolicyError):
        load_policy_file(f)


# --- docs/semantics.md ------------------------------------------------------------------

def test_semantics_md_conformance_counts():
    conf = ROOT / "tests" / "conformance"
    n = lambda p: len(json.loads((conf / p).read_text()))  # noqa: E731
    assert n("kubernetes/horizontal.json") + n("kubernetes/replica_calculator.json") == 246
    assert (n("gce/cases.json"), n("azure/cases.json"), n("aws/cases.json"), n("aws/bad_input.json")) == (42, 90, 82, 14)


def test_semantics_md_situation_files_exist():
    names = re.findall(r"^\| `([a-z0-9-]+)`: ", read("docs/semantics.md"), re.M)
    assert len(names) == 8
    for name in names:
        assert (ROOT / "examples" / "situations" / f"{name}.json").exists()


# --- docs/kubernetes.md -----------------------------------------------------------------

def _k8s(mod) -> dict:
    r = request("resource-utilization.json")
    mod(r)
    return decide(r)


def test_kubernetes_md_missing_request_message():
    resp = _k8s(lambda r: r["observations"]["members"][0].pop("requests"))
    assert resp["reason"] == "InvalidMetrics" and resp["desired_replicas"] == 3
    assert "missing request for cpu in Pod web-0" in resp["error"]


def test_kubernetes_md_invalid_metrics_message():
    def two(r):
        r["policy"]["metrics"].append({"type": "pods", "name": "nosuch",
                                       "target": {"type": "AverageValue", "average_value": 10}})
        r["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "100m" for i in range(3)}
    resp = _k8s(two)
    assert resp["error"].startswith("invalid metrics (1 invalid out of 2), first error is: ")
    assert resp["desired_replicas"] == 3


def test_kubernetes_md_before_the_metrics():
    assert _k8s(lambda r: r.update(current_replicas=0))["reason"] == "ScalingDisabled"
    resp = _k8s(lambda r: r["policy"].update(max_replicas=2))
    assert (resp["desired_replicas"], resp["reason"]) == (2, "TooManyReplicas")


def test_kubernetes_md_legacy_scale_up_cap():
    def legacy(r):
        r["policy"].pop("behavior")
        r["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "5000m" for i in range(3)}
    assert _k8s(legacy)["desired_replicas"] == 6     # max(2 x 3, 4)


# --- docs/simulation.md -----------------------------------------------------------------

def test_simulation_md_flags_exist(capsys):
    with pytest.raises(SystemExit):
        cli.main(["simulate", "--help"])
    helptext = capsys.readouterr().out
    for flag in ("--trace", "--workload", "--scenario", "--scale", "--unit", "--fill", "--offset", "--duration",
                 "--seed", "--peak", "--param", "--capacity", "--startup", "--tick", "--sync-period",
                 "--metric-lag", "--metric-window", "--series-grain", "--drain", "--initial", "--semantics",
                 "--price", "--output", "--timeline", "--plot", "--workers"):
        assert flag in helptext, flag
    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    assert "--frontier" in capsys.readouterr().out


def test_simulation_md_cross_references_exist():
    for p in ("core/scalebridge/simulator/traces.py", "core/scalebridge/simulator/scenario.py",
              "tests/simulator/test_simulator_review.py", "docs/img/simulation-demo.png", "docs/img/frontier.png"):
        assert (ROOT / p).exists(), p


@pytest.mark.parametrize("content,fragment", [
    ("timestamp,value\n0,10\n60,10\n120,-1\n", ":4: value must be non-negative"),
    ("timestamp,value\n0,10\n60,10\n600,10\n", ":4: gap"),
    ("timestamp,value\n0,10\n120,10\n60,10\n", ":4: timestamps not sorted"),
    ("0,10\n60,10\n", ":1: missing header"),
    ("", ":1: empty file"),
])
def test_simulation_md_trace_problems_exit_2(capsys, tmp_path, content, fragment):
    f = tmp_path / "t.csv"
    f.write_text(content)
    rc, _, err = run_main(capsys, "simulate", "examples/simulate/policy.yaml", "--trace", str(f),
                          "--capacity", "10", "--startup", "60", "-q")
    assert rc == 2 and len(err.splitlines()) == 1 and fragment in err


def test_simulation_md_compare_skips_unrunnable(capsys, tmp_path):
    f = tmp_path / "nomax.yaml"
    f.write_text("name: nomax\nmin_replicas: 1\nmetrics:\n  - type: resource\n    name: cpu\n"
                 "    target: {type: Utilization, average_utilization: 60}\n")
    o = tmp_path / "o.json"
    rc, _, err = run_main(capsys, "compare", str(f), "--workload", "step", "--capacity", "10", "--startup", "60",
                          "--duration", "10m", "-s", "kubernetes,aws", "-o", str(o), "-q")
    assert rc == 0
    assert "skipped kubernetes (nomax)" in err
    d = json.loads(o.read_text())
    assert [s["semantics"] for s in d["skipped"]] == ["kubernetes"]
    for key in ("runs", "workload", "fleet", "oracle", "skipped", "price_per_instance_hour"):
        assert key in d
    for key in ("instance_hours", "oracle_instance_hours", "oracle_ratio", "underprovisioned_seconds",
                "underprovisioned_minutes", "underprovisioned_fraction", "unserved_load", "peak_overload",
                "scaling_actions", "reversals", "time_to_recover_seconds", "mean_time_to_recover_seconds",
                "underprovisioned_episodes", "decisions", "errors", "first_error", "reasons", "peak_members",
                "mean_members", "final_members", "elapsed_seconds", "published_metrics"):
        assert key in d["runs"][0], key


def test_simulation_md_python_snippet_single_process():
    from scalebridge.simulator import FleetModel, compare, make_workload, oracle_for, score_run, simulate
    policy = load_policy_file(ROOT / "examples/simulate/policy.yaml")
    load = make_workload("flash_crowd", seed=1, duration_seconds=3 * 3600).values
    model = FleetModel(capacity=10, startup="uniform:45,90", metric_lag_seconds=30)
    run = simulate(policy, load, model, semantics="kubernetes")
    for a in ("desired", "paid", "ready"):
        assert hasattr(run, a)
    score_run(run, load, model, oracle_paid=oracle_for(load, model, policy))
    compare([("web", policy)], ["kubernetes", "gce"], load, model, workers=1)
    seen = []

    def forecaster(now, history, tick):
        seen.append(history.flags.writeable)
        return None
    simulate(policy, load[:60], model, semantics="kubernetes", forecaster=forecaster)
    assert seen and not any(seen)


def test_simulation_md_python_snippet_as_script(tmp_path):
    snippet = re.search(r"## From Python\n\n```python\n(.*?)```", read("docs/simulation.md"), re.S).group(1)
    # the doc's code, on a shorter load so that it stays fast
    snippet = snippet.replace('make_workload("flash_crowd", seed=1)',
                              'make_workload("flash_crowd", seed=1, duration_seconds=1800)')
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-500:]


def test_simulation_md_scenario_keys_accepted(tmp_path):
    from scalebridge.simulator import scenario as sc
    block = yaml_blocks("docs/simulation.md")[0]
    assert "trace: ../shared/traces/nasa_http_1995-07-01_27.csv" in block
    keys = set(re.findall(r"^(\w+):", block, re.M))
    src = (ROOT / "core/scalebridge/simulator/scenario.py").read_text()
    for k in keys:
        assert f'"{k}"' in src or f"'{k}'" in src, k
    assert sc is not None


# --- docs/predictive.md -----------------------------------------------------------------

def test_predictive_md_yaml_block_validates():
    block = yaml_blocks("docs/predictive.md")[0]
    p = parse_policy_text(BOUNDS + "metrics:\n  - type: pods\n    name: load\n"
                          "    target: {type: AverageValue, average_value: 22500}\n" + block)
    assert p.predictive.mode == "ForecastAndScale"


def test_predictive_md_example_policies_match_prose():
    main = load_policy_file(ROOT / "examples/predictive/policy.yaml").predictive
    noise = load_policy_file(ROOT / "examples/predictive/count-noise.yaml").predictive
    assert (main.target_utilization, main.margin_quantile, main.lead_time_seconds) == (0.7, 0.9995, 120)
    assert (main.scale_down_rate_percent, main.capacity_per_replica) == (5, 25000)
    assert main.extrapolate_ramps is True
    assert (noise.margin_quantile, noise.extrapolate_ramps) == (0.97, False)
    assert (main.reactive_baseline_utilization, noise.reactive_baseline_utilization) == (0.6, None)


def test_predictive_md_disabled_replay_test_exists():
    assert "Disabled" in read("tests/simulator/test_predictive_replay.py")


def test_predictive_md_benchmark_flags(capsys):
    for script, flags in (("benchmarks/frontier.py", ("--plot", "--margin-quantile", "--policy")),
                          ("benchmarks/forecast_accuracy.py", ("--lead", "--guard"))):
        src = read(script)
        for flag in flags:
            assert f'"{flag}"' in src, (script, flag)


# --- docs/plugins.md --------------------------------------------------------------------

def test_plugins_md_contract():
    import scalebridge.hookspecs as h
    from scalebridge.forecasting import Forecaster  # noqa: F401
    from scalebridge.semantics import Context, Decision, Semantics  # noqa: F401
    from scalebridge.state import TimeLog
    for hook in ("scalebridge_register_semantics", "scalebridge_register_providers",
                 "scalebridge_register_metric_sources", "scalebridge_register_forecasters"):
        assert hasattr(h, hook)
    assert all(hasattr(TimeLog, m) for m in ("window_max", "window_min", "window_sum"))
    assert hasattr(Semantics, "retention") and hasattr(Semantics, "check") and hasattr(Context, "note")
    assert "[project.entry-points.scalebridge]\nproportional = \"scalebridge_proportional\"" in \
        read("examples/plugin/pyproject.toml")


def test_plugins_md_check_semantics_size():
    from scalebridge.testing import contract_requests
    assert 150 <= len(list(contract_requests())) <= 170      # "about 160 generic requests"


# --- docs/semantics/*.md: stage functions named in the pages exist ----------------------

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
    ("scalebridge.stages.warmup", ["resolve_warmup", "Fleet"]),
    ("scalebridge.semantics.aws", ["forecast_at"]),
])
def test_semantics_pages_stage_functions_exist(module, names):
    import importlib
    mod = importlib.import_module(module)
    for n in names:
        assert hasattr(mod, n), (module, n)


def test_semantics_pages_named_tests_exist():
    for p in ("tests/semantics/test_gce_audit.py", "tests/semantics/test_gce_review2.py",
              "tests/semantics/test_azure_documented.py", "tests/semantics/test_azure_stages.py",
              "tests/semantics/test_azure_invariants.py", "tests/semantics/test_azure_audit.py",
              "tests/semantics/test_azure_review2.py", "tests/semantics/test_aws_documented.py",
              "tests/semantics/test_aws_stages.py", "tests/semantics/test_aws_invariants.py",
              "tests/semantics/test_aws_audit.py", "core/scalebridge/semantics/kubernetes_replicas.py",
              "tests/core/test_examples.py", "tests/core/test_semantics_doc.py"):
        assert (ROOT / p).exists(), p


def test_policy_state_copy_untouched():
    # guard: the tests above never mutate the example files' parsed content
    a = request("pods.json")
    b = copy.deepcopy(a)
    decide(a)
    assert a == b
