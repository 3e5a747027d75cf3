"""deploy/: every manifest validates against the Kubernetes schemas
(kubernetes-validate, strict), the Helm chart renders the same objects, the
image's entry point is ``scalebridge run``, and the RBAC rules allow exactly the
calls the plugin makes — recorded from the test API server, checked both ways
(every call allowed, every granted verb used), as RBAC matches them
(https://kubernetes.io/docs/reference/access-authn-authz/rbac/#referring-to-resources).

No helm binary can be installed here: the chart's templates use only value
lookups, ``quote``, ``toYaml … | nindent N`` and ``if`` blocks, and
:func:`render` below implements exactly that subset of Go templates."""
from __future__ import annotations

import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from scalebridge.providers import MetricQuery

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "helm" / "scalebridge"


def plain_manifests() -> list[dict]:
    docs = []
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


# -- a renderer for the chart's template subset ----------------------------------------

_ACTION = re.compile(r"(\s*)\{\{(-?)\s*(.*?)\s*(-?)\}\}([ \t]*\n?)", re.S)


def _lookup(path: str, ctx: dict):
    cur = ctx
    for part in path.lstrip(".").split("."):
        cur = cur[part]
    return cur


def _value(expr: str, ctx: dict) -> str:
    parts = [p.strip() for p in expr.split("|")]
    head, pipes = parts[0], parts[1:]
    if head.startswith("toYaml "):
        value = yaml.safe_dump(_lookup(head[len("toYaml "):], ctx), default_flow_style=False, sort_keys=False).rstrip("\n")
    else:
        value = _lookup(head, ctx)
    for p in pipes:
        if p == "quote":
            value = '"' + str(value) + '"'
        elif p.startswith("nindent "):
            n = int(p.split()[1])
            value = "\n" + "\n".join(" " * n + line if line else line for line in str(value).splitlines())
        else:
            raise AssertionError(f"template function outside the chart's subset: {p}")
    return str(value)


def render(text: str, ctx: dict) -> str:
    out, pos, skip = [], 0, []
    for m in _ACTION.finditer(text):
        lead, trim_left, expr, trim_right, trail = m.groups()
        literal = text[pos:m.start()] + ("" if trim_left else lead)
        if not any(skip):
            out.append(literal)
        pos = m.end()
        tail = "" if trim_right else trail
        if expr.startswith("if "):
            skip.append(not _lookup(expr[3:].strip(), ctx))
            if not any(skip):
                out.append(tail)
            continue
        if expr == "end":
            skip.pop()
            continue
        if not any(skip):
            out.append(_value(expr, ctx) + tail)
    if not any(skip):
        out.append(text[pos:])
    return "".join(out)


def helm_template(values_override: dict | None = None, release: str = "scalebridge",
                  namespace: str = "scalebridge") -> list[dict]:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    values.update(values_override or {})
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    ctx = {"Values": values, "Release": {"Name": release, "Namespace": namespace},
           "Chart": {"AppVersion": chart["appVersion"], "Name": chart["name"]}}
    docs = []
    for path in sorted((CHART / "templates").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(render(path.read_text(), ctx)) if d]
    return docs


def key(doc):
    return doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"]


def comparable(doc):
    if doc["kind"] == "ConfigMap":
        doc = dict(doc, data={k: yaml.safe_load(v) for k, v in doc["data"].items()})
    return doc


# -- the manifests ---------------------------------------------------------------------

VERSION = kubernetes_validate.latest_version()


@pytest.mark.parametrize("doc", plain_manifests(), ids=lambda d: "/".join(str(x) for x in key(d)))
def test_every_manifest_validates(doc):
    kubernetes_validate.validate(doc, VERSION, strict=True)


def test_the_chart_renders_the_same_objects_and_they_validate():
    rendered = helm_template({"createNamespace": True})
    for doc in rendered:
        kubernetes_validate.validate(doc, VERSION, strict=True)
    assert {key(d): comparable(d) for d in rendered} == {key(d): comparable(d) for d in plain_manifests()}
    assert "Namespace" not in {d["kind"] for d in helm_template()}      # helm --create-namespace makes it


