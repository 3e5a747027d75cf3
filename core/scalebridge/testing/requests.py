"""Builders for decision requests, their members and their observations.

What the built-in semantics are tested with, for plugin authors to test theirs
the same way. Every builder returns plain protocol JSON (dicts and lists), so a
test can change any field before handing it to :func:`scalebridge.decide` or to
``scalebridge decide`` on standard input.

Members follow the protocol's member shape (``name``, ``phase``, ``ready``,
``start_time``, ``ready_transition_time``, ``requests``), which is the shape of
a Kubernetes Pod's status as the HPA reads it
(https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details),
of a Compute Engine VM in a managed instance group, and of an EC2 instance in an
Auto Scaling group.

    from scalebridge import decide
    from scalebridge.testing.requests import cpu_request

    def test_my_semantics_doubles_on_double_load():
        r = decide(cpu_request(4, "1", semantics="my-semantics"))   # 100 % of 1 core against 50 %, as kubernetes
        assert r["desired_replicas"] == 8
"""
from __future__ import annotations

import copy
from typing import Any, Iterable, Optional

from ..engine import Decider, decide
from ..protocol import Member, Observations, parse_observations

__all__ = [
    "NOW", "GCE_NOW", "AZURE_NOW",
    "cpu_policy",
    "pods", "member_models", "cpu_request", "neutral_request", "neutral_rule", "neutral_out_rule", "neutral_in_rule", "neutral_rules_request", "series_points", "proposal_request",
    "vms", "per_vm", "cpu", "queue", "gce_request",
    "instances", "aws_request", "AWS_STEP_OUT", "AWS_STEP_IN", "AWS_SIMPLE_OUT", "AWS_TT_CPU",
    "aws_step_policy", "aws_warming_group",
    "azure_rule", "azure_series", "azure_request",
    "load_balancing", "average_value", "pods_average", "gce_four_signal_example",
    "vm_cpu_observations", "queue_observation", "queue_observations", "GceChain", "AzureRun",
]

NOW = 1767225600.0
"""2026-01-01T00:00:00Z, a Thursday: the default decision time."""

GCE_NOW = 1768410000.0
"""Wednesday 2026-01-14 12:00 America/New_York (17:00 UTC): inside a weekday 9-to-5 schedule."""

AZURE_NOW = 1768384800.0
"""Wednesday 2026-01-14 10:00 UTC (02:00 Pacific Standard Time)."""

MINUTE = 60.0


# ----------------------------------------------------------------------------- members


def pods(n: int, cpu_request: Optional[str] = "1", ready: Optional[bool] = True, start_offset: float = -3600,
         transition_offset: float = -3500, prefix: str = "web", *, now: float = NOW) -> list[dict]:
    """``n`` running members named ``{prefix}-{i}``, started and ready well before ``now``,
    each requesting ``cpu_request`` cores (``None``: no request)."""
    return [{"name": f"{prefix}-{i}", "phase": "Running", "ready": ready,
             "start_time": now + start_offset, "ready_transition_time": now + transition_offset,
             "requests": None if cpu_request is None else {"cpu": cpu_request}} for i in range(n)]


def vms(n: int, *, age: float = 3600.0, now: float = GCE_NOW, prefix: str = "vm") -> list[dict]:
    """``n`` running VMs of one vCPU each, ready for ``age`` seconds at ``now``."""
    return [{"name": f"{prefix}-{i}", "phase": "Running", "ready": True,
             "ready_transition_time": now - age, "start_time": now - age, "requests": {"cpu": 1}}
            for i in range(n)]


def instances(n: int, *, age: float = 3600.0, prefix: str = "i", now: float = NOW, **fields: Any) -> list[dict]:
    """``n`` InService instances, launched ``age`` + 60 s before ``now`` and in service for ``age`` s."""
    return [{"name": f"{prefix}-{i}", "phase": "Running", "ready": True, "start_time": now - age - 60,
             "ready_transition_time": now - age, **fields} for i in range(n)]


