"""One sync observes many Deployments from one list per namespace and resource
(workloads, pods, pod metrics), as the HPA controller reads them from shared
informers (pkg/controller/podautoscaler/horizontal.go) — against the test API
server with the real ``kubernetes`` client, the server counting the calls.

Each target's batched observation is the one its own reads give (scale GET,
workload GET, pod list by ``status.selector``); a target missing from the list
fails alone; a list that fails leaves its namespace's targets to their own reads,
each failure its own."""
from __future__ import annotations

import collections
import io
import time
from contextlib import redirect_stderr

import pytest
import yaml

from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.providers import ErrorKind, MetricQuery, Observation, ProviderError, observes_in_batches

CPU = MetricQuery(name="cpu", type="resource", spec={"type": "resource", "name": "cpu"}, window_seconds=60.0)
POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 50,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}]}


def fleet(k8s, namespaces=3, per_namespace=4):
    """Deployments web-<i> in ns-<j> (pods started an hour ago), some of them with
    another app's pods beside them that no selector of theirs matches."""
    k8s.clock = lambda: time.time() - 3600
    refs = []
    for j in range(namespaces):
        for i in range(per_namespace):
            ns, name = f"ns-{j}", f"web-{i}"
            k8s.add_deployment(ns, name, replicas=1 + (i % 3), requests={"cpu": "500m"})
            k8s.set_pod_usage(ns, name, {"cpu": f"{200 + 50 * i}m"})
            refs.append({"kind": "Deployment", "namespace": ns, "name": name})
        k8s.add_statefulset(f"ns-{j}", "db", replicas=2, requests={"cpu": "1"})
    k8s.clock = time.time
    return refs


def counted(k8s):
    """The calls on API resources (not the one-off GET /version of the server's release)."""
    return collections.Counter(f"{r.verb} {r.resource}{'/' + r.subresource if r.subresource else ''}"
                               for r in k8s.requests if r.resource)


def comparable(obs: Observation) -> tuple:
    return (obs.current_replicas, obs.status_replicas, obs.members, obs.in_flight, obs.paused,
            obs.paused_replicas, obs.details)


def test_the_provider_declares_its_batched_observe(provider):
    assert observes_in_batches(provider)


def test_a_batch_reads_each_namespace_once_per_resource_and_observes_what_each_target_reads_alone(k8s, provider):
    refs = fleet(k8s, namespaces=3, per_namespace=4)
    targets = [provider.target(r) for r in refs]
    now = time.time()
    alone = [t.observe(now) for t in targets]
    alone_metrics = [t.read_metrics(now, o, [CPU]) for t, o in zip(targets, alone)]
    k8s.requests.clear()
    batched = provider.observe_many([(t, [CPU]) for t in targets], now)
    metrics = [t.read_metrics(now, o, [CPU]) for t, o in zip(targets, batched)]
    calls = counted(k8s)
    # one list of Deployments, of pods and of pod metrics per namespace; nothing per target
    assert calls == {"list deployments": 3, "list pods": 6}, calls   # pods: core and metrics.k8s.io
    assert [r.namespace for r in k8s.requests if r.resource == "deployments"] == ["ns-0", "ns-1", "ns-2"] or \
        sorted(r.namespace for r in k8s.requests if r.resource == "deployments") == ["ns-0", "ns-1", "ns-2"]
    assert [comparable(o) for o in batched] == [comparable(o) for o in alone]
    assert metrics == alone_metrics
    assert all(len(o.members) == o.current_replicas for o in batched)   # the db pods are no one's members here


def test_a_batch_over_the_whole_cluster_reads_each_resource_once(k8s, kubeconfig):
    from scalebridge_kubernetes import KubernetesProvider
    p = KubernetesProvider(kubeconfig=kubeconfig, qps=1000, burst=1000, list_scope="cluster")
    try:
        refs = fleet(k8s, namespaces=4, per_namespace=3)
        targets = [p.target(r) for r in refs]
        now = time.time()
        alone = [t.observe(now) for t in targets]
        k8s.requests.clear()
        batched = p.observe_many([(t, [CPU]) for t in targets], now)
        assert counted(k8s) == {"list deployments": 1, "list pods": 2}
        assert all(r.namespace is None for r in k8s.requests)
        assert [comparable(o) for o in batched] == [comparable(o) for o in alone]
    finally:
        p.close()


