"""One sync of one target: observe → decide → act → persist.

The same steps as the HPA controller's ``reconcileAutoscaler``
(kubernetes/kubernetes ``pkg/controller/podautoscaler/horizontal.go``): read the
scale, compute the replicas, write the scale only when it changed, record the
status — here on any provider, through :mod:`scalebridge.providers`:

1. observe (one read token of the provider instance; none left: ``paced``); a
   pending intent is resolved against the observed size (``store``);
2. refusal: :meth:`~scalebridge.providers.Target.managed_by` on the first sync and
   every :data:`REFUSAL_RECHECK_SECONDS` after; refused → action ``refused``;
3. read the metrics the policy needs (``queries``) and build the protocol's
   observations (``Observation.forecast`` passes through);
4. decide with the target's :class:`~scalebridge.engine.Decider` (kept between
   syncs, so its windows are incremental);
5. act unless dry-run, unchanged, in flight, not the leader, or paced: an intent
   is persisted, then :meth:`~scalebridge.providers.Target.set_size` — or, on a scale-in
   whose policy chooses who leaves (``scale_in``) with a provider that can remove chosen
   members (``Capability.DELETE_MEMBERS``), the intent names them and
   :meth:`~scalebridge.providers.Target.delete_members` removes them. A restart that finds
   such an intent not carried out finishes it — the members it names that are still there,
   no others — when it is fresh (:data:`FINISH_SCALE_IN_SECONDS`) and nobody changed the
   size since; else it is taken back and decided again;
6. keep the response's state when the decision was carried out (or there was
   nothing to carry out), else only its ``recommendations`` and ``sizes`` — the
   decision protocol's rule for a decision not carried out.

A target's state has one form here, the :class:`~scalebridge.state.DecisionState` its
:class:`~scalebridge.engine.Decider` carries: a decision is recorded in it as if
carried out, and what a decision not carried out gives back — its events, taken
before it (:class:`~scalebridge.state.Events`) — is the only copy made. The
protocol's JSON is made only for the state store (:meth:`TargetRun.row`) and read
only from it (:meth:`TargetRun.load`).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from pydantic import ValidationError

from ..engine import Decider, describe_validation_error
from ..errors import RequestError, ScalebridgeError
from ..protocol import (CapacityForecast, Member, MetricObservation, Observations, Rollout, StateModel,
                        member_name, parse_observations)
from ..providers import Capability, ErrorKind, Elector, ProviderError, ScaleNotice, TargetEnded, TargetRefused
from ..state import DecisionState, Events
from .backoff import Backoff
from .clamp import clamp_future
from .runtime import RETRY_AFTER_MIN_PERIODS, TargetSpec
from . import shadow as _shadow
from .pacing import ProviderPacing
from .sources import read_metrics
from .store import StateStore, StoredTarget

__all__ = ["Intent", "TargetRun", "SyncContext", "Outcome", "decide_target", "act", "sync_target", "not_written",
           "REFUSAL_RECHECK_SECONDS", "STORE_ERROR_KIND", "state_from_protocol", "recovered_record", "row_problem",
           "plugin_failed", "abandoned_record", "FINISH_SCALE_IN_SECONDS"]

#: how often a target is asked again whether another autoscaler manages it
REFUSAL_RECHECK_SECONDS = 300.0
#: the audit's ``error_kind`` of a target whose sync the state store failed
STORE_ERROR_KIND = "store"
#: how old an interrupted scale-in of chosen members may be for a restart to finish it:
#: older, the load it was decided on has passed and it is decided again
FINISH_SCALE_IN_SECONDS = 300.0


def state_from_protocol(state: Optional[dict]) -> DecisionState:
    """A :class:`DecisionState` from the protocol's ``state`` JSON object."""
    if not state:
        return DecisionState()
    return DecisionState.from_protocol(StateModel.model_validate(state))


@dataclass(slots=True)
class Intent:
    """A write about to be made (or made, its outcome not yet known): the size, the
    sync time it was decided at, the decision's audit fields, and what the target's
    state gives back if the write was not carried out — the events before the
    decision; with ``before`` (a decision's time, None for a paused target's size)
    the state before it is that without the ``recommendations`` and ``sizes`` of
    that time. While it is pending the target's state is the one as if carried out."""
    size: int
    time: float
    record: dict
    events: Events
    before: Optional[float]
    #: the members a scale-in removes (``delete_members``), None for a size
    members: Optional[tuple[str, ...]] = None


