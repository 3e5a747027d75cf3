"""Pacing per provider instance: token buckets for reads and writes.

A bucket holds up to ``burst`` tokens and refills at ``rate`` per second, as
client-go's ``flowcontrol.NewTokenBucketRateLimiter(qps, burst)`` does
(kubernetes/client-go ``util/flowcontrol/throttle.go``; the defaults QPS 5 and
burst 10 are ``rest.Config``'s). Taking never blocks: a sync that finds no token
left skips the call (``paced``) and the next sync decides afresh, so pending
changes coalesce to the latest desired size. A provider that answered
"throttled" holds its buckets empty until the time it asked for.

The times are the controller's monotonic readings (:meth:`Clock.monotonic`): a
bucket refilled on the wall clock gives nothing for an hour after NTP steps the
clock back an hour.
"""
from __future__ import annotations

import math
import threading
from typing import Optional

from ..providers import Pacing

__all__ = ["TokenBucket", "ProviderPacing"]


class TokenBucket:
    __slots__ = ("rate", "burst", "tokens", "stamp", "held_until", "_lock")

    def __init__(self, rate: float, burst: int, now: float):
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self.tokens = float(self.burst)
        self.stamp = now
        self.held_until = -math.inf
        self._lock = threading.Lock()

    def _refill(self, now: float) -> None:
        if now < self.stamp and now >= self.held_until:
            # a reading before the last one (a caller's clock that stepped back): refill from
            # here rather than waiting for the old reading to come round again
            self.stamp = now
            return
        if now > self.stamp:
            if self.rate == math.inf:
                self.tokens = float(self.burst)
            else:
                self.tokens = min(float(self.burst), self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now

    def take(self, now: float, n: float = 1.0) -> bool:
        """Take ``n`` tokens if there are that many (and the bucket is not held)."""
        with self._lock:
            if now < self.held_until:
                return False
            self._refill(now)
            if self.tokens + 1e-9 >= n:
                self.tokens -= n
                return True
            return False

    def hold(self, until: float) -> None:
        """No tokens before ``until`` (a provider's Retry-After); refills from then."""
        with self._lock:
            if until > self.held_until:
                self.held_until = until
                self.tokens = 0.0
                self.stamp = max(self.stamp, until)

    def available(self, now: float) -> float:
        with self._lock:
            if now < self.held_until:
                return 0.0
            self._refill(now)
            return self.tokens


class ProviderPacing:
    """The read and write buckets of one provider instance, and the throttling its
    server asked for last (:attr:`throttle`: what the audit says of a held call)."""
    __slots__ = ("reads", "writes", "throttle")

    def __init__(self, pacing: Pacing, now: float):
        self.reads = TokenBucket(pacing.reads_per_second, pacing.read_burst, now)
        self.writes = TokenBucket(pacing.writes_per_second, pacing.write_burst, now)
        #: {"retry_after": what the server asked for (s), "held_seconds": the hold (s),
        #: "until": its end (monotonic)} of the last hold, or None
        self.throttle: Optional[dict] = None

    def hold(self, until: float, *, retry_after: Optional[float] = None, held: Optional[float] = None) -> None:
        """No call before ``until`` (a ``Retry-After``, bounded by the caller)."""
        self.reads.hold(until)
        self.writes.hold(until)
        if self.throttle is None or until >= self.throttle["until"]:
            self.throttle = {"retry_after": retry_after, "held_seconds": held, "until": until}

    def held(self, now: float) -> Optional[dict]:
        """The throttle holding this provider's calls at ``now``, or None."""
        t = self.throttle
        return t if t is not None and now < t["until"] else None
