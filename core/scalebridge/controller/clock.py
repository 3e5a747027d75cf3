"""The controller's clock, injectable: real time by default, a virtual one for
``--clock virtual`` (sleeping is instant), a manual one for tests.

``now()`` is seconds since the Unix epoch (the decision's ``now``); ``sleep``
returns early (False) when the run is asked to stop.
"""
from __future__ import annotations

import threading
import time
from typing import Optional

__all__ = ["Clock", "RealClock", "VirtualClock"]


class Clock:
    """What the loop needs of time."""

    virtual = False

    def now(self) -> float:
        raise NotImplementedError

    def sleep(self, seconds: float, stop: Optional[threading.Event] = None) -> bool:
        """Wait ``seconds``; False when ``stop`` was set first."""
        raise NotImplementedError


class RealClock(Clock):
    """Wall-clock time; sleeping waits on the stop event, so a signal ends it at once."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float, stop: Optional[threading.Event] = None) -> bool:
        if seconds <= 0:
            return not (stop is not None and stop.is_set())
        if stop is None:
            time.sleep(seconds)
            return True
        return not stop.wait(seconds)


class VirtualClock(Clock):
    """Time that moves only when slept: the sync loop replays as fast as it computes
    (``--clock virtual``), and a test steps it by hand (:meth:`advance`)."""

    virtual = True

    def __init__(self, start: float = 0.0):
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
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