@dataclass(slots=True)
class TargetRun:
    """What the controller keeps of one target between syncs."""
    spec: TargetSpec
    decider: Decider
    intent: Optional[Intent] = None
    refused_by: Optional[str] = None
    next_refusal_check: float = -math.inf
    failures: int = 0
    retry_at: float = -math.inf
    last_synced: float = -math.inf
    dirty: bool = False
    writes: int = 0
    #: why the target's persisted row cannot be used (it then fails every sync until reset)
    problem: Optional[str] = None
    #: the last write carried out, persisted so that its audit record survives a crash
    applied: Optional[dict] = None
    #: why the target's world has ended (a simulated load): it is synced no more
    ended: Optional[str] = None
    #: (sync time, its Observation or ProviderError) from the provider's batched
    #: observe (Provider.observe_many) of this sync, taken by the sync once
    observed: Optional[tuple] = None
    #: the settings the provider last said it knows (Observation.settings), decided with
    learned: Optional[dict] = None
    #: the loop's handle on a sync of this target running on a worker (None: none is):
    #: while a sync the loop abandoned at its deadline is still in its call, the target
    #: is not synced again
    busy: Any = None
    #: a shadow target's decision awaiting the native autoscaler's (:mod:`.shadow`)
    shadow: Any = None

    @property
    def intent_size(self) -> Optional[int]:
        """The size of a write whose outcome is not known yet, or None."""
        return self.intent.size if self.intent is not None else None

    @property
    def intent_state(self) -> Optional[dict]:
        """The protocol's state as if that write were carried out, or None."""
        return self.decider.state.to_protocol() if self.intent is not None else None

    def row(self) -> StoredTarget:
        """The persisted row: with a pending intent, the committed state is the one
        before that decision, and the intent's the one as if carried out."""
        it = self.intent
        snapshot = self.spec.target.snapshot()
        state = self.decider.state
        if it is None:
            return StoredTarget(self.spec.name, self.spec.policy_hash, state.to_protocol(),
                                updated_at=time.time(), applied=self.applied, provider_state=snapshot)
        meta: dict = {"time": it.time, "record": it.record}
        if it.members is not None:
            meta["members"] = list(it.members)
        return StoredTarget(self.spec.name, self.spec.policy_hash, state.to_protocol(it.events, it.before), it.size,
                            state.to_protocol(), time.time(), meta, self.applied, snapshot)

    def load(self, row: StoredTarget, now: Optional[float] = None) -> list[tuple[str, float]]:
        """The persisted row back (a pending intent is resolved on the next sync). A
        row that cannot be read leaves :attr:`problem` set: the target then fails
        until ``scalebridge state reset`` forgets the row, rather than starting from
        empty state and forgetting its windows unseen. With ``now``, every time of the
        state after it is clamped to it (:mod:`.clamp`); what was clamped is returned
        (``(path, seconds ahead)``) for the caller to say."""
        name = self.spec.name
        problem = row.problem
        clamped: list[tuple[str, float]] = []
        if problem is None and now is not None:
            row.state, clamped = clamp_future(row.state, now)
            if row.intent_state is not None:
                row.intent_state, more = clamp_future(row.intent_state, now)
                clamped += [(f"pending write's {p}", ahead) for p, ahead in more]
                meta = row.intent_meta
                if more and isinstance(meta, dict) and isinstance(meta.get("time"), (int, float)) \
                        and meta["time"] > now:
                    row.intent_meta = {**meta, "time": now}
        if problem is None:
            try:
                state = state_from_protocol(row.state)
            except ValidationError:
                problem = row_problem(row)
            else:
                if row.intent_size is not None:
                    problem = row_problem(row)
        if problem is not None:
            self.problem = (f"the state store's row of target {name!r} cannot be read ({problem}); "
                            f"`scalebridge state reset {name}` forgets it")
            return []
        intent = None
        if row.intent_size is not None and row.intent_state is not None:
            meta = row.intent_meta or {}
            record = meta.get("record")
            at = float(meta.get("time", -math.inf))
            # the state as if carried out; the committed one gives back its events
            members = meta.get("members")
            members = tuple(str(x) for x in members) if isinstance(members, list) else None
            intent = Intent(row.intent_size, at, dict(record) if isinstance(record, dict) else {}, state.events(),
                            at if math.isfinite(at) else None, members)
            state = state_from_protocol(row.intent_state)
        self.problem = None
        self.decider.state = state
        self.intent = intent
        self.applied = row.applied
        if row.provider_state is not None:
            self.spec.target.restore(row.provider_state)
        if clamped:
            self.dirty = True   # persisted clamped: the next start reads what this one decides on
        return clamped

    def clamp(self, now: float) -> list[tuple[str, float]]:
        """The state in memory with every time after ``now`` clamped to it (the wall
        clock stepped back under a running controller); what was clamped."""
        state, clamped = clamp_future(self.decider.state.to_protocol(), now)
        if clamped:
            self.decider.state = state_from_protocol(state)
            self.dirty = True
        it = self.intent
        if it is not None:   # what a write not carried out gives back is clamped alike
            before, more = clamp_future(self.decider.state.to_protocol(it.events, it.before), now)
            if more:
                it.events = state_from_protocol(before).events()
        return clamped

    def reset(self) -> None:
        """Forget the target's decision history (``scalebridge state reset``)."""
        self.decider.state = DecisionState()
        self.intent = None
        self.applied = None
        self.problem = None
        self.dirty = True


