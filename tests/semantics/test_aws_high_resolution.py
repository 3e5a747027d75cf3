"""AWS target tracking on high-resolution metrics: a metric period of 10 or 30 s.

Sources: "To scale on a high-resolution metric, specify the name of the metric and set the metric
period at which the target tracking observes this metric to a value lower than 60 seconds.
Currently the lowest supported interval is 10 seconds … A metric period greater than 60 isn't
supported" (EC2 Auto Scaling User Guide, "Create a target tracking policy using high-resolution
metrics for faster response",
https://docs.aws.amazon.com/autoscaling/ec2/userguide/policy-creating-high-resolution-metrics.html,
"How target tracking policy with high-resolution metrics works"); ``Period``: "Accepted values are
10, 30, and 60" (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_TargetTrackingMetricStat.html).
AWS documents no alarm shape at any period: the datapoint counts are scalebridge's choice
(constants.AWS_TT_ALARM_DATAPOINTS; docs/known-divergences.md).
"""
import pytest

from scalebridge import constants as C
from scalebridge import decide
from scalebridge.errors import RequestError
from scalebridge.testing.requests import NOW, aws_request, cpu, instances


def tt(period=None, target=50):
    m = cpu(target)
    if period is not None:
        m["period_seconds"] = period
    return m


def series(values, step):
    """A series of ``values`` newest last, one every ``step`` seconds ending at NOW."""
    n = len(values)
    return [[NOW - step * (n - 1 - j), v] for j, v in enumerate(values)]


def request(period, values, step, current=4, target=50):
    req = aws_request(current, 0, metrics=[tt(period, target)], members=instances(current))
    req["observations"]["metrics"] = {"cpu": {"series": series(values, step)}}
    return req


def test_a_10_s_policy_scales_out_on_three_10_s_datapoints_above_the_target():
    """Half a minute above the target: at 10 s, 3 of 3 datapoints breach (AWS_TT_ALARM_DATAPOINTS[10])
    and the policy asks for ceil(4 × 80 / 50) = 7; at 60 s the same half minute is one datapoint of
    one minute, and 3 of 3 one-minute datapoints are not there yet."""
    values = [40] * 30 + [80] * 3
    fast = decide(request(10, values, 10))
    assert fast["desired_replicas"] == 7, fast
    slow = decide(request(None, values, 10))
    assert slow["desired_replicas"] == 4


def test_a_10_s_policy_reads_its_datapoints_at_its_own_period():
    """A 10-s spike inside one minute averages out over 60 s (one minute at (5 × 40 + 100) / 6 = 50, not
    above a target of 50) but breaches three 10-s datapoints."""
    values = [40] * 60 + [40, 40, 40, 100, 100, 100]
    assert decide(request(10, values, 10))["desired_replicas"] == 8     # ceil(4 × 100 / 50)
    assert decide(request(60, values, 10))["desired_replicas"] == 4


def test_a_30_s_policy_scales_in_after_15_datapoints_below_90_percent_of_the_target():
    """Below 45 % (90 % of 50) for 15 of 15 datapoints: at 30 s that is 7.5 minutes; at 60 s the same
    7.5 minutes are not the 15 minutes the one-minute low alarm needs."""
    values = [60] * 20 + [20] * 16
    got = decide(request(30, values, 30, current=6))
    assert got["desired_replicas"] == 3, got           # ceil(6 × 20 / 50)
    assert decide(request(60, values, 30, current=6))["desired_replicas"] == 6


def test_the_alarm_shapes_are_a_switchable_constant(monkeypatch):
    """At 10 s scalebridge chooses 3 of 3 datapoints; with alarms spanning the same three minutes
    (18 of 18) the half minute above the target no longer scales out. The constant is read when a
    policy is compiled (once per policy): a policy not decided on before (target 49) reads the switch."""
    values = [40] * 30 + [80] * 3
    assert decide(request(10, values, 10, target=48))["desired_replicas"] == 7      # ceil(4 × 80 / 48)
    monkeypatch.setitem(C.AWS_TT_ALARM_DATAPOINTS, 10, (18, 90))
    assert decide(request(10, values, 10, target=49))["desired_replicas"] == 4


@pytest.mark.parametrize("period", [5, 20, 120])
def test_a_period_aws_does_not_accept_is_refused_naming_where(period):
    req = request(None, [50] * 20, 60)
    req["policy"]["metrics"][0]["period_seconds"] = period
    with pytest.raises(RequestError) as e:
        decide(req)
    assert "$.policy.metrics[0].period_seconds" in str(e.value)
