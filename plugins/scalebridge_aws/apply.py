"""``scalebridge apply CONFIG`` for ``aws`` targets: ``UpdateAutoScalingGroup``,
``PutScalingPolicy`` (each policy by name: a second apply updates it, never duplicates it),
then ``PutMetricAlarm`` with the ``PolicyARN`` PutScalingPolicy returned, and
``PutScheduledUpdateGroupAction``; a scaling policy an earlier apply of the same policy
wrote (its generated name) that the policy no longer has is deleted with its alarm, any
other policy on the group is left as it is
(https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutScalingPolicy.html: "Creates or
updates a scaling policy"). Every call goes through the plugin's own client
(:class:`~scalebridge_aws.client.AwsClients`), as the provider's do.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from scalebridge.translate.apply import ApplyError, diff, said_diff
from scalebridge.translate.common import as_policy


if TYPE_CHECKING:
    from scalebridge.translate.base import Translator

    from .provider import AutoScalingGroupTarget


def apply_native(translator: "Translator", name: str, target: "AutoScalingGroupTarget", policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One aws target; ``target`` is the aws plugin's Auto Scaling group handle
    (its ``clients`` make every call). Returns whether anything changed (or would)."""
    group = target.group
    call = lambda service, op, **kw: target.clients.call(service, op, region=target.region, **kw)  # noqa: E731
    native, losses = translator.render(policy, {"auto_scaling_group": group, "metrics": metrics or {}})
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    groups = call("autoscaling", "describe_auto_scaling_groups", AutoScalingGroupNames=[group])
    if not groups.get("AutoScalingGroups"):
        raise ApplyError(f"Auto Scaling group {group!r} not found")
    changed = False
    for body in native["UpdateAutoScalingGroup"]:
        d = diff(body, groups["AutoScalingGroups"][0], skip=("AutoScalingGroupName",))
        for line in d:
            say(f"{name}: UpdateAutoScalingGroup {group}: {line}")
        if d:
            changed = True
            if not dry_run:
                call("autoscaling", "update_auto_scaling_group", **body)
    existing = {p["PolicyName"]: p for p in
                call("autoscaling", "describe_policies", AutoScalingGroupName=group).get("ScalingPolicies", [])}
    arns: dict[str, str] = {}
    for body in native["PutScalingPolicy"]:
        pname = body["PolicyName"]
        have = existing.get(pname)
        d = said_diff(say, name, "PutScalingPolicy", pname, body, have, skip=("AutoScalingGroupName",))
        if have is not None:
            arns[pname] = have.get("PolicyARN", translator.policy_arn(pname, group))
        if d:
            changed = True
            if not dry_run:
                arns[pname] = call("autoscaling", "put_scaling_policy", **body).get("PolicyARN", translator.policy_arn(pname, group))
    if changed and not dry_run and native["PutMetricAlarm"]:
        # the ARNs as the group now holds them (a PutScalingPolicy response may leave PolicyARN out)
        for p in call("autoscaling", "describe_policies", AutoScalingGroupName=group).get("ScalingPolicies", []):
            if p.get("PolicyARN"):
                arns[p["PolicyName"]] = p["PolicyARN"]
    base = as_policy(policy).name or "scalebridge"
    for pname in sorted(set(existing) - {b["PolicyName"] for b in native["PutScalingPolicy"]}):
        m = translator.rendered_policy_name.match(pname)
        if m is None or m.group(1) != base:
            say(f"{name}: PutScalingPolicy {pname}: on the group but not in the policy; left as it is")
            continue
        # one this policy rendered before (NAME-metric-i, NAME-rule-i, NAME-predictive) that it no longer
        # has: DeletePolicy, and the rule's alarm, which "DeletePolicy ... does not delete"
        # (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DeletePolicy.html)
        changed = True
        say(f"{name}: DeletePolicy {pname}: no longer in the policy")
        alarm = f"{pname}-alarm"
        has_alarm = bool(call("cloudwatch", "describe_alarms", AlarmNames=[alarm]).get("MetricAlarms"))
        if has_alarm:
            say(f"{name}: DeleteAlarms {alarm}: no longer in the policy")
        if not dry_run:
            call("autoscaling", "delete_policy", AutoScalingGroupName=group, PolicyName=pname)
            if has_alarm:
                call("cloudwatch", "delete_alarms", AlarmNames=[alarm])
    alarms = native["PutMetricAlarm"]
    current_alarms = {}
    if alarms:
        current_alarms = {a["AlarmName"]: a for a in call("cloudwatch", "describe_alarms",
                                                          AlarmNames=[a["AlarmName"] for a in alarms])
                          .get("MetricAlarms", [])}
    for body in alarms:
        body = dict(body, AlarmActions=[arns.get(a.rsplit("policyName/", 1)[-1], a) for a in body["AlarmActions"]])
        d = said_diff(say, name, "PutMetricAlarm", body["AlarmName"], body, current_alarms.get(body["AlarmName"]))
        if d:
            changed = True
            if not dry_run:
                call("cloudwatch", "put_metric_alarm", **body)
    scheduled = native["PutScheduledUpdateGroupAction"]
    current_scheduled = {a["ScheduledActionName"]: a for a in call(
        "autoscaling", "describe_scheduled_actions", AutoScalingGroupName=group).get("ScheduledUpdateGroupActions", [])}
    wanted = {b["ScheduledActionName"] for b in scheduled}
    stale = set(current_scheduled) - wanted
    for start in sorted(a for a in stale if a.startswith(f"{base}-") and a.endswith("-start")):
        # the pair an earlier apply of this policy wrote for a schedule it no longer has
        # (NAME-SCHEDULE-start and NAME-SCHEDULE-end); a lone action is someone else's
        end = start[:-len("start")] + "end"
        if end not in stale:
            continue
        changed = True
        for aname in (start, end):
            say(f"{name}: DeleteScheduledAction {aname}: no longer in the policy")
            if not dry_run:
                call("autoscaling", "delete_scheduled_action", AutoScalingGroupName=group, ScheduledActionName=aname)
    for body in scheduled:
        d = said_diff(say, name, "PutScheduledUpdateGroupAction", body["ScheduledActionName"], body,
                       current_scheduled.get(body["ScheduledActionName"]), skip=("AutoScalingGroupName",))
        if d:
            changed = True
            if not dry_run:
                call("autoscaling", "put_scheduled_update_group_action", **body)
    if not changed:
        say(f"{name}: unchanged")
    return changed
