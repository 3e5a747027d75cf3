"""Which members leave on a scale-in (scalebridge.stages.scale_in): each order, the members
that always go first, the ones never chosen, and invariants over random fleets.

The first-go rule is upstream's: ``ActivePodsWithRanks.Less`` (kubernetes/kubernetes
pkg/controller/controller_utils.go) ranks "Unassigned < assigned", "PodPending <
PodUnknown < PodRunning", "Not ready < ready" before a pod's deletion cost."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalebridge.protocol import Member, MetricObservation
from scalebridge.stages.scale_in import samples_of, select_members


def m(name, start=0.0, **kw):
    kw.setdefault("ready", True)
    return Member(name=name, start_time=start, **kw)


FLEET = [m("a", 100), m("b", 200), m("c", 300), m("d", 400)]
CONNS = {"a": 9000, "b": 120, "c": 25000, "d": 800}


def test_least_loaded_removes_the_members_with_the_fewest_connections():
    sel = select_members(FLEET, 2, "least_loaded", samples=CONNS, metric="connections")
    assert sel.members == ("b", "d")
    assert sel.complete
    assert "least_loaded on connections" in sel.reason and "b (120)" in sel.reason


def test_oldest_and_newest_order_by_start_time():
    assert select_members(FLEET, 2, "oldest").members == ("a", "b")
    assert select_members(FLEET, 2, "newest").members == ("d", "c")


def test_failed_pending_and_unready_members_go_first_whatever_the_order():
    fleet = FLEET + [m("p", 50, phase="Pending", ready=False), m("u", 60, ready=False),
                     m("f", 70, phase="Failed", ready=False), m("n", 80, ready=None)]
    sel = select_members(fleet, 5, "least_loaded", samples={**CONNS, "u": 0, "n": 0}, metric="connections")
    # failed, then pending, then the not-ready ones (no Ready condition is not ready; both
    # idle, the newer first), then the least loaded ready one
    assert sel.members == ("f", "p", "n", "u", "b")
    assert [sel.to_json()["why"][x] for x in ("f", "p", "u")] == ["failed", "pending", "not_ready"]


def test_an_unready_member_goes_before_an_idle_ready_one():
    fleet = [m("idle", 0), m("busy-but-unready", 0, ready=False)]
    sel = select_members(fleet, 1, "least_loaded", samples={"idle": 0, "busy-but-unready": 25000}, metric="c")
    assert sel.members == ("busy-but-unready",)


def test_deleting_protected_and_grouped_members_are_never_chosen():
    fleet = [m("gone", 0, deleting=True), m("kept", 0, protected=True), Member(name="cohort", count=5, ready=True),
             m("x", 10)]
    sel = select_members(fleet, 3, "oldest")
    assert sel.members == ("x",)
    assert not sel.complete
    assert "the provider chooses the other 2" in sel.reason
    assert "protected" in sel.reason and "several members" in sel.reason


def test_unready_first_names_only_the_members_that_are_not_ready():
    fleet = FLEET + [m("u", 0, ready=False)]
    sel = select_members(fleet, 3, "unready_first")
    assert sel.members == ("u",)
    assert sel.count == 3 and not sel.complete
    assert "unready_first names only members that are not ready" in sel.reason


def test_zone_balanced_takes_from_the_largest_zone_first():
    fleet = [m("a1", 1, zone="a"), m("a2", 2, zone="a"), m("a3", 3, zone="a"),
             m("b1", 1, zone="b"), m("b2", 2, zone="b"), m("c1", 1, zone="c")]
    sel = select_members(fleet, 3, "zone_balanced")
    # a has 3: its newest goes; then a and b have 2 (a first by name), then b has 2
    assert sel.members == ("a3", "a2", "b2")
    assert all(w == "zone_balanced" for w in sel.to_json()["why"].values())


def test_zone_balanced_counts_protected_members_in_their_zone_and_ranks_by_the_metric_within_one():
    fleet = [m("a1", 1, zone="a", protected=True), m("a2", 2, zone="a"), m("b1", 1, zone="b"), m("b2", 2, zone="b"),
             m("b3", 3, zone="b")]
    sel = select_members(fleet, 2, "zone_balanced", samples={"b1": 5, "b2": 50, "b3": 500, "a2": 1}, metric="c")
    assert sel.members == ("b1", "a2")   # b has 3 (its lowest, b1); then a and b have 2: a by name


def test_a_member_without_a_sample_is_kept_until_the_sampled_ones_are_gone():
    sel = select_members(FLEET, 3, "least_loaded", samples={"a": 1, "c": 2}, metric="c")
    assert sel.members[:2] == ("a", "c")
    assert "no sample" in sel.reason


def test_quantity_samples_order_exactly():
    sel = select_members([m("x"), m("y")], 1, "least_loaded", samples={"x": "1500m", "y": "2"}, metric="c")
    assert sel.members == ("x",)


def test_samples_come_from_members_or_the_latest_point_of_member_series():
    assert samples_of(MetricObservation(members={"a": 3})) == {"a": 3}
    assert samples_of(MetricObservation(member_series={"a": [(1.0, 5.0), (2.0, 7.0)], "b": [(1.0, None)]})) == {"a": 7.0}
    assert samples_of(MetricObservation(members={"a": 3}, error="refused")) is None
    assert samples_of(None) is None


_member = st.builds(
    lambda i, start, phase, ready, deleting, protected, zone: Member(
        name=f"m{i}", start_time=start, phase=phase, ready=ready, deleting=deleting, protected=protected, zone=zone),
    st.integers(0, 10_000), st.one_of(st.none(), st.floats(0, 1e6)), st.sampled_from(["Running", "Pending", "Failed"]),
    st.sampled_from([True, False, None]), st.booleans(), st.sampled_from([None, False, True]),
    st.sampled_from([None, "a", "b", "c"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_member, max_size=25, unique_by=lambda x: x.name), st.integers(0, 30),
       st.sampled_from(["least_loaded", "oldest", "newest", "unready_first", "zone_balanced"]),
       st.dictionaries(st.sampled_from([f"m{i}" for i in range(0, 10_000, 97)]), st.integers(0, 30_000)))
def test_a_selection_never_exceeds_the_count_nor_names_a_member_twice_or_one_it_may_not(fleet, count, select, loads):
    samples = {x.name: loads.get(x.name, hash(x.name) % 1000) for x in fleet}
    metric = "c" if select in ("least_loaded", "zone_balanced") else None
    sel = select_members(fleet, count, select, samples=samples, metric=metric)
    names = sel.members
    assert len(names) <= count and len(set(names)) == len(names)
    by_name = {x.name: x for x in fleet}
    for n in names:
        assert not by_name[n].deleting and not by_name[n].protected
    # the members that go first come before any ready one, and are all taken before one is
    unready = [x.name for x in fleet if not x.deleting and not x.protected and
               (x.phase != "Running" or x.ready is not True)]
    first = [n for n in names if n in unready]
    assert list(names[:len(first)]) == first
    assert len(first) == min(count, len(unready))
    # a complete selection whenever enough members may be chosen (unready_first: only its own)
    choosable = sum(1 for x in fleet if not x.deleting and not x.protected)
    if select != "unready_first":
        assert len(names) == min(count, choosable)
    # pure: the same input, the same selection
    assert select_members(fleet, count, select, samples=samples, metric=metric) == sel


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 25_000), min_size=1, max_size=20), st.integers(1, 20))
def test_least_loaded_removes_no_more_load_than_any_other_choice_of_as_many_ready_members(loads, count):
    fleet = [m(f"m{i}", i) for i in range(len(loads))]
    samples = {f"m{i}": v for i, v in enumerate(loads)}
    sel = select_members(fleet, count, "least_loaded", samples=samples, metric="c")
    cut = sum(samples[n] for n in sel.members)
    assert cut == sum(sorted(loads)[:min(count, len(loads))])


@pytest.mark.parametrize("select", ["oldest", "newest", "unready_first", "zone_balanced"])
def test_an_empty_fleet_or_a_zero_count_chooses_no_one(select):
    assert select_members([], 3, select).members == ()
    assert select_members(FLEET, 0, select).members == ()
