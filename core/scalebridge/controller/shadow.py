"""Shadow mode: decide beside the autoscaler a target has today, never write it, and
record where the two differ and why (``shadow: true`` on a target, ``run --shadow``).

Every sync of a shadow target:

1. observe and read the metrics as any sync does (the refusal check is skipped: the
   autoscaler that manages the target is the one compared with);
2. read what that autoscaler decided (:meth:`~scalebridge.providers.Target.native_decision`,
   a provider's :attr:`~scalebridge.providers.Capability.NATIVE_DECISIONS`; a provider
   without it is compared with the size the target holds);
3. settle the previous sync's decision (:class:`Pending`) against what happened to the
   target, and compare it with the native decision (:func:`compare`);
4. decide, with the stage trace on (``scalebridge explain``'s records); never write.

**Which decisions are compared.** The native decision read at a sync is paired with
scalebridge's decision of the *previous* sync: an autoscaler that evaluates about as
often as the controller syncs made its latest decision after that sync, from the size
the controller saw then (the HPA's ``status.currentReplicas`` is the size its last
evaluation started from, kubernetes/kubernetes ``pkg/controller/podautoscaler/horizontal.go``,
``reconcileAutoscaler`` → ``setStatus``). When the native autoscaler says which size
it decided from and it is not the one scalebridge decided from, the pair is not
compared (``compared: false``, and why).

**The decision state.** A shadow decision is not carried out, but the target's size
still changes: the native autoscaler scales it. The state keeps what happened to the
target, as the native autoscaler's own history does: a decision the target then
followed (the size observed next is the one decided) is kept as carried out; one it
did not follow keeps only its ``recommendations`` and ``sizes`` (the protocol's rule),
and the size change the target made instead is recorded as a scale event at the
decision's time. So a shadow run of a provider's own semantics beside that provider's
autoscaler carries the same history as the autoscaler itself.

**The first differing stage** (:func:`departure`) is reconstructed from scalebridge's
own stage trace, never guessed: see its docstring for the rule.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..decision import Decision
from ..providers import Capability, NativeDecision, ProviderError, ScaleNotice
from ..state import Events

__all__ = ["Pending", "ShadowTrack", "departure", "compare", "settle", "decided_signal", "read_values",
           "INPUT_TOLERANCE", "REASON_STAGES", "stage_of", "before_decision", "after_decision", "notify"]

#: two readings of one metric "match" when they differ by at most this share of the larger
#: (the metrics pipeline rounds: the HPA reports utilization in whole percent and values in
#: milli-units, kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go)
INPUT_TOLERANCE = 0.01


@dataclass(slots=True)
class Pending:
    """A shadow decision waiting for the native autoscaler's answer to the same situation."""
    time: float
    current: int
    desired: int
    reason: str
    cause: str
    cooldown: Optional[float]
    #: the state's events as if the decision were carried out (put back when the target follows it)
    after: Events
    trace: list
    #: what the decision read: metric name -> utilization (percent) or value
    read: dict


@dataclass(slots=True)
class ShadowTrack:
    """What a shadow target keeps between syncs (in memory: a restart compares from its
    second sync on)."""
    pending: Optional[Pending] = None
    last_sync: Optional[float] = None
    #: totals since the start, for logs and tests
    compared: int = 0
    agreed: int = 0
    notes: list = field(default_factory=list)


# ----------------------------------------------------------------------------- the stage


def _value(rec: dict) -> Optional[int]:
    """A trace record's size: its ``out`` when a count (a negative one, a stage with no
    proposal such as ``metrics`` when every metric failed, stands for its ``in``: the
    size held), else None (a record about a name or a state, not a size)."""
    out = rec.get("out")
    if type(out) is not int:
        return None
    if out < 0:
        held = rec.get("in")
        return held if type(held) is int and held >= 0 else None
    return out


