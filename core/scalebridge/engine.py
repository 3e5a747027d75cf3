"""``decide(request) -> response``: the protocol's one function, and :class:`Decider`
for callers that make many decisions for one target (controller, simulator).

Pure: no clock, no I/O. The engine validates the request (its policy compiled once,
:func:`compile_policy`), runs the selected semantics with the controls around it
(:mod:`scalebridge.controls`: ``mode``, failed reads, formulas, scale to and from zero,
fallback), then records what the protocol prescribes for every semantics alike
(docs/architecture.md): the ``sizes`` log, the scale event and ``last_scale``, and
pruning history no window needs. The response's JSON is made only by :func:`to_response`.
"""
from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from functools import partial
from typing import Annotated, Any, Optional, Union

from pydantic import Field, TypeAdapter, ValidationError
from pydantic_core import to_json

from . import controls, registry
from .compiled import CompiledPolicy
from .decision import Context, Decision, aligned
from .errors import (RequestError, ScalebridgeError, SemanticsFailure, _type_name, json_path, normalize_errors,
                     short_repr)
from .policy import Int, Policy, _Model, model as dataclass_model, parse_policy
from .protocol import (EpochSeconds, Observations, Request, Settings, StateModel, check_json_value, serving,
                       parse_observations, parse_settings, without_nulls)
from .semantics.base import Semantics
from .stages.impossible import refuse_impossible
from .stages.signals import predictive_mode
from .state import DecisionState

DEFAULT_SEMANTICS = "scalebridge"


def describe_validation_error(err: ValidationError, prefix: tuple = ()) -> tuple[str, str]:
    """(JSON path, message) of the first problem pydantic found — or, when that is a
    missing field and an unknown one beside it looks like it misspelled (``nwo`` for
    ``now``), the misspelling, which is what the writer has to fix."""
    problems = normalize_errors(err.errors(include_url=False))
    loc, kind, msg, inp = problems[0]
    if kind == "missing":
        import difflib
        for other, other_kind, _, _ in problems:
            if other_kind == "extra_forbidden" and other[:-1] == loc[:-1] and \
                    difflib.get_close_matches(str(other[-1]), [str(loc[-1])], n=1):
                return json_path(prefix + other), f"unknown field; did you mean {loc[-1]!r}?"
    if kind == "extra_forbidden":
        msg = "unknown field (not part of the protocol; check its spelling)"
    elif kind == "missing":
        msg = "required field is missing"
    elif kind not in ("quantity", "value_error") and "got " not in msg and not isinstance(inp, (dict, list)):
        msg = f"{msg} (got {_shown(inp)})"
    return json_path(prefix + loc), msg


def _provided_by(name: str) -> str:
    return registry.provided_by("semantics", name)


def _shown(x: Any, limit: int = 60) -> str:
    if isinstance(x, int) and not isinstance(x, bool) and x.bit_length() > 200:
        return short_repr(x, limit)
    text = json.dumps(x) if _jsonable(x) else repr(x)
    return text if len(text) <= limit else text[:limit] + "…"


def _jsonable(x: Any) -> bool:
    try:
        json.dumps(x)
        return True
    except (TypeError, ValueError):
        return False


@dataclass_model
class _Envelope(_Model):
    """A request whose policy is validated (and compiled, and cached) separately."""
    semantics: Optional[str] = None
    now: EpochSeconds
    current_replicas: Annotated[Int, Field(ge=0)]
    policy: Optional[dict] = None
    settings: Settings = Field(default_factory=Settings)
    observations: Observations = Field(default_factory=Observations)
    state: Optional[StateModel] = None


_ENVELOPE = TypeAdapter(_Envelope)
_COMPILED: "OrderedDict[str, CompiledPolicy]" = OrderedDict()
_POLICY_CACHE_SIZE = 256


def compile_policy(raw: Union[CompiledPolicy, Policy, dict, None], path: tuple = ("policy",)) -> CompiledPolicy:
    """The policy as decisions read it (:func:`scalebridge.controls.compile`), from a
    :class:`Policy` or its JSON; a JSON one is cached by content, so that a stream of
    requests sharing one policy validates and compiles it once. A compiled policy is
    itself (the targets of a run configuration that name one policy share it)."""
    if isinstance(raw, CompiledPolicy):
        return raw
    if isinstance(raw, Policy):
        return controls.compile(raw)
    if raw is None:
        raw = {}
    try:
        key = to_json(raw, fallback=str)
    except ValueError:   # too deep, or not Unicode text: say where
        check_json_value(raw, path)
        raise
    c = _COMPILED.get(key)
    if c is not None:
        _COMPILED.move_to_end(key)
        return c
    try:
        p = parse_policy(raw)
    except ValidationError as e:
        raise RequestError(*describe_validation_error(e, path)) from None
    c = _COMPILED[key] = controls.compile(p)
    if len(_COMPILED) > _POLICY_CACHE_SIZE:
        _COMPILED.popitem(last=False)
    return c


