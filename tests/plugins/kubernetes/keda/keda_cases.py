"""Policies and ``--target`` sources for the KEDA translator's tests: one metric of each
trigger kind a source selects (docs/translate.md, "KEDA")."""
from __future__ import annotations

SUBSCRIPTION = "6f0a3c3e-1c2b-4c8e-9d1f-2a3b4c5d6e7f"

#: every run-configuration source kind, by the metric name the cases use
SOURCES = {
    "requests": {"metric_source": "prom", "query": "sum(rate(http_requests_total[2m]))"},
    "sqs": {"namespace": "AWS/SQS", "metric_name": "ApproximateNumberOfMessagesVisible",
            "dimensions": {"QueueName": "jobs"}, "statistic": "Average", "period_seconds": 60},
    "pubsub": {"metric_type": "pubsub.googleapis.com/subscription/num_undelivered_messages",
               "filter": 'resource.labels.subscription_id="jobs"', "project": "shop-prod"},
    "bus": {"metric_name": "ActiveMessages", "metric_namespace": "Microsoft.ServiceBus/namespaces",
            "resource_uri": f"/subscriptions/{SUBSCRIPTION}/resourceGroups/shop/providers/"
                            "Microsoft.ServiceBus/namespaces/bus", "aggregation": "Average"},
    "jobs": {"scaler_address": "jobs-scaler:8080"},
}


def target(*prometheus: str) -> dict:
    """A complete ``--target``: the workload, every source above, and each of ``prometheus``
    (a metric of the user's own) read from the ``prom`` Prometheus source."""
    metrics = {k: {"source": v} for k, v in SOURCES.items()}
    for name in prometheus:
        metrics.setdefault(name, {"source": {"metric_source": "prom", "query": f"{name}_total"}})
    return {"name": "web", "namespace": "shop", "sync_period_seconds": 15, "region": "eu-west-1",
            "project": "shop-prod", "tenant_id": "0a1b2c3d-0000-4000-8000-000000000000",
            "metric_sources": {"prom": {"type": "prometheus", "url": "http://prometheus:9090"}},
            "metrics": metrics}


def ext(name: str, value: float = 10, kind: str = "AverageValue", **extra) -> dict:
    key = "average_value" if kind == "AverageValue" else "value"
    return {"type": "external", "name": name, "target": {"type": kind, key: value}, **extra}


#: policies KEDA expresses without a loss line, each with the metric values to decide on
LOSSLESS = {
    "prometheus-fallback": ({"name": "api", "min_replicas": 1, "max_replicas": 30, "metrics": [ext("requests", 100)],
                             "fallback": {"failure_threshold": 3, "replicas": 6}}, {"requests": 450}),
    "every-source": ({"name": "jobs", "min_replicas": 2, "max_replicas": 50,
                      "metrics": [ext("requests", 100), ext("sqs", 5), ext("pubsub", 20, "Value"),
                                  ext("bus", 8.5)]},
                     {"requests": 300, "sqs": 42, "pubsub": 30, "bus": 20}),
    "cpu-memory-behavior": ({"name": "web", "min_replicas": 2, "max_replicas": 20,
                             "metrics": [{"type": "resource", "name": "cpu",
                                          "target": {"type": "Utilization", "average_utilization": 60}},
                                         {"type": "resource", "name": "memory",
                                          "target": {"type": "AverageValue", "average_value": "512Mi"}}],
                             "behavior": {"scale_up": {"stabilization_window_seconds": 0,
                                                       "policies": [{"type": "Percent", "value": 100,
                                                                     "period_seconds": 15}]},
                                          "scale_down": {"stabilization_window_seconds": 600, "tolerance": 0.05}}},
                            None),
    "scale-to-zero": ({"name": "worker", "min_replicas": 0, "max_replicas": 10, "scale_to_zero_delay_seconds": 120,
                       "metrics": [ext("sqs", 10, activation_threshold=5)]}, {"sqs": 8}),
    "idle": ({"name": "batch", "min_replicas": 3, "max_replicas": 10, "idle_replicas": 0,
              "scale_to_zero_delay_seconds": 600, "metrics": [ext("requests", 10, activation_threshold=2.5)]},
             {"requests": 1}),
    "formula": ({"name": "composite", "min_replicas": 1, "max_replicas": 20,
                 "metrics": [ext("trig_one", 1), ext("trig_two", 1), ext("trig_three", 1),
                             {"type": "formula", "name": "composite-metric",
                              "expression": "[trig_one, trig_two, trig_three].filter(x, x > 1.0).size() > 1 "
                                            "? 5.0 : 0.0",
                              "target": {"type": "AverageValue", "average_value": 2}, "activation_threshold": 1}]},
                {"trig_one": 2, "trig_two": 3, "trig_three": 0}),
    "paused": ({"name": "frozen", "min_replicas": 1, "max_replicas": 9, "mode": "OFF",
                "metrics": [ext("requests", 10)]}, {"requests": 500}),
    "only-scale-out": ({"name": "grow", "min_replicas": 1, "max_replicas": 9, "mode": "ONLY_SCALE_OUT",
                        "behavior": {}, "metrics": [ext("requests", 10)]}, {"requests": 5}),
    "fallback-if-lower": ({"name": "lower", "min_replicas": 1, "max_replicas": 9,
                           "fallback": {"failure_threshold": 1, "replicas": 4, "behavior": "current_replicas_if_lower"},
                           "metrics": [ext("bus", 10, "Value")]}, {"bus": 35}),
    # KEDA 2.17-2.20 (kedacore/keda v2.20.2): fallback.behavior scalingModifiers with ??, initialCooldownPeriod,
    # the paused-scale-out and force-activation annotations, a negative scaler value read as 0
    "per-trigger-fallback": ({"name": "failover", "min_replicas": 1, "max_replicas": 20, "invalid_values_as_zero": True,
                              "fallback": {"failure_threshold": 3, "replicas": 10, "behavior": "formula"},
                              "metrics": [ext("trig_one", 1), ext("trig_two", 1),
                                          {"type": "formula", "name": "composite-metric",
                                           "expression": "trig_one != null ? trig_one : (trig_two != null ? "
                                                         "trig_two : 8.0)",
                                           "target": {"type": "AverageValue", "average_value": 2}}]},
                             {"trig_one": 9, "trig_two": 3}),
    "initial-cooldown": ({"name": "warm", "min_replicas": 0, "max_replicas": 10, "scale_to_zero_delay_seconds": 300,
                          "initial_scale_to_zero_delay_seconds": 120, "invalid_values_as_zero": True,
                          "metrics": [ext("sqs", 10)]}, {"sqs": 0}),
    "force-activation": ({"name": "forced", "min_replicas": 0, "max_replicas": 10, "scale_to_zero_delay_seconds": 300,
                          "force_activation": True, "invalid_values_as_zero": True,
                          "metrics": [ext("sqs", 10, activation_threshold=5)]}, {"sqs": 0}),
    "only-scale-in": ({"name": "shrink", "min_replicas": 1, "max_replicas": 9, "mode": "ONLY_SCALE_IN",
                       "invalid_values_as_zero": True, "behavior": {}, "metrics": [ext("requests", 10)]},
                      {"requests": 500}),
    "negative-as-zero": ({"name": "zeroed", "min_replicas": 1, "max_replicas": 9, "invalid_values_as_zero": True,
                          "behavior": {"scale_down": {"stabilization_window_seconds": 0}},
                          "metrics": [ext("requests", 10)]}, {"requests": -40}),
}
