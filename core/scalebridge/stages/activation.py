"""Scale to and from zero: KEDA's activation phase, the neutral core's.

KEDA "has 2 different phases during the autoscaling process": the activation
phase, in which KEDA itself decides 0 ↔ active, and the scaling phase (1 ↔ N),
left to the HPA (https://keda.sh/docs/latest/concepts/scaling-deployments/#activating-and-scaling-thresholds).
Here the scaling phase is the semantics', whichever it is, and this stage the
activation phase, applied the same way under every semantics:

- a metric is **active** while its value is above its ``activation_threshold``
  (default 0): "Activation only occurs when this value is greater than the set
  value; not greater than or equal to"; a formula's threshold is KEDA's
  ``scalingModifiers.activationTarget``, and then the metrics it names do not
  count on their own (``getScaledObjectState``: "IsActive will be overridden by
  formula calculation");
- a policy of ``resource`` metrics only (cpu, memory) is always active — "cpu/memory
  scaler only can scale to zero if there is any other external metric because
  otherwise it'll never scale from 0" (pkg/scaling/scale_handler.go);
- a metric in fallback counts as active ("When fallback is active, the scaler
  should be considered active", ``getScalerState``);
- **idle** is ``idle_replicas`` (KEDA ``idleReplicaCount``), else 0 when
  ``min_replicas`` is 0; with neither there is no idle size: "If the minimum
  replicas is >= 1, the scaler is always active and the activation value will
  be ignored";
- below ``max(min_replicas, 1)`` (the HPA KEDA creates never has a lower
  minimum) the target is idle, and the HPA is not running ("ScalingDisabled"):
  an active metric sets ``max(min_replicas, 1)`` at once (``scaleFromZeroOrIdle``),
  else the size is held;
- above it, the semantics decides — bounded below by ``max(min_replicas, 1)`` —
  and every decision with an active metric and no failed one is the last
  active time (``RequestScale``: ``LastActiveTime`` is set only when no trigger
  errored); with no metric active and none failed, once
  ``last_active + scale_to_zero_delay_seconds < now`` (KEDA ``cooldownPeriod``,
  default 300, ``scaleToZeroOrIdle``: ``LastActiveTime.Add(cooldownPeriod).Before(now)``)
  the size goes to idle. A failed metric never lets it go to idle (the
  ``isError`` cases come first in ``RequestScale``).
- with no last active time (a target never seen active: KEDA's ``LastActiveTime``
  nil, with ``initialCooldownPeriod`` 0) there is nothing to wait for: "when you
  first create your Deployment ... KEDA will immediately scale it to
  minReplicaCount" (https://keda.sh/docs/latest/reference/scaledobject-spec/#cooldownperiod).

The last active time is kept in ``state["activation.last_active"]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import constants as C
from ..errors import RequestError

__all__ = ["STATE_LAST_ACTIVE", "Phases", "last_active_of", "phases_of", "idle_size", "active_floor"]

STATE_LAST_ACTIVE = "activation.last_active"


@dataclass(frozen=True, slots=True)
class Phases:
    """The activation phase of one policy."""
    idle: int           # the size while no metric is active
    floor: int          # max(min_replicas, 1): the lowest size of the scaling phase
    delay: float        # scale_to_zero_delay_seconds


def idle_size(policy) -> Optional[int]:
    """``idle_replicas``, else 0 when ``min_replicas`` is 0; None: no idle size."""
    if policy.idle_replicas is not None:
        return policy.idle_replicas
    return 0 if policy.min_replicas == 0 else None


def active_floor(policy) -> int:
    """KEDA's HPA minimum: ``minReplicaCount`` when above 0, else 1 (``scaleFromZeroOrIdle``)."""
    lo = policy.min_replicas
    return lo if lo is not None and lo > 0 else 1


def phases_of(policy) -> Optional[Phases]:
    """The policy's activation phase, or None when it has none (it states no
    activation key, or has no idle size)."""
    from ..policy import uses_activation
    if not uses_activation(policy):
        return None
    idle = idle_size(policy)
    if idle is None:
        return None
    delay = policy.scale_to_zero_delay_seconds
    return Phases(idle, active_floor(policy), C.KEDA_COOLDOWN_PERIOD if delay is None else float(delay))


def last_active_of(extra: dict) -> Optional[float]:
    v = extra.get(STATE_LAST_ACTIVE)
    if v is None:
        return None
    if type(v) not in (int, float) or v != v:
        raise RequestError(f"$.state['{STATE_LAST_ACTIVE}']",
                           f"must be a time (seconds since the epoch) when a metric was last active, got {v!r}")
    return float(v)


def may_go_idle(last_active: Optional[float], now: float, delay: float) -> bool:
    """``LastActiveTime == nil || LastActiveTime.Add(cooldownPeriod).Before(now)``."""
    return last_active is None or last_active + delay < now
