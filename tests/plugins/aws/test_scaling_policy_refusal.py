"""A group with its own scaling policies is refused, naming them: actuating it
as well would fight the group's own autoscaler (run-config: "an ASG with
scaling policies"). Dynamic scaling policies act on their alarms
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scale-based-on-demand.html);
a disabled policy does not ("Indicates whether the scaling policy is enabled
or disabled", PutScalingPolicy Enabled); predictive scaling in ForecastOnly
"generates forecasts but does not scale"
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html)."""
from __future__ import annotations

import pytest

from scalebridge.providers import RefError

TT = {"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 50}


def test_no_policies_no_manager(world, provider):
    world.group("web")
    assert provider().target({"auto_scaling_group": "web"}).managed_by() is None


def test_policies_are_named(world, provider):
    world.group("web")
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu50", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration=TT)
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="add-two", PolicyType="SimpleScaling",
                                 AdjustmentType="ChangeInCapacity", ScalingAdjustment=2)
    who = provider().target({"auto_scaling_group": "web"}).managed_by()
    assert "cpu50 (TargetTrackingScaling)" in who and "add-two (SimpleScaling)" in who
    assert "allow_scaling_policies" in who


def test_allow_scaling_policies_actuates_beside_them(world, provider, proxy):
    world.group("web")
    world.asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu50", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration=TT)
    t = provider().target({"auto_scaling_group": "web", "allow_scaling_policies": True})
    assert t.managed_by() is None
    assert proxy.count("DescribePolicies") == 0


def policies_response(*members: str) -> bytes:
    return ('<DescribePoliciesResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/">'
            '<DescribePoliciesResult><ScalingPolicies>' + "".join(members) +
            '</ScalingPolicies></DescribePoliciesResult><ResponseMetadata><RequestId>r</RequestId>'
            '</ResponseMetadata></DescribePoliciesResponse>').encode()


def test_disabled_and_forecast_only_policies_do_not_manage(world, provider, proxy):
    """moto keeps neither flag: the proxy answers DescribePolicies as AWS does."""
    from scalebridge_aws.fake_server import Fault
    world.group("web")
    body = policies_response(
        "<member><AutoScalingGroupName>web</AutoScalingGroupName><PolicyName>off</PolicyName>"
        "<PolicyType>TargetTrackingScaling</PolicyType><Enabled>false</Enabled></member>",
        "<member><AutoScalingGroupName>web</AutoScalingGroupName><PolicyName>forecast</PolicyName>"
        "<PolicyType>PredictiveScaling</PolicyType><Enabled>true</Enabled>"
        "<PredictiveScalingConfiguration><Mode>ForecastOnly</Mode></PredictiveScalingConfiguration></member>")
    proxy.add(Fault("status", status=200, body=body, content_type="text/xml", action="DescribePolicies"))
    assert provider().target({"auto_scaling_group": "web"}).managed_by() is None
    body = policies_response(
        "<member><AutoScalingGroupName>web</AutoScalingGroupName><PolicyName>forecast</PolicyName>"
        "<PolicyType>PredictiveScaling</PolicyType><Enabled>true</Enabled>"
        "<PredictiveScalingConfiguration><Mode>ForecastAndScale</Mode></PredictiveScalingConfiguration></member>")
    proxy.add(Fault("status", status=200, body=body, content_type="text/xml", action="DescribePolicies"))
    assert "forecast (PredictiveScaling)" in provider().target({"auto_scaling_group": "web"}).managed_by()


def test_other_groups_policies_do_not_count(world, provider):
    world.group("web")
    world.group("api")
    world.asg.put_scaling_policy(AutoScalingGroupName="api", PolicyName="cpu50", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration=TT)
    assert provider().target({"auto_scaling_group": "web"}).managed_by() is None


@pytest.mark.parametrize("ref, key", [
    ({}, "ref.auto_scaling_group"),
    ({"auto_scaling_group": ""}, "ref.auto_scaling_group"),
    ({"auto_scaling_group": "web", "asg": "x"}, "ref.asg"),
    ({"auto_scaling_group": "web", "region": 3}, "ref.region"),
    ({"auto_scaling_group": "web", "allow_scaling_policies": "yes"}, "ref.allow_scaling_policies"),
])
def test_bad_refs_name_the_key(provider, ref, key):
    with pytest.raises(RefError) as e:
        provider().target(ref)
    assert e.value.key == key


@pytest.mark.parametrize("options, key", [
    ({"regoin": "us-east-1"}, "regoin"),
    ({"endpoint_url": "127.0.0.1:5000"}, "endpoint_url"),
    ({"max_attempts": 0}, "max_attempts"),
    ({"retry_mode": "fast"}, "retry_mode"),
    ({"read_timeout": -1}, "read_timeout"),
])
def test_bad_options_name_the_key(world, options, key):
    from scalebridge_aws.provider import AwsProvider
    with pytest.raises(RefError) as e:
        AwsProvider(**{"region": "us-east-1", **options})
    assert e.value.key == key
