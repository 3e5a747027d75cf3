"""The contract of a control: what sits around every semantics alike.

A control is KEDA's kind of thing — ``pkg/scaling/modifiers`` (formulas),
``pkg/fallback`` (fallback on metric failure), the activation phase of
``pkg/scaling/scale_handler.go`` (scale to and from zero) — kept apart from the
semantics it surrounds, as KEDA keeps them apart from its scale handler. Each one:

- says when it applies (:meth:`Control.applies`, of the policy alone);
- says what it changes in the policy as decisions read it, once
  (:meth:`Control.compile`: fields of the :class:`~scalebridge.compiled.CompiledPolicy`,
  never the policy as written);
- says what it reads beyond what the semantics reads (:meth:`Control.reads`): the
  controller, the back-test and ``validate`` ask it instead of keeping lists of their own;
- decides around the semantics through one interface (:meth:`Control.decide`): it gets
  the decision's :class:`~scalebridge.decision.Context` and the next decision inward
  (another control, the semantics last), and returns a
  :class:`~scalebridge.decision.Decision` — by calling it, with the context as it
  wants it seen, or without calling it at all.

The controls' notes on one decision travel in the context: ``ctx.failed`` (metrics whose
observation failed to be read or computed, with why) and ``ctx.values`` (the value each
metric a formula reads stood for).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from ..decision import Context, Decision
from ..policy import Policy

if TYPE_CHECKING:
    from ..reads import Reads

__all__ = ["Control", "Inner"]

Inner = Callable[[Context], Decision]
"""The next decision inward: another control, or the semantics' ``decide``."""


class Control(ABC):
    """One control around every semantics (see the module docstring)."""

    #: its name, in the explain trace and the documentation
    name: ClassVar[str] = ""
    #: whether it adds to ``ctx.failed`` (a formula that cannot be computed)
    adds_failures: ClassVar[bool] = False

    @abstractmethod
    def applies(self, policy: Policy) -> bool:
        """Whether this control runs for ``policy`` (decided once, when the policy is compiled)."""

    def compile(self, policy: Policy) -> dict[str, Any]:
        """The fields of the compiled policy this control changes, and their values
        (default: none). Given the policy as written; the values are new objects, the
        policy is never changed."""
        return {}

    def reads(self, policy: Policy, reads: "Reads", semantics: Any) -> "Reads":
        """What one sync reads for ``policy`` with this control, given what ``semantics``
        (and the controls inward of this one) read of the compiled policy (default: the
        same); ``semantics.metric_need(metric)`` is how that semantics reads a metric."""
        return reads

    @abstractmethod
    def decide(self, ctx: Context, inner: Inner) -> Decision:
        """One decision with this control around ``inner``."""
