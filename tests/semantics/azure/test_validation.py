"""Bad azure policies through ``scalebridge decide``: exit status 2 and one line naming
the JSON path."""
from __future__ import annotations

import json

import pytest

from scalebridge.testing.requests import AZURE_NOW as NOW


BAD = [
    ("unknown day",
     {"profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
                    "recurrence": {"days": ["Funday"], "hours": [8]}}]},
     "$.policy.profiles[0].recurrence.days[0]", "Funday"),
    ("profile without capacity", {"profiles": [{"name": "p"}]},
     "$.policy.profiles[0].capacity", "required field is missing"),
    ("minimum > maximum", {"profiles": [{"name": "p", "capacity": {"minimum": 5, "maximum": 3, "default": 1}}]},
     "$.policy.profiles[0].capacity", "minimum (5) is greater than maximum (3)"),
    ("min_replicas > max_replicas", {"min_replicas": 5, "max_replicas": 3},
     "$.policy.min_replicas", "min_replicas (5) is greater than max_replicas (3)"),
    ("unknown operator",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "Above", "threshold": 1,
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
     "$.policy.rules[0].operator", "Above"),
    ("unknown time aggregation",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1, "time_aggregation": "Median",
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
     "$.policy.rules[0].time_aggregation", "Median"),
    ("unknown statistic",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1, "statistic": "Mean",
                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
     "$.policy.rules[0].statistic", "statistic must be"),
    ("unknown time zone",
     {"profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
                    "recurrence": {"time_zone": "Mars Standard Time", "days": ["Monday"]}}]},
     "$.policy.profiles[0].recurrence.time_zone", "unknown time zone 'Mars Standard Time'"),
    ("unknown fixed-date time zone",
     {"profiles": [{"name": "p", "capacity": {"minimum": 1, "maximum": 3, "default": 1},
                    "fixed_date": {"start": "2026-01-01T00:00:00", "end": "2026-01-02T00:00:00",
                                   "time_zone": "Nowhere/Land"}}]},
     "$.policy.profiles[0].fixed_date.time_zone", "unknown time zone"),
    ("no capacity at all", {"rules": []}, "$.policy.min_replicas", "required by the azure semantics"),
    ("step-scaling rule",
     {"min_replicas": 1, "max_replicas": 3,
      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 1,
                 "steps": [{"lower": 0, "adjustment": 1}]}]},
     "$.policy.rules[0].steps", "not an Azure rule"),
]


@pytest.mark.parametrize(("policy", "path", "text"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_exits_2_naming_the_path(cli, policy, path, text):
    req = {"semantics": "azure", "now": NOW, "current_replicas": 2, "policy": policy}
    p = cli("decide", stdin=json.dumps(req))
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"scalebridge decide: {path}: "), lines[0]
    assert text in lines[0]