def member_models(n: int, requests: Any = "1", prefix: str = "vm", **fields: Any) -> list[Member]:
    """``n`` :class:`~scalebridge.protocol.Member` models requesting ``requests`` CPU each
    (``None``: no request), for testing stages on their own."""
    return [Member(name=f"{prefix}-{i}", requests={"cpu": requests} if requests is not None else None, **fields)
            for i in range(n)]


def per_vm(members: Iterable[dict], value: Any) -> dict:
    """The same sample for every member: ``{name: value}``."""
    return {m["name"]: value for m in members}


# ----------------------------------------------------------------------------- metrics


def cpu(target: float) -> dict:
    """A CPU utilization target of ``target`` percent (HPA ``averageUtilization``,
    GCE ``cpuUtilization.utilizationTarget`` × 100)."""
    return {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": target}}


def queue(assignment: float = 10) -> dict:
    """An external metric ``queue`` with a per-member target of ``assignment``
    (GCE ``singleInstanceAssignment``, HPA external ``AverageValue``)."""
    return {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": assignment}}


def load_balancing(target: float = 80) -> dict:
    """A load-balancing serving-capacity target of ``target`` percent
    (GCE ``loadBalancingUtilization.utilizationTarget`` × 100)."""
    return {"type": "load_balancing", "name": "lb", "target": {"type": "Utilization", "average_utilization": target}}


def average_value(name: str = "queue", assignment: float = 10) -> dict:
    """An external metric ``name`` with a per-member target of ``assignment``."""
    return {"type": "external", "name": name, "target": {"type": "AverageValue", "average_value": assignment}}


def pods_average(name: str = "conn", target: float = 100, rate: Optional[str] = None) -> dict:
    """A per-member (pods) metric ``name`` with an average target; ``rate`` (``"second"``,
    ``"minute"``) reads the samples as a counter's rate of growth
    (GCE ``utilizationTargetType`` DELTA_PER_SECOND / DELTA_PER_MINUTE)."""
    t: dict = {"type": "AverageValue", "average_value": target}
    if rate is not None:
        t["rate"] = rate
    return {"type": "pods", "name": name, "target": t}


def cpu_policy(target: float = 60, **fields: Any) -> dict:
    """A policy named ``cpu`` with one CPU utilization target (min 1, max 200), as a
    simulation or a ``Decider`` takes it; ``fields`` are added to it."""
    p = {"name": "cpu", "min_replicas": 1, "max_replicas": 200, "metrics": [cpu(target)]}
    p.update(fields)
    return p


# ----------------------------------------------------------------------------- requests


def cpu_request(current: int, usage: Any, *, policy: Optional[dict] = None, semantics: str = "kubernetes",
                state: Optional[dict] = None, settings: Optional[dict] = None,
                members: Optional[list] = None) -> dict:
    """A request with one CPU utilization metric (target 50 %, min 1, max 100) on ``current`` pods;
    ``usage`` is one CPU quantity for every member or a list, one per member."""
    members = members if members is not None else pods(current)
    usages = usage if isinstance(usage, list) else [usage] * len(members)
    pol = {"min_replicas": 1, "max_replicas": 100, "metrics": [cpu(50)]}
    pol.update(policy or {})
    req = {"semantics": semantics, "now": NOW, "current_replicas": current, "policy": pol,
           "observations": {"members": members,
                            "metrics": {"cpu": {"members": {m["name"]: u for m, u in zip(members, usages)},
                                                "timestamp": NOW - 10, "window": 30}}}}
    if state is not None:
        req["state"] = state
    if settings is not None:
        req["settings"] = settings
    return req


def neutral_request(current: int, usage: Any, **fields: Any) -> dict:
    """:func:`cpu_request` under the neutral ``scalebridge`` semantics, with an empty history."""
    fields.setdefault("state", {"recommendations": []})
    return cpu_request(current, usage, semantics="scalebridge", **fields)


def neutral_rule(operator: str, direction: str, threshold: Any, value: Any, cooldown: Any = None,
                 metric: str = "q", **action: Any) -> dict:
    """A threshold rule: ``metric`` compared by ``operator`` with ``threshold`` over 2 minutes
    changes the count by ``value`` in ``direction`` (``ChangeCount``; any ``action`` field,
    ``type`` included, goes in its action, ``cooldown`` as ``cooldown_seconds``)."""
    a = {"direction": direction, "type": "ChangeCount", "value": value, **action}
    if cooldown is not None:
        a["cooldown_seconds"] = cooldown
    return {"metric": metric, "operator": operator, "threshold": threshold, "time_window_seconds": 120,
            "action": a}


def neutral_out_rule(threshold: Any = 70, value: Any = 2, cooldown: Any = None, metric: str = "q",
                     **action: Any) -> dict:
    """A scale-out rule: ``metric`` above ``threshold`` over 2 minutes adds ``value``."""
    return neutral_rule("GreaterThan", "Increase", threshold, value, cooldown, metric, **action)


def neutral_in_rule(threshold: Any = 30, value: Any = 1, cooldown: Any = None, metric: str = "q",
                    **action: Any) -> dict:
    """A scale-in rule: ``metric`` below ``threshold`` over 2 minutes removes ``value``."""
    return neutral_rule("LessThan", "Decrease", threshold, value, cooldown, metric, **action)


def neutral_rules_request(current: int, rules: list, metrics: dict, policy: Optional[dict] = None,
                          state: Optional[dict] = None, now: float = NOW) -> dict:
    """A ``scalebridge`` request with threshold ``rules`` only (min 1, max 20)."""
    pol = {"min_replicas": 1, "max_replicas": 20, "rules": rules}
    pol.update(policy or {})
    return {"semantics": "scalebridge", "now": now, "current_replicas": current, "policy": pol,
            "observations": {"metrics": metrics},
            "state": state if state is not None else {"recommendations": []}}


def series_points(values: list, grain: float = 60, end: float = NOW) -> list[list]:
    """``[[time, value], ...]``: one point per ``grain`` seconds, the last at ``end``."""
    return [[end - grain * (len(values) - 1 - i), v] for i, v in enumerate(values)]


def proposal_request(now: float, current: int, proposal: int, behavior: Optional[dict], state: Optional[dict] = None,
                     min_r: int = 1, max_r: int = 100, semantics: str = "kubernetes") -> dict:
    """A request whose metrics are replaced by a ready ``proposal`` (the protocol's
    ``observations.proposal``), so only stabilization, rate limits and bounds act."""
    req = {"semantics": semantics, "now": now, "current_replicas": current,
           "policy": {"min_replicas": min_r, "max_replicas": max_r, "behavior": behavior},
           "observations": {"proposal": proposal}}
    if state is not None:
        req["state"] = state
    return req


def gce_request(current: int, metrics: list[dict], observations: dict, *, now: float = GCE_NOW,
                policy: Optional[dict] = None, state: Optional[dict] = None) -> dict:
    """A gce request (min 1, max 20) with an empty recommendation history unless ``state`` is given."""
    pol = {"min_replicas": 1, "max_replicas": 20, "metrics": metrics}
    pol.update(policy or {})
    return {"semantics": "gce", "now": now, "current_replicas": current, "policy": pol,
            "observations": observations, "state": {"recommendations": []} if state is None else state}


def gce_four_signal_example(now: float = GCE_NOW) -> dict:
    """The example of https://cloud.google.com/compute/docs/autoscaler/multiple-signals:
    cpuUtilization 0.8, loadBalancingUtilization 0.6, metric1 target 1000, metric2 target 2000,
    two schedules, on "a MIG that contains 10 VMs" measuring 0.5, 0.4, 1100 and 2700."""
    members = vms(10, now=now)
    return gce_request(10, [
        cpu(80),
        load_balancing(60),
        {"type": "pods", "name": "metric1", "target": {"type": "AverageValue", "average_value": 1000}},
        {"type": "pods", "name": "metric2", "target": {"type": "AverageValue", "average_value": 2000}},
    ], {"members": members,
        "metrics": {"cpu": {"members": per_vm(members, 0.5)}, "lb": {"value": 40},
                    "metric1": {"members": per_vm(members, 1100)},
                    "metric2": {"members": per_vm(members, 2700)}}},
        now=now,
        policy={"schedules": [
            {"name": "weekend", "schedule": "0 0 * * SAT,SUN", "time_zone": "America/New_York",
             "duration_seconds": 86400, "min_required_replicas": 6},
            {"name": "weekday", "schedule": "0 9 * * MON-FRI", "time_zone": "America/New_York",
             "duration_seconds": 28800, "min_required_replicas": 15}]})


AWS_STEP_OUT = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60,
                "operator": "GreaterThanOrEqual", "threshold": 50, "adjustment_type": "PercentChangeInCapacity",
                "steps": [{"lower": 0, "upper": 10, "adjustment": 0}, {"lower": 10, "upper": 20, "adjustment": 10},
                          {"lower": 20, "upper": None, "adjustment": 30}]}
"""The step scale-out policy of the EC2 Auto Scaling guide's step-adjustment example
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html#as-scaling-steps)."""

AWS_STEP_IN = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60,
               "operator": "LessThanOrEqual", "threshold": 50, "adjustment_type": "PercentChangeInCapacity",
               "steps": [{"lower": -10, "upper": 0, "adjustment": 0}, {"lower": -20, "upper": -10, "adjustment": -10},
                         {"lower": None, "upper": -20, "adjustment": -30}]}
