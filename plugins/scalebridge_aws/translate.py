"""A policy as Amazon EC2 Auto Scaling and CloudWatch API requests, and back.

One JSON object keyed by operation name, each value a list of request bodies as
boto3 takes them: ``UpdateAutoScalingGroup``
(https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_UpdateAutoScalingGroup.html),
``PutScalingPolicy`` (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutScalingPolicy.html),
``PutMetricAlarm`` (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html)
and ``PutScheduledUpdateGroupAction``. Step adjustments' bounds are relative to the
alarm threshold, as "Step adjustments for step scaling" says
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-scaling-steps).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping, Optional, Union

from pydantic import ValidationError

from scalebridge.policy import Policy, _check_steps, StepAdjustment
from scalebridge.translate.base import METRICS_KEY, Translator, TargetKey, pattern, source_of, valid_metric_sources
from scalebridge.translate.common import (drop_semantics, one_of, PLACEHOLDER, Losses, NativeError, Reader, as_policy, drop_controls,
                                          drop_unexpressed, json_document, num, path)
from scalebridge.translate.metrics import MetricNames, name_lost, neutral_of, provider_metric

#: the neutral metrics as the ``AWS/EC2`` instance metrics, which the ``AutoScalingGroupName``
#: dimension aggregates over a group's instances
#: (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/viewing_metrics_with_cloudwatch.html)
METRIC_NAMES = MetricNames(
    neutral={"cpu": "CPUUtilization", "network_in": "NetworkIn", "network_out": "NetworkOut", "memory": None},
    missing={"memory": "AWS/EC2 has no memory metric (the CloudWatch agent publishes one, CWAgent mem_used_percent)"},
    native=frozenset({"CPUUtilization", "NetworkIn", "NetworkOut", "NetworkPacketsIn", "NetworkPacketsOut",
                      "DiskReadBytes", "DiskWriteBytes", "DiskReadOps", "DiskWriteOps", "EBSReadBytes",
                      "EBSWriteBytes", "EBSReadOps", "EBSWriteOps", "CPUCreditUsage", "CPUCreditBalance",
                      "StatusCheckFailed"}))
#: the namespace of the metrics above
AWS_NAMESPACE = "AWS/EC2"

OPERATIONS = ("UpdateAutoScalingGroup", "PutScalingPolicy", "PutMetricAlarm", "PutScheduledUpdateGroupAction")
_OPS_OUT = {"GreaterThan": "GreaterThanThreshold", "GreaterThanOrEqual": "GreaterThanOrEqualToThreshold",
            "LessThan": "LessThanThreshold", "LessThanOrEqual": "LessThanOrEqualToThreshold"}
_OPS_IN = {v: k for k, v in _OPS_OUT.items()}
_STAT_OUT = {"Average": "Average", "Min": "Minimum", "Max": "Maximum", "Sum": "Sum", "Count": "SampleCount"}
_STAT_IN = {v: k for k, v in _STAT_OUT.items()}
_ADJ_OUT = {"ChangeCount": "ChangeInCapacity", "PercentChangeCount": "PercentChangeInCapacity",
            "ExactCount": "ExactCapacity"}
_ADJ_IN = {v: k for k, v in _ADJ_OUT.items()}
_AGG_OUT = {"Average": "Average", "Min": "Minimum", "Max": "Maximum"}
_AGG_IN = {v: k for k, v in _AGG_OUT.items()}
_PREDEFINED_IN = {"ASGAverageCPUUtilization": ("resource", "cpu", "Utilization"),
                  "ASGAverageNetworkIn": ("pods", "network_in", "AverageValue"),
                  "ASGAverageNetworkOut": ("pods", "network_out", "AverageValue"),
                  "ALBRequestCountPerTarget": ("pods", "alb_request_count_per_target", "AverageValue")}


# the members of botocore's ScalingPolicy shape (a DescribePolicies entry; PutScalingPolicy takes
# them but PolicyARN and Alarms; CloudFormation's AWS::AutoScaling::ScalingPolicy a subset)
_POLICY_FIELDS = {"AdjustmentType", "Alarms", "AutoScalingGroupName", "Cooldown", "Enabled", "EstimatedInstanceWarmup",
                  "MetricAggregationType", "MinAdjustmentMagnitude", "MinAdjustmentStep", "PolicyARN", "PolicyName",
                  "PolicyType", "PredictiveScalingConfiguration", "ScalingAdjustment", "StepAdjustments",
                  "TargetTrackingConfiguration"}
_TARGET_TRACKING_FIELDS = {"CustomizedMetricSpecification", "DisableScaleIn", "PredefinedMetricSpecification",
                           "TargetValue"}
_CUSTOMIZED_FIELDS = {"Dimensions", "MetricName", "Metrics", "Namespace", "Period", "Statistic", "Unit"}
_PREDICTIVE_FIELDS = {"MaxCapacityBreachBehavior", "MaxCapacityBuffer", "MetricSpecifications", "Mode",
                      "SchedulingBufferTime"}


#: the keys of the aws provider's metric sources (plugins/scalebridge_aws/metrics.py), and the
#: dimension value standing for the target's group there
SOURCE_KEYS = frozenset({"namespace", "metric_name", "dimensions", "statistic", "extended_statistic",
                         "period_seconds", "per_member", "unit"})
GROUP_TOKEN = "{auto_scaling_group}"
_ACCOUNT = pattern(r"[0-9]{12}", "twelve digits such as 123456789012 (quoted, when it starts with 0)")
#: target tracking's predefined metrics for the neutral per-instance metrics
#: (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PredefinedMetricSpecification.html)
_PREDEFINED_OUT = {"network_in": "ASGAverageNetworkIn", "network_out": "ASGAverageNetworkOut"}

TARGET_KEYS: dict[str, TargetKey] = {
    "auto_scaling_group": TargetKey("the Auto Scaling group's name", pattern(r".{1,255}", "1 to 255 characters")),
    "region": TargetKey("the group's region (in the alarms' policy ARNs)",
                        pattern(r"[a-z]{2}(-[a-z]+)+-[0-9]{1,2}", "a region such as us-east-1")),
    "account": TargetKey("the AWS account ID (in the alarms' policy ARNs)",
                         lambda v: _ACCOUNT(str(v) if isinstance(v, int) and not isinstance(v, bool) else v)),
    "allow_scaling_policies": TargetKey("the run configuration's ref key (actuation only; render ignores it)",
                                        lambda v: None if isinstance(v, bool) else f"true or false, got {v!r}"),
    METRICS_KEY: TargetKey("each policy metric's source, as a run configuration target's metrics:",
                           valid_metric_sources(SOURCE_KEYS, "aws")),
}


#: what stands for a scaling policy's id in its ARN until AWS creates the policy
POLICY_ID = "PLACEHOLDER-policy-id"


def policy_arn(name: str, group: str = PLACEHOLDER, region: Optional[str] = None,
               account: Optional[str] = None) -> str:
    """What an alarm's ``AlarmActions`` holds until PutScalingPolicy returns the real ARN
    (``arn:aws:autoscaling:REGION:ACCOUNT:scalingPolicy:POLICY-ID:autoScalingGroupName/GROUP:policyName/NAME``;
    AWS gives the policy its id when it creates it)."""
    return (f"arn:aws:autoscaling:{region or PLACEHOLDER}:{account or PLACEHOLDER}:scalingPolicy:"
            f"{POLICY_ID}:autoScalingGroupName/{group}:policyName/{name}")


def _metric(name: str, asg: str, ref: Mapping[str, Any], at: str, field: str, losses: Losses,
            dropped: str = "dropped") -> Optional[dict]:
    """``MetricName``, ``Namespace`` and ``Dimensions`` of a CloudWatch metric: the source's
    (``--target`` metrics), else the ``AWS/EC2`` metric of a neutral name aggregated over the
    group (``cpu``: ``CPUUtilization`` by ``AutoScalingGroupName``). A neutral name with no AWS
    metric is None, ``dropped`` said in its loss line; any other name's namespace is a placeholder."""
    source = source_of(ref, name)
    group_dims = [{"Name": "AutoScalingGroupName", "Value": asg}]
    if source.get("namespace") or source.get("metric_name"):
        out: dict = {"MetricName": source.get("metric_name") or name,
                     "Namespace": source.get("namespace") or losses.placeholder(
                         path(field, "Namespace"), f"pass --target metrics.{name}.source.namespace")}
        dims = source.get("dimensions")
        out["Dimensions"] = ([{"Name": k, "Value": asg if v == GROUP_TOKEN else v} for k, v in dims.items()]
                             if isinstance(dims, Mapping) else group_dims)
        if source.get("unit"):
            out["Unit"] = source["unit"]
        return out
    native, none_because = provider_metric(name, METRIC_NAMES, "aws")
    if none_because is not None:
        losses.add(at, f"{none_because}; {dropped}")
        return None
    if native is not None:
        renamed = name_lost(name, f"{AWS_NAMESPACE} {native} on the group")
        if renamed is not None:
            losses.add(at, renamed)
        return {"MetricName": native, "Namespace": AWS_NAMESPACE, "Dimensions": group_dims}
    return {"MetricName": name,
            "Namespace": losses.placeholder(path(field, "Namespace"),
                                            f"{name!r} is no AWS/EC2 metric: pass --target metrics.{name}.source "
                                            "(namespace, dimensions) saying where it is published"),
            "Dimensions": group_dims}


