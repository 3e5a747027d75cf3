"""What deciding on a policy reads: :class:`Reads`, one :class:`Need` per observation name.

A semantics says what it reads of a policy (:meth:`scalebridge.semantics.base.Semantics.reads`:
the metric shapes, windows and grains its provider's autoscaler reads, and the parts of the
policy it ignores, with why); each control that applies says what it adds
(:meth:`scalebridge.controls.base.Control.reads`). The controller turns the result into the
queries a sync makes (:mod:`scalebridge.controller.queries`), the back-test into the history
it reads, and ``validate`` into its warnings — none of them branches on a semantics' name.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional

__all__ = ["Need", "Reads", "SERIES", "SNAPSHOT_SHAPES"]

#: the shapes of a group-level or per-member series (docs/protocol.md, observations)
SERIES = frozenset({"series", "member_series"})
#: what a snapshot metric is observed as, by metric type: per-member samples, one value of an
#: object, an external metric's values (what the Kubernetes metrics APIs return)
SNAPSHOT_SHAPES = {
    "resource": frozenset({"members"}),
    "container_resource": frozenset({"members"}),
    "pods": frozenset({"members"}),
    "object": frozenset({"value"}),
    "external": frozenset({"values"}),
    "load_balancing": frozenset({"members", "value"}),
}


@dataclass(frozen=True)
class Need:
    """One observation a decision reads, ``observations.metrics[name]``.

    ``type`` is the policy metric's type (``resource``, ``pods``, …), ``rule`` for a
    threshold rule's metric, or ``forecast`` for the metric a predictive planner follows;
    ``spec`` the policy's metric, rule or ``predictive`` it comes from;
    ``window_seconds`` how far back samples are needed, ``grain_seconds`` the series'
    resolution, ``shapes`` the observation fields read (``members``, ``value``,
    ``values``, ``series``, ``member_series``)."""

    name: str
    type: str
    spec: Any
    window_seconds: float
    grain_seconds: float = 60.0
    shapes: frozenset[str] = frozenset({"members"})

    def joined(self, other: "Need") -> "Need":
        """One observation serving both uses: the longer window, the finer grain, every
        shape, and the type and spec of the use that says most of what is read — a target
        metric's, else a rule's, else a forecast's (the first of equals)."""
        first = other if _RANK.get(other.type, 0) < _RANK.get(self.type, 0) else self
        return replace(first, window_seconds=max(self.window_seconds, other.window_seconds),
                       grain_seconds=min(self.grain_seconds, other.grain_seconds), shapes=self.shapes | other.shapes)


_RANK = {"rule": 1, "forecast": 2}   # a metric type ranks 0


@dataclass(frozen=True)
class Reads:
    """Everything deciding on one policy reads: ``needs`` (one per observation name, the
    first use of a name deciding its type), and ``ignored`` (one line per part of the
    policy the semantics does not read, saying why)."""

    needs: tuple[Need, ...] = ()
    ignored: tuple[str, ...] = ()

    def with_needs(self, needs: Iterable[Need]) -> "Reads":
        """These reads and ``needs`` besides, a name already read joining its uses."""
        out: dict[str, Need] = {n.name: n for n in self.needs}
        for n in needs:
            out[n.name] = out[n.name].joined(n) if n.name in out else n
        return replace(self, needs=tuple(out.values()))

    def without(self, names: Iterable[str]) -> "Reads":
        """These reads less the observations ``names`` (computed, not read)."""
        drop = set(names)
        return replace(self, needs=tuple(n for n in self.needs if n.name not in drop))

    def need(self, name: str) -> Optional[Need]:
        return next((n for n in self.needs if n.name == name), None)

    @property
    def names(self) -> list[str]:
        return [n.name for n in self.needs]