@dataclass
class SyncContext:
    """What every target's sync shares."""
    pacing: dict[str, ProviderPacing]
    backoff: Backoff
    store: StateStore
    elector: Elector
    dry_run: bool = False
    metrics: Any = None
    refusal_recheck_seconds: float = REFUSAL_RECHECK_SECONDS
    #: the targets ``scalebridge pause`` paused, by name (read from the store every sync)
    pauses: dict = field(default_factory=dict)
    #: the monotonic reading of the sync under way (:meth:`Clock.monotonic`): pacing,
    #: backoff and refusal re-checks are measured on it, never on the wall clock
    mono: float = 0.0
    #: ``run --shadow``: every target in shadow mode (:mod:`.shadow`), never written
    shadow: bool = False


_DECISION_FIELDS = ("current_replicas", "recommended_replicas", "desired_replicas", "reason")


def _record(spec: TargetSpec, now: float) -> dict:
    return {"time": now, "target": spec.name, "provider": spec.provider_key, "semantics": spec.semantics,
            "current_replicas": None, "recommended_replicas": None, "desired_replicas": None, "reason": None,
            "action": None, "error": None}


def plugin_failed(spec: TargetSpec, e: BaseException) -> str:
    """What an exception a provider raised (not a :class:`ProviderError`: a bug in
    it) says in the audit: the provider, the plugin and hook that registered it, the
    exception — never blamed on the target or its policy."""
    from .. import registry
    name = getattr(spec.provider, "name", spec.provider_key)
    return (f"provider {name!r}{registry.provided_by('providers', name)} failed, a bug to report to its "
            f"plugin: {type(e).__name__}: {e}")


def row_problem(row: StoredTarget) -> Optional[str]:
    """Why a persisted row cannot be used (the column and what is wrong), or None:
    the store's own check of its columns, then the protocol's ``state`` model."""
    if row.problem is not None:
        return row.problem
    for column, value in (("state", row.state), ("intent_state", row.intent_state)):
        if value is None:
            continue
        try:
            StateModel.model_validate(value)
        except ValidationError as e:
            path, msg = describe_validation_error(e, ())
            return f"column {column}: {path}: {msg}"
    meta = row.intent_meta or {}
    if not isinstance(meta.get("time", 0.0), (int, float)) or isinstance(meta.get("time"), bool):
        return f"column intent_meta: time: expected a number, got {meta.get('time')!r}"
    return None


def recovered_record(spec: TargetSpec, time_: float, decision: dict) -> dict:
    """The audit record of a write carried out by a controller that died before it
    was audited: the decision's time, sizes and reason, action ``applied``,
    ``recovered: true``."""
    rec = _record(spec, time_)
    rec.update({k: v for k, v in decision.items() if k in _DECISION_FIELDS})
    if isinstance(decision.get("scale_in"), dict):
        rec["scale_in"] = decision["scale_in"]
    rec["action"] = "applied"
    rec["recovered"] = True
    rec["note"] = "carried out before a restart"
    return rec


def _resolve_intent(run: TargetRun, current: int, now: float) -> tuple[Optional[dict], bool]:
    """A write whose outcome was not persisted (a crash, a lost reply): carried out
    when the provider now holds the intent's size — its state is then committed,
    once, and its audit record comes back (``recovered``). The flag says the intent
    was decided at this very sync time (a controller restarted inside that sync on
    the virtual clock): carried out, it is not decided again; not carried out, it is
    decided again from the state before it."""
    it = run.intent
    run.intent = None
    run.dirty = True
    same_sync = it.time == now
    if current == it.size:   # the state already is the one as if carried out
        run.applied = {"time": it.time, "record": it.record}
        return recovered_record(run.spec, it.time, it.record), same_sync
    _take_back(run.decider.state, it, whole=same_sync)
    return None, False


def not_written(run: TargetRun) -> None:
    """The pending intent's write will not be made (its intent could not be
    persisted): the decision stays one not carried out."""
    it = run.intent
    run.intent = None
    if it is not None:
        _take_back(run.decider.state, it)


