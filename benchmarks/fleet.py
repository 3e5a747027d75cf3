#!/usr/bin/env python3
"""Fleet scale on each cloud provider: N distinct targets (default 1,000 and
10,000) in one ``scalebridge run`` controller, against the provider's local
server (moto for AWS) with the real SDK, every call answered after ``--latency``
seconds (default 20 ms, a real API's round trip) and the client held to the
provider's documented default rate limit. Reported per provider and N: the API
calls of one steady-state sync (the first sync's one-off reads — launch times,
the refusal check — apart) and the sync's wall time, with reads batched
(``Provider.observe_many``, the default) and, ``--before``, one target at a time
as before the batch existed.

Rate limits modelled (the client's own, as the SDK enforces it):

- kubernetes: client-go's ``DefaultQPS`` 5 and ``DefaultBurst`` 10
  (k8s.io/client-go/rest/config.go), the provider's default; both list scopes
  (``namespace``: one list per namespace and resource; ``cluster``: one per
  resource).
- aws: moto enforces no limit; the Auto Scaling and CloudWatch limits are
  per-account token buckets AWS does not publish for every operation — the
  arithmetic against them is in docs/run.md's "Sizing" section.

``--instructions`` adds callgrind's instruction count of one steady sync (the
count of a run with two syncs less the one with one, valgrind's "I refs" of the
controller's process; the server's process is not counted), at
``--instruction-targets`` (default 1,000).

    .venv/bin/python benchmarks/fleet.py [--providers kubernetes,aws] [--targets 1000,10000]
        [--latency 0.02] [--before] [--syncs 2] [--instructions]
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any, Callable

# this directory holds scripts named like the SDKs (kubernetes.py): keep it off the import path
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import yaml  # noqa: E402

from scalebridge.controller.clock import VirtualClock  # noqa: E402
from scalebridge.controller.loop import build_controller  # noqa: E402

T0 = 1796150000.0
K8S_POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 50,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 60}}]}


class Setup:
    """One provider's fleet: the run configuration's provider options and targets,
    how to count the server's calls, and what to stop."""

    def __init__(self, providers: dict, policy: dict, targets: list, count: Callable[[], collections.Counter],
                 clear: Callable[[], None], close: Callable[[], None], label: str):
        self.providers, self.policy, self.targets = providers, policy, targets
        self.count, self.clear, self.close, self.label = count, clear, close, label


