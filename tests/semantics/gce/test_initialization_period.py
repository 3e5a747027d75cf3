"""The gce semantics' initialization period: data of VMs still initializing is ignored
when scaling out and used when scaling in; the 60 s default, per-metric periods,
and VMs still starting that a scale-out must not multiply.

Sources: https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers
(coolDownPeriodSec / initialization period),
https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions."""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (
    cpu, GCE_NOW as NOW, gce_request as request, GceChain, per_vm, vm_cpu_observations as cpu_obs, vms)

REST = "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers"


def test_initializing_vms_ignored_only_when_scaling_out():
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers coolDownPeriodSec: "when scaling out, the autoscaler ignores data from
    VMs that are still initializing". Their data still counts for a scale-in."""
    settled, young = vms(2), vms(2, age=30, prefix="new")
    members = settled + young
    # the young VMs' burst cannot cause a scale-out (settled 50 % → 4)
    obs = {"members": members, "metrics": {"cpu": {"members": {**per_vm(settled, 0.5), **per_vm(young, 1.0)}}}}
    assert decide(request(4, [cpu(60)], obs))["desired_replicas"] == 4
    # but their idle data takes part in a scale-in: average (0.3+0.3+0+0)/4 = 15 % → 1
    obs["metrics"]["cpu"]["members"] = {**per_vm(settled, 0.3), **per_vm(young, 0.0)}
    assert decide(request(4, [cpu(60)], obs))["desired_replicas"] == 1
    # a scale-out decided by the settled VMs uses their average on the whole group (G-GAP-1)
    obs["metrics"]["cpu"]["members"] = {**per_vm(settled, 0.9), **per_vm(young, 0.1)}
    r = decide(request(4, [cpu(60)], obs))
    assert r["desired_replicas"] == 6 and r["metrics"][0]["utilization"] == 90


def test_all_vms_initializing_never_scale_out():
    members = vms(3, age=10)
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 1.0)}}}
    assert decide(request(3, [cpu(60)], obs))["desired_replicas"] == 3


def test_initializing_measured_from_ready_transition_else_start_time():
    members = vms(2)
    members[1]["ready_transition_time"] = None
    members[1]["start_time"] = NOW - 30         # young by start time
    obs = {"members": members, "metrics": {"cpu": {"members": {"vm-0": 0.3, "vm-1": 1.0}}}}
    assert decide(request(2, [cpu(60)], obs))["desired_replicas"] == 2   # vm-1 ignored for scale-out
    members[1]["start_time"] = None                       # null time: the distant past
    assert decide(request(2, [cpu(60)], obs))["desired_replicas"] == 3   # ceil(2 × 65 / 60)


def test_per_metric_initialization_period_overrides():
    members = vms(2, age=120)
    m = cpu(60) | {"initialization_period_seconds": 300}
    obs = {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.9)}}}
    assert decide(request(2, [m], obs))["desired_replicas"] == 2
    assert decide(request(2, [cpu(60)], obs))["desired_replicas"] == 3


@pytest.mark.parametrize("age, desired", [(59, 4), (61, 5)])
def test_default_initialization_period_is_60_seconds(age, desired):
    """REST coolDownPeriodSec: "The default initialization period is 60 seconds." Three
    settled VMs at exactly the 60 % target and one VM at 100 %: while it is younger than
    60 s its data is ignored for the scale-out (4); after, the average 70 % gives 5."""
    members = vms(3) + vms(1, age=age, prefix="new")
    samples = {**per_vm(members[:3], 0.6), "new-0": 1.0}
    r = decide(request(4, [cpu(60)], {"members": members, "metrics": {"cpu": {"members": samples}}}))
    assert r["desired_replicas"] == desired


def test_initializing_vms_data_is_used_for_scale_in():
    """REST coolDownPeriodSec: "when scaling out, the autoscaler ignores data from VMs that
    are still initializing" — the rule is stated for scaling out only. Four VMs at 15 %
    (two of them 30 s old) against 60 % scale in to 1."""
    members = vms(2) + vms(2, age=30, prefix="new")
    r = decide(request(4, [cpu(60)], {"members": members, "metrics": {"cpu": {"members": per_vm(members, 0.15)}}}))
    assert r["desired_replicas"] == 1


T0 = NOW


def test_initializing_vms_ignored_for_scale_out_until_initialized():
    """REST coolDownPeriodSec: "when scaling out, the autoscaler ignores data from VMs
    that are still initializing because those VMs might not yet represent normal usage
    of your application. The default initialization period is 60 seconds."
    4 VMs at 90 % (target 60) → 6. The 2 new VMs burst to 100 % while starting and the
    old ones settle at 55 %: no scale-out from the burst; 61 s later their data counts."""
    c = GceChain([cpu(60)], current=4)
    assert c.step(T0, cpu_obs(T0, 4, 0.9))["desired_replicas"] == 6
    r = c.step(T0 + 30, cpu_obs(T0 + 30, 4, 0.55, young=2, young_util=1.0, young_age=30))
    assert r["desired_replicas"] == 6                 # settled 55 % < 60 %: no scale-out
    r = c.step(T0 + 91, cpu_obs(T0 + 91, 4, 0.55, young=2, young_util=1.0, young_age=91))
    # initialized: (4·55 + 2·100) / 6 = 70 % → ceil(6 · 70 / 60) = 7
    assert r["metrics"][0]["utilization"] == 70 and r["desired_replicas"] == 7


def test_vms_still_starting_are_not_multiplied_by_a_scale_out():
    """G-GAP-1: the recommended size is "the number of VMs required to serve the observed load"
    (understanding-autoscaler-decisions); VMs requested but not yet running carry none of it.
    4 VMs at 100% against 50% need 8: one sync adds at most 50% (6), the next reaches 8 with 2
    VMs still Pending, and while the new ones boot the group stays at 8 — multiplying the
    Pending VMs too would compound (6, 9, 14, 21, ... to the maximum)."""
    running = vms(4)
    state, current, seen = {"recommendations": []}, 4, []
    for step in range(6):
        now = NOW + 15 * step
        pending = [{"name": f"new-{i}", "phase": "Pending", "ready": False, "start_time": now - 5,
                    "ready_transition_time": None, "requests": {"cpu": 1}} for i in range(current - 4)]
        obs = {"members": running + pending, "metrics": {"cpu": {"members": per_vm(running, 1.0)}}}
        r = decide(request(current, [cpu(50)], obs, now=now, state=state, policy={"max_replicas": 40}))
        state, current = r["state"], r["desired_replicas"]
        seen.append(current)
    assert seen == [6, 8, 8, 8, 8, 8]
