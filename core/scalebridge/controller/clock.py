"""The controller's clock, injectable: real time by default, a virtual one for
``--clock virtual`` (sleeping is instant), a stepped one for tests.

A clock has two readings:

- :meth:`Clock.now` — wall time, seconds since the Unix epoch: the decision's
  ``now``, the audit's ``time``, the times written in a Lease or a state row;
- :meth:`Clock.monotonic` — seconds on a clock that never steps: what periods,
  pacing buckets, backoff, refusal re-checks and lease expiries are measured on.

The system's wall clock steps when NTP corrects it (an hour back, a leap, a VM
resumed from a snapshot); its monotonic clock does not (``CLOCK_MONOTONIC``,
https://man7.org/linux/man-pages/man2/clock_gettime.2.html). A loop that waits
for the wall clock to reach a time waits an hour after a step back of an hour;
scheduled on the monotonic clock, a step costs at most one period — as Go's
``time.Now()`` carries a monotonic reading that client-go's timers and lease
checks use (https://pkg.go.dev/time#hdr-Monotonic_Clocks).

``sleep`` returns early (False) when the run is asked to stop.
"""
from __future__ import annotations

import threading
import time
from typing import Optional

__all__ = ["Clock", "RealClock", "VirtualClock", "SteppedClock"]


class Clock:
    """What the loop needs of time."""

    virtual = False

    def now(self) -> float:
        """Wall time (seconds since the epoch)."""
        raise NotImplementedError

    def monotonic(self) -> float:
        """Seconds on a clock that never steps (any origin). Default: :meth:`now`, for
        a clock that does not step (a test's own)."""
        return self.now()

    def sleep(self, seconds: float, stop: Optional[threading.Event] = None) -> bool:
        """Wait ``seconds``; False when ``stop`` was set first."""
        raise NotImplementedError


class RealClock(Clock):
    """The system's clocks: wall time for ``now``, ``CLOCK_MONOTONIC`` for periods;
    sleeping waits on the stop event, so a signal ends it at once."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, stop: Optional[threading.Event] = None) -> bool:
        if seconds <= 0:
            return not (stop is not None and stop.is_set())
        if stop is None:
            time.sleep(seconds)
            return True
        return not stop.wait(seconds)


class SteppedClock(RealClock):
    """Real time whose wall reading a test steps (:meth:`step`), as NTP steps the
    system's: the monotonic reading and sleeping stay real. What the loop does on
    a host whose clock is corrected by an hour, in process."""

    def __init__(self, offset: float = 0.0):
        self.offset = float(offset)
        self.steps: list[tuple[float, float]] = []   # (monotonic time, step) of each step

    def now(self) -> float:
        return time.time() + self.offset

    def step(self, seconds: float) -> None:
        """Move the wall reading by ``seconds`` (negative: back)."""
        self.offset += seconds
        self.steps.append((time.monotonic(), seconds))


class VirtualClock(Clock):
    """Time that moves only when slept: the sync loop replays as fast as it computes
    (``--clock virtual``), and a test steps it by hand (:meth:`advance`). Its wall
    and monotonic readings are the same: nothing steps it but the run."""

    virtual = True

    def __init__(self, start: float = 0.0):
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    def set(self, t: float) -> None:
        with self._lock:
            self._now = float(t)

    def sleep(self, seconds: float, stop: Optional[threading.Event] = None) -> bool:
        if stop is not None and stop.is_set():
            return False
        if seconds > 0:
            self.advance(seconds)
        return True