#: the stage an HPA's status names by the reason of its decision: its ``AbleToScale``
#: condition's ``ScaleUpStabilized``/``ScaleDownStabilized`` (the stabilization window
#: held the size), its ``ScalingLimited`` condition's ``ScaleUpLimit``/``ScaleDownLimit``/
#: ``TooManyReplicas``/``TooFewReplicas`` (the rate limits or the bounds), and
#: ``DesiredWithinRange``/``WithinTolerance`` (nothing moved the metrics' proposal) —
#: kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go ``stabilizeRecommendation``,
#: ``normalizeDesiredReplicas``, ``convertDesiredReplicasWithBehaviorRate``
REASON_STAGES = {"ScaleUpStabilized": "stabilization", "ScaleDownStabilized": "stabilization",
                 "ScaleUpLimit": "limits", "ScaleDownLimit": "limits", "TooManyReplicas": "limits",
                 "TooFewReplicas": "limits", "DesiredWithinRange": "metrics", "WithinTolerance": "metrics"}


def stage_of(native: Optional[NativeDecision]) -> Optional[str]:
    """The native autoscaler's stage that set its size: what it says (``stage``), else
    what its reason names (:data:`REASON_STAGES`), else None."""
    if native is None:
        return None
    return native.stage or REASON_STAGES.get(native.reason or "")


def _matches(stage: str, hint: str) -> bool:
    return stage == hint or stage.endswith(" " + hint) or stage.startswith(hint + " ")


def departure(trace: list, native: int, final: int, *, hint: Optional[str] = None,
              inputs_match: Optional[bool] = None) -> tuple[str, str]:
    """The first stage of scalebridge's decision that departs from the native one, and a
    line saying how: ``("stabilization", "stabilization 4 → 9 (highest recommendation of
    the last 600s); native 4")``.

    ``trace`` is the decision's stage records (``{"stage", "in", "out", "why"}``, what
    ``scalebridge explain`` prints), ``native`` the size the native autoscaler decided,
    ``final`` scalebridge's (they differ). Only records whose output is a size count.

    - When the native autoscaler says which of its stages set its size (``hint``: the
      HPA's ``ScaleDownStabilized``/``ScaleUpStabilized`` name its stabilization,
      ``ScalingLimited`` its limits), its size at that stage and every later one is
      ``native``, and at the stages before it the same as scalebridge's — they read
      the same inputs, unless the reported inputs differ (``inputs_match`` False: then
      the hint is not used). The departure is the first record from that stage on
      whose output is not ``native``.
    - Otherwise (or when that finds none), the departure is the stage from which
      scalebridge's size stayed on the far side of ``native`` — above it when
      scalebridge decided more, below when less — to the end: the last stage that
      carried it across and that nothing after brought back.
    - A trace with no such record (no trace, or one whose sizes never cross) names the
      decision itself: ``("decision", …)``."""
    sized = [(r, v) for r in trace if (v := _value(r)) is not None]
    if hint and inputs_match is not False:
        start = next((i for i, (r, _) in enumerate(sized) if _matches(str(r.get("stage")), hint)), None)
        if start is not None:
            for r, v in sized[start:]:
                if v != native:
                    return str(r["stage"]), _line(r, v, native)
    side = 1 if final > native else -1
    first = None
    for i in range(len(sized) - 1, -1, -1):
        if (sized[i][1] - native) * side > 0:
            first = i
        else:
            break
    if first is None:
        return "decision", f"decided {final}; native {native}"
    r, v = sized[first]
    return str(r["stage"]), _line(r, v, native)


def _line(rec: dict, value: int, native: int) -> str:
    before = rec.get("in")
    why = rec.get("why") or ""
    moved = f"{before} → {value}" if type(before) is int and before != value else f"held {value}"
    return f"{rec['stage']} {moved}{f' ({why})' if why else ''}; native {native}"


# ----------------------------------------------------------------------------- inputs


def _number(x: Any) -> Optional[float]:
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x) if math.isfinite(x) else None
    try:
        from ..units import exact
        return float(exact(x))
    except Exception:  # noqa: BLE001 — a value that is not a number is not compared
        return None


def read_values(d: Decision) -> dict[str, float]:
    """What a decision read, by metric name: a utilization target's percent, else the
    value (the units a :class:`~scalebridge.providers.NativeDecision`'s ``metrics`` use)."""
    out: dict[str, float] = {}
    for m in d.metrics or ():
        if m.error is not None or m.is_rule and m.value is None:
            continue
        v = m.utilization if m.utilization is not None else _number(m.value)
        if v is not None:
            out[m.name] = float(v)
    return out