def _serve_kubernetes(conn, n: int, latency: float, kubeconfig: str, pods: int) -> None:
    """In a process of its own (a real API server is not in the controller's): the
    test API server with ``n`` Deployments, answering ``count``/``clear``/``stop``."""
    from scalebridge_kubernetes.fake_server import KubernetesServer
    sys.setswitchinterval(0.0005)
    k8s = KubernetesServer().start()
    k8s.clock = lambda: T0 - 3600
    namespaces = max(1, n // 100)
    for i in range(n):
        ns, name = f"ns-{i % namespaces}", f"web-{i}"
        k8s.add_deployment(ns, name, replicas=pods, requests={"cpu": "500m"})
        # distinct loads: each Deployment its own CPU (some settle, some want more)
        k8s.set_pod_usage(ns, name, {"cpu": f"{200 + (i * 7) % 300}m"})
    k8s.latency = latency
    k8s.kubeconfig(kubeconfig)
    conn.send("ready")
    while True:
        cmd = conn.recv()
        if cmd == "count":
            conn.send(dict(collections.Counter(
                f"{r.verb} {r.resource}{'/' + r.subresource if r.subresource else ''}"
                f"{'.' + r.group if r.group else ''}" for r in list(k8s.requests))))
        elif cmd == "clear":
            with k8s.lock:
                k8s.requests.clear()
            conn.send("ok")
        else:
            k8s.stop()
            conn.send("stopped")
            return


def _first_answer(conn, proc):
    """The server process's first message; its failure stops the benchmark (not a hang)."""
    while not conn.poll(1.0):
        if not proc.is_alive():
            raise SystemExit(f"the server process failed (exit {proc.exitcode}): see its traceback above")
    return conn.recv()


def kubernetes_setup(n: int, latency: float, tmp: Path, scope: str, pods: int = 1) -> Setup:
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    kubeconfig = str(tmp / "kubeconfig")
    proc = ctx.Process(target=_serve_kubernetes, args=(child, n, latency, kubeconfig, pods), daemon=True)
    proc.start()
    if _first_answer(parent, proc) != "ready":
        raise SystemExit("the test API server did not start")
    namespaces = max(1, n // 100)
    targets = [{"name": f"ns-{i % namespaces}-web-{i}", "provider": "kubernetes", "policy": "p",
                "ref": {"kind": "Deployment", "namespace": f"ns-{i % namespaces}", "name": f"web-{i}"}}
               for i in range(n)]

    def ask(cmd):
        parent.send(cmd)
        return parent.recv()

    def close():
        ask("stop")
        proc.join(5)

    # client-go's defaults (the provider's when qps/burst are not given)
    opts = {"kubeconfig": kubeconfig, "list_scope": scope}
    return Setup({"kubernetes": opts}, K8S_POLICY, targets, lambda: collections.Counter(ask("count")),
                 lambda: ask("clear"), close,
                 f"kubernetes list_scope={scope} ({namespaces} namespaces, {pods} pod each, client-go 5 QPS/burst 10)")


AWS_POLICY = {"semantics": "aws", "min_replicas": 1, "max_replicas": 10,
              "metrics": [{"type": "resource", "name": "cpu",
                           "target": {"type": "Utilization", "average_utilization": 50}}]}
AWS_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                   "AWS_DEFAULT_REGION": "us-east-1"}


def _serve_aws(conn, n: int, latency: float) -> None:
    """In a process of its own: moto's server behind the recording proxy, ``n``
    groups of one instance each with its own CPU in CloudWatch."""
    os.environ.update(AWS_CREDENTIALS)
    import boto3
    import moto.server as moto_server
    from datetime import datetime, timezone
    from scalebridge_aws.fake_server import AwsProxy
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    upstream = f"http://{host}:{port}"
    proxy = AwsProxy(upstream).start()
    kw = dict(endpoint_url=upstream, region_name="us-east-1")
    asg, ec2, cw = boto3.client("autoscaling", **kw), boto3.client("ec2", **kw), boto3.client("cloudwatch", **kw)
    ec2.create_launch_template(LaunchTemplateName="fleet-template", LaunchTemplateData={"ImageId": "ami-12c6146b",
                                                                            "InstanceType": "t3.micro"})
    data = []
    now = time.time()
    for i in range(n):
        asg.create_auto_scaling_group(AutoScalingGroupName=f"g-{i}", MinSize=1, MaxSize=10, DesiredCapacity=1,
                                      LaunchTemplate={"LaunchTemplateName": "fleet-template"}, AvailabilityZones=["us-east-1a"])
    for g in asg.get_paginator("describe_auto_scaling_groups").paginate(PaginationConfig={"PageSize": 100}):
        for group in g["AutoScalingGroups"]:
            i = int(group["AutoScalingGroupName"][2:])
            for inst in group["Instances"]:
                data.append({"MetricName": "CPUUtilization", "Unit": "Percent", "Value": 20.0 + (i * 7) % 60,
                             "Dimensions": [{"Name": "InstanceId", "Value": inst["InstanceId"]}],
                             "Timestamp": datetime.fromtimestamp(now - 150, timezone.utc)})
    for k in range(0, len(data), 1000):
        cw.put_metric_data(Namespace="AWS/EC2", MetricData=data[k:k + 1000])
    proxy.latency = latency
    conn.send(proxy.url)
    while True:
        cmd = conn.recv()
        if cmd == "count":
            conn.send(dict(collections.Counter(c.action for c in list(proxy.calls))))
        elif cmd == "clear":
            proxy.calls.clear()
            conn.send("ok")
        else:
            proxy.stop()
            server.stop()
            conn.send("stopped")
            return


def aws_setup(n: int, latency: float, tmp: Path) -> Setup:
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve_aws, args=(child, n, latency), daemon=True)
    proc.start()
    url = _first_answer(parent, proc)
    os.environ.update(AWS_CREDENTIALS)

    def ask(cmd):
        parent.send(cmd)
        return parent.recv()

    def close():
        ask("stop")
        proc.join(5)

    targets = [{"name": f"g-{i}", "provider": "aws", "policy": "p", "ref": {"auto_scaling_group": f"g-{i}"}}
               for i in range(n)]
    # the SDK's standard retry mode (botocore); AWS's throttles are server-side (docs/run.md, Sizing)
    opts = {"region": "us-east-1", "endpoint_url": url}
    return Setup({"aws": opts}, AWS_POLICY, targets, lambda: collections.Counter(ask("count")), lambda: ask("clear"),
                 close, "aws (moto behind the recording proxy, 1 instance a group)")


