"""The gce semantics' autoscaling modes: ON, ONLY_SCALE_OUT (and its ONLY_UP alias)
and OFF — what each sets, and the recommendation each still records.

Sources: https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions,
https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (autoscalingPolicy.mode)."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    cpu, GCE_NOW as NOW, gce_request as request, GceChain, per_vm, queue, queue_observation as q, vms)

DECIDE = "https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions"
REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"


@pytest.mark.parametrize("mode,desired", [("ON", 4), ("ONLY_SCALE_OUT", 10), ("ONLY_UP", 10), ("OFF", 10)])
def test_modes_on_a_scale_in(mode, desired):
    """https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions: ON sets the target size to the recommended size; ONLY_SCALE_OUT
    "can only be increased"; OFF: "the recommended size is still calculated"."""
    r = decide(request(10, [queue(10)], {"metrics": {"queue": {"values": [40]}}}, policy={"mode": mode}))
    assert r["recommended_replicas"] == 4 and r["desired_replicas"] == desired


def test_only_up_is_accepted_and_scales_out():
    """REST AutoscalingPolicy.Mode ONLY_UP: "Automatically create VMs according to the
    policy, but do not scale the MIG in. It's recommended to use ONLY_SCALE_OUT instead of
    ONLY_UP." """
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}
    r = decide(request(4, [cpu(60)], obs, policy={"mode": "ONLY_UP"}))
    assert r["desired_replicas"] == 6


@pytest.mark.parametrize("mode", ["ONLY_UP", "ONLY_SCALE_OUT"])
def test_only_scale_out_keeps_the_size_but_records_the_recommendation(mode):
    """DECIDE: "ONLY_SCALE_OUT. The MIG's target size can only be increased in response to
    an increased recommended size." REST ONLY_UP: the same "but do not scale the MIG in"."""
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.15)}}}
    r = decide(request(4, [cpu(60)], obs, policy={"mode": mode}))
    assert r["recommended_replicas"] == 1 and r["desired_replicas"] == 4
    assert r["state"]["scale_down_events"] == []


def test_off_calculates_the_recommended_size_and_does_not_scale():
    """REST Mode OFF: "Do not automatically scale the MIG in or out. The recommended_size
    field contains the size of MIG that would be set if the actuation mode was enabled."
    DECIDE: "OFF. The target size is unaffected by the recommended size. However, the
    recommended size is still calculated." """
    members = vms(4)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}
    r = decide(request(4, [cpu(60)], obs, policy={"mode": "OFF"}))
    assert r["recommended_replicas"] == 6 and r["desired_replicas"] == 4
    assert r["state"]["scale_up_events"] == [] and r["state"]["sizes"][-1]["replicas"] == 6


T0 = NOW


MIN = 60.0


def test_only_scale_out_with_stabilization_over_time():
    """DECIDE: "ONLY_SCALE_OUT. The MIG's target size can only be increased in response
    to an increased recommended size." and the recommended size still follows the
    stabilization period. Recommended: 10, held, then 4 after 600 s; the target size
    stays 10 and rises only when the recommendation goes above it."""
    c = GceChain([queue(10)], policy={"mode": "ONLY_SCALE_OUT"}, current=4)
    c.step(T0, q(100))
    for k in range(1, 13):
        c.step(T0 + k * MIN, q(40))
    c.step(T0 + 13 * MIN, q(70))
    c.step(T0 + 14 * MIN, q(120))
    rec = {k: c.log[k * MIN]["recommended_replicas"] for k in range(15)}
    des = {k: c.log[k * MIN]["desired_replicas"] for k in range(15)}
    assert all(rec[k] == 10 for k in range(10)) and rec[10] == 4 and rec[12] == 4
    assert all(des[k] == 10 for k in range(14))
    assert rec[13] == 7 and des[13] == 10            # increased, but not above the target
    assert rec[14] == des[14] == 12
