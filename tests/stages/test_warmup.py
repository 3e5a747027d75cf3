"""The warm-up stage (scalebridge.stages.warmup): which members are initializing (GCE's
initialization period, EC2 Auto Scaling's instance warm-up), how a warm-up is
resolved, and the capacity a group counts.

Sources: https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (initialization period),
https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-default-instance-warmup.html."""
from __future__ import annotations

from scalebridge.protocol import Member, Settings
from scalebridge.stages.proposals import average_proposal, initializing_members
from scalebridge.stages.warmup import GroupCapacity, resolve_warmup
from scalebridge.testing.requests import GCE_NOW, member_models as members, NOW


def test_initializing_modes():
    ms = members(4)
    young = frozenset({"vm-2", "vm-3"})
    hot = {"vm-0": 50, "vm-1": 50, "vm-2": 100, "vm-3": 100}
    # GCE: initializing data cannot cause a scale-out
    assert average_proposal(4, hot, 60, members=ms, initializing=young).replicas == 4
    assert average_proposal(4, hot, 60, members=ms, initializing=young, ignore_initializing="never").replicas == 5
    # AWS-style: always left out (the caller scales from its own n)
    p = average_proposal(2, hot, 60, members=ms, initializing=young, ignore_initializing="always")
    assert p.replicas == 2 and p.excluded == 2
    # GCE: a scale-out the settled members ask for uses their average on the whole group
    busy = {"vm-0": 90, "vm-1": 90, "vm-2": 10, "vm-3": 10}
    p = average_proposal(4, busy, 60, members=ms, initializing=young)
    assert p.replicas == 6 and p.excluded == 2
    # GCE: a scale-in uses everyone's data
    idle = {"vm-0": 30, "vm-1": 30, "vm-2": 0, "vm-3": 0}
    assert average_proposal(4, idle, 60, members=ms, initializing=young).replicas == 1


def test_initializing_members():
    ms = [Member(name="a", ready_transition_time=GCE_NOW - 59, start_time=GCE_NOW - 1000),
          Member(name="b", ready_transition_time=None, start_time=GCE_NOW - 10),
          Member(name="c", ready_transition_time=GCE_NOW - 60),
          Member(name="d")]
    assert initializing_members(ms, GCE_NOW, 60) == {"a", "b"}
    assert initializing_members(ms, GCE_NOW, 0) == frozenset()
    assert initializing_members(None, GCE_NOW, 60) == frozenset()


def test_warmup_resolution_chain():
    """consolidated-view-of-warm-up-and-cooldown-settings.html: EstimatedInstanceWarmup, else
    DefaultInstanceWarmup, else DefaultCooldown (300 s by default)."""
    assert resolve_warmup(30, 60, Settings(default_instance_warmup_seconds=90)) == 30
    assert resolve_warmup(None, 60, Settings(default_instance_warmup_seconds=90)) == 60
    assert resolve_warmup(None, None, Settings(default_instance_warmup_seconds=90)) == 90
    assert resolve_warmup(None, None, Settings(default_cooldown_seconds=120)) == 120
    assert resolve_warmup(None, None, Settings()) == 300


def _m(name, phase="Running", ready=True, age=3600, deleting=False, weight=1, count=1):
    return Member(name=name, phase=phase, ready=ready, start_time=NOW - age - 60,
                  ready_transition_time=NOW - age, deleting=deleting, weight=weight, count=count)


def test_fleet_bases():
    """Scale-out adds to in-service, warmed-up capacity; scale-in counts terminating instances."""
    members = [_m("old", count=8), _m("new", age=100), _m("gone", deleting=True), _m("launching", "Pending", False),
               _m("big", weight=4)]
    f = GroupCapacity(NOW, 14, None, members)
    assert f.base_in == 8 + 1 + 1 + 4
    assert f.base_out(300) == 8 + 4 and f.base_out(60) == 8 + 1 + 4
    assert f.activity_in_progress and f.scale_out_in_progress
    assert f.metric_members(300) == frozenset({"old", "big"})


def test_fleet_without_members_reads_status():
    assert GroupCapacity(NOW, 11, 10, None).scale_out_in_progress
    f = GroupCapacity(NOW, 9, 10, None)
    assert f.activity_in_progress and not f.scale_out_in_progress and f.base_in == 10
    f = GroupCapacity(NOW, 10, None, None)
    assert not f.activity_in_progress and f.base_out(300) == 10


def test_ready_null_counts_as_in_service():
    f = GroupCapacity(NOW, 2, None, [_m("a", ready=None), _m("b", ready=None)])
    assert f.base_out(300) == 2 and not f.activity_in_progress


def test_metric_members_are_the_warmed_up_members_in_service():
    """The names metric_members gives (kept from the capacity's one pass over the
    members) are those a scan of the members finds: Running, not deleting, not
    ready: false, and ready (else started) at least the warm-up ago, or never stamped."""
    import random
    rng = random.Random(8)
    for _ in range(2000):
        members = []
        for k in range(rng.randrange(0, 8)):
            t = rng.choice([None, NOW - 30, NOW - 300, NOW - 301, NOW - 1000])
            members.append(Member(name=f"m{k}", phase=rng.choice(["Running", "Running", "Pending", "Failed"]),
                                  ready=rng.choice([True, None, False]), deleting=rng.random() < 0.2,
                                  ready_transition_time=rng.choice([None, t]), start_time=rng.choice([None, t]),
                                  count=rng.choice([1, 3]), weight=rng.choice([1, 2, 0.5])))
        f = GroupCapacity(NOW, 5, None, members)
        for warmup in (300, 0, 300, 60):
            want = set()
            for m in members:
                t = m.ready_transition_time if m.ready_transition_time is not None else m.start_time
                if m.phase == "Running" and not m.deleting and m.ready is not False and \
                        (t is None or t <= NOW - warmup):
                    want.add(m.name)
            assert f.metric_members(warmup) == want
