"""The sync loop: every ``sync_period_seconds`` on the controller's clock, one sync
of every target (:func:`~scalebridge.controller.reconcile.sync_target`) — a cloud
provider's targets on a bounded pool of threads, an in-process provider's
(``Provider.blocking`` False) on the loop's own thread — then one transaction
persisting every target's row.

- The clock is injectable: real time by default — periods, pacing and backoff on its
  monotonic reading, decisions stamped with its wall time, so a step of the wall
  clock costs no period (:mod:`.clock`); ``--clock virtual`` starts at the
  earliest :attr:`Target.start_time` (or resumes from the position the store
  recorded) and sleeps instantly, until ``--until`` of simulated time.
- Pacing per provider instance (token buckets from :attr:`Provider.pacing`); a
  target that failed with a retryable error waits out its backoff; targets synced
  least recently go first, so a paced target is not starved.
- A failing target never stops the others, nor does a slow one: a cloud target's
  reads and decision must finish within half a period of their start, its write
  within a period (:data:`READ_DEADLINE_PERIODS`, :data:`WRITE_DEADLINE_PERIODS`),
  else the loop abandons that sync (audited ``failed``) and the call returns on its
  worker to change nothing. On a virtual clock there is no deadline: a replay does
  not depend on how fast its host answers.
- :meth:`Controller.request_stop` (SIGTERM, SIGINT): no new target sync starts;
  the ones in flight (a write) get :attr:`Controller.grace_seconds`
  (``shutdown_grace_seconds``); a write still running then is left to the next start
  (:attr:`Controller.left_in_flight`, its intent persisted); what finished is persisted.

As the HPA controller's resync loop (kubernetes/kubernetes
``pkg/controller/podautoscaler/horizontal.go``, ``Run`` and ``worker``) and the
cluster-autoscaler's ``RunOnce`` every ``--scan-interval``.
"""
from __future__ import annotations

import gc
import logging
import math
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union


from ..cliargs import say
from ..engine import Decider
from ..errors import ScalebridgeError
from ..providers import Elector, ErrorKind, ProviderError, RefError, observes_in_batches
from .audit import AuditError, AuditLog
from .backoff import Backoff
from .clock import Clock, RealClock, VirtualClock
from .configfile import DEFAULT_SHUTDOWN_GRACE_SECONDS, DEFAULT_WORKERS, ConfigError, load_config
from .runtime import Runtime
from .build import build
from .clamp import describe_clamped
from .election import AlwaysLeader, elector_key, make_elector
from .logs import log
from .pacing import ProviderPacing
from .reconcile import (STORE_ERROR_KIND, Outcome, SyncContext, TargetRun, abandoned_record, act, decide_target,
                        not_written, recovered_record)
from .store import Holder, StateStore, StoreClaimed, StoreError, StoreLost, open_store

__all__ = ["Controller", "SyncReport", "build_controller", "VIRTUAL_CLOCK_META", "AUDITED_META",
           "StoreClaimed", "AuditError"]

VIRTUAL_CLOCK_META = "virtual_clock"
#: the time of the last sync whose audit records were written: a write carried out
#: after it (persisted with its record) is audited as recovered at the next start
AUDITED_META = "audited_through"
#: the error of a decision whose write a stop (SIGTERM, SIGINT) left undone
STOPPED = "stopped before the write (resolved by observing the target on the next start)"
#: how long a stop waits for target syncs (writes) already running (``shutdown_grace_seconds``)
GRACE_SECONDS = DEFAULT_SHUTDOWN_GRACE_SECONDS
#: a target's reads and decision, on a worker, must finish within this share of the sync
#: period from their start, and its write within this one, else the loop abandons them
#: (a hanging call fails its own target only; the others keep their period)
READ_DEADLINE_PERIODS = 0.5
WRITE_DEADLINE_PERIODS = 1.0
#: how long closing waits for providers a call left running still holds (then it goes on
#: closing them on a daemon thread: the stop is not held past its grace)
CLOSE_WAIT_SECONDS = 0.1
#: backoff of a failing target: from one sync period, doubling, up to 20 periods
BACKOFF_CAP_PERIODS = 20
#: a change of (wall − monotonic) between two syncs at least this large is a step of
#: the wall clock (NTP slews smaller errors, at most 0.5 ms a second)
WALL_STEP_SECONDS = 1.0


