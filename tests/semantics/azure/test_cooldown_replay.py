"""The cooldown timeline of Azure's "Understand autoscale settings" page replayed through
``scalebridge simulate`` on a crafted trace: the same actions at the same times as the
``decide`` probes in test_cooldown.py.

(https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings,
cooldown section: scale-out cooldown 60 minutes, scale-in 40; after a scale-out at 10:00 the
scale-in rule is eligible at 10:40, the scale-out rule at 11:00.) The autoscaler runs every
10 minutes, so its runs fall on the timeline's times; 4 members of capacity 100 are at 50 %
until the load rises at 09:52.
"""
from __future__ import annotations

import csv
import json

import yaml

from scalebridge.cli import main

TEN = 1768384800          # 2026-01-14 10:00 UTC
POLICY = {"semantics": "azure", "min_replicas": 1, "max_replicas": 10, "default_replicas": 4,
          "rules": [{"metric": "cpu", "statistic": "Average", "time_grain_seconds": 60, "time_window_seconds": 300,
                     "time_aggregation": "Average", "operator": "GreaterThan", "threshold": 70,
                     "action": {"direction": "Increase", "type": "ChangeCount", "value": 1,
                                "cooldown_seconds": 3600}},
                    {"metric": "cpu", "statistic": "Average", "time_grain_seconds": 60, "time_window_seconds": 300,
                     "time_aggregation": "Average", "operator": "LessThan", "threshold": 30,
                     "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1,
                                "cooldown_seconds": 2400}}]}


def _replay(tmp_path, load_after_ten):
    """Sizes by time from 09:30 to 12:00; ``load_after_ten(minute)`` from 10:05 on."""
    trace = tmp_path / "trace.csv"
    rows = ["timestamp,value"]
    for m in range(-30, 150):
        t = TEN + 60 * m
        if m < -8:
            v = 200.0                       # 4 members at 50 %
        elif m < 5:
            v = 400.0                       # 100 % on 4, 80 % on 5: the scale-out rule fires
        else:
            v = load_after_ten(m)
        rows.append(f"{t},{v}")
    trace.write_text("\n".join(rows) + "\n")
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    timeline = tmp_path / "timeline.csv"
    rc = main(["simulate", str(policy), "--trace", str(trace), "--capacity", "100", "--startup", "60",
               "--tick", "60", "--sync-period", "600", "--metric-lag", "0", "--initial", "4", "-s", "azure",
               "--timeline", str(timeline), "--quiet"])
    assert rc == 0
    with open(timeline) as f:
        rows = list(csv.DictReader(f))
    out, last = [], None
    for r in rows:
        n = int(float(r["azure:desired"]))
        if last is not None and n != last:
            out.append(((int(float(r["time"])) - TEN) // 60, n))
        last = n
    return out


def test_a_scale_out_at_10_and_the_next_scale_out_at_11(tmp_path):
    # the load stays high: the scale-out rule fires at 10:10 … 10:50 but waits its own hour
    assert _replay(tmp_path, lambda m: 600.0) == [(0, 5), (60, 6), (120, 7)]


def test_a_scale_out_at_10_and_the_scale_in_at_10_40(tmp_path):
    # the load falls at 10:05: the scale-in rule fires from 10:10 and waits its own 40 minutes
    # (one action's cooldown holding every rule would have made it wait to 11:00), then 40
    # minutes after each scale-in
    assert _replay(tmp_path, lambda m: 50.0) == [(0, 5), (40, 4), (80, 3), (120, 2)]


def _load(m: int, after_ten) -> float:
    return 200.0 if m < -8 else 400.0 if m < 5 else after_ten(m)


def _chained_decide(tmp_path, capsys, after_ten):
    """The same workload through ``scalebridge decide`` every 10 minutes, each request carrying the
    previous response's state and size: the group's CPU is the load over the members, each of
    capacity 100."""
    out, n, state = [], 4, None
    for m in range(-30, 150, 10):
        t = TEN + 60 * m
        req = {"semantics": "azure", "now": t, "current_replicas": n, "policy": POLICY,
               "observations": {"metrics": {"cpu": {"series": [[t - 60 * k, _load(m - k, after_ten) / n]
                                                               for k in range(4, -1, -1)]}}}}
        if state is not None:
            req["state"] = state
        f = tmp_path / "req.json"
        f.write_text(json.dumps(req))
        capsys.readouterr()
        assert main(["decide", str(f)]) == 0
        r = json.loads(capsys.readouterr().out)
        if r["desired_replicas"] != n:
            out.append((m, r["desired_replicas"]))
        n, state = r["desired_replicas"], r["state"]
    return out


def test_simulate_and_decide_act_at_the_same_times(tmp_path, capsys):
    for after_ten in (lambda m: 600.0, lambda m: 50.0):
        assert _replay(tmp_path, after_ten) == _chained_decide(tmp_path, capsys, after_ten)
