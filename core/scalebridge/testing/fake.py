"""An in-memory provider on the :mod:`scalebridge.providers` contract, for testing a
controller (or anything else that drives providers) without a cloud.

In a run configuration::

    providers:
      fake:
        type: scalebridge.testing.fake:FakeProvider
        settle_observes: 2              # a write is in flight for the next 2 observes
        faults: {rate: 0.3, seed: 7}    # 30% of calls fail, deterministically
        world: fake-world.json          # optional: the world survives the process
    targets:
      - name: web
        provider: fake
        policy: web
        ref: {name: web, size: 3, load: {base: 2.4, amplitude: 1.2, period: 3600}}

and in-process::

    fake = FakeProvider(settle_observes=1)
    web = fake.target({"name": "web", "size": 3, "load": 2.4})
    web.observe(now).current_replicas          # 3
    web.set_size(5); fake.writes("web")        # 1
    fake.inject("throttled", target="web", call="set_size", retry_after=30)

**A target's ref**: ``name`` (required; one target per name in a provider
instance), ``size`` (the initial desired size, default 1), ``members`` (how many
of them are ready at first, default all), ``load`` and ``metrics`` (below),
``cpu_request`` (each member's, default 1), ``min_size``/``max_size`` (the
provider's own bounds: a write beyond them is clamped and says so),
``metric_delay`` (seconds the metric windows end before ``now``), ``managed_by``
(the name :meth:`FakeTarget.managed_by` answers: another autoscaler manages the
target), and ``settle_observes``/``settle_seconds`` overriding the provider's.

**The world.** Each target has a desired size (what :meth:`FakeTarget.set_size` sets,
``Observation.current_replicas``) and members named ``<name>-<k>``. A write settles
at once, or — with ``settle_observes: N`` (and/or ``settle_seconds: S``) — stays in
flight for the next N observes (and until S seconds after the write; settling on
the clock alone keeps a world independent of how often it is observed, as a restart
test needs): new members are ``Pending`` and not ready, removed ones ``deleting``,
and ``Observation.in_flight`` names the operation, as a GCE resize, an ASG scaling
activity or a VMSS update do. The world's clock is the latest ``now`` it was
observed at; a write happens then.

**The load** is a deterministic function of time: a number, or
``{base, amplitude, period, phase, steps: [[offset_seconds, value], …]}`` — ``base``
plus a sine of ``amplitude`` and ``period`` plus the last step at or before the offset
from ``start_time``. It is the target's demand in units of one member's cpu
request: each ready member's cpu usage is ``load / ready × cpu_request`` (so adding
members lowers utilization, as it does on a real fleet). ``metrics: {NAME: {load,
as}}`` in a ref gives a metric its own load; ``as`` is ``utilization`` (percent of
the request per member, the default for ``resource``, ``load_balancing`` and rule
metrics), ``per_member`` (``load / ready``, the default for ``pods``) or ``total``
(``load``, the default for ``object`` and ``external``). A query is answered in the
shapes it asks for (:attr:`MetricQuery.shapes`), with one series per query: the
group's ``series`` where it is asked for, else each member's (``member_series``), as
a cloud answers one query with one kind of series (CloudWatch's group datapoints,
a scale set's own Azure Monitor series).

**Faults.** ``faults: {rate, seed, calls, kinds, targets, retry_after}`` fails that
share of the chosen calls (``observe``, ``read_metrics``, ``set_size``,
``managed_by``), the failing calls chosen by a hash of (seed, target, call, call
number), so the same run fails the same calls whatever the thread order. Kinds:
``throttled`` (no retry-after), ``throttled_retry_after`` (``retry_after`` seconds),
``timeout`` and ``5xx`` (both ``TRANSIENT``), ``conflict``, ``not_found``,
``forbidden``, ``invalid``, and ``applied_timeout`` (a ``set_size`` that takes
effect and then times out, as a write whose reply is lost). ``script:
[{target, call, nth, kind, retry_after}]`` fails chosen calls (``nth`` counts that
call on that target from 1); :meth:`FakeProvider.inject` queues one in-process.
A failing call has no effect (except ``applied_timeout``). ``hang: [{target, call,
seconds, times}]`` makes a call wait ``seconds`` (outside the provider's lock: the
other targets answer meanwhile) and then time out (``transient``), as a response
slow up to the client's timeout; ``times`` (default: every call) bounds how many.

**Counts.** :meth:`FakeProvider.count`, :meth:`~FakeProvider.reads`,
:meth:`~FakeProvider.writes` and :meth:`~FakeProvider.applied_writes` count calls per
method and target; :attr:`FakeProvider.faults_raised` lists every injected fault;
:attr:`FakeProvider.stacked_writes` every ``set_size`` made while a write was still
in flight (a controller must make none); ``log_calls: true`` keeps
:attr:`FakeProvider.call_log`, ``(now, target, call, outcome)`` per call.

**A world on disk.** ``world: PATH`` keeps the world (sizes, members, writes in
flight, call counts, stacked writes, each target's write history) in a JSON file, rewritten
atomically (temporary file, fsync, rename) after every call that changed it (a
write, an observe that moved an operation on; call counts ride along), so a new
process continues the same world. ``kill_after_write: [n, …]`` SIGKILLs the process right
after the n-th applied write of the world (counted across processes, once the
world is saved), ``kill_at_call: [n, …]`` right before the n-th call takes effect,
``kill_after_seconds: [s, …]`` right before the first call at or after ``start_time +
s`` (each once);
``pause_after_write: S`` sleeps S seconds after each write. These hit the windows
a crash-safe controller must survive deterministically.

**Threads.** The fake is in memory (``Provider.blocking`` False): the controller
syncs its targets on its own thread. ``blocking: true`` makes it stand for a cloud
provider whose calls wait on the network, synced on the controller's worker pool.

**Election.** ``elects: true`` gives ``--leader-elect`` an election every replica wins
at once: which controller writes is then decided by the state store's claim alone.

Capabilities: ``METRICS`` and ``VIRTUAL_CLOCK`` (``capabilities: [...]`` narrows
them; without ``METRICS``, ``read_metrics`` reads nothing). Pacing is unlimited unless ``pacing: {writes_per_second, write_burst,
reads_per_second, read_burst}`` says otherwise.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider, ProviderError,
                         RefError, SizeChange, Target)

__all__ = ["FakeProvider", "FakeTarget", "Load", "FAULT_KINDS", "CALLS", "DEFAULT_START"]

#: 2026-01-01T00:00:00Z, where a fake world's clock starts unless ``start_time`` says otherwise
DEFAULT_START = 1767225600.0
CALLS = ("observe", "read_metrics", "set_size", "managed_by")
READ_CALLS = frozenset({"observe", "read_metrics", "managed_by"})
FAULT_KINDS = ("throttled", "throttled_retry_after", "timeout", "5xx", "conflict", "not_found", "forbidden",
               "invalid", "applied_timeout")
#: the mix ``faults:`` draws from unless it names its ``kinds``
DEFAULT_FAULT_KINDS = ("throttled", "throttled_retry_after", "timeout", "5xx", "conflict")
_OPERATION = {"observe": "get", "read_metrics": "metrics.list", "set_size": "resize", "managed_by": "autoscalers.get"}
_REF_KEYS = frozenset({"name", "size", "members", "load", "metrics", "cpu_request", "managed_by", "min_size",
                       "max_size", "metric_delay", "settle_observes", "settle_seconds"})
_OPTION_KEYS = frozenset({"settle_observes", "settle_seconds", "faults", "script", "hang", "world", "world_fsync",
                          "kill_after_write", "kill_at_call", "kill_after_seconds", "pause_after_write", "capabilities", "pacing",
                          "start_time", "log_calls", "metric_window", "blocking", "elects"})
UNLIMITED = Pacing(writes_per_second=1e9, write_burst=10 ** 9, reads_per_second=1e9, read_burst=10 ** 9)


def _bad(key: str, message: str) -> RefError:
    return RefError(key, message)


def _number(value: Any, key: str, *, lo: float | None = 0.0, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
            (integer and value != int(value)):
        raise _bad(key, f"expected {'an integer' if integer else 'a number'}, got {value!r}")
    if lo is not None and value < lo:
        raise _bad(key, f"must be at least {lo:g}, got {value!r}")
    return int(value) if integer else float(value)


def _numbers(value: Any, key: str) -> frozenset[int]:
    items = value if isinstance(value, list) else [value]
    return frozenset(int(_number(v, f"{key}[{i}]", lo=1, integer=True)) for i, v in enumerate(items))


# --------------------------------------------------------------------------- load


@dataclass(frozen=True)
class Load:
    """Demand as a function of time: ``base + amplitude·sin(2π(t + phase)/period) +
    step(t)``, never below 0; ``t`` is seconds since the world's start."""

    base: float = 0.0
    amplitude: float = 0.0
    period: float = 3600.0
    phase: float = 0.0
    steps: tuple[tuple[float, float], ...] = ()

    @classmethod
    def parse(cls, spec: Any, key: str) -> "Load":
        if isinstance(spec, Load):
            return spec
        if not isinstance(spec, Mapping):
            return cls(base=_number(spec, key))
        unknown = set(spec) - {"base", "amplitude", "period", "phase", "steps"}
        if unknown:
            raise _bad(f"{key}.{sorted(unknown)[0]}", "unknown key; a load has base, amplitude, period, phase, steps")
        steps = spec.get("steps", [])
        if not isinstance(steps, list):
            raise _bad(f"{key}.steps", f"expected a list of [offset_seconds, value], got {steps!r}")
        parsed = []
        for i, s in enumerate(steps):
            if not isinstance(s, (list, tuple)) or len(s) != 2:
                raise _bad(f"{key}.steps[{i}]", f"expected [offset_seconds, value], got {s!r}")
            parsed.append((_number(s[0], f"{key}.steps[{i}][0]", lo=None), _number(s[1], f"{key}.steps[{i}][1]", lo=None)))
        return cls(base=_number(spec.get("base", 0.0), f"{key}.base", lo=None),
                   amplitude=_number(spec.get("amplitude", 0.0), f"{key}.amplitude", lo=None),
                   period=_number(spec.get("period", 3600.0), f"{key}.period", lo=1e-9),
                   phase=_number(spec.get("phase", 0.0), f"{key}.phase", lo=None),
                   steps=tuple(sorted(parsed)))

    def at(self, t: float) -> float:
        if not self.amplitude and not self.steps:
            return self.base if self.base > 0 else 0.0
        v = self.base
        if self.amplitude:
            v += self.amplitude * math.sin(2 * math.pi * (t + self.phase) / self.period)
        step = 0.0
        for offset, value in self.steps:
            if offset > t:
                break
            step = value
        return max(0.0, v + step)