def _take_back(state: DecisionState, it: Intent, *, whole: bool = False) -> None:
    """An intent's write not carried out: the state keeps the decision's
    ``recommendations`` and ``sizes`` and gets its events back; ``whole``: the
    decision is taken back entirely (it is decided again at the same time)."""
    if whole and it.before is not None:
        if not it.events.seen:
            state.recommendations = None   # the decision was the first: none seen before it
        elif state.recommendations is not None:
            state.recommendations.drop_from(it.before)
        state.sizes.drop_from(it.before)
    state.restore_events(it.events)


def retry_after_bound(spec: TargetSpec, ctx: SyncContext) -> float:
    """The longest a ``Retry-After`` holds ``spec``'s provider: its
    ``max_retry_after_seconds``, never less than :data:`RETRY_AFTER_MIN_PERIODS` sync
    periods (the backoff's base)."""
    return max(spec.limits.max_retry_after_seconds, RETRY_AFTER_MIN_PERIODS * ctx.backoff.base)


def throttled(spec: TargetSpec, ctx: SyncContext, e: ProviderError) -> Optional[dict]:
    """A throttled answer (``e``, of kind ``throttled``): with a ``Retry-After``, the
    provider's calls are held that long, bounded (:func:`retry_after_bound`); the
    audit's ``throttled`` field — the server's ``retry_after`` as sent, the
    ``held_seconds`` applied, the ``operation`` — and the metrics say so. None for
    another kind."""
    if e.kind is not ErrorKind.THROTTLED:
        return None
    ra = e.retry_after
    held = min(ra, retry_after_bound(spec, ctx)) if ra else None
    key = spec.provider_key
    if held:
        ctx.pacing[key].hold(ctx.mono + held, retry_after=ra, held=held)
    m = ctx.metrics
    if m is not None and ra is not None:
        m.retry_after.labels(key).set(ra)
        m.throttle_hold.labels(key).set(held or 0.0)
    return {"retry_after": ra, "held_seconds": held, "operation": e.operation}


def held_note(key: str, t: dict, mono: float, what: str) -> str:
    """The audit's note of a call a throttle holds back."""
    left = max(0.0, t["until"] - mono)
    asked = t["retry_after"]
    capped = "" if asked is None or asked <= t["held_seconds"] else \
        f", held {t['held_seconds']:g} s (its max_retry_after_seconds)"
    return (f"provider {key!r} is throttled: its server asked to wait {asked:g} s (Retry-After){capped}; "
            f"no {what} for {left:.3g} s more")


def _commit(run: TargetRun) -> bool:
    """Whether a sync running on a worker may change ``run`` now that its calls have
    returned: False when the loop abandoned it at its deadline (then it changes
    nothing; a write's intent stays pending, resolved by observing). A sync on the
    loop's own thread always may."""
    slot = run.busy
    return slot is None or slot.commit()


def abandoned_record(run: TargetRun, now: float, why: str) -> Outcome:
    """The outcome the loop audits for a target sync it no longer waits for."""
    rec = _record(run.spec, now)
    rec["action"], rec["error"], rec["error_kind"] = "failed", why, ErrorKind.TRANSIENT.value
    return Outcome(run, rec, failed=True)


def _fail(run: TargetRun, ctx: SyncContext, rec: dict, e: ProviderError, now: float) -> None:
    rec["action"] = "refused" if e.kind is ErrorKind.REFUSED else "failed"
    rec["error"] = str(e)
    rec["error_kind"] = e.kind.value
    if ctx.metrics is not None:
        ctx.metrics.provider_errors.labels(run.spec.provider_key, e.kind.value).inc()
    if e.retryable:
        run.failures += 1
        throttle = throttled(run.spec, ctx, e)
        held = throttle["held_seconds"] if throttle is not None else None
        delay = ctx.backoff.delay(run.failures, held)
        run.retry_at = ctx.mono + delay
        if throttle is not None:
            rec["throttled"] = throttle


@dataclass(slots=True)
class Outcome:
    """One target's sync so far: its audit record, whether it failed, and the write
    it is to make (``desired`` not None) — with the state as if carried out."""
    run: TargetRun
    record: dict
    failed: bool = False
    desired: Optional[int] = None
    current: int = 0
    #: the audit record of a write a controller that died since carried out
    recovered: Optional[dict] = None
    #: the write's notice for :meth:`~scalebridge.providers.Target.record_event`
    notice: Optional[ScaleNotice] = None
    #: a scale-in of chosen members: the names ``delete_members`` removes (None: ``set_size``)
    members: Optional[tuple[str, ...]] = None


