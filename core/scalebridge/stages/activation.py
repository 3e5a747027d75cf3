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
  minReplicaCount" (https://keda.sh/docs/latest/reference/scaledobject-spec/#cooldownperiod);
- ``initial_scale_to_zero_delay_seconds`` (KEDA ``initialCooldownPeriod``, default 0):
  while no metric has ever been active the size goes to idle only once that long has
  passed since the first decision — KEDA 2.20 ``scaleToZeroOrIdle``
  (pkg/scaling/executor/scale_scaledobjects.go): ``(LastActiveTime == nil &&
  CreationTimestamp.Add(initialCooldownPeriod).Before(now)) || (LastActiveTime != nil &&
  LastActiveTime.Add(cooldownPeriod).Before(now))``; KEDA counts from the ScaledObject's
  creation, which a decision does not know: here it is the first decision that saw
  the target, kept in ``state["activation.since"]`` (only while it matters: a delay
  above 0 and no metric yet seen active);
- ``force_activation`` (KEDA's ``autoscaling.keda.sh/force-activation`` annotation,
  2.18+): every metric counts as active — ``RequestScale``: ``if isActive ||
  scaledObject.NeedToForceActivation()`` — so an idle target goes to
  ``max(min_replicas, 1)`` and an active one never goes to idle; "When the annotation is
  subsequently unset, the state of the scaler activation will revert to being computed
  from the state of the scaler metrics"
  (https://keda.sh/docs/2.20/concepts/scaling-deployments/#forcing-activation).

The last active time is kept in ``state["activation.last_active"]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import constants as C
from ..errors import RequestError

__all__ = ["STATE_LAST_ACTIVE", "STATE_SINCE", "Phases", "last_active_of", "since_of", "phases_of", "idle_size",
           "active_floor"]

STATE_LAST_ACTIVE = "activation.last_active"
STATE_SINCE = "activation.since"


@dataclass(frozen=True, slots=True)
class Phases:
    """The activation phase of one policy."""
    idle: int           # the size while no metric is active
    floor: int          # max(min_replicas, 1): the lowest size of the scaling phase
    delay: float        # scale_to_zero_delay_seconds
    initial_delay: float = 0.0   # initial_scale_to_zero_delay_seconds
    forced: bool = False         # force_activation


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
    initial = policy.initial_scale_to_zero_delay_seconds
    return Phases(idle, active_floor(policy), C.KEDA_COOLDOWN_PERIOD if delay is None else float(delay),
                  C.KEDA_INITIAL_COOLDOWN_PERIOD if initial is None else float(initial), bool(policy.force_activation))


def last_active_of(extra: dict) -> Optional[float]:
    v = extra.get(STATE_LAST_ACTIVE)
    if v is None:
        return None
    if type(v) not in (int, float) or v != v:
        raise RequestError(f"$.state['{STATE_LAST_ACTIVE}']",
                           f"must be a time (seconds since the epoch) when a metric was last active, got {v!r}")
    return float(v)


def since_of(extra: dict) -> Optional[float]:
    v = extra.get(STATE_SINCE)
    if v is None:
        return None
    if type(v) not in (int, float) or v != v:
        raise RequestError(f"$.state['{STATE_SINCE}']",
                           f"must be a time (seconds since the epoch) of the first decision on the target, got {v!r}")
    return float(v)


def may_go_idle(last_active: Optional[float], now: float, delay: float, since: Optional[float] = None,
                initial_delay: float = 0.0) -> bool:
    """``(LastActiveTime == nil && CreationTimestamp.Add(initialCooldownPeriod).Before(now)) ||
    LastActiveTime.Add(cooldownPeriod).Before(now)``, with the first decision (``since``) for
    the creation; with no initial delay, a target never seen active goes at once."""
    if last_active is None:
        return initial_delay <= 0 or since is None or since + initial_delay < now
    return last_active + delay < now
