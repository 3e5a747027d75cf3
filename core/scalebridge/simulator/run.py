"""The replay loop: a load series, a fleet, one policy under one semantics.

Every tick ``k`` (time ``now = start_time + k * tick``):

1. the fleet applies what happens at ``k`` (members becoming ready, drains
   ending; :class:`~scalebridge.simulator.fleet.Fleet`);
2. on a sync tick, the simulator builds the protocol's observations — members
   with readiness and start times, metric samples, series — and calls
   :meth:`scalebridge.engine.Decider.step`, the pipeline the controller runs,
   which carries ``state`` from decision to decision; the fleet is resized to
   the decision's ``desired`` at once;
3. the tick's load is served by the ready members: utilization
   ``= load / (serving members × capacity)``, recorded for later samples.

Metrics published (only those the policy names are built; all see the ticks
that ended by ``now - lag``, averaged over the metric window; a member not yet
ready has no sample):

- ``cpu``: ``members`` — per serving member ready before the window's end
  (a member ready later has no sample yet), usage in cores against a 1-core
  request (members carry ``requests: {"cpu": 1}``): its share of the load
  over ``capacity``, rounded up to a millicore as ``Quantity.MilliValue()``
  does; ``timestamp`` (end of the window), ``window``; ``series`` — the group
  average CPU utilization in percent, one point per grain, stamped at the
  grain's end.
- ``load``: ``members`` (per serving member, in load units), ``value`` (group
  total), ``values`` (``[total]``, for external metrics), ``series`` (group
  total per grain) — except for a name a ``pods`` metric uses, whose
  ``series`` is the per-member average per grain (what CloudWatch's group
  average of a per-instance metric is).
- a ``load_balancing`` metric: under its own name, ``value`` and ``members``
  in percent of serving capacity, ``series`` as ``cpu``'s.
- any other name a policy's ``pods``/``object``/``external`` metric, rule or
  ``predictive.metric`` uses: the ``load`` observation under that name.
  Resource metrics other than ``cpu`` (memory) are not simulated.

Before tick 0 the fleet is warm: samples and series are filled as if the
first tick's load had been served by the initial members for as long as any
window looks back. ``settings.metric_delay_seconds`` is set to the lag (unless
given), so rule windows end where the published series ends.

A ``forecaster(now, history, tick_seconds)`` may be given: called on every
sync tick with the load observed so far (a read-only numpy view of the ticks
that ended by ``now - lag``), it returns a capacity forecast in replicas
(``int``), a :class:`~scalebridge.protocol.CapacityForecast`, or None; it
reaches the semantics as ``observations.forecast`` (which only acts on it when
``policy.predictive.mode`` is ``ForecastAndScale``).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np

from .. import constants as C
from ..engine import Decider
from ..predictive import trace_forecaster
from ..stages.proposals import default_utilization
from ..policy import Policy
from ..protocol import CapacityForecast, MetricObservation, Observations, Settings
from .fleet import Fleet, FleetModel
from .oracle import members_needed, oracle_ready, oracle_sizes
from .scores import Scores, compute_scores

__all__ = ["Comparison", "Forecaster", "Run", "RunResult", "bounds", "compare", "default_initial", "oracle_for",
           "published_metrics", "registered_semantics", "score_run", "simulate"]

Forecaster = Callable[[float, np.ndarray, float], Union[int, CapacityForecast, None]]
Progress = Callable[[int], None]

_PROGRESS_EVERY = 4096  # ticks between progress callbacks (a power of two)


@dataclass
class Run:
    """One replay's per-tick series and decision tallies.

    ``desired[k]``: the size set at tick ``k`` (after that tick's decision, if
    any); ``paid[k]``: members paid during tick ``k``; ``ready[k]``: members
    serving during tick ``k`` (ready, or draining)."""

    semantics: str
    policy: str
    desired: np.ndarray
    paid: np.ndarray
    ready: np.ndarray
    decisions: int
    reasons: dict[str, int]
    errors: int = 0
    first_error: Optional[str] = None
    elapsed_seconds: float = 0.0
    published: dict[str, str] = field(default_factory=dict)
    initial: Optional[int] = None       #: members at the start, before the first decision


def bounds(policy: Policy) -> tuple[int, Optional[int]]:
    """(minimum, maximum) the policy allows anywhere: its own, else the loosest
    of its profiles' (min 1 and no max when it says nothing)."""
    lo = policy.min_replicas
    hi = policy.max_replicas
    if lo is None:
        lo = min((p.capacity.minimum for p in policy.profiles), default=1)
    if hi is None and policy.profiles:
        hi = max(p.capacity.maximum for p in policy.profiles)
    return int(lo), (None if hi is None else int(hi))


