"""``scalebridge decide`` over the demo's decision table — 4 replicas, an average CPU
utilization target of 60 %, min 2, max 8, no stabilization and no tolerance — and
``scalebridge demo`` printing that table."""

import json

import pytest

from scalebridge.demo import SEED_EXPECTED, seed_request, SEED_ROWS


ROWS = list(zip(SEED_ROWS, SEED_EXPECTED))


@pytest.mark.parametrize("tolerance", [0, None], ids=["tolerance-0", "default-tolerance"])
def test_seed_table_through_cli(cli, tolerance):
    lines = "".join(json.dumps(seed_request(u, tolerance)) + "\n" for u, _ in ROWS)
    proc = cli("decide", "--semantics", "kubernetes", stdin=lines)
    assert proc.returncode == 0, proc.stderr
    responses = [json.loads(l) for l in proc.stdout.splitlines()]
    assert [r["desired_replicas"] for r in responses] == [6, 2, 8, 4, 2]
    # the raw formula before bounds: ceil(4 × u / 60)
    raw = [r["metrics"][0]["replicas"] for r in responses]
    assert raw[0] == 6 and raw[1] == 2 and raw[2] == 12 and raw[3] == 4 and raw[4] == 0
    assert [r["metrics"][0]["utilization"] for r in responses] == [90, 30, 180, 55, 0]
    assert responses[2]["reason"] == "TooManyReplicas"
    assert responses[4]["reason"] == "TooFewReplicas"


def test_row_55_is_rounding_not_tolerance(cli):
    """Row 4: 4 × 55/60 = 3.67 → ceil → 4 (truncation would give 3); with tolerance 0
    the count holds by rounding alone."""
    proc = cli("decide", stdin=json.dumps(seed_request(55, 0)))
    resp = json.loads(proc.stdout)
    assert resp["metrics"][0]["replicas"] == 4 and resp["reason"] == "DesiredWithinRange"
    proc = cli("decide", stdin=json.dumps(seed_request(55, None)))
    assert json.loads(proc.stdout)["reason"] == "WithinTolerance"


def test_demo_prints_the_table(cli):
    proc = cli("demo", "--quick")
    assert proc.returncode == 0, proc.stderr
    for row in ("4, 90%", "4, 30%", "4, 180%", "4, 55%", "4, 0%"):
        assert row in proc.stdout
    assert "scalebridge decide --semantics kubernetes" in proc.stdout


def test_each_demo_section_names_its_policy():
    """A newcomer saw azure make 56 scale actions in the demo's first section and "never scaled"
    in its second, with nothing saying the two sections run different policies: each names its
    policy, its file and what it scales on (rules for azure, or none)."""
    from pathlib import Path

    import yaml

    from scalebridge.demo import RUN_CONFIG, _policies_shown
    from scalebridge.policyfile import load_policy_file
    from scalebridge.simulator.demo import EXAMPLE, policy_summary

    spec = yaml.safe_load(RUN_CONFIG.read_text())
    main = _policies_shown(spec, "examples/run/demo.yaml")
    assert main.startswith("policy 'web' of examples/run/demo.yaml (cpu utilization target 60 %, "
                           "2 threshold rules in a profile (what azure scales on); 1–200 members)"), main
    replay = policy_summary(load_policy_file(EXAMPLE))
    assert replay == ("cpu utilization target 60 %, no threshold rules (azure, which scales on rules only, "
                      "never scales on it); 1–200 members")
    recorded = " ".join((Path(__file__).parent / "recorded" / "demo.out").read_text().split())
    assert f"The main job: {main}" in recorded
    assert f"Replay: policy 'web' of examples/simulate/policy.yaml — not the main job's: {replay}" in recorded


def test_the_demo_says_which_audit_lines_are_no_record_rather_than_skip_them():
    import io
    import json as _json
    from types import SimpleNamespace

    from rich.console import Console

    from scalebridge.demo import _follow
    good = {"target": "web", "desired_replicas": 3}
    lines = [_json.dumps(good) + "\n", '{"target": "web", "desi\n', "[1]\n", _json.dumps(good) + "\n"]
    out = io.StringIO()
    records: dict = {"web": []}
    _follow(Console(file=out, width=200), SimpleNamespace(stdout=iter(lines)), records, 2)
    said = out.getvalue()
    assert records["web"] == [good, good]
    assert "audit line 2 is not a JSON record" in said and "audit line 3 is not a JSON object" in said
