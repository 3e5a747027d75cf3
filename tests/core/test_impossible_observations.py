"""A negative reading of a metric that cannot be negative is an invalid metric under
every semantics (scalebridge.stages.impossible): its result carries an error naming the
member (or the value) received, it proposes nothing, it blocks a scale-in as invalid
metrics do, and a policy's ``fallback`` counts it as a failure — never a decision made
on it. Under ``kubernetes`` the HPA's overflow guard in ``GetExternalPerPodMetricReplicas``
(a negative running sum read as MaxInt64, pkg/controller/podautoscaler/replica_calculator.go)
is thereby never reached from an invalid input: one broken metric source cannot max out
a fleet."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from scalebridge import decide
from scalebridge.testing.requests import (AWS_STEP_OUT, aws_request, azure_request, azure_rule, azure_series,
                                          cpu_request, pods)

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = json.loads((ROOT / "examples/requests/external-average-value.json").read_text())
TARGET_SEMANTICS = ["kubernetes", "gce", "aws", "scalebridge"]


def external(values: list, semantics: str = "kubernetes") -> dict:
    r = copy.deepcopy(EXTERNAL)
    r["semantics"] = semantics
    r["observations"]["metrics"]["queue_depth"] = {"values": values}
    return r


@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "scalebridge"])   # aws reads series: below
def test_a_negative_external_metric_proposes_nothing_and_scales_nothing(semantics):
    before = decide(external([30, 70], semantics))
    assert before["metrics"][0]["error"] is None and before["metrics"][0]["replicas"] > 3
    r = decide(external([-5, 70], semantics))
    assert r["desired_replicas"] == 3, r   # neither 2,147,483,647 nor the rate limit's maximum
    entry = r["metrics"][0]
    assert entry["replicas"] is None
    assert entry["error"] == "invalid observation: negative value -5 (values[0])"


def test_kubernetes_keeps_its_overflow_guard_for_what_upstream_computes():
    # values that overflow int64 milli-units when summed are valid input: upstream's guard reads
    # the sum as MaxInt64 and the HPA scales at its maximum rate, as kubernetes does
    r = decide(external([9_000_000_000_000_000, 9_000_000_000_000_000]))
    assert r["metrics"][0]["error"] is None
    assert r["metrics"][0]["replicas"] == 2_147_483_647


@pytest.mark.parametrize("semantics", TARGET_SEMANTICS)
@pytest.mark.parametrize("usage, direction", [(["-400m", "900m", "900m"], "up"), (["-1", "200m", "200m"], "down")])
def test_a_negative_member_sample_makes_the_metric_invalid_naming_the_member(semantics, usage, direction):
    req = cpu_request(3, usage, semantics=semantics, members=pods(3, "1"))
    member = next(iter(req["observations"]["metrics"]["cpu"]["members"]))
    r = decide(req)
    entry = r["metrics"][0]
    assert entry["error"] == f"invalid observation: negative value {usage[0]!r} for member {member}"
    assert entry["replicas"] is None
    assert r["desired_replicas"] == 3   # no scale-up on the others' samples, and no scale-in either
    assert r["error"].endswith(f"first error is: {entry['error']}"), r["error"]   # not "no data for metric cpu"


def test_minus_zero_is_zero_not_negative():
    r = decide(cpu_request(3, ["-0", "900m", "900m"], members=pods(3, "1")))
    assert r["metrics"][0]["error"] is None


@pytest.mark.parametrize("semantics", TARGET_SEMANTICS)
@pytest.mark.parametrize("usage, negative", [
    (["1e-3", "900m", "900m"], None),            # a minus in an exponent is not a sign
    ([0.5, "900m", 1], None),                     # numbers beside quantity strings
    (["1e-3", "900m", "-0.5"], 2),                # the negative one among them is found...
    ([1, "-0", -0.25], 2),
    ([-2, 0.5, 1], 0),                            # ...as the first one when it is first
])
def test_a_negative_sample_is_found_among_samples_of_every_form(semantics, usage, negative):
    req = cpu_request(3, usage, semantics=semantics, members=pods(3, "1"))
    entry = decide(req)["metrics"][0]
    if negative is None:
        assert entry["error"] is None, entry
    else:
        assert entry["error"] == f"invalid observation: negative value {usage[negative]!r} for member web-{negative}"


def test_an_impossible_sample_is_a_failure_a_fallback_counts():
    req = cpu_request(3, ["-400m", "900m", "900m"], members=pods(3, "1"),
                      policy={"fallback": {"failure_threshold": 1, "replicas": 6}})
    first = decide(req)
    assert first["state"]["fallback.failures"] == {"cpu": 1}
    assert first["desired_replicas"] == 3
    req["state"] = first["state"]
    second = decide(req)
    assert second["reason"] == "Fallback"
    assert second["desired_replicas"] == 6


def test_an_aws_alarm_on_cpu_with_a_negative_point_is_invalid():
    series = [[1767225600 - 60 * j, 95] for j in range(20, 0, -1)] + [[1767225600, -3]]
    r = decide(aws_request(4, series, rules=[AWS_STEP_OUT]))
    assert r["desired_replicas"] == 4
    assert any(m.get("error") == "invalid observation: negative value -3 in its series" for m in r["metrics"]), r


def test_an_azure_rule_on_cpu_with_a_negative_point_is_invalid_but_another_metric_may_be_negative():
    out = azure_rule("cpu", "GreaterThan", 70, "Increase")
    r = decide(azure_request(2, [out], {"cpu": azure_series([95, 95, 95, 95, -1])}))
    assert r["desired_replicas"] == 2
    assert any("negative value -1" in (m.get("error") or "") for m in r["metrics"]), r
    # a rule's threshold may be crossed by a metric negative by nature (a delta, a temperature)
    below = azure_rule("delta", "LessThan", -5, "Increase")
    r = decide(azure_request(2, [below], {"delta": azure_series(-10)}))
    assert r["desired_replicas"] == 3, r


@pytest.mark.parametrize("bad, shown", [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity")])
def test_a_non_finite_sample_is_refused_saying_what_was_received(bad, shown):
    from scalebridge.cli import main
    import io
    import sys
    text = json.dumps(cpu_request(3, "500m")).replace('"500m"', bad, 1)
    err = io.StringIO()
    stdin, stderr = sys.stdin, sys.stderr
    sys.stdin, sys.stderr = io.StringIO(text), err
    try:
        assert main(["decide", "-"]) == 2
    finally:
        sys.stdin, sys.stderr = stdin, stderr
    assert err.getvalue().strip().endswith(f"expected a finite number or a quantity string, got {shown}"), err.getvalue()