def _observations(obs: Any, metrics: dict) -> Observations:
    """The protocol's observations from what the provider observed. A provider that
    returns the core's own types (:class:`~scalebridge.protocol.Member`,
    :class:`~scalebridge.protocol.MetricObservation`: every built-in) made them from what
    it checked, so they are taken as they are; one that returns the protocol's dicts is
    validated here, at the edge (a bad member or sample fails its target, named by its
    JSON path)."""
    members, forecast = obs.members, obs.forecast
    rollout = getattr(obs, "rollout", None)
    if (members is None or all(type(m) is Member for m in members)) and \
            all(type(o) is MetricObservation for o in metrics.values()) and \
            (forecast is None or type(forecast) is CapacityForecast) and \
            (rollout is None or type(rollout) is Rollout) and \
            (obs.status_replicas is None or type(obs.status_replicas) in (int, float)):
        return Observations(status_replicas=obs.status_replicas, members=members, metrics=metrics, forecast=forecast,
                            rollout=rollout)
    try:
        return parse_observations({"status_replicas": obs.status_replicas, "members": members, "metrics": metrics,
                                   "forecast": forecast, "rollout": rollout})
    except ValidationError as e:
        path, msg = describe_validation_error(e, ("observations",))
        raise ProviderError(ErrorKind.INVALID, f"the provider's observation is not valid: {path}: {msg}") from None


def _observed(run: TargetRun, now: float) -> Any:
    """This sync's entry of the provider's batched observe, taken once (raised when
    it is the target's own failure), or None: observe the target on its own."""
    got, run.observed = run.observed, None
    if got is None or got[0] != now:
        return None
    if isinstance(got[1], ProviderError):
        raise got[1]
    return got[1]