SETUPS: dict[str, Callable[..., Setup]] = {
    "aws": aws_setup,
    "kubernetes": lambda n, latency, tmp: kubernetes_setup(n, latency, tmp, "cluster"),
    "kubernetes-ns": lambda n, latency, tmp: kubernetes_setup(n, latency, tmp, "namespace"),
}


def run(provider: str, n: int, latency: float, syncs: int, before: bool, clock_set: bool = True) -> list[dict]:
    tmp = Path(tempfile.mkdtemp(prefix="scalebridge-fleet-"))
    s = SETUPS[provider](n, latency, tmp)
    try:
        cfg = tmp / "run.yaml"
        cfg.write_text(yaml.safe_dump({"providers": s.providers, "policies": {"p": s.policy},
                                       "targets": s.targets, "sync_period_seconds": 15}))
        clock = VirtualClock(T0)
        with redirect_stderr(io.StringIO()):
            c = build_controller(cfg, clock=clock, state=str(tmp / "state.db"), dry_run=True)
        if before:
            for spec in c.runtime.targets:
                spec.provider.batched = False
        rows = []
        for k in range(syncs):
            now = T0 + 15.0 * k
            clock.set(now)
            s.clear()
            start = time.perf_counter()
            with redirect_stderr(io.StringIO()):
                report = c.sync(now)
            seconds = time.perf_counter() - start
            calls = s.count()
            rows.append({"provider": provider, "label": s.label, "targets": n, "sync": k, "seconds": seconds,
                         "calls": sum(calls.values()), "by_call": dict(calls), "failed": len(report.failed),
                         "actions": dict(report.actions()), "mode": "per-target" if before else "batched"})
        c.close()
        return rows
    finally:
        s.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--providers", default="kubernetes,kubernetes-ns")
    ap.add_argument("--targets", default="1000,10000")
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--syncs", type=int, default=2)
    ap.add_argument("--before", action="store_true", help="also one target at a time (as before batching)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--instruction-targets", type=int, default=1000)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    sys.setswitchinterval(0.0005)     # the servers' threads answer sooner
    if a.child:     # under valgrind: provider:n:syncs, no latency
        provider, n, syncs = a.child.split(":")
        run(provider, int(n), 0.0, int(syncs), False)
        return 0
    rows = []
    for provider in a.providers.split(","):
        for n in (int(x) for x in a.targets.split(",")):
            for before in ((False, True) if a.before else (False,)):
                got = run(provider, n, a.latency, a.syncs, before)
                rows.extend(got)
                last = got[-1]
                print(f"{provider:<14} {last['mode']:<10} {n:>6} targets: steady sync {last['seconds']:6.2f} s, "
                      f"{last['calls']:>6} API calls ({last['calls'] / n:.3f}/target), failed {last['failed']}; "
                      f"first sync {got[0]['seconds']:.2f} s, {got[0]['calls']} calls  [{last['label']}]", flush=True)
                print(f"{'':<14} by call: {json.dumps(last['by_call'], sort_keys=True)}", flush=True)
    if a.instructions:
        for provider in a.providers.split(","):
            counts = []
            for syncs in (1, 2):
                proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                       sys.executable, __file__, "--child",
                                       f"{provider}:{a.instruction_targets}:{syncs}"],
                                      env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True)
                # the controller's own process (the first valgrind names), not the forked server's
                import re
                pid = re.search(r"==(\d+)==", proc.stderr)
                line = next((x for x in proc.stderr.splitlines()
                             if "refs:" in x and pid and x.startswith(f"=={pid.group(1)}==")), None)
                if proc.returncode != 0 or line is None:
                    raise SystemExit(f"valgrind failed: {proc.stderr[-400:]}")
                counts.append(int(line.split("refs:")[1].strip().replace(",", "")))
            per = counts[1] - counts[0]
            print(f"{provider:<14} callgrind: one steady sync of {a.instruction_targets} targets = {per:,} "
                  f"instructions ({per / a.instruction_targets:,.0f} per target; the controller's process)", flush=True)
            rows.append({"provider": provider, "instructions_per_sync": per, "targets": a.instruction_targets})
    if a.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
