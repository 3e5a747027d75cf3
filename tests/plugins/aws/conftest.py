"""The AWS test world: one moto server per test session on 127.0.0.1, reset
before every test, behind :class:`scalebridge_aws.fake_server.AwsProxy`
(calls recorded, faults injected, SetDesiredCapacity bounds enforced). The
plugin under test talks to the proxy with the real boto3; the tests set the
world up by talking to moto directly (so the proxy records only the plugin's
calls)."""
from __future__ import annotations

import os
import time
import urllib.request
from datetime import datetime, timezone
from typing import Optional

import pytest

from scalebridge_aws.fake_server import AwsProxy

REGION = "us-east-1"
ACCOUNT = "123456789012"
AMI = "ami-12c6146b"       # one of the AMIs moto's EC2 backend ships
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION}


@pytest.fixture(scope="session")
def moto_url():
    import moto.server as moto_server    # the dev extra: the AWS tests run against it, never skip
    old = {k: os.environ.get(k) for k in CREDENTIALS}
    os.environ.update(CREDENTIALS)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="session")
def proxy_session(moto_url):
    p = AwsProxy(moto_url).start()
    try:
        yield p
    finally:
        p.stop()


class World:
    """Set-up helpers talking to moto directly."""

    def __init__(self, moto_url: str, proxy: AwsProxy):
        import boto3
        self.moto_url = moto_url
        self.proxy = proxy
        self.url = proxy.url
        kw = dict(endpoint_url=moto_url, region_name=REGION)
        self.asg = boto3.client("autoscaling", **kw)
        self.ec2 = boto3.client("ec2", **kw)
        self.cw = boto3.client("cloudwatch", **kw)
        self._template = None

    def template(self) -> str:
        if self._template is None:
            self.ec2.create_launch_template(LaunchTemplateName="web-template",
                                            LaunchTemplateData={"ImageId": AMI, "InstanceType": "t3.micro"})
            self._template = "web-template"
        return self._template

    def group(self, name: str = "web", desired: int = 2, min_size: int = 1, max_size: int = 10, **kw) -> list[str]:
        """A group; returns its instance ids."""
        self.asg.create_auto_scaling_group(AutoScalingGroupName=name, MinSize=min_size, MaxSize=max_size,
                                           DesiredCapacity=desired,
                                           LaunchTemplate={"LaunchTemplateName": self.template()},
                                           AvailabilityZones=[f"{REGION}a"], **kw)
        return self.instances(name)

    def describe(self, name: str = "web") -> dict:
        return self.asg.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]

    def desired(self, name: str = "web") -> int:
        return self.describe(name)["DesiredCapacity"]

    def instances(self, name: str = "web") -> list[str]:
        return [i["InstanceId"] for i in self.describe(name)["Instances"]]

    def backend_group(self, name: str = "web"):
        """moto's own model of the group: the emulator's state, for what its API
        cannot reach (lifecycle states other than InService and Standby)."""
        from moto.backends import get_backend
        return get_backend("autoscaling")[ACCOUNT][REGION].autoscaling_groups[name]

    def set_state(self, instance_id: str, state: str, name: str = "web", health: Optional[str] = None) -> None:
        for s in self.backend_group(name).instance_states:
            if s.instance.id == instance_id:
                s.lifecycle_state = state
                if health is not None:
                    s.health_status = health
                return
        raise KeyError(instance_id)

    def age(self, seconds: float, name: str = "web") -> None:
        """Every instance of the group launched ``seconds`` ago (warmed up)."""
        from datetime import timedelta
        for s in self.backend_group(name).instance_states:
            s.instance.launch_time = s.instance.launch_time - timedelta(seconds=seconds)

    def put(self, namespace: str, metric: str, points: list[tuple[float, float]],
            dimensions: Optional[dict] = None, unit: Optional[str] = None) -> None:
        """Datapoints ``(time, value)`` of one metric."""
        dims = [{"Name": k, "Value": v} for k, v in (dimensions or {}).items()]
        data = []
        for t, v in points:
            d = {"MetricName": metric, "Dimensions": dims, "Timestamp": datetime.fromtimestamp(t, timezone.utc),
                 "Value": v}
            if unit:
                d["Unit"] = unit
            data.append(d)
        for k in range(0, len(data), 500):
            self.cw.put_metric_data(Namespace=namespace, MetricData=data[k:k + 500])

    def put_cpu(self, instance_id: str, values: list[float], now: Optional[float] = None, period: int = 60,
                dimensions: Optional[dict] = None) -> None:
        """``values`` one per minute, the last one in the minute before ``now``'s
        metric-delayed end: oldest first, each in the middle of its period."""
        self.put("AWS/EC2", "CPUUtilization", minutes(values, now, period),
                 dimensions or {"InstanceId": instance_id}, "Percent")


def minutes(values: list[float], now: Optional[float] = None, period: int = 60) -> list[tuple[float, float]]:
    """Datapoints one per period, oldest first, the newest in the last whole period
    before ``now`` less the provider's default 60 s metric delay."""
    now = time.time() if now is None else now
    end = (now - 60) // period * period
    n = len(values)
    return [(end - (n - k) * period + period / 2, v) for k, v in enumerate(values)]


@pytest.fixture(scope="session")
def world_session(moto_url, proxy_session):
    return World(moto_url, proxy_session)


def reset(moto_url: str, proxy: AwsProxy, world: World) -> World:
    req = urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST")
    urllib.request.urlopen(req, timeout=30).read()
    proxy.reset()
    proxy.strict = True
    world._template = None
    return world


@pytest.fixture
def world(moto_url, proxy_session, world_session):
    return reset(moto_url, proxy_session, world_session)


@pytest.fixture(scope="module")
def module_world(moto_url, proxy_session, world_session):
    """One reset for a module whose tests only read the world they share (each
    test still gets the proxy's faults and calls cleared: ``shared``)."""
    return reset(moto_url, proxy_session, world_session)


@pytest.fixture
def shared(module_world):
    module_world.proxy.faults.clear()
    module_world.proxy.calls.clear()
    yield module_world
    module_world.proxy.faults.clear()


@pytest.fixture
def proxy(world):
    return world.proxy


@pytest.fixture
def provider(world):
    from scalebridge_aws.provider import AwsProvider
    made = []

    def make(**options):
        opts = {"region": REGION, "endpoint_url": world.url, "max_attempts": 1}
        opts.update(options)
        p = AwsProvider(**opts)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()