def decide_target(run: TargetRun, now: float, ctx: SyncContext) -> Outcome:
    """Steps 1–4 of one sync of ``run``'s target at ``now``; a decision to carry out
    comes back with its intent set on ``run`` (persist it, then :func:`act`)."""
    spec = run.spec
    rec = _record(spec, now)
    out = Outcome(run, rec)
    if run.problem is not None:
        rec["action"], rec["error"], rec["error_kind"] = "failed", run.problem, STORE_ERROR_KIND
        out.failed = True
        return out
    pace = ctx.pacing[spec.provider_key]
    mono = ctx.mono
    # a target observed in its provider's batch made its reads there, in the batch's few calls
    if (run.observed is None or run.observed[0] != now) and not pace.reads.take(mono):
        rec["action"] = "paced"
        _paced(rec, ctx, spec.provider_key, pace, mono, "read")
        return out
    target = spec.target
    decider = run.decider
    ev: Optional[Events] = None
    current: Optional[int] = None
    t0 = time.perf_counter()
    try:
        # the calls first, changing nothing: a sync the loop abandons at its deadline
        # (its call hung) leaves the run as it was (``_commit``)
        obs = _observed(run, now) or target.observe(now)
        current = obs.current_replicas
        if type(current) is not int or current < 0:
            current = None
            raise ProviderError(ErrorKind.INVALID, f"the provider observed a size of {obs.current_replicas!r}, "
                                "not a count")
        it = run.intent
        # a write decided and carried out at this very time by a process that died since
        early = it is not None and it.time == now and current == it.size
        shadow = spec.shadow or ctx.shadow   # the autoscaler that manages it is the one compared with
        refused_by = None if shadow else run.refused_by
        recheck = not early and not shadow and mono >= run.next_refusal_check
        if recheck:
            refused_by = target.managed_by()
        pause = None if early or refused_by else _pause(run, ctx, obs)
        # with a fallback, a metric that cannot be read is decided on (its failures
        # counted in the state, as KEDA counts them); without one the sync fails and the
        # size is held, as before
        failed: Optional[list[ProviderError]] = [] if spec.policy.fallback is not None else None
        metrics = read_metrics(spec, now, obs, failed=failed) \
            if spec.queries and not early and not refused_by and pause is None else {}
        if not _commit(run):   # every call has returned; from here on the run changes, in memory
            return out
        rec["current_replicas"] = current
        if it is not None and it.members:
            finishing = _finishable(run, ctx, obs, current, now)
            if finishing is not None:
                return _finish(out, finishing, current)
        if it is not None:
            recovered, same_sync = _resolve_intent(run, current, now)
            if same_sync:   # decided and carried out at this time by a process that died since
                rec.update(recovered)
                run.last_synced = now
                return out
            out.recovered = recovered
        if recheck:
            run.refused_by = refused_by
            run.next_refusal_check = mono + ctx.refusal_recheck_seconds
        if run.refused_by and not shadow:
            raise TargetRefused(run.refused_by)
        if ctx.metrics is not None:
            ctx.metrics.paused.labels(spec.name).set(1 if pause else 0)
        if pause is not None:
            return _paused(out, ctx, obs, pause, now)
        # with a fallback, a metric that cannot be read is decided on (its failures
        # counted in the state, as KEDA counts them); without one the sync fails and the
        # size is held, as before
        for e in failed or ():
            throttle = throttled(spec, ctx, e)
            if throttle is not None:
                rec["throttled"] = throttle
            if ctx.metrics is not None:
                ctx.metrics.provider_errors.labels(spec.provider_key, e.kind.value).inc()
        if obs.settings is not None and obs.settings != run.learned:
            decider.learn_settings(obs.settings, spec.settings)
            run.learned = obs.settings
        observations = _observations(obs, metrics)
        compared = _shadow.before_decision(run, ctx, now, current) if shadow else None
        trace: Optional[list] = [] if shadow else None
        ev = decider.state.events()
        d = decider.step(now, current, observations, trace)
        desired = d.desired
        rec["recommended_replicas"] = d.recommended
        rec["desired_replicas"] = desired
        rec["reason"] = d.reason
        if d.error:
            rec["error"] = d.error
        if failed:
            rec["note"] = "metrics not read: " + "; ".join(str(e) for e in failed)
        paused_at_zero = (d.extra or {}).get("paused")
        if paused_at_zero:
            rec["note"] = f"paused at zero: {paused_at_zero}"
        selection = (d.extra or {}).get("scale_in") if desired < current else None
        if selection is not None:
            rec["scale_in"] = _scale_in_record(selection, spec)
        fallback = (d.extra or {}).get("fallback")
        if fallback is not None:
            rec["fallback"] = bool(fallback.get("active"))
            if ctx.metrics is not None:
                ctx.metrics.fallback_active.labels(spec.name).set(1 if fallback.get("active") else 0)
        standby = (d.extra or {}).get("standby_replicas")
        if standby:   # members in a standby or warm pool, left out of the decision
            rec["standby_replicas"] = standby
        run.last_synced = now
        m = ctx.metrics
        if m is not None:
            m.current.labels(spec.name).set(current)
            m.desired.labels(spec.name).set(desired)
            m.decisions.labels(spec.name, d.reason).inc()
        run.dirty = True
        if compared is not None:   # shadow: compared, kept for the next sync's comparison, never written
            _shadow.after_decision(run, ctx, rec, d, ev, trace, compared, now, current)
            return out
        if desired == current:
            rec["action"] = "unchanged"
            run.failures = 0
            return out
        if spec.dry_run or ctx.dry_run:
            rec["action"] = "dry_run"
        elif obs.in_flight:
            rec["action"] = "in_flight"
            rec["note"] = obs.in_flight
        elif not ctx.elector.is_leader():
            rec["action"] = "standby"
        elif not pace.writes.take(mono):
            rec["action"] = "paced"
            _paced(rec, ctx, spec.provider_key, pace, mono, "write")
        else:   # to be carried out: the state is the one as if it were, the intent persisted first
            chosen = tuple(rec["scale_in"]["members"]) if selection is not None and \
                rec["scale_in"]["how"] == "delete_members" else None
            record = {k: rec[k] for k in _DECISION_FIELDS}
            if selection is not None:
                record["scale_in"] = rec["scale_in"]
            run.intent = Intent(desired, now, record, ev, now, chosen)
            out.desired, out.current, out.members = desired, current, chosen
            signal, kind = _shadow.decided_signal(d, spec.policy.source)
            out.notice = ScaleNotice("rescaled", current, desired, d.reason, now, d.cause, signal, kind)
            return out   # failures reset once the write succeeds: a failing write keeps backing off
        run.failures = 0
        decider.state.restore_events(ev)
        return out
    except TargetEnded as e:   # said once: the target is synced no more, and holds its size
        if not _commit(run):
            return out
        run.ended = e.ended
        rec["action"] = "paused"
        rec["note"] = e.ended
        return out
    except ProviderError as e:
        if not _commit(run):
            return out
        if ev is not None and rec["desired_replicas"] is not None:
            decider.state.restore_events(ev)
        elif current is not None and run.intent is not None and rec["current_replicas"] is None:
            # observed, then a later call failed: the pending write is resolved all the same
            rec["current_replicas"] = current
            recovered, _ = _resolve_intent(run, current, now)
            out.recovered = recovered
        _fail(run, ctx, rec, e, now)
        out.failed = True
        return out
    except (RequestError, ScalebridgeError, OverflowError) as e:
        if not _commit(run):
            return out
        rec["action"] = "failed"
        rec["error"] = f"cannot decide: {e}"
        out.failed = True
        return out
    except Exception as e:  # noqa: BLE001 — a provider's or a semantics' bug must not stop the others
        if not _commit(run):
            return out
        rec["action"] = "failed"
        rec["error"] = plugin_failed(run.spec, e)
        out.failed = True
        return out
    finally:
        if ctx.metrics is not None:
            ctx.metrics.sync_duration.observe(time.perf_counter() - t0)


