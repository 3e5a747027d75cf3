"""``policy.scale_in`` through ``decide`` under every built-in semantics: the decision
says how many leave, the selection which; it is in the response, in ``explain``, read by
the controller's queries, and absent when nothing leaves."""
import pytest
from pydantic import ValidationError

from scalebridge.controller.queries import metric_names, queries_for
from scalebridge.engine import BUILTIN_SEMANTICS, decide
from scalebridge.policy import parse_policy

T0 = 1_767_225_600.0
CONNS = {"ws-0": 21000, "ws-1": 300, "ws-2": 18000, "ws-3": 900, "ws-4": 12000, "ws-5": 24000}


def policy(**scale_in):
    # an external total (every target-metric semantics reads it) and rules (azure) that
    # all ask for 3 of the 6
    return {"min_replicas": 1, "max_replicas": 10, "default_replicas": 3,
            "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}],
            "rules": [{"metric": "queue", "operator": "LessThan", "threshold": 100, "time_window_seconds": 60,
                       "action": {"direction": "Decrease", "type": "ExactCount", "value": 3, "cooldown_seconds": 0}}],
            "behavior": {"scale_down": {"stabilization_window_seconds": 0,
                                        "policies": [{"type": "Percent", "value": 100, "period_seconds": 15}]}},
            "scale_in": scale_in}


def request(semantics, pol, current=6, **obs):
    members = [{"name": f"ws-{i}", "ready": True, "start_time": T0 - 3600 + 60 * i, "zone": "ab"[i % 2]}
               for i in range(current)]
    observations = {"members": members, "status_replicas": current,
                    "metrics": {"queue": {"value": 30, "values": [30], "timestamp": T0, "series": [[T0 - 30, 30]]},
                                "websocket_connections": {"members": CONNS}}}
    observations.update(obs)
    return {"semantics": semantics, "now": T0, "current_replicas": current, "policy": pol,
            "observations": observations, "state": {"recommendations": []}}


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_every_semantics_says_how_many_leave_and_the_selection_which(semantics):
    r = decide(request(semantics, policy(select="least_loaded", metric="websocket_connections")))
    assert r["desired_replicas"] == 3, r
    sel = r["scale_in"]
    assert sel["count"] == 3
    assert sel["members"] == ["ws-1", "ws-3", "ws-4"]       # the fewest connections
    assert sel["select"] == "least_loaded" and sel["metric"] == "websocket_connections"


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_the_selection_is_a_stage_of_explain(semantics):
    r = decide(request(semantics, policy(select="oldest")), explain=True)
    stages = [e for e in r["explain"] if e["stage"] == "scale-in selection"]
    assert len(stages) == 1 and stages[0]["in"] == 6 and stages[0]["out"] == 3
    assert stages[0]["why"].startswith("oldest: 3 leave: ws-0, ws-1, ws-2")


def test_no_selection_when_nothing_leaves_or_the_mode_holds_the_size():
    up = request("scalebridge", policy(select="newest"))
    up["observations"]["metrics"]["queue"] = {"value": 90, "values": [90], "timestamp": T0}
    assert "scale_in" not in decide(up)
    for mode in ("OFF", "ONLY_SCALE_OUT"):
        held = decide(request("scalebridge", {**policy(select="newest"), "mode": mode}))
        assert held["desired_replicas"] == 6 and held["recommended_replicas"] == 3
        assert "scale_in" not in held


def test_a_policy_without_scale_in_answers_as_before():
    pol = policy(select="newest")
    del pol["scale_in"]
    assert "scale_in" not in decide(request("scalebridge", pol))


def test_least_loaded_needs_its_metric_and_the_others_refuse_one():
    with pytest.raises(ValidationError, match="metric"):
        parse_policy({"max_replicas": 3, "scale_in": {"select": "least_loaded"}})
    with pytest.raises(ValidationError, match="reads no metric"):
        parse_policy({"max_replicas": 3, "scale_in": {"select": "oldest", "metric": "c"}})
    with pytest.raises(ValidationError):
        parse_policy({"max_replicas": 3, "scale_in": {"select": "cheapest"}})
    parse_policy({"max_replicas": 3, "scale_in": {"select": "zone_balanced", "metric": "c"}})


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_a_sync_reads_the_selection_metric_per_member_whatever_the_semantics(semantics):
    pol = parse_policy(policy(select="least_loaded", metric="websocket_connections"))
    q = {x.name: x for x in queries_for(pol, semantics)}
    assert "members" in q["websocket_connections"].shapes
    assert "websocket_connections" in metric_names(pol)
