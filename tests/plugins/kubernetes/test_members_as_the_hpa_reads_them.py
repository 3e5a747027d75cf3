"""The kubernetes semantics gets from the plugin exactly what the HPA controller
uses: pods from the scale's ``status.selector`` with their phase, Ready condition
and its lastTransitionTime, startTime, deletionTimestamp and requests, and the
PodMetrics of metrics.k8s.io (``groupPods``, ``calculateRequests`` and
``GetResourceReplicas`` in pkg/controller/podautoscaler/replica_calculator.go;
``getPodMetrics`` in pkg/controller/podautoscaler/metrics/client.go)."""
from scalebridge.engine import decide, load_policy
from scalebridge.protocol import Settings, parse_observations
from scalebridge.providers import MetricQuery

NOW = 1796150000.0
POLICY = {"min_replicas": 1, "max_replicas": 20,
          "metrics": [{"type": "resource", "name": "cpu",
                       "target": {"type": "Utilization", "average_utilization": 60}}]}
CPU = MetricQuery("cpu", "resource", POLICY["metrics"][0], 60.0)


def cluster(k8s, now=NOW):
    """Eight pods of one Deployment (spec.replicas 8), one of each kind groupPods
    tells apart, each requesting 500m CPU."""
    k8s.clock = lambda: now
    k8s.auto_reconcile = False
    k8s.add_deployment("shop", "web", replicas=8, requests={"cpu": "500m"})
    web = {"app": "web"}
    req = {"cpu": "500m"}
    k8s.add_pod("shop", "ready-1", labels=web, requests=req, start_time=now - 3600)
    k8s.add_pod("shop", "ready-2", labels=web, requests=req, start_time=now - 3600)
    # not ready now, but it was ready after the initial readiness delay: counted
    k8s.add_pod("shop", "unready-later", labels=web, requests=req, ready=False, start_time=now - 3600,
                ready_transition_time=now - 600)
    # past the CPU initialization period and never ready since the readiness delay: unready
    k8s.add_pod("shop", "never-ready", labels=web, requests=req, ready=False, start_time=now - 400,
                ready_transition_time=now - 390)
    # inside the CPU initialization period, its sample taken within one window of turning ready: unready
    k8s.add_pod("shop", "initializing", labels=web, requests=req, start_time=now - 100,
                ready_transition_time=now - 20)
    k8s.add_pod("shop", "no-metrics", labels=web, requests=req, start_time=now - 3600)     # missing
    k8s.add_pod("shop", "pending", labels=web, requests=req, phase="Pending", ready=False)  # unready
    k8s.add_pod("shop", "deleting", labels=web, requests=req, start_time=now - 3600, deleting=True)  # ignored
    k8s.add_pod("shop", "failed", labels=web, requests=req, phase="Failed", ready=False,
                start_time=now - 3600)                                                     # ignored
    k8s.add_pod("shop", "other-app", labels={"app": "api"}, requests=req, start_time=now - 3600)  # not selected
    for pod in ("ready-1", "ready-2", "unready-later", "never-ready", "initializing", "deleting", "failed",
                "other-app"):
        k8s.set_pod_metrics("shop", pod, {"app": {"cpu": "900m"}}, timestamp=now - 10, window=30)


def written_by_hand(now=NOW):
    """The same cluster as a decision request, written from the upstream rules."""
    def pod(name, phase="Running", ready=True, start=now - 3600, transition=None, deleting=False):
        return {"name": name, "phase": phase, "ready": ready, "start_time": start,
                "ready_transition_time": start if transition is None else transition, "deleting": deleting,
                "requests": {"cpu": "500m"}}
    members = [pod("deleting", deleting=True), pod("failed", phase="Failed", ready=False),
               pod("initializing", start=now - 100, transition=now - 20),
               pod("never-ready", ready=False, start=now - 400, transition=now - 390),
               pod("no-metrics"),
               # no startTime yet: read like a pod without a Ready condition (ready null)
               {"name": "pending", "phase": "Pending", "ready": None, "start_time": None,
                "ready_transition_time": now, "deleting": False, "requests": {"cpu": "500m"}},
               pod("ready-1"), pod("ready-2"), pod("unready-later", ready=False, transition=now - 600)]
    samples = {n: "900m" for n in ("deleting", "failed", "initializing", "never-ready", "ready-1", "ready-2",
                                   "unready-later")}
    return {"semantics": "kubernetes", "now": now, "current_replicas": 8, "policy": POLICY,
            "observations": {"status_replicas": 0, "members": members,
                             "metrics": {"cpu": {"members": samples, "timestamp": now - 10, "window": 30}}}}