def test_a_target_missing_from_the_list_fails_alone(k8s, provider):
    refs = fleet(k8s, namespaces=1, per_namespace=3)
    refs.append({"kind": "Deployment", "namespace": "ns-0", "name": "gone"})
    got = provider.observe_many([(provider.target(r), []) for r in refs], time.time())
    assert [type(g).__name__ for g in got] == ["Observation"] * 3 + ["ProviderError"]
    assert got[3].kind is ErrorKind.NOT_FOUND and '"gone" not found' in got[3].message


def test_a_failed_namespace_list_leaves_only_its_targets_to_their_own_reads(k8s, provider):
    refs = fleet(k8s, namespaces=2, per_namespace=2)
    k8s.inject(403, method="GET", path_contains="/namespaces/ns-1/deployments", times=1)
    got = provider.observe_many([(provider.target(r), []) for r in refs], time.time())
    assert [g is None for g in got] == [False, False, True, True]


def test_a_sync_of_many_targets_makes_a_constant_number_of_calls_and_attributes_failures(k8s, kubeconfig, tmp_path):
    """Through the controller: the calls of a sync do not grow with the targets; a
    namespace whose reads fail fails its own targets (after their per-target reads),
    and no other."""
    def sync_calls(n_per_ns, fault=False):
        k8s.reset()
        refs = fleet(k8s, namespaces=2, per_namespace=n_per_ns)
        targets = [{"name": f"{r['namespace']}-{r['name']}", "provider": "kubernetes", "policy": "p", "ref": r}
                   for r in refs]
        cfg = tmp_path / f"run-{n_per_ns}-{fault}.yaml"
        cfg.write_text(yaml.safe_dump({"providers": {"kubernetes": {"kubeconfig": kubeconfig}},
                                       "policies": {"p": POLICY}, "targets": targets}))
        now = time.time()
        clock = VirtualClock(now)
        with redirect_stderr(io.StringIO()):
            c = build_controller(cfg, clock=clock, state=str(tmp_path / f"state-{n_per_ns}-{fault}.db"),
                                 dry_run=True)
        try:
            if fault:
                k8s.inject(403, method="GET", path_contains="/namespaces/ns-1/deployments", times=None)
            k8s.requests.clear()
            with redirect_stderr(io.StringIO()):
                report = c.sync(now)
            return counted(k8s), report
        finally:
            c.close()

    small, r_small = sync_calls(2)
    big, r_big = sync_calls(12)
    assert not r_small.failed and not r_big.failed
    # deployments, pods, pod metrics and (first sync) HPAs: once per namespace either way
    assert sum(big.values()) == sum(small.values()) == 2 * 4, big
    calls, report = sync_calls(3, fault=True)
    failed = sorted(name for name, _ in report.failed)
    assert failed == ["ns-1-web-0", "ns-1-web-1", "ns-1-web-2"]
    assert all("forbidden" in why or "403" in why for _, why in report.failed)
    # ns-1's targets tried their own reads (a scale GET each), ns-0's did not
    assert calls["get deployments/scale"] == 3


def test_the_default_observe_many_observes_each_target_and_keeps_its_failure():
    from scalebridge.providers import Provider, SizeChange, Target

    class T(Target):
        def __init__(self, n):
            self.n = n

        def observe(self, now):
            if self.n == 1:
                raise ProviderError(ErrorKind.NOT_FOUND, "no such group")
            return Observation(current_replicas=self.n)

        def set_size(self, size):
            return SizeChange(size)

    class P(Provider):
        def target(self, ref):
            return T(ref["n"])

    p = P()
    got = p.observe_many([(p.target({"n": i}), []) for i in range(3)], 0.0)
    assert got[0].current_replicas == 0 and got[2].current_replicas == 2
    assert isinstance(got[1], ProviderError) and got[1].message == "no such group"
    assert not observes_in_batches(p)


@pytest.mark.parametrize("selector,labels,matches", [
    ({"matchLabels": {"app": "web"}}, {"app": "web", "x": "1"}, True),
    ({"matchLabels": {"app": "web"}}, {"app": "db"}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}, {"tier": "b"}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}, {}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]}, {}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]}, {"tier": "a"}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, {"tier": ""}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, {"tier": ""}, False),
])
def test_pods_are_matched_as_the_api_server_matches_a_label_selector(k8s, selector, labels, matches):
    """The batch's matcher agrees with the API server's ``?labelSelector=`` on the
    selector's string form (the test server parses the string syntax)."""
    from scalebridge_kubernetes.batch import selector_matcher
    from scalebridge_kubernetes.fake_server import parse_label_selector, selector_string
    assert selector_matcher(selector)(labels) is matches
    assert parse_label_selector(selector_string(selector))(labels) is matches
