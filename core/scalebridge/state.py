"""Decision history: recommendations, sizes, scale events and the last scaling.

The protocol carries history as plain lists; inside, each list is a
:class:`TimeLog` whose window queries (max, min, sum over the last *w*
seconds) are answered by monotonic deques and running sums kept up to date on
every append. A simulator carrying one :class:`DecisionState` from tick to tick
therefore pays O(1) amortized per tick for stabilization windows, rate policies
and scale-in controls — never a rescan of the window.
"""
from __future__ import annotations

from collections import deque
from operator import itemgetter
from typing import Any, Iterable, Optional

from pydantic_core import from_json, to_json

__all__ = ["TimeLog", "DecisionState", "Events"]


class _Extreme:
    """max (sign=1) or min (sign=-1) of values with ``t`` in ``(now - w, now]``
    (``closed``: ``[now - w, now]``)."""
    __slots__ = ("window", "sign", "closed", "dq")

    def __init__(self, window: float, sign: int, entries: Iterable[tuple], closed: bool = False):
        self.window, self.sign, self.closed = window, sign, closed
        self.dq: deque = deque()
        for e in entries:
            self.push(e)

    def push(self, e: tuple) -> None:
        dq, s = self.dq, self.sign
        v = e[1] * s
        while dq and dq[-1][1] * s <= v:
            dq.pop()
        dq.append(e)

    def query(self, now: float) -> Optional[int]:
        dq = self.dq
        cutoff = now - self.window
        if self.closed:
            while dq and dq[0][0] < cutoff:
                dq.popleft()
        else:
            while dq and dq[0][0] <= cutoff:
                dq.popleft()
        # entries newer than now (a request whose state runs ahead of it) are outside
        for e in dq:
            if e[0] <= now:
                return e[1]
            return _scan(dq, now, self.sign)
        return None


def _scan(dq: deque, now: float, sign: int) -> Optional[int]:
    vals = [e[1] for e in dq if e[0] <= now]
    if not vals:
        return None
    return max(vals) if sign > 0 else min(vals)


class _Sum:
    __slots__ = ("window", "dq", "total")

    def __init__(self, window: float, entries: Iterable[tuple]):
        self.window = window
        self.dq: deque = deque()
        self.total = 0
        for e in entries:
            self.push(e)

    def push(self, e: tuple) -> None:
        self.dq.append(e)
        self.total += e[1]

    def query(self, now: float) -> int:
        dq = self.dq
        cutoff = now - self.window
        while dq and dq[0][0] <= cutoff:
            self.total -= dq.popleft()[1]
        if dq and dq[-1][0] > now:  # entries from the future are outside the window
            return sum(e[1] for e in dq if e[0] <= now)
        return self.total


_FIRST = itemgetter(0)