def from_the_plugin(provider):
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.use_policy(load_policy(POLICY), Settings())
    obs = t.observe(NOW)
    metrics = t.read_metrics(NOW, obs, [CPU])
    return {"semantics": "kubernetes", "now": NOW, "current_replicas": obs.current_replicas, "policy": POLICY,
            "observations": {"status_replicas": obs.status_replicas,
                             "members": sorted(obs.members, key=lambda m: m.name), "metrics": metrics}}


def test_the_plugin_observes_what_the_hpa_controller_would_use(k8s, provider):
    """The plugin's observation (the core's own types) is the hand-written request's, validated."""
    cluster(k8s)
    got, want = from_the_plugin(provider), written_by_hand()
    hand = parse_observations(want["observations"])
    assert got["observations"]["members"] == hand.members
    assert got["observations"]["metrics"] == hand.metrics
    assert got["observations"]["status_replicas"] == hand.status_replicas
    assert {k: v for k, v in got.items() if k != "observations"} == \
        {k: v for k, v in want.items() if k != "observations"}


def test_the_decision_equals_decide_on_the_hand_written_request(k8s, provider):
    cluster(k8s)
    got = decide(from_the_plugin(provider))
    want = decide(written_by_hand())
    assert got == want
    # Upstream, by hand: ready-1, ready-2 and unready-later count (3 ready pods, 2700m of
    # 1500m requested: 180 %, ratio 3.0 > 1); no-metrics is missing; never-ready,
    # initializing and pending are unready; deleting and failed are ignored. Scaling up,
    # missing and unready pods count as 0 usage: 2700m of 7 × 500m = 77 % (truncated),
    # 77/60 = 1.283 still > 1 → ceil(1.283 × 7) = 9. The status reports the first
    # pass's utilization (GetResourceReplicas returns it), 180 %.
    assert got["desired_replicas"] == 9
    assert got["metrics"][0]["utilization"] == 180


def test_pod_fields_the_hpa_reads_as_it_reads_them(k8s, provider):
    k8s.clock = lambda: NOW
    k8s.auto_reconcile = False
    k8s.add_deployment("shop", "web", replicas=4)
    web = {"app": "web"}
    # a Ready condition of status Unknown is not False: groupPods counts the pod as ready
    k8s.add_pod("shop", "unknown", labels=web, requests={"cpu": "100m"}, start_time=NOW - 60)
    pod = k8s.get("", "pods", "shop", "unknown")
    pod["status"]["conditions"][0]["status"] = "Unknown"
    k8s.put("", "pods", "shop", pod)
    # no startTime: treated like a pod without a Ready condition
    k8s.add_pod("shop", "unstarted", labels=web, requests={"cpu": "100m"})
    pod = k8s.get("", "pods", "shop", "unstarted")
    del pod["status"]["startTime"]
    k8s.put("", "pods", "shop", pod)
    # a restartable init container (a sidecar) adds its request; a plain init container does not
    k8s.add_pod("shop", "sidecar", labels=web, requests={"cpu": "200m", "memory": "64Mi"},
                init_containers=[{"name": "proxy", "requests": {"cpu": "50m"}, "restart_policy": "Always"},
                                 {"name": "migrate", "requests": {"cpu": "2"}}])
    # pod-level requests win over the containers' (KEP-2837)
    k8s.add_pod("shop", "pod-level", labels=web, requests={"cpu": "200m"}, pod_requests={"cpu": "1500m"})
    # one container without a request: that resource is missing for the pod
    k8s.add_pod("shop", "partial", labels=web,
                containers=[{"name": "a", "requests": {"cpu": "100m"}}, {"name": "b", "requests": None}])
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    m = {x.name: x for x in t.observe(NOW).members}
    assert m["unknown"].ready is True
    assert m["unstarted"].ready is None
    # the sidecar requests no memory: "missing request for memory in container proxy"
    assert m["sidecar"].requests == {"cpu": "250m", "memory": None}
    assert m["pod-level"].requests == {"cpu": "1500m"}
    assert m["partial"].requests == {"cpu": None}
    # each missing request in the controller's own words (calculatePodRequestsFromContainers,
    # replica_calculator.go): the first container without it is named
    assert m["sidecar"].request_errors == {"memory": "missing request for memory in container proxy of Pod sidecar"}
    assert m["partial"].request_errors == {"cpu": "missing request for cpu in container b of Pod partial"}
    assert m["unknown"].request_errors is None


