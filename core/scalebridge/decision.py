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

from .compiled import CompiledPolicy
from .protocol import Observations, Settings
from .state import DecisionState

__all__ = ["DISTANT_PAST", "Context", "Decision", "MetricResult", "aligned", "carried_out"]

DISTANT_PAST = -1e12
"""A null time (docs/protocol.md: "a null time is the distant past"); finite so that
``t + window`` stays ordered as Go's zero ``time.Time`` plus a window does."""


@dataclass(slots=True)
class Context:
    """What one decision reads: the protocol request's ``now``, ``current_replicas``,
    ``settings``, ``observations`` and ``state`` (updated in place by what the decision
    records), and the policy as decisions read it (:class:`~scalebridge.compiled.CompiledPolicy`;
    ``policy.source`` is the policy as written)."""
    now: float
    current: int
    policy: CompiledPolicy
    settings: Settings
    obs: Observations
    state: DecisionState
    trace: Optional[list] = None   # explain: (stage, before, after, why) records
    #: the controls' notes on this decision (:mod:`scalebridge.controls`): the metrics whose
    #: observation failed to be read or computed, by name, with why (the semantics sees them
    #: missing), and the value each metric a formula reads stood for
    failed: Optional[dict] = None
    values: Optional[dict] = None

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
    formula: Optional[str] = None      # a metric a formula reads: that formula (its proposal is the formula's)
    more: Optional[dict] = None        # further keys of the entry (a plugin semantics' own), in the response as they are

    @classmethod
    def of(cls, entry: Any) -> "MetricResult":
        """A response entry given as a dict (what semantics written before MetricResult
        returned) as a MetricResult; keys it does not name are kept in ``more``."""
        if isinstance(entry, MetricResult):
            return entry
        known = {k: entry[k] for k in _ENTRY_KEYS if k in entry}
        more = {k: v for k, v in entry.items() if k not in _ENTRY_KEYS}
        return cls(**known, more=more or None)

    @property
    def is_rule(self) -> bool:
        """A rule's entry (the protocol: rules' entries carry ``triggered``)."""
        return self.triggered is not None

    def to_dict(self) -> dict:
        """The response's JSON entry."""
        d = {"name": self.name, "replicas": self.replicas, "utilization": self.utilization,
             "value": self.value, "error": self.error}
        if self.triggered is not None:
            d["triggered"] = self.triggered
        if self.forecast_triggered is not None:
            d["forecast_triggered"] = self.forecast_triggered
        if self.formula is not None:
            d["formula"] = self.formula
        if self.more:
            d.update(self.more)
        return d


_ENTRY_KEYS = ("name", "replicas", "utilization", "value", "error", "triggered", "forecast_triggered", "formula")


@dataclass(slots=True)
class Decision:
    """One decision, as a semantics makes it and :meth:`scalebridge.Decider.step` returns it.

    Its fields are the protocol response's under shorter names: ``recommended`` is
    ``recommended_replicas``, ``desired`` is ``desired_replicas``; ``reason``,
    ``metrics`` (:class:`MetricResult` entries, made into the response's dicts only by
    :meth:`to_response`), ``profile``, ``able_to_scale`` and ``error`` are the response's own; ``cause`` is the scale event's cause and
    ``cooldown_seconds`` its cooldown (in ``state``); ``extra`` holds the response's
    further fields (``forecast``, ``fallback``, ``activation``). :meth:`to_response`
    gives the response dict :func:`scalebridge.decide` returns for the same request."""

    recommended: int
    desired: int
    reason: str
    metrics: list[MetricResult] = field(default_factory=list)
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


def aligned(policy: Any, metrics: list[MetricResult]) -> list[MetricResult]:
    """The protocol (response): "`metrics[i]` follows `policy.metrics[i]` for target
    metrics, then the rules in force". A semantics that leaves disabled metrics
    out of its list gets an entry (error "disabled") in their place, so that the
    index still names the policy's metric."""
    specs = policy.metrics
    if not specs or not metrics or all(m.enabled for m in specs):
        return metrics
    enabled = [m.name for m in specs if m.enabled]
    n = 0   # target-metric entries come first; rule entries carry `triggered`
    while n < len(metrics) and metrics[n].triggered is None:
        n += 1
    if not enabled or [m.name for m in metrics[:n]] != enabled:
        return metrics   # already aligned, or no target-metric entries (a proposal, rules only)
    rest = iter(metrics)
    out = [next(rest) if m.enabled else MetricResult(m.name, error="disabled") for m in specs]
    out.extend(rest)
    return out


def carried_out(mode: Optional[str], current: int, final: int) -> bool:
    """Whether the engine will apply (and record) a move from ``current`` to ``final``:
    ``mode`` OFF keeps the size, ONLY_SCALE_OUT keeps it on a scale-in, ONLY_SCALE_IN on a scale-out
    (docs/protocol.md, ``mode``)."""
    return mode != "OFF" and not (mode == "ONLY_SCALE_OUT" and final < current) and \
        not (mode == "ONLY_SCALE_IN" and final > current)