@dataclass
class SyncReport:
    """One sync of every target: the audit records and the failed targets."""
    now: float
    records: list[dict] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)   # backing off, or stopped before their turn
    seconds: float = 0.0

    def actions(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.records:
            out[r["action"]] = out.get(r["action"], 0) + 1
        return out


def _run_of(x: Union[TargetRun, Outcome]) -> TargetRun:
    return x if isinstance(x, TargetRun) else x.run


class _Pool:
    """Daemon worker threads (a call hung past its deadline or the grace never keeps
    the process from exiting). A worker stuck in a call the loop abandoned is
    replaced, so the pool keeps its size, up to as many replacements as workers; the
    stuck one leaves once its call returns."""

    def __init__(self, workers: int):
        self.workers = workers
        self._q: "queue.SimpleQueue" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set = set()
        self._retiring: set = set()
        self._made = 0
        for _ in range(workers):
            self._spawn()

    def _spawn(self) -> None:
        t = threading.Thread(target=self._work, name=f"scalebridge-sync-{self._made}", daemon=True)
        self._made += 1
        self._threads.add(t)
        t.start()

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            task = self._q.get()
            if task is None:
                return
            task()
            if me in self._retiring:
                with self._lock:
                    self._retiring.discard(me)
                    self._threads.discard(me)
                return

    def replace(self, thread: Optional[threading.Thread]) -> bool:
        """``thread`` is stuck in a call the loop no longer waits for: another worker
        takes its place (False when too many are stuck already)."""
        with self._lock:
            if thread is None or thread not in self._threads or thread in self._retiring:
                return False
            if len(self._retiring) >= self.workers:
                return False
            self._retiring.add(thread)
            self._spawn()
            return True

    @property
    def stuck(self) -> int:
        return len(self._retiring)

    def submit(self, fn: Callable[[], None]) -> None:
        self._q.put(fn)

    def close(self) -> None:
        with self._lock:
            n = len(self._threads)
        for _ in range(n):
            self._q.put(None)


class _Slot:
    """One target's sync (or write) submitted to the pool, and where it stands:
    started (a monotonic second), done, abandoned by the loop at its deadline or the
    end of the grace (then nothing it does afterwards is kept), committed (past its
    calls, deciding in memory: the loop waits for it), cancelled before it started."""
    __slots__ = ("item", "run", "lock", "started", "thread", "done", "abandoned", "committed", "cancelled",
                 "result", "why")

    def __init__(self, item: Any, run: TargetRun):
        self.item, self.run = item, run
        self.lock = threading.Lock()
        self.started: Optional[float] = None
        self.thread: Optional[threading.Thread] = None
        self.done = self.abandoned = self.committed = self.cancelled = False
        self.result: Any = None
        self.why = ""

    def commit(self) -> bool:
        """Called by the sync itself once its calls have returned, before it changes
        anything: False when the loop has abandoned it (it then changes nothing)."""
        with self.lock:
            if self.abandoned:
                return False
            self.committed = True
            return True


class Controller:
    """Runs the syncs of one run configuration's targets."""

    grace_seconds = GRACE_SECONDS

    def __init__(self, runtime: Runtime, store: StateStore, *, clock: Optional[Clock] = None,
                 dry_run: bool = False, audit: Optional[AuditLog] = None, metrics: Any = None,
                 elector: Optional[Elector] = None, workers: Optional[int] = None, seed: Optional[int] = None,
                 until: Optional[float] = None, claimed: bool = True):
        self.runtime = runtime
        self.store = store
        self._once = False   # run(once=True): no per-target deadline
        #: whether this controller holds the store's claim (the one writer of its state);
        #: a standby (``--leader-elect``) tries again every sync
        self.claimed = claimed
        #: audit records of writes a controller that died carried out, written at the next sync
        self.recovered: list[dict] = []
        self.last_report: Optional[SyncReport] = None
        self.clock = clock or RealClock()
        self.audit = audit
        self.metrics = metrics
        self.elector = elector or AlwaysLeader()
        self.period = runtime.sync_period_seconds
        self.stop_event = threading.Event()
        self._wake = threading.Event()   # set by a stop or a reload request: ends a wait between syncs
        self.until = until
        self._seed, self._workers = seed, workers
        self.start_time: Optional[float] = None
        mono = self.clock.monotonic()
        pacing = {key: ProviderPacing(getattr(p, "pacing", None) or _default_pacing(), mono)
                  for key, p in runtime.providers.items()}
        self.ctx = SyncContext(pacing, Backoff(self.period, self.period * BACKOFF_CAP_PERIODS, seed=seed),
                               store, _Writer(self), dry_run=dry_run, metrics=metrics)
        self.runs: list[TargetRun] = []
        for spec in runtime.targets:
            self.runs.append(_new_run(spec, self.clock.virtual))
        self._load(recover=claimed)
        self._was_leader = True   # the state was just loaded
        self.syncs = 0
        self._wall_offset: Optional[float] = None   # wall − monotonic at the last sync
        self._closed = False
        self._reload_requested = False
        #: provider instances that outlive a reload (the leader election's, the state
        #: store's: made from the first configuration), closed at the end
        self.keep: list = []
        self._pool: Optional[_Pool] = None
        # the pool is for providers whose calls wait on a cloud (Provider.blocking); an
        # in-process provider's targets are synced on this thread
        self._blocking = frozenset(key for key, p in runtime.providers.items() if getattr(p, "blocking", True))
        pooled = sum(1 for run in self.runs if run.spec.provider_key in self._blocking)
        n = workers or runtime.loaded.config.workers or min(DEFAULT_WORKERS, max(1, pooled))
        # a cloud target is synced on a worker however few there are: there its calls have a
        # deadline, and a stop its grace
        self._pool = _Pool(n) if pooled >= 1 else None
        self.grace_seconds = float(runtime.loaded.config.shutdown_grace_seconds)
        #: the targets whose write a stop left running past the grace (resolved at the next start)
        self.left_in_flight: list[str] = []

    # ------------------------------------------------------------------ state

    def _load(self, *, recover: bool = False) -> None:
        """Every configured target's row (rows of targets no longer configured are
        left alone); ``recover``: the writes carried out after the last audited sync
        are audited at the next sync (``recovered: true``)."""
        rows = self.store.load_all()
        now = self.clock.now()
        audited = self.store.get_meta(AUDITED_META) if recover else None
        audited = float(audited) if isinstance(audited, (int, float)) else -math.inf
        for run in self.runs:
            row = rows.get(run.spec.name)
            if row is None:
                continue
            applied = row.applied if row.problem is None else None
            if recover and isinstance(applied, dict) and isinstance(applied.get("time"), (int, float)) \
                    and applied["time"] > audited and isinstance(applied.get("record"), dict):
                self.recovered.append(recovered_record(run.spec, float(applied["time"]), applied["record"]))
            if row.problem is None and row.policy_hash != run.spec.policy_hash:
                log(logging.INFO, "policy changed: starting from empty state", target=run.spec.name)
                run.dirty = True
                continue
            _said_clamped(run, run.load(row, now), now)
            if run.problem is not None:
                log(logging.ERROR, "persisted state unreadable: the target fails until it is reset",
                    target=run.spec.name, error=run.problem)

    def persist(self, meta: Optional[dict] = None) -> int:
        """Save every changed target's row (and ``meta``) in one transaction; raises
        :class:`StoreError` — the rows stay changed and are tried again next sync."""
        dirty = [run for run in self.runs if run.dirty and run.problem is None]
        rows = [run.row() for run in dirty]
        if rows or meta:
            self.store.save(rows, meta)
        for run in dirty:   # clean only once saved: a failed save is tried again next sync
            run.dirty = False
        return len(rows)

    def _store_failed(self, operation: str, e: StoreError) -> None:
        log(logging.ERROR, f"the state store failed: {operation}", error=str(e))
        if self.metrics is not None:
            self.metrics.store_errors.labels(operation).inc()

    def _requests(self) -> None:
        """``scalebridge state reset`` run against this controller's store: carried
        out here, at the sync boundary, by the one writer of the state."""
        try:
            names = self.store.take_resets()
        except StoreError as e:
            self._store_failed("read the requests", e)
            return
        for name in names:
            if not self.reset(name):
                try:
                    self.store.delete(name)   # a target no longer configured
                except StoreError as e:
                    self._store_failed("forget a target's state", e)

    def reset(self, name: str) -> bool:
        """Forget one target's history; False when no configured target has that name."""
        for run in self.runs:
            if run.spec.name == name:
                run.reset()
                log(logging.INFO, "state reset: the target starts from empty state", target=name)
                return True
        return False

    def _verify_store(self, now: float) -> None:
        """The state file and its lock, checked each sync by their holder: a state file
        deleted under it is written again from memory — every target's state, the
        pauses — with an error line; a lock file deleted or replaced is locked again.
        A state file replaced by another file, or a lock another process took, raises
        :class:`StoreLost` (the loop stops, exit 1)."""
        try:
            said = self.store.verify()
        except StoreError as e:
            self._store_failed("check the state file", e)
            return
        if "lock" in said:
            log(logging.ERROR, "the state's lock file was deleted or replaced while the controller ran: locked "
                               "again (no second controller could claim the state meanwhile)",
                file=getattr(self.store, "lock_path", self.store.where))
            if self.metrics is not None:
                self.metrics.store_errors.labels("lock file lost").inc()
        if "deleted" not in said:
            return
        if self.metrics is not None:
            self.metrics.store_errors.labels("state file deleted").inc()
        rows = [run.row() for run in self.runs if run.problem is None]
        try:
            self.store.recreate()
            self.store.save(rows, {AUDITED_META: now})
            for name, pause in self.ctx.pauses.items():
                self.store.set_pause(name, pause.replicas, pause.since)
        except StoreError as e:   # tried again next sync: the file is still missing
            log(logging.ERROR, "the state file was deleted while the controller ran and cannot be written again: "
                               "the state stays in memory", file=self.store.where, error=str(e))
            return
        for run in self.runs:
            if run.problem is None:
                run.dirty = False
        log(logging.ERROR, "the state file was deleted while the controller ran: written again from the "
                           "controller's memory", file=self.store.where, targets=len(rows),
            pauses=len(self.ctx.pauses))

    def _try_claim(self) -> None:
        """A standby for the store's claim takes it once the holder is gone (the OS
        released its lock), and continues the holder's state."""
        try:
            holder = self.store.claim(Holder.this_process())
        except StoreError as e:
            self._store_failed("claim the state", e)
            return
        if holder is None:
            log(logging.INFO, "claimed the state store: this controller writes it now", store=self.store.where)
            self.claimed = True
            self._load(recover=True)

    # ------------------------------------------------------------------ syncing

    def _deadline(self, periods: float) -> float:
        """A target's deadline in seconds: ``periods`` sync periods on the real clock;
        none on a virtual clock, whose period is simulated time — a replay does not
        depend on how fast its host answers — nor for ``--once``: one sync has no
        period to keep (each call is bounded by its client's timeout)."""
        return math.inf if self.clock.virtual or self._once else self.period * periods

    def _map(self, fn: Callable[[Any], Any], items: list, skipped: list, *, budget: float,
             abandoned: Callable[["_Slot"], Any]) -> list:
        """``fn`` over ``items`` (target runs, or outcomes to write): a cloud provider's
        on the pool, each with ``budget`` seconds from its start, an in-process one's
        here meanwhile. A pooled call still running at its deadline — or when the
        shutdown grace ends — is abandoned: the loop stops waiting for it, ``abandoned``
        gives its result, and the call returns on its own thread to change nothing.
        After a stop, items not started are listed in ``skipped``."""
        pool = self._pool
        pooled = [x for x in items if _run_of(x).spec.provider_key in self._blocking] if pool is not None else []
        results: list = []
        if not pooled:
            self._inline(fn, items, results, skipped)
            return results
        inline = [x for x in items if _run_of(x).spec.provider_key not in self._blocking] \
            if len(pooled) < len(items) else []
        cond = threading.Condition()
        left = [len(pooled)]
        slots = [_Slot(x, _run_of(x)) for x in pooled]
        for slot in slots:
            slot.run.busy = slot
            pool.submit(lambda slot=slot: self._task(slot, fn, cond, left))
        self._inline(fn, inline, results, skipped)   # while the pool waits on the network
        self._wait(slots, cond, left, budget)
        for slot in slots:
            if slot.cancelled:
                skipped.append(slot.item)
            elif slot.abandoned:
                r = abandoned(slot)
                if r is not None:
                    results.append(r)
            else:
                results.append(slot.result)
        return results

    def _task(self, slot: "_Slot", fn: Callable[[Any], Any], cond: threading.Condition, left: list) -> None:
        run = slot.run
        with slot.lock:
            if not slot.cancelled and self.stop_event.is_set():   # stopped before its turn
                slot.cancelled = True
                mine = True
            else:
                mine = False
            if not slot.cancelled:
                slot.started = time.monotonic()
                slot.thread = threading.current_thread()
        if slot.cancelled:
            if mine:
                if run.busy is slot:
                    run.busy = None
                with cond:
                    left[0] -= 1
                    cond.notify_all()
            return
        try:
            result = fn(slot.item)
        except BaseException as e:  # noqa: BLE001 — fn catches its own; a worker never dies of one
            log(logging.ERROR, "a target sync raised", target=run.spec.name, error=f"{type(e).__name__}: {e}")
            result = None
        with slot.lock:
            slot.result = result
            slot.done = True
            abandoned = slot.abandoned
        if run.busy is slot:
            run.busy = None
        if abandoned:
            log(logging.INFO, "a target sync abandoned at its deadline has returned; the target is synced again "
                              "from its next sync", target=run.spec.name,
                seconds=round(time.monotonic() - (slot.started or 0.0), 3))
        with cond:
            if not abandoned:
                left[0] -= 1
            cond.notify_all()

    def _wait(self, slots: list, cond: threading.Condition, left: list, budget: float) -> None:
        """Until every slot is done, or abandoned at its deadline (``budget`` seconds
        after it started; a slot past its calls — committed — is waited for), or at
        the end of the grace once stopped (a slot not started by then is cancelled)."""
        stop = self.stop_event
        stop_at: Optional[float] = None
        scan_every = min(0.05, budget / 10) if budget > 0 else 0.05
        with cond:
            while left[0] > 0:
                t = time.monotonic()
                if stop_at is None and stop.is_set():
                    stop_at = t + self.grace_seconds
                nearest = t + scan_every
                for slot in slots:
                    with slot.lock:
                        if slot.done or slot.abandoned or slot.cancelled or slot.committed:
                            continue
                        if slot.started is None:
                            if stop_at is not None and t >= stop_at:
                                slot.cancelled = True
                                left[0] -= 1
                                if slot.run.busy is slot:
                                    slot.run.busy = None
                            continue
                        due = slot.started + budget
                        if t >= due or (stop_at is not None and t >= stop_at):
                            slot.abandoned = True
                            slot.why = "deadline" if t >= due else "grace"
                            left[0] -= 1
                        else:
                            nearest = min(nearest, due, stop_at if stop_at is not None else due)
                            continue
                    if self._pool is not None and not self._pool.replace(slot.thread):
                        log(logging.WARNING, "too many target syncs are stuck in calls past their deadline: the "
                                             "worker pool runs short until they return", stuck=self._pool.stuck)
                if left[0] <= 0:
                    break
                cond.wait(max(0.001, min(scan_every, nearest - t)))

    def _abandoned_sync(self, slot: "_Slot", now: float, mono: float) -> Outcome:
        run = slot.run
        if slot.why == "grace":
            why = (f"stopped: the target's sync was still running when the {self.grace_seconds:g}-s shutdown grace "
                   "ended")
        else:
            why = (f"the target's sync did not finish within its deadline ({self.period * READ_DEADLINE_PERIODS:g} s, "
                   f"half the {self.period:g}-s sync period): abandoned, its call left to return on its own")
            self._backoff(run, mono)
        log(logging.WARNING, why, target=run.spec.name)
        return abandoned_record(run, now, why)

    def _abandoned_write(self, slot: "_Slot", mono: float) -> None:
        o: Outcome = slot.item
        rec = o.record
        rec["action"], rec["error_kind"] = "failed", "transient"
        if slot.why == "grace":
            rec["error"] = (f"stopped during the write, past the {self.grace_seconds:g}-s shutdown grace: its intent "
                            "is persisted, and the next start resolves it by observing the target")
            self.left_in_flight.append(o.run.spec.name)
        else:
            rec["error"] = (f"the write did not finish within its deadline ({self.period * WRITE_DEADLINE_PERIODS:g} s, "
                            "one sync period): its outcome is resolved by observing the target once the call returns")
            self._backoff(o.run, mono)
        o.failed = True
        log(logging.WARNING, rec["error"], target=o.run.spec.name)

    def _inline(self, fn: Callable[[Any], Any], runs: list, results: list, skipped: list) -> None:
        stop = self.stop_event
        for run in runs:
            if stop.is_set():
                skipped.append(run)
                continue
            results.append(fn(run))

    def sync(self, now: Optional[float] = None, mono: Optional[float] = None) -> SyncReport:
        """One sync of every target not backing off: decide each, persist every
        write's intent in one transaction, carry the writes out, then persist every
        target's row in one transaction. ``now`` is the decision's wall time and
        ``mono`` the monotonic reading pacing and backoff are measured on (both from
        the clock when ``now`` is not given; a caller that gives ``now`` alone drives
        time itself, and it is both)."""
        # the cyclic garbage collector off for the sync: a sync allocates many short-lived
        # objects (observations, records, rows), and each full collection would scan every
        # target's history; reference counting frees them, the collector runs after
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            if now is None:
                now, mono = self.clock.now(), self.clock.monotonic()
            elif mono is None:
                mono = now
            return self._sync(now, mono)
        finally:
            if gc_was_on:
                gc.enable()

    def _stepped(self, now: float, mono: float) -> None:
        """A step of the wall clock against the monotonic one, said once; a step back
        clamps every target's state times now ahead of the wall clock (:mod:`.clamp`)."""
        offset = now - mono
        last, self._wall_offset = self._wall_offset, offset
        if last is None or abs(offset - last) < WALL_STEP_SECONDS:
            return
        step = offset - last
        log(logging.WARNING, f"the wall clock stepped {'back' if step < 0 else 'forward'} "
                             f"{_duration(round(abs(step)))} (the monotonic clock did not): the sync period goes on; "
                             "decisions are stamped with the new wall time", step_seconds=round(step, 3))
        if step < 0:
            for run in self.runs:
                _said_clamped(run, run.clamp(now), now)

    def _sync(self, now: float, mono: float) -> SyncReport:
        if not self.clock.virtual:
            self._stepped(now, mono)
        t0 = time.perf_counter()
        if not self.claimed:
            self._try_claim()
        if self.claimed:
            self._verify_store(now)
            self._requests()
        report = self._sync_targets(now, mono)
        # the audit after the rows are persisted (its records can say a persist failed);
        # a write carried out and persisted but not yet audited when the process dies is
        # audited at the next start, from its row (AUDITED_META)
        if self.audit is not None:
            self.audit.write(report.records)
        if self.claimed and any(r["action"] == "applied" for r in report.records):
            try:
                self.store.save([], {AUDITED_META: now})
            except StoreError as e:
                self._store_failed("record the audited sync", e)
        report.seconds = time.perf_counter() - t0
        return report

    def _sync_targets(self, now: float, mono: float) -> SyncReport:
        """One sync of every target: decide, persist the intents, write, persist the rows."""
        t0 = time.perf_counter()
        report = SyncReport(now)
        self.ctx.mono = mono
        try:
            ctx_pauses = self.store.pauses()
        except StoreError as e:   # keep the pauses read last: a pause is never lifted by a failing read
            self._store_failed("read the pauses", e)
            ctx_pauses = self.ctx.pauses
        self.ctx.pauses = ctx_pauses
        # a target whose sync the loop abandoned, its call not returned yet, is not synced again meanwhile
        busy = [r for r in self.runs if r.busy is not None and r.ended is None]
        due = [r for r in self.runs if r.retry_at <= mono and r.ended is None and r.busy is None]
        report.skipped.extend(r.spec.name for r in self.runs
                              if r.retry_at > mono and r.ended is None and r.busy is None)
        due.sort(key=lambda r: r.last_synced)
        ctx = self.ctx
        leader = self.elector.is_leader() and self.claimed
        if leader and not self._was_leader:
            # a standby that becomes the leader continues the previous leader's windows,
            # rate periods and cooldowns from the shared store, not its own decisions
            log(logging.INFO, "became the leader: reloading the decision state")
            self._load(recover=True)
        self._was_leader = leader
        if self.metrics is not None:
            self.metrics.leader.set(1 if leader else 0)
            for key, pace in ctx.pacing.items():   # what is left of each provider's Retry-After hold
                if pace.throttle is not None:
                    self.metrics.throttle_hold.labels(key).set(max(0.0, pace.throttle["until"] - mono))
        skipped: list = []
        self._observe_batches(due, now)
        outcomes = self._map(lambda run: decide_target(run, now, ctx), due, skipped,
                             budget=self._deadline(READ_DEADLINE_PERIODS),
                             abandoned=lambda slot: self._abandoned_sync(slot, now, mono))
        outcomes += [self._still_running(run, now) for run in busy]
        writes = [o for o in outcomes if o.desired is not None]
        if writes:
            try:
                self.store.save([o.run.row() for o in writes])   # the intents, before any write
            except StoreError as e:   # no write without its intent persisted: none this sync
                self._store_failed("persist the intents", e)
                for o in writes:
                    self._not_written(o, e, mono)
                writes = []
            if writes and not self.stop_event.is_set():
                self._map(lambda o: act(o, ctx, now), writes, skipped, budget=self._deadline(WRITE_DEADLINE_PERIODS),
                          abandoned=lambda slot: self._abandoned_write(slot, mono))
        report.skipped.extend(_run_of(x).spec.name for x in skipped)
        records = self.recovered
        self.recovered = []
        for o in outcomes:
            rec = o.record
            if rec["action"] is None:   # a write a stop left undone: its intent is resolved on the next start
                rec["action"], rec["error"] = "failed", STOPPED
            if o.recovered is not None:
                records.append(o.recovered)
            records.append(rec)
        meta = None
        if self.clock.virtual and self.start_time is not None:
            meta = {VIRTUAL_CLOCK_META: {"start": self.start_time, "next": now + self.period}}
        if self.claimed:
            try:
                self.persist(meta)
            except StoreError as e:   # the rows stay changed in memory: the next sync saves them
                self._store_failed("persist the state", e)
                for o in outcomes:
                    if o.run.dirty and not o.failed:
                        self._not_persisted(o, e, mono)
        for o in outcomes:
            if o.failed:
                report.failed.append((o.record["target"], o.record["error"] or o.record["action"]))
        report.records = records
        self.syncs += 1
        report.seconds = time.perf_counter() - t0
        for name, why in report.failed:
            log(logging.WARNING, "target failed", target=name, error=why)
        for rec in records:
            if rec["action"] == "applied":
                log(logging.INFO, "scaled", target=rec["target"], current=rec["current_replicas"],
                    desired=rec["desired_replicas"], reason=rec["reason"])
        for o in outcomes:
            if o.run.ended is not None and o.record["action"] == "paused":
                log(logging.INFO, "target ended: it is synced no more", target=o.run.spec.name, why=o.run.ended)
        return report

    def _observe_batches(self, due: list, now: float) -> None:
        """The due targets of each provider that observes in batches
        (:meth:`~scalebridge.providers.Provider.observe_many`), observed at once: each
        run keeps its own entry for its sync. A batch that fails as a whole leaves its
        targets to observe themselves, one by one, each failure its own."""
        groups: dict[int, list] = {}
        for run in due:
            spec = run.spec
            if run.problem is None and observes_in_batches(spec.provider):
                groups.setdefault(id(spec.provider), []).append(run)
        for runs in groups.values():
            provider = runs[0].spec.provider
            batch = [(r.spec.target, [q for q in r.spec.queries if q.name not in r.spec.metric_sources])
                     for r in runs]
            try:
                got = provider.observe_many(batch, now)
            except ProviderError as e:
                if e.kind in (ErrorKind.THROTTLED, ErrorKind.TRANSIENT):
                    # the API asked to wait, or is failing: every target of the batch fails with
                    # it (and backs off, its Retry-After honoured) — reading them one by one now
                    # would multiply the calls on a server that is already refusing them
                    for run in runs:
                        run.observed = (now, e)
                    continue
                log(logging.WARNING, "a batched observe failed: the targets are observed one by one",
                    provider=runs[0].spec.provider_key, error=str(e))
                continue
            except Exception as e:  # noqa: BLE001 — a provider's bug: every target observes on its own
                log(logging.WARNING, "a batched observe failed: the targets are observed one by one",
                    provider=runs[0].spec.provider_key, error=f"{type(e).__name__}: {e}")
                continue
            if len(got) != len(runs):
                log(logging.WARNING, "a batched observe answered for the wrong number of targets: the targets are "
                    "observed one by one", provider=runs[0].spec.provider_key, targets=len(runs), answers=len(got))
                continue
            for run, entry in zip(runs, got):
                run.observed = (now, entry) if entry is not None else None


    def _still_running(self, run: TargetRun, now: float) -> Outcome:
        slot = run.busy
        since = time.monotonic() - slot.started if slot is not None and slot.started is not None else 0.0
        return abandoned_record(run, now, f"its previous sync has been in a call for {since:.3g} s, past its "
                                          "deadline: not synced again until the call returns")

    def _backoff(self, run: TargetRun, mono: float) -> None:
        run.failures += 1
        run.retry_at = mono + self.ctx.backoff.delay(run.failures, None)

    def _not_written(self, o: Outcome, e: StoreError, mono: float) -> None:
        """A write whose intent could not be persisted: not made; the decision stays
        one not carried out (recommendations and sizes only)."""
        not_written(o.run)
        o.desired = None
        rec = o.record
        rec["action"] = "failed"
        rec["error"] = f"the state store failed, so the size was not set: {e}"
        rec["error_kind"] = STORE_ERROR_KIND
        o.failed = True
        self._backoff(o.run, mono)

    def _not_persisted(self, o: Outcome, e: StoreError, mono: float) -> None:
        """A sync whose row could not be persisted: what was done stands (an applied
        write was made, its intent persisted before it), the record says the state
        was not saved, and the target fails."""
        rec = o.record
        if rec["action"] not in ("applied",):
            rec["action"] = "failed"
        rec["error"] = f"the state store failed, so this sync's state is not persisted (tried again next sync): {e}"
        rec["error_kind"] = STORE_ERROR_KIND
        o.failed = True
        self._backoff(o.run, mono)

    def request_reload(self) -> None:
        """Reload the configuration between syncs (SIGHUP): at once when the loop is
        waiting for the next sync, which then comes when it was due."""
        self._reload_requested = True
        self._wake.set()

    def reload(self) -> bool:
        """The configuration file read and built again, as Prometheus reloads on
        SIGHUP: added targets start (from their persisted state, if any), removed
        ones stop, a target whose policy (or semantics) changed starts from empty
        state as the protocol says, every other one keeps its state — its windows,
        intent, backoff and, for a target living in this process, its world
        (:meth:`~scalebridge.providers.Target.snapshot`). A configuration that does
        not validate is refused, its problems logged, and the running one kept.
        False when refused."""
        path = self.runtime.loaded.path
        try:
            loaded = load_config(path)
            runtime = build(loaded, clock="virtual" if self.clock.virtual else "real")
        except ScalebridgeError as e:
            for line in getattr(e, "problems", None) or [str(e)]:
                log(logging.ERROR, "reload refused: the configuration does not validate; the running one is kept",
                    problem=line)
            return False
        except OSError as e:
            log(logging.ERROR, "reload refused: the configuration cannot be read; the running one is kept",
                error=f"{path}: {e.strerror or e}")
            return False
        if runtime.state != self.runtime.state:
            runtime.close()
            log(logging.ERROR, "reload refused: `state:` cannot change while running (restart the controller to "
                               "move the state); the running configuration is kept", config=str(path))
            return False
        old = {run.spec.name: run for run in self.runs}
        rows: Optional[dict] = None
        runs: list[TargetRun] = []
        for spec in runtime.targets:
            run = _new_run(spec, self.clock.virtual)
            prev = old.pop(spec.name, None)
            if prev is not None and prev.spec.policy_hash == spec.policy_hash:
                _carry(prev, run)
            elif prev is not None:
                log(logging.INFO, "policy changed: starting from empty state", target=spec.name)
                run.dirty = True
            else:
                if rows is None:
                    rows = self.store.load_all()
                row = rows.get(spec.name)
                if row is not None and row.problem is None and row.policy_hash == spec.policy_hash:
                    _said_clamped(run, run.load(row, self.clock.now()), self.clock.now())
                log(logging.INFO, "target added", target=spec.name)
            runs.append(run)
        for name, run in old.items():
            log(logging.INFO, "target removed: it is synced no more", target=name)
            if self.metrics is not None:
                for gauge in (self.metrics.current, self.metrics.desired):
                    try:
                        gauge.remove(name)
                    except KeyError:
                        pass
        # what the configuration reloaded away holds — its providers' sessions and
        # connections, its metric sources, its target handles — released now, but the
        # providers still serving the election or the state store
        self.runtime.close(keep=tuple(self.keep))
        if gc.get_freeze_count():   # `scalebridge run` froze the first build: let what was reloaded away go
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        mono = self.clock.monotonic()
        self.runtime = runtime
        self.runs = runs
        self.period = runtime.sync_period_seconds
        self.ctx.pacing = {key: ProviderPacing(getattr(p, "pacing", None) or _default_pacing(), mono)
                           for key, p in runtime.providers.items()}
        self.ctx.backoff = Backoff(self.period, self.period * BACKOFF_CAP_PERIODS, seed=self._seed)
        self._blocking = frozenset(key for key, p in runtime.providers.items() if getattr(p, "blocking", True))
        pooled = sum(1 for run in runs if run.spec.provider_key in self._blocking)
        if self._pool is None and pooled >= 1:
            n = self._workers or runtime.loaded.config.workers or min(DEFAULT_WORKERS, pooled)
            self._pool = _Pool(n)
        self.grace_seconds = float(runtime.loaded.config.shutdown_grace_seconds)
        log(logging.INFO, "reloaded the configuration", config=str(path), targets=len(runs), period=self.period)
        return True

    def request_stop(self) -> None:
        """Start no new target sync; the loop persists and returns."""
        self.stop_event.set()
        self._wake.set()

    def run(self, *, once: bool = False) -> int:
        """Sync every period until stopped (or ``until`` of virtual time); ``once``:
        one sync. 0 when stopped or done; with ``once``, 1 when a target failed."""
        if once:
            self._once = True
            try:
                report = self.sync()
            except StoreError as e:
                log(logging.ERROR, "the state store failed: nothing was written", error=str(e))
                say("run", f"the state store failed: {e}")
                return 1
            except AuditError as e:
                return _audit_failed(e)
            except StoreLost as e:
                return _store_lost(e)
            self.last_report = report
            return 1 if report.failed else 0
        clock = self.clock
        end = self.start_time + self.until if self.until is not None and self.start_time is not None else None
        if end is not None and clock.virtual and clock.now() >= end - 1e-9:
            at = clock.now() - self.start_time
            say("run", f"the state in {self.store.where} is already at {_duration(at)} of simulated time, at or "
                       f"past --until {_duration(self.until)} (a position from the start of the load, not a "
                       "duration): give a later --until to go on, or another --state to start over")
            return 0
        while not self.stop_event.is_set():
            if self._reload_requested:   # SIGHUP: at the sync boundary
                self._reload_requested = False
                self.reload()
            now, mono = clock.now(), clock.monotonic()
            if end is not None and now >= end - 1e-9:
                break
            try:
                self.last_report = self.sync(now, mono)
            except StoreError as e:
                # no write without its intent persisted: this sync's writes were not made;
                # the targets' state stays in memory and is saved by the next sync that can
                log(logging.ERROR, "the state store failed: no write this sync", error=str(e))
            except AuditError as e:
                return _audit_failed(e)
            except StoreLost as e:
                return _store_lost(e)
            if self.stop_event.is_set():
                break
            # the next sync one period after this one began, on the monotonic clock: a step
            # of the wall clock (NTP) neither holds the loop back nor makes it sync twice
            next_m = mono + self.period
            if clock.virtual:
                clock.sleep(next_m - clock.monotonic(), self.stop_event)
            else:
                while not self.stop_event.is_set() and clock.monotonic() < next_m:
                    self._wake.clear()
                    if self._reload_requested:   # SIGHUP while waiting: reloaded now, the period kept
                        self._reload_requested = False
                        self.reload()
                        next_m = mono + self.period
                        continue
                    clock.sleep(next_m - clock.monotonic(), self._wake)
        return 0

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pool is not None:
            self._pool.close()
        try:
            self.elector.stop()
        except Exception:  # noqa: BLE001
            pass
        for thing in (self.audit, self.metrics):
            if thing is not None:
                thing.close()

        def release() -> None:
            self.runtime.close()
            for p in self.keep:
                if not any(p is q for q in self.runtime.providers.values()):
                    try:
                        p.close()
                    except Exception:  # noqa: BLE001
                        pass
        if any(run.busy is not None for run in self.runs):
            # a call left running past its deadline or the grace may hold its provider
            # (a lock, a connection): closing waits for it no longer than this
            t = threading.Thread(target=release, name="scalebridge-close", daemon=True)
            t.start()
            t.join(CLOSE_WAIT_SECONDS)
        else:
            release()
        self.store.close()


def _said_clamped(run: TargetRun, clamped: list, now: float) -> None:
    if clamped:
        log(logging.WARNING, "the target's state held times ahead of now (the clock was ahead when they were "
                             "written, or has stepped back since): clamped to now", target=run.spec.name,
            now=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), clamped=describe_clamped(clamped))


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and abs(seconds / size - round(seconds / size)) < 1e-9:
            return f"{round(seconds / size)}{unit}"
    return f"{seconds:g}s"


