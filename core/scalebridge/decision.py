"""What one decision reads and what it returns: :class:`Context` in, :class:`Decision`
out, one :class:`MetricResult` per metric or rule.

The bottom of the decision core: stages, semantics and the engine all build on
these types, and this module imports none of them. A decision is a pure
function of its context: no clock (time is ``ctx.now``), no I/O, no randomness;
history comes in as ``ctx.state``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .policy import Policy
from .protocol import Observations, Settings
from .state import DecisionState

__all__ = ["DISTANT_PAST", "Context", "Decision", "MetricResult", "carried_out"]

DISTANT_PAST = -1e12
"""A null time (docs/protocol.md: "a null time is the distant past"); finite so that
``t + window`` stays ordered as Go's zero ``time.Time`` plus a window does."""


@dataclass(slots=True)
class Context:
    now: float
    current: int
    policy: Policy
    settings: Settings
    obs: Observations
    state: DecisionState
    trace: Optional[list] = None   # explain: (stage, before, after, why) records

    def note(self, stage: str, before: Any, after: Any, why: str = "") -> None:
        """Record one stage's input and output for ``scalebridge explain``."""
        if self.trace is not None:
            self.trace.append({"stage": stage, "in": before, "out": after, "why": why})


@dataclass(slots=True)
class MetricResult:
    """One entry of ``response.metrics``: a metric's or rule's raw proposal."""
    name: str
    replicas: Optional[int] = None
    utilization: Optional[int] = None
    value: Any = None
    error: Optional[str] = None
    triggered: Optional[bool] = None   # rules only
    forecast_triggered: Optional[bool] = None   # rules only: would the forecast fire it (Azure predictive)

    def to_dict(self) -> dict:
        d = {"name": self.name, "replicas": self.replicas, "utilization": self.utilization,
             "value": self.value, "error": self.error}
        if self.triggered is not None:
            d["triggered"] = self.triggered
        if self.forecast_triggered is not None:
            d["forecast_triggered"] = self.forecast_triggered
        return d


@dataclass(slots=True)
class Decision:
    """One decision, as a semantics makes it and :meth:`scalebridge.Decider.step` returns it.

    Its fields are the protocol response's under shorter names: ``recommended`` is
    ``recommended_replicas``, ``desired`` is ``desired_replicas``; ``reason``,
    ``metrics`` (:class:`MetricResult` entries), ``profile``, ``able_to_scale`` and
    ``error`` are the response's own; ``cause`` is the scale event's cause and
    ``cooldown_seconds`` its cooldown (in ``state``); ``extra`` holds the response's
    further fields (``forecast``, ``fallback``, ``activation``). :meth:`to_response`
    gives the response dict :func:`scalebridge.decide` returns for the same request."""

    recommended: int
    desired: int
    reason: str
    metrics: list = field(default_factory=list)
    profile: Optional[str] = None
    able_to_scale: bool = True
    error: Optional[str] = None
    cause: str = "metric"                     # of the scale event, when desired != current
    cooldown_seconds: Optional[float] = None  # that activity's cooldown (aws, azure)
    extra: Optional[dict] = None              # additional response fields (e.g. forecast)
    #: set by Decider.step: makes the response (semantics, current size, state after this decision)
    respond: Optional[Callable[["Decision"], dict]] = field(default=None, repr=False, compare=False)

    def to_response(self) -> dict:
        """The protocol's response dict for this decision — exactly what
        :func:`scalebridge.decide` returns for the request the step was given
        (``desired_replicas``, ``metrics`` following ``policy.metrics``, the
        ``state`` after this decision…). Call it before the :class:`Decider`
        steps again: the state it reports is the Decider's, which the next step
        changes (a later call raises ``ValueError``)."""
        if self.respond is None:
            raise ValueError("this Decision was not made by Decider.step: it has no request to answer "
                             "(scalebridge.decide() returns the response of a request)")
        return self.respond(self)


def carried_out(mode: Optional[str], current: int, final: int) -> bool:
    """Whether the engine will apply (and record) a move from ``current`` to ``final``:
    ``mode`` OFF keeps the size, ONLY_SCALE_OUT keeps it on a scale-in (docs/protocol.md, ``mode``)."""
    return mode != "OFF" and not (mode == "ONLY_SCALE_OUT" and final < current)