def test_a_missing_request_fails_the_metric_in_the_controllers_words(k8s, provider):
    """calculatePodLevelRequests / calculatePodRequestsFromContainers
    (pkg/controller/podautoscaler/replica_calculator.go): the metric's error is the
    controller's text for the pod and container that lack the request."""
    k8s.clock = lambda: NOW
    k8s.auto_reconcile = False
    k8s.add_deployment("shop", "web", replicas=2)
    web = {"app": "web"}
    k8s.add_pod("shop", "web-a", labels=web, requests={"cpu": "200m", "memory": "64Mi"}, pod_requests={"cpu": "1"},
                start_time=NOW - 3600)
    k8s.add_pod("shop", "web-b", labels=web, containers=[{"name": "app", "requests": {"cpu": "100m"}}],
                start_time=NOW - 3600)
    memory = {"min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "resource", "name": "memory",
                           "target": {"type": "Utilization", "average_utilization": 50}}]}
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.use_policy(load_policy(memory), Settings())
    m = {x.name: x for x in t.observe(NOW).members}
    assert m["web-a"].request_errors == {"memory": "missing pod-level request for memory in Pod web-a"}
    assert m["web-b"].request_errors == {"memory": "missing request for memory in container app of Pod web-b"}
    sidecar = {"min_replicas": 1, "max_replicas": 10,
               "metrics": [{"type": "container_resource", "name": "cpu", "container": "proxy",
                            "target": {"type": "Utilization", "average_utilization": 50}}]}
    t.use_policy(load_policy(sidecar), Settings())
    m = {x.name: x for x in t.observe(NOW).members}
    assert m["web-b"].requests["cpu"] is None
    assert m["web-b"].request_errors == {"cpu": "container proxy not found in Pod web-b"}
    # and the decision's metric error is that text
    k8s.set_pod_metrics("shop", "web-a", {"app": {"cpu": "100m"}}, timestamp=NOW - 5)
    k8s.set_pod_metrics("shop", "web-b", {"app": {"cpu": "100m"}}, timestamp=NOW - 5)
    members = [x for x in t.observe(NOW).members]
    members.sort(key=lambda x: x.name != "web-b")
    got = decide({"semantics": "kubernetes", "now": NOW, "policy": sidecar, "current_replicas": 2,
                  "observations": {"members": [
                      {"name": x.name, "start_time": x.start_time, "ready": x.ready,
                       "ready_transition_time": x.ready_transition_time, "requests": x.requests,
                       "request_errors": x.request_errors} for x in members],
                      "metrics": {"cpu": {"members": {"web-a": "100m", "web-b": "100m"}, "timestamp": NOW - 5}}}})
    assert "container proxy not found in Pod web-b" in got["metrics"][0]["error"]


def test_a_container_resource_metric_reads_that_containers_requests_and_usage(k8s, provider):
    k8s.clock = lambda: NOW
    k8s.auto_reconcile = False
    k8s.add_deployment("shop", "web", replicas=2)
    two = [{"name": "app", "requests": {"cpu": "500m"}}, {"name": "proxy", "requests": {"cpu": "100m"}}]
    for name in ("web-a", "web-b"):
        k8s.add_pod("shop", name, labels={"app": "web"}, containers=two, start_time=NOW - 3600)
        k8s.set_pod_metrics("shop", name, {"app": {"cpu": "400m"}, "proxy": {"cpu": "90m"}}, timestamp=NOW - 5)
    policy = {"min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "container_resource", "name": "cpu", "container": "app",
                           "target": {"type": "Utilization", "average_utilization": 50}}]}
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.use_policy(load_policy(policy), Settings())
    obs = t.observe(NOW)
    assert [m.requests for m in obs.members] == [{"cpu": "500m"}, {"cpu": "500m"}]
    q = MetricQuery("cpu", "container_resource", policy["metrics"][0], 60.0)
    assert t.read_metrics(NOW, obs, [q])["cpu"].members == {"web-a": "400m", "web-b": "400m"}
    # the whole pod (resource) sums the containers instead
    whole = MetricQuery("cpu", "resource", {"type": "resource", "name": "cpu"}, 60.0)
    t2 = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    obs2 = t2.observe(NOW)
    assert obs2.members[0].requests == {"cpu": "600m"}
    assert t2.read_metrics(NOW, obs2, [whole])["cpu"].members == {"web-a": "490m", "web-b": "490m"}


