"""Processes for the in-process targets (``processes: N``).

An in-process provider's targets (``Provider.blocking`` False: the ``sim``
provider, the test suite's fake) cost CPU, not waiting, and one Python process
uses one core. With ``processes: N`` the controller forks ``N − 1`` shard
processes once its targets are built and their state loaded; each shard owns
every ``N``-th target of the providers that allow it (:attr:`Provider.shardable`)
and the controller keeps the first share. Every sync, the controller sends each
shard the sync time and whether it holds the leader election, syncs its own
targets meanwhile, and collects the shards' audit records.

A shard runs exactly the controller's sync on its own targets — decide, persist
the intents in one transaction, write, persist the rows — on its own connection
to the same SQLite file (WAL, so the transactions of several processes
serialize), so a restart, a kill at any point, a write in flight, the dry run
and the leader's standby behave as they do in one process. The controller writes
the audit log and the metrics from the records the shards send back, and the
virtual clock's position.

A shard that dies (killed, out of memory) stops the controller with an error:
its targets' state is persisted up to their last sync, and a restarted
controller continues them from the store. A shard whose controller dies is
killed with it (Linux: ``PR_SET_PDEATHSIG``), and otherwise exits once it finds
the pipe closed.

This is the sharding of kube-controller-manager's HPA controller across workers
(``--concurrent-horizontal-pod-autoscaler-syncs``), made of processes because the
decisions are Python: threads would share one core.
"""
from __future__ import annotations

import gc
import logging
import os
import signal
import time
from multiprocessing.connection import Connection, Pipe
from typing import TYPE_CHECKING, Any, Optional

from ..errors import ScalebridgeError
from ..providers import Elector
from .logs import log
from .store import SQLiteStore

if TYPE_CHECKING:
    from .loop import Controller
    from .reconcile import TargetRun

__all__ = ["Shard", "ShardError", "start_shards", "shardable"]

#: how long a stopping controller waits for a shard to exit before killing it
EXIT_SECONDS = 15.0


class ShardError(ScalebridgeError):
    """A shard process died or broke the pipe: the controller stops."""


class _Forwarded(Elector):
    """The controller's election as of the sync it sent."""

    def __init__(self) -> None:
        self.leader = True

    def is_leader(self) -> bool:
        return self.leader


def shardable(controller: "Controller", run: "TargetRun") -> bool:
    """Whether ``run``'s target may be synced in a shard: an in-process provider
    that says its targets do not share anything across processes."""
    p = controller.runtime.providers.get(run.spec.provider_key)
    return p is not None and not getattr(p, "blocking", True) and bool(getattr(p, "shardable", False))


class Shard:
    """The controller's end of one shard process."""

    def __init__(self, pid: int, conn: Connection, names: list[str]):
        self.pid = pid
        self.conn = conn
        self.names = names
        self.busy = False

    def send_sync(self, now: float, leader: bool, claimed: bool = True, resets: Optional[list] = None) -> None:
        """Start a sync at ``now``: whether the controller may write targets
        (``leader``), whether it holds the store's claim (a shard persists only
        then), and the targets of this shard whose state to forget first."""
        try:
            self.conn.send(("sync", now, leader, claimed, resets or []))
        except (OSError, EOFError) as e:
            raise ShardError(f"shard process {self.pid} is gone ({e}); its {len(self.names)} targets are "
                             "persisted up to their last sync") from None
        self.busy = True

    def receive(self) -> tuple[list, list, list]:
        try:
            out = self.conn.recv()
        except (OSError, EOFError):
            raise ShardError(f"shard process {self.pid} died during a sync; its {len(self.names)} targets "
                             "are persisted up to their last sync") from None
        finally:
            self.busy = False
        if out[0] == "error":
            raise ShardError(f"shard process {self.pid} failed: {out[1]}")
        return out[1], out[2], out[3]

    def stop(self) -> None:
        """Ask the shard to stop a sync in progress (SIGTERM: it finishes the target
        it is on, persists, answers)."""
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        try:
            if self.busy:
                self.stop()
                self.conn.recv()   # the stopped sync's answer, persisted
            self.conn.send(("exit",))
        except (OSError, EOFError):
            pass
        deadline = time.monotonic() + EXIT_SECONDS
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                break
            time.sleep(0.01)
        else:
            log(logging.WARNING, "a shard process did not exit: killing it", pid=self.pid)
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.conn.close()


