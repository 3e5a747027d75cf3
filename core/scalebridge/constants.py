"""Numbers the providers document, in one place, each with its source.

Every semantics reads its defaults from here; nothing else hard-codes them.
"""
from __future__ import annotations

# --- Kubernetes: kube-controller-manager flags and autoscaling/v2 defaults ---------------
# https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/
K8S_TOLERANCE = 0.1                      # --horizontal-pod-autoscaler-tolerance
K8S_CPU_INITIALIZATION_PERIOD = 300.0    # --horizontal-pod-autoscaler-cpu-initialization-period (5m)
K8S_INITIAL_READINESS_DELAY = 30.0       # --horizontal-pod-autoscaler-initial-readiness-delay (30s)
K8S_DOWNSCALE_STABILIZATION = 300.0      # --horizontal-pod-autoscaler-downscale-stabilization (5m)
K8S_SYNC_PERIOD = 15.0                   # --horizontal-pod-autoscaler-sync-period (15s)
K8S_MIN_REPLICAS = 1                     # HorizontalPodAutoscalerSpec.minReplicas default
K8S_DEFAULT_CPU_UTILIZATION = 80         # pkg/apis/autoscaling/v2/defaults.go: SetDefaults_HorizontalPodAutoscaler
# pkg/controller/podautoscaler/horizontal.go: scaleUpLimitFactor, scaleUpLimitMinimum
K8S_SCALE_UP_LIMIT_FACTOR = 2.0
K8S_SCALE_UP_LIMIT_MINIMUM = 4.0
# pkg/apis/autoscaling/v2/defaults.go: defaultHPAScaleUpRules / defaultHPAScaleDownRules
K8S_SCALE_UP_STABILIZATION = 0
K8S_SCALE_UP_PERCENT = 100
K8S_SCALE_UP_PODS = 4
K8S_SCALE_UP_PERIOD = 15
K8S_SCALE_DOWN_PERCENT = 100
K8S_SCALE_DOWN_PERIOD = 15

# --- GCE managed instance group autoscaler ---------------------------------------------
# https://cloud.google.com/compute/docs/autoscaler/scaling-cpu
GCE_DEFAULT_CPU_UTILIZATION = 0.6
# https://cloud.google.com/compute/docs/autoscaler/scaling-load-balancing
GCE_DEFAULT_LB_UTILIZATION = 0.8
# https://cloud.google.com/compute/docs/autoscaler/understanding-autoscaler-decisions
GCE_STABILIZATION_PERIOD = 600.0         # 10 minutes, scale-in only
GCE_INITIALIZATION_PERIOD = 60.0         # autoscalingPolicy.coolDownPeriodSec default
# https://cloud.google.com/compute/docs/autoscaler/scaling-cloud-monitoring-metrics: "When using
# per-instance metrics, the MIG cannot scale below a size of 1 VM"
GCE_PER_INSTANCE_MIN_SIZE = 1
GCE_HEAVY_CPU_PERCENT = 95
"""scaling-cpu, "How autoscaler handles heavy CPU utilization": "if utilization is close to
100% ... the autoscaler increases the number of virtual machines by 50% at most". "Close to" is
not quantified; 95% is scalebridge's reading (docs/semantics/gce.md, G-GAP-12)."""

# --- Azure Monitor autoscale --------------------------------------------------------------
# https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings
AZURE_DEFAULT_TIME_GRAIN = 60.0          # PT1M
AZURE_DEFAULT_TIME_WINDOW = 600.0        # PT10M, the portal default
AZURE_DEFAULT_COOLDOWN = 300.0           # PT5M
# https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-get-started:
# "The default cool-down period is five minutes." (a rule without cooldown_seconds)
# What Microsoft.Insights/autoscalesettings accepts (the REST reference, autoscale-settings/create-or-update,
# and the SDK models' descriptions: "A maximum of 20 profiles can be specified", "A maximum of 10 rules can
# be specified"; ScaleAction.cooldown: "This value must be between 1 week and 1 minute in ISO 8601
# format"; a ChangeCount value beyond maximum - minimum is InvalidActionValue, "Specify a scale value less
# than or equal to the difference between the capacity maximum and the capacity minimum")
AZURE_MAX_PROFILES = 20
AZURE_MAX_RULES_PER_PROFILE = 10
AZURE_MIN_COOLDOWN = 60.0                # PT1M
AZURE_MAX_COOLDOWN = 604800.0            # P7D
# https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-predictive:
# "how far in advance you want new instances to be provisioned, up to 1 hour" (not enforced:
# the protocol makes provider limits advisory)
AZURE_PREDICTIVE_MAX_LOOK_AHEAD = 3600.0

