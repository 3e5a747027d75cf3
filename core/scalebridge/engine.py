"""``decide(request) -> response``: the protocol's one function, and :class:`Decider`
for callers that make many decisions for one target (controller, simulator).

Pure: no clock, no I/O. The engine parses and validates the request, runs the
selected semantics, then applies what the protocol prescribes for every semantics
alike (docs/architecture.md) — ``mode``, the ``sizes`` log, the scale event and ``last_scale``, and
pruning history no window needs.
"""
from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from functools import partial
from typing import Any, Optional, Union

from pydantic import ValidationError
from pydantic_core import to_json

from . import registry
from .errors import (RequestError, ScalebridgeError, SemanticsFailure, _type_name, json_path, normalize_errors,
                     short_repr)
from .policy import Policy
from .protocol import Observations, Request, Settings, check_json_value
from .decision import Context, Decision, MetricResult
from .controls import controls_of, decide as apply_controls
from .semantics.base import Semantics
from .stages.impossible import refuse_impossible
from .stages.signals import predictive_mode
from .state import DecisionState

DEFAULT_SEMANTICS = "scalebridge"
BUILTIN_SEMANTICS = ("kubernetes", "gce", "azure", "aws", "scalebridge")



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


class _Envelope(Request):
    """A request whose policy is validated (and cached) separately."""
    policy: Optional[dict] = None  # type: ignore[assignment]


_POLICIES: "OrderedDict[str, Policy]" = OrderedDict()
_POLICY_CACHE_SIZE = 256


def load_policy(raw: Union[Policy, dict, None], path: tuple = ("policy",)) -> Policy:
    """A validated :class:`Policy`, cached by content: a stream of requests
    sharing one policy validates it once."""
    if isinstance(raw, Policy):
        return raw
    if raw is None:
        raw = {}
    try:
        key = to_json(raw, fallback=str)
    except ValueError:   # too deep, or not Unicode text: say where
        check_json_value(raw, path)
        raise
    p = _POLICIES.get(key)
    if p is not None:
        _POLICIES.move_to_end(key)
        return p
    try:
        p = Policy.model_validate(raw)
    except ValidationError as e:
        raise RequestError(*describe_validation_error(e, path)) from None
    _POLICIES[key] = p
    if len(_POLICIES) > _POLICY_CACHE_SIZE:
        _POLICIES.popitem(last=False)
    return p


def parse_request(request: Union[dict, Request]) -> tuple[_Envelope, Policy]:
    if isinstance(request, Request):
        return request, request.policy  # type: ignore[return-value]
    if not isinstance(request, dict):
        raise RequestError("$", f"a request must be a JSON object, got {_type_name(request)}")
    try:
        env = _Envelope.model_validate(request)
    except ValidationError as e:
        check_json_value(request)   # too deep (for what follows) or not Unicode text: say where
        # the protocol: "`null` and a missing key mean the same thing" — the
        # models a request holds many of do not drop null keys themselves (that would
        # cost every well-formed request a Python call per member); do it here, once
        cleaned = _without_nulls(request)
        if cleaned is request:
            raise RequestError(*describe_validation_error(e)) from None
        try:
            env = _Envelope.model_validate(cleaned)
        except ValidationError as e2:
            raise RequestError(*describe_validation_error(e2)) from None
    return env, load_policy(env.policy)


def _without_nulls(x: Any) -> Any:
    """``x`` with every null-valued object key removed, at any depth (``x`` itself
    when it has none). List items are kept: a null there is a value (a series gap)."""
    if type(x) is dict:
        out = {k: _without_nulls(v) for k, v in x.items() if v is not None}
        if len(out) == len(x) and all(out[k] is x[k] for k in out):
            return x
        return out
    if type(x) is list:
        out = [_without_nulls(v) for v in x]
        if all(a is b for a, b in zip(out, x)):
            return x
        return out
    return x


def resolve_semantics(name: Optional[str], path: str = "$.semantics") -> Semantics:
    try:
        return registry.semantics(name or DEFAULT_SEMANTICS)
    except ScalebridgeError as e:
        raise RequestError(path, str(e)) from None


def _disabled_entry(name: str) -> dict:
    return MetricResult(name, error="disabled").to_dict()


def align_metrics(policy: Policy, metrics: list) -> list:
    """The protocol (response): "`metrics[i]` follows `policy.metrics[i]` for target
    metrics, then the rules in force". A semantics that leaves disabled metrics
    out of its list gets an entry (error "disabled") in their place, so that the
    index still names the policy's metric."""
    specs = policy.metrics
    if not specs or all(m.enabled for m in specs) or not metrics:
        return metrics
    enabled = [m.name for m in specs if m.enabled]
    # target-metric entries come first; rule entries carry "triggered"
    n = 0
    while n < len(metrics) and isinstance(metrics[n], dict) and "triggered" not in metrics[n]:
        n += 1
    names = [m.get("name") for m in metrics[:n]]
    if not enabled or names != enabled:
        return metrics   # already aligned, or no target-metric entries (a proposal, rules only)
    rest = iter(metrics)
    out = [next(rest) if m.enabled else _disabled_entry(m.name) for m in specs]
    out.extend(rest)
    return out


