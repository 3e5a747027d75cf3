"""What the gce semantics refuses: a missing minimum or maximum, a maximum below the
minimum, a negative minimum; and bad input to ``scalebridge decide`` under gce —
exit status 2 and one line on stderr naming the JSON path.

Source: https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers
(minNumReplicas, maxNumReplicas)."""
from __future__ import annotations

import copy
import json

import pytest

from scalebridge import decide
from scalebridge.errors import RequestError
from scalebridge.testing.requests import cpu, GCE_NOW as NOW, gce_request as request, per_vm, vms

REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"
MON = "https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics"


def test_min_replicas_is_required():
    from scalebridge.errors import RequestError
    req = request(4, [cpu(60)], {})
    del req["policy"]["min_replicas"]
    with pytest.raises(RequestError) as e:
        decide(req)
    assert e.value.path == "$.policy.min_replicas"


def test_max_replicas_is_required():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers: maxNumReplicas "is required when creating or updating an autoscaler"."""
    from scalebridge.errors import RequestError
    req = request(4, [cpu(60)], {})
    del req["policy"]["max_replicas"]
    with pytest.raises(RequestError) as e:
        decide(req)
    assert e.value.path == "$.policy.max_replicas"


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
def test_bad_input_exits_2_with_one_line_naming_the_path(cli, path, value, where, message):
    proc = cli("decide", "-", stdin=json.dumps(_with(path, value)))
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert where in lines[0] and message in lines[0], lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_good_request_through_the_cli(cli):
    proc = cli("decide", "-", stdin=json.dumps(BASE))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["semantics"] == "gce" and out["desired_replicas"] == 6


def test_all_semantics_answer_for_a_policy_gce_cannot_run(cli):
    """``--semantics all``: a semantics that cannot run this policy answers with its
    error instead of failing the others."""
    req = _with(["policy", "min_replicas"], _DELETE)
    proc = cli("decide", "--semantics", "all", "-", stdin=json.dumps(req))
    gce = [json.loads(line) for line in proc.stdout.splitlines() if json.loads(line)["semantics"] == "gce"]
    assert len(gce) == 1 and "$.policy.min_replicas" in gce[0]["error"]


def test_max_lower_than_min_is_refused():
    """REST maxNumReplicas: "The maximum number of replicas must not be lower than minimal
    number of replicas." """
    with pytest.raises(RequestError):
        decide(request(4, [cpu(60)], {}, policy={"min_replicas": 5, "max_replicas": 3}))


def test_negative_min_is_refused():
    """REST minNumReplicas: "This cannot be less than 0." """
    with pytest.raises(RequestError):
        decide(request(4, [cpu(60)], {}, policy={"min_replicas": -1, "max_replicas": 3}))


def test_min_equal_to_max_is_allowed_and_pins_the_size():
    """REST AutoscalerStatusDetails MIN_EQUALS_MAX is a WARNING, not an error: "The
    minNumReplicas is equal to maxNumReplicas. This means the autoscaler cannot add or
    remove instances from the instance group." """
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}
    r = decide(request(4, [cpu(60)], obs, policy={"min_replicas": 3, "max_replicas": 3}))
    assert r["recommended_replicas"] == 3 and r["error"] is None