# --- AWS EC2 Auto Scaling -----------------------------------------------------------------
# https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scaling-cooldowns.html
AWS_DEFAULT_COOLDOWN = 300.0
# https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html
AWS_PREDICTIVE_SCHEDULING_BUFFER = 300.0
# https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PredictiveScalingConfiguration.html
# (MaxCapacityBuffer: "Required if the MaxCapacityBreachBehavior property is set to
# IncreaseMaxCapacity"; scalebridge reads an absent one as 0, "equal but not exceed")
AWS_PREDICTIVE_MAX_CAPACITY_BUFFER = 0
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarms-evaluating-missing-data
# "Datapoints to Alarm and Evaluation Periods are both 3. CloudWatch retrieves the 5 most
# recent data points": the evaluation range is the evaluation periods plus 2.
AWS_ALARM_EXTRA_PERIODS = 2
# Target tracking's own alarms, as AWS creates them (the alarm descriptions the console
# shows, e.g. "greater than 50 for 3 datapoints within 3 minutes ... less than 45 for 15
# datapoints within 15 minutes"; not on an AWS documentation page — docs/research/aws.md G10).
# https://docs.aws.amazon.com/autoscaling/application/userguide/application-auto-scaling-target-tracking.html
# "removing capacity only when utilization passes a threshold that is far enough below the
# target value (usually more than 10% lower)".
AWS_TT_PERIOD = 60.0
AWS_TT_HIGH_DATAPOINTS = 3               # 3 of 3 one-minute datapoints above the target
AWS_TT_LOW_DATAPOINTS = 15               # 15 of 15 one-minute datapoints below 90 % of it
AWS_TT_LOW_PERCENT = 90
AWS_TT_WINDOW_SECONDS = AWS_TT_PERIOD * AWS_TT_LOW_DATAPOINTS
# High-resolution target tracking: "set the metric period at which the target tracking
# observes this metric to a value lower than 60 seconds. Currently the lowest supported
# interval is 10 seconds … A metric period greater than 60 isn't supported"
# (https://docs.aws.amazon.com/autoscaling/ec2/userguide/policy-creating-high-resolution-metrics.html,
# "How target tracking policy with high-resolution metrics works"); "Accepted values are 10,
# 30, and 60" (API_TargetTrackingMetricStat.html, Period).
AWS_TT_PERIODS = (10, 30, 60)
# The datapoints of the high and low alarms at each period: (high M of M, low N of N). AWS
# documents them at no period; 60 s is the observed 3/15. At 10 and 30 s scalebridge CHOOSES the
# same counts of datapoints at the shorter period (a scale-out after 3 × 10 s, not 18 × 10 s),
# since faster response is what the high-resolution policy is for; AWS says it "automatically
# tunes" these alarms (docs/known-divergences.md, "AWS high-resolution target tracking").
# Switch a period's shape here, e.g. {10: (18, 90)} for alarms spanning the one-minute minutes.
AWS_TT_ALARM_DATAPOINTS = {60: (AWS_TT_HIGH_DATAPOINTS, AWS_TT_LOW_DATAPOINTS),
                           30: (AWS_TT_HIGH_DATAPOINTS, AWS_TT_LOW_DATAPOINTS),
                           10: (AWS_TT_HIGH_DATAPOINTS, AWS_TT_LOW_DATAPOINTS)}
"""The history a target-tracking metric is read over: its scale-in alarm's 15 one-minute
datapoints (https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-scaling-target-tracking.html)."""
AWS_FORECAST_GRAIN_SECONDS = 3600.0
"""Predictive scaling forecasts capacity by the hour, so its metric's history is read hourly
(https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html)."""

# --- scalebridge neutral semantics ---------------------------------------------------------
NEUTRAL_TOLERANCE = 0.1                  # Kubernetes' tolerance: the most widely deployed default
NEUTRAL_DOWNSCALE_STABILIZATION = 600.0  # GCE's 10 minutes: a gradual scale-down

# --- Shared -------------------------------------------------------------------------------
FLAPPING_WINDOW = 600.0                  # reversals within 10 minutes count as flapping
METRIC_WINDOW_SECONDS = 60.0
"""A snapshot metric's window: metrics-server's default resolution is 60 s
(https://github.com/kubernetes-sigs/metrics-server, ``--metric-resolution``), and Cloud Monitoring
samples compute.googleapis.com/instance/cpu/utilization every 60 s."""
FORECAST_HISTORY_SECONDS = 2 * 86400.0
"""The history a predictive metric is read over when the policy says none: two days."""

# KEDA (the neutral core's fallback and activation phase; docs/policy.md)
KEDA_FALLBACK_FAILURE_THRESHOLD = 3
"""ScaledObject ``fallback.failureThreshold`` as the scaledobject-spec example gives it (KEDA makes it
mandatory; the policy's default, issue #27): https://keda.sh/docs/latest/reference/scaledobject-spec/#fallback"""
KEDA_COOLDOWN_PERIOD = 300.0
"""ScaledObject ``cooldownPeriod``: "By default, it's 300 (5 minutes)" (scaledobject-spec, cooldownPeriod;
pkg/scaling/executor/scale_executor.go ``defaultCooldownPeriod = 5 * 60``)."""
KEDA_INITIAL_COOLDOWN_PERIOD = 0.0
"""ScaledObject ``initialCooldownPeriod``: "By default, it's 0, meaning the ``cooldownPeriod`` begins immediately
upon creation" (keda-docs 2.20 reference/scaledobject-spec.md, initialCooldownPeriod;
kedacore/keda v2.20.2 pkg/scaling/executor/scale_executor.go ``defaultInitialCooldownPeriod = 0``)."""
