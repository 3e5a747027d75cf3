"""Bad input to ``scalebridge decide`` under the gce semantics: exit status 2 and
one line on stderr naming the JSON path (spec: "A malformed request is not a
response: exit status 2 and one line on stderr naming the field")."""
from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import run_cli

NOW = 1768410000.0

BASE = {
    "semantics": "gce", "now": NOW, "current_replicas": 4,
    "policy": {"min_replicas": 1, "max_replicas": 10,
               "metrics": [{"type": "external", "name": "queue",
                            "target": {"type": "AverageValue", "average_value": 10}}],
               "schedules": [{"name": "weekday", "schedule": "0 9 * * MON-FRI", "time_zone": "Europe/Paris",
                              "duration_seconds": 28800, "min_required_replicas": 15}]},
    "observations": {"metrics": {"queue": {"values": [55]}}},
    "state": {"recommendations": []},
}


def _with(path: list, value) -> dict:
    req = copy.deepcopy(BASE)
    node = req
    for k in path[:-1]:
        node = node[k]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return req


_DELETE = object()

BAD = [
    ("invalid_cron", ["policy", "schedules", 0, "schedule"], "0 9 * * FUNDAY",
     "$.policy.schedules[0].schedule", "invalid day of week 'FUNDAY'"),
    ("cron_hour_out_of_range", ["policy", "schedules", 0, "schedule"], "0 24 * * *",
     "$.policy.schedules[0].schedule", "hour 24 out of range"),
    ("cron_too_few_fields", ["policy", "schedules", 0, "schedule"], "0 9 *",
     "$.policy.schedules[0].schedule", "expected 5 fields"),
    ("unknown_time_zone", ["policy", "schedules", 0, "time_zone"], "Europe/Atlantis",
     "$.policy.schedules[0].time_zone", "unknown time zone 'Europe/Atlantis'"),
    ("schedule_too_short", ["policy", "schedules", 0, "duration_seconds"], 120,
     "$.policy.schedules[0].duration_seconds", "at least 300"),
    ("min_replicas_missing", ["policy", "min_replicas"], _DELETE,
     "$.policy.min_replicas", "required by the gce semantics"),
    ("max_replicas_missing", ["policy", "max_replicas"], _DELETE,
     "$.policy.max_replicas", "required by the gce semantics"),
    ("min_above_max", ["policy", "min_replicas"], 11, "$.policy", "greater than max_replicas"),
    ("unknown_mode", ["policy", "mode"], "ONLY_DOWN", "$.policy.mode", "ONLY_SCALE_OUT"),
    ("scale_in_control_both", ["policy", "scale_in_control"],
     {"max_scaled_in_replicas": {"fixed": 1, "percent": 10}},
     "$.policy.scale_in_control.max_scaled_in_replicas", "exactly one of `fixed` or `percent`"),
    ("scale_in_percent_above_100", ["policy", "scale_in_control"],
     {"max_scaled_in_replicas": {"percent": 120}},
     "$.policy.scale_in_control.max_scaled_in_replicas.percent", "100"),
    ("unknown_field", ["policy", "stabilization_period_sec"], 600,
     "$.policy.stabilization_period_sec", "unknown field"),
    ("negative_initialization", ["policy", "initialization_period_seconds"], -5,
     "$.policy.initialization_period_seconds", "zero or more"),
]


@pytest.mark.parametrize("path,value,where,message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_exits_2_with_one_line_naming_the_path(path, value, where, message):
    proc = run_cli("decide", "-", stdin=json.dumps(_with(path, value)))
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert where in lines[0] and message in lines[0], lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_good_request_through_the_cli():
    proc = run_cli("decide", "-", stdin=json.dumps(BASE))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["semantics"] == "gce" and out["desired_replicas"] == 6


def test_all_semantics_answer_for_a_policy_gce_cannot_run():
    """``--semantics all``: a semantics that cannot run this policy answers with its
    error instead of failing the others."""
    req = _with(["policy", "min_replicas"], _DELETE)
    proc = run_cli("decide", "--semantics", "all", "-", stdin=json.dumps(req))
    gce = [json.loads(line) for line in proc.stdout.splitlines() if json.loads(line)["semantics"] == "gce"]
    assert len(gce) == 1 and "$.policy.min_replicas" in gce[0]["error"]