def load_policy(raw: Union[Policy, dict, None], path: tuple = ("policy",)) -> Policy:
    """A validated :class:`Policy` (raises :class:`RequestError` naming the field), cached by content."""
    return raw if isinstance(raw, Policy) else compile_policy(raw, path).source


def parse_request(request: Union[dict, Request]) -> tuple[Any, CompiledPolicy]:
    """A request validated (the envelope; its policy compiled and cached by content), or a
    :class:`RequestError` naming the first problem's JSON path."""
    if isinstance(request, Request):
        return request, controls.compile(request.policy)
    if not isinstance(request, dict):
        raise RequestError("$", f"a request must be a JSON object, got {_type_name(request)}")
    try:
        env = _ENVELOPE.validate_python(request)
    except ValidationError as e:
        check_json_value(request)   # too deep (for what follows) or not Unicode text: say where
        # the protocol: "`null` and a missing key mean the same thing" — the types a
        # request holds many of do not drop null keys themselves (that would cost every
        # well-formed request a Python call per member); done here, once
        cleaned = without_nulls(request)
        if cleaned is request:
            raise RequestError(*describe_validation_error(e)) from None
        try:
            env = _ENVELOPE.validate_python(cleaned)
        except ValidationError as e2:
            raise RequestError(*describe_validation_error(e2)) from None
    return env, compile_policy(env.policy)


def resolve_semantics(name: Optional[str], path: str = "$.semantics") -> Semantics:
    try:
        return registry.semantics(name or DEFAULT_SEMANTICS)
    except ScalebridgeError as e:
        raise RequestError(path, str(e)) from None


def read_policy_file(path: Any, warnings: Optional[list] = None) -> Policy:
    """A policy file (:func:`scalebridge.policyfile.load_policy_file`) whose ``semantics:``,
    when it names one, is a registered semantics — an unknown one is a problem at its
    line and column, with the closest registered name; ``warnings`` as there."""
    from .policyfile import load_policy_file
    return load_policy_file(path, semantics=registry.current().semantics, warnings=warnings)


def check_policy(sem: Semantics, policy: CompiledPolicy) -> None:
    """``sem.check(policy)``, once per compiled policy and semantics: a check is of the
    policy alone (the contract of :meth:`Semantics.check`). A check that raises is not
    recorded: every decision on that policy raises."""
    policy.derived(("checked by", sem), sem.check)


