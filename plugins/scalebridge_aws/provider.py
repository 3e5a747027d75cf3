"""The ``aws`` provider: EC2 Auto Scaling groups sized with ``SetDesiredCapacity``.

One sync of one group (API Reference, https://docs.aws.amazon.com/autoscaling/ec2/APIReference/):

- observe: one ``DescribeAutoScalingGroups`` (DesiredCapacity, MinSize,
  MaxSize, Instances with LifecycleState, HealthStatus, WeightedCapacity and
  ProtectedFromScaleIn; WarmPoolConfiguration and WarmPoolSize); EC2
  ``DescribeInstances`` only for instances whose launch time is not known yet
  (cached per instance while it stays in the group); ``DescribeScalingActivities``
  only when the group looks unsettled (an instance not ``InService``, or the
  capacity in service differing from the desired capacity) — an activity not
  ``Successful``, ``Failed`` or ``Cancelled`` is the operation in flight;
- metrics: CloudWatch ``GetMetricData``, batched (:mod:`.metrics`);
- act: ``SetDesiredCapacity`` with ``HonorCooldown=False`` (scalebridge keeps
  its own cooldowns), clamped to the group's MinSize/MaxSize ("All requests to
  change the Auto Scaling group's desired capacity … must fall within these
  limits", UG asg-capacity-limits.html; the API answers ValidationError
  otherwise), with a note on instances protected from scale-in (Auto Scaling
  does not terminate them when the desired capacity drops,
  UG ec2-auto-scaling-instance-protection.html);
- managed_by: ``DescribePolicies``: an enabled scaling policy (target tracking,
  step, simple, or predictive in ``ForecastAndScale``) means the group's own
  autoscaler acts on it; the target is refused, naming the policies, unless
  its ``ref.allow_scaling_policies`` is true (an extension of the run
  configuration's ``ref``).
"""
from __future__ import annotations

import math
import re
from typing import Any, Mapping, Optional, Sequence

from scalebridge.providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider,
                                   ProviderError, RefError, SizeChange, Target)

from . import lifecycle
from .client import (DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_ATTEMPTS, DEFAULT_READ_TIMEOUT, DEFAULT_RETRY_MODE,
                     AwsClients)
from .metrics import read_metrics as _read_metrics
from .metrics import read_metrics_many as _read_metrics_many

__all__ = ["AwsProvider", "AutoScalingGroupTarget", "DEFAULT_METRIC_DELAY", "OPTIONS", "REF_KEYS"]

#: how far behind ``now`` CloudWatch windows end by default: EC2 detailed monitoring
#: publishes one-minute datapoints, available about a minute after their period
#: (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/manage-detailed-monitoring.html)
DEFAULT_METRIC_DELAY = 60.0
#: a scaling policy's activity, as its Cause words it: "At 2026-01-01T00:10:00Z a monitor alarm
#: TargetTracking-web-AlarmHigh-… in state ALARM triggered policy cpu50 changing the desired capacity
#: from 3 to 5." (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-verify-scaling-activity.html)
_POLICY_CAUSE = re.compile(r"triggered policy (\S+) changing the desired capacity from (\d+) to (\d+)")
#: activities still running (API_Activity StatusCode values other than these three)
FINISHED_ACTIVITY = frozenset({"Successful", "Failed", "Cancelled"})
ACTIVITY_PAGE = 10
#: group names per DescribeAutoScalingGroups call of a batched observe: MaxRecords' maximum
DESCRIBE_PAGE = 100
EC2_FILTER_VALUES = 200
OPTIONS = ("region", "endpoint_url", "profile", "max_attempts", "retry_mode", "connect_timeout", "read_timeout",
           "metric_delay_seconds")
REF_KEYS = ("auto_scaling_group", "region", "allow_scaling_policies")
RETRY_MODES = ("standard", "adaptive", "legacy")