# --------------------------------------------------------------------------- faults


@dataclass(frozen=True)
class FaultRecord:
    """One fault the fake raised: on which target and call, the call's number on
    that target (from 1), its kind, and the ``now`` of the world when it happened."""

    target: str
    call: str
    nth: int
    kind: str
    now: float
    retry_after: Optional[float] = None


def _unit(*parts: Any) -> float:
    """A uniform number in [0, 1) from a hash of ``parts`` (deterministic, thread-order free)."""
    h = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2 ** 64


def _error(kind: str, call: str, target: str, retry_after: Optional[float]) -> ProviderError:
    op = _OPERATION[call]
    if kind == "throttled":
        return ProviderError(ErrorKind.THROTTLED, f"{target}: rate limit exceeded (HTTP 429)", operation=op)
    if kind == "throttled_retry_after":
        return ProviderError(ErrorKind.THROTTLED, f"{target}: rate limit exceeded (HTTP 429, Retry-After "
                             f"{retry_after:g})", retry_after=retry_after, operation=op)
    if kind in ("timeout", "applied_timeout"):
        return ProviderError(ErrorKind.TRANSIENT, f"{target}: {op} timed out", operation=op)
    if kind == "5xx":
        return ProviderError(ErrorKind.TRANSIENT, f"{target}: HTTP 503 Service Unavailable", operation=op)
    if kind == "conflict":
        return ProviderError(ErrorKind.CONFLICT, f"{target}: the object was modified (HTTP 409)", operation=op)
    if kind == "not_found":
        return ProviderError(ErrorKind.NOT_FOUND, f"{target}: not found (HTTP 404)", operation=op)
    if kind == "forbidden":
        return ProviderError(ErrorKind.FORBIDDEN, f"{target}: permission denied (HTTP 403)", operation=op)
    return ProviderError(ErrorKind.INVALID, f"{target}: invalid request (HTTP 400)", operation=op)


