"""Which members leave on a scale-in (``policy.scale_in``, docs/policy.md): a pure
function of the members and one metric's samples.

The decision says how many leave (``current_replicas - desired_replicas``); the
selection says which, in one of five orders:

==================  ==========================================================================
``select``          the members that are ready leave in this order
==================  ==========================================================================
``least_loaded``    the lowest sample of ``metric`` first (the seed's websocket connections:
                    the member whose departure cuts the fewest sessions); members without a
                    sample last (their load is unknown)
``oldest``          the earliest ``start_time`` first (AWS's ``OldestInstance``, Azure's
                    ``OldestVM``)
``newest``          the latest ``start_time`` first (Azure's ``NewestVM``, Nomad's
                    ``newest_create_index``)
``unready_first``   none: only members that are not ready are chosen, the provider's own order
                    removes the rest (a partial selection)
``zone_balanced``   one at a time from the zone with the most members (AWS's and Azure's
                    default balance across Availability Zones), within a zone the lowest
                    ``metric`` first when one is named, else the newest
==================  ==========================================================================

Whatever the order, members that are failed, pending or not ready go first (failed,
then pending, then not ready), as every provider's own ordering has them go: the
ReplicaSet controller deletes "Unassigned < assigned", "PodPending < PodUnknown <
PodRunning", "Not ready < ready" before it reads a pod's deletion cost
(kubernetes/kubernetes ``pkg/controller/controller_utils.go``, ``ActivePodsWithRanks.Less``,
keys 1-4); Azure's ``prioritizeUnhealthyVMs`` and AWS's replacement of unhealthy
instances do the same. A member that is ``deleting`` is already leaving and is never
chosen; one that is ``protected`` (AWS ``ProtectedFromScaleIn``, Azure
``protectFromScaleIn``) is never chosen; an entry standing for several members
(``count`` > 1, the simulator's cohorts) cannot be named and is not chosen either.

A selection with fewer members than leave is *partial*: the provider's own order
chooses the others when it sets the size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..decision import DISTANT_PAST

__all__ = ["Chosen", "Selection", "select_members", "samples_of", "FIRST", "WHY"]

#: why a member went first, before the order of ``select``: its rank
FIRST = {"failed": 0, "pending": 1, "not_ready": 2}
#: every reason a member is chosen for (the ``why`` of :class:`Chosen`, the audit's and
#: ``scalebridge_scale_in_members_total``'s label)
WHY = ("failed", "pending", "not_ready", "least_loaded", "oldest", "newest", "zone_balanced")


@dataclass(frozen=True, slots=True)
class Chosen:
    """One member chosen to leave: its name, why (:data:`WHY`), and what ranked it (the
    metric's sample for ``least_loaded``, the zone for ``zone_balanced``)."""
    name: str
    why: str
    value: Any = None

    def describe(self) -> str:
        if self.why in FIRST:
            return f"{self.name} ({self.why.replace('_', ' ')})"
        if self.value is None:
            return self.name
        return f"{self.name} ({self.value})"


@dataclass(frozen=True, slots=True)
class Selection:
    """The members a scale-in of ``count`` removes, in order (``chosen``), and why."""
    select: str
    count: int
    chosen: tuple[Chosen, ...]
    metric: Optional[str] = None
    reason: str = ""

    @property
    def members(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.chosen)

    @property
    def complete(self) -> bool:
        """Every member that leaves is named (else the provider chooses the rest)."""
        return len(self.chosen) == self.count

    def to_json(self) -> dict:
        """The response's ``scale_in`` object (docs/protocol.md)."""
        out: dict = {"select": self.select, "count": self.count, "members": list(self.members),
                     "why": {c.name: c.why for c in self.chosen}, "reason": self.reason}
        if self.metric is not None:
            out["metric"] = self.metric
        return out


def samples_of(obs: Any) -> Optional[Mapping[str, Any]]:
    """A metric observation's per-member samples: ``members``, else each member's latest
    point of ``member_series``; None when it has neither (or it failed to be read)."""
    if obs is None or getattr(obs, "error", None) is not None:
        return None
    if obs.members:
        return obs.members
    series = obs.member_series
    if series:
        out = {}
        for name, pts in series.items():
            for _, v in reversed(pts):
                if v is not None:
                    out[name] = v
                    break
        return out or None
    return None


def _first(m: Any) -> Optional[str]:
    """Why a member goes before the order applies, or None for a ready, running member."""
    if m.phase in ("Failed", "Succeeded"):
        return "failed"
    if m.phase == "Pending":
        return "pending"
    if m.ready is not True:   # false, or no Ready condition (IsPodReady: false)
        return "not_ready"
    return None


def _started(m: Any) -> float:
    t = m.start_time
    if t is None:
        t = m.ready_transition_time
    return DISTANT_PAST if t is None else float(t)


def _number(v: Any) -> Any:
    """A sample as a number that orders exactly (a quantity string as its exact value)."""
    if type(v) in (int, float):
        return v
    from ..units import exact
    return exact(v)


def _shown(v: Any) -> Any:
    if type(v) in (int, float, str):
        return v
    f = float(v)
    return int(f) if f.is_integer() else round(f, 3)


def select_members(members: Optional[Sequence[Any]], count: int, select: str, *,
                   samples: Optional[Mapping[str, Any]] = None, metric: Optional[str] = None) -> Selection:
    """The members a scale-in of ``count`` removes, ``select``'s way (module docstring).
    ``members`` are the protocol's (``observations.members``); ``samples`` the per-member
    values of ``metric`` (:func:`samples_of`). Pure: the same arguments, the same
    selection."""
    count = max(0, int(count))
    all_members = list(members or ())
    eligible = [m for m in all_members if not m.deleting and not m.protected and m.count == 1]
    skipped_protected = sum(1 for m in all_members if m.protected and not m.deleting)
    grouped = sum(1 for m in all_members if m.count > 1 and not m.deleting)
    samples = samples or {}

    def load(m: Any) -> tuple:
        v = samples.get(m.name)
        return (1, 0) if v is None else (0, _number(v))

    def order_key(m: Any) -> tuple:
        if select == "least_loaded":
            return (*load(m), -_started(m), m.name)
        if select == "oldest":
            return (_started(m), m.name)
        return (-_started(m), m.name)   # newest; within a zone without a metric; unready_first's first group

    first = sorted((m for m in eligible if _first(m) is not None),
                   key=lambda m: (FIRST[_first(m)], order_key(m)))
    chosen = [Chosen(m.name, _first(m)) for m in first[:count]]
    left = count - len(chosen)
    ready = [m for m in eligible if _first(m) is None]
    if left > 0 and select in ("least_loaded", "oldest", "newest"):
        for m in sorted(ready, key=order_key)[:left]:
            value = None
            if select == "least_loaded":
                v = samples.get(m.name)
                value = "no sample" if v is None else _shown(v)
            chosen.append(Chosen(m.name, select, value))
    elif left > 0 and select == "zone_balanced":
        chosen.extend(_zone_balanced(all_members, ready, {c.name for c in chosen}, left, metric, samples, load))
    reason = _reason(select, metric, count, chosen, len(eligible), skipped_protected, grouped)
    return Selection(select, count, tuple(chosen), metric, reason)


def _zone_balanced(every: Iterable[Any], ready: list, gone: set, left: int, metric: Optional[str],
                   samples: Mapping[str, Any], load) -> list[Chosen]:
    """One member at a time from the zone with the most members still there (members not
    leaving, protected ones included: they hold their zone's place); ties by zone name.
    Within a zone: the lowest ``metric`` first when one is named, else the newest."""
    sizes: dict[str, int] = {}
    for m in every:
        if not m.deleting and m.name not in gone:
            z = m.zone or ""
            sizes[z] = sizes.get(z, 0) + m.count
    by_zone: dict[str, list] = {}
    key = (lambda m: (*load(m), -_started(m), m.name)) if metric else (lambda m: (-_started(m), m.name))
    for m in sorted(ready, key=key):
        by_zone.setdefault(m.zone or "", []).append(m)
    out: list[Chosen] = []
    while left > 0:
        zones = [z for z, ms in by_zone.items() if ms]
        if not zones:
            break
        z = min(zones, key=lambda z: (-sizes[z], z))
        m = by_zone[z].pop(0)
        sizes[z] -= 1
        out.append(Chosen(m.name, "zone_balanced", z or "no zone"))
        left -= 1
    return out


def _reason(select: str, metric: Optional[str], count: int, chosen: list[Chosen], eligible: int,
            protected: int, grouped: int) -> str:
    head = f"{select}" + (f" on {metric}" if metric else "")
    shown = ", ".join(c.describe() for c in chosen[:10]) + (f" and {len(chosen) - 10} more" if len(chosen) > 10 else "")
    text = f"{head}: {count} leave" + (f": {shown}" if chosen else "")
    rest = count - len(chosen)
    if rest > 0:
        why = []
        if select == "unready_first":
            why.append("unready_first names only members that are not ready")
        if eligible < count:
            why.append(f"{eligible} member(s) can be chosen")
        if protected:
            why.append(f"{protected} protected from scale-in")
        if grouped:
            why.append(f"{grouped} entries stand for several members and cannot be named")
        text += f"; the provider chooses the other {rest}" + (f" ({'; '.join(why)})" if why else "")
    return text
