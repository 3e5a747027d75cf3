"""Where independent replays run: in this process, in local worker processes, or
on a Dask cluster (``dask.distributed``, the optional extra ``scalebridge[dask]``).

Each task is a picklable ``(function, argument)`` whose result depends on its
argument only, so results are the same wherever they run; :func:`run_tasks`
returns them in the tasks' order. Local processes are *forked* where that is safe
— on Linux, while this process runs no other thread (a forked child would inherit
a progress bar's thread and the locks it holds) — so they start in milliseconds
with everything imported and registered here (plugins included); else they are
*spawned* (a fresh interpreter imports scalebridge again). On a cluster the tasks are
submitted with ``Client.map(…, pure=False)`` and gathered as they finish — the
workers need scalebridge installed, and nothing else of this machine. ``import
scalebridge`` never imports dask: only ``--scheduler`` does.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, Sequence

from ..errors import ScalebridgeError

__all__ = ["run_tasks", "SchedulerError", "start_method", "usable_cpus"]


class SchedulerError(ScalebridgeError):
    """The Dask scheduler cannot be used (not installed, not reachable)."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, as ``taskset`` or a
    container's cpuset sets it), else the machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):   # not Linux
        return max(1, os.cpu_count() or 1)


def start_method() -> str:
    """``fork`` on Linux while this process runs one thread, else ``spawn``
    (macOS forks unsafely with its system libraries; a thread's held locks would
    stay held in a forked child)."""
    import multiprocessing
    import threading
    if sys.platform.startswith("linux") and threading.active_count() == 1 \
            and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


#: (fn, args) of the tasks forked workers run: set before the fork, so each worker has them
#: in its own memory and is sent an index, not a pickled argument (a load, a policy) per task
_INHERITED: Optional[tuple[Callable[[Any], Any], Sequence[Any]]] = None


def _call_inherited(i: int) -> Any:
    """(in a forked worker) the ``i``-th task of those it inherited."""
    fn, args = _INHERITED   # type: ignore[misc]
    return fn(args[i])


def run_tasks(fn: Callable[[Any], Any], args: Sequence[Any], *, workers: int = 1, scheduler: Optional[str] = None,
              done: Optional[Callable[[int, Any], None]] = None) -> list[Any]:
    """``[fn(a) for a in args]``, computed in this process (``workers`` 1, no
    ``scheduler``), in ``workers`` spawned processes, or on the Dask scheduler at
    ``scheduler`` (``tcp://host:8786``). ``done(i, result)`` is called as each
    finishes (for a progress bar). ``fn`` must be a module-level function. Local
    processes take the tasks in their order (:func:`start_method`); forked ones
    inherit ``fn`` and ``args`` and are sent each task's index only."""
    out: list[Any] = [None] * len(args)
    if scheduler is not None:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise SchedulerError("--scheduler needs dask.distributed: pip install 'scalebridge[dask]'") from None
        try:
            client = Client(scheduler, timeout=10, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        try:
            futures = client.map(fn, list(args), pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            with client.as_current():
                for fut in as_completed(futures):
                    i = index[fut.key]
                    out[i] = fut.result()
                    if done is not None:
                        done(i, out[i])
        finally:
            client.close()
        return out
    if workers > 1 and len(args) > 1:
        import gc
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed as completed

        global _INHERITED
        method = start_method()
        ctx = multiprocessing.get_context(method)
        if method == "fork":   # the workers inherit the tasks at the fork: each is sent its index only
            _INHERITED = (fn, args)
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(args)), mp_context=ctx) as pool:
                if method == "fork":
                    # the workers fork at the first submit: with this process's objects frozen
                    # their first full collection does not walk (and so copy, page by page)
                    # every object they inherited (gc.freeze's documented use); thawed after,
                    # unless this process had frozen objects of its own before
                    frozen_before = gc.get_freeze_count()
                    gc.freeze()
                    try:
                        futures = {pool.submit(_call_inherited, i): i for i in range(len(args))}
                    finally:
                        if not frozen_before:
                            gc.unfreeze()
                else:
                    futures = {pool.submit(fn, a): i for i, a in enumerate(args)}
                for fut in completed(futures):
                    i = futures[fut]
                    out[i] = fut.result()
                    if done is not None:
                        done(i, out[i])
        finally:
            _INHERITED = None
        return out
    for i, a in enumerate(args):
        out[i] = fn(a)
        if done is not None:
            done(i, out[i])
    return out
