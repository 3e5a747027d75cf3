"""One sync observes many Auto Scaling groups from ``DescribeAutoScalingGroups``
pages of up to 100 names (``AutoScalingGroupNames`` with ``MaxRecords`` 100, API
Reference API_DescribeAutoScalingGroups.html), against moto behind the recording
proxy with the real boto3: each group's batched observation is the one its own
call gives; a group the page does not list fails alone; a page that fails leaves
its groups to their own reads."""
from __future__ import annotations

import time

from scalebridge.providers import ErrorKind, ProviderError, observes_in_batches
from scalebridge_aws.fake_server import Fault


def comparable(obs):
    return (obs.current_replicas, obs.status_replicas, obs.members, obs.in_flight, obs.min_size, obs.max_size,
            obs.details)


def test_groups_are_observed_in_pages_of_names_as_each_alone(world, provider, proxy):
    for i in range(3):
        world.group(f"web-{i}", desired=1 + i)
    p = provider()
    assert observes_in_batches(p)
    now = time.time()
    alone = [p.target({"auto_scaling_group": f"web-{i}"}).observe(now) for i in range(3)]
    proxy.calls.clear()
    targets = [p.target({"auto_scaling_group": f"web-{i}"}) for i in range(3)]
    batched = p.observe_many([(t, []) for t in targets], now)
    assert proxy.count("DescribeAutoScalingGroups") == 1
    assert [comparable(o) for o in batched] == [comparable(o) for o in alone]


def test_a_page_holds_at_most_one_hundred_names(world, provider, proxy):
    for i in range(130):
        world.asg.create_auto_scaling_group(AutoScalingGroupName=f"g-{i:03d}", MinSize=0, MaxSize=5,
                                            DesiredCapacity=0, LaunchTemplate={"LaunchTemplateName": world.template()},
                                            AvailabilityZones=["us-east-1a"])
    p = provider()
    proxy.calls.clear()
    got = p.observe_many([(p.target({"auto_scaling_group": f"g-{i:03d}"}), []) for i in range(130)], time.time())
    assert all(o.current_replicas == 0 for o in got)
    # the proxy refuses more names than MaxRecords allows, as Auto Scaling does
    assert [c.status for c in proxy.calls if c.action == "DescribeAutoScalingGroups"] == [200, 200]


def test_a_group_missing_from_the_page_fails_alone(world, provider):
    world.group("web", desired=2)
    p = provider()
    got = p.observe_many([(p.target({"auto_scaling_group": n}), []) for n in ("web", "gone")], time.time())
    assert got[0].current_replicas == 2
    assert isinstance(got[1], ProviderError) and got[1].kind is ErrorKind.NOT_FOUND and "'gone'" in got[1].message


def test_a_failed_page_fails_its_groups_with_the_servers_error(world, provider, proxy):
    # a group's own read is the same DescribeAutoScalingGroups call: retrying each group of a
    # throttled page would only multiply the calls; each fails with the page's error instead
    world.group("web", desired=2)
    world.group("api", desired=3)
    p = provider()
    proxy.add(Fault.throttle(action="DescribeAutoScalingGroups", times=1))
    web, api = p.target({"auto_scaling_group": "web"}), p.target({"auto_scaling_group": "api"})
    before = proxy.count("DescribeAutoScalingGroups")
    got = p.observe_many([(web, []), (api, [])], time.time())
    assert [type(g).__name__ for g in got] == ["ProviderError", "ProviderError"]
    assert {g.kind.value for g in got} == {"throttled"}
    assert proxy.count("DescribeAutoScalingGroups") - before == 1
    assert web.observe(time.time()).current_replicas == 2      # the next sync reads again


def cpu_query(window=900.0):
    from scalebridge.providers import MetricQuery
    return MetricQuery("cpu", "resource", {"type": "resource", "name": "cpu"}, window, 60.0,
                       frozenset({"series", "member_series"}), None)


def test_the_groups_metrics_are_read_in_shared_get_metric_data_calls_as_each_alone(world, provider, proxy):
    now = time.time()
    for i in range(3):
        for k, iid in enumerate(world.group(f"web-{i}", desired=2)):
            world.put_cpu(iid, [10 * i + k, 20 + k, 30 + i], now)
    world.group("quiet", desired=1)            # no datapoints: missing, never 0
    names = ["web-0", "web-1", "web-2", "quiet"]
    p = provider()
    alone = []
    for n in names:
        t = p.target({"auto_scaling_group": n})
        alone.append(t.read_metrics(now, t.observe(now), [cpu_query()]))
    assert proxy.count("GetMetricData") == 4
    proxy.calls.clear()
    targets = [p.target({"auto_scaling_group": n}) for n in names]
    batched = p.observe_many([(t, [cpu_query()]) for t in targets], now)
    metrics = [t.read_metrics(now, o, [cpu_query()]) for t, o in zip(targets, batched)]
    assert proxy.count("GetMetricData") == 1 and proxy.count("DescribeAutoScalingGroups") == 1
    assert metrics == alone and metrics[3] == {}
    assert metrics[1]["cpu"].member_series     # read, not empty


def test_a_failed_get_metric_data_fails_the_metrics_of_its_groups_only(world, provider, proxy):
    now = time.time()
    for n in ("web-0", "web-1"):
        for iid in world.group(n, desired=1):
            world.put_cpu(iid, [50, 50, 50], now)
    p = provider()
    a, b = p.target({"auto_scaling_group": "web-0"}), p.target({"auto_scaling_group": "web-1"})
    short = cpu_query(window=120.0)     # another StartTime: a call of its own
    proxy.add(Fault.throttle(service="monitoring", action="GetMetricData", times=1))
    got = p.observe_many([(a, [cpu_query()]), (b, [short])], now)
    assert all(o.current_replicas == 1 for o in got)      # the observations stand
    results = []
    for t, o, q in ((a, got[0], cpu_query()), (b, got[1], short)):
        try:
            results.append(t.read_metrics(now, o, [q]))
        except ProviderError as e:
            results.append(e)
    assert isinstance(results[0], ProviderError) and results[0].kind is ErrorKind.THROTTLED
    assert results[1]["cpu"].member_series