def _rules(policy: Policy) -> list:
    out = list(policy.rules)
    for p in policy.profiles:
        out.extend(p.rules)
    return out


def published_metrics(policy: Policy) -> dict[str, str]:
    """Metric name → shape (``cpu``, ``load``, ``load_per_member`` or ``load_balancing``) this
    policy can name; ``cpu`` is always there (semantics default to it)."""
    out = {"cpu": "cpu"}
    for m in policy.metrics or []:
        if m.type in ("resource", "container_resource"):
            continue   # cpu is published; other resources (memory) are not simulated
        shape = {"load_balancing": "load_balancing", "pods": "load_per_member"}.get(m.type, "load")
        out.setdefault(m.name, shape)
    for r in _rules(policy):
        out.setdefault(r.metric, "load")
    if policy.predictive is not None and policy.predictive.metric:
        out.setdefault(policy.predictive.metric, "load")
    return out


def default_initial(policy: Policy, first_load: float, capacity: float) -> int:
    """Members at tick 0 when the model does not say: what the policy would hold
    for the first tick's load — ``ceil(load / (capacity × target))`` for its
    first cpu or load-balancing utilization target, ``ceil(load / target)``
    for an AverageValue target on a metric the simulator publishes as the load
    (``pods``: per member; ``object``/``external``: the total over the members),
    else ``ceil(load / capacity)``; with
    ``predictive.mode: ForecastAndScale``, at least the planner's plan before
    it knows its own error, ``ceil(load / (capacity_per_replica ×
    target_utilization))`` — within the policy's bounds."""
    need = first_load / capacity
    for m in policy.metrics or []:
        if not m.enabled:
            continue
        t = m.target
        if t.type == "Utilization" and (m.name == "cpu" or m.type == "load_balancing"):
            need = first_load / (capacity * float(default_utilization(m)) / 100)
            break
        if t.type == "AverageValue" and m.type in ("pods", "object", "external"):
            from ..units import exact
            need = first_load / float(exact(t.average_value))
            break
    spec = policy.predictive
    if spec is not None and spec.mode == "ForecastAndScale":
        per_member = float(spec.capacity_per_replica or capacity) * float(spec.target_utilization)
        need = max(need, first_load / per_member)
    size = int(members_needed(np.array([need]), 1.0)[0])
    lo, hi = bounds(policy)
    size = max(size, lo)
    return size if hi is None else min(size, hi)


def _settle_seconds(policy: Policy, settings: Settings, model: FleetModel) -> float:
    """How long a ready cohort stays a member entry of its own (its start and
    ready times matter to initialization periods) before joining the group."""
    periods = [settings.cpu_initialization_period_seconds or 300.0,
               settings.initial_readiness_delay_seconds or 30.0,
               settings.default_instance_warmup_seconds or 0.0, settings.default_cooldown_seconds or 300.0,
               policy.initialization_period_seconds or 0.0]
    periods += [m.initialization_period_seconds or 0.0 for m in policy.metrics or []]
    return max(periods) + model.startup.minimum + (model.lag_ticks + model.window_ticks) * model.tick_seconds


def _retention_points(policy: Policy, grain: float) -> int:
    """Series points to publish: the longest rule window (at least 30 min:
    AWS target tracking's 15-point scale-in alarm) plus two grains — CloudWatch
    reads the evaluation periods plus 2 (constants.AWS_ALARM_EXTRA_PERIODS)."""
    longest = max([1800.0] + [r.time_window_seconds for r in _rules(policy)])
    return int(math.ceil(longest / grain)) + C.AWS_ALARM_EXTRA_PERIODS


_OBS_FIELDS = frozenset(MetricObservation.model_fields)
_OBSERVATIONS_FIELDS = frozenset(Observations.model_fields)
_FORECAST_FIELDS = frozenset(CapacityForecast.model_fields)


