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


#: the parts of a policy a semantics may read or ignore (``Semantics.decides_from``)
POLICY_PARTS = ("metrics", "rules", "profiles", "schedules", "behavior", "scale_in_control", "predictive")


def parts_of(policy: Policy) -> list[str]:
    """The parts of :data:`POLICY_PARTS` ``policy`` has."""
    has = {
        "metrics": any(m.enabled for m in policy.metrics or []),
        "rules": bool(policy.rules),
        "profiles": bool(policy.profiles),
        "schedules": bool(policy.schedules),
        "behavior": policy.behavior is not None,
        "scale_in_control": policy.scale_in_control is not None,
        "predictive": policy.predictive is not None,
    }
    return [part for part in POLICY_PARTS if has[part]]


class Semantics(ABC):
    """A provider's published autoscaling behaviour, as a pure function."""

    name: str = ""
    summary: str = ""
    default_predictive_mode: ClassVar[str] = "ForecastAndScale"
    """``policy.predictive.mode`` when the policy has ``predictive`` without a mode
    (:func:`scalebridge.stages.signals.predictive_mode`)."""
    decides_from: ClassVar[frozenset[str]] = frozenset(POLICY_PARTS)
    """The parts of a policy this semantics reads (of :data:`POLICY_PARTS`):
    ``metrics`` (target metrics), ``rules`` (threshold rules), ``profiles``,
    ``schedules``, ``behavior``, ``scale_in_control``, ``predictive``. A controller
    reads no observation for a part the semantics ignores (the HPA has no threshold
    rules; Azure autoscale no target metrics), and ``validate`` warns about a part a
    policy has that its semantics ignores (:meth:`ignored_parts`)."""

    def ignored_parts(self, policy: Policy) -> list[str]:
        """One line per part ``policy`` has that this semantics does not read; the
        last says so when nothing it reads is left, so that the target never scales
        on a signal (one policy under every provider's semantics: the same file may
        be partly foreign to some)."""
        have = parts_of(policy)
        ignored = [p for p in have if p not in self.decides_from]
        lines = [f"{part}: the {self.name} semantics does not read it ({_WHY.get((self.name, part), 'not a part of its model')})"
                 for part in ignored]
        if "metrics" in ignored and _controls_read_metrics(policy):
            # the neutral controls read them under every semantics (docs/semantics.md)
            i = ignored.index("metrics")
            ignored.pop(i)
            lines[i] = (f"metrics: the {self.name} semantics does not read their targets "
                        f"({_WHY.get((self.name, 'metrics'), 'not a part of its model')}); the neutral controls read "
                        "their values (an activation phase, a formula its rules name)")
        signals = [p for p in have if p in ("metrics", "rules", "profiles", "schedules", "predictive")
                   and p in self.decides_from]
        if ignored and not signals and any(p in ("metrics", "rules", "profiles") for p in ignored):
            lines.append(f"nothing in this policy is a signal the {self.name} semantics reads: it will never scale "
                         f"on one (it reads {', '.join(sorted(self.decides_from & set(_SIGNALS)))})")
        return lines

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
        cache = policy.__pydantic_private__["_compiled"]   # policy.compiled(), uncalled (see it)
        c = cache.get(self.name)
        if c is None:
            c = cache[self.name] = build(policy)
        return c


def _controls_read_metrics(policy: Policy) -> bool:
    """Whether the neutral controls read the policy's metrics whatever the semantics: its
    activation phase watches them, or a rule names a formula over them."""
    from ..stages.activation import phases_of
    if phases_of(policy) is not None:
        return True
    formulas = {m.name for m in policy.metrics or [] if m.type == "formula"}
    return bool(formulas) and any(r.metric in formulas for r in [*policy.rules, *(r for p in policy.profiles
                                                                               for r in p.rules)])


_SIGNALS = ("metrics", "rules", "profiles", "schedules", "predictive")
#: why a built-in semantics ignores a part, in its provider's terms
_WHY = {
    ("azure", "metrics"): "an autoscale setting has no target metrics: it scales on its profiles' rules",
    ("azure", "behavior"): "an autoscale setting's rules carry their own cooldowns",
    ("azure", "schedules"): "Azure's schedules are recurrence and fixed-date profiles",
    ("azure", "scale_in_control"): "an autoscale setting has no scale-in controls",
    ("kubernetes", "rules"): "an HPA has no threshold rules",
    ("kubernetes", "profiles"): "an HPA has no instance profiles",
    ("kubernetes", "schedules"): "an HPA has no schedules",
    ("kubernetes", "scale_in_control"): "an HPA limits scale-in with behavior.scale_down",
    ("gce", "rules"): "a MIG autoscaler has no threshold rules",
    ("gce", "profiles"): "a MIG autoscaler has no instance profiles",
    ("aws", "profiles"): "an Auto Scaling group has no instance profiles",
    ("aws", "schedules"): "AWS's scheduled actions change a group's bounds, outside its scaling policies",
    ("aws", "behavior"): "AWS scaling policies have cooldowns and warm-ups, not behaviors",
    ("aws", "scale_in_control"): "an Auto Scaling group has no scale-in controls",
}
