"""The example's ``proportional`` semantics keeps the contract every semantics keeps
(scalebridge.testing.check_semantics) and decides as it says: ceil(load / per-replica target)."""
from __future__ import annotations

from scalebridge import decide
from scalebridge.testing import check_semantics


def test_proportional_keeps_the_semantics_contract():
    assert check_semantics("proportional") > 100


def test_a_queue_of_100_at_30_per_replica_needs_4_replicas():
    request = {"semantics": "proportional", "now": 0, "current_replicas": 2,
               "policy": {"min_replicas": 1, "max_replicas": 10,
                          "metrics": [{"type": "external", "name": "queue",
                                       "target": {"type": "AverageValue", "average_value": 30}}]},
               "observations": {"metrics": {"queue": {"values": [40, 60]}}}}
    assert decide(request)["desired_replicas"] == -(-100 // 30)
