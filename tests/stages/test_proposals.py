"""The proposal stage (scalebridge.stages.proposals): a metric's proposal as the exact
ceiling of current × value / target, utilization against each member's request,
totals and per-member assignments, counter rates, and the tolerance band.

Sources: https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details,
https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from scalebridge.stages.proposals import (
    assignment_proposal, average_proposal, ceil_ratio, counter_rates, ProposalError, total_proposal)
from scalebridge.testing.requests import member_models as members


decimals = st.decimals(min_value="0", max_value="5000", places=4, allow_nan=False, allow_infinity=False)


positive = st.decimals(min_value="0.0001", max_value="5000", places=4, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 200), st.lists(decimals, min_size=1, max_size=12), positive,
       st.sampled_from(["float", "str"]))
def test_average_proposal_is_the_exact_ceiling(n, values, target, kind):
    conv = float if kind == "float" else str
    samples = {f"m{i}": conv(v) for i, v in enumerate(values)}
    p = average_proposal(n, samples, conv(target))
    exact_avg = sum(Fraction(str(conv(v))) for v in values) / len(values)
    want = math.ceil(n * exact_avg / Fraction(str(conv(target))))
    assert p.replicas == want
    assert p.ratio == exact_avg / Fraction(str(conv(target)))


def test_utilization_against_requests():
    ms = members(2) + members(1, requests="500m", prefix="half")
    p = average_proposal(3, {"vm-0": "300m", "vm-1": 0.9, "half-0": "250m"}, 60, members=ms,
                         resource="cpu", utilization=True)
    # (30 % + 90 % + 50 %) / 3 = 56.67 % → ceil(3 × 56.67 / 60) = 3
    assert p.utilization == 56 and p.replicas == 3
    assert p.ratio == Fraction(170, 3) / 60
    assert p.value == pytest.approx((0.3 + 0.9 + 0.25) / 3)


def test_samples_of_unknown_members_are_ignored():
    p = average_proposal(2, {"vm-0": 1, "vm-1": 1, "ghost": 100}, 1, members=members(2))
    assert p.replicas == 2
    with pytest.raises(ProposalError, match="matched known members"):
        average_proposal(2, {"ghost": 1}, 1, members=members(2))


def test_total_and_assignment_proposals():
    assert total_proposal(4, 100, 80, utilization=True).replicas == 5
    assert total_proposal(10, 40, 60).replicas == 7
    p = assignment_proposal([95], 10)
    assert p.replicas == 10 and p.ratio == Fraction(19, 2)
    assert assignment_proposal([0, None], 10).replicas == 0
    assert assignment_proposal(["1.5k", 500], "0.5k").replicas == 4
    with pytest.raises(ProposalError):
        assignment_proposal([None], 10)


def test_ceil_ratio_exact():
    assert ceil_ratio(3, 0.8, 0.8) == 3
    assert ceil_ratio(10, 1100, 1000) == 11
    assert ceil_ratio(3, 0.2, 0.6) == 1


def test_within_tolerance_is_exact():
    p = average_proposal(10, {"a": 110}, 100)          # ratio exactly 1.1
    assert p.within(0.1, 0.1) and not p.within(0.1, 0.09)
    p = average_proposal(10, {"a": 90}, 100)           # ratio exactly 0.9
    assert p.within(0.1, 0) and not p.within(0.0999, 0)


def test_counter_rates():
    series = {"a": [[0, 100], [60, 700]], "b": [[0, 0], [30, 10], [60, 5]], "c": [[0, 1]],
              "d": [[0, 0], [120, 1200]]}
    r = counter_rates(series, "per_second", until=60)
    assert r == {"a": 10, "b": Fraction(15, 60)}
    assert counter_rates(series, "per_minute")["d"] == 600