def _fresh(cls: type, fields_set: frozenset, data: dict,
           _new=object.__new__, _set=object.__setattr__) -> Any:
    """``cls.model_construct(**data)`` for data holding every field, in ~1 µs."""
    obj = _new(cls)
    _set(obj, "__dict__", data)
    _set(obj, "__pydantic_fields_set__", fields_set)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def _as_forecast(value: Any) -> Optional[CapacityForecast]:
    if value is None or isinstance(value, CapacityForecast):
        return value
    replicas = int(value)
    if replicas < 0:
        raise ValueError(f"the forecaster returned {value!r}; a capacity forecast is >= 0 replicas")
    return _fresh(CapacityForecast, _FORECAST_FIELDS, {"replicas": replicas, "source": "simulator", "reason": None})


def simulate(
    policy: Union[Policy, dict],
    load: np.ndarray,
    model: FleetModel,
    *,
    semantics: Optional[str] = None,
    settings: Union[Settings, dict, None] = None,
    forecaster: Optional[Forecaster] = None,
    start_time: float = 0.0,
    label: Optional[str] = None,
    progress: Optional[Progress] = None,
) -> Run:
    """Replay ``load`` (one rate per tick of ``model.tick_seconds``) through
    ``policy`` under ``semantics`` (default: the policy's, else the engine's).

    Raises :class:`~scalebridge.errors.RequestError` when the semantics
    cannot run the policy (or is not registered)."""
    settings = settings if isinstance(settings, Settings) else Settings.model_validate(settings or {})
    lag_ticks, window_ticks, grain_ticks = model.lag_ticks, model.window_ticks, model.grain_ticks
    tick = float(model.tick_seconds)
    lag = lag_ticks * tick
    if "metric_delay_seconds" not in settings.model_fields_set:
        settings = settings.model_copy(update={"metric_delay_seconds": lag})
    decider = Decider(policy, semantics, settings)
    policy = decider.policy
    name = decider.semantics.name

    loads = np.ascontiguousarray(load, dtype=np.float64)
    n = int(loads.size)
    if n == 0:
        raise ValueError("the load series is empty")
    if not np.all(np.isfinite(loads)) or np.any(loads < 0):
        raise ValueError("load values must be finite and non-negative")
    load_list = loads.tolist()
    history = loads.view()
    history.flags.writeable = False
    cap = float(model.capacity)
    t0 = float(start_time)
    initial = model.initial if model.initial is not None else default_initial(policy, load_list[0], cap)
    if forecaster is None:   # a policy with predictive scaling brings its own planner
        forecaster = trace_forecaster(policy, capacity=cap, startup_seconds=model.startup.mean,
                                      t0=t0, tick_seconds=tick)
    fleet = Fleet(initial, tick_seconds=tick, startup=model.startup, t0=t0, seed=model.seed,
                  drain_seconds=model.drain_seconds, settle_seconds=_settle_seconds(policy, settings, model))

    published = published_metrics(policy)
    shapes = set(published.values())
    want_load = "load" in shapes
    want_per_member = "load_per_member" in shapes
    want_lb = "load_balancing" in shapes
    load_names = [k for k, v in published.items() if v == "load"]
    per_member_names = [k for k, v in published.items() if v == "load_per_member"]
    lb_names = [k for k, v in published.items() if v == "load_balancing"]

    # warm start: histories prefilled so that tick k's window is hist[k : k + W]
    first = load_list[0]
    u0 = first / (initial * cap) if initial else first / cap
    pad = lag_ticks + window_ticks
    util_hist = [u0] * pad            # per-member utilization (fraction of capacity), appended per tick
    total_hist = [first] * pad + load_list
    retention = _retention_points(policy, grain_ticks * tick)
    grain = grain_ticks * tick
    # prefilled points up to t0; those newer than t0 - lag stay hidden until the lag has
    # passed, as a provider would not have them yet (and as many older ones fill the window)
    hidden = sum(1 for j in range(retention) if t0 - j * grain > t0 - lag)
    count = retention + hidden
    cpu_points = [(t0 - j * grain, u0 * 100.0) for j in range(count - 1, -1, -1)]
    load_points = [(t0 - j * grain, first) for j in range(count - 1, -1, -1)]
    member_points = [(t, v * cap / 100.0) for t, v in cpu_points]
    visible = retention
    next_point = cpu_points[visible][0] if hidden else math.inf   # the next point to become visible
    cpu_series = cpu_points[:visible]
    load_series = load_points[:visible]
    member_series = member_points[:visible]
    grain_util = grain_load = 0.0
    grain_left = grain_ticks

    desired_out = [0] * n
    paid_out = [0] * n
    ready_out = [0] * n
    reasons: dict[str, int] = {}
    errors = 0
    first_error: Optional[str] = None
    decisions = 0
    current = fleet.active
    step = decider.step
    sync = model.sync_ticks
    next_sync = 0
    W = window_ticks
    # one object per shape for the whole run, its fields replaced at each decision
    # (cheaper than building models; semantics never keep or change observations)
    set_attr = object.__setattr__
    window = W * tick
    cpu_obs = _fresh(MetricObservation, _OBS_FIELDS, {})
    load_obs = _fresh(MetricObservation, _OBS_FIELDS, {})
    per_member_obs = _fresh(MetricObservation, _OBS_FIELDS, {})
    lb_obs = _fresh(MetricObservation, _OBS_FIELDS, {})
    observations = _fresh(Observations, _OBSERVATIONS_FIELDS, {})
    # their field dicts, updated in place at each decision (only what changes)
    cpu_d = {"members": None, "timestamp": None, "window": window, "value": None, "values": None,
             "series": None, "member_series": None, "forecast": None}
    load_d, per_member_d, lb_d = dict(cpu_d), dict(cpu_d), dict(cpu_d)
    set_attr(cpu_obs, "__dict__", cpu_d)
    set_attr(load_obs, "__dict__", load_d)
    set_attr(per_member_obs, "__dict__", per_member_d)
    set_attr(lb_obs, "__dict__", lb_d)
    metrics = {"cpu": cpu_obs}
    for key in load_names:
        metrics[key] = load_obs
    for key in per_member_names:
        metrics[key] = per_member_obs
    for key in lb_names:
        metrics[key] = lb_obs
    obs_d = {"status_replicas": None, "members": None, "metrics": metrics, "forecast": None, "proposal": None}
    set_attr(observations, "__dict__", obs_d)
    fsum = math.fsum
    ceil = math.ceil
    members, serving, since = fleet.members()
    newest = max(since, default=-math.inf)
    sampled = serving
    members_version = fleet.version
    # fleet counts, refreshed only when the fleet changes (advance at events, resize)
    next_event = fleet.next_event
    serving_now = fleet.serving
    pending_now = fleet.n_pending
    started = time.perf_counter()
    chunk = _PROGRESS_EVERY if progress is not None else n

    for chunk_start in range(0, n, chunk):
        for k in range(chunk_start, min(n, chunk_start + chunk)):
            if k >= next_event:
                fleet.advance(k)
                next_event = fleet.next_event
                serving_now = fleet.n_ready + fleet.n_draining
                pending_now = fleet.n_pending
            if k == next_sync:
                next_sync += sync
                now = t0 + k * tick
                stamp = now - lag
                if W == 1:
                    u = util_hist[k]
                    total = total_hist[k]
                else:
                    us = util_hist[k:k + W]
                    u = us[0] if min(us) == max(us) else fsum(us) / W
                    ts = total_hist[k:k + W]
                    total = ts[0] if min(ts) == max(ts) else fsum(ts) / W
                if next_point <= stamp:
                    while visible < len(cpu_points) and cpu_points[visible][0] <= stamp:
                        visible += 1
                    next_point = cpu_points[visible][0] if visible < len(cpu_points) else math.inf
                    cpu_series = cpu_points[visible - retention:visible]
                    load_series = load_points[visible - retention:visible]
                    member_series = member_points[visible - retention:visible]
                if fleet.version != members_version:
                    members, serving, since = fleet.members()
                    newest = max(since, default=-math.inf)
                    members_version = fleet.version
                if newest < stamp:
                    sampled = serving
                else:   # ready after the window ended: no sample yet
                    sampled = [name for name, t in zip(serving, since) if t < stamp]
                m = u * 1000.0             # usage in cores, rounded up to a millicore
                r = round(m)
                cores = r / 1000.0 if abs(m - r) <= 1e-9 * (m if m > 1.0 else 1.0) else ceil(m) / 1000.0
                cpu_d["members"] = dict.fromkeys(sampled, cores)
                cpu_d["timestamp"] = stamp
                cpu_d["series"] = cpu_series
                if want_load:
                    load_d["members"] = dict.fromkeys(sampled, u * cap)
                    load_d["timestamp"] = stamp
                    load_d["value"] = total
                    load_d["values"] = [total]
                    load_d["series"] = load_series
                if want_per_member:
                    per_member_d["members"] = dict.fromkeys(sampled, u * cap)
                    per_member_d["timestamp"] = stamp
                    per_member_d["value"] = total
                    per_member_d["values"] = [total]
                    per_member_d["series"] = member_series
                if want_lb:
                    pct = u * 100.0
                    lb_d["members"] = dict.fromkeys(sampled, pct)
                    lb_d["timestamp"] = stamp
                    lb_d["value"] = pct
                    lb_d["series"] = cpu_series
                forecast = None
                if forecaster is not None:
                    forecast = _as_forecast(forecaster(now, history[:max(0, k - lag_ticks)], tick))
                obs_d["status_replicas"] = current
                obs_d["members"] = members
                obs_d["forecast"] = forecast
                decision = step(now, current, observations)
                decisions += 1
                reason = decision.reason
                reasons[reason] = reasons.get(reason, 0) + 1
                if decision.error is not None:
                    errors += 1
                    if first_error is None:
                        first_error = f"t={now:.0f}: {decision.error}"
                if decision.desired != current:
                    fleet.resize(decision.desired, k)
                    current = fleet.active
                    next_event = fleet.next_event
                    serving_now = fleet.n_ready + fleet.n_draining
                    pending_now = fleet.n_pending
            paid_out[k] = serving_now + pending_now
            ready_out[k] = serving_now
            desired_out[k] = current
            x = load_list[k]
            u_k = x / (serving_now * cap) if serving_now else x / cap
            util_hist.append(u_k)
            grain_util += u_k
            grain_load += x
            grain_left -= 1
            if not grain_left:
                end = t0 + (k + 1) * tick
                cpu_points.append((end, grain_util * 100.0 / grain_ticks))
                member_points.append((end, grain_util * cap / grain_ticks))
                load_points.append((end, grain_load / grain_ticks))
                if next_point == math.inf:
                    next_point = end
                grain_util = grain_load = 0.0
                grain_left = grain_ticks
        if progress is not None:
            progress(min(n, chunk_start + chunk))

    return Run(
        semantics=name, policy=label or policy.name or "policy",
        desired=np.array(desired_out, dtype=np.int64), paid=np.array(paid_out, dtype=np.int64),
        ready=np.array(ready_out, dtype=np.int64), decisions=decisions, reasons=reasons,
        errors=errors, first_error=first_error, elapsed_seconds=time.perf_counter() - started,
        published=published, initial=initial,
    )