class TimeLog:
    """Entries ``(time, value, cause)`` in time order, with incremental window views.

    A window's first query is answered by a scan (a one-shot request asks each
    window once); from its second query on — a :class:`~scalebridge.engine.Decider`
    asking every sync period — a monotonic deque or running sum, updated on
    each append, answers in O(1) amortized."""
    __slots__ = ("entries", "_views", "_asked")

    def __init__(self, entries: Iterable[tuple] = ()):
        entries = list(entries)
        # stable: entries already in time order stay as they are (cheaper than checking)
        entries.sort(key=_FIRST)
        self.entries: deque = deque(entries)
        self._views: dict = {}
        self._asked: set = set()

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, t: float, value: int, cause: Optional[str] = None) -> None:
        e = (t, value, cause)
        entries = self.entries
        if entries and entries[-1][0] > t:  # out of order: re-sort, rebuild views lazily
            entries.append(e)
            self.entries = deque(sorted(entries, key=itemgetter(0)))
            self._views.clear()
            return
        entries.append(e)
        views = self._views
        if views:
            for v in views.values():
                v.push(e)

    def _view(self, key: tuple, make):
        v = self._views.get(key)
        if v is None:
            if key not in self._asked:
                self._asked.add(key)
                return None
            v = self._views[key] = make()
        return v

    def _inside(self, now: float, window: float, closed: bool = False) -> list:
        cutoff = now - window
        if closed:
            return [e[1] for e in self.entries if cutoff <= e[0] <= now]
        return [e[1] for e in self.entries if cutoff < e[0] <= now]

    def window_max(self, now: float, window: float, closed: bool = False) -> Optional[int]:
        """Largest value with ``now - window < t <= now`` (``closed``: ``<=``), or None."""
        key = ("max", window, closed)
        v = self._views.get(key)
        if v is not None:
            return v.query(now)
        v = self._view(key, lambda: _Extreme(window, 1, self.entries, closed))
        if v is None:
            inside = self._inside(now, window, closed)
            return max(inside) if inside else None
        return v.query(now)

    def window_min(self, now: float, window: float) -> Optional[int]:
        """Smallest value with ``now - window < t <= now``, or None."""
        key = ("min", window)
        v = self._views.get(key)
        if v is not None:
            return v.query(now)
        v = self._view(key, lambda: _Extreme(window, -1, self.entries))
        if v is None:
            inside = self._inside(now, window)
            return min(inside) if inside else None
        return v.query(now)

    def window_sum(self, now: float, window: float) -> int:
        """Sum of values with ``now - window < t <= now``."""
        key = ("sum", window)
        v = self._views.get(key)
        if v is not None:
            return v.query(now)
        v = self._view(key, lambda: _Sum(window, self.entries))
        if v is None:
            return sum(self._inside(now, window))
        return v.query(now)

    def prune(self, cutoff: float) -> None:
        """Drop entries older than ``cutoff`` (views prune themselves by their window)."""
        e = self.entries
        while e and e[0][0] < cutoff:
            e.popleft()

    def to_list(self, with_cause: bool, before: Optional[float] = None) -> list[dict]:
        """The protocol's list (``before``: only the entries older than that time)."""
        entries: Iterable[tuple] = self.entries
        if before is not None:
            entries = [e for e in entries if e[0] < before]
        if with_cause:
            return [{"time": t, "change": v, "cause": c} for t, v, c in entries]
        return [{"time": t, "replicas": v} for t, v, _ in entries]

    def drop_from(self, t: float) -> None:
        """Drop the entries at ``t`` or later (a decision at ``t`` taken back whole)."""
        e = self.entries
        if e and e[-1][0] >= t:
            self.entries = deque(x for x in e if x[0] < t)
            self._views.clear()


def _events_list(entries: Iterable[tuple]) -> list[dict]:
    return [{"time": t, "change": v, "cause": c} for t, v, c in entries]


class Events:
    """The parts of a :class:`DecisionState` only a decision carried out changes —
    its scale events, its last scaling and the semantics' own keys — copied: a
    caller that does not carry a decision out puts them back
    (:meth:`DecisionState.restore_events`) and keeps the rest, the decision
    protocol's rule (docs/protocol.md: ``recommendations`` and ``sizes`` only)."""
    __slots__ = ("up", "down", "last_scale", "extra", "seen")

    def __init__(self, up: tuple, down: tuple, last_scale: Optional[dict], extra: dict, seen: bool = True):
        self.up, self.down, self.last_scale, self.extra = up, down, last_scale, extra
        #: whether the state had recommendations (None: never seen, a semantics' first decision)
        self.seen = seen


