"""The sync loop: every ``sync_period_seconds`` on the controller's clock, one sync
of every target (:func:`~scalebridge.controller.reconcile.sync_target`) — a cloud
provider's targets on a bounded pool of threads, an in-process provider's
(``Provider.blocking`` False) on the loop's own thread — then one transaction
persisting every target's row.

- The clock is injectable: real time by default; ``--clock virtual`` starts at the
  earliest :attr:`Target.start_time` (or resumes from the position the store
  recorded) and sleeps instantly, until ``--until`` of simulated time.
- Pacing per provider instance (token buckets from :attr:`Provider.pacing`); a
  target that failed with a retryable error waits out its backoff; targets synced
  least recently go first, so a paced target is not starved.
- A failing target never stops the others.
- :meth:`Controller.request_stop` (SIGTERM, SIGINT): no new target sync starts;
  the ones in flight (a write) get :attr:`Controller.grace_seconds`; what finished
  is persisted.

As the HPA controller's resync loop (kubernetes/kubernetes
``pkg/controller/podautoscaler/horizontal.go``, ``Run`` and ``worker``) and the
cluster-autoscaler's ``RunOnce`` every ``--scan-interval``.
"""
from __future__ import annotations

import gc
import logging
import math
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union


from ..cliargs import say
from ..engine import Decider
from ..errors import ScalebridgeError
from ..providers import Elector, RefError, observes_in_batches
from .audit import AuditError, AuditLog
from .backoff import Backoff
from .clock import Clock, RealClock, VirtualClock
from .configfile import DEFAULT_WORKERS, ConfigError, load_config
from .runtime import Runtime
from .build import build
from .election import AlwaysLeader, make_elector
from .logs import log
from .pacing import ProviderPacing
from .reconcile import (STORE_ERROR_KIND, Outcome, SyncContext, TargetRun, act, decide_target, not_written,
                        recovered_record)
from .store import Holder, StateStore, StoreClaimed, StoreError, open_store

__all__ = ["Controller", "SyncReport", "build_controller", "VIRTUAL_CLOCK_META", "AUDITED_META",
           "StoreClaimed", "AuditError"]