def _check_number(key: str, v: Any, *, minimum: float, integer: bool = False) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and v != int(v)) or v < minimum:
        kind = "an integer" if integer else "a number"
        raise RefError(key, f"must be {kind} ≥ {minimum:g}, got {v!r}")


_WARM_POOL_NOTE = ("scalebridge does not manage this warm pool (PutWarmPool/DeleteWarmPool are the operator's): "
                   "it sets DesiredCapacity and Auto Scaling draws instances from the pool first; the pool's "
                   "instances are neither capacity nor failures")


class AwsProvider(Provider):
    """``providers: {aws: {region, endpoint_url, profile}}`` — credentials from the
    standard AWS chain (environment, shared files, ``profile``, instance role).
    Extensions: ``max_attempts`` (botocore ``total_max_attempts``, default 3),
    ``retry_mode`` (``standard``), ``connect_timeout``/``read_timeout`` (seconds,
    5 and 15), ``metric_delay_seconds`` (60)."""

    name = "aws"
    semantics = "aws"
    capabilities = frozenset({Capability.METRICS, Capability.TRANSLATE, Capability.HISTORY,
                              Capability.NATIVE_DECISIONS,
                              Capability.DELETE_MEMBERS})
    #: rates from EC2's documented request-token buckets (mutating actions refill
    #: 5 tokens a second from a bucket of 200; non-mutating ones 20 a second),
    #: https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html — the
    #: lowest documented rates of the APIs a sync calls. The read burst is one
    #: sync period's refill (20/s × the 15 s default period = 300 target syncs), so
    #: a controller of up to 300 groups is never paced within a sync
    pacing = Pacing(writes_per_second=5.0, write_burst=200, reads_per_second=20.0, read_burst=300)
    ref_keys = frozenset({"auto_scaling_group"})

    def __init__(self, region: Optional[str] = None, endpoint_url: Optional[str] = None,
                 profile: Optional[str] = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 retry_mode: str = DEFAULT_RETRY_MODE, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, metric_delay_seconds: float = DEFAULT_METRIC_DELAY,
                 **unknown: Any):
        for k in unknown:
            raise RefError(k, f"not an option of the aws provider; valid options: {', '.join(OPTIONS)}")
        for key, v in (("region", region), ("endpoint_url", endpoint_url), ("profile", profile)):
            if v is not None and (not isinstance(v, str) or not v):
                raise RefError(key, f"must be a non-empty string, got {v!r}")
        if endpoint_url is not None and not endpoint_url.startswith(("http://", "https://")):
            raise RefError("endpoint_url", f"must be an http:// or https:// URL, got {endpoint_url!r}")
        _check_number("max_attempts", max_attempts, minimum=1, integer=True)
        if retry_mode not in RETRY_MODES:
            raise RefError("retry_mode", f"one of {', '.join(RETRY_MODES)}, got {retry_mode!r}")
        _check_number("connect_timeout", connect_timeout, minimum=0.001)
        _check_number("read_timeout", read_timeout, minimum=0.001)
        _check_number("metric_delay_seconds", metric_delay_seconds, minimum=0)
        self.region = region
        self.metric_delay_seconds = float(metric_delay_seconds)
        self.clients = AwsClients(region, endpoint_url, profile, max_attempts=int(max_attempts),
                                  retry_mode=retry_mode, connect_timeout=float(connect_timeout),
                                  read_timeout=float(read_timeout))

    def target(self, ref: Mapping[str, Any]) -> "AutoScalingGroupTarget":
        if not isinstance(ref, Mapping):
            raise RefError("ref", f"must be a mapping with auto_scaling_group, got {ref!r}")
        for k in ref:
            if k not in REF_KEYS:
                raise RefError(f"ref.{k}", f"not a key of an aws target; valid keys: {', '.join(REF_KEYS)}")
        group = ref.get("auto_scaling_group")
        if not isinstance(group, str) or not group or len(group) > 255:
            raise RefError("ref.auto_scaling_group",
                           f"required: the Auto Scaling group's name (1 to 255 characters), got {group!r}")
        region = ref.get("region", self.region)
        if region is not None and (not isinstance(region, str) or not region):
            raise RefError("ref.region", f"must be a region name such as us-east-1, got {region!r}")
        allow = ref.get("allow_scaling_policies", False)
        if not isinstance(allow, bool):
            raise RefError("ref.allow_scaling_policies", f"true or false, got {allow!r}")
        return AutoScalingGroupTarget(self.clients, group, region, allow_scaling_policies=allow,
                                      metric_delay_seconds=self.metric_delay_seconds)

    def check_metric_source(self, name: str, source: Optional[Mapping[str, Any]]) -> None:
        """Raise :class:`RefError` naming ``metrics.<name>.source.<key>`` when a
        target's metric source is not one this provider reads (for a
        configuration check before the first sync; :mod:`.metrics` documents the keys)."""
        from .metrics import parse_source
        try:
            parse_source(name, source)
        except ProviderError as e:
            where, _, message = e.message.partition(": ")
            raise RefError(where, message) from None

    def observe_many(self, batch: Sequence[tuple[Target, Sequence[MetricQuery]]], now: float) -> list:
        """A sync's groups from ``DescribeAutoScalingGroups`` pages of up to
        :data:`DESCRIBE_PAGE` names each ("By default, you can only specify up to 50
        names. You can optionally increase this limit using the MaxRecords property
        … The default value is 50 and the maximum value is 100", API Reference,
        API_DescribeAutoScalingGroups.html, AutoScalingGroupNames and MaxRecords),
        instead of one call per group. A group the page does not list fails alone
        (not found); a page that fails fails its groups with that error."""
        out: list = [None] * len(batch)
        by_region: dict[Optional[str], list[int]] = {}
        for i, (target, _queries) in enumerate(batch):
            if isinstance(target, AutoScalingGroupTarget) and target.clients is self.clients:
                by_region.setdefault(target.region, []).append(i)
        for region, idx in by_region.items():
            names = list(dict.fromkeys(batch[i][0].group for i in idx))
            for k in range(0, len(names), DESCRIBE_PAGE):
                chunk = names[k:k + DESCRIBE_PAGE]
                try:
                    found = self._describe_names(chunk, region)
                except ProviderError as e:
                    # every group of the page fails with it (and backs off, a Retry-After
                    # honoured): a group's own read is the same API call, so reading them one
                    # by one would only multiply the calls on a server that refused this one
                    for i in idx:
                        if batch[i][0].group in chunk:
                            out[i] = e
                    continue
                wanted = set(chunk)
                for i in idx:
                    target = batch[i][0]
                    if target.group not in wanted:
                        continue
                    g = found.get(target.group)
                    try:
                        if g is None:
                            raise ProviderError(ErrorKind.NOT_FOUND, f"Auto Scaling group {target.group!r} not found"
                                                f"{' in ' + region if region else ''}",
                                                operation="DescribeAutoScalingGroups")
                        target._prefetched = None
                        out[i] = target._observe_group(g, now)
                    except ProviderError as e:
                        out[i] = e
            # the metrics of every group observed, in shared GetMetricData calls (up to 500 queries each)
            wanted = [i for i in idx if isinstance(out[i], Observation) and batch[i][1]]
            if wanted:
                got = _read_metrics_many(self.clients, [(batch[i][0].group, batch[i][0].metric_delay_seconds, out[i],
                                                         list(batch[i][1])) for i in wanted], now, region=region)
                for i, metrics in zip(wanted, got):
                    batch[i][0]._prefetched = (now, tuple(q.name for q in batch[i][1]), metrics)
        return out

    def _describe_names(self, names: list[str], region: Optional[str]) -> dict[str, dict]:
        groups: dict[str, dict] = {}
        token = None
        while True:
            params: dict = {"AutoScalingGroupNames": names, "MaxRecords": DESCRIBE_PAGE}
            if token:
                params["NextToken"] = token
            resp = self.clients.call("autoscaling", "describe_auto_scaling_groups", region=region, **params)
            for g in resp.get("AutoScalingGroups", ()):
                groups[g.get("AutoScalingGroupName")] = g
            token = resp.get("NextToken")
            if not token:
                return groups

    def close(self) -> None:
        self.clients.close()


