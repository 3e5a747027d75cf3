"""The per-call contract of a semantics: ``Semantics.decide(Context) -> Decision``.

A semantics is a pure function of its context: no clock (time is ``ctx.now``),
no I/O, no randomness. History comes in as ``ctx.state`` (a
:class:`~scalebridge.state.DecisionState`) which the semantics updates with
what it records (its recommendation); the engine then appends the size and the
scale event the protocol prescribes (docs/protocol.md) and prunes what no window needs.
"""
from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Mapping, Optional

from .. import constants as C
from ..compiled import derived
from ..decision import DISTANT_PAST, Context, Decision, MetricResult, carried_out
from ..policy import Metric, Policy
from ..reads import SERIES, SNAPSHOT_SHAPES, Need, Reads

__all__ = ["DISTANT_PAST", "Context", "Decision", "MetricResult", "Need", "Reads", "Semantics", "carried_out"]


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
    ignores: ClassVar[Mapping[str, str]] = {}
    """Why it ignores each part it does not read, in its provider's terms (``rules``: "an
    HPA has no threshold rules"): the line :meth:`ignored_parts` says."""
    color: ClassVar[Optional[str]] = None
    """Its colour in plots (``simulate --plot``, ``compare``), or None for one of the spares."""
    forecast_grain_seconds: ClassVar[float] = 60.0
    """The resolution of the history a predictive metric is read at (:meth:`reads`)."""

    # -- what it reads ----------------------------------------------------------------------
    def reads(self, policy: Any) -> Reads:
        """What deciding on ``policy`` (as decisions read it, the compiled policy) reads under
        this semantics: one :class:`~scalebridge.reads.Need` per observation — each enabled
        target metric as :meth:`metric_need` says, each enabled threshold rule as
        :meth:`rule_need` says, the predictive metric, the metrics it decides from when the
        policy names none (:meth:`default_metrics`) — for the parts it reads
        (:attr:`decides_from`), and a line for each part it ignores. The controller, the
        back-test and ``validate`` read it; the controls around every semantics add theirs
        (:func:`scalebridge.controls.reads`)."""
        parts = self.decides_from
        needs = []
        if "metrics" in parts:
            needs += [self.metric_need(m) for m in policy.metrics or () if m.enabled and m.type != "formula"]
        if "rules" in parts:
            needs += [self.rule_need(r) for r in rules_of(policy) if r.enabled]
        pred = policy.predictive
        if pred is not None and pred.metric and (pred.mode or "Disabled") != "Disabled":
            needs.append(Need(pred.metric, "forecast", pred, float(pred.history_seconds or C.FORECAST_HISTORY_SECONDS),
                              self.forecast_grain_seconds, frozenset({"series"})))
        # a metric the policy does not name: its query carries only its type and name
        needs += [dataclasses.replace(self.metric_need(m), spec=None) for m in self.default_metrics(policy)]
        return Reads(ignored=tuple(self.ignored_parts(getattr(policy, "source", policy)))).with_needs(needs)

    def metric_need(self, metric: Metric) -> Need:
        """How this semantics reads a target metric: by default a snapshot of the last
        metric window — per-member samples, an object's value, an external metric's values
        (what the Kubernetes metrics APIs return)."""
        return Need(metric.name, metric.type, metric, C.METRIC_WINDOW_SECONDS, 60.0,
                    SNAPSHOT_SHAPES.get(metric.type, frozenset({"members", "value"})))

    def rule_need(self, rule: Any) -> Need:
        """How this semantics reads a threshold rule's metric: a series at the rule's time
        grain over its window (and over every period its alarm evaluates)."""
        periods = max(rule.evaluation_periods, rule.datapoints_to_alarm or 1)
        window = max(float(rule.time_window_seconds), float(rule.time_grain_seconds) * periods)
        return Need(rule.metric, "rule", rule, window, float(rule.time_grain_seconds), SERIES)

    def default_metrics(self, policy: Any) -> tuple[Metric, ...]:
        """The metrics it decides from when the policy names none (its provider's default:
        the HPA's 80 % CPU, GCE's 0.6): none by default."""
        return ()

    def ignored_parts(self, policy: Policy, settings: Any = None) -> list[str]:
        """One line per part ``policy`` has that this semantics does not read; the
        last says so when nothing it reads is left, so that the target never scales
        on a signal (one policy under every provider's semantics: the same file may
        be partly foreign to some). ``settings`` (the protocol's, or None for every
        default): a semantics whose provider release ignores part of a policy says so
        too (the kubernetes semantics' ``kubernetes_version``)."""
        have = parts_of(policy)
        ignored = [p for p in have if p not in self.decides_from]
        lines = [f"{part}: the {self.name} semantics does not read it ({self.ignores.get(part, 'not a part of its model')})"
                 for part in ignored]
        if "metrics" in ignored and _controls_read_metrics(policy):
            # the neutral controls read them under every semantics (docs/semantics.md)
            i = ignored.index("metrics")
            ignored.pop(i)
            lines[i] = (f"metrics: the {self.name} semantics does not read their targets "
                        f"({self.ignores.get('metrics', 'not a part of its model')}); the neutral controls read "
                        "their values (an activation phase, a formula its rules name)")
        signals = [p for p in have if p in ("metrics", "rules", "profiles", "schedules", "predictive")
                   and p in self.decides_from]
        if ignored and not signals and any(p in ("metrics", "rules", "profiles") for p in ignored):
            lines.append(f"nothing in this policy is a signal the {self.name} semantics reads: it will never scale "
                         f"on one (it reads {', '.join(sorted(self.decides_from & set(_SIGNALS)))})")
        return lines

    def check_settings(self, settings: Any) -> None:
        """Refuse ``settings`` (the protocol's) this semantics cannot decide with, raising a
        :class:`~scalebridge.errors.RequestError` naming ``$.settings.KEY`` (the kubernetes
        semantics: a ``kubernetes_version`` that is no release, an unknown feature gate).
        ``run`` calls it when it builds a target, :class:`~scalebridge.Decider` when it is
        made; a decision on such settings raises the same. Default: nothing to refuse."""

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

    def cached(self, policy: Any, build):
        """What this semantics derives from ``policy`` (the compiled policy a decision reads),
        built once by ``build(policy)`` and kept with it
        (:meth:`~scalebridge.compiled.CompiledPolicy.derived`): a stream of decisions for one
        policy compiles it once."""
        return derived(policy, self, build)


class _Unregistered(Semantics):
    """A semantics name no plugin registered, as far as what it reads goes: every part of a
    policy, as the contract's defaults say (it decides nothing)."""
    name = "(unregistered)"

    def decide(self, ctx: Context) -> Decision:
        raise NotImplementedError("an unregistered semantics decides nothing")


UNREGISTERED = _Unregistered()


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


def rules_of(policy: Any):
    """Every threshold rule of ``policy``: the top-level ones, then each profile's."""
    yield from policy.rules or ()
    for p in policy.profiles or ():
        yield from p.rules or ()