def _carry(prev: TargetRun, run: TargetRun) -> None:
    """What a reloaded target keeps from its run before: its decision state, pending
    intent, backoff, and its in-process world."""
    run.decider.state = prev.decider.state
    for name in ("intent", "applied", "problem", "failures", "retry_at", "last_synced", "dirty", "writes", "ended"):
        setattr(run, name, getattr(prev, name))
    snapshot = prev.spec.target.snapshot()
    if snapshot is not None:
        run.spec.target.restore(snapshot)


def _new_run(spec: Any, virtual: bool) -> TargetRun:
    """A target's run as the controller starts it: its decider, and the target told
    the policy and the clock."""
    decider = Decider(spec.policy, spec.semantics, spec.settings)
    spec.target.use_policy(decider.policy, decider.settings)
    spec.target.use_clock(virtual)
    return TargetRun(spec, decider)


class _Writer(Elector):
    """Whether this controller may write targets now: it holds the store's claim and
    the leader election."""

    def __init__(self, controller: "Controller"):
        self.controller = controller

    def is_leader(self) -> bool:
        c = self.controller
        return c.claimed and c.elector.is_leader()


def _audit_failed(e: AuditError) -> int:
    log(logging.ERROR, "the audit log failed: stopping (the state is persisted)", error=str(e))
    say("run", f"the audit log failed, so the controller stops (the state is persisted): {e}")
    return 1