def _inputs(native: dict, read: dict) -> tuple[Optional[bool], dict]:
    """Whether the native autoscaler's reported metrics match what scalebridge read
    (None when no metric is reported by both), and each compared metric's pair."""
    pairs = {}
    match = True
    for name, nv in native.items():
        if name not in read or _number(nv) is None:
            continue
        a, b = float(_number(nv)), float(read[name])
        ok = abs(a - b) <= INPUT_TOLERANCE * max(abs(a), abs(b)) or a == b
        pairs[name] = {"native": a, "scalebridge": b, "match": ok}
        match = match and ok
    return (match if pairs else None), pairs


# ----------------------------------------------------------------------------- one sync


def settle(state: Any, pending: Pending, observed: int) -> str:
    """The previous shadow decision against the size the target has now: followed (the
    decided size) → its state as carried out; another change → that change recorded as
    a scale event at the decision's time; no change → nothing more. What happened, in
    a word."""
    if observed == pending.desired and pending.desired != pending.current:
        state.restore_events(pending.after)
        return "followed"
    if observed != pending.current:
        same_way = (observed > pending.current) == (pending.desired > pending.current) and \
            pending.desired != pending.current
        state.record_scale(pending.time, pending.current, observed, pending.cause if same_way else "metric",
                           pending.cooldown if same_way else None)
        return "other"
    return "held"


def compare(pending: Optional[Pending], native: Optional[NativeDecision], observed: int) -> dict:
    """The audit's ``shadow`` object for one sync: the native decision, and — when there
    is an earlier scalebridge decision from the same size — the comparison of the two."""
    out: dict = {}
    if native is not None:
        out.update({"native_autoscaler": native.autoscaler, "native_replicas": native.desired,
                    "native_current": native.current, "native_time": native.time,
                    "native_reason": native.reason, "native_stage": native.stage, "native_error": native.error,
                    "native_source": native.source or None})
        if native.actions:
            out["native_actions"] = list(native.actions)
        size = native.desired
    else:
        out.update({"native_autoscaler": None, "native_replicas": observed,
                    "native_source": "the size the target holds (no autoscaler's decision read)"})
        size = observed
    out = {k: v for k, v in out.items() if v is not None or k in ("native_autoscaler", "native_replicas")}
    if pending is None:
        out["compared"] = False
        out["why"] = "no earlier decision of scalebridge's to compare with (the first sync)"
        return out
    out.update({"decided_at": pending.time, "current_replicas": pending.current,
                "scalebridge_replicas": pending.desired, "reason": pending.reason, "load": dict(pending.read)})
    if size is None:
        out["compared"] = False
        out["why"] = "the native autoscaler has not decided"
        return out
    if native is not None and native.current is not None and native.current != pending.current:
        out["compared"] = False
        out["why"] = (f"the native autoscaler decided from {native.current} replicas, scalebridge from "
                      f"{pending.current}: not the same situation")
        return out
    match, pairs = _inputs(native.metrics if native is not None else {}, pending.read)
    out["compared"] = True
    out["agree"] = pending.desired == size
    out["difference"] = pending.desired - size
    out["inputs_match"] = match
    if pairs:
        out["inputs"] = pairs
    if not out["agree"]:
        stage, detail = departure(pending.trace, size, pending.desired,
                                  hint=stage_of(native), inputs_match=match)
        out["stage"] = stage
        out["detail"] = detail
    return out


def decided_signal(d: Decision, policy: Any) -> tuple[Optional[str], Optional[str]]:
    """The metric or rule whose proposal decided (the highest; the first of equals, as
    the HPA picks its ``rescaleMetric``, horizontal.go ``computeReplicasForMetrics``) and
    its policy type (``rule`` for a rule)."""
    best, best_n = None, None
    for m in d.metrics or ():
        if m.replicas is None or m.error is not None or (m.is_rule and not m.triggered):
            continue
        if best_n is None or m.replicas > best_n:
            best, best_n = m, m.replicas
    if best is None:
        return None, None
    if best.is_rule:
        return best.name, "rule"
    types = {m.name: m.type for m in getattr(policy, "metrics", None) or ()}
    return best.name, types.get(best.name)


