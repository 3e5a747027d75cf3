"""Neutral metric names and each provider's own metric for them.

A policy's metric names are keys (docs/policy.md); a few are *neutral*: they mean the
same measurement on every provider, and each provider's default metric source reads
them from its own metric (docs/run.md, "Default metric sources"). ``render`` writes a
rule, alarm or signal on a neutral name as that provider metric, and a name another
provider uses for a neutral metric (``Percentage CPU`` imported from Azure) as this
provider's; a neutral name a provider has no metric for is a loss line, never a copy.
Any other name is the user's own metric: its source (``--target``'s ``metrics``, as a
run configuration target's ``metrics:``) says where it lives.
"""
from __future__ import annotations

from typing import Optional

#: neutral name -> the provider's own metric, per built-in translator; None: it has none
#: - azure: a scale set's platform metrics, by their REST API names
#:   (https://learn.microsoft.com/azure/azure-monitor/reference/supported-metrics/microsoft-compute-virtualmachinescalesets-metrics);
#: - aws: the ``AWS/EC2`` instance metrics, which the ``AutoScalingGroupName`` dimension
#:   aggregates over a group's instances
#:   (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/viewing_metrics_with_cloudwatch.html);
#: - gce: Compute Engine's Cloud Monitoring metric types
#:   (https://cloud.google.com/monitoring/api/metrics_gcp_c#gcp-compute).
NEUTRAL: dict[str, dict[str, Optional[str]]] = {
    "cpu": {"azure": "Percentage CPU", "aws": "CPUUtilization",
            "gce": "compute.googleapis.com/instance/cpu/utilization"},
    "network_in": {"azure": "Network In Total", "aws": "NetworkIn",
                   "gce": "compute.googleapis.com/instance/network/received_bytes_count"},
    "network_out": {"azure": "Network Out Total", "aws": "NetworkOut",
                    "gce": "compute.googleapis.com/instance/network/sent_bytes_count"},
    "memory": {"azure": None, "aws": None, "gce": None},
}

#: why a provider has no metric for a neutral name (the loss line says it)
NONE_BECAUSE = {
    ("memory", "azure"): "a scale set's platform metrics hold the memory available (Available Memory Bytes, "
                         "Available Memory Percentage), not the memory used",
    ("memory", "aws"): "AWS/EC2 has no memory metric (the CloudWatch agent publishes one, CWAgent mem_used_percent)",
    ("memory", "gce"): "Compute Engine has no memory metric without the Ops Agent "
                       "(agent.googleapis.com/memory/percent_used)",
}

#: each provider's own metrics beside the neutral ones, written as they are
NATIVE: dict[str, frozenset[str]] = {
    "azure": frozenset({"Percentage CPU", "Network In", "Network Out", "Network In Total", "Network Out Total",
                        "Disk Read Bytes", "Disk Write Bytes", "Disk Read Operations/Sec",
                        "Disk Write Operations/Sec", "Available Memory Bytes", "Available Memory Percentage",
                        "CPU Credits Remaining", "CPU Credits Consumed", "Inbound Flows", "Outbound Flows",
                        "OS Disk Queue Depth", "Data Disk Queue Depth"}),
    "aws": frozenset({"CPUUtilization", "NetworkIn", "NetworkOut", "NetworkPacketsIn", "NetworkPacketsOut",
                      "DiskReadBytes", "DiskWriteBytes", "DiskReadOps", "DiskWriteOps", "EBSReadBytes",
                      "EBSWriteBytes", "EBSReadOps", "EBSWriteOps", "CPUCreditUsage", "CPUCreditBalance",
                      "StatusCheckFailed"}),
}

#: the namespace of the AWS metrics above
AWS_NAMESPACE = "AWS/EC2"


def neutral_of(name: str) -> Optional[str]:
    """The neutral name ``name`` is, or is a provider's metric for (``Percentage CPU`` →
    ``cpu``); None for any other name."""
    if name in NEUTRAL:
        return name
    return next((n for n, by in NEUTRAL.items() if name in by.values()), None)


def provider_metric(name: str, provider: str) -> tuple[Optional[str], Optional[str]]:
    """``(native, why_none)`` for a metric named ``name`` rendered for ``provider``:
    its own metric when ``name`` is neutral (or another provider's metric for a neutral
    one) or already one of ``provider``'s; ``(None, why)`` when the provider has no such
    metric; ``(None, None)`` for a name of the user's own."""
    if name in NATIVE.get(provider, ()):
        return name, None
    neutral = neutral_of(name)
    if neutral is None:
        return None, None
    if provider not in NEUTRAL[neutral]:
        return None, None
    native = NEUTRAL[neutral][provider]
    if native is None:
        return None, NONE_BECAUSE.get((neutral, provider), f"{provider} has no {neutral} metric")
    return native, None
