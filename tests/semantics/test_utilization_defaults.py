"""A Utilization target that states no value: each semantics as its provider.

- gce (and scalebridge, whose defaults are GCE's): cpuUtilization.utilizationTarget
  "If not specified, the default is 0.6"; loadBalancingUtilization.utilizationTarget
  "If not defined, the default is 0.8" (REST v1 autoscalers). No default for any
  other metric.
- kubernetes: the API server refuses it (pkg/apis/autoscaling/validation/validation.go,
  validateResourceSource: "must set either a target raw value or a target utilization").
- aws: TargetTrackingConfiguration.TargetValue is required.
"""
from __future__ import annotations

import pytest

from scalebridge import decide
from scalebridge.errors import RequestError
from scalebridge.testing.requests import cpu_request

UNSTATED_CPU = {"type": "resource", "name": "cpu", "target": {"type": "Utilization"}}


def test_scalebridge_defaults_cpu_to_gces_60_percent():
    # 4 members at 90% of a 60% target: ceil(4 × 90 / 60) = 6
    r = decide(cpu_request(4, "900m", policy={"metrics": [UNSTATED_CPU]}, semantics="scalebridge"))
    assert r["desired_replicas"] == 6


def test_scalebridge_defaults_load_balancing_to_gces_80_percent():
    lb = {"type": "load_balancing", "name": "lb", "target": {"type": "Utilization"}}
    req = cpu_request(4, "500m", policy={"metrics": [lb]}, semantics="scalebridge")
    req["observations"]["metrics"] = {"lb": {"value": 100}}
    assert decide(req)["desired_replicas"] == 5                           # ceil(4 × 100 / 80)


def test_kubernetes_refuses_it_as_the_api_server_does():
    with pytest.raises(RequestError, match=r"metrics\[0\]\.target\.average_utilization.*must set either a target "
                                           r"raw value or a target utilization"):
        decide(cpu_request(4, "900m", policy={"metrics": [UNSTATED_CPU]}))


def test_aws_refuses_it_target_value_is_required():
    with pytest.raises(RequestError, match=r"metrics\[0\]\.target\.average_utilization.*TargetValue"):
        decide(cpu_request(4, "900m", policy={"metrics": [UNSTATED_CPU]}, semantics="aws"))


@pytest.mark.parametrize("semantics", ["gce", "scalebridge"])
def test_no_default_for_a_metric_gce_has_none_for(semantics):
    memory = {"type": "resource", "name": "memory", "target": {"type": "Utilization"}}
    with pytest.raises(RequestError, match=r"metrics\[1\]\.target\.average_utilization.*"
                                           r"defaults are for CPU .* and load balancing"):
        decide(cpu_request(4, "900m", policy={"metrics": [UNSTATED_CPU, memory]}, semantics=semantics))


def test_a_stated_value_must_still_be_positive():
    with pytest.raises(RequestError, match="average_utilization must be greater than 0"):
        decide(cpu_request(4, "900m", policy={"metrics": [
            {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 0}}]},
            semantics="gce"))


def test_validate_names_the_semantics_that_refuse_it(cli, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("min_replicas: 1\nmax_replicas: 10\nmetrics:\n"
                 "  - {type: resource, name: cpu, target: {type: Utilization}}\n")
    out = cli("validate", str(f), "--semantics", "all")
    refusing = {line.split(": ")[1] for line in (out.stdout + out.stderr).splitlines() if line.strip()}
    assert out.returncode == 2
    assert refusing == {"kubernetes", "aws"}                               # gce, scalebridge, azure run it
