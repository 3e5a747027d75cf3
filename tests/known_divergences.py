"""Known divergences: where scalebridge does something else than the page that decides.

Each entry is asserted by one test marked ``@pytest.mark.divergence("<id>")``; the
conftest turns the mark into a strict xfail, so a fix shows up as an XPASS failure
and the entry (and its line in docs/known-divergences.md) must go. ``source`` is
the provider page (or, for the simulator and the command, the page of docs/ that
promises the behaviour).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Divergence:
    id: str
    summary: str
    source: str


DIVERGENCES: dict[str, Divergence] = {d.id: d for d in [
    Divergence("gce-gauge-latest-point",
               "a GAUGE metric given as member_series uses each VM's latest point; GCE averages the VMs' "
               "values over the last couple of minutes",
               "https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers (UtilizationTargetType GAUGE)"),
    Divergence("azure-clock-aligned-grains",
               "member samples are bucketed into clock-aligned grains, so a PT10M window that does not end on a "
               "minute boundary yields eleven partial 1-minute samples instead of ten",
               "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings "
               "(timeAggregation)"),
    Divergence("simulator-partial-last-tick",
               "a final partial tick (a trace not a whole number of ticks, or shorter than one tick) is paid and "
               "scored as a whole tick",
               "docs/simulation.md (--trace, --tick)"),
    Divergence("simulator-counter-metrics",
               "the replay publishes no member_series, so a counter metric (target.rate, GCE DELTA_PER_SECOND) "
               "fails every decision",
               "docs/simulation.md (--series-grain: counters are not simulated)"),
    Divergence("simulator-series-grain",
               "the group series is published at the model's 60-s grain whatever the rule's time_grain_seconds; "
               "Azure reads one point per rule grain",
               "https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings "
               "(timeGrain)"),
    Divergence("request-duplicate-key",
               "a key given twice in a JSON request is last-wins; a policy file refuses duplicate keys",
               "docs/protocol.md (input forms)"),
    Divergence("keda-initial-cooldown-from-first-decision",
               "initial_scale_to_zero_delay_seconds counts from the first decision on the target; KEDA's "
               "initialCooldownPeriod counts from the ScaledObject's creation, which a decision does not know",
               "https://keda.sh/docs/2.20/reference/scaledobject-spec/#initialcooldownperiod"),
    Divergence("keda-non-finite-values",
               "a NaN or infinite metric value cannot reach a decision (the protocol is JSON, which has no such "
               "number; the Prometheus source reads NaN as no sample); KEDA >= 2.20.2 reads it as 0",
               "kedacore/keda v2.20.2 pkg/scalers/scaler.go quantityFromFloat64 (#7889)"),
]}
