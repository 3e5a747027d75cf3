"""The neutral semantics during a rollout (``observations.rollout``): it decides from the
workload's intended size and the demand its members carry, so the surge's extra members
never move the size by themselves; a real change of load still does.

Upstream's HPA counts the surge (kubernetes/kubernetes#72775, #138505): the
``kubernetes`` semantics keeps that (tests/semantics/kubernetes/test_rollout_counting.py)."""
import pytest

from scalebridge.engine import decide

T0 = 1_767_225_600.0


def request(per_old, *, old=10, surge=3, rollout=True, current=10, semantics="scalebridge", per_new=0):
    """``old`` members of the current version at ``per_old`` connections each, ``surge`` new
    ones at ``per_new`` (a long-lived session stays where it is: new members start empty)."""
    members = [{"name": f"old-{i}", "ready": True, "start_time": T0 - 7200} for i in range(old)]
    members += [{"name": f"new-{i}", "ready": True, "start_time": T0 - 600} for i in range(surge)]
    samples = {m["name"]: (per_old if m["name"].startswith("old") else per_new) for m in members}
    obs = {"status_replicas": old + surge, "members": members, "metrics": {"connections": {"members": samples}}}
    if rollout:
        obs["rollout"] = {"updated_replicas": surge, "reason": "observedGeneration 3 < generation 4"}
    return {"semantics": semantics, "now": T0, "current_replicas": current,
            "policy": {"min_replicas": 2, "max_replicas": 40,
                       "metrics": [{"type": "pods", "name": "connections",
                                    "target": {"type": "AverageValue", "average_value": 20000}}]},
            "observations": obs, "state": {"recommendations": []}}


@pytest.mark.parametrize("per_old", [19000, 20000, 21000, 21900])
def test_a_steady_load_within_tolerance_of_the_intended_size_keeps_it_through_the_surge(per_old):
    r = decide(request(per_old))
    assert r["desired_replicas"] == 10, r
    if per_old > 20000:   # above the target, but within its tolerance
        assert r["reason"] == "WithinTolerance"


def test_the_same_members_without_the_rollout_said_are_judged_on_their_average_as_before():
    # 13 members carrying 10.5 members' worth: the average (0.81 of the target) leaves the band
    r = decide(request(21000, rollout=False))
    assert r["desired_replicas"] == 11
    assert decide(request(21000, rollout=True))["desired_replicas"] == 10


def test_a_real_rise_of_load_during_the_rollout_still_scales_out_to_the_demand():
    r = decide(request(30000, per_new=5000))     # 300,000 + 15,000 = 15.75 members' worth
    assert r["desired_replicas"] == 16


def test_a_real_fall_of_load_during_the_rollout_still_scales_in_to_the_demand():
    r = decide(request(8000))                    # 80,000: 4 members' worth, the window's held size aside
    assert r["recommended_replicas"] == 4


def test_explain_says_the_rollout_changed_how_the_tolerance_is_judged():
    r = decide(request(21000), explain=True)
    notes = [e for e in r["explain"] if e["stage"] == "rollout"]
    assert notes and "intended size" in notes[0]["why"] and "observedGeneration" in notes[0]["why"]