def _paced(rec: dict, ctx: SyncContext, key: str, pace: ProviderPacing, mono: float, what: str) -> None:
    """A call its provider's buckets hold back: throttled (the server's Retry-After)
    or paced (the provider's own rate)."""
    t = pace.held(mono)
    if t is None:
        rec["note"] = f"provider {key!r} has no {what} left at its pacing"
        return
    rec["note"] = held_note(key, t, mono, what + "s")
    rec["throttled"] = {"retry_after": t["retry_after"], "held_seconds": t["held_seconds"], "operation": None}
    if ctx.metrics is not None:
        ctx.metrics.throttled_syncs.labels(key).inc()


def _scale_in_record(selection: dict, spec: TargetSpec) -> dict:
    """The audit record's ``scale_in``: the selection, and how it is carried out —
    ``delete_members`` (the provider removes the members named; when the selection is
    partial, its own order the rest) or ``set_size`` (the provider chooses them all:
    it cannot remove chosen members)."""
    can = Capability.DELETE_MEMBERS in getattr(spec.provider, "capabilities", ())
    members = list(selection.get("members") or ())
    out = {"select": selection.get("select"), "members": members, "why": dict(selection.get("why") or {}),
           "count": selection.get("count"), "reason": selection.get("reason"),
           "how": "delete_members" if can and members else "set_size"}
    if not can:
        out["note"] = (f"provider {getattr(spec.provider, 'name', spec.provider_key)!r} cannot remove chosen members: "
                       "it sets the size and chooses who leaves")
    return out


def _finishable(run: TargetRun, ctx: SyncContext, obs: Any, current: int, now: float) -> Optional[tuple]:
    """A scale-in of chosen members persisted and not carried out (a crash between the
    intent and the write, or in the write): the members it names still there, when a
    restart may finish it — it is fresh (:data:`FINISH_SCALE_IN_SECONDS`), the size
    is between the intended one and the one it was decided at (nobody scaled the target
    up since; a part may be done), the target is not paused, and this controller writes
    (not dry-run, the leader). None: it is resolved as every intent is."""
    it = run.intent
    before = it.record.get("current_replicas")
    if current == it.size or not isinstance(before, int) or not it.size < current <= before:
        return None
    if not 0 <= now - it.time <= FINISH_SCALE_IN_SECONDS:
        return None
    if run.spec.dry_run or ctx.dry_run or not ctx.elector.is_leader() or _pause(run, ctx, obs) is not None:
        return None
    present = {member_name(m): m for m in obs.members or ()}
    left = tuple(n for n in it.members if n in present and not _leaving(present[n]))
    if not left:
        return None   # the members it named are gone: nothing of it is left to do
    return it, left


def _leaving(m: Any) -> bool:
    return bool(m["deleting"] if type(m) is dict else m.deleting)


def _finish(out: Outcome, finishing: tuple, current: int) -> Outcome:
    """Carry out an interrupted scale-in of chosen members (:func:`_finishable`): the same
    intent, for the members it names that are still there; the state stays the one as if
    carried out, and no new decision is made at this sync."""
    it, left = finishing
    run, rec = out.run, out.record
    rec.update({k: v for k, v in it.record.items() if k in _DECISION_FIELDS})
    rec["current_replicas"] = current
    if isinstance(it.record.get("scale_in"), dict):
        rec["scale_in"] = it.record["scale_in"]
    rec["recovered"] = True
    rec["note"] = (f"finishing the scale-in decided at {it.time:.0f}, interrupted before its write was done: "
                   f"removes {', '.join(left)}")
    run.last_synced = out.record["time"]
    run.dirty = True
    out.desired, out.current, out.members = it.size, current, left
    return out


def _pause(run: TargetRun, ctx: SyncContext, obs: Any) -> Optional[tuple[str, Optional[int]]]:
    """Who paused the target and the size to hold (None: its own), or None: a pause
    recorded by ``scalebridge pause``, ``paused: true`` in the configuration, or
    one the provider found on the target (KEDA's annotations on a workload)."""
    p = ctx.pauses.get(run.spec.name)
    if p is not None:
        return f"scalebridge pause at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(p.since))}", p.replicas
    if run.spec.paused:
        return "paused: true in the configuration", None
    if obs.paused:
        return obs.paused, obs.paused_replicas
    return None


