"""Times in a target's state that lie ahead of ``now``, clamped to ``now`` where the
controller loads state — never inside the pure decision.

A state written while the host's clock was ahead (an NTP step back since, a
restore from a host whose clock ran fast), or held in memory across a step back
of the wall clock, has recommendations, scale events and cooldowns "in the
future". Every semantics reads a future entry as outside its windows (the
protocol's window is ``now − w < t ≤ now``) and counts a cooldown from its time:
a stabilization window looks empty, so a scale-in it should hold goes through,
and a cooldown started two hours ahead does not end for two hours (an Azure rule
cooldown of 10 s never ended). Clamped to ``now``, each entry is as recent as it
can truthfully be: the windows hold it for their length from now, the cooldowns
count from now — the conservative reading of a clock that cannot be trusted.

Which times a state holds (the protocol's ``state``, docs/protocol.md, and the
keys each semantics and control adds):

- ``recommendations``, ``sizes``, ``scale_up_events``, ``scale_down_events``: each
  entry's ``time``;
- ``last_scale``: ``time`` and ``completed_at``;
- ``azure.last_rule_scale`` (:data:`scalebridge.stages.cooldown.MEMO_KEY`): the
  same as ``last_scale``;
- ``activation.last_active`` (:data:`scalebridge.stages.activation.STATE_LAST_ACTIVE`): a time;
- ``aws.alarm_invoked`` (:data:`scalebridge.semantics.aws.STATE_INVOKED`): a time per alarm;
- ``kubernetes.scale_up_order`` / ``kubernetes.scale_down_order``
  (:data:`scalebridge.semantics.kubernetes.SLOT_KEYS`): the event times in upstream's
  slice order, clamped alike so that they still name the events;
- keys that hold no time: :data:`UNTIMED` (alarm states, a raised maximum, failure counts);
- any other key (a plugin semantics'): a number under a key named ``time``, or
  ending in ``_time`` or ``_at``, at any depth.
"""
from __future__ import annotations

from typing import Any, Optional

from ..semantics.aws import STATE_ALARMS, STATE_INVOKED, STATE_MAX
from ..semantics.kubernetes import SLOT_KEYS
from ..stages.activation import STATE_LAST_ACTIVE
from ..stages.cooldown import MEMO_KEY
from ..stages.fallback import STATE_FAILURES

__all__ = ["clamp_future", "describe_clamped", "TIMED", "UNTIMED"]

_LISTS = ("recommendations", "sizes", "scale_up_events", "scale_down_events")
#: the state's keys holding times, by how: a record with ``time``/``completed_at``, a
#: time, a mapping of times, a list of times
TIMED = {"last_scale": "record", MEMO_KEY: "record", STATE_LAST_ACTIVE: "time", STATE_INVOKED: "times",
         SLOT_KEYS[True]: "list", SLOT_KEYS[False]: "list", **{k: "entries" for k in _LISTS}}
#: the semantics' and controls' keys known to hold no time
UNTIMED = frozenset({STATE_ALARMS, STATE_MAX, STATE_FAILURES})


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _timed_name(key: Any) -> bool:
    return isinstance(key, str) and (key == "time" or key.endswith("_time") or key.endswith("_at"))


class _Clamp:
    def __init__(self, now: float):
        self.now = now
        self.changed: list[tuple[str, float]] = []   # (path, seconds ahead)

    def t(self, v: Any, path: str) -> Any:
        if _num(v) and v > self.now:
            self.changed.append((path, float(v) - self.now))
            return self.now
        return v

    def record(self, d: Any, path: str) -> Any:
        if not isinstance(d, dict):
            return d
        out = dict(d)
        for k in ("time", "completed_at"):
            if k in out:
                out[k] = self.t(out[k], f"{path}.{k}")
        return out

    def generic(self, v: Any, path: str) -> Any:
        if isinstance(v, dict):
            return {k: (self.t(x, f"{path}.{k}") if _timed_name(k) else self.generic(x, f"{path}.{k}"))
                    for k, x in v.items()}
        if isinstance(v, list):
            return [self.generic(x, f"{path}[{i}]") for i, x in enumerate(v)]
        return v

    def key(self, key: str, v: Any) -> Any:
        how = TIMED.get(key)
        if how == "entries":
            return [self.record(e, f"{key}[{i}]") for i, e in enumerate(v)] if isinstance(v, list) else v
        if how == "record":
            return self.record(v, key)
        if how == "time":
            return self.t(v, key)
        if how == "times":
            return {k: self.t(x, f"{key}.{k}") for k, x in v.items()} if isinstance(v, dict) else v
        if how == "list":
            return [self.t(x, f"{key}[{i}]") for i, x in enumerate(v)] if isinstance(v, list) else v
        if key in UNTIMED:
            return v
        return self.generic(v, key)


def clamp_future(state: Optional[dict], now: float) -> tuple[Optional[dict], list[tuple[str, float]]]:
    """``state`` (the protocol's JSON object) with every time after ``now`` set to
    ``now``, and what was clamped: ``(path, seconds ahead)``. The state given is not
    changed; when nothing is ahead it is returned as it is."""
    if not state:
        return state, []
    c = _Clamp(now)
    out = {k: c.key(k, v) for k, v in state.items()}
    return (out, c.changed) if c.changed else (state, [])


def describe_clamped(changed: list[tuple[str, float]]) -> str:
    """``3 times, up to 2 h ahead (last_scale.time, scale_up_events[0].time, …)``."""
    worst = max(s for _, s in changed)
    span = f"{worst / 3600:.3g} h" if worst >= 3600 else f"{worst / 60:.3g} min" if worst >= 60 else f"{worst:.3g} s"
    paths = [p for p, _ in changed]
    shown = ", ".join(paths[:4]) + (", …" if len(paths) > 4 else "")
    return f"{len(changed)} time{'s' if len(changed) != 1 else ''}, up to {span} ahead ({shown})"