class Decider:
    """Decisions for one target, carrying state from one to the next.

    ``Decider(policy, "gce").step(now, current, observations)`` is what the
    simulator and controller call every sync period; it runs exactly the
    pipeline :func:`decide` runs, on the policy it compiled once
    (:attr:`compiled`, the :class:`~scalebridge.compiled.CompiledPolicy`; :attr:`policy`
    is the policy as written), without re-serializing history."""

    __slots__ = ("compiled", "semantics", "settings", "state", "steps")

    def __init__(self, policy: Union[CompiledPolicy, Policy, dict], semantics: Optional[str] = None,
                 settings: Union[Settings, dict, None] = None, state: Union[DecisionState, dict, None] = None):
        self.compiled = compile_policy(policy)
        self.semantics = resolve_semantics(semantics or self.compiled.semantics)
        check_policy(self.semantics, self.compiled)
        self.settings = parse_settings(settings)
        self.semantics.check_settings(self.settings)
        if isinstance(state, dict):          # a protocol response's `state`, as decide() takes it
            state = DecisionState.from_protocol(StateModel.model_validate(state))
        self.state = state if state is not None else DecisionState()
        self.steps = 0

    def learn_settings(self, known: dict, given: Union[Settings, dict, None]) -> None:
        """Decide with the settings ``given`` (the configuration's), each one left unset
        filled from ``known`` (what a provider knows of the autoscaler it stands for, its
        release); checked as any settings are."""
        base = parse_settings(given)
        fill = {k: v for k, v in known.items() if k in Settings.model_fields and getattr(base, k) is None}
        settings = parse_settings({**base.model_dump(exclude_none=True), **fill}) if fill else base
        self.semantics.check_settings(settings)
        self.settings = settings

    @property
    def policy(self) -> Policy:
        """The policy as written; setting one (a policy changed while its history is kept)
        compiles it for the decisions that follow."""
        return self.compiled.source

    @policy.setter
    def policy(self, policy: Union[CompiledPolicy, Policy, dict]) -> None:
        compiled = compile_policy(policy)
        check_policy(self.semantics, compiled)
        self.compiled = compiled

    def step(self, now: float, current: int, observations: Union[Observations, dict],
             trace: Optional[list] = None, *, checked: bool = False) -> Decision:
        """One decision at ``now`` for a target of ``current`` replicas (the protocol's
        ``now`` and ``current_replicas``) on ``observations`` (an :class:`Observations`,
        or the protocol's ``observations`` dict, validated here), with the policy, semantics
        and settings this Decider was made with, and the history it carries: the decision
        is recorded in :attr:`state` as :func:`decide` records it in the response's
        ``state``, assuming it is carried out (a caller that fails to carry it out
        keeps only ``recommendations`` and ``sizes``, docs/protocol.md). ``trace``, a
        list, collects each stage's input and output (what ``scalebridge explain``
        prints). Returns a :class:`~scalebridge.decision.Decision`: ``.desired`` is the
        response's ``desired_replicas``, ``.recommended`` its
        ``recommended_replicas``; ``.to_response()`` is the response dict
        :func:`decide` returns for the same request (call it before the next step).
        Raises :class:`~scalebridge.errors.ScalebridgeError` for observations the
        protocol refuses. ``checked=True``: the caller vouches that no reading is
        negative or not finite (the simulator's world, which checks its load once), so
        the scan for impossible observations (:func:`run`) is skipped."""
        if type(observations) is not Observations:
            observations = _observations(observations)
        d = run(self.semantics, Context(now, current, self.compiled, self.settings, observations, self.state, trace),
                checked)
        self.steps = steps = self.steps + 1
        # a partial, not a closure: made every step (a replay's), called by the few who ask
        d.respond = partial(self._respond, steps, current, trace)
        return d

    def _respond(self, step: int, current: int, trace: Optional[list], d: Decision) -> dict:
        """``d.to_response()``: the response of the ``step``-th decision, while it is the last."""
        if self.steps != step:
            raise ValueError(f"Decision.to_response(): the Decider has stepped since (step {step}, now "
                             f"{self.steps}); the state it would report is no longer this decision's")
        return to_response(self.semantics.name, current, d, self.compiled, self.state, trace)


def _observations(obs: Any) -> Observations:
    if isinstance(obs, dict):
        try:
            return parse_observations(obs)
        except ValidationError as e:
            raise RequestError(*describe_validation_error(e, ("observations",))) from None
    if isinstance(obs, Observations):
        return obs
    raise RequestError("$.observations", f"expected the protocol's observations, got {_type_name(obs)}")


def run(semantics: Semantics, ctx: Context, checked: bool = False) -> Decision:
    """The semantics with the policy's controls around it (:mod:`.controls`), then what
    the protocol prescribes for all semantics. An impossible observation (a negative
    reading of a metric that cannot be negative, :mod:`.stages.impossible`) is a failed
    metric under every semantics; ``checked``: the caller knows there is none (it
    built every reading from values it checked: a scan of every member and series
    point a decision, a quarter of a replay's time, saved)."""
    if not checked:
        metrics = refuse_impossible(ctx.policy, ctx.obs.metrics)
        if metrics is not ctx.obs.metrics:   # a negative reading of a ratio target: a failed metric
            ctx.obs = dataclasses.replace(ctx.obs, metrics=metrics)
    # members in standby (a standby pool, a warm pool) are outside the target's capacity:
    # no semantics sees them (protocol.serving); the response says how many were left out
    members, standby = serving(ctx.obs.members)
    if standby:
        ctx.obs = dataclasses.replace(ctx.obs, members=members)
        ctx.note("standby", standby, len(members),
                 "members in standby (a standby or warm pool) are neither capacity nor failures: left out")
    try:
        d = controls.decide(semantics, ctx)
    except (ScalebridgeError, OverflowError):
        raise   # bad input, or numbers no float survives (the caller's to report)
    except Exception as e:   # a bug in the semantics (a ZeroDivisionError too): say whose, never the request
        raise SemanticsFailure(f"semantics {semantics.name!r}{registry.provided_by('semantics', semantics.name)} "
                               f"failed: {type(e).__name__}: {e}") from e
    if standby:
        d.extra = {**(d.extra or {}), "standby_replicas": standby}
    f = ctx.obs.forecast
    if f is not None:
        mode = predictive_mode(ctx, semantics.default_predictive_mode)
        report = {"replicas": f.replicas, "source": f.source, "mode": mode,
                  "applied": mode == "ForecastAndScale" and d.cause == "forecast"}
        if f.reason:
            report["reason"] = f.reason
        d.extra = {**(d.extra or {}), "forecast": report}
    state = ctx.state
    now = ctx.now
    state.sizes.append(now, d.recommended)
    if d.desired != ctx.current:
        state.record_scale(now, ctx.current, d.desired, d.cause, d.cooldown_seconds)
    for name, horizon in semantics.retention(ctx).items():
        log = getattr(state, name, None)
        if log is not None:
            log.prune(now - horizon)
    return d


