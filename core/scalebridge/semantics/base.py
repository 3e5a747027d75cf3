"""The per-call contract of a semantics: ``Semantics.decide(Context) -> Decision``.

A semantics is a pure function of its context: no clock (time is ``ctx.now``),
no I/O, no randomness. History comes in as ``ctx.state`` (a
:class:`~scalebridge.state.DecisionState`) which the semantics updates with
what it records (its recommendation); the engine then appends the size and the
scale event the protocol prescribes (docs/protocol.md) and prunes what no window needs.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from ..decision import DISTANT_PAST, Context, Decision, MetricResult, carried_out
from ..policy import Policy

__all__ = ["DISTANT_PAST", "Context", "Decision", "MetricResult", "Semantics", "carried_out"]


class Semantics(ABC):
    """A provider's published autoscaling behaviour, as a pure function."""

    name: str = ""
    summary: str = ""
    default_predictive_mode: ClassVar[str] = "ForecastAndScale"
    """``policy.predictive.mode`` when the policy has ``predictive`` without a mode
    (:func:`scalebridge.stages.signals.predictive_mode`)."""
    decides_from: ClassVar[frozenset[str]] = frozenset({"metrics", "rules"})
    """The parts of a policy this semantics reads signals from: ``metrics`` (target
    metrics) and ``rules`` (threshold rules). A controller reads no observation for
    a part the semantics ignores (the HPA has no threshold rules; Azure autoscale no
    target metrics)."""

    @abstractmethod
    def decide(self, ctx: Context) -> Decision:
        """Decide one sync period. Record what this semantics keeps in ``ctx.state``."""

    def retention(self, ctx: Context) -> dict[str, float]:
        """Seconds of each history log this semantics still needs (docs/protocol.md,
        ``state``: entries older than every window that needs them are dropped)."""
        return {}

    def check(self, policy: Policy) -> None:
        """Raise :class:`~scalebridge.errors.RequestError` for a policy this
        semantics cannot run (e.g. a required field it has no default for)."""

    def cached(self, policy: Policy, build):
        """What this semantics derives from ``policy``, built once by ``build(policy)``
        and kept on the policy (``policy.compiled()[self.name]``): a stream of
        decisions for one policy validates and compiles it once."""
        cache = policy.compiled()
        c = cache.get(self.name)
        if c is None:
            c = cache[self.name] = build(policy)
        return c