def test_scalebridge_run_decides_what_scalebridge_decide_says_of_the_hand_written_request(k8s, kubeconfig,
                                                                                         tmp_path, capsys):
    """The same cluster, now on the wall clock, through ``scalebridge run --once
    --dry-run``; the hand-written request through ``scalebridge decide``."""
    import json
    import time

    import yaml

    from scalebridge.cli import main
    now = time.time()
    cluster(k8s, now)
    k8s.clock = time.time
    (tmp_path / "request.json").write_text(json.dumps(written_by_hand(now)))
    capsys.readouterr()
    assert main(["decide", str(tmp_path / "request.json")]) == 0
    decided = json.loads(capsys.readouterr().out.splitlines()[0])
    cfg = tmp_path / "run.yaml"
    cfg.write_text(yaml.safe_dump({"providers": {"kubernetes": {"kubeconfig": str(kubeconfig)}},
                                   "policies": {"p": dict(POLICY, semantics="kubernetes")},
                                   "targets": [{"name": "web", "provider": "kubernetes", "policy": "p",
                                                "ref": {"kind": "Deployment", "namespace": "shop", "name": "web"}}]}))
    rc = main(["run", str(cfg), "--once", "--dry-run", "--audit", str(tmp_path / "audit.jsonl"),
               "--state", str(tmp_path / "state.db")])
    record = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[0])
    assert rc == 0
    assert decided["desired_replicas"] == 9
    assert (record["current_replicas"], record["recommended_replicas"], record["desired_replicas"]) == \
        (decided["current_replicas"], decided["recommended_replicas"], decided["desired_replicas"])
    assert record["action"] == "dry_run"


def test_each_pods_own_sample_time_decides_whether_it_is_still_initializing(k8s, provider):
    """metrics-server scrapes each node on its own, so PodMetrics carry their own
    ``timestamp`` and ``window``; ``getPodMetrics`` keeps them per pod and
    ``groupPods`` reads ``metric.Timestamp.Before(condition.LastTransitionTime.Add(
    metric.Window))`` per pod. Three pods started 60 s ago (inside the CPU
    initialization period), ready 40 s ago, 30 s windows: ``a`` and ``c`` sampled 5 s
    ago count; ``b`` sampled 15 s ago — before its transition plus one window — is
    unready, though the list's first item (``a``) is fresh."""
    k8s.clock = lambda: NOW
    k8s.auto_reconcile = False
    k8s.add_deployment("shop", "web", replicas=3, requests={"cpu": "1"})
    for name, usage, age in (("a", "900m", 5), ("b", "2", 15), ("c", "900m", 5)):
        k8s.add_pod("shop", name, labels={"app": "web"}, requests={"cpu": "1"}, start_time=NOW - 60,
                    ready_transition_time=NOW - 40)
        k8s.set_pod_metrics("shop", name, {"app": {"cpu": usage}}, timestamp=NOW - age, window=30)
    policy = {"min_replicas": 1, "max_replicas": 20,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 50}}]}
    t = provider.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.use_policy(load_policy(policy), Settings())
    obs = t.observe(NOW)
    metrics = t.read_metrics(NOW, obs, [MetricQuery("cpu", "resource", policy["metrics"][0], 60.0)])
    assert metrics["cpu"].timestamp == NOW - 5
    assert metrics["cpu"].member_timestamps == {"a": NOW - 5, "b": NOW - 15, "c": NOW - 5}
    got = decide({"semantics": "kubernetes", "now": NOW, "current_replicas": 3, "policy": policy,
                  "observations": {"members": obs.members, "metrics": metrics}})
    # By hand: a and c ready at 90 % of their request (ratio 1.8 > 1); b unready, so on a
    # scale-up it counts as 0: (900 + 900 + 0) / 3000 = 60 %, ratio 1.2 → ceil(1.2 × 3) = 4.
    # Read with the first item's time for every pod, b would count at 200 %: 126 % of 50,
    # ceil(2.52 × 3) = 8, cut to 6 by the scale-up limit without behavior (max(2 × 3, 4)).
    assert got["desired_replicas"] == 4 and got["metrics"][0]["replicas"] == 4