class DecisionState:
    """History one target carries from decision to decision (the protocol's ``state``, docs/protocol.md)."""
    __slots__ = ("recommendations", "sizes", "scale_up_events", "scale_down_events", "last_scale", "extra")

    def __init__(self) -> None:
        self.recommendations: Optional[TimeLog] = None   # None: never seen
        self.sizes = TimeLog()
        self.scale_up_events = TimeLog()
        self.scale_down_events = TimeLog()
        self.last_scale: Optional[dict] = None
        self.extra: dict[str, Any] = {}

    @classmethod
    def from_protocol(cls, state: Any) -> "DecisionState":
        if state is None:
            return cls()
        s = cls.__new__(cls)
        s.recommendations = None
        s.last_scale = None
        s.extra = {}
        if state.recommendations is not None:
            s.recommendations = TimeLog([(r["time"], r["replicas"], None) for r in state.recommendations])
        s.sizes = TimeLog([(r["time"], r["replicas"], None) for r in state.sizes] if state.sizes else ())
        s.scale_up_events = TimeLog([(e["time"], e["change"], e.get("cause")) for e in state.scale_up_events]
                                    if state.scale_up_events else ())
        s.scale_down_events = TimeLog([(e["time"], e["change"], e.get("cause")) for e in state.scale_down_events]
                                      if state.scale_down_events else ())
        if state.last_scale is not None:
            s.last_scale = state.last_scale.model_dump(exclude_none=True)
        extra = getattr(state, "__pydantic_extra__", None)   # state.model_extra, without its property's call
        if extra:
            s.extra = dict(extra)
        return s

    def to_protocol(self, events: Optional[Events] = None, before: Optional[float] = None) -> dict:
        """The protocol's ``state`` object. ``events``: with those events instead of its
        own (:meth:`events`, taken before a decision); ``before``: without the
        ``recommendations`` and ``sizes`` of that time or later — together, the state
        as it was before the decision at ``before``."""
        out: dict[str, Any] = {}
        if self.recommendations is not None and (events is None or events.seen):
            out["recommendations"] = self.recommendations.to_list(False, before)
        out["sizes"] = self.sizes.to_list(False, before)
        if events is None:
            out["scale_up_events"] = self.scale_up_events.to_list(True)
            out["scale_down_events"] = self.scale_down_events.to_list(True)
            last_scale, extra = self.last_scale, self.extra
        else:
            out["scale_up_events"] = _events_list(events.up)
            out["scale_down_events"] = _events_list(events.down)
            last_scale, extra = events.last_scale, events.extra
        if last_scale is not None:
            out["last_scale"] = dict(last_scale)
        out.update(extra)
        return out

    def events(self) -> Events:
        """A copy of the parts only a decision carried out changes (the semantics'
        own keys copied deep, through JSON, as the protocol carries them)."""
        return Events(tuple(self.scale_up_events.entries), tuple(self.scale_down_events.entries),
                      dict(self.last_scale) if self.last_scale is not None else None,
                      from_json(to_json(self.extra)) if self.extra else {}, self.recommendations is not None)

    def restore_events(self, events: Events) -> None:
        """Put back parts taken with :meth:`events` (the decision since not carried
        out): its ``recommendations`` and ``sizes`` stay."""
        self.scale_up_events = TimeLog(events.up)
        self.scale_down_events = TimeLog(events.down)
        self.last_scale = events.last_scale
        self.extra = events.extra

    def copy(self) -> "DecisionState":
        """An independent copy (a decision that may be taken back runs on one)."""
        import copy
        c = DecisionState.__new__(DecisionState)
        c.recommendations = None if self.recommendations is None else TimeLog(self.recommendations.entries)
        c.sizes = TimeLog(self.sizes.entries)
        c.scale_up_events = TimeLog(self.scale_up_events.entries)
        c.scale_down_events = TimeLog(self.scale_down_events.entries)
        c.last_scale = None if self.last_scale is None else dict(self.last_scale)
        c.extra = copy.deepcopy(self.extra)
        return c

    def assign(self, other: "DecisionState") -> None:
        """Take ``other``'s history as this one's."""
        for name in self.__slots__:
            setattr(self, name, getattr(other, name))

    def record_scale(self, now: float, current: int, desired: int, cause: str,
                     cooldown_seconds: Optional[float] = None) -> None:
        """Record a scale event at ``now`` (the protocol's ``state``) when the size changes."""
        if desired == current:
            return
        if desired > current:
            self.scale_up_events.append(now, desired - current, cause)
            direction = "Increase"
        else:
            self.scale_down_events.append(now, current - desired, cause)
            direction = "Decrease"
        ls = {"time": now, "direction": direction, "cause": cause}
        if cooldown_seconds is not None:
            ls["cooldown_seconds"] = cooldown_seconds
        self.last_scale = ls