def _paused(out: Outcome, ctx: SyncContext, obs: Any, pause: tuple[str, Optional[int]], now: float) -> Outcome:
    """A paused target: no decision (its windows and cooldowns wait as they are);
    with a size to hold that it does not have, that size is set — once: then it is
    held, as KEDA's ``paused-replicas`` scales to N and stops
    (https://keda.sh/docs/latest/concepts/scaling-deployments/#pause-autoscaling)."""
    run, rec = out.run, out.record
    why, replicas = pause
    current = rec["current_replicas"]
    run.last_synced = now
    run.failures = 0
    rec["reason"] = "Paused"
    rec["note"] = f"paused: {why}"
    m = ctx.metrics
    if m is not None:
        m.current.labels(run.spec.name).set(current)
    if replicas is None or replicas == current:
        rec["action"] = "paused"
        rec["desired_replicas"] = current
        return out
    rec["desired_replicas"] = replicas
    if run.spec.dry_run or ctx.dry_run:
        rec["action"] = "dry_run"
    elif run.spec.shadow or ctx.shadow:   # a shadow target is never written, its paused size neither
        rec["action"] = "shadow"
    elif obs.in_flight:
        rec["action"], rec["note"] = "in_flight", obs.in_flight
    elif not ctx.elector.is_leader():
        rec["action"] = "standby"
    elif not ctx.pacing[run.spec.provider_key].writes.take(ctx.mono):
        rec["action"] = "paused"
        rec["note"] = f"paused: {why}; provider {run.spec.provider_key!r} has no write left at its pacing"
    else:   # the paused size: no decision, so the state is the same carried out or not
        run.intent = Intent(replicas, now, {k: rec[k] for k in _DECISION_FIELDS}, run.decider.state.events(), None)
        out.desired, out.current = replicas, current
    return out


def act(out: Outcome, ctx: SyncContext, now: float) -> None:
    """Step 5, after the intent was persisted: set the size; carried out → the
    carried state is kept and the intent cleared; failed → the intent stays pending
    and the next sync resolves it by observing (a write whose reply was lost may
    have taken effect)."""
    run, rec = out.run, out.record
    desired = out.desired
    direction = "up" if desired > out.current else "down"
    try:
        if out.members is not None:
            change = run.spec.target.delete_members(list(out.members), desired)
        else:
            change = run.spec.target.set_size(desired)
    except ProviderError as e:
        if not _commit(run):   # abandoned at its deadline: the intent stays, resolved by observing
            return
        _fail(run, ctx, rec, e, now)
        out.failed = True
        if ctx.metrics is not None:
            ctx.metrics.scale_actions.labels(run.spec.name, direction, "failed").inc()
        if out.notice is not None:
            _shadow.notify(run, dataclasses.replace(out.notice, kind="failed", error=str(e)))
        return
    except Exception as e:  # noqa: BLE001
        if not _commit(run):
            return
        rec["action"] = "failed"
        rec["error"] = plugin_failed(run.spec, e)
        out.failed = True
        return
    if not _commit(run):
        return
    run.applied = {"time": now, "record": run.intent.record}
    run.intent = None
    run.failures = 0
    run.writes += 1
    run.dirty = True
    rec["action"] = "applied"
    if change is not None and getattr(change, "size", desired) != desired:
        rec["size"] = change.size
    if change is not None and getattr(change, "note", None):
        rec["note"] = change.note
    if ctx.metrics is not None:
        ctx.metrics.scale_actions.labels(run.spec.name, direction, "applied").inc()
        sel = rec.get("scale_in")
        if isinstance(sel, dict):
            _count_scale_in(ctx.metrics, run.spec.name, sel, out.current - desired)
    if out.notice is not None:
        _shadow.notify(run, out.notice if change is None or getattr(change, "size", desired) == desired
                       else dataclasses.replace(out.notice, desired=change.size))


def _count_scale_in(metrics: Any, target: str, sel: dict, removed: int) -> None:
    """``scalebridge_scale_in_members_total``: the members a scale-in carried out removed,
    by why each was chosen; those the provider chose (a partial selection, or a provider
    that sets the size) as ``provider``."""
    select = str(sel.get("select"))
    named = list(sel.get("members") or ()) if sel.get("how") == "delete_members" else []
    why = sel.get("why") or {}
    for name in named[:removed]:
        metrics.scale_in_members.labels(target, select, str(why.get(name, select))).inc()
    rest = removed - min(len(named), removed)
    if rest > 0:
        metrics.scale_in_members.labels(target, select, "provider").inc(rest)


def sync_target(run: TargetRun, now: float, ctx: SyncContext) -> tuple[dict, bool]:
    """One whole sync of one target (decide, persist the intent, act): its audit
    record and whether it failed. The loop does the same for many targets at once,
    persisting all their intents in one transaction."""
    out = decide_target(run, now, ctx)
    if out.desired is not None:
        ctx.store.save([run.row()])
        act(out, ctx, now)
    return out.record, out.failed