def start_shards(controller: "Controller", processes: int) -> list[Shard]:
    """Fork the shards of ``controller`` (its targets built, their state loaded,
    no thread of its own started yet) and leave it with its own share of targets."""
    runs = [run for run in controller.runs if shardable(controller, run)]
    if processes < 2 or len(runs) < 2:
        return []
    store = controller.store
    if not isinstance(store, SQLiteStore):
        raise ShardError("processes: more than one process needs the SQLite state store (a file all of them open)")
    n = min(processes, len(runs))
    shares = [runs[k::n] for k in range(n)]
    shards: list[Shard] = []
    gc.freeze()   # what was built stays out of the collector: the processes share its pages longer
    for share in shares[1:]:
        mine, theirs = Pipe()
        pid = os.fork()
        if pid == 0:   # the shard: never returns into the caller
            code = 0
            try:
                mine.close()
                for s in shards:
                    s.conn.close()
                _serve(controller, share, theirs)
            except BaseException:   # noqa: BLE001 — the controller sees the pipe close
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        shards.append(Shard(pid, mine, [run.spec.name for run in share]))
    given = {id(run) for share in shares[1:] for run in share}
    controller.runs = [run for run in controller.runs if id(run) not in given]
    return shards


def _die_with_parent() -> None:
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):   # not Linux: the closed pipe ends the shard instead
        pass


def _serve(controller: "Controller", runs: list, conn: Connection) -> None:
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:   # the controller died before the call above
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the controller forwards a stop as SIGTERM
    signal.signal(signal.SIGTERM, lambda *_: controller.stop_event.set())
    inherited = controller.store   # the controller's connection: never used (nor closed) here
    store = SQLiteStore(inherited.path)
    elector = _Forwarded()
    controller.runs = runs
    controller.store = controller.ctx.store = store
    controller.elector = controller.ctx.elector = elector
    controller.audit = None
    controller.metrics = controller.ctx.metrics = None
    controller.start_time = None   # the controller persists the virtual clock's position
    controller._shards = []
    controller._pool = None
    gc.enable()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] != "sync":
            return
        _, now, leader, claimed, resets = msg
        elector.leader = leader
        if claimed and not controller.claimed:   # the controller took over the store: continue it
            controller.claimed = True
            controller._load(recover=True)
        for name in resets:
            controller.reset(name)
        answer: tuple[Any, ...]
        gc.disable()   # as Controller.sync
        try:
            report = controller._sync_own(now)
            answer = ("ok", report.records, report.failed, report.skipped)
        except Exception as e:  # noqa: BLE001 — reported to the controller, which stops
            answer = ("error", f"{type(e).__name__}: {e}")
        finally:
            gc.enable()
        controller.stop_event.clear()
        conn.send(answer)


def count_records(metrics: Optional[Any], records: list[dict]) -> None:
    """The metrics a shard's target syncs would have counted in the controller."""
    if metrics is None:
        return
    for rec in records:
        name = rec["target"]
        if rec["desired_replicas"] is not None:
            metrics.current.labels(name).set(rec["current_replicas"])
            metrics.desired.labels(name).set(rec["desired_replicas"])
            metrics.decisions.labels(name, rec["reason"]).inc()
        if rec.get("fallback") is not None:
            metrics.fallback_active.labels(name).set(1 if rec["fallback"] else 0)
        metrics.paused.labels(name).set(1 if rec["action"] == "paused" else 0)
        kind = rec.get("error_kind")
        if kind:
            metrics.provider_errors.labels(rec["provider"], kind).inc()
        if rec["action"] == "applied" and rec["current_replicas"] is not None:
            direction = "up" if rec["desired_replicas"] > rec["current_replicas"] else "down"
            metrics.scale_actions.labels(name, direction, "applied").inc()
