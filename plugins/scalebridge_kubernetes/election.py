"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's
``tools/leaderelection`` does it (``LeaderElector.tryAcquireOrRenew``,
k8s.io/client-go/tools/leaderelection/leaderelection.go), over the client's
``CoordinationV1Api``, on an injectable clock.

- The holder writes ``holderIdentity``, ``leaseDurationSeconds``, ``acquireTime``,
  ``renewTime`` and ``leaseTransitions`` with a PUT carrying the Lease's
  ``resourceVersion``: of two candidates only one update wins, the other gets 409.
- A candidate takes the Lease over only when the record it observed has not
  changed for ``lease_duration`` of *its own* monotonic clock (client-go's
  ``observedTime``, a Go ``time.Time`` whose monotonic reading ``Add`` and ``After``
  use: https://pkg.go.dev/time#hdr-Monotonic_Clocks). The ``renewTime`` and
  ``acquireTime`` it writes are wall time, for people (``kubectl get lease``); no
  replica compares them with its own clock, so no skew between the replicas' wall
  clocks or with the API server's matters, and a step of a replica's wall clock
  (NTP) changes nothing. What the lease does rest on is the replicas' clocks
  *running* at the same rate: a leader stops writing ``renew_deadline`` after its
  last renewal and a candidate takes over ``lease_duration`` after it last saw the
  record change, so the 5 s between them (the defaults) absorb a renewal's round
  trip and a drift of the rates (a few parts per million on NTP-disciplined
  hosts, far less than 5 s in 15 s).
- The leader renews every ``retry_period``; when no renewal succeeded for
  ``renew_deadline`` it stops being the leader (client-go's
  ``OnStoppedLeading``). As ``renew_deadline < lease_duration``, a deposed leader
  stops writing before any other replica may take over.
- :meth:`LeaseElector.stop` releases a held Lease (``ReleaseOnCancel``: an empty
  holder and a one-second duration), so the next replica takes over at once.

Defaults are client-go's and kube-controller-manager's (``--leader-elect-lease-duration``
15 s, ``--leader-elect-renew-deadline`` 10 s, ``--leader-elect-retry-period`` 2 s).
"""
from __future__ import annotations

import datetime as _dt
import random
import threading
from typing import Any, Optional

from scalebridge.errors import ScalebridgeError
from scalebridge.providers import Elector, ErrorKind, ProviderError

LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
#: wait.JitterUntil's factor for candidates (leaderelection.go, JitterFactor)
JITTER_FACTOR = 1.2


def _micro(t: float) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc)


class LeaseElector(Elector):
    """One replica's campaign for the Lease ``namespace``/``name`` as ``identity``.

    ``clock`` has ``now()`` (wall seconds, written in the Lease), ``monotonic()``
    (what the lease is timed on; a clock without it is timed on ``now()``) and
    ``sleep(seconds, stop_event)``. With
    ``background`` (the default on a real clock) a thread campaigns every retry
    period; without it each :meth:`is_leader` call first runs the attempt that is
    due (a virtual clock, tests). ``events`` records ``(time, "acquired"|"renewed"|
    "lost"|"released")`` for inspection (times on the monotonic reading)."""

    def __init__(self, client: Any, namespace: str, name: str, identity: str, clock: Any, *,
                 lease_duration: float = LEASE_DURATION, renew_deadline: float = RENEW_DEADLINE,
                 retry_period: float = RETRY_PERIOD, background: Optional[bool] = None,
                 rng: Optional[random.Random] = None):
        if not identity:
            raise ScalebridgeError("leader election: the identity must not be empty")
        if lease_duration <= renew_deadline:
            raise ScalebridgeError("leader election: the lease duration must be greater than the renew deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ScalebridgeError("leader election: the renew deadline must be greater than "
                                   f"{JITTER_FACTOR} × the retry period")
        self.client, self.namespace, self.name, self.identity = client, namespace, name, identity
        self.clock = clock
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.background = (not getattr(clock, "virtual", False)) if background is None else background
        self.rng = rng or random.Random()
        self._lease: Any = None             # the V1Lease last read or written (its resourceVersion)
        self._observed_rv: Optional[str] = None
        self._observed_holder: Optional[str] = None
        self._observed_time: float = float("-inf")
        self._last_renew: Optional[float] = None
        self._next_attempt = float("-inf")
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.events: list[tuple[float, str]] = []
        #: every attempt as (time, held the Lease afterwards)
        self.attempts: list[tuple[float, bool]] = []

    # -- the record -------------------------------------------------------------------
    def _observe(self, lease: Any, now: float) -> None:
        rv = lease.metadata.resource_version
        if rv != self._observed_rv:
            self._observed_rv = rv
            self._observed_holder = lease.spec.holder_identity if lease.spec else None
            self._observed_time = now
        self._lease = lease

    def _held_by_me(self) -> bool:
        return self._observed_holder == self.identity

    def _valid(self, now: float) -> bool:
        duration = self.lease_duration
        if self._lease is not None and self._lease.spec is not None and self._lease.spec.lease_duration_seconds:
            duration = float(self._lease.spec.lease_duration_seconds)
        return self._observed_time + duration > now

    def _body(self, now: float, acquire: Optional[Any], transitions: int) -> Any:
        k8s = self.client.k8s
        wall = self.clock.now()   # for people reading the Lease; nothing here compares it
        spec = k8s.V1LeaseSpec(holder_identity=self.identity, lease_duration_seconds=int(self.lease_duration),
                               acquire_time=acquire or _micro(wall), renew_time=_micro(wall),
                               lease_transitions=transitions)
        meta = k8s.V1ObjectMeta(name=self.name, namespace=self.namespace,
                                resource_version=self._lease.metadata.resource_version if self._lease else None)
        return k8s.V1Lease(api_version="coordination.k8s.io/v1", kind="Lease", metadata=meta, spec=spec)

    def _update(self, body: Any, now: float) -> bool:
        c = self.client
        try:
            lease = c.call("update leases", c.coordination.replace_namespaced_lease, self.name, self.namespace, body)
        except ProviderError:
            return False
        self._observe(lease, now)
        return True

    def _mono(self) -> float:
        m = getattr(self.clock, "monotonic", None)
        return m() if m is not None else self.clock.now()

    def try_acquire_or_renew(self, now: Optional[float] = None) -> bool:
        """One attempt (``tryAcquireOrRenew``): True when this replica holds the Lease
        afterwards. ``now`` is the monotonic reading the lease is timed on (default:
        the clock's); the times written in the Lease are the clock's wall time."""
        now = self._mono() if now is None else now
        with self._lock:
            ok = self._attempt(now)
            self.attempts.append((now, ok))
            was = self._last_renew is not None
            if ok:
                self._last_renew = now
                self.events.append((now, "renewed" if was else "acquired"))
            elif was and now - self._last_renew >= self.renew_deadline:
                self._last_renew = None
                self.events.append((now, "lost"))
            return ok

    def _attempt(self, now: float) -> bool:
        c = self.client
        # 1. the fast path: the leader updates the record it holds, assuming it is current
        if self._held_by_me() and self._valid(now) and self._lease is not None:
            spec = self._lease.spec
            if self._update(self._body(now, spec.acquire_time, spec.lease_transitions or 0), now):
                return True
        # 2. read (or create) the record
        try:
            lease = c.call("get leases", c.coordination.read_namespaced_lease, self.name, self.namespace)
        except ProviderError as e:
            if e.kind is not ErrorKind.NOT_FOUND:
                return False
            self._lease = None
            try:
                created = c.call("create leases", c.coordination.create_namespaced_lease, self.namespace,
                                 self._body(now, None, 0))
            except ProviderError:
                return False
            self._observe(created, now)
            return True
        self._observe(lease, now)
        # 3. someone else holds a lease that has not expired (on this replica's clock)
        if self._observed_holder and self._valid(now) and not self._held_by_me():
            return False
        # 4. take it over, or renew it
        spec = lease.spec
        if self._held_by_me():
            body = self._body(now, spec.acquire_time, spec.lease_transitions or 0)
        else:
            body = self._body(now, None, (spec.lease_transitions or 0) + 1 if spec else 1)
        return self._update(body, now)

    # -- the contract ------------------------------------------------------------------
    def tick(self) -> None:
        """Run the attempt due on the clock (every retry period)."""
        now = self._mono()
        with self._lock:
            if now < self._next_attempt:
                return
            self._next_attempt = now + self.retry_period
        self.try_acquire_or_renew(now)

    def is_leader(self) -> bool:
        if not self.background:
            self.tick()
        with self._lock:
            return self._last_renew is not None and self._held_by_me() and \
                self._mono() - self._last_renew < self.renew_deadline

    def start(self) -> None:
        if not self.background or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._campaign, name="scalebridge-leader-election", daemon=True)
        self._thread.start()

    def _campaign(self) -> None:
        while not self._stop.is_set():
            leading = self.try_acquire_or_renew()
            # candidates retry with jitter (wait.JitterUntil); the leader renews every retry period
            wait = self.retry_period if leading else self.retry_period * (1 + self.rng.random() * JITTER_FACTOR)
            if self.clock.sleep(wait, self._stop) is False:
                break

    def stop(self) -> None:
        """Stop campaigning; release the Lease if held."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:
            if self._last_renew is None or not self._held_by_me() or self._lease is None:
                return
            now, wall = self._mono(), self.clock.now()
            k8s = self.client.k8s
            spec = k8s.V1LeaseSpec(holder_identity="", lease_duration_seconds=1, acquire_time=_micro(wall),
                                   renew_time=_micro(wall), lease_transitions=self._lease.spec.lease_transitions or 0)
            meta = k8s.V1ObjectMeta(name=self.name, namespace=self.namespace,
                                    resource_version=self._lease.metadata.resource_version)
            body = k8s.V1Lease(api_version="coordination.k8s.io/v1", kind="Lease", metadata=meta, spec=spec)
            if self._update(body, now):
                self.events.append((now, "released"))
            self._last_renew = None