VIRTUAL_CLOCK_META = "virtual_clock"
#: the time of the last sync whose audit records were written: a write carried out
#: after it (persisted with its record) is audited as recovered at the next start
AUDITED_META = "audited_through"
#: the error of a decision whose write a stop (SIGTERM, SIGINT) left undone
STOPPED = "stopped before the write (resolved by observing the target on the next start)"
#: how long a stop waits for target syncs (writes) already running
GRACE_SECONDS = 10.0
#: backoff of a failing target: from one sync period, doubling, up to 20 periods
BACKOFF_CAP_PERIODS = 20


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
    """Daemon worker threads (a write hung past the grace period never keeps the
    process from exiting)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._q: "queue.SimpleQueue" = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, name=f"scalebridge-sync-{i}", daemon=True)
                         for i in range(workers)]
        for t in self._threads:
            t.start()

    def _work(self) -> None:
        while True:
            task = self._q.get()
            if task is None:
                return
            task()

    def submit(self, fn: Callable[[], None]) -> None:
        self._q.put(fn)

    def close(self) -> None:
        for _ in self._threads:
            self._q.put(None)


class Controller:
    """Runs the syncs of one run configuration's targets."""

    grace_seconds = GRACE_SECONDS

    def __init__(self, runtime: Runtime, store: StateStore, *, clock: Optional[Clock] = None,
                 dry_run: bool = False, audit: Optional[AuditLog] = None, metrics: Any = None,
                 elector: Optional[Elector] = None, workers: Optional[int] = None, seed: Optional[int] = None,
                 until: Optional[float] = None, claimed: bool = True):
        self.runtime = runtime
        self.store = store
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
        self.until = until
        self._seed, self._workers = seed, workers
        self.start_time: Optional[float] = None
        now = self.clock.now()
        pacing = {key: ProviderPacing(getattr(p, "pacing", None) or _default_pacing(), now)
                  for key, p in runtime.providers.items()}
        self.ctx = SyncContext(pacing, Backoff(self.period, self.period * BACKOFF_CAP_PERIODS, seed=seed),
                               store, _Writer(self), dry_run=dry_run, metrics=metrics)
        self.runs: list[TargetRun] = []
        for spec in runtime.targets:
            self.runs.append(_new_run(spec, self.clock.virtual))
        self._load(recover=claimed)
        self._was_leader = True   # the state was just loaded
        self.syncs = 0
        self._closed = False
        self._reload_requested = False
        self._retired: list[Runtime] = []   # configurations reloaded away: their providers closed at the end
        self._pool: Optional[_Pool] = None
        # the pool is for providers whose calls wait on a cloud (Provider.blocking); an
        # in-process provider's targets are synced on this thread
        self._blocking = frozenset(key for key, p in runtime.providers.items() if getattr(p, "blocking", True))
        pooled = sum(1 for run in self.runs if run.spec.provider_key in self._blocking)
        n = workers or runtime.loaded.config.workers or min(DEFAULT_WORKERS, max(1, pooled))
        self._pool = _Pool(n) if n > 1 and pooled > 1 else None

    # ------------------------------------------------------------------ state

    def _load(self, *, recover: bool = False) -> None:
        """Every configured target's row (rows of targets no longer configured are
        left alone); ``recover``: the writes carried out after the last audited sync
        are audited at the next sync (``recovered: true``)."""
        rows = self.store.load_all()
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
            run.load(row)
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

    def _map(self, fn: Callable[[TargetRun], Any], runs: list, skipped: list) -> list:
        """``fn`` over ``runs`` on the pool (in order of ``runs`` within each chunk);
        after a stop, runs not started are listed in ``skipped`` and the ones
        running get :attr:`grace_seconds`."""
        stop = self.stop_event
        results: list = []
        pooled = [x for x in runs if _run_of(x).spec.provider_key in self._blocking] \
            if self._pool is not None and len(runs) > 1 else []
        if not pooled:
            self._inline(fn, runs, results, skipped)
            return results
        inline = [x for x in runs if _run_of(x).spec.provider_key not in self._blocking] \
            if len(pooled) < len(runs) else []
        chunk = max(1, math.ceil(len(pooled) / (self._pool.workers * 4)))
        chunks = [pooled[i:i + chunk] for i in range(0, len(pooled), chunk)]
        left = [len(chunks)]
        lock = threading.Lock()
        done = threading.Event()

        def work(part: list) -> None:
            try:
                for run in part:
                    if stop.is_set():
                        skipped.append(run)
                        continue
                    results.append(fn(run))
            finally:
                with lock:
                    left[0] -= 1
                    if left[0] == 0:
                        done.set()

        for part in chunks:
            self._pool.submit(lambda part=part: work(part))
        self._inline(fn, inline, results, skipped)   # while the pool waits on the network
        while not done.wait(0.05):
            if stop.is_set():
                if not done.wait(self.grace_seconds):
                    log(logging.WARNING, "stopping with target syncs still running", grace_seconds=self.grace_seconds)
                break
        return list(results)

    def _inline(self, fn: Callable[[Any], Any], runs: list, results: list, skipped: list) -> None:
        stop = self.stop_event
        for run in runs:
            if stop.is_set():
                skipped.append(run)
                continue
            results.append(fn(run))

    def sync(self, now: Optional[float] = None) -> SyncReport:
        """One sync of every target not backing off: decide each, persist every
        write's intent in one transaction, carry the writes out, then persist every
        target's row in one transaction."""
        # the cyclic garbage collector off for the sync: a sync allocates many short-lived
        # objects (observations, records, rows), and each full collection would scan every
        # target's history; reference counting frees them, the collector runs after
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            return self._sync(now)
        finally:
            if gc_was_on:
                gc.enable()

    def _sync(self, now: Optional[float]) -> SyncReport:
        now = self.clock.now() if now is None else now
        t0 = time.perf_counter()
        if not self.claimed:
            self._try_claim()
        if self.claimed:
            self._requests()
        report = self._sync_targets(now)
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

    def _sync_targets(self, now: float) -> SyncReport:
        """One sync of every target: decide, persist the intents, write, persist the rows."""
        t0 = time.perf_counter()
        report = SyncReport(now)
        try:
            ctx_pauses = self.store.pauses()
        except StoreError as e:   # keep the pauses read last: a pause is never lifted by a failing read
            self._store_failed("read the pauses", e)
            ctx_pauses = self.ctx.pauses
        self.ctx.pauses = ctx_pauses
        due = [r for r in self.runs if r.retry_at <= now and r.ended is None]
        report.skipped.extend(r.spec.name for r in self.runs if r.retry_at > now and r.ended is None)
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
        skipped: list = []
        self._observe_batches(due, now)
        outcomes = self._map(lambda run: decide_target(run, now, ctx), due, skipped)
        writes = [o for o in outcomes if o.desired is not None]
        if writes:
            try:
                self.store.save([o.run.row() for o in writes])   # the intents, before any write
            except StoreError as e:   # no write without its intent persisted: none this sync
                self._store_failed("persist the intents", e)
                for o in writes:
                    self._not_written(o, e, now)
                writes = []
            if writes and not self.stop_event.is_set():
                self._map(lambda o: act(o, ctx, now), writes, skipped)
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
                        self._not_persisted(o, e, now)
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

    def _backoff(self, run: TargetRun, now: float) -> None:
        run.failures += 1
        run.retry_at = now + self.ctx.backoff.delay(run.failures, None)

    def _not_written(self, o: Outcome, e: StoreError, now: float) -> None:
        """A write whose intent could not be persisted: not made; the decision stays
        one not carried out (recommendations and sizes only)."""
        not_written(o.run)
        o.desired = None
        rec = o.record
        rec["action"] = "failed"
        rec["error"] = f"the state store failed, so the size was not set: {e}"
        rec["error_kind"] = STORE_ERROR_KIND
        o.failed = True
        self._backoff(o.run, now)

    def _not_persisted(self, o: Outcome, e: StoreError, now: float) -> None:
        """A sync whose row could not be persisted: what was done stands (an applied
        write was made, its intent persisted before it), the record says the state
        was not saved, and the target fails."""
        rec = o.record
        if rec["action"] not in ("applied",):
            rec["action"] = "failed"
        rec["error"] = f"the state store failed, so this sync's state is not persisted (tried again next sync): {e}"
        rec["error_kind"] = STORE_ERROR_KIND
        o.failed = True
        self._backoff(o.run, now)

    def request_reload(self) -> None:
        """Reload the configuration at the next sync boundary (SIGHUP)."""
        self._reload_requested = True

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
                    run.load(row)
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
        for run in self.runs:   # the handles reloaded away (the providers may still serve the election)
            try:
                run.spec.target.close()
            except Exception:  # noqa: BLE001 — closing never fails a run
                pass
        self._retired.append(self.runtime)
        if gc.get_freeze_count():   # `scalebridge run` froze the first build: let what was reloaded away go
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        now = self.clock.now()
        self.runtime = runtime
        self.runs = runs
        self.period = runtime.sync_period_seconds
        self.ctx.pacing = {key: ProviderPacing(getattr(p, "pacing", None) or _default_pacing(), now)
                           for key, p in runtime.providers.items()}
        self.ctx.backoff = Backoff(self.period, self.period * BACKOFF_CAP_PERIODS, seed=self._seed)
        self._blocking = frozenset(key for key, p in runtime.providers.items() if getattr(p, "blocking", True))
        pooled = sum(1 for run in runs if run.spec.provider_key in self._blocking)
        if self._pool is None and pooled > 1:
            n = self._workers or runtime.loaded.config.workers or min(DEFAULT_WORKERS, pooled)
            self._pool = _Pool(n) if n > 1 else None
        log(logging.INFO, "reloaded the configuration", config=str(path), targets=len(runs), period=self.period)
        return True

    def request_stop(self) -> None:
        """Start no new target sync; the loop persists and returns."""
        self.stop_event.set()

    def run(self, *, once: bool = False) -> int:
        """Sync every period until stopped (or ``until`` of virtual time); ``once``:
        one sync. 0 when stopped or done; with ``once``, 1 when a target failed."""
        if once:
            try:
                report = self.sync()
            except StoreError as e:
                log(logging.ERROR, "the state store failed: nothing was written", error=str(e))
                say("run", f"the state store failed: {e}")
                return 1
            except AuditError as e:
                return _audit_failed(e)
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
            now = clock.now()
            if end is not None and now >= end - 1e-9:
                break
            try:
                self.last_report = self.sync(now)
            except StoreError as e:
                # no write without its intent persisted: this sync's writes were not made;
                # the targets' state stays in memory and is saved by the next sync that can
                log(logging.ERROR, "the state store failed: no write this sync", error=str(e))
            except AuditError as e:
                return _audit_failed(e)
            if self.stop_event.is_set():
                break
            next_t = now + self.period
            if clock.virtual:
                clock.sleep(next_t - clock.now(), self.stop_event)
            else:
                while clock.now() < next_t and clock.sleep(next_t - clock.now(), self.stop_event):
                    pass
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
        self.runtime.close()
        for runtime in self._retired:
            for p in runtime.providers.values():
                try:
                    p.close()
                except Exception:  # noqa: BLE001
                    pass
        self.store.close()


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


