#!/usr/bin/env python3
"""The aws provider at fleet size, against moto's server behind the recording
proxy (scalebridge_aws.fake_server), with the real boto3.

Two measurements:

1. API calls per target per sync, by group size: one group of M instances
   (default 2, 20, 100, 400), CPU per instance in CloudWatch, the target-tracking
   CPU policy under the ``aws`` semantics. The first sync (launch times, the
   refusal check) and the steady state after it (the goal: one Auto Scaling call
   and one CloudWatch call per sync, whatever the size), and an unsettled group
   (an instance Pending: the activities are asked too);
2. syncs per second: ``scalebridge run``'s controller on N groups (default 200)
   of 2 instances, ``--workers`` threads, the first sync and the steady state.

moto, the proxy and the clients share this process and the machine's cores, so
the rates are a floor for what the provider costs, not AWS's latency.

    .venv/bin/python benchmarks/aws.py [--groups 200] [--sizes 2,20,100,400] [--syncs 5] [--workers 16]
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import logging
import os
import sys
import tempfile
import time
import urllib.request
from contextlib import redirect_stderr
from datetime import datetime, timedelta, timezone

REGION = "us-east-1"
ACCOUNT = "123456789012"
AMI = "ami-12c6146b"
#: datapoints per instance: the scale-out alarm's 3 (moto's GetMetricData scans every stored datapoint for
#: every query and period, so more history costs moto, not the provider, time)
POINTS = 3
#: moto answers a 400-series GetMetricData in seconds: the benchmark's read timeout
READ_TIMEOUT = 300
PERIOD = 15.0
POLICY = {"semantics": "aws", "min_replicas": 1, "max_replicas": 1000,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 50}}]}


class World:
    def __init__(self, url: str):
        import boto3
        kw = dict(endpoint_url=url, region_name=REGION)
        self.url = url
        self.asg = boto3.client("autoscaling", **kw)
        self.ec2 = boto3.client("ec2", **kw)
        self.cw = boto3.client("cloudwatch", **kw)

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST"), timeout=60).read()
        self.ec2.create_launch_template(LaunchTemplateName="bench-template",
                                        LaunchTemplateData={"ImageId": AMI, "InstanceType": "t3.micro"})

    def group(self, name: str, size: int, cpu: float, now: float) -> list[str]:
        self.asg.create_auto_scaling_group(AutoScalingGroupName=name, MinSize=1, MaxSize=1000, DesiredCapacity=size,
                                           LaunchTemplate={"LaunchTemplateName": "bench-template"},
                                           AvailabilityZones=[f"{REGION}a"])
        from moto.backends import get_backend
        g = get_backend("autoscaling")[ACCOUNT][REGION].autoscaling_groups[name]
        for s in g.instance_states:          # launched an hour ago: warmed up
            s.instance.launch_time = s.instance.launch_time - timedelta(hours=1)
        ids = [s.instance.id for s in g.instance_states]
        end = (now - 60) // 60 * 60
        data = [{"MetricName": "CPUUtilization", "Dimensions": [{"Name": "InstanceId", "Value": i}],
                 "Timestamp": datetime.fromtimestamp(end - k * 60 - 30, timezone.utc), "Value": cpu, "Unit": "Percent"}
                for i in ids for k in range(POINTS)]
        for k in range(0, len(data), 1000):
            self.cw.put_metric_data(Namespace="AWS/EC2", MetricData=data[k:k + 1000])
        return ids


def by_service(calls) -> dict[str, int]:
    out: collections.Counter = collections.Counter()
    for c in calls:
        out[c.iam_action] += 1
    return dict(sorted(out.items()))


def calls_per_sync(world: World, proxy, sizes: list[int], syncs: int) -> list[dict]:
    from scalebridge.controller.queries import queries_for
    from scalebridge.policy import Policy
    from scalebridge_aws.provider import AwsProvider
    queries = queries_for(Policy.model_validate(POLICY), "aws")
    rows = []
    for size in sizes:
        world.reset()
        proxy.reset()
        now = time.time()
        world.group("web", size, 40.0, now)
        provider = AwsProvider(region=REGION, endpoint_url=proxy.url, max_attempts=1, read_timeout=READ_TIMEOUT)
        t = provider.target({"auto_scaling_group": "web"})

        def sync(now: float, first: bool = False) -> None:
            obs = t.observe(now)
            if first:
                t.managed_by()
            t.read_metrics(now, obs, queries)

        sync(now, first=True)
        first = by_service(proxy.calls)
        proxy.reset()
        t0 = time.perf_counter()
        for k in range(syncs):
            sync(now + 15 * (k + 1))
        dt = (time.perf_counter() - t0) / syncs
        steady = {k: v / syncs for k, v in by_service(proxy.calls).items()}
        proxy.reset()
        from moto.backends import get_backend
        get_backend("autoscaling")[ACCOUNT][REGION].autoscaling_groups["web"].instance_states[0].lifecycle_state = \
            "Pending"
        sync(now + 15 * (syncs + 1))
        unsettled = by_service(proxy.calls)
        provider.close()
        rows.append({"instances": size, "first_sync": first, "steady_per_sync": steady,
                     "unsettled_sync": unsettled, "steady_sync_seconds": round(dt, 4)})
    return rows


def fleet(world: World, proxy, groups: int, syncs: int, workers: int) -> dict:
    import yaml
    from scalebridge.controller.clock import VirtualClock
    from scalebridge.controller.loop import build_controller
    world.reset()
    proxy.reset()
    now = time.time()
    targets = []
    for i in range(groups):
        name = f"asg-{i:03d}"
        world.group(name, 2, 20.0 + 10 * (i % 5), now)      # 20 … 60 %: a few scale out on the first sync
        targets.append({"name": name, "provider": "aws", "policy": "cpu", "ref": {"auto_scaling_group": name}})
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "run.yaml")
        with open(config, "w") as f:
            yaml.safe_dump({"providers": {"aws": {"region": REGION, "endpoint_url": proxy.url, "max_attempts": 1,
                                                     "read_timeout": READ_TIMEOUT}},
                            "policies": {"cpu": POLICY}, "targets": targets}, f)
        # the loop's clock, without its sleeps: every sync 15 s after the last, as `scalebridge run` paces them
        clock = VirtualClock(now)
        c = build_controller(config, clock=clock, state=os.path.join(tmp, "state.db"), workers=workers)
        try:
            t0 = time.perf_counter()
            first = c.sync()
            t_first = time.perf_counter() - t0
            first_calls = by_service(proxy.calls)
            proxy.reset()
            reports = []
            t0 = time.perf_counter()
            for _ in range(syncs):
                clock.advance(PERIOD)
                reports.append(c.sync())
            t_steady = time.perf_counter() - t0
            steady_calls = by_service(proxy.calls)
        finally:
            c.close()
    n = sum(len(r.records) for r in reports)
    return {"groups": groups, "workers": workers,
            "first_sync_seconds": round(t_first, 2), "first_sync_target_syncs_per_second": round(groups / t_first, 1),
            "first_sync_actions": first.actions(), "first_sync_calls": first_calls,
            "steady_target_syncs_per_second": round(n / t_steady, 1),
            "steady_calls_per_target_sync": {k: round(v / n, 3) for k, v in steady_calls.items()},
            "steady_actions": dict(collections.Counter(a for r in reports for a in (x["action"] for x in r.records))),
            "steady_failed": sum(len(r.failed) for r in reports)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--sizes", default="2,20,100,400")
    ap.add_argument("--syncs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args(argv)
    for k, v in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": REGION}.items():
        os.environ.setdefault(k, v)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    from moto.server import ThreadedMotoServer
    from scalebridge_aws.fake_server import AwsProxy
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    proxy = AwsProxy(url).start()
    try:
        world = World(url)
        with redirect_stderr(io.StringIO()):
            sizes = [int(x) for x in args.sizes.split(",") if x]
            out = {"calls_per_sync": calls_per_sync(world, proxy, sizes, args.syncs) if sizes else [],
                   "fleet": fleet(world, proxy, args.groups, args.syncs, args.workers) if args.groups else {}}
    finally:
        proxy.stop()
        server.stop()
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
