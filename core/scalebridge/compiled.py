"""A policy as one decision reads it: :class:`CompiledPolicy`.

A :class:`~scalebridge.policy.Policy` is what a user wrote, validated. What a decision
reads is that policy as the controls around every semantics leave it (a formula reaches
the semantics as one metric in place of the metrics it names; the scaling phase of scale
to and from zero has no bound below ``max(min_replicas, 1)``) — made once per policy by
:func:`scalebridge.controls.compile`, owned by the :class:`~scalebridge.engine.Decider`
that decides with it (or by the engine's cache of the policies requests carry), and
never changed after. It keeps what every semantics, stage and control derives from it
once (:meth:`CompiledPolicy.derived`): parsed targets, sorted rules, a schedule's
recurrences, the semantics' own records.

It has every field of the policy, under the policy's names, so the code that reads a
policy reads it the same way; :attr:`CompiledPolicy.source` is the policy as written.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Hashable, Optional

from .policy import Policy

__all__ = ["CompiledPolicy", "POLICY_FIELDS", "derived"]

#: the fields of a policy, in order
POLICY_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Policy))


class CompiledPolicy:
    """A validated policy as the decisions on it read it (see the module docstring).

    - every field of :class:`~scalebridge.policy.Policy`, as the controls leave it;
    - ``source``: the policy as written (what the response's metric entries follow);
    - ``controls``: the controls that apply to it, outermost first
      (:mod:`scalebridge.controls`);
    - :meth:`derived`: what is derived from it once, by key."""

    __slots__ = POLICY_FIELDS + ("source", "controls", "_derived")

    def __init__(self, source: Policy, controls: tuple = (), **changes: Any):
        unknown = set(changes) - set(POLICY_FIELDS)
        if unknown:
            raise TypeError(f"not fields of a policy: {', '.join(sorted(unknown))}")
        for name in POLICY_FIELDS:
            setattr(self, name, changes[name] if name in changes else getattr(source, name))
        self.source = source
        self.controls = controls
        self._derived: dict = {}

    def derived(self, key: Hashable, build: Callable[["CompiledPolicy"], Any]) -> Any:
        """``build(self)``, once per ``key``: what a semantics, a stage or a control derives
        from this policy and every decision on it reads (a build that raises is not kept:
        every decision that asks raises)."""
        d = self._derived
        try:
            return d[key]
        except KeyError:
            value = d[key] = build(self)
            return value

    def __repr__(self) -> str:
        return f"CompiledPolicy({self.source!r})"


def derived(policy: Any, key: Hashable, build: Callable[[Any], Any]) -> Any:
    """:meth:`CompiledPolicy.derived` of ``policy``, or ``build(policy)`` each time for a plain
    :class:`~scalebridge.policy.Policy` (a stage called on its own)."""
    d: Optional[Callable] = getattr(policy, "derived", None)
    return build(policy) if d is None else d(key, build)
