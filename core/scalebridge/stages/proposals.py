"""Per-signal proposals in exact arithmetic: ``ceil(N × value / target)`` and its relatives.

GCE: "An autoscaler handles multiple signals by calculating the recommended
number of VMs for each signal" (https://cloud.google.com/compute/docs/autoscaler/multiple-signals),
and "the autoscaler rounds up" the number of VMs a utilization target needs
(https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions).
The same shapes serve the neutral semantics and AWS target tracking:

==========================  ============================================  =========================
signal                      proposal                                      function
==========================  ============================================  =========================
per-member utilization      ``ceil(N × avg(usage_i / request_i × 100)     :func:`average_proposal`
  (CPU, memory)               / target%)``                                  (``resource=``)
per-member gauge/rate       ``ceil(N × avg(value_i) / target)``           :func:`average_proposal`
load balancing (per VM)     ``ceil(N × avg(percent_i) / target%)``        :func:`average_proposal`
group total vs. a total     ``ceil(N × total / target)``                  :func:`total_proposal`
  target (LB group value)
per-group metric with       ``ceil(Σ values / assignment)``               :func:`assignment_proposal`
  single-instance assignment
cumulative counter          Δvalue / Δtime per member, then as a gauge    :func:`counter_rates`
==========================  ============================================  =========================

All arithmetic is exact: inputs go through :func:`scalebridge.units.exact`
(``0.29`` is 29/100, not the binary double) and ratios stay integer
numerator/denominator pairs, so ``ceil(3 × 0.8 / 0.8)`` is 3, where float64
makes it 4 (3.0000000000000004).

Initializing members (AWS "warming", GCE's initialization period) are a
*parameter*: the caller computes them once with :func:`initializing_members`
and says how to treat them with ``ignore_initializing``:

- ``"scale_out"`` (GCE): their samples are left out of the average only when
  deciding to scale out — the settled members' average decides whether the
  signal scales out; if it does not, the average over every member with data
  decides the scale-in, capped at ``N`` (initializing data never causes a
  scale-out);
- ``"always"`` (AWS target tracking): their samples are always left out; the
  caller passes the ``N`` it scales from (its in-service, non-warming count);
- ``"never"``: every sample counts.

Hot path: a simulator calls these 172,800 times a run, so parsed numbers are
cached and sums are kept as integer fractions (no :class:`~fractions.Fraction`
arithmetic per member).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import gcd
from typing import TYPE_CHECKING, Collection, Iterable, Literal, Mapping, Optional, Sequence

from .. import constants as C
from ..errors import RequestError
from ..units import decimal_pair, exact, milli_value, none_negative

if TYPE_CHECKING:
    from ..policy import Metric

__all__ = [
    "Signal", "signal_proposal", "PER_INSTANCE",
    "Proposal", "ProposalError", "IgnoreInitializing", "exact_pair", "ceil_div", "ceil_ratio",
    "initializing_members", "average_proposal", "total_proposal", "group_total", "assignment_proposal",
    "counter_rates", "number", "default_utilization", "check_utilization_targets",
]

IgnoreInitializing = Literal["scale_out", "always", "never"]


class ProposalError(Exception):
    """A signal that cannot give a proposal; the message goes to ``response.metrics[i].error``."""


@dataclass(slots=True)
class Proposal:
    """One signal's raw proposal (before combining, stabilizing and bounding).

    ``num/den`` is the exact usage ratio the proposal was computed from
    (``value / target``; for :func:`assignment_proposal` the needed count
    ``total / assignment``), kept as integers so a caller can apply a
    tolerance band without float error (:meth:`within`)."""
    replicas: int
    num: int
    den: int
    value: object = None                 # JSON number: the average per member, or the total
    utilization: Optional[int] = None    # integer percent (floor) for Utilization targets
    excluded: int = 0                    # members whose samples were left out (initializing)
    members: Optional[int] = None        # members the average was taken over (per-member signals)

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.num, self.den)

    def within(self, scale_down: object, scale_up: object) -> bool:
        """``1 - scale_down <= ratio <= 1 + scale_up`` exactly (tolerances as protocol numbers)."""
        dn, dd = exact_pair(scale_down)
        un, ud = exact_pair(scale_up)
        n, d = self.num, self.den
        # (dd - dn)/dd <= n/d  and  n/d <= (ud + un)/ud
        return (dd - dn) * d <= n * dd and n * ud <= (ud + un) * d


# ----------------------------------------------------------------------------- exact numbers


@lru_cache(maxsize=65536)
def _pair_cached(value: object) -> tuple[int, int]:
    if type(value) is float:
        return decimal_pair(value)
    q = exact(value)
    return q.numerator, q.denominator


def exact_pair(value: object) -> tuple[int, int]:
    """``(numerator, denominator)`` of a protocol number or quantity, exactly."""
    if type(value) is int:
        return value, 1
    return _pair_cached(value)


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for integers, ``b > 0``."""
    return -((-a) // b)


def ceil_ratio(n: int, value: object, target: object) -> int:
    """``ceil(n × value / target)`` exactly, for protocol numbers or quantities."""
    vn, vd = exact_pair(value)
    tn, td = exact_pair(target)
    return ceil_div(n * vn * td, vd * tn)


def number(num: int, den: int) -> object:
    """An exact ``num/den`` as JSON writes it: an int when whole, else the nearest float."""
    if num % den == 0:
        return num // den
    return num / den   # int true division rounds correctly


# ----------------------------------------------------------------------------- members


def not_running(members: Optional[Iterable]) -> int:
    """Members not yet running (Pending, or ``ready: false``), counted with ``count``:
    requested, serving no load yet."""
    if not members:
        return 0
    n = 0
    for m in members:
        if m.phase == "Pending" or m.ready is False:
            n += m.count
    return n


def initializing_members(members: Optional[Iterable], now: float, period: float) -> frozenset:
    """Names of members younger than ``period`` seconds, measured from
    ``ready_transition_time``, else ``start_time`` (a null time is the distant
    past: never initializing). GCE: "the autoscaler ignores data from VMs that
    are still initializing" (autoscalingPolicy.coolDownPeriodSec,
    https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers)."""
    if not members or period <= 0:
        return frozenset()
    cutoff = now - period
    out = []
    for m in members:
        t = m.ready_transition_time
        if t is None:
            t = m.start_time
        if t is not None and t > cutoff:
            out.append(m.name)
    return frozenset(out)


class _Acc:
    """A running exact sum ``num/den`` (integers; lcm denominators) and a member count."""
    __slots__ = ("num", "den", "n")

    def __init__(self) -> None:
        self.num, self.den, self.n = 0, 1, 0

    def add(self, vn: int, vd: int, count: int) -> None:
        den = self.den
        if vd == den:
            self.num += vn * count
        else:
            g = gcd(den, vd)
            lcm = den // g * vd
            self.num = self.num * (lcm // den) + vn * count * (lcm // vd)
            self.den = lcm
        self.n += count


class _Sums:
    """Exact sums over the members a proposal uses: raw values ``raw_num/raw_den``,
    percent of request ``pct_num/pct_den`` (``resource`` targets; else the raw
    values), the member count ``n`` and the members left out (``excluded``)."""
    __slots__ = ("raw_num", "raw_den", "pct_num", "pct_den", "n", "excluded")


def negative_usage(resource: str, member: str, value: object) -> str:
    """The error of a negative usage sample: an impossible observation (resource usage is
    a count of cores or bytes), so the metric errors as a missing one does rather than
    drive a decision."""
    return f"invalid observation: negative {resource} usage {value!r} for member {member}"


def invalid_usage(samples: Optional[Mapping[str, object]], series: Optional[Mapping[str, Sequence]],
                  members: Optional[Sequence], resource: str) -> Optional[str]:
    """Why a resource metric's observation cannot be used (None: it can): a member
    whose request for ``resource`` is not greater than 0 (utilization is usage over
    request), or a negative usage sample, latest or in a series."""
    seen = None   # members mostly carry equal requests: one greater than 0 is looked at once
    for m in members or ():
        r = m.requests
        if r is None:
            continue
        r = r.get(resource)
        if r is None or r == seen:   # equal quantities: equal values, both above 0
            continue
        # milli_value (cached) rounds up to a milli-unit: above 0 exactly when the value is
        if (r if type(r) is int else milli_value(r)) <= 0:
            return f"request for {resource} on member {m.name} must be greater than 0"
        seen = r
    if samples and not none_negative(samples.values()):   # the common case: no value can be negative
        for name, v in samples.items():
            if v is not None and exact(v) < 0:
                return negative_usage(resource, name, v)
    if series:
        for name, pts in series.items():
            for _, v in pts:
                if v is not None and v < 0:
                    return negative_usage(resource, name, v)
    return None


def _sums(samples: Mapping[str, object], members: Optional[Sequence], resource: Optional[str],
          skip: Collection[str]) -> _Sums:
    """One pass over the members with a sample (``count`` weighs; without
    ``members`` every sample is one member), leaving out the names in ``skip``.
    Percent of request is computed from the raw sum when every member has the
    same request (the common case), member by member otherwise."""
    num, den, n, excluded = 0, 1, 0, 0
    req0 = None
    uniform = True
    pair = _pair_cached
    if members is None:
        if resource is not None:
            raise ProposalError(f"missing request for {resource}: utilization needs "
                                f"observations.members[].requests.{resource}")
        for name, v in samples.items():
            if v is None:
                continue
            if skip and name in skip:
                excluded += 1
                continue
            if type(v) is int:
                vn, vd = v, 1
            else:
                vn, vd = pair(v)
            if vd == den:
                num += vn
            else:
                g = gcd(den, vd)
                lcm = den // g * vd
                num = num * (lcm // den) + vn * (lcm // vd)
                den = lcm
            n += 1
    else:
        get = samples.get
        last_v = last_pair = None   # members often share one sample object (and one request)
        for m in members:
            name = m.name
            v = get(name)
            if v is None:
                continue
            c = m.count
            if skip and name in skip:
                excluded += c
                continue
            if v is last_v:
                vn, vd = last_pair
            elif type(v) is int:
                vn, vd = v, 1
            else:
                vn, vd = last_pair = pair(v)
                last_v = v
            if vd == den:
                num += vn * c
            else:
                g = gcd(den, vd)
                lcm = den // g * vd
                num = num * (lcm // den) + vn * c * (lcm // vd)
                den = lcm
            n += c
            if resource is not None:
                if vn < 0:
                    raise ProposalError(negative_usage(resource, name, v))
                reqs = m.requests
                r = reqs.get(resource) if reqs else None
                if r is None:
                    raise ProposalError(f"missing request for {resource} on member {name}")
                if req0 is None:
                    req0 = r
                elif uniform and r != req0:
                    uniform = False
    out = _Sums()
    out.raw_num, out.raw_den, out.n, out.excluded = num, den, n, excluded
    if resource is None or n == 0:
        out.pct_num, out.pct_den = num, den
        return out
    if uniform:
        rn, rd = exact_pair(req0)
        if rn <= 0:
            raise ProposalError(f"request for {resource} must be greater than 0")
        out.pct_num, out.pct_den = num * rd * 100, den * rn
        return out
    acc = _Acc()
    for m in members:  # type: ignore[union-attr]
        v = samples.get(m.name)
        if v is None or (skip and m.name in skip):
            continue
        vn, vd = exact_pair(v)
        rn, rd = exact_pair(m.requests[resource])
        if rn <= 0:
            raise ProposalError(f"request for {resource} on member {m.name} must be greater than 0")
        acc.add(vn * rd * 100, vd * rn, m.count)
    out.pct_num, out.pct_den = acc.num, acc.den
    return out


# ----------------------------------------------------------------------------- proposals


def _propose(n: int, s: _Sums, tn: int, td: int, utilization: bool) -> Proposal:
    # ratio = average percent (or value) / target = (pct_num / (pct_den × count)) / (tn / td)
    num, den = s.pct_num * td, s.pct_den * s.n * tn
    g = gcd(num, den)
    if g > 1:
        num, den = num // g, den // g
    util = (s.pct_num // (s.pct_den * s.n)) if utilization else None
    replicas = -((-n * num) // den)
    return Proposal(replicas if replicas > 0 else 0, num, den, number(s.raw_num, s.raw_den * s.n), util,
                    members=s.n)


def average_proposal(n: int, samples: Optional[Mapping[str, object]], target: object, *,
                     members: Optional[Sequence] = None, resource: Optional[str] = None,
                     utilization: bool = False, initializing: Collection[str] = frozenset(),
                     ignore_initializing: IgnoreInitializing = "scale_out",
                     what: str = "metric") -> Proposal:
    """``ceil(n × avg / target)`` over per-member samples (never below 0).

    - ``samples``: member name → value (a gauge, a rate from :func:`counter_rates`,
      or a per-member percentage); ``None`` values and members without a sample
      are left out of the average (the formula scales the whole group, ``n``).
    - ``target``: the per-member target in the samples' unit; with ``resource``
      the target is a percentage of each member's ``requests[resource]``
      (samples are usage: utilization_i = usage_i / request_i × 100).
    - ``utilization``: report ``Proposal.utilization`` (integer percent, floor
      of the averaged percentage).
    - ``members``: the members (``observations.members``), for ``count``,
      ``requests`` and restricting samples to known members; None: every sample
      is one member.
    - ``initializing`` / ``ignore_initializing``: see the module docstring.
    - ``what``: the signal's name, for error messages.

    ``Proposal.value`` is the average raw sample per member (usage for
    ``resource`` targets) over the members the proposal used; ``excluded``
    counts the initializing members whose samples it left out."""
    if not samples:
        raise ProposalError(f"no samples for {what}")
    tn, td = exact_pair(target)
    if ignore_initializing == "scale_out" and members is not None:
        # GCE: "the number of VMs required to serve the observed load". VMs requested but
        # not yet running carry none of it: a scale-out multiplies the running VMs only,
        # or each sync would multiply the VMs still starting too and compound (4 -> 6 ->
        # 9 -> 14 ... while they boot). Running-but-initializing VMs stay counted (G-GAP-1).
        starting = not_running(members)
        if starting:
            kept = _sums(samples, members, resource, initializing or ())
            if kept.n:
                p = _propose(n - starting, kept, tn, td, utilization)
                if p.replicas > n:
                    p.excluded = kept.excluded
                    return p
            every = _sums(samples, members, resource, ())
            if every.n == 0:
                raise ProposalError(f"no samples for {what} matched known members")
            p = _propose(n, every, tn, td, utilization)
            if p.replicas > n:
                p.replicas = n
            return p
    if initializing and ignore_initializing != "never":
        kept = _sums(samples, members, resource, initializing)
        if kept.excluded:
            if ignore_initializing == "always":
                if kept.n == 0:
                    raise ProposalError(f"no samples for {what} from members past their initialization period")
                p = _propose(n, kept, tn, td, utilization)
                p.excluded = kept.excluded
                return p
            # "scale_out" (GCE): the settled members decide a scale-out …
            if kept.n:
                p = _propose(n, kept, tn, td, utilization)
                if p.replicas > n:
                    p.excluded = kept.excluded
                    return p
            # … every member with data a scale-in, never above n
            every = _sums(samples, members, resource, ())
            p = _propose(n, every, tn, td, utilization)
            if p.replicas > n:
                p.replicas = n
            return p
    else:
        kept = _sums(samples, members, resource, ())
    if kept.n == 0:
        raise ProposalError(f"no samples for {what} matched known members" if members is not None
                            else f"no samples for {what}")
    return _propose(n, kept, tn, td, utilization)


def total_proposal(n: int, total: object, target: object, *, utilization: bool = False) -> Proposal:
    """``ceil(n × total / target)``: a group-level value against a group-level
    target — a load balancer's serving-capacity utilization for the whole group
    (GCE ``loadBalancingUtilization``), a Kubernetes ``Value`` target."""
    vn, vd = exact_pair(total)
    tn, td = exact_pair(target)
    num, den = vn * td, vd * tn
    g = gcd(num, den)
    if g > 1:
        num, den = num // g, den // g
    return Proposal(max(0, ceil_div(n * num, den)), num, den, number(vn, vd),
                    (vn // vd) if utilization else None)


def _sum_values(values: Iterable[object]) -> "_Acc":
    acc = _Acc()
    for v in values:
        if v is None:
            continue
        vn, vd = exact_pair(v)
        acc.add(vn, vd, 1)
    if acc.n == 0:
        raise ProposalError("no values")
    return acc


def group_total(values: Iterable[object]) -> Fraction | int:
    """The exact sum of a group's values (``None`` skipped; several time series
    "the autoscaler will sum"). Raises :class:`ProposalError` when there is none."""
    acc = _sum_values(values)
    return acc.num if acc.den == 1 else Fraction(acc.num, acc.den)


def assignment_proposal(values: Iterable[object], assignment: object) -> Proposal:
    """``ceil(Σ values / assignment)``: a per-group metric with a single-instance
    assignment — "an amount assigned for a single instance of the scaled group.
    Autoscaler keeps the number of instances proportional to the value of this
    metric"; several time series are summed
    (AutoscalingPolicyCustomMetricUtilization.singleInstanceAssignment,
    https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers).
    Can propose 0 (scale to zero). ``num/den`` is the needed count itself."""
    acc = _sum_values(values)
    an, ad = exact_pair(assignment)
    num, den = acc.num * ad, acc.den * an
    g = gcd(num, den)
    if g > 1:
        num, den = num // g, den // g
    return Proposal(max(0, ceil_div(num, den)), num, den, number(acc.num, acc.den))


def counter_rates(member_series: Mapping[str, Sequence], per: str = "per_second",
                  until: Optional[float] = None) -> dict[str, Fraction]:
    """Per-member rate of a cumulative counter: Δvalue / Δtime between the first
    and the last point at or before ``until`` (×60 ``per_minute``). A decrease
    is a counter reset: the increment after it is the new value (as Prometheus
    ``rate`` reads resets). Members with fewer than two usable points have no
    rate. GCE ``DELTA_PER_SECOND`` / ``DELTA_PER_MINUTE``: "the rate of growth
    per second / per minute" (AutoscalingPolicyCustomMetricUtilization.utilizationTargetType)."""
    scale = 60 if per == "per_minute" else 1
    out: dict[str, Fraction] = {}
    for name, points in member_series.items():
        pts = [(t, v) for t, v in points if v is not None and (until is None or t <= until)]
        if len(pts) < 2:
            continue
        pts.sort(key=lambda p: p[0])
        t0, t1 = pts[0][0], pts[-1][0]
        if t1 <= t0:
            continue
        inc = Fraction(0)
        prev = exact(pts[0][1])
        for _, v in pts[1:]:
            cur = exact(v)
            inc += cur - prev if cur >= prev else cur
            prev = cur
        out[name] = inc * scale / (exact(t1) - exact(t0))
    return out


# ----------------------------------------------------------------------------- compiled signals

_AVERAGE, _LB, _GROUP = 0, 1, 2   # Signal.kind
PER_INSTANCE = frozenset(("resource", "container_resource", "pods", "load_balancing"))


def default_utilization(m: "Metric") -> Optional[float]:
    """The Utilization target (percent) GCE uses when a policy states none:
    REST AutoscalingPolicyCpuUtilization.utilizationTarget "If not specified,
    the default is 0.6"; AutoscalingPolicyLoadBalancingUtilization.utilizationTarget
    "If not defined, the default is 0.8". None for any other metric."""
    if m.target.average_utilization is not None:
        return m.target.average_utilization
    if m.type == "load_balancing":
        return round(C.GCE_DEFAULT_LB_UTILIZATION * 100)
    if m.type == "resource" and m.name == "cpu":
        return round(C.GCE_DEFAULT_CPU_UTILIZATION * 100)
    return None


def check_utilization_targets(policy, semantics: str) -> None:
    """Refuse a Utilization target without a value that GCE has no default for."""
    from ..policy import unstated_utilization
    for i in unstated_utilization(policy):
        m = policy.metrics[i]
        if default_utilization(m) is None:
            raise RequestError(f"$.policy.metrics[{i}].target.average_utilization",
                               f"required by the {semantics} semantics for the {m.type} metric {m.name!r}: "
                               "GCE's defaults are for CPU (cpuUtilization 0.6) and load balancing (0.8) only")


class Signal:
    """One enabled target metric, compiled once per policy: which proposal it
    makes and against what target."""
    __slots__ = ("metric", "name", "type", "kind", "target", "resource", "utilization", "init", "rate")

    def __init__(self, m: Metric, policy_init: float):
        t = m.target
        self.metric, self.name, self.type = m, m.name, m.type
        self.rate = t.rate
        self.resource: Optional[str] = None
        self.utilization = t.type == "Utilization"
        if m.type == "load_balancing":
            self.kind, self.target = _LB, default_utilization(m)
        elif m.type in ("external", "object"):
            self.kind = _GROUP
            self.target = t.average_value if t.type == "AverageValue" else t.value
        else:  # resource, container_resource, pods: per-instance
            self.kind = _AVERAGE
            if self.utilization:
                self.target, self.resource = default_utilization(m), m.name
            else:
                self.target = t.average_value
        self.init = m.initialization_period_seconds if m.initialization_period_seconds is not None \
            else policy_init


def signal_proposal(ctx, spec: Signal, initializing: dict,
                    ignore_initializing: IgnoreInitializing = "scale_out") -> Proposal:
    """One target metric's proposal from ``ctx.observations`` (GCE's signals; the
    neutral semantics' target metrics): per-member averages, load balancing,
    group totals and single-instance assignments, gauges or counter rates.
    ``initializing`` caches :func:`initializing_members` per period."""
    obs = ctx.obs.metrics.get(spec.name)
    if obs is None:
        raise ProposalError(f"no data for metric {spec.name} (observations.metrics.{spec.name})")
    n = ctx.current
    if spec.kind == _GROUP:
        if obs.values:
            values = obs.values
        elif obs.value is not None:
            values = (obs.value,)
        else:
            raise ProposalError(f"no value for metric {spec.name}: give observations.metrics.{spec.name}"
                                ".values (summed) or .value")
        if spec.metric.target.type == "Value":   # G-GAP-11: proportional to a group total
            return total_proposal(n, group_total(values), spec.target)
        return assignment_proposal(values, spec.target)
    if spec.kind == _LB and obs.value is not None and not obs.members:
        return total_proposal(n, obs.value, spec.target, utilization=True)
    samples = obs.members
    if spec.rate is not None:
        if not obs.member_series:
            raise ProposalError(f"metric {spec.name} is a {spec.rate.replace('_', ' ')} rate: "
                                f"observations.metrics.{spec.name}.member_series holds the counters")
        until = ctx.now - (ctx.settings.metric_delay_seconds or 0.0)
        samples = counter_rates(obs.member_series, spec.rate, until)
        if not samples:
            raise ProposalError(f"no rate for metric {spec.name}: each member needs two counter samples")
    elif not samples and obs.member_series:   # a gauge given as series: each member's latest sample
        samples = {k: pts[-1][1] for k, pts in obs.member_series.items() if pts}
    if not samples:
        raise ProposalError(f"no samples for metric {spec.name} (observations.metrics.{spec.name}.members)")
    members = ctx.obs.members
    init = initializing.get(spec.init)
    if init is None:
        init = initializing[spec.init] = initializing_members(members, ctx.now, spec.init)
    return average_proposal(n, samples, spec.target, members=members, resource=spec.resource,
                            utilization=spec.utilization, initializing=init,
                            ignore_initializing=ignore_initializing, what=spec.name)