def score_run(run: Run, load: np.ndarray, model: FleetModel, *, oracle_paid: Optional[np.ndarray] = None,
              price_per_instance_hour: Optional[float] = None) -> Scores:
    """:func:`~scalebridge.simulator.scores.compute_scores` of a run."""
    return compute_scores(load, run.ready, run.paid, tick_seconds=model.tick_seconds, capacity=model.capacity,
                          price_per_instance_hour=price_per_instance_hour, oracle_paid=oracle_paid,
                          desired=run.desired, initial=run.initial)


def oracle_for(load: np.ndarray, model: FleetModel, policy: Policy) -> np.ndarray:
    """The oracle's paid series within the policy's bounds, assuming the
    shortest startup the model can draw (so it stays a lower bound)."""
    lo, hi = bounds(policy)
    return oracle_sizes(load, capacity=model.capacity, startup_seconds=model.startup.minimum,
                        tick_seconds=model.tick_seconds, minimum=lo, maximum=hi)


# -- several runs side by side ------------------------------------------------------------------


def _finite(x: Any) -> Any:
    """JSON has no infinity: a non-finite float becomes None."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass
class RunResult:
    """A run and its scores."""

    run: Run
    scores: Scores

    def as_dict(self) -> dict:
        """The JSON ``runs[i]`` object: ``semantics``, ``policy``, every score
        key (:data:`~scalebridge.simulator.scores.SCORE_KEYS`; infinities as
        null), then decision tallies and fleet statistics."""
        r = self.run
        out: dict[str, Any] = {"semantics": r.semantics, "policy": r.policy}
        out.update({k: _finite(v) for k, v in self.scores.as_dict().items()})
        out.update({
            "decisions": r.decisions, "errors": r.errors, "first_error": r.first_error,
            "reasons": dict(sorted(r.reasons.items(), key=lambda kv: -kv[1])),
            "peak_members": int(r.paid.max()), "mean_members": float(r.paid.mean()),
            "final_members": int(r.desired[-1]), "elapsed_seconds": round(r.elapsed_seconds, 4),
            "published_metrics": r.published,
        })
        return out


@dataclass
class Comparison:
    """Runs of several (policy, semantics) pairs on one load."""

    load: np.ndarray
    model: FleetModel
    start_time: float
    results: list[RunResult]
    skipped: list[dict]
    oracles: dict[str, np.ndarray]          # policy label -> the oracle's paid series
    policies: dict[str, Policy]
    price_per_instance_hour: Optional[float] = None
    workload: dict = field(default_factory=dict)
    frontier: tuple[str, ...] = ()          # policy labels of the reactive frontier's runs (see .frontier)

    def with_runs_of(self, other: "Comparison", *, frontier: tuple[str, ...] = ()) -> "Comparison":
        """This comparison with ``other``'s runs (on the same load) after its own."""
        return Comparison(load=self.load, model=self.model, start_time=self.start_time,
                          results=self.results + other.results, skipped=self.skipped + other.skipped,
                          oracles={**self.oracles, **other.oracles}, policies={**self.policies, **other.policies},
                          price_per_instance_hour=self.price_per_instance_hour, workload=self.workload,
                          frontier=self.frontier + frontier)

    def iso_risk_ratios(self) -> list[Optional[float]]:
        """Each run's iso-risk cost ratio against the frontier's runs (None for
        those runs, and for every run when there is no frontier)."""
        if not self.frontier:
            return [None] * len(self.results)
        from .frontier import Frontier
        return Frontier(self.frontier).ratios(self)

    def oracle_dicts(self) -> list[dict]:
        """Each policy's oracle: its bounds, cost and — never short within them, but
        capped at ``maximum`` where the load needs more — its own shortfall scores."""
        out = []
        m = self.model
        for label, paid in self.oracles.items():
            lo, hi = bounds(self.policies[label])
            hours = float(paid.sum()) * m.tick_seconds / 3600
            price = self.price_per_instance_hour
            s = compute_scores(self.load, oracle_ready(paid, startup_seconds=m.startup.minimum,
                                                       tick_seconds=m.tick_seconds),
                               paid, tick_seconds=m.tick_seconds, capacity=m.capacity)
            out.append({"policy": label, "minimum": lo, "maximum": hi, "instance_hours": hours,
                        "cost": None if price is None else hours * price, "peak_members": int(paid.max()),
                        "startup_seconds": m.startup.minimum,
                        "underprovisioned_seconds": s.underprovisioned_seconds,
                        "underprovisioned_fraction": s.underprovisioned_fraction,
                        "unserved_load": s.unserved_load, "peak_overload": _finite(s.peak_overload),
                        "time_to_recover_seconds": s.time_to_recover_seconds})
        return out

    def to_dict(self) -> dict:
        from .. import __version__
        runs = [r.as_dict() for r in self.results]
        out = {"runs": runs, "workload": self.workload, "fleet": self.model.describe(),
               "oracle": self.oracle_dicts(), "skipped": self.skipped,
               "price_per_instance_hour": self.price_per_instance_hour, "scalebridge_version": __version__}
        if self.frontier:
            from .frontier import FRONTIER_SEMANTICS, Frontier
            for run, ratio in zip(runs, self.iso_risk_ratios()):
                run["iso_risk_cost_ratio"] = ratio
            out["frontier"] = {"semantics": FRONTIER_SEMANTICS, "policies": list(self.frontier),
                               "points": [{"underprovisioned_fraction": f, "instance_hours": h}
                                          for f, h in Frontier(self.frontier).points(self)]}
        return out


