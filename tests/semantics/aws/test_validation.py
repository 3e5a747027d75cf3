"""What the aws semantics refuses, naming the field: a missing minimum (ASG MinSize),
rules it cannot run, malformed ``aws.*`` state; and the other semantics still
answering a policy aws cannot run.

Source: https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_CreateAutoScalingGroup.html (MinSize)."""

import json

import pytest

from scalebridge import decide
from scalebridge.errors import RequestError
from scalebridge.testing.requests import (
    aws_request as request, AWS_SIMPLE_OUT as SIMPLE_OUT, AWS_STEP_OUT as STEP_OUT, NOW)


def test_min_replicas_is_required(cli):
    """Protocol, defaults per semantics: ``min_replicas`` is required under aws (ASG MinSize)."""
    with pytest.raises(RequestError) as e:
        decide({"semantics": "aws", "now": NOW, "current_replicas": 2, "policy": {"max_replicas": 5}})
    assert e.value.path == "$.policy.min_replicas"
    proc = cli("decide", stdin=json.dumps({"semantics": "aws", "now": NOW, "current_replicas": 2,
                                               "policy": {"max_replicas": 5}}))
    assert proc.returncode == 2 and "$.policy.min_replicas" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_other_semantics_answer_when_aws_cannot_run_the_policy():
    from scalebridge.engine import decide_all
    out = decide_all({"now": NOW, "current_replicas": 2, "policy": {"max_replicas": 5}})
    aws = next(r for r in out if r["semantics"] == "aws")
    assert "$.policy.min_replicas" in aws["error"]


@pytest.mark.parametrize("rule,path", [
    ({**STEP_OUT, "adjustment_type": None}, "$.policy.rules[0].adjustment_type"),
    ({**SIMPLE_OUT, "action": {"direction": "Increase", "type": "ServiceAllowedNextValue"}},
     "$.policy.rules[0].action.type"),
])
def test_rules_aws_cannot_run_name_the_field(rule, path):
    rule = {k: v for k, v in rule.items() if v is not None}
    with pytest.raises(RequestError) as e:
        decide(request(3, 60, rules=[rule]))
    assert e.value.path == path


@pytest.mark.parametrize("key,value", [("aws.max_capacity", "55"), ("aws.max_capacity", -1),
                                       ("aws.alarm_states", ["ALARM"]), ("aws.alarm_states", {"rules[0]": "ON"}),
                                       ("aws.alarm_invoked", {"rules[0]": "yesterday"})])
def test_malformed_aws_state_names_the_key(cli, key, value):
    req = request(3, 60, rules=[STEP_OUT], state={key: value})
    with pytest.raises(RequestError) as e:
        decide(req)
    assert key in e.value.path
    proc = cli("decide", stdin=json.dumps(req))
    assert proc.returncode == 2 and key in proc.stderr and "Traceback" not in proc.stderr