def before_decision(run: Any, ctx: Any, now: float, current: int) -> Optional[dict]:
    """Steps 2 and 3 (see the module docstring), before the decision at ``now``: the
    audit's ``shadow`` object. A native autoscaler that cannot be read is reported in it
    (``native_read_error``) and counted, never a failed sync."""
    spec = run.spec
    track = run.shadow
    if track is None:
        track = run.shadow = ShadowTrack()
    native = None
    error = None
    if Capability.NATIVE_DECISIONS in (getattr(spec.provider, "capabilities", None) or ()):
        try:
            native = spec.target.native_decision(now, track.last_sync)
        except ProviderError as e:
            error = str(e)
            if ctx.metrics is not None:
                ctx.metrics.provider_errors.labels(spec.provider_key, e.kind.value).inc()
        except Exception as e:  # noqa: BLE001 — a plugin's bug: reported, the decision still made
            from .. import registry
            name = getattr(spec.provider, "name", spec.provider_key)
            error = (f"provider {name!r}{registry.provided_by('providers', name)} failed, a bug to report to its "
                     f"plugin: {type(e).__name__}: {e}")
    pending = track.pending
    track.pending = None
    if pending is not None:
        settle(run.decider.state, pending, current)
    if error is not None:
        out: dict = {"compared": False, "native_read_error": error,
                     "why": "the native autoscaler's decision could not be read"}
        if pending is not None:
            out.update({"decided_at": pending.time, "current_replicas": pending.current,
                        "scalebridge_replicas": pending.desired, "load": dict(pending.read)})
        return out
    return compare(pending, native, current)


def after_decision(run: Any, ctx: Any, rec: dict, d: Decision, events_before: Events, trace: list,
                   shadow: dict, now: float, current: int) -> None:
    """Step 4's end: the decision kept for the next sync's comparison, its state put back
    to not carried out, the audit record and the metrics written."""
    state = run.decider.state
    after = state.events()
    state.restore_events(events_before)
    run.shadow.pending = Pending(now, current, d.desired, d.reason, d.cause, d.cooldown_seconds, after, trace,
                                 read_values(d))
    run.shadow.last_sync = now
    rec["action"] = "shadow"
    rec["shadow"] = shadow
    run.failures = 0
    if shadow.get("compared"):
        run.shadow.compared += 1
        run.shadow.agreed += 1 if shadow.get("agree") else 0
    m = ctx.metrics
    if m is not None and getattr(m, "shadow_agreement", None) is not None:
        name = run.spec.name
        if shadow.get("native_replicas") is not None:
            m.shadow_native.labels(name).set(shadow["native_replicas"])
        if shadow.get("compared"):
            agree = bool(shadow.get("agree"))
            m.shadow_agreement.labels(name).set(1 if agree else 0)
            m.shadow_difference.labels(name).set(shadow["difference"])
            m.shadow_comparisons.labels(name, "agree" if agree else "disagree").inc()
            if not agree:
                m.shadow_disagreements.labels(name, shadow.get("stage") or "decision").inc()
            if shadow.get("inputs_match") is not None:
                m.shadow_inputs_match.labels(name).set(1 if shadow["inputs_match"] else 0)
        else:
            m.shadow_comparisons.labels(name, "not_compared").inc()
    if d.desired != current:
        signal, kind = decided_signal(d, run.spec.policy.source)
        notify(run, ScaleNotice("shadow", current, d.desired, d.reason, now, d.cause, signal, kind,
                                native=shadow.get("native_replicas")))


def notify(run: Any, notice: ScaleNotice) -> None:
    """``record_event`` on a target whose provider records events; a failure is logged,
    never the sync's."""
    spec = run.spec
    if Capability.EVENTS not in (getattr(spec.provider, "capabilities", None) or ()):
        return
    try:
        spec.target.record_event(notice)
    except Exception as e:  # noqa: BLE001 — an event is best effort (client-go drops one it cannot write)
        from .logs import log
        log(logging.WARNING, "the scale event could not be recorded", target=spec.name, error=str(e))
