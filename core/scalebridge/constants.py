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

# --- Azure Monitor autoscale --------------------------------------------------------------
# https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings
AZURE_DEFAULT_TIME_GRAIN = 60.0          # PT1M
AZURE_DEFAULT_TIME_WINDOW = 600.0        # PT10M, the portal default
AZURE_DEFAULT_COOLDOWN = 300.0           # PT5M

# --- AWS EC2 Auto Scaling -----------------------------------------------------------------
# https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scaling-cooldowns.html
AWS_DEFAULT_COOLDOWN = 300.0
# https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-predictive-scaling.html
AWS_PREDICTIVE_SCHEDULING_BUFFER = 300.0

# --- scalebridge neutral semantics ---------------------------------------------------------
NEUTRAL_TOLERANCE = 0.1                  # Kubernetes' tolerance: the most widely deployed default
NEUTRAL_DOWNSCALE_STABILIZATION = 600.0  # GCE's 10 minutes: the seed's "gradual scale-down"

# --- Shared -------------------------------------------------------------------------------
FLAPPING_WINDOW = 600.0                  # reversals within 10 minutes count as flapping
