"""Two ``scalebridge run --leader-elect`` controllers on one Lease, each with its own
client, against one API server injecting faults, over 1,000 syncs: never both
writing in one sync period, no decision carried out twice, and after the leader
dies the other takes over within the lease duration (client-go: a candidate
takes over once the record it observed stayed unchanged for
``leaseDurationSeconds``, polling every retry period) and keeps the HPA's 5-minute
downscale stabilization window
(https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#stabilization-window).
A controller started fresh after the leader died continues the old leader's
window from the ConfigMap state store."""
from __future__ import annotations

import pytest
import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller

T0 = 1796150000.0
PERIOD = 2.0
POLICY = {"semantics": "kubernetes", "min_replicas": 2, "max_replicas": 20,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}]}
WEB = {"kind": "Deployment", "namespace": "shop", "name": "web"}


@pytest.fixture(autouse=True)
def quick_thread_switches():
    """The API server runs on threads of this process: a shorter GIL switch interval
    hands it each request sooner (sys.setswitchinterval; restored after)."""
    import sys
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    yield
    sys.setswitchinterval(before)


def config(tmp_path, kubeconfig, identity):
    path = tmp_path / f"{identity}.yaml"
    path.write_text(yaml.safe_dump({
        "sync_period_seconds": PERIOD,
        "state": {"provider": "kubernetes", "namespace": "scalebridge", "name": "scalebridge-state"},
        "leader_election": {"namespace": "scalebridge", "name": "scalebridge-controller", "identity": identity},
        "providers": {"kubernetes": {"kubeconfig": str(kubeconfig), "qps": 10000, "burst": 10000}},
        "policies": {"p": POLICY},
        "targets": [{"name": "web", "provider": "kubernetes", "policy": "p", "ref": WEB}]}))
    return path


def cluster(k8s, clock):
    k8s.clock = lambda: T0 - 3600
    k8s.add_deployment("shop", "web", replicas=4, requests={"cpu": "500m"})
    k8s.clock = clock.now