def _store_lost(e: StoreLost) -> int:
    log(logging.ERROR, "the state store was lost under the controller: stopping", error=str(e))
    say("run", f"stopped: {e}")
    return 1


def _default_pacing():
    from ..providers import Pacing
    return Pacing()


def build_controller(config: Union[str, Any], *, clock: Union[str, Clock, None] = "real", state: Optional[str] = None,
                     dry_run: bool = False, audit: Union[str, AuditLog, None] = None, metrics: Any = None,
                     leader_elect: bool = False, elector: Optional[Elector] = None, until: Optional[float] = None,
                     seed: Optional[int] = None, workers: Optional[int] = None,
                     audit_options: Optional[dict] = None) -> Controller:
    """A controller for the run configuration at ``config`` (a path, or a loaded
    configuration). ``clock``: ``"real"``, ``"virtual"`` or a clock object; ``state``:
    ``--state PATH``; ``audit``: a path, ``-`` or an :class:`AuditLog` (made with
    ``audit_options``: ``max_bytes``, ``keep``)."""
    gc_was_on = gc.isenabled()
    gc.disable()   # building many targets allocates only what lives on: nothing to collect
    try:
        return _build_controller(config, clock=clock, state=state, dry_run=dry_run, audit=audit, metrics=metrics,
                                 leader_elect=leader_elect, elector=elector, until=until, seed=seed,
                                 workers=workers, audit_options=audit_options or {})
    finally:
        if gc_was_on:
            gc.enable()