def _run_task(task: tuple) -> tuple[int, Union[Run, str]]:
    """One run in a worker process: (index, Run) or (index, why it failed)."""
    index, policy, semantics, load, model, start_time, settings, label, forecaster = task
    try:
        return index, simulate(policy, load, model, semantics=semantics, settings=settings, forecaster=forecaster,
                               start_time=start_time, label=label)
    except Exception as e:  # reported as a skipped run, never a crash
        return index, _failure(e)


def _failure(e: Exception) -> str:
    from ..errors import RequestError
    if isinstance(e, RequestError):
        return f"cannot run this policy: {e}"
    return f"failed: {type(e).__name__}: {e}"


def registered_semantics() -> list[str]:
    from .. import plugins
    return sorted(plugins.registry().semantics)


def compare(
    policies: list[tuple[str, Policy]],
    semantics: list[str],
    load: np.ndarray,
    model: FleetModel,
    *,
    start_time: float = 0.0,
    settings: Union[Settings, dict, None] = None,
    price_per_instance_hour: Optional[float] = None,
    workers: int = 1,
    forecaster: Optional[Forecaster] = None,
    progress: Optional[Callable[[int], None]] = None,
    workload: Optional[dict] = None,
) -> Comparison:
    """Run every (policy, semantics) pair on ``load`` and score it against the
    oracle. A semantics that is not registered, cannot run a policy, or fails
    is listed in ``skipped`` with a one-line reason instead of raising.

    ``forecaster`` is copied for each run (``copy.deepcopy``), so a stateful one
    starts every run fresh; ``workers > 1`` runs pairs in that many processes (it
    must then be picklable). ``progress(ticks)`` is called with the number of
    ticks just simulated, summed over runs (``len(load) × runs`` in all)."""
    from .. import plugins

    available = plugins.registry().semantics
    load = np.ascontiguousarray(load, dtype=np.float64)
    n = int(load.size)
    settings = settings if isinstance(settings, Settings) else Settings.model_validate(settings or {})
    skipped: list[dict] = []
    tasks = []
    for label, policy in policies:
        for name in semantics:
            if name not in available:
                skipped.append({"semantics": name, "policy": label, "reason": "not registered"})
                if progress is not None:
                    progress(n)
                continue
            # each run its own forecaster: a stateful one (a planner that has observed a run's
            # load) handed to the next run would forecast from the whole trace, future included
            own = copy.deepcopy(forecaster) if forecaster is not None else None
            tasks.append((len(tasks), policy, name, load, model, start_time, settings, label, own))
    runs: list[Union[Run, str, None]] = [None] * len(tasks)
    if workers > 1 and len(tasks) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        # spawn: a forked child would inherit the progress bar's thread and locks
        ctx = multiprocessing.get_context("spawn")
        payload = [(i, p.model_dump(exclude_unset=True), *rest) for i, p, *rest in tasks]
        with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx) as pool:
            for fut in as_completed([pool.submit(_run_task, t) for t in payload]):
                i, out = fut.result()
                runs[i] = out
                if progress is not None:
                    progress(n)
    else:
        for task in tasks:
            done = [0]

            def tick_progress(k: int, done: list = done) -> None:
                progress(k - done[0])  # type: ignore[misc]
                done[0] = k

            i, policy, name, *_ = task
            try:
                runs[i] = simulate(policy, load, model, semantics=name, settings=settings, forecaster=task[8],
                                   start_time=start_time, label=task[7],
                                   progress=tick_progress if progress is not None else None)
            except Exception as e:  # reported as a skipped run, never a crash
                runs[i] = _failure(e)
                if progress is not None:
                    progress(n - done[0])

    oracles: dict[str, np.ndarray] = {}
    by_label = dict(policies)
    for label, policy in policies:
        oracles[label] = oracle_for(load, model, policy)
    results: list[RunResult] = []
    for task, out in zip(tasks, runs):
        _, policy, name, *_ = task
        label = task[7]
        if isinstance(out, Run):
            results.append(RunResult(out, score_run(out, load, model, oracle_paid=oracles[label],
                                                    price_per_instance_hour=price_per_instance_hour)))
        else:
            skipped.append({"semantics": name, "policy": label, "reason": str(out)})
    return Comparison(load=load, model=model, start_time=start_time, results=results, skipped=skipped,
                      oracles=oracles, policies=by_label, price_per_instance_hour=price_per_instance_hour,
                      workload=workload or {})
