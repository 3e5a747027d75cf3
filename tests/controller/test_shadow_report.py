"""``scalebridge shadow report``: per target, the share of compared syncs in agreement,
the mean and worst difference, the stages scalebridge departed at, and the
instance-hours both would have used — on a hand-made audit whose numbers are worked
out by hand, and on a day of a real trace."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from .test_shadow_mode import HPA, SHORT_WINDOW

TRACES = Path(__file__).resolve().parents[3] / "shared" / "traces"
T0 = 1767225600.0


def _rec(t, sb, native, *, stage=None, compared=True, why=None, load=50.0):
    sh = {"native_autoscaler": "HorizontalPodAutoscaler default/web", "native_replicas": native}
    if not compared:
        sh.update({"compared": False, "why": why})
    else:
        sh.update({"decided_at": t - 60, "current_replicas": native, "scalebridge_replicas": sb, "compared": True,
                   "agree": sb == native, "difference": sb - native, "inputs_match": True, "load": {"cpu": load}})
        if sb != native:
            sh.update({"stage": stage, "detail": f"{stage} … ; native {native}"})
    return {"time": t, "target": "web", "action": "shadow", "shadow": sh}


def test_a_hand_made_audit_reads_as_worked_out_by_hand(write_config, scalebridge, tmp_path):
    audit = tmp_path / "audit.jsonl"
    records = [_rec(T0, 0, 0, compared=False, why="no earlier decision of scalebridge's to compare with"),
               _rec(T0 + 60, 4, 4),                           # decided at T0,      holds 60 s
               _rec(T0 + 120, 3, 5, stage="stabilization"),   # decided at T0+60,   holds 60 s
               _rec(T0 + 180, 6, 5, stage="rate limits"),     # decided at T0+120,  holds 120 s
               _rec(T0 + 300, 2, 5, stage="stabilization")]   # decided at T0+240,  the median gap: 60 s
    audit.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    path = write_config([{"name": "web", "shadow": True, "ref": {"name": "web"}}])
    code, out, err = scalebridge("shadow", "report", path, "--audit", audit, "--output", "json")
    assert code == 0, err
    assert "1 line that is not a JSON object skipped" in err
    [s] = json.loads(out)["targets"]
    assert (s["records"], s["compared"], s["agreed"]) == (5, 4, 1)
    assert s["agreement"] == pytest.approx(1 / 4)
    assert s["mean_abs_difference"] == pytest.approx((0 + 2 + 1 + 3) / 4)
    assert (s["worst_difference"], s["worst_at"]) == (-3, T0 + 240)
    assert [(r["stage"], r["count"]) for r in s["reasons"]] == [("stabilization", 2), ("rate limits", 1)]
    # scalebridge 4·60 + 3·60 + 6·120 + 2·60 = 1260 instance-seconds; native 4·60 + 5·60 + 5·120 + 5·60 = 1440
    assert s["instance_hours"]["scalebridge"] == pytest.approx(1260 / 3600)
    assert s["instance_hours"]["native"] == pytest.approx(1440 / 3600)
    assert s["instance_hours"]["difference"] == pytest.approx(-180 / 3600)
    # --since keeps the last DURATION before the latest record: the two latest
    code, out, _ = scalebridge("shadow", "report", path, "--audit", audit, "--output", "json", "--since", "2m")
    [s] = json.loads(out)["targets"]
    assert (s["compared"], s["agreed"]) == (2, 0)


def test_bad_input_is_one_line_and_exit_2(write_config, scalebridge, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web"}}])
    code, _, err = scalebridge("shadow", "report", path)
    assert code == 2 and "no audit to read" in err and "Traceback" not in err
    code, _, err = scalebridge("shadow", "report", path, "--audit", tmp_path / "missing.jsonl")
    assert code == 2 and err.count("\n") == 1 and "missing.jsonl" in err
    code, _, err = scalebridge("shadow", "report", path, "nope", "--audit", tmp_path / "missing.jsonl")
    assert code == 2 and "no target 'nope'" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = scalebridge("shadow", "report", path, "--audit", empty)
    assert code == 1 and "no shadow record" in err


def _day_of_trace(name: str, per_member: float) -> list[list[float]]:
    """The first day of a trace as the fake's load steps: requests per minute over what
    one member serves (the load in members' worth of cpu request)."""
    with open(TRACES / name, newline="") as f:
        rows = list(csv.reader(f))[1:1441]
    t0 = int(rows[0][0])
    return [[int(t) - t0, round(int(v) / per_member, 3)] for t, v in rows]


@pytest.mark.skipif(not (TRACES / "azure_llm_code_2024-05-10_16.csv").exists(), reason="the shared traces")
def test_a_day_of_a_real_trace_is_reported_as_computed_from_the_audit(write_config, scalebridge, tmp_path):
    steps = _day_of_trace("azure_llm_code_2024-05-10_16.csv", 300.0)
    target = {"name": "web", "semantics": "kubernetes", "shadow": True,
              "ref": {"name": "web", "size": 4, "load": {"base": 0, "steps": steps},
                      "native": {"policy": HPA, "semantics": "kubernetes", "name": "HPA"}}}
    audit = tmp_path / "audit.jsonl"
    path = write_config([target], policies={"web": SHORT_WINDOW}, sync_period_seconds=60, audit=str(audit))
    code, _, err = scalebridge("run", path, "--clock", "virtual", "--until", "24h", "--state", tmp_path / "s.db")
    assert code == 0, err
    code, out, err = scalebridge("shadow", "report", path, "--output", "json", "--plot", tmp_path / "shadow.png")
    assert code == 0, err
    [s] = json.loads(out)["targets"]

    # the hand computation, from the audit's records by the report's documented definitions
    shadow = [json.loads(line)["shadow"] for line in audit.read_text().splitlines()]
    assert len(shadow) == 1440
    pairs = [(x["decided_at"], x["scalebridge_replicas"], x["native_replicas"]) for x in shadow if x["compared"]]
    diffs = [sb - n for _, sb, n in pairs]
    assert s["compared"] == len(pairs) == 1439
    assert s["agreed"] == diffs.count(0)
    assert s["mean_abs_difference"] == pytest.approx(sum(map(abs, diffs)) / len(diffs))
    assert abs(s["worst_difference"]) == max(map(abs, diffs))
    # every compared sync's sizes hold one sync period (60 s), the last one too
    assert s["instance_hours"]["scalebridge"] == pytest.approx(sum(sb for _, sb, _ in pairs) * 60 / 3600)
    assert s["instance_hours"]["native"] == pytest.approx(sum(n for _, _, n in pairs) * 60 / 3600)
    # a 60 s scale-down window beside the HPA's 300 s: less capacity, never more, and the report says where
    assert 0 < s["agreed"] < s["compared"]
    assert all(d <= 0 for d in diffs)
    assert s["instance_hours"]["difference"] < 0
    assert [r["stage"] for r in s["reasons"]] == ["stabilization"]
    png = (tmp_path / "shadow.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    code, text, _ = scalebridge("shadow", "report", path)
    assert "agreement: " in text and "departs at stabilization" in text and "instance-hours" in text