@dataclass
class _Faults:
    rate: float = 0.0
    seed: int = 0
    calls: frozenset[str] = frozenset(CALLS)
    kinds: tuple[str, ...] = DEFAULT_FAULT_KINDS
    targets: Optional[frozenset[str]] = None
    retry_after: float = 30.0

    @classmethod
    def parse(cls, spec: Any) -> "_Faults":
        if spec is None:
            return cls()
        if not isinstance(spec, Mapping):
            raise _bad("faults", f"expected a mapping {{rate, seed, calls, kinds, targets, retry_after}}, got {spec!r}")
        unknown = set(spec) - {"rate", "seed", "calls", "kinds", "targets", "retry_after"}
        if unknown:
            raise _bad(f"faults.{sorted(unknown)[0]}", "unknown key; valid: rate, seed, calls, kinds, targets, retry_after")
        rate = _number(spec.get("rate", 0.0), "faults.rate")
        if rate > 1:
            raise _bad("faults.rate", f"a share of calls in [0, 1], got {rate!r}")
        calls = spec.get("calls", list(CALLS))
        kinds = spec.get("kinds", list(DEFAULT_FAULT_KINDS))
        for key, values, valid in (("calls", calls, CALLS), ("kinds", kinds, FAULT_KINDS)):
            if not isinstance(values, list) or not values:
                raise _bad(f"faults.{key}", f"expected a non-empty list of {', '.join(valid)}")
            for i, v in enumerate(values):
                if v not in valid:
                    raise _bad(f"faults.{key}[{i}]", f"unknown {key[:-1]} {v!r}; valid: {', '.join(valid)}")
        targets = spec.get("targets")
        if targets is not None and (not isinstance(targets, list) or not all(isinstance(t, str) for t in targets)):
            raise _bad("faults.targets", "expected a list of target names")
        return cls(rate=rate, seed=int(_number(spec.get("seed", 0), "faults.seed", lo=None, integer=True)),
                   calls=frozenset(calls), kinds=tuple(kinds),
                   targets=None if targets is None else frozenset(targets),
                   retry_after=_number(spec.get("retry_after", 30.0), "faults.retry_after"))

    def draw(self, target: str, call: str, nth: int) -> Optional[str]:
        if self.rate <= 0 or call not in self.calls or (self.targets is not None and target not in self.targets):
            return None
        if _unit(self.seed, target, call, nth, "fail") >= self.rate:
            return None
        return self.kinds[int(_unit(self.seed, target, call, nth, "kind") * len(self.kinds))]


@dataclass
class _Scripted:
    kind: str
    target: Optional[str] = None
    call: Optional[str] = None
    nth: Optional[int] = None
    retry_after: Optional[float] = None
    times: int = 1

    def matches(self, target: str, call: str, nth: int) -> bool:
        return (self.target is None or self.target == target) and (self.call is None or self.call == call) and \
            (self.nth is None or self.nth == nth)