class Decider:
    """Decisions for one target, carrying state from one to the next.

    ``Decider(policy, "gce").step(now, current, observations)`` is what the
    simulator and controller call every sync period; it runs exactly the
    pipeline :func:`decide` runs, without re-validating the policy or
    re-serializing history."""

    __slots__ = ("policy", "semantics", "settings", "state", "steps")

    def __init__(self, policy: Union[Policy, dict], semantics: Optional[str] = None,
                 settings: Union[Settings, dict, None] = None, state: Union[DecisionState, dict, None] = None):
        self.policy = load_policy(policy)
        self.semantics = resolve_semantics(semantics or self.policy.semantics)
        self.semantics.check(self.policy)
        self.settings = settings if isinstance(settings, Settings) else Settings.model_validate(settings or {})
        if isinstance(state, dict):          # a protocol response's `state`, as decide() takes it
            from .protocol import StateModel
            state = DecisionState.from_protocol(StateModel.model_validate(state))
        self.state = state if state is not None else DecisionState()
        self.steps = 0

    def step(self, now: float, current: int, observations: Union[Observations, dict],
             trace: Optional[list] = None, *, checked: bool = False) -> Decision:
        """One decision at ``now`` for a target of ``current`` replicas (the protocol's
        ``now`` and ``current_replicas``) on ``observations`` (an :class:`Observations`
        or the protocol's ``observations`` dict), with the policy, semantics and
        settings this Decider was made with, and the history it carries: the decision
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
        # the protocol's JSON shape, as decide() takes it (the type first: isinstance of a
        # model that is no dict reads its __class__, a model's slow attribute read)
        if type(observations) is not Observations and isinstance(observations, dict):
            observations = Observations.model_validate(observations)
        d = run(self.semantics, Context(now, current, self.policy, self.settings, observations, self.state, trace),
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
        aligned = dataclasses.replace(d, metrics=align_metrics(self.policy, d.metrics), respond=None)
        return to_response(self.semantics.name, current, aligned, self.state, trace)


def _any_failed(metrics: dict) -> bool:
    """Whether an observation says its metric failed to be read (``error``)."""
    for o in metrics.values():
        if o.error is not None:
            return True
    return False


def run(semantics: Semantics, ctx: Context, checked: bool = False) -> Decision:
    """The semantics (with the policy's neutral controls, :mod:`.controls`), then what
    the protocol prescribes for all semantics. An impossible observation (a negative
    reading of a metric that cannot be negative, :mod:`.stages.impossible`) is a failed
    metric under every semantics; ``checked``: the caller knows there is none (it
    built every reading from values it checked: a scan of every member and series
    point a decision, a quarter of a replay's time, saved)."""
    if not checked:
        metrics = refuse_impossible(ctx.policy, ctx.obs.metrics)
        if metrics is not ctx.obs.metrics:   # a negative reading of a ratio target: a failed metric
            ctx.obs = ctx.obs.model_copy(update={"metrics": metrics})
    try:
        if controls_of(ctx.policy) is None and not _any_failed(ctx.obs.metrics):
            d = semantics.decide(ctx)
        else:
            d = apply_controls(semantics, ctx, align_metrics)
    except (ScalebridgeError, OverflowError):
        raise   # bad input, or numbers no float survives (the caller's to report)
    except Exception as e:   # a bug in the semantics (a ZeroDivisionError too): say whose, never the request
        raise SemanticsFailure(f"semantics {semantics.name!r}{_provided_by(semantics.name)} failed: "
                               f"{type(e).__name__}: {e}") from e
    mode = ctx.policy.mode
    current = ctx.current
    if mode == "OFF" and d.desired != current:
        ctx.note("mode", d.desired, current, "mode OFF: the recommendation is reported, not applied")
        d.desired, d.reason = current, "ScalingDisabled"
    elif mode == "ONLY_SCALE_OUT" and d.desired < current:
        ctx.note("mode", d.desired, current, "mode ONLY_SCALE_OUT: no scale-in")
        d.desired, d.reason = current, "ScalingDisabled"
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
    if d.desired != current:
        state.record_scale(now, current, d.desired, d.cause, d.cooldown_seconds)
    for name, horizon in semantics.retention(ctx).items():
        log = getattr(state, name, None)
        if log is not None:
            log.prune(now - horizon)
    return d


def to_response(semantics: str, current: int, d: Decision, state: DecisionState,
                trace: Optional[list] = None) -> dict:
    out = {
        "semantics": semantics,
        "current_replicas": current,
        "recommended_replicas": d.recommended,
        "desired_replicas": d.desired,
        "metrics": [m.to_dict() if hasattr(m, "to_dict") else m for m in d.metrics],
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


_CHECKED = ("engine", "checked by")   # policy.compiled() key: the semantics this policy passed the check of


def check_policy(sem: Semantics, policy: Policy) -> None:
    """``sem.check(policy)``, once per policy and semantics: a check is of the policy
    alone (the contract of :meth:`Semantics.check`), and a validated policy is not
    changed (what every semantics caches in ``policy.compiled()`` relies on too).
    A check that raises is not recorded: every decision on that policy raises."""
    cache = policy.__pydantic_private__["_compiled"]   # policy.compiled(), uncalled (see it)
    passed = cache.get(_CHECKED)
    if passed is None:
        passed = cache[_CHECKED] = set()
    if sem not in passed:
        sem.check(policy)
        passed.add(sem)


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
    d.metrics = align_metrics(policy, d.metrics)
    return to_response(sem.name, env.current_replicas, d, state, trace)


def decide_all(request: Union[dict, Request], names: tuple = BUILTIN_SEMANTICS, *, explain: bool = False) -> list[dict]:
    """One response per semantics for the same request (``--semantics all``).
    A semantics that cannot run this policy answers with its error instead of
    failing the others."""
    env, policy = parse_request(request)
    out = []
    for name in names:
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