def _build_controller(config, *, clock, state, dry_run, audit, metrics, leader_elect, elector, until, seed,
                      workers, audit_options) -> Controller:
    loaded = load_config(config) if isinstance(config, str) or hasattr(config, "__fspath__") else config
    virtual = clock == "virtual"
    runtime = build(loaded, clock="virtual" if virtual else "real")
    clk: Clock
    if virtual:
        clk = VirtualClock(0.0)   # placed once the store says where it stopped
    elif clock is not None and not isinstance(clock, str):
        clk = clock
    else:
        clk = RealClock()
    try:
        if elector is None and leader_elect:   # before the store: a bad flag creates no state file
            elector = make_elector(runtime.providers, loaded.config.leader_election, clk)
        store = open_store(runtime.state, runtime.providers, override=state, base=loaded.path.parent)
    except RefError as e:   # an option of a provider's own store
        runtime.close()
        key = e.key.split(".")
        raise ConfigError([f"{loaded.where('state', *(key[1:] if key[0] == 'state' else key))}: {e.message}"]) \
            from None
    except BaseException:
        runtime.close()
        raise
    claimed = True
    try:
        holder = store.claim(Holder.this_process())
        if holder is not None:
            if not leader_elect:
                raise StoreClaimed(store.where, holder)
            claimed = False
            log(logging.INFO, "the state store is held by another controller: standing by until it is released",
                store=store.where, holder=holder.describe())
    except BaseException:
        store.close()
        runtime.close()
        raise
    try:
        start_time = None
        if virtual:
            recorded = store.get_meta(VIRTUAL_CLOCK_META)
            starts = [s.target.start_time for s in runtime.targets if s.target.start_time is not None]
            start_time = float(min(starts)) if starts else 0.0
            if isinstance(recorded, dict) and "next" in recorded:
                start_time = float(recorded.get("start", start_time))
                clk.set(float(recorded["next"]))  # type: ignore[attr-defined]
            else:
                clk.set(start_time)  # type: ignore[attr-defined]
        elif getattr(clk, "virtual", False):
            start_time = clk.now()
        if elector is not None:
            elector.start()
        if audit is None and loaded.config.audit:   # the configuration's `audit:`, relative to it
            audit = str(loaded.path.parent / os.path.expanduser(loaded.config.audit))
        log_ = AuditLog(audit, **audit_options) if isinstance(audit, str) else audit
        c = Controller(runtime, store, clock=clk, dry_run=dry_run, audit=log_, metrics=metrics, elector=elector,
                       workers=workers, seed=seed, until=until, claimed=claimed)
        c.start_time = start_time
        kept = [elector_key(runtime.providers, loaded.config.leader_election) if leader_elect else None,
                runtime.state.get("provider") if isinstance(runtime.state, dict) else None]
        c.keep = [runtime.providers[k] for k in dict.fromkeys(kept) if k is not None and k in runtime.providers]
        return c
    except BaseException:
        store.close()
        runtime.close()
        raise