def _scripted(spec: Any, key: str) -> _Scripted:
    if not isinstance(spec, Mapping):
        raise _bad(key, f"expected a mapping {{target, call, nth, kind, retry_after}}, got {spec!r}")
    unknown = set(spec) - {"target", "call", "nth", "kind", "retry_after", "times"}
    if unknown:
        raise _bad(f"{key}.{sorted(unknown)[0]}", "unknown key; valid: target, call, nth, kind, retry_after, times")
    kind = spec.get("kind")
    if kind not in FAULT_KINDS:
        raise _bad(f"{key}.kind", f"unknown kind {kind!r}; valid: {', '.join(FAULT_KINDS)}")
    call = spec.get("call")
    if call is not None and call not in CALLS:
        raise _bad(f"{key}.call", f"unknown call {call!r}; valid: {', '.join(CALLS)}")
    nth = spec.get("nth")
    retry_after = spec.get("retry_after")
    return _Scripted(kind=kind, target=spec.get("target"), call=call,
                     nth=None if nth is None else int(_number(nth, f"{key}.nth", lo=1, integer=True)),
                     retry_after=None if retry_after is None else _number(retry_after, f"{key}.retry_after"),
                     times=int(_number(spec.get("times", 1), f"{key}.times", lo=1, integer=True)))


def _hang_spec(spec: Any, key: str) -> dict:
    if not isinstance(spec, Mapping) or set(spec) - {"target", "call", "seconds", "times"}:
        raise _bad(key, f"expected {{target, call, seconds, times}}, got {spec!r}")
    call = spec.get("call")
    if call is not None and call not in CALLS:
        raise _bad(f"{key}.call", f"unknown call {call!r}; valid: {', '.join(CALLS)}")
    times = spec.get("times")
    return {"target": spec.get("target"), "call": call, "seconds": _number(spec.get("seconds", 60.0), f"{key}.seconds"),
            "times": None if times is None else int(_number(times, f"{key}.times", lo=1, integer=True))}


# --------------------------------------------------------------------------- the world


@dataclass
class _Member:
    name: str
    start_time: float
    ready_time: Optional[float] = None     # None: Pending, not ready
    deleting: bool = False


@dataclass
class _Pending:
    size: int
    observes_left: int
    until: float
    operation: str


@dataclass
class _State:
    """One target's world: what persists across processes."""

    name: str
    size: int
    members: list[_Member]
    next_member: int
    pending: Optional[_Pending] = None
    history: list[list[float]] = field(default_factory=list)   # [[now, size], …] per applied write
    writes: int = 0

    def to_json(self) -> dict:
        return {"size": self.size, "next_member": self.next_member, "writes": self.writes,
                "members": [[m.name, m.start_time, m.ready_time, m.deleting] for m in self.members],
                "pending": None if self.pending is None else [self.pending.size, self.pending.observes_left,
                                                              self.pending.until, self.pending.operation],
                "history": self.history}

    @classmethod
    def from_json(cls, name: str, d: dict) -> "_State":
        p = d.get("pending")
        return cls(name=name, size=d["size"], next_member=d["next_member"], writes=d.get("writes", 0),
                   members=[_Member(*m) for m in d["members"]],
                   pending=None if p is None else _Pending(*p), history=d.get("history", []))