def _default_pacing():
    from ..providers import Pacing
    return Pacing()


def build_controller(config: Union[str, Any], *, clock: Union[str, Clock, None] = "real", state: Optional[str] = None,
                     dry_run: bool = False, audit: Union[str, AuditLog, None] = None, metrics: Any = None,
                     leader_elect: bool = False, elector: Optional[Elector] = None, until: Optional[float] = None,
                     seed: Optional[int] = None, workers: Optional[int] = None) -> Controller:
    """A controller for the run configuration at ``config`` (a path, or a loaded
    configuration). ``clock``: ``"real"``, ``"virtual"`` or a clock object; ``state``:
    ``--state PATH``; ``audit``: a path, ``-`` or an :class:`AuditLog`."""
    gc_was_on = gc.isenabled()
    gc.disable()   # building many targets allocates only what lives on: nothing to collect
    try:
        return _build_controller(config, clock=clock, state=state, dry_run=dry_run, audit=audit, metrics=metrics,
                                 leader_elect=leader_elect, elector=elector, until=until, seed=seed,
                                 workers=workers)
    finally:
        if gc_was_on:
            gc.enable()


def _build_controller(config, *, clock, state, dry_run, audit, metrics, leader_elect, elector, until, seed,
                      workers) -> Controller:
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
        log_ = AuditLog(audit) if isinstance(audit, str) else audit
        c = Controller(runtime, store, clock=clk, dry_run=dry_run, audit=log_, metrics=metrics, elector=elector,
                       workers=workers, seed=seed, until=until, claimed=claimed)
        c.start_time = start_time
        return c
    except BaseException:
        store.close()
        runtime.close()
        raise