def to_response(semantics: str, current: int, d: Decision, policy: Any, state: DecisionState,
                trace: Optional[list] = None) -> dict:
    """The protocol's response for decision ``d`` on ``policy`` (its ``metrics`` follow the
    policy's, docs/protocol.md): where the decision's :class:`~scalebridge.decision.MetricResult`
    entries become JSON."""
    out = {
        "semantics": semantics,
        "current_replicas": current,
        "recommended_replicas": d.recommended,
        "desired_replicas": d.desired,
        "metrics": [m.to_dict() for m in aligned(policy.source, d.metrics)],
        "profile": d.profile,
        "reason": d.reason,
        # an error with no decision is not able to scale; a documented fallback (Azure's
        # max(current, default), reason ProfileDefault) is a decision
        "able_to_scale": d.able_to_scale and not (d.error is not None and d.reason == "InvalidMetrics"),
        "error": d.error,
    }
    if d.extra:
        out.update(d.extra)
    out["state"] = state.to_protocol()
    if trace is not None:
        out["explain"] = trace
    return out


def decide(request: Union[dict, Request], semantics: Optional[str] = None, *, explain: bool = False) -> dict:
    """One decision: a protocol request (a dict or a :class:`Request`) in, the
    response dict out. ``semantics`` overrides ``request.semantics``.

    Raises :class:`~scalebridge.errors.RequestError` for a malformed request."""
    env, policy = parse_request(request)
    name = semantics or env.semantics or policy.semantics or DEFAULT_SEMANTICS
    path = "$.policy.semantics" if not (semantics or env.semantics) and policy.semantics else "$.semantics"
    sem = resolve_semantics(name, path)
    check_policy(sem, policy)
    state = DecisionState.from_protocol(env.state)
    trace: Optional[list] = [] if explain else None
    ctx = Context(env.now, env.current_replicas, policy, env.settings, env.observations, state, trace)
    d = run(sem, ctx)
    return to_response(sem.name, env.current_replicas, d, policy, state, trace)


def builtin_semantics() -> tuple[str, ...]:
    """The semantics this distribution registers, in its entry points' order (``--semantics
    all`` in ``decide``, ``explain`` and ``validate``)."""
    return registry.current().builtin_semantics


def __getattr__(name: str) -> Any:
    if name == "BUILTIN_SEMANTICS":   # the name it had when it was a tuple written here
        return builtin_semantics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def decide_all(request: Union[dict, Request], names: Optional[tuple] = None, *, explain: bool = False) -> list[dict]:
    """One response per semantics for the same request (``--semantics all``: the built-in
    ones unless ``names`` says). A semantics that cannot run this policy answers with its
    error instead of failing the others."""
    env, policy = parse_request(request)
    out = []
    for name in names or builtin_semantics():
        try:
            out.append(decide(request, name, explain=explain))
        except Exception as e:   # noqa: BLE001 — one semantics failing must not cost the others their answer
            error = str(e) if isinstance(e, RequestError) else \
                f"the {name} semantics cannot decide this request ({type(e).__name__}: {e})"
            # no decision: the size stays, and the history the request carried is kept
            # (the protocol: the response's state is the request's state after this decision)
            out.append({"semantics": name, "current_replicas": env.current_replicas,
                        "recommended_replicas": env.current_replicas, "desired_replicas": env.current_replicas,
                        "metrics": [], "profile": None, "reason": "InvalidMetrics", "able_to_scale": False,
                        "error": error, "state": DecisionState.from_protocol(env.state).to_protocol()})
    return out