class FakeTarget(Target):
    """One fake target; see :mod:`scalebridge.testing.fake`."""

    def __init__(self, provider: "FakeProvider", state: _State, ref: Mapping[str, Any]):
        self.provider = provider
        self.ref = dict(ref)
        self.state = state
        self.name = state.name
        self.cpu_request = _number(ref.get("cpu_request", 1.0), "ref.cpu_request", lo=1e-9)
        self.load = Load.parse(ref.get("load", 0.0), "ref.load")
        metrics = ref.get("metrics", {})
        if not isinstance(metrics, Mapping):
            raise _bad("ref.metrics", f"expected a mapping of metric name to {{load, as}}, got {metrics!r}")
        self.metric_loads: dict[str, tuple[Load, Optional[str]]] = {}
        for mname, spec in metrics.items():
            key = f"ref.metrics.{mname}"
            if not isinstance(spec, Mapping) or set(spec) - {"load", "as"}:
                raise _bad(key, "expected {load, as}")
            how = spec.get("as")
            if how not in (None, "utilization", "per_member", "total"):
                raise _bad(f"{key}.as", f"unknown {how!r}; valid: utilization, per_member, total")
            self.metric_loads[str(mname)] = (Load.parse(spec.get("load", 0.0), f"{key}.load"), how)
        manager = ref.get("managed_by")
        if manager is not None and not isinstance(manager, str):
            raise _bad("ref.managed_by", f"expected the managing autoscaler's name, got {manager!r}")
        self.manager: Optional[str] = manager
        self.min_size = None if ref.get("min_size") is None else \
            int(_number(ref["min_size"], "ref.min_size", integer=True))
        self.max_size = None if ref.get("max_size") is None else \
            int(_number(ref["max_size"], "ref.max_size", integer=True))
        if self.min_size is not None and self.max_size is not None and self.min_size > self.max_size:
            raise _bad("ref.max_size", f"{self.max_size} is below min_size {self.min_size}")
        self.metric_delay_seconds = _number(ref.get("metric_delay", 0.0), "ref.metric_delay")
        self.settle_observes = int(_number(ref.get("settle_observes", provider.settle_observes),
                                           "ref.settle_observes", integer=True))
        self.settle_seconds = _number(ref.get("settle_seconds", provider.settle_seconds), "ref.settle_seconds")
        self.start_time = provider.start_time
        self._members: Optional[list[dict]] = None     # the observed members, until the world changes
        self._running = 0
        self._ready: list[str] = []

    # -- the contract

    def observe(self, now: float) -> Observation:
        p = self.provider
        p._hang(self.name, "observe")
        with p.lock:
            p._call(self.name, "observe", now)
            st = self.state
            pend = st.pending
            if pend is not None:
                p._dirty = True          # the operation moved on: the world on disk must say so
                if pend.observes_left > 0 or now < pend.until:
                    pend.observes_left = max(0, pend.observes_left - 1)
                else:
                    self._settle(now)
            obs = self._observation()
            p._done(self.name, "observe", "ok")
            return obs

    def read_metrics(self, now: float, observation: Observation, queries: list[MetricQuery]) -> dict[str, dict]:
        p = self.provider
        p._hang(self.name, "read_metrics")
        with p.lock:
            p._call(self.name, "read_metrics", now)
            if Capability.METRICS not in p.capabilities:
                p._done(self.name, "read_metrics", "ok")
                return {}
            if self._members is None:
                self._members = self._member_dicts()
            ready = self._ready
            out = {q.name: self._metric(now, q, ready) for q in queries}
            p._done(self.name, "read_metrics", "ok")
            return out

    def set_size(self, size: int) -> SizeChange:
        p = self.provider
        p._hang(self.name, "set_size")
        with p.lock:
            now = p.now
            late = p._call(self.name, "set_size", now)
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                p._done(self.name, "set_size", "invalid")
                raise ProviderError(ErrorKind.INVALID, f"{self.name}: size must be a non-negative integer, "
                                    f"got {size!r}", operation="resize")
            change = self._apply(size, now)
            p._done(self.name, "set_size", "ok" if late is None else "applied_timeout")
            if late is not None:
                raise late
            return change

    def managed_by(self) -> Optional[str]:
        p = self.provider
        p._hang(self.name, "managed_by")
        with p.lock:
            p._call(self.name, "managed_by", p.now)
            p._done(self.name, "managed_by", "ok")
            return self.manager

    # -- the world

    @property
    def in_flight(self) -> bool:
        return self.state.pending is not None

    def _apply(self, size: int, now: float) -> SizeChange:
        p, st = self.provider, self.state
        note = None
        asked = size
        if self.min_size is not None and size < self.min_size:
            size, note = self.min_size, f"clamped to min_size {self.min_size}"
        if self.max_size is not None and size > self.max_size:
            size, note = self.max_size, f"clamped to max_size {self.max_size}"
        if st.pending is not None:
            p.stacked_writes.append((self.name, asked, st.pending.operation))
        st.writes += 1
        p.total_writes += 1
        self._members = None
        op = f"op-{self.name}-{st.writes}"
        st.size = size
        st.history.append([now, size])
        alive = [m for m in st.members if not m.deleting]
        if size > len(alive):
            for _ in range(size - len(alive)):
                st.members.append(_Member(f"{self.name}-{st.next_member}", now, None))
                st.next_member += 1
        elif size < len(alive):
            for m in alive[size:]:
                m.deleting = True
        in_flight = self.settle_observes > 0 or self.settle_seconds > 0
        if in_flight:
            st.pending = _Pending(size, self.settle_observes, now + self.settle_seconds, op)
        else:
            st.pending = None
            self._settle(now)
        p._after_write()
        return SizeChange(size=size, in_flight=in_flight, operation=op, note=note)

    def _settle(self, now: float) -> None:
        st = self.state
        self._members = None
        st.members = [m for m in st.members if not m.deleting]
        for m in st.members:
            if m.ready_time is None:
                m.ready_time = now
        st.pending = None

    def _observation(self) -> Observation:
        st = self.state
        members = self._members
        if members is None:
            members = self._members = self._member_dicts()
        running = self._running
        return Observation(current_replicas=st.size, status_replicas=running, members=list(members),
                           in_flight=None if st.pending is None else st.pending.operation,
                           min_size=self.min_size, max_size=self.max_size,
                           details={"writes": st.writes})

    def _member_dicts(self) -> list[dict]:
        st = self.state
        self._ready = [m.name for m in st.members if m.ready_time is not None and not m.deleting]
        self._running = len(self._ready)
        return [{"name": m.name, "phase": "Running" if m.ready_time is not None else "Pending",
                    "ready": m.ready_time is not None, "start_time": m.start_time,
                    "ready_transition_time": m.ready_time if m.ready_time is not None else m.start_time,
                    "deleting": m.deleting, "requests": {"cpu": self.cpu_request}} for m in st.members]

    def _metric(self, now: float, q: MetricQuery, ready: list[str]) -> dict:
        load, how = self.metric_loads.get(q.name, (self.load, None))
        if how is None:
            how = {"pods": "per_member", "object": "total", "external": "total"}.get(q.type, "utilization")
        n = len(ready)
        end = now - self.metric_delay_seconds
        rel = end - self.provider.start_time
        shapes = q.shapes
        out: dict[str, Any] = {"timestamp": end, "window": self.provider.metric_window}
        demand = load.at(rel)
        if "members" in shapes and n:
            # a resource metric's member sample is usage against the member's request
            per = demand / n * (self.cpu_request if how == "utilization" else 1.0)
            out["members"] = dict.fromkeys(ready, per)
        if how == "total":
            scale: Optional[float] = 1.0
        else:
            scale = None if n == 0 else (100.0 if how == "utilization" else 1.0) / n
        if scale is None:       # no member to average over: no sample, never 0
            if "series" in shapes:
                out["series"] = []
            return out
        if "value" in shapes:
            out["value"] = demand * scale
        if "values" in shapes:
            out["values"] = [demand * scale]
        if "series" in shapes or "member_series" in shapes:
            grain = q.grain_seconds if q.grain_seconds > 0 else 60.0
            k = max(1, int(q.window_seconds // grain))
            if load.steps:
                series = [[end - grain * i, load.at(rel - grain * i) * scale] for i in range(k - 1, -1, -1)]
            else:    # base + a sine, inlined: a sync reads this for every target
                base, amp, w, ph, sin = load.base, load.amplitude, 2 * math.pi / load.period, load.phase, math.sin
                series = [[end - grain * i, max(0.0, base + amp * sin(w * (rel - grain * i + ph))) * scale]
                          for i in range(k - 1, -1, -1)]
            if "series" in shapes:
                out["series"] = series
            elif "member_series" in shapes:
                out["member_series"] = dict.fromkeys(ready, series)
        return out


class FakeProvider(Provider):
    """An in-memory provider with deterministic load, settling writes, call counts,
    fault injection and an optional world on disk; see :mod:`scalebridge.testing.fake`."""

    name = "fake"
    semantics = "scalebridge"
    capabilities = frozenset({Capability.METRICS, Capability.VIRTUAL_CLOCK})
    blocking = False      # in memory (and a local file): nothing to overlap
    ref_keys = frozenset({"name"})

    def __init__(self, **options: Any):
        unknown = set(options) - _OPTION_KEYS
        if unknown:
            raise _bad(sorted(unknown)[0], f"unknown fake provider option; valid: {', '.join(sorted(_OPTION_KEYS))}")
        self.lock = threading.RLock()
        blocking = options.get("blocking", False)
        if not isinstance(blocking, bool):
            raise _bad("blocking", f"expected true or false, got {blocking!r}")
        self.blocking = blocking
        self.settle_observes = int(_number(options.get("settle_observes", 0), "settle_observes", integer=True))
        self.settle_seconds = _number(options.get("settle_seconds", 0.0), "settle_seconds")
        self.start_time = _number(options.get("start_time", DEFAULT_START), "start_time", lo=None)
        self.metric_window = _number(options.get("metric_window", 60.0), "metric_window")
        self.now = self.start_time
        self.faults = _Faults.parse(options.get("faults"))
        script = options.get("script", [])
        if not isinstance(script, list):
            raise _bad("script", f"expected a list of faults, got {script!r}")
        self.script = [_scripted(s, f"script[{i}]") for i, s in enumerate(script)]
        hang = options.get("hang", [])
        if not isinstance(hang, list):
            raise _bad("hang", f"expected a list of {{target, call, seconds, times}}, got {hang!r}")
        self.hangs = [_hang_spec(h, f"hang[{i}]") for i, h in enumerate(hang)]
        #: every hang that began: (target, call, seconds)
        self.hung: list[tuple[str, str, float]] = []
        caps = options.get("capabilities")
        if caps is not None:
            valid = [c.value for c in Capability]
            if not isinstance(caps, list) or any(c not in valid for c in caps):
                raise _bad("capabilities", f"expected a list of {', '.join(valid)}, got {caps!r}")
            self.capabilities = frozenset(Capability(c) for c in caps)
        pacing = options.get("pacing")
        if pacing is None:
            self.pacing = UNLIMITED
        else:
            if not isinstance(pacing, Mapping) or set(pacing) - set(Pacing.__dataclass_fields__):
                raise _bad("pacing", f"expected {{{', '.join(Pacing.__dataclass_fields__)}}}, got {pacing!r}")
            self.pacing = Pacing(**{k: (int(_number(v, f"pacing.{k}", integer=True)) if k.endswith("burst")
                                        else _number(v, f"pacing.{k}", lo=1e-9)) for k, v in pacing.items()})
        self.kill_after_write = _numbers(options.get("kill_after_write", []), "kill_after_write")
        self.kill_at_call = _numbers(options.get("kill_at_call", []), "kill_at_call")
        after = options.get("kill_after_seconds", [])
        after = after if isinstance(after, list) else [after]
        self.kill_after_seconds = sorted(_number(v, f"kill_after_seconds[{i}]") for i, v in enumerate(after))
        self.kills_fired: list[float] = []
        self.pause_after_write = _number(options.get("pause_after_write", 0.0), "pause_after_write")
        self.log_calls = bool(options.get("log_calls", False))
        self.world_fsync = bool(options.get("world_fsync", True))
        world = options.get("world")
        if world is not None and not isinstance(world, (str, os.PathLike)):
            raise _bad("world", f"expected a file path, got {world!r}")
        self.world: Optional[str] = None if world is None else os.path.expanduser(os.fspath(world))
        elects = options.get("elects", False)
        if not isinstance(elects, bool):
            raise _bad("elects", f"expected true or false, got {elects!r}")
        self.elects = elects

        self.calls: Counter = Counter()          # (target, call) -> calls
        self.total_calls = 0
        self.total_writes = 0
        self.faults_raised: list[FaultRecord] = []
        self.stacked_writes: list[tuple[str, int, str]] = []
        self.call_log: list[tuple[float, str, str, str]] = []
        self.clock_regressions: list[tuple[str, float, float]] = []
        self.targets: dict[str, FakeTarget] = {}
        self._saved: dict[str, dict] = {}
        self._dirty = False
        if self.world is not None and os.path.exists(self.world):
            self._load_world()

    # -- the contract

    def target(self, ref: Mapping[str, Any]) -> FakeTarget:
        if not isinstance(ref, Mapping):
            raise _bad("ref", f"expected a mapping with at least a name, got {ref!r}")
        unknown = set(ref) - _REF_KEYS
        if unknown:
            raise _bad(f"ref.{sorted(unknown)[0]}", f"unknown key; a fake target takes {', '.join(sorted(_REF_KEYS))}")
        name = ref.get("name")
        if not isinstance(name, str) or not name:
            raise _bad("ref.name", "required: the target's name (a non-empty string)")
        size = int(_number(ref.get("size", 1), "ref.size", integer=True))
        with self.lock:
            known = self.targets.get(name)
            if known is not None:
                if dict(ref) != known.ref:
                    raise _bad("ref.name", f"{name!r} is already a target of this fake provider, with another ref")
                return known
            saved = self._saved.get(name)
            if saved is not None:
                state = _State.from_json(name, saved)
            else:
                ready = ref.get("members", size)
                ready = int(_number(ready, "ref.members", integer=True))
                if ready > size:
                    raise _bad("ref.members", f"{ready} ready members exceed size {size}")
                start = self.start_time - 3600.0
                members = [_Member(f"{name}-{k}", start, start + 30.0 if k < ready else None) for k in range(size)]
                state = _State(name=name, size=size, members=members, next_member=size)
            t = FakeTarget(self, state, ref)
            self.targets[name] = t
            return t

    # -- inspection and scripting, in-process

    def inject(self, kind: str, *, target: Optional[str] = None, call: Optional[str] = None,
               nth: Optional[int] = None, retry_after: Optional[float] = None, times: int = 1) -> None:
        """Fail the next ``times`` calls matching ``target``/``call`` (any when None)
        with ``kind`` (one of :data:`FAULT_KINDS`)."""
        spec = {"kind": kind, "target": target, "call": call, "nth": nth, "retry_after": retry_after, "times": times}
        with self.lock:
            self.script.append(_scripted({k: v for k, v in spec.items() if v is not None}, "inject"))

    def count(self, call: Optional[str] = None, target: Optional[str] = None) -> int:
        """Calls of ``call`` (all when None) on ``target`` (all when None), failed ones included."""
        with self.lock:
            return sum(n for (t, c), n in self.calls.items()
                       if (call is None or c == call) and (target is None or t == target))

    def reads(self, target: Optional[str] = None) -> int:
        """observe, read_metrics and managed_by calls."""
        return sum(self.count(c, target) for c in READ_CALLS)

    def writes(self, target: Optional[str] = None) -> int:
        """set_size calls, failed ones included."""
        return self.count("set_size", target)

    def applied_writes(self, target: Optional[str] = None) -> int:
        """set_size calls that changed the world."""
        with self.lock:
            return sum(t.state.writes for n, t in self.targets.items() if target is None or n == target)

    def _state(self, target: str) -> _State:
        t = self.targets.get(target)
        if t is not None:
            return t.state
        if target in self._saved:          # in the world on disk, not asked for by this process yet
            return _State.from_json(target, self._saved[target])
        raise KeyError(f"no target {target!r} in this fake world")

    def size(self, target: str) -> int:
        return self._state(target).size

    def history(self, target: str) -> list[tuple[float, int]]:
        """``(now, size)`` of every applied write on ``target``, in order (across processes
        with a world on disk)."""
        with self.lock:
            return [(t, int(s)) for t, s in self._state(target).history]

    def set_load(self, target: str, load: Any) -> None:
        """Change a target's load (a number or a load mapping) from now on."""
        with self.lock:
            self.targets[target].load = Load.parse(load, "load")

    def advance(self, now: float) -> None:
        """Move the world's clock (where a write's ``now`` comes from) without a call."""
        with self.lock:
            self.now = max(self.now, now)

    def hang(self, target: Optional[str] = None, call: Optional[str] = None, seconds: float = 60.0,
             times: Optional[int] = None) -> None:
        """Make the next ``times`` (None: every) matching calls wait ``seconds`` and
        time out, in-process (the ``hang:`` option)."""
        with self.lock:
            self.hangs.append({"target": target, "call": call, "seconds": float(seconds), "times": times})

    # -- bookkeeping

    def _hang(self, target: str, call: str) -> None:
        """A call a ``hang`` matches: it waits, without the provider's lock (the other
        targets answer meanwhile), then times out as a client would."""
        if not self.hangs:
            return
        with self.lock:
            for h in self.hangs:
                if (h["target"] in (None, target)) and (h["call"] in (None, call)) and h["times"] != 0:
                    if h["times"] is not None:
                        h["times"] -= 1
                    seconds = h["seconds"]
                    self.hung.append((target, call, seconds))
                    break
            else:
                return
        time.sleep(seconds)
        raise ProviderError(ErrorKind.TRANSIENT, f"{target}: {_OPERATION[call]} timed out after {seconds:g} s "
                            "(no response)", operation=_OPERATION[call])

    def _call(self, target: str, call: str, now: float) -> Optional[ProviderError]:
        """Count a call and move the clock; raise the fault it is due, or return it
        when it only comes after the call took effect (``applied_timeout``)."""
        if now < self.now and call != "set_size":
            self.clock_regressions.append((target, self.now, now))
        self.now = max(self.now, now)
        key = (target, call)
        self.calls[key] += 1
        self.total_calls += 1
        nth = self.calls[key]
        if self.total_calls in self.kill_at_call:
            self._save(force=True)
            self._kill()
        for after in self.kill_after_seconds:
            if after not in self.kills_fired and self.now >= self.start_time + after:
                self.kills_fired.append(after)
                self._save(force=True)
                self._kill()
        kind, retry_after = None, None
        for s in self.script:
            if s.times > 0 and s.matches(target, call, nth):
                s.times -= 1
                kind, retry_after = s.kind, s.retry_after
                break
        if kind is None:
            kind = self.faults.draw(target, call, nth)
        if kind is None:
            return None
        if kind == "throttled_retry_after" and retry_after is None:
            retry_after = self.faults.retry_after
        elif kind != "throttled_retry_after":
            retry_after = None
        self.faults_raised.append(FaultRecord(target, call, nth, kind, self.now, retry_after))
        error = _error(kind, call, target, retry_after)
        if kind == "applied_timeout" and call == "set_size":
            return error
        self._done(target, call, kind)
        raise error

    def _done(self, target: str, call: str, outcome: str) -> None:
        if self.log_calls:
            self.call_log.append((self.now, target, call, outcome))
        if self.world is not None and self._dirty:
            self._save()

    def _after_write(self) -> None:
        if self.world is not None:
            self._save(force=True)
        if self.total_writes in self.kill_after_write:
            self._kill()
        if self.pause_after_write:
            time.sleep(self.pause_after_write)

    def _kill(self) -> None:
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)   # SIGKILL is delivered before this returns

    # -- the world on disk

    def _world_json(self) -> dict:
        targets = dict(self._saved)
        targets.update({n: t.state.to_json() for n, t in self.targets.items()})
        return {"version": 1, "now": self.now, "total_calls": self.total_calls, "total_writes": self.total_writes,
                "calls": {f"{t}|{c}": n for (t, c), n in self.calls.items()},
                "stacked_writes": [list(w) for w in self.stacked_writes], "kills_fired": self.kills_fired,
                "targets": targets}

    def _save(self, force: bool = False) -> None:
        if self.world is None or not (force or self._dirty):
            return
        data = json.dumps(self._world_json(), separators=(",", ":"))
        directory = os.path.dirname(os.path.abspath(self.world))
        fd, tmp = tempfile.mkstemp(prefix=".fake-world-", dir=directory)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(data)
                f.flush()
                if self.world_fsync:
                    os.fsync(f.fileno())
            os.replace(tmp, self.world)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        if self.world_fsync:
            dfd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self._dirty = False

    def _load_world(self) -> None:
        try:
            with open(self.world) as f:  # type: ignore[arg-type]
                data = json.load(f)
            self.now = float(data["now"])
            self.total_calls = int(data["total_calls"])
            self.total_writes = int(data["total_writes"])
            for key, n in data["calls"].items():
                t, c = key.rsplit("|", 1)
                self.calls[(t, c)] = int(n)
            self.stacked_writes = [tuple(w) for w in data.get("stacked_writes", [])]  # type: ignore[misc]
            self.kills_fired = [float(t) for t in data.get("kills_fired", [])]
            self._saved = dict(data["targets"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise _bad("world", f"{self.world} is not a fake world file ({type(e).__name__}: {e})") from None

    def elector(self, namespace: str, name: str, identity: str, clock: Any) -> Any:
        """With ``elects: true``, a leader election this replica always wins (one
        replica: only the state store's claim decides who writes); else none."""
        if not self.elects:
            return None
        from ..providers import Elector
        return Elector()

    def close(self) -> None:
        with self.lock:
            self._save(force=self.world is not None)
