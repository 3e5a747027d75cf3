"""Fidelity audit of the ``aws`` semantics against the Amazon EC2 Auto Scaling documentation.

Each test quotes the page it checks; each was failing before the fix in
``core/scalebridge/semantics/aws.py`` (or, for the warm-up setting, ``protocol.py``) that it names.
"""
import pytest

from scalebridge import decide
from scalebridge.semantics.aws import forecast_at
from scalebridge.testing.requests import NOW
from tests.semantics.test_aws_documented import STEP_IN, TT_CPU, request

API_PRED = "https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PredictiveScalingConfiguration.html"
UG_TT = "https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html"


# ----------------------------------------------------------------------------- SchedulingBufferTime


def test_scheduling_buffer_advances_launches_not_reductions():
    """API_PredictiveScalingConfiguration, SchedulingBufferTime: "The amount of time, in seconds, by
    which the instance launch time can be advanced. For example, the forecast says to add capacity at
    10:00 AM, and you choose to pre-launch instances by 5 minutes. In that case, the instances will be
    launched at 9:55 AM." User guide (ec2-auto-scaling-predictive-scaling.html): "Amazon EC2 Auto
    Scaling scales the number of instances at the beginning of each hour".

    The buffer advances *launches*: an hour whose forecast is lower does not take effect early — the
    current hour's capacity stays in force until the hour begins. (The port took the next hour's value
    as soon as it entered the buffer, dropping a 9-instance floor to 6 at 10:55.)"""
    ten = NOW + 36000
    series = [(ten - 3600, 4), (ten, 9), (ten + 3600, 6)]
    assert forecast_at(series, ten - 300, 300) == 9          # 9:55: the 10:00 launch, advanced
    assert forecast_at(series, ten + 3300, 300) == 9         # 10:55: 10:00's 9 holds until 11:00
    assert forecast_at(series, ten + 3600, 300) == 6         # 11:00: the lower hour begins
    assert forecast_at(series, ten + 3300, 0) == 9


def test_a_lower_next_hour_does_not_release_the_forecast_floor_early():
    """Same source, through ``decide``: at 10:57 (buffer 300 s) a step scale-in from 9 asks for 8; the
    10:00 hour forecasts 9 and the 11:00 hour 6. Predictive scaling "determines the desired capacity
    independently, and the desired capacity is set to the maximum of those"
    (ec2-auto-scaling-predictive-scaling.html) — 9 until 11:00, not 8."""
    ten = NOW - 3420                                         # now = 10:57
    rule = {**STEP_IN, "adjustment_type": "ChangeInCapacity",
            "steps": [{"lower": None, "upper": 0, "adjustment": -1}]}
    req = request(9, 30, rules=[rule], predictive={"mode": "ForecastAndScale", "scheduling_buffer_seconds": 300})
    req["observations"]["forecast"] = {"replicas": 9, "series": [[ten, 9], [ten + 3600, 6]]}
    r = decide(req)
    assert r["desired_replicas"] == 9


# ----------------------------------------------------------------------------- ALBRequestCountPerTarget


def test_alb_request_count_per_target_reads_missing_periods_as_zero():
    """UG as-scaling-target-tracking.html: "A target tracking scaling policy does not scale in your
    Auto Scaling group when the specified metric has insufficient data, unless you use the
    ALBRequestCountPerTarget metric. This works because the ALBRequestCountPerTarget metric emits
    zeros for periods with no associated data, and the target tracking policy requires metric data to
    interpret a low utilization trend. To have your Auto Scaling group scale in to 0 instances when no
    requests are routed to the target group, the group's minimum capacity must be set to 0."

    A target-tracking metric named ``ALBRequestCountPerTarget`` (the predefined metric type) with no
    datapoints scales in (to the minimum, 0); any other metric does not."""
    alb = {"type": "pods", "name": "ALBRequestCountPerTarget", "target": {"type": "AverageValue", "average_value": 1000}}
    req = request(4, 0, metrics=[alb], min_replicas=0)
    req["observations"]["metrics"]["ALBRequestCountPerTarget"] = {"series": []}
    r = decide(req)
    assert r["desired_replicas"] == 0 and r["metrics"][0]["value"] == 0

    other = {**alb, "name": "requests_per_target"}
    req = request(4, 0, metrics=[other], min_replicas=0)
    req["observations"]["metrics"]["requests_per_target"] = {"series": []}
    assert decide(req)["desired_replicas"] == 4            # insufficient data: no scale-in


def test_alb_request_count_per_target_gaps_between_requests_are_zeros():
    """Same source: periods without requests are zeros. Traffic at the target (1000 per target) in the
    newest 3 minutes only: the low alarm (below 90 % of the target, 15 of 15 one-minute datapoints)
    sees 3 datapoints at the target among the zeros — not ready to scale in. No traffic in the last
    17 minutes: 15 zeros, it scales in (to the minimum, 1)."""
    alb = {"type": "pods", "name": "ALBRequestCountPerTarget", "target": {"type": "AverageValue", "average_value": 1000}}
    req = request(4, 0, metrics=[alb], min_replicas=1)
    req["observations"]["metrics"]["ALBRequestCountPerTarget"] = {"series": [[NOW - 60 * j, 1000] for j in range(3)]}
    assert decide(req)["desired_replicas"] == 4
    req["observations"]["metrics"]["ALBRequestCountPerTarget"] = {"series": [[NOW - 60 * 20, 1000]]}
    assert decide(req)["desired_replicas"] == 1


def test_cpu_target_tracking_with_no_data_still_does_not_scale_in():
    """UG as-scaling-target-tracking.html: "does not scale in … when the specified metric has
    insufficient data" — unchanged for every metric but ALBRequestCountPerTarget."""
    req = request(4, 0, metrics=[TT_CPU], min_replicas=0)
    req["observations"]["metrics"]["cpu"] = {"series": []}
    assert decide(req)["desired_replicas"] == 4


def test_default_instance_warmup_minus_one_means_unset():
    """CreateAutoScalingGroup / UpdateAutoScalingGroup, DefaultInstanceWarmup: "To remove a value
    that you previously set, include the property but specify -1 for the value." -1 is then the
    same as no default warm-up (the default cooldown applies), not an invalid request."""
    from scalebridge.protocol import Settings
    assert Settings(default_instance_warmup_seconds=-1).default_instance_warmup_seconds is None
    assert Settings(default_instance_warmup_seconds=120).default_instance_warmup_seconds == 120
    with pytest.raises(Exception):
        Settings(default_instance_warmup_seconds=-5)