"""The matching step scale-in policy of the same example."""

AWS_SIMPLE_OUT = {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": "GreaterThan",
                  "threshold": 70, "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}
"""A simple scaling policy: add 2 instances when CPU is above 70 %."""

AWS_TT_CPU = cpu(50)
"""A target tracking policy on average CPU utilization at 50 %."""


def aws_step_policy(operator: str, threshold: Any, adjustment_type: str, steps: list[dict], **fields: Any) -> dict:
    """A step scaling policy on a 1-minute ``cpu`` alarm
    (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-simple-step.html)."""
    return {"metric": "cpu", "time_grain_seconds": 60, "time_window_seconds": 60, "operator": operator,
            "threshold": threshold, "adjustment_type": adjustment_type, "steps": steps, **fields}


def aws_warming_group() -> list[dict]:
    """10 instances in service for an hour and one (``new-0``) for 200 s."""
    return instances(10) + instances(1, age=200, prefix="new")


def aws_request(current: int, cpu: Any, *, rules: Iterable[dict] = (), metrics: Optional[list] = None,
                members: Optional[list] = None, status: Optional[int] = None, state: Optional[dict] = None,
                settings: Optional[dict] = None, now: float = NOW, **policy: Any) -> dict:
    """An aws request; ``cpu`` is one value (a steady series over the last 20 minutes) or a series."""
    series = cpu if isinstance(cpu, list) else [[now - 60 * j, cpu] for j in range(20, -1, -1)]
    pol = {"min_replicas": 1, "max_replicas": 100, "rules": list(rules), **policy}
    if metrics is not None:
        pol["metrics"] = metrics
    obs: dict = {"status_replicas": current if status is None else status, "metrics": {"cpu": {"series": series}}}
    if members is not None:
        obs["members"] = members
    req = {"semantics": "aws", "now": now, "current_replicas": current, "policy": pol, "observations": obs}
    if state is not None:
        req["state"] = state
    if settings is not None:
        req["settings"] = settings
    return req


def azure_rule(metric: str, operator: str, threshold: Any, direction: str, value: Any = 1, *,
               type: str = "ChangeCount", cooldown: Any = 300, window: Any = 300, aggregation: str = "Average",
               statistic: str = "Average", divide: bool = False, **extra: Any) -> dict:
    """An autoscale rule (metricTrigger + scaleAction) on a 1-minute grain
    (https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings)."""
    r = {"metric": metric, "statistic": statistic, "time_grain_seconds": 60, "time_window_seconds": window,
         "time_aggregation": aggregation, "operator": operator, "threshold": threshold,
         "divide_per_instance": divide,
         "action": {"direction": direction, "type": type, "value": value, "cooldown_seconds": cooldown}}
    r.update(extra)
    return r


def azure_series(value: Any, now: float = AZURE_NOW, n: int = 5) -> dict:
    """A metric observation of one point a minute ending at ``now``: ``n`` times ``value``, or the list given."""
    values = value if isinstance(value, list) else [value] * n
    k = len(values)
    return {"series": [[now - MINUTE * (k - 1 - i), v] for i, v in enumerate(values)]}


def azure_request(current: int, rules: list, metrics: dict, *, now: float = AZURE_NOW, state: Optional[dict] = None,
                  settings: Optional[dict] = None, **policy: Any) -> dict:
    """An azure request (minimum 1, maximum 10, default 1) with ``rules`` and metric observations."""
    pol = {"min_replicas": 1, "max_replicas": 10, "default_replicas": 1, "rules": rules}
    pol.update(policy)
    req = {"semantics": "azure", "now": now, "current_replicas": current, "policy": pol,
           "observations": {"metrics": metrics}}
    if state is not None:
        req["state"] = state
    if settings is not None:
        req["settings"] = settings
    return req


# ----------------------------------------------------------------------------- observations


def vm_cpu_observations(now: float, settled: int, settled_util: float, young: int = 0, young_util: float = 0.0,
                        young_age: float = 10.0) -> dict:
    """Members and CPU samples at ``now``: ``settled`` VMs ready for an hour at ``settled_util``,
    and ``young`` VMs (named ``new-{i}``) ready for ``young_age`` seconds at ``young_util``."""
    a = vms(settled, now=now)
    b = vms(young, age=young_age, now=now, prefix="new")
    return {"members": a + b, "metrics": {"cpu": {"members": {**per_vm(a, settled_util), **per_vm(b, young_util)}}}}


def queue_observation(depth: float) -> dict:
    """The ``queue`` metric observed as one group value, ``depth``."""
    return {"metrics": {"queue": {"values": [depth]}}}


def queue_observations(depth: float) -> Observations:
    """:func:`queue_observation` as the :class:`~scalebridge.protocol.Observations` a
    :class:`~scalebridge.engine.Decider` steps with."""
    return parse_observations(queue_observation(depth))


# ----------------------------------------------------------------------------- sequences


class GceChain:
    """Chains gce ``decide`` calls the way a controller does: each response's ``state``
    (a JSON round trip) goes into the next request and ``current_replicas`` follows
    ``desired_replicas``. ``log`` keeps every response by its time since ``t0``."""

    def __init__(self, metrics: list[dict], policy: Optional[dict] = None, current: int = 4, *,
                 t0: float = GCE_NOW) -> None:
        self.metrics = metrics
        self.policy = policy or {}
        self.current = current
        self.t0 = t0
        self.state: dict = {"recommendations": []}
        self.log: dict[float, dict] = {}

    def step(self, now: float, observations: dict) -> dict:
        req = gce_request(self.current, self.metrics, observations, now=now, policy=self.policy,
                          state=copy.deepcopy(self.state))
        r = decide(req)
        self.state = r["state"]
        self.current = r["desired_replicas"]
        self.log[now - self.t0] = r
        return r


class AzureRun:
    """A :class:`scalebridge.engine.Decider` for the azure semantics carrying its state,
    fed one set of metric observations per call; the size follows each decision
    unless ``carry_out`` is false."""

    def __init__(self, policy: dict, current: int, settings: Optional[dict] = None) -> None:
        self.d = Decider(policy, "azure", settings)
        self.current = current

    def step(self, now: float, metrics: dict, carry_out: bool = True):
        dec = self.d.step(now, self.current, parse_observations({"metrics": metrics}))
        if carry_out:
            self.current = dec.desired
        return dec