#: the group's in-service instances, the divisor of a total tracked per instance
IN_SERVICE = {"MetricName": "GroupInServiceInstances", "Namespace": "AWS/AutoScaling"}
#: the expression of the backlog-per-instance recipe
PER_INSTANCE = "m1 / m2"


def backlog_per_instance(metric: dict, asg: str, name: str) -> dict:
    """A ``CustomizedMetricSpecification`` tracking a total (an ``external`` or ``object``
    metric with an ``AverageValue`` target: the total per replica) as target tracking
    tracks it, per in-service instance: metric math ``m1 / m2``, ``m2`` the group's
    ``GroupInServiceInstances`` — AWS's own recipe, "Scaling policy based on Amazon SQS"
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-using-sqs-queue.html) with
    "Create a target tracking scaling policy using metric math"
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-target-tracking-metric-math.html).
    The ``aws`` semantics decides such a metric the same way (semantics/aws.py: totals
    divided by the in-service capacity)."""
    stat: dict = {"Metric": {k: metric[k] for k in ("MetricName", "Namespace", "Dimensions")}, "Stat": "Average"}
    if metric.get("Unit"):
        stat["Unit"] = metric["Unit"]
    return {"Metrics": [
        {"Id": "m1", "MetricStat": stat, "ReturnData": False},
        {"Id": "m2", "MetricStat": {"Metric": {**IN_SERVICE, "Dimensions": [{"Name": "AutoScalingGroupName",
                                                                            "Value": asg}]},
                                    "Stat": "Average"}, "ReturnData": False},
        {"Id": "e1", "Expression": PER_INSTANCE, "Label": f"{name} per in-service instance", "ReturnData": True}]}


def _on_the_group(dimensions: Any) -> bool:
    """Dimensions that are the group's alone (``AutoScalingGroupName``), as render writes a
    neutral metric's: the ``AWS/EC2`` instance metric aggregated over the group."""
    return isinstance(dimensions, list) and len(dimensions) == 1 and isinstance(dimensions[0], dict) and \
        dimensions[0].get("Name") == "AutoScalingGroupName"


def neutral_name(name: str, namespace: Any, dimensions: Any) -> str:
    """The policy metric name of a CloudWatch metric: the neutral name an ``AWS/EC2``
    metric on the group stands for (``CPUUtilization`` → ``cpu``, :data:`METRIC_NAMES`),
    else the metric's own name — what render wrote, read back."""
    if namespace == AWS_NAMESPACE and _on_the_group(dimensions):
        return METRIC_NAMES.of(name) or name
    return name


def _predefined_period(m, at: str, losses: Losses) -> None:
    """A predefined metric (``ASGAverageCPUUtilization``…) takes no ``Period``: only
    ``CustomizedMetricSpecification`` and its ``Metrics[].MetricStat`` do
    (API_PredefinedMetricSpecification.html has none), so a high-resolution period on one is a loss."""
    if m.period_seconds is not None and m.period_seconds != 60:
        losses.add(path(at, "period_seconds"),
                   f"a {m.period_seconds}-second period: AWS's predefined metrics are one-minute metrics (a "
                   "high-resolution policy needs a customized metric: pass --target "
                   f"metrics.{m.name}.source); dropped")


