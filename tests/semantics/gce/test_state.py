"""The gce semantics' state: the first decision starts from the current size, the
recommendation history records raw recommendations and recommended sizes and drops
what no window needs, a proposal skips the signals but not stabilization or bounds,
and ``decide`` leaves its request untouched.

Source: https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions
("Configure autoscaler for the first time"); choices marked G-GAP-n are in docs/research/gce.md."""
from __future__ import annotations

import copy

from scalebridge import decide
from scalebridge.testing.requests import (
    average_value as group, cpu, gce_four_signal_example as four_signal_example, GCE_NOW as NOW,
    gce_request as request, queue)

DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"


def test_proposal_skips_metrics_but_not_stabilization_or_bounds():
    req = request(4, [cpu(60)], {"proposal": 30},
                  state={"recommendations": [{"time": NOW - 60, "replicas": 3}]})
    assert decide(req)["desired_replicas"] == 20
    req = request(10, [cpu(60)], {"proposal": 2},
                  state={"recommendations": [{"time": NOW - 60, "replicas": 7}]})
    assert decide(req)["desired_replicas"] == 7


def test_first_sight_starts_from_the_current_size():
    """G-GAP-9, understanding-autoscaler-decisions ("Configure autoscaler for the first time"):
    "the autoscaler uses the current MIG size as a starting point. Before scaling in, the
    autoscaler uses the stabilization period". An absent history is seeded with the current
    size at ``now``; ``[]`` is a known, empty history and is not."""
    req = request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}})
    del req["state"]
    r = decide(req)
    assert r["desired_replicas"] == 10 and r["reason"] == "ScaleDownStabilized"
    assert {"time": NOW, "replicas": 10} in r["state"]["recommendations"]
    later = request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}})
    later["state"] = r["state"]
    later["now"] = NOW + 601
    assert decide(later)["desired_replicas"] == 4
    known = request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}})
    known["state"] = {"recommendations": []}
    assert decide(known)["desired_replicas"] == 4


def test_state_records_raw_recommendation_and_recommended_size():
    """G-GAP-3: ``recommendations`` holds the raw max of all signals (before
    stabilization and bounds); ``sizes`` the recommended size."""
    req = request(4, [queue(10)], {"metrics": {"queue": {"values": [300]}}})
    r = decide(req)
    assert r["desired_replicas"] == 20
    assert r["state"]["recommendations"][-1]["replicas"] == 30
    assert r["state"]["sizes"][-1]["replicas"] == 20
    assert r["state"]["scale_up_events"] == [{"time": NOW, "change": 16, "cause": "boundary"}]


def test_history_no_window_needs_is_dropped():
    pol = {"scale_in_control": {"max_scaled_in_replicas": {"fixed": 1}, "time_window_seconds": 900}}
    state = {"recommendations": [{"time": NOW - 700, "replicas": 9},
                                 {"time": NOW - 100, "replicas": 5}],
             "sizes": [{"time": NOW - 1000, "replicas": 9}, {"time": NOW - 100, "replicas": 5}],
             "scale_up_events": [{"time": NOW - 100, "change": 1, "cause": "metric"}]}
    r = decide(request(5, [queue(10)], {"metrics": {"queue": {"values": [50]}}}, policy=pol, state=state))
    s = r["state"]
    assert [e["time"] for e in s["recommendations"]] == [NOW - 100, NOW]
    assert [e["time"] for e in s["sizes"]] == [NOW - 100, NOW]
    assert s["scale_up_events"] == []


def test_decide_does_not_mutate_its_request():
    req = four_signal_example()
    before = copy.deepcopy(req)
    decide(req)
    assert req == before


def test_first_configuration_starts_from_the_current_size():
    """DECIDE (Scale-in controls with autoscaler mode > Configure autoscaler for the first time):
    "When you have a non-autoscaled MIG and you configure autoscaling from scratch, the
    autoscaler uses the current MIG size as a starting point. Before scaling in, the autoscaler
    uses the stabilization period and then it uses scale-in controls to constrain the scale-in
    rate". A group of 50 whose queue needs 20 VMs, scale-in controls 10 VMs / 20 minutes."""
    pol = {"max_replicas": 60,
           "scale_in_control": {"max_scaled_in_replicas": {"fixed": 10}, "time_window_seconds": 1200}}
    req = request(50, [group()], {"metrics": {"queue": {"values": [200]}}}, policy=pol, state={})
    first = decide(req)
    assert first["desired_replicas"] == 50          # held: the starting point is in the stabilization period
    later = request(50, [group()], {"metrics": {"queue": {"values": [200]}}}, policy=pol,
                    now=NOW + 610, state=first["state"])
    assert decide(later)["desired_replicas"] == 40  # then at most 10 below the peak size (50) of the window
