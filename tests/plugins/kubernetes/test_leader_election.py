"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's
tools/leaderelection does it (leaderelection.go, ``tryAcquireOrRenew``): lease
duration 15 s, renew deadline 10 s, retry period 2 s; a candidate takes over only
after the record it observed stayed unchanged for a lease duration on its own
clock; a leader that cannot renew for the renew deadline stops leading."""
from __future__ import annotations

import pytest

from scalebridge.controller.clock import VirtualClock
from scalebridge.errors import ScalebridgeError

T0 = 1796150000.0


@pytest.fixture
def clients(kubeconfig):
    from scalebridge_kubernetes.client import KubeClient
    made = [KubeClient(kubeconfig=kubeconfig, qps=1000, burst=1000) for _ in range(2)]
    yield made
    for c in made:
        c.close()


def electors(clients, clock):
    from scalebridge_kubernetes.election import LeaseElector
    return [LeaseElector(c, "scalebridge", "scalebridge-controller", ident, clock, background=False)
            for c, ident in zip(clients, ("replica-a", "replica-b"))]


def lease(k8s):
    return k8s.get("coordination.k8s.io", "leases", "scalebridge", "scalebridge-controller")


def test_one_replica_holds_the_lease_and_renews_it(k8s, clients):
    clock = VirtualClock(T0)
    a, b = electors(clients, clock)
    assert a.is_leader() and not b.is_leader()
    spec = lease(k8s)["spec"]
    assert spec["holderIdentity"] == "replica-a" and spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    for _ in range(30):
        clock.advance(2.0)
        assert a.is_leader() and not b.is_leader()
    assert lease(k8s)["spec"]["holderIdentity"] == "replica-a"


def test_after_the_leader_dies_the_other_takes_over_within_the_lease_duration(k8s, clients):
    clock = VirtualClock(T0)
    a, b = electors(clients, clock)
    assert a.is_leader() and not b.is_leader()
    clock.advance(2.0)
    assert a.is_leader() and not b.is_leader()
    died = clock.now()          # a's last renewal; a is never called again
    took_over = None
    while clock.now() < died + 60:
        clock.advance(1.0)
        if b.is_leader():
            took_over = clock.now()
            break
    assert took_over is not None
    # b saw a's last renewal at `died` and waits one lease duration on its own clock
    # (then it polls every retry period)
    assert died + 15 <= took_over <= died + 15 + 2
    spec = lease(k8s)["spec"]
    assert spec["holderIdentity"] == "replica-b" and spec["leaseTransitions"] == 1


def test_a_leader_that_cannot_renew_stops_leading_before_anyone_may_take_over(k8s, clients):
    clock = VirtualClock(T0)
    a, b = electors(clients, clock)
    assert a.is_leader()
    b.is_leader()
    last = clock.now()
    k8s.inject(503, path_contains="/leases/", times=None, method="PUT")     # no update succeeds any more
    k8s.inject(503, path_contains="/leases/", times=None, method="GET")
    stopped = None
    while clock.now() < last + 30:
        clock.advance(1.0)
        if not a.is_leader() and stopped is None:
            stopped = clock.now()
    assert stopped == last + 10           # the renew deadline
    assert ("lost" in [e for _, e in a.events])


def test_stop_releases_the_lease_for_the_next_replica_at_once(k8s, clients):
    clock = VirtualClock(T0)
    a, b = electors(clients, clock)
    assert a.is_leader() and not b.is_leader()
    a.stop()
    assert lease(k8s)["spec"]["holderIdentity"] == ""
    clock.advance(2.0)
    assert b.is_leader()


def test_a_renewal_that_loses_a_race_falls_back_to_reading_the_lease(k8s, clients):
    clock = VirtualClock(T0)
    a, b = electors(clients, clock)
    assert a.is_leader()
    clock.advance(2.0)
    k8s.requests.clear()
    k8s.inject(409, method="PUT", path_contains="/leases/")    # the optimistic update conflicts
    assert a.try_acquire_or_renew() is True
    assert [(r.method, r.status) for r in k8s.requests] == [("PUT", 409), ("GET", 200), ("PUT", 200)]


def test_a_candidate_waits_a_lease_duration_from_its_own_first_sight(k8s, clients):
    clock = VirtualClock(T0)
    a, b = electors(clients, clock)
    assert a.is_leader()
    clock.advance(16.0)       # a stopped renewing more than a lease ago, but b has never looked
    assert not b.is_leader()  # b's observation starts now (no clock skew can hand it the lease early)
    clock.advance(14.0)
    assert not b.is_leader()
    clock.advance(2.0)
    assert b.is_leader()


@pytest.mark.parametrize("kw", [{"lease_duration": 10, "renew_deadline": 10},
                                {"renew_deadline": 2, "retry_period": 2}])
def test_invalid_timings_raise_instead_of_exiting(clients, kw):
    from scalebridge_kubernetes.election import LeaseElector
    with pytest.raises(ScalebridgeError):
        LeaseElector(clients[0], "ns", "l", "me", VirtualClock(T0), **kw)


class _Host:
    """One replica's clocks: the monotonic reading moves with shared real time
    (:meth:`tick`), the wall reading is stepped on its own (an NTP correction)."""

    virtual = True    # is_leader runs the attempt that is due (no background thread)

    def __init__(self, wall: float):
        self.wall, self.mono = wall, 100.0

    def now(self) -> float:
        return self.wall

    def monotonic(self) -> float:
        return self.mono

    def tick(self, seconds: float) -> None:
        self.wall += seconds
        self.mono += seconds

    def sleep(self, seconds, stop=None) -> bool:
        self.tick(max(0.0, seconds))
        return True


def _hosts(clients):
    from scalebridge_kubernetes.election import LeaseElector
    hosts = [_Host(T0), _Host(T0)]
    return hosts, [LeaseElector(c, "scalebridge", "scalebridge-controller", ident, h, background=False)
                   for c, ident, h in zip(clients, ("replica-a", "replica-b"), hosts)]


def test_a_leader_whose_wall_clock_steps_back_keeps_renewing_and_no_one_else_leads(k8s, clients):
    """Renewals are due on the monotonic clock: a leader whose wall clock stepped back an
    hour neither stops renewing for that hour (while believing it leads) nor lets a
    candidate take over beside it."""
    hosts, (a, b) = _hosts(clients)
    assert a.is_leader() and not b.is_leader()
    hosts[0].wall -= 3600.0
    both = []
    for _ in range(60):
        for h in hosts:
            h.tick(1.0)
        la, lb = a.is_leader(), b.is_leader()
        both.append(la and lb)
        assert la, "the leader kept renewing"
    assert not any(both)
    assert lease(k8s)["spec"]["holderIdentity"] == "replica-a"
    # the Lease's renewTime is wall time (what `kubectl get lease` shows), stepped with it
    renew = lease(k8s)["spec"]["renewTime"]
    import datetime as dt
    written = dt.datetime.strptime(renew[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc).timestamp()
    assert abs(written - hosts[0].wall) < 2


def test_a_candidate_whose_wall_clock_steps_forward_does_not_take_a_live_lease(k8s, clients):
    """A candidate waits a lease duration from its own first sight of the record on its
    monotonic clock: a step of its wall clock does not expire a lease the holder renews."""
    hosts, (a, b) = _hosts(clients)
    assert a.is_leader() and not b.is_leader()
    hosts[1].wall += 3600.0
    for _ in range(60):
        for h in hosts:
            h.tick(1.0)
        assert a.is_leader()
        assert not b.is_leader()
    assert lease(k8s)["spec"]["holderIdentity"] == "replica-a"
    assert lease(k8s)["spec"]["leaseTransitions"] == 0