def render(policy: Union[Policy, dict], target_ref: Optional[Mapping[str, Any]] = None) -> tuple[dict, Losses]:
    p = as_policy(policy)
    losses = Losses()
    ref = dict(target_ref or {})
    asg = ref.get("auto_scaling_group") or losses.placeholder("AutoScalingGroupName",
                                                              "pass --target auto_scaling_group (the group's name)")
    base = p.name or "scalebridge"
    out: dict = {op: [] for op in OPERATIONS}
    if p.min_replicas is None:
        raise NativeError("min_replicas", "an Auto Scaling group needs MinSize; the policy has no min_replicas")
    upd: dict = {"AutoScalingGroupName": asg, "MinSize": p.min_replicas}
    if p.max_replicas is not None:
        upd["MaxSize"] = p.max_replicas
    if p.initialization_period_seconds is not None:
        upd["DefaultInstanceWarmup"] = int(p.initialization_period_seconds)
    out["UpdateAutoScalingGroup"].append(upd)
    cpu_target = None
    for i, m in enumerate(p.metrics or []):
        at = path("metrics", i)
        t = m.target
        spec: dict
        if m.type == "formula":
            continue   # drop_controls reports it
        if m.type == "resource" and m.name == "cpu" and t.type == "Utilization" and t.rate is None:
            if t.average_utilization is None:
                raise NativeError(path(at, "target", "average_utilization"),
                                  "target tracking requires a TargetValue")
            spec = {"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}}
            value = t.average_utilization
            cpu_target = cpu_target or value
            _predefined_period(m, at, losses)
        elif m.type == "pods" and t.type == "AverageValue" and t.rate is None and neutral_of(m.name) in \
                _PREDEFINED_OUT and not source_of(ref, m.name) and not isinstance(t.average_value, str):
            spec = {"PredefinedMetricSpecification": {"PredefinedMetricType": _PREDEFINED_OUT[neutral_of(m.name)]}}
            value = t.average_value
            _predefined_period(m, at, losses)
        elif m.type in ("pods", "external", "object") and t.type == "AverageValue" and t.rate is None \
                and not isinstance(t.average_value, str):
            field = f"PutScalingPolicy[{len(out['PutScalingPolicy'])}].TargetTrackingConfiguration." \
                    "CustomizedMetricSpecification"
            if m.type == "pods":   # a per-instance value, which target tracking compares as it is
                metric = _metric(m.name, asg, ref, at, field, losses)
                if metric is None:
                    continue
                spec = {"CustomizedMetricSpecification": {**metric, "Statistic": "Average"}}
                if m.period_seconds is not None:
                    # "Period — The period of the metric in seconds. The default value is 60. Accepted
                    # values are 10, 30, and 60. For high resolution metric, set the value to less than 60"
                    # (API_CustomizedMetricSpecification.html; policy-creating-high-resolution-metrics.html)
                    spec["CustomizedMetricSpecification"]["Period"] = int(m.period_seconds)
            else:   # the group's total: per in-service instance, by metric math
                metric = _metric(m.name, asg, ref, at, path(field, "Metrics[0].MetricStat.Metric"), losses)
                if metric is None:
                    continue
                spec = {"CustomizedMetricSpecification": backlog_per_instance(metric, asg, m.name)}
                if m.period_seconds is not None:   # each query's TargetTrackingMetricStat.Period
                    for q in spec["CustomizedMetricSpecification"]["Metrics"]:
                        if "MetricStat" in q:
                            q["MetricStat"]["Period"] = int(m.period_seconds)
            value = t.average_value
        else:
            losses.add(at, f"target tracking has no {m.type} metric with target type {t.type}"
                           + (f" ({t.rate})" if t.rate else "") + "; dropped")
            continue
        body: dict = {"AutoScalingGroupName": asg, "PolicyName": f"{base}-metric-{i}",
                      "PolicyType": "TargetTrackingScaling",
                      "TargetTrackingConfiguration": {**spec, "TargetValue": float(value),
                                                      "DisableScaleIn": m.disable_scale_in}}
        if m.initialization_period_seconds is not None:
            body["EstimatedInstanceWarmup"] = int(m.initialization_period_seconds)
        if not m.enabled:
            body["Enabled"] = False
        out["PutScalingPolicy"].append(body)
    for i, r in enumerate(p.rules):
        _rule(r, i, asg, base, ref, out, losses)
    if p.predictive is not None and p.predictive.mode not in (None, "Disabled"):
        pr = p.predictive
        if cpu_target is None:
            losses.add("predictive", "AWS predictive scaling is rendered on CPU utilization; the policy has no CPU "
                                     "target; dropped")
        else:
            cfg: dict = {"MetricSpecifications": [{"TargetValue": float(cpu_target),
                                                   "PredefinedMetricPairSpecification":
                                                       {"PredefinedMetricType": "ASGCPUUtilization"}}],
                         "Mode": pr.mode, "MaxCapacityBreachBehavior": pr.max_capacity_breach_behavior}
            if pr.scheduling_buffer_seconds is not None:
                cfg["SchedulingBufferTime"] = int(pr.scheduling_buffer_seconds)
            if pr.max_capacity_buffer_percent is not None:
                cfg["MaxCapacityBuffer"] = int(pr.max_capacity_buffer_percent)
            out["PutScalingPolicy"].append({"AutoScalingGroupName": asg, "PolicyName": f"{base}-predictive",
                                            "PolicyType": "PredictiveScaling",
                                            "PredictiveScalingConfiguration": cfg})
            if pr.look_ahead_seconds is not None:
                losses.add("predictive.look_ahead_seconds", "AWS forecasts 48 hours ahead; dropped")
    for i, sc in enumerate(p.schedules or []):
        _schedule_actions(p, sc, i, asg, base, out, losses)
    drop_unexpressed(p, losses, {
        "behavior": "AWS has no stabilization windows or rate policies (target tracking holds scale-in for 15 "
                    "minutes below 90% of the target); dropped",
        "tolerance": "AWS target tracking has no tolerance band; dropped",
        "scale_in_control": "AWS has no scale-in control; dropped",
        "profiles": "AWS has no instance profiles (scheduled actions set sizes at a time); dropped",
        "mode": f"mode {p.mode}: AWS suspends processes instead (SuspendProcesses); dropped",
        "default_replicas": "an Auto Scaling group keeps its size when alarms lack data; dropped",
        "allowed_replicas": "an Auto Scaling group scales to any count; dropped"})
    drop_controls(p, losses, "an Auto Scaling group")
    drop_semantics(p, losses, "aws", "an Auto Scaling group")
    return {k: v for k, v in out.items()}, losses


def _cron_list(values, full: int) -> str:
    return "*" if len(values) >= full else ",".join(str(v) for v in sorted(values))


def _schedule_actions(p: Policy, sc, i: int, asg: str, base: str, out: dict, losses: Losses) -> None:
    """A scaling schedule (a floor of ``min_required_replicas`` for ``duration_seconds`` from each
    start) as two scheduled actions: MinSize raised at each start, restored at each end
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scheduled-scaling.html:
    "the recurring schedule ... in Unix cron syntax", with its TimeZone). The end is the start
    moved by the duration, which a cron expression holds when the start is one minute of one
    hour and, past midnight, the days are named by weekday only."""
    from scalebridge.cron import CronSchedule
    at = path("schedules", i)
    if sc.disabled:
        losses.add(at, "a disabled scaling schedule; left out")
        return
    c = CronSchedule.parse(sc.schedule)
    start_min = next(iter(c.minutes)) if len(c.minutes) == 1 else None
    start_hour = next(iter(c.hours)) if len(c.hours) == 1 else None
    duration = float(sc.duration_seconds)
    why = None
    if c.years is not None:
        why = "a cron year field"
    elif start_min is None or start_hour is None:
        why = "more than one start minute or hour a day"
    elif duration % 60:
        why = "a duration that is not whole minutes"
    if why is None:
        end = start_hour * 60 + start_min + int(duration // 60)
        days, end = divmod(end, 1440)
        if days and (c.dom_restricted or len(c.months) < 12):
            why = "an end past midnight of a schedule that names days of the month or months"
        elif days and not c.dow_restricted and duration >= 86400:
            why = "a daily schedule lasting a day or more"
        elif days >= 7:
            why = "a duration of a week or more"
    if why is not None:
        losses.add(at, f"an AWS scheduled action has no duration, and the end of this schedule is no cron "
                       f"expression ({why}); dropped")
        return
    dom = _cron_list(c.days, 31) if c.dom_restricted else "*"
    month = _cron_list(c.months, 12)
    dow = _cron_list(c.weekdays, 7) if c.dow_restricted else "*"
    end_dow = _cron_list({(d + days) % 7 for d in c.weekdays}, 7) if c.dow_restricted else "*"
    floor = max(p.min_replicas or 0, sc.min_required_replicas)
    if p.max_replicas is not None:
        floor = min(floor, p.max_replicas)
    for suffix, minute, hour, weekdays, size in (("start", start_min, start_hour, dow, floor),
                                                 ("end", end % 60, end // 60, end_dow, p.min_replicas)):
        out["PutScheduledUpdateGroupAction"].append(
            {"AutoScalingGroupName": asg, "ScheduledActionName": f"{base}-{sc.name}-{suffix}",
             "Recurrence": f"{minute} {hour} {dom} {month} {weekdays}", "MinSize": size,
             "TimeZone": sc.time_zone})
    losses.add(at, f"approximated as two scheduled actions, MinSize {floor} at each start and {p.min_replicas} "
                   "at each end (an end restores the minimum even while another schedule is active)")


def _rule(r, i: int, asg: str, base: str, ref: Mapping[str, Any], out: dict, losses: Losses) -> None:
    at = path("rules", i)
    if r.operator not in _OPS_OUT:
        losses.add(path(at, "operator"), f"a CloudWatch alarm has no {r.operator} comparison; rule dropped")
        return
    if r.divide_per_instance:
        losses.add(path(at, "divide_per_instance"), "a CloudWatch alarm compares the metric itself; dropped")
    # a step policy's MetricAggregationType: "The aggregation type for the CloudWatch metrics. The valid
    # values are Minimum, Maximum, and Average ... Valid only if the policy type is StepScaling"
    # (API_PutScalingPolicy.html); the step is chosen on that aggregate of the evaluated datapoints
    step_aggregation = r.steps is not None and r.time_aggregation in _AGG_OUT
    if r.time_aggregation != "Average" and not step_aggregation:
        losses.add(path(at, "time_aggregation"), "a CloudWatch alarm compares each period's datapoint; "
                                                 f"{r.time_aggregation} over the window dropped")
    name = r.name or f"{base}-rule-{i}"
    body: dict = {"AutoScalingGroupName": asg, "PolicyName": name}
    if r.steps is not None:
        body["PolicyType"] = "StepScaling"
        body["AdjustmentType"] = r.adjustment_type or "ChangeInCapacity"
        steps = []
        for s in r.steps:
            st: dict = {"ScalingAdjustment": int(s.adjustment)}
            if s.lower is not None:
                st["MetricIntervalLowerBound"] = float(s.lower)
            if s.upper is not None:
                st["MetricIntervalUpperBound"] = float(s.upper)
            steps.append(st)
        body["StepAdjustments"] = steps
        if r.time_aggregation != "Average" and step_aggregation:
            body["MetricAggregationType"] = _AGG_OUT[r.time_aggregation]
        if r.min_adjustment_magnitude is not None:
            body["MinAdjustmentMagnitude"] = r.min_adjustment_magnitude
        if r.action is not None and r.action.cooldown_seconds is not None:
            body["EstimatedInstanceWarmup"] = int(r.action.cooldown_seconds)
            losses.add(path(at, "action", "cooldown_seconds"), "a step policy has no cooldown; rendered as its "
                                                               "EstimatedInstanceWarmup")
    else:
        a = r.action
        if a.type not in _ADJ_OUT:
            losses.add(path(at, "action", "type"), f"AWS has no {a.type} adjustment; rule dropped")
            return
        body["PolicyType"] = "SimpleScaling"
        body["AdjustmentType"] = _ADJ_OUT[a.type]
        v = int(a.value)
        body["ScalingAdjustment"] = v if (a.direction == "Increase" or a.type == "ExactCount") else -v
        if a.type == "ExactCount" and (a.direction == "Increase") != r.operator.startswith("Greater"):
            # ExactCapacity has no direction (PutScalingPolicy: "ScalingAdjustment ... the exact capacity"):
            # import reads it from the alarm's comparison, as a threshold above scales out
            losses.add(path(at, "action", "direction"), f"an ExactCapacity adjustment has no direction; "
                                                        f"{a.direction} on a {r.operator} alarm is read back as "
                                                        f"{'Increase' if r.operator.startswith('Greater') else 'Decrease'}")
        if a.cooldown_seconds is not None:
            body["Cooldown"] = int(a.cooldown_seconds)
        if r.min_adjustment_magnitude is not None:
            body["MinAdjustmentMagnitude"] = r.min_adjustment_magnitude
    if not r.enabled:
        body["Enabled"] = False
    alarm_at = f"PutMetricAlarm[{len(out['PutMetricAlarm'])}]"
    metric = _metric(r.metric, asg, ref, path(at, "metric"), alarm_at, losses, "rule dropped")
    if metric is None:
        return
    out["PutScalingPolicy"].append(body)
    field = path(alarm_at, "AlarmActions[0]")
    region = ref.get("region") or losses.placeholder(field, "the region of the policy's ARN: pass --target region")
    account = str(ref["account"]) if ref.get("account") else losses.placeholder(
        field, "the account of the policy's ARN: pass --target account")
    losses.placeholder(field, f"the id of the policy's ARN: use the PolicyARN that PutScalingPolicy returns for "
                              f"{name} (AWS gives a policy its id when it creates it; scalebridge apply "
                              "does this)", POLICY_ID)
    arn = policy_arn(name, asg, region, account)
    alarm: dict = {"AlarmName": f"{name}-alarm", **metric,
                   "Period": int(r.time_grain_seconds), "EvaluationPeriods": r.evaluation_periods,
                   "Threshold": float(r.threshold), "ComparisonOperator": _OPS_OUT[r.operator],
                   "TreatMissingData": r.treat_missing_data, "AlarmActions": [arn]}
    if r.statistic.startswith("Percentile"):
        alarm["ExtendedStatistic"] = "p" + r.statistic[len("Percentile"):]
    else:
        alarm["Statistic"] = _STAT_OUT[r.statistic]
    if r.datapoints_to_alarm is not None:
        alarm["DatapointsToAlarm"] = r.datapoints_to_alarm
    out["PutMetricAlarm"].append(alarm)


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=2) + "\n"


# ----------------------------------------------------------------------------- import


def import_all(text_or_obj: Any) -> list[tuple[dict, Losses]]:
    """One policy per Auto Scaling group of the input (its scaling policies, their alarms
    and its scheduled actions together); one policy when the input names one group or none."""
    obj = json_document(text_or_obj)
    if not isinstance(obj, dict):
        raise NativeError("$", "expected a JSON object")
    losses = Losses()
    rd = Reader(losses)
    groups, policies, alarms, schedules = _collect(rd, obj)
    if len(groups) <= 1:
        return [_import_one(rd, groups, policies, alarms, schedules)]
    out = []
    for k, g in enumerate(groups):
        mine = [(at, sp) for at, sp in policies if _group_of(sp, groups) == k]
        theirs = [(at, s) for at, s in schedules if _group_of(s, groups) == k]
        grd = rd if k == 0 else Reader(Losses())
        out.append(_import_one(grd, [g], mine, alarms, theirs))
    for at, sp in policies + schedules:
        if _group_of(sp, groups) is None:
            losses.add(rd.where(*at, "AutoScalingGroupName"), "names none of the input's Auto Scaling groups; dropped")
    return out


def _group_names(at: tuple, g: dict) -> set:
    """What a scaling policy's ``AutoScalingGroupName`` may hold to name this group: its
    CloudFormation resource key (a ``Ref``) or its literal name."""
    names = set()
    if at and at[0] == "Resources":
        names.add(("ref", at[1]))
    if isinstance(g.get("AutoScalingGroupName"), str):
        names.add(("name", g["AutoScalingGroupName"]))
    return names


def _group_of(sp: Any, groups: list) -> Optional[int]:
    if not isinstance(sp, dict):
        return None
    v = sp.get("AutoScalingGroupName")
    key = ("ref", v["Ref"]) if isinstance(v, dict) and isinstance(v.get("Ref"), str) else \
        ("name", v) if isinstance(v, str) else None
    for k, (at, g) in enumerate(groups):
        if key in _group_names(at, g):
            return k
    return None


def _collect(rd: Reader, obj: dict) -> tuple[list, list, list, list]:
    groups: list[tuple[tuple, dict]] = []
    policies: list[tuple[tuple, dict]] = []
    alarms: list[tuple[tuple, dict]] = []
    schedules: list[tuple[tuple, dict]] = []
    if "Resources" in obj:           # a CloudFormation template
        for key, res in rd.mapping(obj["Resources"], "Resources").items():
            if not isinstance(res, dict):
                continue
            t, props = res.get("Type"), rd.mapping(res.get("Properties"), "Resources", key, "Properties")
            at = ("Resources", key, "Properties")
            if t == "AWS::AutoScaling::AutoScalingGroup":
                groups.append((at, props))
            elif t == "AWS::AutoScaling::ScalingPolicy":
                policies.append((at, {"PolicyName": key, **props}))
            elif t == "AWS::CloudWatch::Alarm":
                alarms.append((at, props))
            elif t == "AWS::AutoScaling::ScheduledAction":
                schedules.append((at, props))
    elif "ScalingPolicies" in obj:   # a DescribePolicies response
        for i, sp in enumerate(rd.listing(obj["ScalingPolicies"], "ScalingPolicies")):
            policies.append((("ScalingPolicies", i), rd.mapping(sp, "ScalingPolicies", i)))
    elif any(op in obj for op in OPERATIONS):
        for i, g in enumerate(rd.listing(obj.get("UpdateAutoScalingGroup"), "UpdateAutoScalingGroup")):
            groups.append((("UpdateAutoScalingGroup", i), rd.mapping(g, "UpdateAutoScalingGroup", i)))
        for i, sp in enumerate(rd.listing(obj.get("PutScalingPolicy"), "PutScalingPolicy")):
            policies.append((("PutScalingPolicy", i), rd.mapping(sp, "PutScalingPolicy", i)))
        for i, a in enumerate(rd.listing(obj.get("PutMetricAlarm"), "PutMetricAlarm")):
            alarms.append((("PutMetricAlarm", i), rd.mapping(a, "PutMetricAlarm", i)))
        for i, s in enumerate(rd.listing(obj.get("PutScheduledUpdateGroupAction"), "PutScheduledUpdateGroupAction")):
            schedules.append((("PutScheduledUpdateGroupAction", i), s))
    elif "PolicyType" in obj or "TargetTrackingConfiguration" in obj or "StepAdjustments" in obj:
        policies.append(((), obj))
    elif "TargetValue" in obj:       # `--target-tracking-configuration file://config.json`
        policies.append(((), _BareTargetTracking(PolicyType="TargetTrackingScaling", TargetTrackingConfiguration=obj)))
    elif "ScheduledUpdateGroupActions" in obj:
        for i, s in enumerate(rd.listing(obj["ScheduledUpdateGroupActions"], "ScheduledUpdateGroupActions")):
            schedules.append((("ScheduledUpdateGroupActions", i), s))
    else:
        raise NativeError("$", "expected PutScalingPolicy requests, a DescribePolicies response, a CloudFormation "
                               "template, a target tracking configuration or an object keyed by operation name")
    return groups, policies, alarms, schedules


class _BareTargetTracking(dict):
    """A TargetTrackingConfiguration on its own, the ``config.json`` of the user guide's
    ``aws autoscaling put-scaling-policy --target-tracking-configuration file://config.json``
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/examples-scaling-policies.html):
    its fields are at the root of the input."""


def _import_one(rd: Reader, groups: list, policies: list, alarms: list, schedules: list) -> tuple[dict, Losses]:
    losses = rd.losses
    policy: dict = {"semantics": "aws"}
    group_cooldown = None
    for at, g in groups[:1]:
        for key, field in (("MinSize", "min_replicas"), ("MaxSize", "max_replicas")):
            v = rd.count(g.get(key), *at, key)
            if v is not None:
                policy[field] = v
        rd.ordered(policy.get("min_replicas"), policy.get("max_replicas"), at + ("MinSize",), at + ("MaxSize",))
        w = rd.number(g.get("DefaultInstanceWarmup"), *at, "DefaultInstanceWarmup", integer=True)
        if w is not None:
            policy["initialization_period_seconds"] = w
        # the API's DefaultCooldown, CloudFormation's Cooldown: what a simple scaling policy
        # without its own Cooldown waits (API_PutScalingPolicy.html, "Cooldown")
        cd_key = "Cooldown" if at and at[0] == "Resources" else "DefaultCooldown"
        group_cooldown = rd.number(g.get(cd_key), *at, cd_key, integer=True)
    if "min_replicas" not in policy:
        policy["min_replicas"] = 0
        if groups:
            losses.add(rd.where(*groups[0][0]), "the group's MinSize is not known; min_replicas read as 0 and "
                                                "max_replicas as unbounded")
        else:
            losses.add("$", "no Auto Scaling group bounds in the input; min_replicas read as 0 and max_replicas "
                            "as unbounded")
    alarm_of = _alarms_by_policy(rd, alarms)
    metrics, rules = [], []
    for at, sp in policies:
        _policy(rd, sp, at, alarm_of, metrics, rules, policy)
    if group_cooldown is not None:
        for r in rules:
            a = r.get("action")
            if "steps" not in r and isinstance(a, dict) and "cooldown_seconds" not in a:
                a["cooldown_seconds"] = group_cooldown
    for at, s in schedules:
        losses.add(rd.where(*at), "an AWS scheduled action sets sizes at a time, which a policy does not hold; "
                                  "dropped")
    base = _base_name([sp.get("PolicyName") if isinstance(sp, dict) else None for _, sp in policies])
    if base:
        policy["name"] = base
        for i, r in enumerate(rules):
            if r.get("name") == f"{base}-rule-{i}":
                del r["name"]
        group = _group_label(groups, policies)
        if group is not None and group != base:
            # the name render wrote into the scaling policies' names (NAME-metric-0): the policy's,
            # so that render → import → render is a fixed point; the group is the target's
            at = groups[0][0] if groups else policies[0][0]
            losses.note(rd.where(*at, "AutoScalingGroupName"),
                        f"the policy is named {base!r} after its scaling policies' names ({base}-…, as render "
                        f"writes them); the group {group!r} is the target (--target auto_scaling_group, a run "
                        "configuration target's ref)")
    elif _group_label(groups, policies):
        policy["name"] = _group_label(groups, policies)
    if metrics:
        policy["metrics"] = metrics
    if rules:
        policy["rules"] = rules
    return policy, losses


def _group_label(groups: list, policies: list) -> Optional[str]:
    """The Auto Scaling group a policy imports, by name: its ``AutoScalingGroupName``, else
    its CloudFormation resource key; without a group in the input, the one group every
    scaling policy names. None when nothing names it."""
    names: set = set()
    for at, g in groups[:1]:
        v = g.get("AutoScalingGroupName")
        names.add(v if isinstance(v, str) else at[1] if at and at[0] == "Resources" else None)
    if not groups:
        names = {sp.get("AutoScalingGroupName") for _, sp in policies if isinstance(sp, dict)}
    names.discard(PLACEHOLDER)
    name = names.pop() if len(names) == 1 else None
    return name if isinstance(name, str) and name else None


#: a scaling policy's name as :func:`render` writes it: the policy's name, then the
#: part it carries (``NAME-metric-0``, ``NAME-rule-1``, ``NAME-predictive``)
RENDERED_POLICY_NAME = re.compile(r"^(.+)-(metric-\d+|rule-\d+|predictive)$")


def _base_name(names: list) -> Optional[str]:
    """The policy name behind the scaling-policy names :func:`render` writes
    (``NAME-metric-0``, ``NAME-rule-1``, ``NAME-predictive``), when they all share it."""
    bases = {m.group(1) for n in names if isinstance(n, str) and (m := RENDERED_POLICY_NAME.match(n))}
    return bases.pop() if len(bases) == 1 else None


def _alarms_by_policy(rd: Reader, alarms: list) -> dict:
    """Alarms by the scaling policy their AlarmActions name (an ARN ending in
    ``policyName/NAME``, or a CloudFormation ``Ref``)."""
    out: dict = {}
    for at, a in alarms:
        for k, act in enumerate(rd.listing(a.get("AlarmActions"), *at, "AlarmActions")):
            if isinstance(act, dict) and isinstance(act.get("Ref"), str):
                _add_alarm(out, act["Ref"], at, a)
            elif isinstance(act, str) and "policyName/" in act:
                _add_alarm(out, act.rsplit("policyName/", 1)[1], at, a)
    return out


def _add_alarm(out: dict, policy_name: str, at: tuple, alarm: dict) -> None:
    found = out.setdefault(policy_name, [])
    if all(a is not alarm for _, a in found):
        found.append((at, alarm))


def _step_adjustments(rd: Reader, sp: dict, at: tuple, kind: str, name: Any) -> Optional[list]:
    """A step policy's adjustments, checked as PutScalingPolicy checks them (no overlap, no gap,
    one open end; https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html);
    None (reported) when one is a template expression."""
    steps = []
    for k, s in enumerate(rd.listing(sp.get("StepAdjustments"), *at, "StepAdjustments")):
        sat = at + ("StepAdjustments", k)
        s = rd.mapping(s, *sat)
        rd.unknown(s, {"MetricIntervalLowerBound", "MetricIntervalUpperBound", "ScalingAdjustment"}, *sat)
        if "ScalingAdjustment" not in s:
            raise NativeError(rd.where(*sat, "ScalingAdjustment"), "required field is missing")
        adj_v = rd.number(s.get("ScalingAdjustment"), *sat, "ScalingAdjustment", integer=True)
        lo = rd.number(s.get("MetricIntervalLowerBound"), *sat, "MetricIntervalLowerBound")
        hi = rd.number(s.get("MetricIntervalUpperBound"), *sat, "MetricIntervalUpperBound")
        if adj_v is None or (lo is None and s.get("MetricIntervalLowerBound") is not None) \
                or (hi is None and s.get("MetricIntervalUpperBound") is not None):
            rd.losses.add(rd.where(*at), f"{kind} policy {name!r} with an unknown step adjustment; dropped")
            return None
        st: dict = {"adjustment": adj_v}
        if lo is not None:
            st["lower"] = lo
        if hi is not None:
            st["upper"] = hi
        steps.append(st)
    if not steps:
        raise NativeError(rd.where(*at, "StepAdjustments"), "a step scaling policy needs step adjustments")
    checked = []
    for k, s in enumerate(steps):
        try:
            checked.append(StepAdjustment(**s))
        except ValidationError as e:   # a bound past what a policy holds (1e100): the first complaint, one line
            raise NativeError(rd.where(*at, "StepAdjustments", k), e.errors()[-1]["msg"]) from None
    try:
        _check_steps(checked)
    except ValueError as e:
        raise NativeError(rd.where(*at, "StepAdjustments"), str(e)) from None
    return steps


def _policy(rd: Reader, sp: dict, at: tuple, alarm_of: dict, metrics: list, rules: list, policy: dict) -> None:
    sp = rd.mapping(sp, *at)
    rd.unknown(sp, _POLICY_FIELDS, *at)
    kind = sp.get("PolicyType", "SimpleScaling")
    name = sp.get("PolicyName")
    if sp.get("Enabled") is False:
        rd.losses.add(rd.where(*at, "Enabled"), "a disabled scaling policy; read as disabled")
    if kind == "TargetTrackingScaling":
        cfg = rd.mapping(sp.get("TargetTrackingConfiguration"), *at, "TargetTrackingConfiguration")
        cat = at if isinstance(sp, _BareTargetTracking) else at + ("TargetTrackingConfiguration",)
        rd.unknown(cfg, _TARGET_TRACKING_FIELDS, *cat)
        tv = rd.number(cfg.get("TargetValue"), *cat, "TargetValue")
        if tv is None:
            if "TargetValue" not in cfg:
                raise NativeError(rd.where(*cat, "TargetValue"), "required field is missing")
            rd.losses.add(rd.where(*at), f"target tracking policy {name!r} without a known TargetValue; dropped")
            return
        period = None
        if cfg.get("PredefinedMetricSpecification"):
            pm = rd.mapping(cfg["PredefinedMetricSpecification"], *cat, "PredefinedMetricSpecification")
            rd.unknown(pm, {"PredefinedMetricType", "ResourceLabel"}, *cat, "PredefinedMetricSpecification")
            t = pm.get("PredefinedMetricType")
            if not one_of(t, _PREDEFINED_IN):
                raise NativeError(rd.where(*cat, "PredefinedMetricSpecification", "PredefinedMetricType"),
                                  f"expected one of {', '.join(_PREDEFINED_IN)}, got {t!r}")
            mtype, mname, ttype = _PREDEFINED_IN[t]
            if pm.get("ResourceLabel"):
                rd.losses.note(rd.where(*cat, "PredefinedMetricSpecification", "ResourceLabel"),
                               "the load balancer's label is the metric source's business")
        elif cfg.get("CustomizedMetricSpecification"):
            cm = rd.mapping(cfg["CustomizedMetricSpecification"], *cat, "CustomizedMetricSpecification")
            mat = cat + ("CustomizedMetricSpecification",)
            rd.unknown(cm, _CUSTOMIZED_FIELDS, *mat)
            mtype = "pods"
            if "Metrics" in cm:
                total = _per_instance_total(rd, cm["Metrics"], mat + ("Metrics",))
                if total is not None:
                    mname, mtype = total, "external"
                else:
                    rd.losses.add(rd.where(*mat, "Metrics"), "metric math: the expression is the metric source's "
                                                            "business; read as one customized metric named by its "
                                                            "policy")
                    mname = name or "metric_math"
            else:
                raw_name = rd.string(cm.get("MetricName"), *mat, "MetricName") or "metric"
                mname = neutral_name(raw_name, cm.get("Namespace"), cm.get("Dimensions"))
                if cm.get("Statistic", "Average") != "Average":
                    rd.losses.add(rd.where(*mat, "Statistic"), f"{cm.get('Statistic')}: the metric source's "
                                                              "business; read as the per-member value")
                if cm.get("Dimensions") and mname == raw_name:
                    rd.losses.note(rd.where(*mat, "Dimensions"), "dimensions are the metric source's business")
            period = _period(rd, cm.get("Period"), *mat, "Period")
            if period is None and isinstance(cm.get("Metrics"), list):
                # metric math: each Metrics[].MetricStat.Period (TargetTrackingMetricStat.Period)
                found = set()
                for k, q in enumerate(cm["Metrics"]):
                    stat = q.get("MetricStat") if isinstance(q, dict) else None
                    if isinstance(stat, dict) and "Period" in stat:
                        found.add(_period(rd, stat["Period"], *mat, "Metrics", k, "MetricStat", "Period"))
                if len(found) == 1:
                    period = found.pop()
                elif found:
                    rd.losses.add(rd.where(*mat, "Metrics"), f"metric periods {sorted(found)}: read at the "
                                                            f"shortest, {min(found)} seconds")
                    period = min(found)
            ttype = "AverageValue"
        else:
            raise NativeError(rd.where(*cat), "needs PredefinedMetricSpecification or CustomizedMetricSpecification")
        key = "average_utilization" if ttype == "Utilization" else "average_value"
        m: dict = {"type": mtype, "name": mname, "target": {"type": ttype, key: num(tv)}}
        if period is not None:
            m["period_seconds"] = period
        if cfg.get("DisableScaleIn") is True:
            m["disable_scale_in"] = True
        w = rd.number(sp.get("EstimatedInstanceWarmup"), *at, "EstimatedInstanceWarmup", integer=True)
        if w is not None:
            m["initialization_period_seconds"] = w
        if sp.get("Enabled") is False:
            m["enabled"] = False
        metrics.append(m)
        return
    if kind == "PredictiveScaling":
        cfg = rd.mapping(sp.get("PredictiveScalingConfiguration"), *at, "PredictiveScalingConfiguration")
        cat = at + ("PredictiveScalingConfiguration",)
        rd.unknown(cfg, _PREDICTIVE_FIELDS, *cat)
        pred: dict = {"mode": cfg.get("Mode", "ForecastOnly")}
        if not one_of(pred["mode"], ("ForecastOnly", "ForecastAndScale")):
            raise NativeError(rd.where(*cat, "Mode"), f"expected ForecastOnly or ForecastAndScale, got {pred['mode']!r}")
        b = rd.number(cfg.get("SchedulingBufferTime"), *cat, "SchedulingBufferTime", integer=True)
        if b is not None:
            pred["scheduling_buffer_seconds"] = b
        if cfg.get("MaxCapacityBreachBehavior"):
            pred["max_capacity_breach_behavior"] = cfg["MaxCapacityBreachBehavior"]
        mb = rd.number(cfg.get("MaxCapacityBuffer"), *cat, "MaxCapacityBuffer", integer=True)
        if mb is not None:
            pred["max_capacity_buffer_percent"] = mb
        rd.losses.add(rd.where(*cat, "MetricSpecifications"), "the forecast's metrics are the forecaster's "
                                                              "business; dropped")
        policy["predictive"] = pred
        return
    if not one_of(kind, ("StepScaling", "SimpleScaling")):
        raise NativeError(rd.where(*at, "PolicyType"), f"expected TargetTrackingScaling, StepScaling, SimpleScaling "
                                                       f"or PredictiveScaling, got {kind!r}")
    steps = None
    if kind == "StepScaling":
        steps = _step_adjustments(rd, sp, at, kind, name)
        if steps is None:
            return
    found = (alarm_of.get(name) if isinstance(name, str) else None) or _inline_alarm(sp)
    if not found:
        rd.losses.add(rd.where(*at), f"{kind} policy {name!r} has no alarm in the input (its metric and threshold); "
                                     "dropped")
        return
    # each alarm whose actions name the policy invokes it on its own: one rule per alarm
    for k, (aat, alarm) in enumerate(found):
        _alarm_rule(rd, sp, at, kind, name if k == 0 or not isinstance(name, str) else f"{name}-{k}",
                    aat, alarm, rules, steps)


def _period(rd: Reader, value: Any, *at) -> Optional[int]:
    """A target tracking metric's ``Period``: "Accepted values are 10, 30, and 60"
    (API_TargetTrackingMetricStat.html, API_CustomizedMetricSpecification.html); None when absent."""
    period = rd.number(value, *at, integer=True)
    if period is not None and period not in (10, 30, 60):
        raise NativeError(rd.where(*at), f"expected 10, 30 or 60 (seconds), got {period!r}")
    return period


def _alarm_rule(rd: Reader, sp: dict, at: tuple, kind: str, name: Any, aat: tuple, alarm: dict,
                rules: list, steps: Optional[list]) -> None:
    rule: dict = {}
    if isinstance(name, str):
        rule["name"] = name
    mname = rd.string(alarm.get("MetricName"), *aat, "MetricName")
    if mname is None:
        rd.losses.add(rd.where(*aat), "an alarm without a plain metric (metric math); its rule dropped")
        return
    rule["metric"] = neutral_name(mname, alarm.get("Namespace"), alarm.get("Dimensions"))
    op = alarm.get("ComparisonOperator")
    if not one_of(op, _OPS_IN):
        raise NativeError(rd.where(*aat, "ComparisonOperator"), f"expected one of {', '.join(_OPS_IN)}, got {op!r}")
    rule["operator"] = _OPS_IN[op]
    th = rd.number(alarm.get("Threshold"), *aat, "Threshold")
    if th is None:
        if "Threshold" not in alarm:     # ThresholdMetricId: an anomaly detection band
            rd.losses.add(rd.where(*aat), "an alarm without a static Threshold (an anomaly detection band); "
                                          "its rule dropped")
            return
        rd.losses.add(rd.where(*at), f"{kind} policy {name!r}: its alarm's threshold is not known; dropped")
        return
    rule["threshold"] = num(th)
    period = rd.number(alarm.get("Period"), *aat, "Period", integer=True) or 60
    n = rd.number(alarm.get("EvaluationPeriods"), *aat, "EvaluationPeriods", integer=True) or 1
    rule["time_grain_seconds"] = period
    rule["time_window_seconds"] = period * n
    if alarm.get("ExtendedStatistic"):
        rule["statistic"] = "Percentile" + str(alarm["ExtendedStatistic"]).lstrip("p")
    elif alarm.get("Statistic") is not None:
        st = alarm["Statistic"]
        if not one_of(st, _STAT_IN):
            raise NativeError(rd.where(*aat, "Statistic"), f"expected one of {', '.join(_STAT_IN)}, got {st!r}")
        rule["statistic"] = _STAT_IN[st]
    d = rd.number(alarm.get("DatapointsToAlarm"), *aat, "DatapointsToAlarm", integer=True)
    if d is not None:   # even when it is EvaluationPeriods (what it means unsaid): render writes it back
        rule["datapoints_to_alarm"] = d
    if alarm.get("TreatMissingData", "missing") != "missing":
        rule["treat_missing_data"] = alarm["TreatMissingData"]
    adj = sp.get("AdjustmentType", "ChangeInCapacity")
    if not one_of(adj, _ADJ_IN):
        raise NativeError(rd.where(*at, "AdjustmentType"), f"expected one of {', '.join(_ADJ_IN)}, got {adj!r}")
    mam = rd.number(sp.get("MinAdjustmentMagnitude", sp.get("MinAdjustmentStep")), *at, "MinAdjustmentMagnitude",
                    integer=True)
    if kind == "StepScaling":
        rule["steps"] = [dict(st) for st in steps or []]
        agg = sp.get("MetricAggregationType")
        if agg is not None and not rd.template(agg, *at, "MetricAggregationType"):
            if not one_of(agg, _AGG_IN):
                raise NativeError(rd.where(*at, "MetricAggregationType"),
                                  f"expected one of {', '.join(_AGG_IN)}, got {agg!r}")
            if agg != "Average":
                rule["time_aggregation"] = _AGG_IN[agg]
        rule["adjustment_type"] = adj
        if mam is not None:
            rule["min_adjustment_magnitude"] = mam
        w = rd.number(sp.get("EstimatedInstanceWarmup"), *at, "EstimatedInstanceWarmup", integer=True)
        if w is not None:
            rule["action"] = {"cooldown_seconds": w}
    else:
        v = rd.number(sp.get("ScalingAdjustment"), *at, "ScalingAdjustment", integer=True)
        if v is None:
            if "ScalingAdjustment" not in sp:
                raise NativeError(rd.where(*at, "ScalingAdjustment"), "required for a simple scaling policy")
            rd.losses.add(rd.where(*at), f"{kind} policy {name!r} with an unknown ScalingAdjustment; dropped")
            return
        direction = "Increase" if (v >= 0 if adj != "ExactCapacity" else rule["operator"].startswith("Greater")) \
            else "Decrease"
        action: dict = {"direction": direction, "type": _ADJ_IN[adj], "value": abs(v)}
        cd = rd.number(sp.get("Cooldown"), *at, "Cooldown", integer=True)
        if cd is not None:
            action["cooldown_seconds"] = cd
        rule["action"] = action
        if mam is not None:
            rule["min_adjustment_magnitude"] = mam
    if sp.get("Enabled") is False:
        rule["enabled"] = False
    rules.append(rule)


def _per_instance_total(rd: Reader, queries: Any, at: tuple) -> Optional[str]:
    """The metric name of the backlog-per-instance recipe (:func:`backlog_per_instance`):
    the one returned query is ``m1 / m2`` (either way round: the total over the group's
    ``GroupInServiceInstances``) and the total a plain metric; None for any other metric
    math (left to the caller's loss line)."""
    if not isinstance(queries, list) or not all(isinstance(q, dict) and isinstance(q.get("Id"), str) for q in queries):
        return None
    by_id = {q["Id"]: q for q in queries}
    returned = [q for q in by_id.values() if q.get("ReturnData", True) is True]
    if len(returned) != 1 or not isinstance(returned[0].get("Expression"), str):
        return None
    parts = [p.strip() for p in returned[0]["Expression"].split("/")]
    if len(parts) != 2 or not all(p in by_id for p in parts):
        return None
    total, divisor = (by_id[p].get("MetricStat") for p in parts)
    if not isinstance(total, dict) or not isinstance(divisor, dict):
        return None
    tm, dm = total.get("Metric") or {}, divisor.get("Metric") or {}
    if not isinstance(tm, dict) or not isinstance(dm, dict) or \
            any(dm.get(k) != v for k, v in IN_SERVICE.items()) or not _on_the_group(dm.get("Dimensions")):
        return None
    name = tm.get("MetricName")
    if not isinstance(name, str) or not name:
        return None
    k = queries.index(by_id[parts[0]])
    if total.get("Stat", "Average") != "Average":
        rd.losses.note(rd.where(*at, k, "MetricStat", "Stat"), f"{total.get('Stat')}: the metric source's business "
                                                               "(the total per period it reads)")
    if tm.get("Dimensions") and neutral_name(name, tm.get("Namespace"), tm.get("Dimensions")) == name:
        rd.losses.note(rd.where(*at, k, "MetricStat", "Metric", "Dimensions"),
                       "dimensions are the metric source's business")
    return neutral_name(name, tm.get("Namespace"), tm.get("Dimensions"))


def _inline_alarm(sp: dict):
    """DescribePolicies lists a policy's alarms by name only: no metric, no threshold."""
    return None


class ScalingPoliciesTranslator(Translator):
    """``--to aws``: the Auto Scaling and CloudWatch requests, keyed by operation (JSON)."""

    name = "aws"
    provider = "aws"
    summary = ("Auto Scaling and CloudWatch requests keyed by operation (JSON); imports DescribePolicies and "
               "CloudFormation")
    target_keys = TARGET_KEYS
    metric_names = METRIC_NAMES
    #: the scaling-policy names render writes (``NAME-metric-0``, ``NAME-rule-1``, ``NAME-predictive``)
    rendered_policy_name = RENDERED_POLICY_NAME
    policy_arn = staticmethod(policy_arn)


    def render(self, policy: Policy, target: Mapping[str, Any]) -> tuple[Any, Losses]:
        return render(policy, target)

    def dump(self, native: Any) -> str:
        return dump(native)

    def import_all(self, text: str) -> list[tuple[dict, Losses]]:
        return import_all(text)

    def apply(self, name: str, target: Any, policy: Policy, dry_run: bool, say: Callable[[str], None],
              metrics: Mapping[str, Any]) -> bool:
        from .apply import apply_native   # the SDK calls: imported only by apply
        return apply_native(self, name, target, policy, dry_run, say, metrics)
