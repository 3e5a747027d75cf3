"""A cloud's own autoscaler played by one of scalebridge's semantics, for testing shadow
mode without the cloud (docs/shadow.md).

A :class:`PlayedAutoscaler` decides with a policy and a semantics on what a target
observes, as the cloud's autoscaler would on the same inputs, and keeps what that
autoscaler's own records would hold (its latest decision, its scale actions) as a
:class:`~scalebridge.providers.NativeDecision`. The fake provider (``ref.native``), the
``sim`` provider (``ref.native``) and the local API servers' tests use it to play the
HPA, the GCE autoscaler, an Azure autoscale setting or an ASG's scaling policies::

    hpa = PlayedAutoscaler({"min_replicas": 1, "max_replicas": 10, "metrics": [...]}, "kubernetes",
                           name="HorizontalPodAutoscaler shop/web")
    d = hpa.decide(now, current, observations)      # a Decision; carry d.desired out on the target
    hpa.native(since)                               # what shadow mode reads: a NativeDecision
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Union

from ..decision import Decision
from ..engine import Decider
from ..policy import Policy
from ..providers import MetricQuery, NativeDecision

__all__ = ["PlayedAutoscaler", "parse_native"]

#: the stages of the kubernetes semantics' trace the HPA's status conditions name
#: (``AbleToScale`` reason ``ScaleDownStabilized``/``ScaleUpStabilized``; ``ScalingLimited``);
#: neither: its size is its metrics' proposal
_HINTS = ("stabilization", "limits")


class PlayedAutoscaler:
    """One target's autoscaler, played by ``semantics`` on ``policy`` (a :class:`Policy`,
    its JSON, or a compiled one). ``stage_hints`` (default on): report, as the HPA's
    status conditions do (``AbleToScale`` says whether the stabilization window held the
    size, ``ScalingLimited`` whether a limit did, both at once), the first stage that
    moved the size (``NativeDecision.stage``); off, only its reason says (an
    autoscaler whose records do not tell, such as an ASG's activities)."""

    def __init__(self, policy: Union[Policy, Mapping, Any], semantics: Optional[str] = None, *,
                 name: str = "the played autoscaler", stage_hints: bool = True, settings: Any = None):
        self.decider = Decider(policy if not isinstance(policy, Mapping) else dict(policy), semantics,
                               settings)
        self.name = name
        self.stage_hints = stage_hints
        self.last: Optional[NativeDecision] = None
        self.actions: list[dict] = []
        #: what it would raise when read (set by a test: the native autoscaler erroring)
        self.fail: Optional[Exception] = None

    @property
    def semantics(self) -> str:
        return self.decider.semantics.name

    def queries(self) -> list[MetricQuery]:
        """What one of its evaluations reads (the controller's queries for its policy)."""
        from ..controller.queries import queries_for
        return queries_for(self.decider.compiled, self.semantics)

    def decide(self, now: float, current: int, observations: Any) -> Decision:
        """One evaluation at ``now`` from ``current`` on ``observations``; the caller
        carries ``.desired`` out on the target, as the cloud's autoscaler does."""
        from ..controller.shadow import read_values
        trace: list = []
        d = self.decider.step(now, current, observations, trace)
        stage = None
        if self.stage_hints:   # the first of its stages that moved the size, as the HPA's conditions say
            stage = "metrics"
            for rec in trace:
                hint = next((h for h in _HINTS if h in str(rec.get("stage"))), None)
                if hint is not None and rec.get("in") != rec.get("out"):
                    stage = hint
                    break
        self.last = NativeDecision(self.name, d.desired, current=current, time=now if d.desired != current else None,
                                   reason=d.reason, stage=stage, metrics=read_values(d),
                                   source=f"played by scalebridge's {self.semantics} semantics")
        if d.desired != current:
            self.actions.append({"time": now, "from": current, "to": d.desired, "reason": d.reason})
        return d

    def native(self, since: Optional[float]) -> Optional[NativeDecision]:
        """Its latest decision as its records show it, with its actions after ``since``."""
        if self.fail is not None:
            raise self.fail
        if self.last is None:   # not evaluated yet
            return NativeDecision(self.name, None, source=f"played by scalebridge's {self.semantics} semantics")
        last = self.last
        return NativeDecision(last.autoscaler, last.desired, current=last.current, time=last.time,
                              reason=last.reason, stage=last.stage, metrics=dict(last.metrics),
                              actions=[a for a in self.actions if since is None or a["time"] > since],
                              source=last.source)


def parse_native(spec: Any, key: str = "ref.native") -> PlayedAutoscaler:
    """A played autoscaler from a ref's ``native: {policy, semantics, name, stage_hints}``
    (``policy`` inline or a policy file's path); raises
    :class:`~scalebridge.providers.RefError` naming the key."""
    from ..providers import RefError
    if not isinstance(spec, Mapping):
        raise RefError(key, "expected {policy, semantics, name, stage_hints}: the autoscaler the target has today, "
                            "played by a scalebridge semantics")
    unknown = set(spec) - {"policy", "semantics", "name", "stage_hints"}
    if unknown:
        raise RefError(f"{key}.{sorted(unknown)[0]}", "unknown key; valid: policy, semantics, name, stage_hints")
    policy = spec.get("policy")
    if isinstance(policy, str):
        from ..errors import PolicyError
        from ..policyfile import load_policy_file
        try:
            policy = load_policy_file(policy)
        except PolicyError as e:
            raise RefError(f"{key}.policy", str(e).splitlines()[0]) from None
        except OSError as e:
            raise RefError(f"{key}.policy", f"{policy}: {e.strerror or e}") from None
    if not isinstance(policy, (Mapping, Policy)):
        raise RefError(f"{key}.policy", "required: the native autoscaler's policy (inline, or a policy file)")
    try:
        return PlayedAutoscaler(policy, spec.get("semantics"), name=str(spec.get("name") or "the native autoscaler"),
                                stage_hints=bool(spec.get("stage_hints", True)))
    except Exception as e:  # noqa: BLE001 — a policy or semantics that does not load: say where
        raise RefError(f"{key}.policy", str(e)) from None
