"""Neutral metric names, and how a translator says which of its provider's metrics stands for each.

A policy's metric names are keys (docs/policy.md); a few are *neutral*: they mean the
same measurement on every provider, and each provider's default metric source reads
them from its own metric (docs/run.md, "Default metric sources"). ``render`` writes a
rule, alarm or signal on a neutral name as that provider's metric, and a name another
provider uses for a neutral metric (``Percentage CPU`` imported from Azure) as this
provider's; a neutral name a provider has no metric for is a loss line, never a copy.
Any other name is the user's own metric: its source (``--target``'s ``metrics``, as a
run configuration target's ``metrics:``) says where it lives.

``import`` reads a provider's metric for a neutral one back as the neutral name
(:meth:`MetricNames.of`): ``CPUUtilization`` in ``AWS/EC2`` on the group is ``cpu``, and
so is Azure's ``Percentage CPU`` on the scale set — so that the imported policy reads the
observations the policy did, and render → import → render is a fixed point. A policy
that names a metric by a provider's name for a neutral one (``Percentage CPU``) therefore
loses that name in a round trip: render says so (:func:`name_lost`).

Which provider metric stands for which neutral name is each translator's to say
(:attr:`MetricNames` on its :class:`~scalebridge.translate.Translator`): nothing here
names a provider.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

#: the neutral names, what each measures (a provider's metric for it, if any, is the same
#: measurement on that provider)
NEUTRAL: Mapping[str, str] = {
    "cpu": "CPU utilization of the members, in percent of their capacity",
    "network_in": "bytes received by the members",
    "network_out": "bytes sent by the members",
    "memory": "memory used by the members, in percent",
}


@dataclass(frozen=True)
class MetricNames:
    """What a translator's provider calls the neutral metrics.

    - ``neutral``: neutral name → the provider's metric for it, or None when it has none;
    - ``missing``: neutral name → why the provider has none (the loss line says it);
    - ``native``: the provider's own metrics beside the neutral ones, written as they are.
    """

    neutral: Mapping[str, Optional[str]] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    native: frozenset[str] = frozenset()

    def of(self, name: str) -> Optional[str]:
        """The neutral name that ``name`` (one of this provider's metrics) stands for, or None."""
        return next((n for n, native in self.neutral.items() if native == name), None)


def _declared() -> Iterable[MetricNames]:
    """Every registered translator's metric names."""
    from .. import registry
    for entry in registry.current().translators.values():
        names = getattr(entry.obj, "metric_names", None)
        if isinstance(names, MetricNames):
            yield names


def neutral_of(name: str) -> Optional[str]:
    """The neutral name ``name`` is, or is some provider's metric for (``Percentage CPU`` →
    ``cpu``); None for any other name."""
    if name in NEUTRAL:
        return name
    return next((n for names in _declared() for n in [names.of(name)] if n is not None), None)


def name_lost(name: str, native: str) -> Optional[str]:
    """The loss line's text when a metric named ``name`` is written as the provider metric
    ``native`` that import reads back under another name: ``name`` is a provider's name
    for a neutral metric (``Percentage CPU``, ``CPUUtilization``), which import reads as
    the neutral one; None when the name comes back as it is."""
    neutral = neutral_of(name)
    if neutral is None or neutral == name:
        return None
    return (f"{name!r} is a provider's name for the neutral metric {neutral!r}: written as {native}, which import "
            f"reads back as {neutral!r} (name the metric {neutral!r} to keep its name)")


def provider_metric(name: str, names: MetricNames, provider: str) -> tuple[Optional[str], Optional[str]]:
    """``(native, why_none)`` for a metric named ``name`` rendered for ``provider``, whose
    metric names are ``names``: its own metric when ``name`` is neutral (or another
    provider's metric for a neutral one) or already one of ``provider``'s; ``(None, why)``
    when the provider has no such metric; ``(None, None)`` for a name of the user's own."""
    if name in names.native:
        return name, None
    neutral = neutral_of(name)
    if neutral is None or neutral not in names.neutral:
        return None, None
    native = names.neutral[neutral]
    if native is None:
        return None, names.missing.get(neutral, f"{provider} has no {neutral} metric")
    return native, None
