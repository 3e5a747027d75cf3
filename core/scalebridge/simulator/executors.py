"""Where independent replays run: in this process, in local worker processes, or
on a Dask cluster (``dask.distributed``, the optional extra ``scalebridge[dask]``).

Each task is a picklable ``(function, argument)`` whose result depends on its
argument only, so results are the same wherever they run; :func:`run_tasks`
returns them in the tasks' order. Local processes are *spawned* (a forked child
would inherit a progress bar's thread and locks); on a cluster the tasks are
submitted with ``Client.map(…, pure=False)`` and gathered as they finish — the
workers need scalebridge installed, and nothing else of this machine. ``import
scalebridge`` never imports dask: only ``--scheduler`` does.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..errors import ScalebridgeError

__all__ = ["run_tasks", "SchedulerError"]


class SchedulerError(ScalebridgeError):
    """The Dask scheduler cannot be used (not installed, not reachable)."""


def run_tasks(fn: Callable[[Any], Any], args: Sequence[Any], *, workers: int = 1, scheduler: Optional[str] = None,
              done: Optional[Callable[[int, Any], None]] = None) -> list[Any]:
    """``[fn(a) for a in args]``, computed in this process (``workers`` 1, no
    ``scheduler``), in ``workers`` spawned processes, or on the Dask scheduler at
    ``scheduler`` (``tcp://host:8786``). ``done(i, result)`` is called as each
    finishes (for a progress bar). ``fn`` must be a module-level function."""
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
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed as completed

        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(args)), mp_context=ctx) as pool:
            futures = {pool.submit(fn, a): i for i, a in enumerate(args)}
            for fut in completed(futures):
                i = futures[fut]
                out[i] = fut.result()
                if done is not None:
                    done(i, out[i])
        return out
    for i, a in enumerate(args):
        out[i] = fn(a)
        if done is not None:
            done(i, out[i])
    return out
