"""AWS instance warm-up, the capacity a policy scales from, and activities in progress.

Amazon EC2 Auto Scaling:

- Warm-up, https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-step-scaling-warmup
  (the same words for target tracking, #as-target-tracking-scaling-warmup):
  "Until its specified warm-up time has expired, an instance is not counted
  toward the aggregated metrics of the Auto Scaling group." "While scaling out,
  we do not consider instances that are warming up as part of the current
  capacity of the group." "While scaling in, we consider instances that are
  terminating as part of the current capacity of the group." "A scale-in
  activity can't start while a scale-out activity is in progress."
- https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-default-instance-warmup.html:
  "This blocks scale-in activities initiated by scaling policies until the
  instances finish warming up."
- Which warm-up, https://docs.aws.amazon.com/autoscaling/ec2/userguide/consolidated-view-of-warm-up-and-cooldown-settings.html
  (EstimatedInstanceWarmup): "When a warm-up period is specified here, it
  overrides the default instance warmup." "If not defined, the value of this
  parameter defaults to the value for the default instance warmup defined for
  the group. If default instance warmup is null, then it falls back to the
  value of default cooldown." DefaultCooldown: "Default: 300 seconds".

Protocol mapping (docs/research/aws.md, G6 and G8):

- a member is *warming* while ``now − warmup < t``, ``t`` its
  ``ready_transition_time`` (else ``start_time``; null: the distant past);
- *in service*: phase ``Running``, not ``ready: false``, not ``deleting``
  (an instance has no Ready condition of its own: ``ready: null`` counts as
  ready);
- the scale-out base is the capacity (Σ ``weight`` × ``count``) in service and
  not warming; the scale-in base is every ``Running`` member's, warming and
  terminating (``deleting``) ones included; ``Pending`` members are in neither.
  Without ``members`` both are ``status_replicas``, else ``current_replicas``;
- a *scale-out is in progress* while ``status_replicas < current_replicas`` or
  a member is ``Pending`` or ``ready: false`` (and not ``deleting``);
- an *activity is in progress* (the protocol: "An AWS scaling activity is in progress
  while …", docs/architecture.md) while ``status_replicas != current_replicas``, or any member is
  ``Pending``, not ready, or ``deleting``. ``status_replicas`` absent: the
  capacity of the ``Running`` and ``Pending`` members.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

from .. import constants as C

__all__ = ["GroupCapacity", "resolve_warmup"]


def resolve_warmup(metric_override: Optional[float], policy_override: Optional[float], settings) -> float:
    """EstimatedInstanceWarmup of a policy: the target-tracking metric's own,
    else the policy's, else ``settings.default_instance_warmup_seconds``, else
    ``settings.default_cooldown_seconds``, else 300."""
    if metric_override is not None:
        return metric_override
    if policy_override is not None:
        return policy_override
    w = settings.default_instance_warmup_seconds
    if w is not None:
        return w
    c = settings.default_cooldown_seconds
    return C.AWS_DEFAULT_COOLDOWN if c is None else c


def _int_capacity(x) -> int:
    """Capacity units as an integer (AWS weights are integers; a fractional
    total is rounded up)."""
    if type(x) is int:
        return x
    return math.ceil(x)


class GroupCapacity:
    """What AWS calls the group's capacity, read once per decision from the observations."""
    __slots__ = ("now", "current", "has_members", "base_in", "in_service", "_serving",
                 "activity_in_progress", "scale_out_in_progress", "_warming", "_names")

    def __init__(self, now: float, current: int, status: Optional[object], members: Optional[Sequence]):
        self.now = now
        self.current = current
        # (warmup, result) of the last warming() and metric_members(): a decision asks for one or two warm-ups
        self._warming: Optional[tuple] = None
        self._names: Optional[tuple] = None
        if members is None:
            self.has_members = False
            s = current if status is None else _int_capacity(status)
            self.base_in = s
            self.in_service = s
            self._serving = ()
            self.activity_in_progress = s != current
            self.scale_out_in_progress = s < current
            return
        self.has_members = True
        running = 0
        present = 0
        in_service = 0
        pending = False
        unready = False
        deleting = False
        serving: list = []   # (t, w, member) in service: warming since t (None: the distant past)
        for m in members:
            n = m.count
            w = m.weight if n == 1 else m.weight * n
            phase = m.phase
            if phase == "Running":
                running += w
                present += w
                if m.deleting:
                    deleting = True
                elif m.ready is False:
                    unready = True
                else:
                    in_service += w
                    t = m.ready_transition_time
                    if t is None:
                        t = m.start_time
                    serving.append((t, w, m))
            elif phase == "Pending":
                present += w
                if m.deleting:
                    deleting = True
                else:
                    pending = True
        # _int_capacity, inline: capacities are integers unless a weight is fractional
        self.base_in = running if type(running) is int else math.ceil(running)
        self.in_service = in_service if type(in_service) is int else math.ceil(in_service)
        self._serving = serving
        s = present if status is None else status
        if type(s) is not int:
            s = math.ceil(s)
        self.activity_in_progress = s != current or pending or unready or deleting
        self.scale_out_in_progress = s < current or pending or unready

    def warming(self, warmup: float) -> int:
        """Capacity in service that is still warming up."""
        cached = self._warming
        if cached is not None and cached[0] == warmup:
            return cached[1]
        cutoff = self.now - warmup
        c = 0
        for t, w, _ in self._serving:
            if t is not None and t > cutoff:
                c += w
        c = _int_capacity(c)
        self._warming = (warmup, c)
        return c

    def base_out(self, warmup: float) -> int:
        """The capacity a scale-out adds to: in service and warmed up."""
        return self.in_service - self.warming(warmup)

    def any_warming(self, warmup: float) -> bool:
        return self.warming(warmup) > 0

    def metric_members(self, warmup: float) -> frozenset:
        """Names of the members whose samples count toward the group's
        aggregated metric: in service and warmed up ("Until its specified
        warm-up time has expired, an instance is not counted toward the
        aggregated metrics of the Auto Scaling group")."""
        cached = self._names
        if cached is not None and cached[0] == warmup:
            return cached[1]
        cutoff = self.now - warmup
        v = frozenset([m.name for t, _, m in self._serving if t is None or t <= cutoff])
        self._names = (warmup, v)
        return v
