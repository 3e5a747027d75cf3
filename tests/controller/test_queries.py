"""The metric queries a sync makes, from the policy and the semantics."""
from __future__ import annotations

from scalebridge.constants import AWS_TT_WINDOW_SECONDS as TARGET_TRACKING_WINDOW_SECONDS
from scalebridge.controller.queries import metric_names, queries_for
from scalebridge.policy import Policy


def test_policy_metrics_rules_and_sources():
    policy = Policy.model_validate({
        "min_replicas": 1, "max_replicas": 10,
        "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}},
                    {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 30}},
                    {"type": "pods", "name": "off", "enabled": False,
                     "target": {"type": "AverageValue", "average_value": 1}}],
        "rules": [{"metric": "connections", "operator": "GreaterThan", "threshold": 100, "time_grain_seconds": 60,
                   "time_window_seconds": 600, "statistic": "Max",
                   "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]})
    source = {"namespace": "Shop", "metric_name": "Connections"}
    qs = {q.name: q for q in queries_for(policy, "scalebridge", {"connections": source})}
    assert set(qs) == {"cpu", "queue", "connections"}, "a disabled metric is not read"
    assert qs["cpu"].shapes == {"members"} and qs["cpu"].source is None
    assert qs["queue"].shapes == {"values"}     # external: GetExternalMetricReplicas sums values
    rule = qs["connections"]
    assert (rule.type, rule.window_seconds, rule.grain_seconds, rule.spec["statistic"]) == ("rule", 600, 60, "Max")
    assert rule.source == source and "series" in rule.shapes


def test_aws_reads_datapoints_over_target_trackings_window():
    policy = Policy.model_validate({"min_replicas": 1, "max_replicas": 10, "metrics": [
        {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 50}}]})
    [q] = queries_for(policy, "aws")
    assert q.window_seconds == TARGET_TRACKING_WINDOW_SECONDS and "series" in q.shapes


def test_a_policy_without_metrics_reads_cpu_where_the_semantics_defaults_to_it():
    policy = Policy.model_validate({"min_replicas": 1, "max_replicas": 10})
    assert [q.name for q in queries_for(policy, "kubernetes")] == ["cpu"]
    assert [q.name for q in queries_for(policy, "gce")] == ["cpu"]
    assert queries_for(policy, "azure") == []


SHARED = Policy.model_validate({
    "min_replicas": 1, "max_replicas": 10,
    "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}],
    "rules": [{"metric": "connections", "operator": "GreaterThan", "threshold": 100, "time_window_seconds": 300,
               "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]})


def test_what_a_semantics_ignores_is_not_read():
    """One policy for every cloud: the HPA and a MIG autoscaler have no threshold rules
    (autoscaling/v2 HorizontalPodAutoscalerSpec; the Compute API's autoscalingPolicy),
    Azure autoscale has no target metrics (an autoscale setting's profiles hold rules)."""
    names = {s: [q.name for q in queries_for(SHARED, s)] for s in ("kubernetes", "gce", "azure", "aws", "scalebridge")}
    assert names == {"kubernetes": ["cpu"], "gce": ["cpu"], "azure": ["connections"],
                     "aws": ["cpu", "connections"], "scalebridge": ["cpu", "connections"]}
    [k8s] = queries_for(SHARED, "kubernetes")
    assert k8s.shapes == {"members"} and k8s.window_seconds == 60   # the metrics API's latest samples


def test_a_semantics_that_is_not_registered_reads_everything_the_policy_has():
    assert [q.name for q in queries_for(SHARED, "no-such-semantics")] == ["cpu", "connections"]


CONTROLS = Policy.model_validate({
    "min_replicas": 0, "max_replicas": 20, "scale_to_zero_delay_seconds": 60,
    "metrics": [{"type": "external", "name": "a", "target": {"type": "AverageValue", "average_value": 1}},
                {"type": "external", "name": "b", "activation_threshold": 3,
                 "target": {"type": "AverageValue", "average_value": 1}},
                {"type": "formula", "name": "f", "expression": "a * 2.0",
                 "target": {"type": "AverageValue", "average_value": 2}}],
    "rules": [{"metric": "f", "operator": "GreaterThan", "threshold": 4, "time_window_seconds": 300,
               "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}]})


def test_a_formula_is_computed_not_read_and_the_metrics_it_names_are_read_under_every_semantics():
    """docs/policy.md, formula: decide computes a formula from the metrics it names; a rule on
    it reads them over its window, as series. The metrics an activation phase watches are
    read under azure too (the neutral controls read them under every semantics)."""
    for s in ("kubernetes", "gce", "azure", "aws", "scalebridge"):
        qs = {q.name: q for q in queries_for(CONTROLS, s)}
        assert set(qs) == {"a", "b"}, s
        assert {q.type for q in qs.values()} == {"external"}, s
    azure = {q.name: q for q in queries_for(CONTROLS, "azure")}
    assert azure["a"].window_seconds == 300 and "series" in azure["a"].shapes
    assert metric_names(CONTROLS) == ["a", "b"], "a formula has no source"


def test_a_policy_without_controls_reads_as_before_under_azure():
    plain = Policy.model_validate({"min_replicas": 0, "max_replicas": 20, "metrics": [
        {"type": "external", "name": n, "target": {"type": "AverageValue", "average_value": 1}} for n in "ab"]})
    assert queries_for(plain, "azure") == []