def demand(k8s, millicores):
    """Spread ``millicores`` of CPU over the Deployment's pods (as a load balancer would)."""
    pods = k8s.list("", "pods", "shop", "app=web")
    each = max(1, millicores // max(1, len(pods)))
    k8s.set_pod_usage("shop", "web", {"cpu": f"{each}m"})


def applied(report):
    return [r for r in report.records if r["action"] == "applied"]


def successful_scale_writes(k8s):
    return [r for r in k8s.requests if r.method == "PUT" and r.subresource == "scale" and r.status == 200]


@pytest.mark.slow
def test_two_controllers_over_1000_syncs_with_faults(k8s, kubeconfig, tmp_path):
    clock = VirtualClock(T0)
    cluster(k8s, clock)
    a = build_controller(config(tmp_path, kubeconfig, "replica-a"), clock=clock, leader_elect=True)
    b = build_controller(config(tmp_path, kubeconfig, "replica-b"), clock=clock, leader_elect=True)
    k8s.random_faults(0.05, (500, 503, 429, 409), seed=7)
    dies = 600
    high_until = 590
    writers_per_period = []
    server_writes_per_period = []
    applied_total = 0
    leader_of = {}
    sizes = []
    syncs = 0
    for k in range(1000):
        now = T0 + PERIOD * k
        clock.set(now)
        demand(k8s, 3000 if k < high_until else 900)
        writes_before = len(successful_scale_writes(k8s))
        writers = []
        for name, c in (("a", a), ("b", b)):
            if name == "a" and k >= dies:
                continue        # a crashed: no more syncs, no release of the Lease
            rep = c.sync(now)
            syncs += 1
            if applied(rep):
                writers.append(name)
                applied_total += len(applied(rep))
            if c.elector.is_leader():
                leader_of[k] = leader_of.get(k, "") + name
        writers_per_period.append(writers)
        server_writes_per_period.append(len(successful_scale_writes(k8s)) - writes_before)
        sizes.append(k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"])
    k8s.random_faults(0)
    assert len(sizes) == 1000 and syncs == dies + 1000      # 1,000 sync periods: a synced 600, b all 1,000
    # the faults reached the controllers: ~5 % of their calls failed, the Lease's included
    faulted = [r for r in k8s.requests if r.status in (500, 503, 429)]
    assert len(faulted) > 100 and any(r.resource == "leases" for r in faulted)
    assert all(len(w) <= 1 for w in writers_per_period), "two controllers wrote in one period"
    # as the API server saw it: at most one size written a period, by that period's leader
    assert all(n <= 1 for n in server_writes_per_period), "two writes of the size in one period"
    assert all(leader_of.get(k) == w[0] for k, w in enumerate(writers_per_period) if w), "a standby wrote"
    assert all(len(v) == 1 for v in leader_of.values() if v), "two leaders at once"
    # every decision carried out was written once: no write repeated by the other replica
    assert applied_total == len(successful_scale_writes(k8s)) > 0
    # a led until it died; b took over within the lease duration (plus its poll)
    a_last = max(t for t, e in a.elector.events if e in ("acquired", "renewed"))
    b_first = min(t for t, e in b.elector.events if e == "acquired")
    assert a_last <= T0 + PERIOD * (dies - 1)
    # b may take the Lease once it saw a's last record unchanged for 15 s; each of its
    # attempts after that which a fault broke costs one retry period (2 s)
    broken = [t for t, ok in b.elector.attempts if a_last + 15 <= t < b_first and not ok]
    assert a_last + 15 <= b_first <= a_last + 15 + 2 + 2 * len(broken)
    assert b_first - (T0 + PERIOD * dies) <= 15 + 2 * len(broken)      # from the crash
    # the demand fell at sync 590: 3000m → 900m needs 900/(0.6 × 500) = 3 pods, but the
    # downscale window keeps the highest recommendation of the last 5 minutes
    peak = sizes[high_until - 1]
    assert peak == 10      # ceil(3000 / (0.6 × 500))
    window_end = high_until + int(300 / PERIOD)
    assert all(s == peak for s in sizes[high_until:window_end - 1])
    # b, leading since ~sync 607, let the size fall only when the last high recommendation
    # (sync 589) left the window — 5 minutes after it, not 5 minutes after b took over —
    # straight to the 3 the low demand needs (a fault may delay it by a sync or two)
    first_down = next(k for k in range(high_until, 1000) if sizes[k] < peak)
    assert window_end - 1 <= first_down <= window_end + 3
    assert sizes[first_down] == 3 and sizes[-1] == 3
    a.close()
    b.close()


@pytest.mark.slow
def test_a_fresh_leader_continues_the_old_leaders_window_from_the_configmap(k8s, kubeconfig, tmp_path):
    clock = VirtualClock(T0)
    cluster(k8s, clock)
    a = build_controller(config(tmp_path, kubeconfig, "replica-a"), clock=clock, leader_elect=True)
    k = 0

    def step(c, load):
        nonlocal k
        now = T0 + PERIOD * k
        clock.set(now)
        demand(k8s, load)
        c.sync(now)
        k += 1
        return k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"]

    for _ in range(30):
        assert step(a, 3000) in (4, 8, 10)
    assert k8s.get("apps", "deployments", "shop", "web")["spec"]["replicas"] == 10
    last_high = T0 + PERIOD * (k - 1)
    for _ in range(20):         # the load falls; a holds 10 inside the window, then crashes
        assert step(a, 900) == 10
    state = k8s.get("", "configmaps", "scalebridge", "scalebridge-state")
    assert state is not None and '"web"' in state["data"]["targets"]
    c = build_controller(config(tmp_path, kubeconfig, "replica-c"), clock=clock, leader_elect=True)
    first_down = None
    while T0 + PERIOD * k < last_high + 600:
        size = step(c, 900)
        if size < 10 and first_down is None:
            first_down = T0 + PERIOD * (k - 1)
    # c read a's recommendations: the window ends 5 minutes after the last high one, not
    # 5 minutes after c started (which a fresh, empty state would give)
    assert first_down is not None
    assert last_high + 300 <= first_down <= last_high + 300 + 4 * PERIOD
    c.close()
    a.close()


def test_the_configmap_store_keeps_a_pending_write_with_its_sync(provider):
    """A row round-trips whole through the ConfigMap, the pending write's intent — its
    size, state and sync (``intent_meta``) — included, so a restart resolves it."""
    from scalebridge.controller.store import StoredTarget
    store = provider.state_store(namespace="scalebridge", name="state-roundtrip")
    row = StoredTarget("web", "h1", {"sizes": [{"time": 1.0, "replicas": 4}]}, intent_size=6,
                       intent_state={"sizes": [{"time": 2.0, "replicas": 6}]}, updated_at=2.0,
                       intent_meta={"time": 2.0, "record": {"desired_replicas": 6}})
    store.save([row])
    again = provider.state_store(namespace="scalebridge", name="state-roundtrip").load_all()["web"]
    assert again == row