@pytest.mark.skipif(__import__("shutil").which("helm") is None,
                    reason="no helm binary: the chart is rendered by the template subset above")
def test_helm_template_renders_the_same_objects():
    import subprocess
    out = subprocess.run(["helm", "template", "scalebridge", str(CHART), "--namespace", "scalebridge",
                          "--set", "createNamespace=true"], check=True, capture_output=True, text=True,
                         timeout=60).stdout
    rendered = [d for d in yaml.safe_load_all(out) if d]
    for doc in rendered:
        kubernetes_validate.validate(doc, VERSION, strict=True)
    assert {key(d): comparable(d) for d in rendered} == {key(d): comparable(d) for d in plain_manifests()}


def test_the_chart_follows_its_values():
    docs = {d["kind"]: d for d in helm_template({"replicas": 3, "image": {"repository": "r/sb", "tag": "9"}},
                                                release="sb", namespace="ops")}
    dep = docs["Deployment"]
    assert dep["spec"]["replicas"] == 3 and dep["metadata"]["namespace"] == "ops"
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "r/sb:9"
    assert docs["ClusterRoleBinding"]["subjects"] == [{"kind": "ServiceAccount", "name": "sb", "namespace": "ops"}]


def test_the_deployment_runs_two_leader_electing_replicas_with_the_run_configuration():
    docs = {d["kind"]: d for d in plain_manifests() if d["kind"] != "ClusterRole"}
    dep, cm, svc, sa = docs["Deployment"], docs["ConfigMap"], docs["Service"], docs["ServiceAccount"]
    pod = dep["spec"]["template"]["spec"]
    assert dep["spec"]["replicas"] == 2
    args = pod["containers"][0]["args"]
    assert "--leader-elect" in args and args[0] == "/etc/scalebridge/config.yaml"
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    assert pod["volumes"][0]["configMap"]["name"] == cm["metadata"]["name"]
    assert svc["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    port = args[args.index("--metrics-port") + 1]
    assert pod["containers"][0]["ports"][0]["containerPort"] == int(port) == svc["spec"]["ports"][0]["port"]


def test_the_configurations_secrets_come_from_a_kubernetes_secret():
    """Environment variables for `${NAME}` and files for `*_file`, from one Secret of the
    operator's own, in the plain manifests and the chart (which names it by value)."""
    for docs, name in (({d["kind"]: d for d in plain_manifests()}, "scalebridge-secrets"),
                       ({d["kind"]: d for d in helm_template({"secretName": "prod-creds"}, release="sb",
                                                             namespace="ops")}, "prod-creds")):
        pod = docs["Deployment"]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        assert container["envFrom"] == [{"secretRef": {"name": name, "optional": True}}]
        [volume] = [v for v in pod["volumes"] if "secret" in v]
        assert volume["secret"] == {"secretName": name, "optional": True}
        [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
        assert mount["mountPath"] == "/etc/scalebridge/secrets" and mount["readOnly"] is True
        assert "Secret" not in docs, "the Secret is the operator's: no placeholder one is shipped"


def test_the_run_configuration_in_the_configmap_is_valid(tmp_path):
    from scalebridge.controller.configfile import load_config
    cm = next(d for d in plain_manifests() if d["kind"] == "ConfigMap")
    path = tmp_path / "config.yaml"
    path.write_text(cm["data"]["config.yaml"])
    cfg = load_config(path).config
    assert cfg.state == {"provider": "kubernetes", "namespace": "scalebridge", "name": "scalebridge-state"}
    assert cfg.leader_election.namespace == "scalebridge"


def test_the_image_entry_point_is_scalebridge_run():
    text = (DEPLOY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["scalebridge", "run"]' in text
    assert re.search(r'^CMD \[.*"--leader-elect"', text, re.M)
    assert re.search(r'^USER 65532', text, re.M)
    assert '.[kubernetes]' in text


def _docker_daemon() -> bool:
    import shutil
    import subprocess
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def test_the_build_context_holds_what_the_image_installs():
    """Every path the Dockerfile copies exists, and its .dockerignore lets exactly
    those through (no virtualenv in the context)."""
    text = (DEPLOY / "Dockerfile").read_text()
    copied = [p for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.M) for p in line.split()[:-1]]
    assert copied and all((ROOT / p).exists() for p in copied)
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert "*" in ignore and {f"!{p}" for p in copied} <= set(ignore)


@pytest.mark.slow
@pytest.mark.skipif(not _docker_daemon(), reason="no docker daemon: the Dockerfile's contents are checked above")
def test_the_image_builds_and_its_entry_point_is_scalebridge_run():
    import json
    import subprocess
    tag = "scalebridge:test-entrypoint"
    env = {**__import__("os").environ, "DOCKER_BUILDKIT": "1"}
    subprocess.run(["docker", "build", "-q", "-f", str(DEPLOY / "Dockerfile"), "-t", tag, str(ROOT)],
                   check=True, capture_output=True, env=env, timeout=900)
    try:
        inspect = subprocess.run(["docker", "image", "inspect", tag], check=True, capture_output=True, text=True)
        config = json.loads(inspect.stdout)[0]["Config"]
        assert config["Entrypoint"] == ["scalebridge", "run"]
        assert "--leader-elect" in config["Cmd"] and config["User"].startswith("65532")
        out = subprocess.run(["docker", "run", "--rm", tag, "--help"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.startswith("usage: scalebridge run"), out.stderr
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True)


# -- RBAC against the calls the plugin makes -------------------------------------------

def _rules():
    cluster, ns = [], []
    for d in plain_manifests():
        if d["kind"] == "ClusterRole":
            cluster += d["rules"]
        elif d["kind"] == "Role":
            ns += [(d["metadata"]["namespace"], r) for r in d["rules"]]
    return cluster, ns


def _matches(rule, group, resource, verb):
    return group in rule["apiGroups"] and verb in rule["verbs"] and \
        ("*" in rule["resources"] or resource in rule["resources"])


def recorded_calls(k8s, kubeconfig):
    """Everything the plugin does, recorded by the server as RBAC attributes."""
    from scalebridge.controller.clock import VirtualClock
    from scalebridge.controller.store import StoredTarget
    from scalebridge_kubernetes import KubernetesProvider
    p = KubernetesProvider(kubeconfig=kubeconfig, qps=1000, burst=1000)
    k8s.add_deployment("shop", "web", replicas=2, requests={"cpu": "500m"})
    k8s.add_statefulset("shop", "db", replicas=1)
    k8s.add_workload("ReplicaSet", "shop", "rs", replicas=1)
    k8s.set_pod_usage("shop", "web", {"cpu": "100m"})
    k8s.set_custom_pod_metric("shop", "rps", {p_["metadata"]["name"]: "1" for p_ in k8s.list("", "pods", "shop")})
    k8s.set_object_metric("shop", "ingresses.networking.k8s.io", "main", "hits", "5")
    k8s.set_external_metric("shop", "queue", [({}, "3")])
    queries = [MetricQuery("cpu", "resource", {"type": "resource", "name": "cpu"}, 60.0),
               MetricQuery("rps", "pods", {"type": "pods", "name": "rps"}, 60.0),
               MetricQuery("hits", "object", {"type": "object", "name": "hits"}, 60.0, source={
                   "described_object": {"api_version": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"}}),
               MetricQuery("queue", "external", {"type": "external", "name": "queue"}, 60.0)]
    for kind, name in (("Deployment", "web"), ("StatefulSet", "db"), ("ReplicaSet", "rs")):
        t = p.target({"kind": kind, "namespace": "shop", "name": name})
        t.managed_by()
        obs = t.observe(0.0)
        t.read_metrics(0.0, obs, queries)
        t.set_size(obs.current_replicas + 1)
        t.native_decision(0.0, None)
    k8s.put("autoscaling", "horizontalpodautoscalers", "shop", {
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                                 "name": "web"}, "minReplicas": 1, "maxReplicas": 5}})
    t = p.target({"kind": "Deployment", "namespace": "shop", "name": "web"})
    t.native_decision(0.0, None)            # list events of the HPA
    from scalebridge.providers import ScaleNotice
    for at in (0.0, 15.0):                  # create, then patch the series
        t.record_event(ScaleNotice("rescaled", 2, 3, "DesiredWithinRange", 1796150000.0 + at, "metric", "cpu",
                                   "resource"))
    t = p.target({"kind": "Deployment", "namespace": "shop", "name": "web"})   # a scale-in of chosen pods
    obs = t.observe(0.0)
    t.delete_members([obs.members[0].name], obs.current_replicas - 1)
    # one sync of many targets: lists, per namespace and over the cluster
    for scope in ("namespace", "cluster"):
        b = KubernetesProvider(kubeconfig=kubeconfig, qps=1000, burst=1000, list_scope=scope)
        targets = [b.target({"kind": kind, "namespace": "shop", "name": name})
                   for kind, name in (("Deployment", "web"), ("StatefulSet", "db"), ("ReplicaSet", "rs"))]
        assert all(o is not None for o in b.observe_many([(t, queries) for t in targets], 1.0))
        targets[0].managed_by()
        b.close()
    clock = VirtualClock(1796150000.0)
    el = p.elector("scalebridge", "scalebridge-controller", "me", clock)
    assert el.is_leader()                   # create
    clock.advance(2.0)
    assert el.is_leader()                   # update (renew)
    store = p.state_store(namespace="scalebridge", name="scalebridge-state")
    store.load_all()                        # get (not found)
    store.save([StoredTarget("web", "h", {"recommendations": []})])      # create
    store.save([StoredTarget("web", "h", {"recommendations": []})])      # update
    el.stop()
    p.close()
    # GET /version, a non-resource URL every cluster grants to everyone through the default
    # ClusterRole system:public-info-viewer (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
    # read once per provider session, and no rule of ours
    assert {r.path for r in k8s.requests if not r.resource} == {"/version"}
    return {(r.verb, r.group, r.resource + (f"/{r.subresource}" if r.subresource else ""), r.namespace)
            for r in k8s.requests if r.resource}


def test_the_rbac_rules_cover_exactly_the_calls_the_plugin_makes(k8s, kubeconfig):
    calls = recorded_calls(k8s, kubeconfig)
    cluster, ns = _rules()
    for verb, group, resource, namespace in sorted(calls, key=str):
        allowed = any(_matches(r, group, resource, verb) for r in cluster) or \
            any(n == namespace and _matches(r, group, resource, verb) for n, r in ns)
        assert allowed, f"the RBAC rules do not allow {verb} {group or 'core'}/{resource} in {namespace}"
    # and nothing more: every verb on every resource granted is one the plugin uses
    for rules in (cluster, [r for _, r in ns]):
        for r in rules:
            for group in r["apiGroups"]:
                for resource in r["resources"]:
                    for verb in r["verbs"]:
                        used = any(v == verb and g == group and (resource == "*" or res == resource)
                                   for v, g, res, _ in calls)
                        assert used, f"the RBAC rules grant {verb} {group or 'core'}/{resource}, never used"
    # the Lease and the state ConfigMap only in the controller's namespace
    assert {n for v, g, res, n in calls if res in ("leases", "configmaps")} == {"scalebridge"}
    assert not any(_matches(r, "", "configmaps", "get") or _matches(r, "coordination.k8s.io", "leases", "get")
                   for r in cluster)
