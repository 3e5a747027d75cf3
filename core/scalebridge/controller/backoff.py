"""Exponential backoff with jitter for a target whose provider failed with a
retryable error (``throttled``, ``transient``).

The n-th consecutive failure waits ``min(cap, base × 2^(n-1))``, jittered to a
uniform draw in its upper half ("equal jitter",
https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/), and
never less than the provider's ``Retry-After``. Delays are added to the controller's
monotonic reading (a wall-clock step does not stretch them). The random source is seedable,
so a test (and a replay) sees the same delays.
"""
from __future__ import annotations

import random
from typing import Optional

__all__ = ["Backoff"]


class Backoff:
    def __init__(self, base: float, cap: float, *, seed: Optional[int] = None):
        if base <= 0 or cap < base:
            raise ValueError("backoff needs 0 < base <= cap")
        self.base = float(base)
        self.cap = float(cap)
        self._rng = random.Random(seed)

    def delay(self, failures: int, retry_after: Optional[float] = None) -> float:
        """Seconds to wait after the ``failures``-th consecutive failure (1, 2, …)."""
        d = min(self.cap, self.base * 2.0 ** max(0, failures - 1))
        d = d / 2 + self._rng.random() * d / 2
        if retry_after is not None and retry_after > d:
            d = float(retry_after)
        return d
