"""The loss report is exact: for each policy feature of the docs/translate.md table, the
lines ``render`` prints for each provider (none where the provider expresses it natively)."""
from __future__ import annotations

import pytest

from scalebridge.translate import render

CPU = {"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}
RULE = {"metric": "cpu", "operator": "GreaterThan", "threshold": 70,
        "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}
STEP = {"metric": "cpu", "operator": "GreaterThan", "threshold": 70, "adjustment_type": "ChangeInCapacity",
        "steps": [{"lower": 0, "adjustment": 1}]}
AZURE_NO_METRICS = "metrics[0]: Azure autoscale has no target metrics (it scales on threshold rules); dropped"
AZURE_NO_BEHAVIOR = "behavior: Azure has no stabilization windows or rate policies (each rule's cooldown paces it); dropped"
AWS_NO_BEHAVIOR = ("behavior: AWS has no stabilization windows or rate policies (target tracking holds scale-in for "
                   "15 minutes below 90% of the target); dropped")
HPA_NO_RULES = "rules[0]: an HPA has no threshold rules; dropped"
GCE_NO_RULES = "rules[0]: a GCE autoscaler has no threshold rules; dropped"

FEATURES = [
    ('bounds', {}, {"kubernetes": [], 'gce': [], 'azure': [], 'aws': []}),
    ('default_replicas', {"default_replicas": 3}, {
        "kubernetes": ['default_replicas: an HPA keeps its size when metrics cannot be read; dropped'],
        'gce': ["default_replicas: GCE keeps the group's size when metrics cannot be read; dropped"],
        'azure': [],
        'aws': ['default_replicas: an Auto Scaling group keeps its size when alarms lack data; dropped'],
    }),
    ('allowed_replicas', {"allowed_replicas": [1, 2, 4, 8]}, {
        "kubernetes": ['allowed_replicas: an HPA scales to any count; dropped'],
        'gce': ['allowed_replicas: GCE scales to any count; dropped'],
        'azure': ["allowed_replicas: the allowed sizes are the service's own (ServiceAllowedNextValue); dropped"],
        'aws': ['allowed_replicas: an Auto Scaling group scales to any count; dropped'],
    }),
    ('cpu', {"metrics": [CPU]}, {
        "kubernetes": [],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('memory', {"metrics": [{"type": "resource", "name": "memory", "target": {"type": "Utilization", "average_utilization": 70}}]}, {
        "kubernetes": [],
        'gce': ["metrics[0]: GCE has no signal for the resource metric 'memory' with target type Utilization (it has CPU and load-balancing utilization, per-instance and per-group Cloud Monitoring metrics); dropped"],
        'azure': [AZURE_NO_METRICS],
        'aws': ['metrics[0]: target tracking has no resource metric with target type Utilization; dropped'],
    }),
    ('container', {"metrics": [{"type": "container_resource", "name": "cpu", "container": "app", "target": {"type": "Utilization", "average_utilization": 70}}]}, {
        "kubernetes": [],
        'gce': ["metrics[0]: GCE has no signal for the container_resource metric 'cpu' with target type Utilization (it has CPU and load-balancing utilization, per-instance and per-group Cloud Monitoring metrics); dropped"],
        'azure': [AZURE_NO_METRICS],
        'aws': ['metrics[0]: target tracking has no container_resource metric with target type Utilization; dropped'],
    }),
    ('pods', {"metrics": [{"type": "pods", "name": "conn", "target": {"type": "AverageValue", "average_value": 100}}]}, {
        "kubernetes": [],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('external_avg', {"metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 30}}]}, {
        "kubernetes": [],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('object_avg', {"metrics": [{"type": "object", "name": "rps", "target": {"type": "AverageValue", "average_value": 30}}]}, {
        "kubernetes": [],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('value', {"metrics": [{"type": "object", "name": "rps", "target": {"type": "Value", "value": 1000}}]}, {
        "kubernetes": [],
        'gce': ["metrics[0]: GCE has no signal for the object metric 'rps' with target type Value (it has CPU and load-balancing utilization, per-instance and per-group Cloud Monitoring metrics); dropped"],
        'azure': [AZURE_NO_METRICS],
        'aws': ['metrics[0]: target tracking has no object metric with target type Value; dropped'],
    }),
    ('lb', {"metrics": [{"type": "load_balancing", "name": "load_balancing", "target": {"type": "Utilization", "average_utilization": 80}}]}, {
        "kubernetes": ['metrics[0]: Kubernetes has no load-balancing utilization metric; dropped'],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': ['metrics[0]: target tracking has no load_balancing metric with target type Utilization; dropped'],
    }),
    # a name of its own is lost: GCE's signal has none, and import reads it back as load_balancing
    ('lb_named', {"metrics": [{"type": "load_balancing", "name": "lb", "target": {"type": "Utilization", "average_utilization": 80}}]}, {
        "kubernetes": ['metrics[0]: Kubernetes has no load-balancing utilization metric; dropped'],
        'gce': ["metrics[0].name: GCE's load-balancing signal has no name; import reads it back as 'load_balancing'"],
        'azure': [AZURE_NO_METRICS],
        'aws': ['metrics[0]: target tracking has no load_balancing metric with target type Utilization; dropped'],
    }),
    # a provider's name for a neutral metric is lost: import reads it back as the neutral name
    ('provider_name', {"rules": [{"metric": "Percentage CPU", "operator": "GreaterThan", "threshold": 70,
                                  "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]}, {
        "kubernetes": ['rules[0]: an HPA has no threshold rules; dropped'],
        'gce': ['rules[0]: a GCE autoscaler has no threshold rules; dropped'],
        'azure': ["rules[0].metric: 'Percentage CPU' is a provider's name for the neutral metric 'cpu': written as the "
                  "scale set's 'Percentage CPU', which import reads back as 'cpu' (name the metric 'cpu' to keep its "
                  "name)"],
        'aws': ["rules[0].metric: 'Percentage CPU' is a provider's name for the neutral metric 'cpu': written as "
                "AWS/EC2 CPUUtilization on the group, which import reads back as 'cpu' (name the metric 'cpu' to keep "
                "its name)"],
    }),
    ('rate', {"metrics": [{"type": "pods", "name": "req", "target": {"type": "AverageValue", "average_value": 10, "rate": "per_second"}}]}, {
        "kubernetes": ['metrics[0].target.rate: an HPA reads gauges, not counter rates; dropped'],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': ['metrics[0]: target tracking has no pods metric with target type AverageValue (per_second); dropped'],
    }),
    ('disabled', {"metrics": [dict(CPU, enabled=False)]}, {
        "kubernetes": ['metrics[0]: an HPA has no disabled metric; left out'],
        'gce': ['metrics[0]: a GCE autoscaler has no disabled signal; left out'],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('disable_scale_in', {"metrics": [dict(CPU, disable_scale_in=True)]}, {
        "kubernetes": ['metrics[0].disable_scale_in: an HPA metric cannot disable scale-in; dropped'],
        'gce': ['metrics[0].disable_scale_in: GCE signals cannot disable scale-in; dropped'],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('metric_init', {"metrics": [dict(CPU, initialization_period_seconds=120)]}, {
        "kubernetes": ["metrics[0].initialization_period_seconds: per-metric warm-up is the controller's --horizontal-pod-autoscaler-cpu-initialization-period; dropped"],
        'gce': ['metrics[0].initialization_period_seconds: GCE has one initialization period (coolDownPeriodSec) for the group; dropped'],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('frac', {"metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 62.5}}]}, {
        "kubernetes": ['metrics[0].target.average_utilization: averageUtilization is an integer percent; 62.5 rounded to 62'],
        'gce': [],
        'azure': [AZURE_NO_METRICS],
        'aws': [],
    }),
    ('tolerance', {"tolerance": 0.05, "behavior": {}}, {
        "kubernetes": [],
        'gce': ['tolerance: GCE has no tolerance (every change of the ceil formula acts); dropped'],
        'azure': [AZURE_NO_BEHAVIOR, 'tolerance: Azure rules have no tolerance band; dropped'],
        'aws': [AWS_NO_BEHAVIOR, 'tolerance: AWS target tracking has no tolerance band; dropped'],
    }),
    # A tolerance of 0 is what a provider without a tolerance band does: GCE acts on every change of
    # ceil(current * utilization / target) (https://cloud.google.com/compute/docs/autoscaler#how_autoscaler_works),
    # Azure and AWS compare the metric with the threshold or target as it is.
    ('tolerance_zero', {"tolerance": 0}, {
        "kubernetes": ['tolerance: written as per-direction behavior tolerance, which makes the HPA use the behavior '
                       'defaults in place of the behavior-less controller path'],
        'gce': [],
        'azure': [],
        'aws': [],
    }),
    ('window', {"behavior": {"scale_down": {"stabilization_window_seconds": 300}}}, {
        "kubernetes": [],
        'gce': [],
        'azure': [AZURE_NO_BEHAVIOR],
        'aws': [AWS_NO_BEHAVIOR],
    }),
    ('up_policies', {"behavior": {"scale_up": {"policies": [{"type": "Pods", "value": 4, "period_seconds": 15}, {"type": "Percent", "value": 100, "period_seconds": 15}]}}}, {
        "kubernetes": [],
        'gce': ['behavior.scale_up.policies[0]: GCE has no scale-up rate limit; dropped', 'behavior.scale_up.policies[1]: GCE has no scale-up rate limit; dropped'],
        'azure': [AZURE_NO_BEHAVIOR],
        'aws': [AWS_NO_BEHAVIOR],
    }),
    ('up_window', {"behavior": {"scale_up": {"stabilization_window_seconds": 60}}}, {
        "kubernetes": [],
        'gce': ['behavior.scale_up.stabilization_window_seconds: GCE stabilizes scale-in only; dropped'],
        'azure': [AZURE_NO_BEHAVIOR],
        'aws': [AWS_NO_BEHAVIOR],
    }),
    ('down_policies_select', {"behavior": {"scale_down": {"select_policy": "Min", "policies": [{"type": "Pods", "value": 1, "period_seconds": 60}]}}}, {
        "kubernetes": [],
        'gce': ['behavior.scale_down.policies[0]: GCE has no scale-down rate limit; dropped',
                'behavior.scale_down.select_policy: GCE has no select policy; Min dropped'],
        'azure': [AZURE_NO_BEHAVIOR],
        'aws': [AWS_NO_BEHAVIOR],
    }),
    ('direction_tolerance', {"behavior": {"scale_up": {"tolerance": 0.2}}}, {
        "kubernetes": [],
        'gce': ['behavior.scale_up.tolerance: GCE has no tolerance; dropped'],
        'azure': [AZURE_NO_BEHAVIOR],
        'aws': [AWS_NO_BEHAVIOR],
    }),
    ('tolerance_without_behavior', {"tolerance": 0.05}, {
        "kubernetes": ['tolerance: written as per-direction behavior tolerance, which makes the HPA use the behavior '
                       'defaults in place of the behavior-less controller path'],
        'gce': ['tolerance: GCE has no tolerance (every change of the ceil formula acts); dropped'],
        'azure': ['tolerance: Azure rules have no tolerance band; dropped'],
        'aws': ['tolerance: AWS target tracking has no tolerance band; dropped'],
    }),
    ('sic_fraction', {"scale_in_control": {"max_scaled_in_replicas": {"percent": 12.5}, "time_window_seconds": 600}}, {
        "kubernetes": ['scale_in_control: an HPA has no scale-in control; dropped (behavior.scale_down policies limit the rate per period instead)'],
        'gce': ['scale_in_control.max_scaled_in_replicas.percent: GCE takes an integer percent; 12.5 truncated to 12'],
        'azure': ['scale_in_control: Azure has no scale-in control; dropped'],
        'aws': ['scale_in_control: AWS has no scale-in control; dropped'],
    }),
    ('sic', {"scale_in_control": {"max_scaled_in_replicas": {"percent": 25}, "time_window_seconds": 600}}, {
        "kubernetes": ['scale_in_control: an HPA has no scale-in control; dropped (behavior.scale_down policies limit the rate per period instead)'],
        'gce': [],
        'azure': ['scale_in_control: Azure has no scale-in control; dropped'],
        'aws': ['scale_in_control: AWS has no scale-in control; dropped'],
    }),
    ('init', {"initialization_period_seconds": 120}, {
        "kubernetes": ["initialization_period_seconds: the controller's --horizontal-pod-autoscaler-cpu-initialization-period flag, not part of an HPA; dropped"],
        'gce': [],
        'azure': ['initialization_period_seconds: Azure has no initialization period; dropped'],
        'aws': [],
    }),
    ('only_out', {"mode": "ONLY_SCALE_OUT", "rules": [RULE, {"metric": "cpu", "operator": "LessThan", "threshold": 30, "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}, {
        "kubernetes": ['mode: mode ONLY_SCALE_OUT approximated as behavior scaleDown selectPolicy Disabled (the HPA then reports no recommendation in that direction)', HPA_NO_RULES, 'rules[1]: an HPA has no threshold rules; dropped'],
        'gce': [GCE_NO_RULES, 'rules[1]: a GCE autoscaler has no threshold rules; dropped'],
        'azure': ['mode: Azure has no scale-out-only mode; scale-in rules were left out'],
        'aws': ['mode: mode ONLY_SCALE_OUT: AWS suspends processes instead (SuspendProcesses); dropped'],
    }),
    ('only_in', {"mode": "ONLY_SCALE_IN", "rules": [RULE, {"metric": "cpu", "operator": "LessThan", "threshold": 30, "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]}, {
        "kubernetes": ['mode: mode ONLY_SCALE_IN approximated as behavior scaleUp selectPolicy Disabled (the HPA then reports no recommendation in that direction)', HPA_NO_RULES, 'rules[1]: an HPA has no threshold rules; dropped'],
        'gce': ['mode: a GCE autoscaler has no scale-in-only mode (autoscalingPolicy.mode: ON, OFF, ONLY_SCALE_OUT); written as ON', GCE_NO_RULES, 'rules[1]: a GCE autoscaler has no threshold rules; dropped'],
        'azure': ['mode: Azure has no scale-in-only mode; scale-out rules were left out'],
        'aws': ['mode: mode ONLY_SCALE_IN: AWS suspends processes instead (SuspendProcesses); dropped'],
    }),
    ('off', {"mode": "OFF"}, {
        "kubernetes": ['mode: mode OFF approximated as behavior scaleUp and scaleDown selectPolicy Disabled (the HPA then reports no recommendation in that direction)'],
        'gce': [],
        'azure': ['mode: mode OFF approximated as enabled: false (Azure then reports no recommendation)'],
        'aws': ['mode: mode OFF: AWS suspends processes instead (SuspendProcesses); dropped'],
    }),
    ('rule', {"rules": [RULE]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': [],
        'aws': [],
    }),
    ('allowed_next', {"rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70, "action": {"direction": "Increase", "type": "ServiceAllowedNextValue"}}]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': [],
        'aws': ['rules[0].action.type: AWS has no ServiceAllowedNextValue adjustment; rule dropped'],
    }),
    ('step', {"rules": [STEP]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': ['rules[0]: an AWS step-scaling rule is not an Azure rule (one action per rule); dropped'],
        'aws': [],
    }),
    ('percentile', {"rules": [dict(RULE, statistic="Percentile95")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': ['rules[0].statistic: Azure has no Percentile95 statistic; rule dropped'],
        'aws': [],
    }),
    ('datapoints', {"rules": [dict(RULE, datapoints_to_alarm=3)]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': ["rules[0].datapoints_to_alarm: Azure compares the whole window's aggregate; dropped"],
        'aws': [],
    }),
    ('treat_missing', {"rules": [dict(RULE, treat_missing_data="breaching")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': ['rules[0].treat_missing_data: Azure has no missing-data treatment; dropped'],
        'aws': [],
    }),
    ('aggregation', {"rules": [dict(RULE, time_aggregation="Max")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': [],
        'aws': ["rules[0].time_aggregation: a CloudWatch alarm compares each period's datapoint; Max over the window dropped"],
    }),
    # a step policy's MetricAggregationType (API_PutScalingPolicy.html): Minimum, Maximum or Average
    ('step_aggregation', {"rules": [dict(STEP, time_aggregation="Max")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': ['rules[0]: an AWS step-scaling rule is not an Azure rule (one action per rule); dropped'],
        'aws': [],
    }),
    ('step_aggregation_sum', {"rules": [dict(STEP, time_aggregation="Sum")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': ['rules[0]: an AWS step-scaling rule is not an Azure rule (one action per rule); dropped'],
        'aws': ["rules[0].time_aggregation: a CloudWatch alarm compares each period's datapoint; Sum over the window dropped"],
    }),
    ('divide', {"rules": [dict(RULE, divide_per_instance=True)]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': [],
        'aws': ['rules[0].divide_per_instance: a CloudWatch alarm compares the metric itself; dropped'],
    }),
    ('equals', {"rules": [dict(RULE, operator="Equals")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': [],
        'aws': ['rules[0].operator: a CloudWatch alarm has no Equals comparison; rule dropped'],
    }),
    ('not_equals', {"rules": [dict(RULE, operator="NotEquals")]}, {
        "kubernetes": [HPA_NO_RULES],
        'gce': [GCE_NO_RULES],
        'azure': [],
        'aws': ['rules[0].operator: a CloudWatch alarm has no NotEquals comparison; rule dropped'],
    }),
    ('profile', {"profiles": [{"name": "weekend", "capacity": {"minimum": 1, "maximum": 3, "default": 1}, "recurrence": {"days": ["Saturday"], "time_zone": "Europe/Paris"}}]}, {
        "kubernetes": ['profiles[0]: an HPA has no instance profiles; dropped'],
        'gce': ['profiles[0]: a GCE autoscaler has no instance profiles (scaling schedules raise the minimum instead); dropped'],
        'azure': [],
        'aws': ['profiles[0]: AWS has no instance profiles (scheduled actions set sizes at a time); dropped'],
    }),
    ('schedule', {"schedules": [{"name": "office", "schedule": "0 8 * * MON-FRI", "duration_seconds": 36000, "min_required_replicas": 4}]}, {
        "kubernetes": ['schedules[0]: an HPA has no scaling schedules; dropped'],
        'gce': [],
        'azure': ['schedules[0]: Azure has no cron scaling schedules (recurrence profiles set whole capacities instead); dropped'],
        'aws': ['schedules[0]: approximated as two scheduled actions, MinSize 4 at each start and 1 at each end (an end '
                'restores the minimum even while another schedule is active)'],
    }),
    # a scheduled action has no duration: its end is a second action, a cron expression only when the start
    # is one minute of one hour (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scheduled-scaling.html)
    ('schedule_two_starts', {"schedules": [{"name": "office", "schedule": "0 8,12 * * MON-FRI", "duration_seconds": 3600, "min_required_replicas": 4}]}, {
        "kubernetes": ['schedules[0]: an HPA has no scaling schedules; dropped'],
        'gce': [],
        'azure': ['schedules[0]: Azure has no cron scaling schedules (recurrence profiles set whole capacities instead); dropped'],
        'aws': ['schedules[0]: an AWS scheduled action has no duration, and the end of this schedule is no cron '
                'expression (more than one start minute or hour a day); dropped'],
    }),
    ('predictive', {"metrics": [CPU], "predictive": {"mode": "ForecastOnly", "look_ahead_seconds": 600}}, {
        "kubernetes": ['predictive: an HPA does not forecast; dropped'],
        'gce': ['predictive.mode: GCE has no forecast-only mode; rendered as OPTIMIZE_AVAILABILITY', "predictive.look_ahead_seconds: GCE's predictive method has no such setting; dropped"],
        'azure': [AZURE_NO_METRICS],
        'aws': ['predictive.look_ahead_seconds: AWS forecasts 48 hours ahead; dropped'],
    }),
    ('mode_only_scale_out_signals', {"mode": "ONLY_SCALE_OUT", "metrics": [CPU]}, {
        "kubernetes": ['mode: mode ONLY_SCALE_OUT approximated as behavior scaleDown selectPolicy Disabled (the HPA then reports no recommendation in that direction)'],
        'gce': [],
        'azure': ['mode: Azure has no scale-out-only mode; scale-in rules were left out', AZURE_NO_METRICS],
        'aws': ['mode: mode ONLY_SCALE_OUT: AWS suspends processes instead (SuspendProcesses); dropped'],
    }),
    ('predictive_settings', {"predictive": {"mode": "ForecastAndScale", "scheduling_buffer_seconds": 300, "look_ahead_seconds": 600}}, {
        "kubernetes": ['predictive: an HPA does not forecast; dropped'],
        'gce': ['predictive: GCE predicts only with a CPU utilization signal; dropped',
                "predictive.look_ahead_seconds: GCE's predictive method has no such setting; dropped",
                "predictive.scheduling_buffer_seconds: GCE's predictive method has no such setting; dropped"],
        'azure': ['predictive.scheduling_buffer_seconds: Azure predictive autoscale has no such setting; dropped'],
        'aws': ['predictive: AWS predictive scaling is rendered on CPU utilization; the policy has no CPU target; dropped'],
    }),
]


@pytest.mark.parametrize("provider", ["kubernetes", "gce", "azure", "aws"])
@pytest.mark.parametrize("feature, fragment, expected", FEATURES, ids=[f[0] for f in FEATURES])
def test_the_loss_report_names_each_lost_feature(feature, fragment, expected, provider):
    policy = {"name": "web", "min_replicas": 1, "max_replicas": 10, **fragment}
    _, losses = render(policy, provider)
    assert losses.lines == expected[provider]


# docs/translate.md's table, row by row: the FEATURES each row's cells speak for (the first is the
# one whose lines the row's plain "native" / "lost" / "approx." cells are checked against)
ROWS = {
    "`min_replicas`, `max_replicas`": ["bounds"],
    "`default_replicas`": ["default_replicas"],
    "`allowed_replicas`": ["allowed_replicas"],
    "`resource` `cpu` `Utilization`": ["cpu"],
    "other `resource` (memory)": ["memory"],
    "`container_resource`": ["container"],
    "`pods` `AverageValue`": ["pods"],
    "`external`/`object` `AverageValue`": ["external_avg", "object_avg"],
    "`Value` targets": ["value"],
    "`load_balancing`": ["lb", "lb_named"],
    "`target.rate` (counters)": ["rate"],
    "fractional `average_utilization`": ["frac"],
    "metric `enabled: false`": ["disabled"],
    "metric `disable_scale_in`": ["disable_scale_in"],
    "metric `initialization_period_seconds`": ["metric_init"],
    "`tolerance`": ["tolerance", "tolerance_zero", "tolerance_without_behavior", "direction_tolerance"],
    "`behavior` windows, policies, select policy": ["up_policies", "window", "up_window", "down_policies_select"],
    "`scale_in_control`": ["sic", "sic_fraction"],
    "`initialization_period_seconds`": ["init"],
    "`mode`": ["off", "only_out", "mode_only_scale_out_signals", "only_in"],
    "`rules` (action)": ["rule", "allowed_next", "provider_name"],
    "`rules` with `steps`": ["step"],
    "rule `statistic: PercentileN`": ["percentile"],
    "rule `datapoints_to_alarm`, `treat_missing_data`": ["datapoints", "treat_missing"],
    "rule `time_aggregation` other than Average": ["aggregation", "step_aggregation", "step_aggregation_sum"],
    "rule `divide_per_instance`": ["divide"],
    "rule `Equals`/`NotEquals`": ["equals", "not_equals"],
    "`profiles`": ["profile"],
    "`schedules`": ["schedule", "schedule_two_starts"],
    "`predictive`": ["predictive", "predictive_settings"],
}
# lines about the context a row's fragment needs (a CPU target to forecast on), not about its feature
CONTEXT = {"`predictive`": {AZURE_NO_METRICS}}


def _table() -> dict[str, list[str]]:
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "translate.md").read_text(encoding="utf-8")
    part = page.split("## Every policy feature, every provider", 1)[1]
    rows = [line for line in part.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| policy feature | kubernetes")
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in r.strip("|").split(" | ")] for r in rows[1:])}


def test_every_row_of_the_docs_table_has_its_features_here():
    ids = {f[0] for f in FEATURES}
    assert set(_table()) == set(ROWS)
    assert all(i in ids for v in ROWS.values() for i in v)
    assert {i for v in ROWS.values() for i in v} == ids       # and every feature here is in the table


@pytest.mark.parametrize("row", list(ROWS))
def test_the_docs_table_says_native_where_nothing_is_lost(row):
    """A plain "native" cell: the row's feature prints no line for that provider; "lost" or
    "approx.": it prints one. Cells that qualify themselves ("native …, look-ahead lost") are
    checked by the exact lines above only."""
    cells = _table()[row]
    by_id = {f[0]: f for f in FEATURES}
    _, fragment, _ = by_id[ROWS[row][0]]
    for provider, cell in zip(["kubernetes", "gce", "azure", "aws"], cells):
        _, losses = render({"name": "web", "min_replicas": 1, "max_replicas": 10, **fragment}, provider)
        own = [line for line in losses.lines if line not in CONTEXT.get(row, ())]
        if cell.startswith("native") and "lost" not in cell and "approx" not in cell:
            assert own == [], (provider, cell)
        elif cell.startswith(("lost", "approx.")):
            assert own, (provider, cell)


@pytest.mark.parametrize("provider", ["kubernetes", "gce", "azure", "aws"])
def test_the_kedas_2_20_controls_are_lost_on_a_cloud_autoscaler(provider):
    # none of the four has KEDA's initialCooldownPeriod, force-activation or 2.20.2's negative value read as 0
    policy = {"name": "web", "min_replicas": 0, "max_replicas": 10, "scale_to_zero_delay_seconds": 60,
              "initial_scale_to_zero_delay_seconds": 120, "force_activation": True, "invalid_values_as_zero": True,
              "metrics": [{"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 5}}]}
    _, losses = render(policy, provider)
    keys = {line.split(":")[0] for line in losses.lines}
    assert {"initial_scale_to_zero_delay_seconds", "force_activation", "invalid_values_as_zero"} <= keys