class AutoScalingGroupTarget(Target):
    """One Auto Scaling group."""

    def __init__(self, clients: AwsClients, group: str, region: Optional[str] = None, *,
                 allow_scaling_policies: bool = False, metric_delay_seconds: float = DEFAULT_METRIC_DELAY):
        self.clients = clients
        self.group = group
        self.region = region
        self.allow_scaling_policies = allow_scaling_policies
        self.metric_delay_seconds = metric_delay_seconds
        self.name = f"{region or 'default'}/AutoScalingGroup/{group}"
        self._launch: dict[str, float] = {}               # instance id -> EC2 LaunchTime
        self._first_seen: dict[str, float] = {}           # instance id -> the first observe that listed it
        self._states: dict[str, str] = {}                 # instance id -> last LifecycleState seen
        self._ready_since: dict[str, float] = {}          # instance id -> first seen InService after another state
        self._last: Optional[dict] = None                 # the last DescribeAutoScalingGroups entry
        self._prefetched: Optional[tuple] = None          # (sync time, metrics) read by a batch

    # ------------------------------------------------------------------------- reads
    def _call(self, service: str, operation: str, **params: Any) -> dict:
        return self.clients.call(service, operation, region=self.region, **params)

    def describe(self) -> dict:
        resp = self._call("autoscaling", "describe_auto_scaling_groups", AutoScalingGroupNames=[self.group])
        groups = [g for g in resp.get("AutoScalingGroups", ()) if g.get("AutoScalingGroupName") == self.group]
        if not groups:
            raise ProviderError(ErrorKind.NOT_FOUND, f"Auto Scaling group {self.group!r} not found"
                                f"{' in ' + self.region if self.region else ''}",
                                operation="DescribeAutoScalingGroups")
        self._last = groups[0]
        return groups[0]

    def _launch_times(self, ids: list[str]) -> None:
        """EC2 LaunchTime of instances not seen before (DescribeInstances with an
        ``instance-id`` filter: an instance already gone is left out, not an
        error). One EC2 does not list yet (its API is eventually consistent,
        https://docs.aws.amazon.com/ec2/latest/devguide/eventual-consistency.html)
        is asked again on the next sync."""
        missing = [i for i in ids if i not in self._launch]
        for k in range(0, len(missing), EC2_FILTER_VALUES):
            chunk = missing[k:k + EC2_FILTER_VALUES]
            token = None
            while True:
                params: dict = {"Filters": [{"Name": "instance-id", "Values": chunk}], "MaxResults": 1000}
                if token:
                    params["NextToken"] = token
                resp = self._call("ec2", "describe_instances", **params)
                for r in resp.get("Reservations", ()):
                    for inst in r.get("Instances", ()):
                        lt = inst.get("LaunchTime")
                        if lt is not None:
                            self._launch[inst["InstanceId"]] = lt.timestamp()
                token = resp.get("NextToken")
                if not token:
                    break

    def activity_in_progress(self) -> Optional[str]:
        resp = self._call("autoscaling", "describe_scaling_activities", AutoScalingGroupName=self.group,
                          MaxRecords=ACTIVITY_PAGE)
        for a in resp.get("Activities", ()):
            if a.get("StatusCode") not in FINISHED_ACTIVITY:
                what = a.get("Description") or a.get("Cause") or "a scaling activity"
                progress = a.get("Progress")
                return (f"scaling activity {a.get('ActivityId')} {a.get('StatusCode')}"
                        f"{f' {progress}%' if progress is not None else ''}: {what}")
        return None

    def observe(self, now: float) -> Observation:
        self._prefetched = None
        return self._observe_group(self.describe(), now)

    def _observe_group(self, g: dict, now: float) -> Observation:
        """:meth:`observe` of the group's ``DescribeAutoScalingGroups`` entry (read
        alone, or in a page of names by :meth:`AwsProvider.observe_many`)."""
        self._last = g
        instances = list(g.get("Instances") or ())
        present = {i["InstanceId"] for i in instances}
        for cache in (self._launch, self._states, self._ready_since, self._first_seen):
            for gone in [k for k in cache if k not in present]:
                del cache[gone]
        self._launch_times([i["InstanceId"] for i in instances])
        members: list = []
        states: dict = {}
        status = 0
        in_service = 0
        protected: list = []
        for inst in instances:
            iid = inst["InstanceId"]
            state = inst.get("LifecycleState") or ""
            states[state] = states.get(state, 0) + 1
            self._first_seen.setdefault(iid, now)
            prev = self._states.get(iid)
            if state in lifecycle.IN_SERVICE and prev is not None and prev not in lifecycle.IN_SERVICE:
                self._ready_since[iid] = now
            self._states[iid] = state
            # a launch time EC2 does not give yet: the instance is as new as its first sighting
            m = lifecycle.member_of(inst, self._launch.get(iid, self._first_seen[iid]), self._ready_since.get(iid))
            if m is None:
                continue
            members.append(m)
            if m.standby:   # the warm pool, or on standby: neither capacity nor a failure
                continue
            w = m.weight
            if not m.deleting:
                status += w
            if m.phase == "Running" and m.ready and not m.deleting:
                in_service += w
                if inst.get("ProtectedFromScaleIn"):
                    protected.append(iid)
        desired = int(g["DesiredCapacity"])
        in_flight = None
        if g.get("Status"):    # "Delete in progress"
            in_flight = f"group status: {g['Status']}"
        elif lifecycle.unsettled(desired, instances):
            in_flight = self.activity_in_progress()
        details: dict = {"auto_scaling_group": self.group, "lifecycle_states": states,
                         "in_service": in_service}
        if protected:
            details["protected_from_scale_in"] = protected
        if g.get("WarmPoolConfiguration") is not None:
            wp = g["WarmPoolConfiguration"]
            details["warm_pool"] = {"size": g.get("WarmPoolSize"), "pool_state": wp.get("PoolState"),
                                    "min_size": wp.get("MinSize"),
                                    "max_group_prepared_capacity": wp.get("MaxGroupPreparedCapacity"),
                                    "managed_by_scalebridge": False,
                                    "note": _WARM_POOL_NOTE}
        suspended = [p.get("ProcessName") for p in g.get("SuspendedProcesses") or ()]
        if suspended:
            details["suspended_processes"] = suspended
        return Observation(current_replicas=desired, status_replicas=status, members=members,
                           in_flight=in_flight, min_size=int(g["MinSize"]), max_size=int(g["MaxSize"]),
                           details=details)

    def read_metrics(self, now: float, observation: Observation, queries: list[MetricQuery]) -> dict[str, dict]:
        pre, self._prefetched = self._prefetched, None
        if pre is not None and pre[0] == now and pre[1] == tuple(q.name for q in queries):
            if isinstance(pre[2], ProviderError):     # its series' call failed: this group's failure
                raise pre[2]
            return pre[2]
        return _read_metrics(self.clients, self.group, now, self.metric_delay_seconds, observation, queries,
                             region=self.region)

    def read_history(self, query: MetricQuery, start: float, end: float, step: float) -> dict:
        import time
        from .metrics import read_history
        return read_history(self.clients, self.group, query, start, end, time.time(), region=self.region)

    def size_history(self, start: float, end: float, step: float) -> Optional[dict]:
        import time
        from .metrics import size_history
        return size_history(self.clients, self.group, start, end, time.time(), region=self.region)

    # ------------------------------------------------------------------------- writes
    def set_size(self, size: int) -> SizeChange:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProviderError(ErrorKind.INVALID, f"SetDesiredCapacity: a size must be a non-negative "
                                f"integer, got {size!r}", operation="SetDesiredCapacity")
        g = self._last if self._last is not None else self.describe()
        lo, hi, desired = int(g["MinSize"]), int(g["MaxSize"]), int(g["DesiredCapacity"])
        notes = []
        new = size
        if new > hi:
            new = hi
            notes.append(f"asked {size}, set the group's MaxSize {hi}")
        elif new < lo:
            new = lo
            notes.append(f"asked {size}, set the group's MinSize {lo}")
        if new < desired:
            note = self._scale_in_note(g, desired - new)
            if note:
                notes.append(note)
        self._call("autoscaling", "set_desired_capacity", AutoScalingGroupName=self.group, DesiredCapacity=new,
                   HonorCooldown=False)
        g = dict(g)
        g["DesiredCapacity"] = new
        self._last = g
        return SizeChange(size=new, in_flight=new != desired, note="; ".join(notes) or None)

    def delete_members(self, members: list[str], size: int) -> SizeChange:
        """A scale-in of chosen instances: ``TerminateInstanceInAutoScalingGroup`` with
        ``ShouldDecrementDesiredCapacity`` true for each, in order (one ``InstanceId`` a
        call: the batch ``InstanceIds`` form is recent and not in every SDK or emulator),
        then ``SetDesiredCapacity`` for any rest (a partial selection).

        - https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_TerminateInstanceInAutoScalingGroup.html:
          without the decrement Auto Scaling launches a replacement; with it, the group
          shrinks. Terminating below MinSize is refused ("Terminating instance without
          replacement will violate group's min size constraint"): at most the desired
          capacity less ``max(size, MinSize)`` are terminated.
        - Idempotent: an instance no longer in the group, already ``Terminating*`` or
          protected from scale-in (``ProtectedFromScaleIn``: instance scale-in
          protection, https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-instance-protection.html)
          is skipped; the group is described again first, so a retry removes no one twice."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ProviderError(ErrorKind.INVALID, f"TerminateInstanceInAutoScalingGroup: a size must be a "
                                f"non-negative integer, got {size!r}", operation="TerminateInstanceInAutoScalingGroup")
        g = self.describe()
        lo, desired = int(g["MinSize"]), int(g["DesiredCapacity"])
        by_id = {i["InstanceId"]: i for i in g.get("Instances") or ()}
        room = max(0, desired - max(size, lo))
        gone: list[str] = []
        for iid in members:
            if len(gone) >= room:
                break
            inst = by_id.get(iid)
            if inst is None or inst.get("ProtectedFromScaleIn") or \
                    (inst.get("LifecycleState") or "") not in lifecycle.IN_SERVICE:
                continue
            self._call("autoscaling", "terminate_instance_in_auto_scaling_group", InstanceId=iid,
                       ShouldDecrementDesiredCapacity=True)
            gone.append(iid)
        after = desired - len(gone)
        g = dict(g)
        g["DesiredCapacity"] = after
        self._last = g
        note = f"terminated {', '.join(gone)} with a decrement" if gone else None
        if max(size, lo) < after:
            change = self.set_size(size)
            return SizeChange(size=change.size, in_flight=True,
                              note="; ".join(x for x in (note, change.note) if x) or None)
        return SizeChange(size=after, in_flight=bool(gone), note=note, operation="TerminateInstanceInAutoScalingGroup")

    @staticmethod
    def _scale_in_note(g: Mapping, remove: int) -> Optional[str]:
        """What instance scale-in protection does to a scale-in of ``remove`` units."""
        unprotected = 0
        protected = []
        for i in g.get("Instances") or ():
            if i.get("LifecycleState") not in lifecycle.IN_SERVICE:
                continue
            if i.get("ProtectedFromScaleIn"):
                protected.append(i["InstanceId"])
            else:
                unprotected += lifecycle.weight(i)
        if not protected:
            return None
        ids = ", ".join(protected[:5]) + (f" and {len(protected) - 5} more" if len(protected) > 5 else "")
        if unprotected < remove:
            return (f"scale-in of {remove}: only {unprotected} in service unprotected; {len(protected)} "
                    f"protected from scale-in ({ids}) stay until their protection is removed")
        return f"scale-in of {remove}: {len(protected)} instances protected from scale-in ({ids}) are kept"

    # ------------------------------------------------------------------------- another autoscaler
    def managed_by(self) -> Optional[str]:
        if self.allow_scaling_policies:
            return None
        acting = []
        token = None
        while True:
            params: dict = {"AutoScalingGroupName": self.group, "MaxRecords": 50}
            if token:
                params["NextToken"] = token
            resp = self._call("autoscaling", "describe_policies", **params)
            for p in resp.get("ScalingPolicies", ()):
                if p.get("Enabled") is False:
                    continue
                ptype = p.get("PolicyType") or "SimpleScaling"
                if ptype == "PredictiveScaling":
                    mode = (p.get("PredictiveScalingConfiguration") or {}).get("Mode") or "ForecastOnly"
                    if mode != "ForecastAndScale":
                        continue
                acting.append(f"{p.get('PolicyName')} ({ptype})")
            token = resp.get("NextToken")
            if not token:
                break
        if not acting:
            return None
        return (f"the group's own scaling policies: {', '.join(acting)} (delete them, or set "
                f"ref.allow_scaling_policies: true to actuate beside them)")

    def native_decision(self, now: float, since: Optional[float]) -> Any:
        """What the group's own scaling policies decided: the group's ``DesiredCapacity``
        and its scaling activities (``DescribeScalingActivities``, newest first,
        https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Activity.html). An
        activity whose ``Cause`` says "… triggered policy P changing the desired capacity
        from A to B" (the wording of a policy's activity, as the console's Activity
        history shows it) is a decision of the policies: the newest one that started
        after ``since`` gives ``current`` A and its time; with none since, the policies
        held: ``current`` is the desired capacity. Activities do not say which of a
        policy's stages moved the size (``stage`` None). None when the group has no
        scaling policy."""
        from scalebridge.providers import NativeDecision
        resp = self._call("autoscaling", "describe_policies", AutoScalingGroupName=self.group, MaxRecords=50)
        policies = [f"{p.get('PolicyName')} ({p.get('PolicyType') or 'SimpleScaling'})"
                    for p in resp.get("ScalingPolicies", ()) if p.get("Enabled") is not False]
        if not policies:
            return None
        desired = int(self.describe()["DesiredCapacity"])
        acts = self._call("autoscaling", "describe_scaling_activities", AutoScalingGroupName=self.group,
                          MaxRecords=ACTIVITY_PAGE).get("Activities", ())
        actions = []
        for a in acts:
            m = _POLICY_CAUSE.search(a.get("Cause") or "")
            start = a.get("StartTime")
            t = start.timestamp() if hasattr(start, "timestamp") else None
            # an activity stamped in the second of ``since`` is kept (a time may be whole seconds)
            if m is None or t is None or (since is not None and t < math.floor(since)):
                continue
            actions.append({"time": t, "from": int(m.group(2)), "to": int(m.group(3)),
                            "reason": a.get("Cause"), "policy": m.group(1), "status": a.get("StatusCode")})
        actions.sort(key=lambda x: x["time"])
        last = actions[-1] if actions else None
        return NativeDecision(f"the group's scaling policies: {', '.join(policies)}", desired,
                              current=last["from"] if last else desired, time=last["time"] if last else None,
                              reason=last["reason"] if last else None, actions=actions,
                              source="the group's DesiredCapacity and its scaling activities")

    def close(self) -> None:
        self._launch.clear()
        self._first_seen.clear()
        self._states.clear()
        self._ready_since.clear()

