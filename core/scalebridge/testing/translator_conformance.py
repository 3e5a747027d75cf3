"""The translator conformance suite: what a plugin author runs against their own
translator to show it keeps the :class:`scalebridge.translate.Translator` contract::

    from scalebridge.policyfile import load_policy_file
    from scalebridge.testing import check_translator

    def test_my_translator_keeps_the_contract():
        check_translator("mycloud", [load_policy_file("examples/web.yaml")], target={"group": "web"})

For the translator registered as ``name`` and each policy, it checks what ``render``,
``import`` and ``apply`` rely on, and raises one ``AssertionError`` naming the
policy and what broke, for every broken promise:

- ``render(policy, target)`` returns ``(native, Losses)`` — or raises
  :class:`~scalebridge.translate.NativeError` for a policy the format cannot hold at
  all (reported as skipped, not failed);
- ``dump(native)`` is text, and with ``import_all`` that text re-imports into ``(policy
  dict, Losses)`` pairs, each a valid policy (:func:`scalebridge.engine.load_policy` and
  its semantics' ``check``, as ``scalebridge import`` checks every policy it writes);
- for a policy rendered with no ``lost:`` line, import gives back one policy ``p'``
  whose render is the same native configuration (``render(import(render(p))) ==
  render(p)``: a fixed point), and :func:`scalebridge.decide` gives ``p`` and ``p'`` the
  same response on a few generated requests (loads below, at and above every target,
  with and without a history), under ``p``'s semantics — the imported one's when ``p``
  names none: a translation that says it loses nothing decides as the policy does;
- ``--target``: an unknown key, and a value that each key's check refuses, are a
  ``NativeError`` naming ``--target.KEY`` (:func:`scalebridge.translate.base.check_target`);
- bad native input — text that is not the format at all (:data:`BAD_INPUTS`), and each
  rendered document with each of its fields in turn replaced by each of
  :data:`WRONG_VALUES` — makes ``import_all`` raise ``NativeError`` (for the former) or
  either that or return policies (for the latter), never another exception.

``target`` is the ``--target`` given to every render (its keys checked first). The
suite is what the built-in translators are run through (tests/testing/test_translator_conformance.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

from ..errors import ScalebridgeError
from ..policy import Policy
from ..translate.base import Translator, check_target
from ..translate.common import Losses, NativeError

__all__ = ["check_translator", "check_round_trip", "TranslatorReport", "BAD_INPUTS", "WRONG_VALUES"]

NOW = 1767225600.0
#: text that is no translator's format: every import must refuse it with a NativeError
BAD_INPUTS: tuple[str, ...] = ("", "{", "[", "null", "42", '"text"', "[1, 2]", "{}", "- - -\n  :", "[" * 5000 + "]" * 5000)
#: what each field of a rendered document is replaced with, in turn
WRONG_VALUES: tuple[Any, ...] = (None, -1, 2.5, True, "not-a-value", [], {})
#: the loads of the generated requests, as fractions of each metric's target
LOADS = (Fraction(3, 10), Fraction(1), Fraction(8, 5), Fraction(5, 2))
#: a failure kind is listed this many times for one policy, then counted
MAX_LISTED = 3


@dataclass
class TranslatorReport:
    """What :func:`check_translator` checked (``passed``) and could not (``skipped``,
    with why), and how many native inputs it imported (``imports``)."""

    passed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    imports: int = 0


class _Suite:
    def __init__(self, translator: Translator, target: dict, mutations: bool = True):
        self.translator, self.target, self.with_mutations = translator, target, mutations
        self.can_import = type(translator).can("import_all")
        self.failures: list[str] = []
        self.report = TranslatorReport()

    def check(self, what: str, ok: bool, why: str) -> bool:
        if ok:
            self.report.passed.append(what)
        else:
            self.failures.append(f"{what}: {why}")
        return ok

    def render(self, label: str, policy: Policy) -> Optional[tuple[Any, Losses]]:
        """``render`` checked for its shape; None (recorded) when it could not be used."""
        try:
            out = self.translator.render(policy, dict(self.target))
        except NativeError as e:
            self.report.skipped.append(f"{label}: render refuses it ({e})")
            return None
        except Exception as e:   # a translator's bug: what the suite reports
            self.failures.append(f"{label}: render raised {type(e).__name__}: {e}")
            return None
        if not self.check(f"{label}: render returns (native, Losses)",
                          isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Losses),
                          f"got {type(out).__name__} {_short(out)}"):
            return None
        return out

    def imported(self, label: str, text: str, what: str) -> Optional[list[tuple[dict, Losses]]]:
        """``import_all(text)`` checked for its shape and its policies' validity."""
        self.report.imports += 1
        try:
            out = self.translator.import_all(text)
        except NativeError as e:
            self.failures.append(f"{label}: {what} does not import: {e}")
            return None
        except Exception as e:
            self.failures.append(f"{label}: import of {what} raised {type(e).__name__}: {e}")
            return None
        if not self.check(f"{label}: import_all returns [(policy dict, Losses)]", _pairs(out),
                          f"got {_short(out)}"):
            return None
        for k, (policy, _) in enumerate(out):
            why = _invalid(policy)
            self.check(f"{label}: imported policy {k} is valid", why is None,
                       f"import of {what} gave a policy `validate` refuses: {why}")
        return out

    def policy(self, label: str, policy: Policy, raw: Any) -> None:
        rendered = self.render(label, policy)
        if rendered is None:
            return
        native, losses = rendered
        try:
            text = self.translator.dump(native)
        except Exception as e:
            self.failures.append(f"{label}: dump raised {type(e).__name__}: {e}")
            return
        if not self.check(f"{label}: dump is text", isinstance(text, str), f"got {type(text).__name__}"):
            return
        if not self.can_import:
            self.report.skipped.append(f"{label}: import (the translator renders only)")
            return
        out = self.imported(label, text, "the rendered document")
        if out is None:
            return
        if self.with_mutations:
            self.mutations(label, text)
        if losses.lines:
            self.report.skipped.append(f"{label}: fixed point and decisions (render loses {len(losses.lines)} "
                                       "feature(s))")
            return
        if not self.check(f"{label}: a lossless render imports as one policy", len(out) == 1,
                          f"it imports as {len(out)} policies"):
            return
        back = out[0][0]
        if _invalid(back) is not None:
            return   # already reported
        from ..engine import load_policy
        again = self.render(f"{label}: render(import(render(policy)))", load_policy(back))
        if again is None:
            return
        self.check(f"{label}: render(import(render(policy))) == render(policy)", again[0] == native,
                   "the round trip changes the native configuration: " + "; ".join(_differences(native, again[0])))
        self.decisions(label, policy, raw, back)

    def decisions(self, label: str, policy: Policy, raw: Any, back: dict) -> None:
        """``decide`` gives ``policy`` and its round trip the same response."""
        from ..engine import decide
        semantics = policy.semantics or back.get("semantics") or "scalebridge"
        # the observations the policy reads, by its own names: a round trip that renames a metric
        # (a neutral `cpu` read back as a provider's `CPUUtilization`) reads none of them
        names = _scales(policy)
        compared = 0
        for request in _requests(names):
            try:
                want = decide({**request, "policy": raw}, semantics)
            except ScalebridgeError as e:
                self.report.skipped.append(f"{label}: decisions ({semantics} cannot decide the policy: {e})")
                return
            try:
                got = decide({**request, "policy": back}, semantics)
            except Exception as e:
                self.failures.append(f"{label}: its round trip cannot be decided under {semantics}: "
                                     f"{type(e).__name__}: {e}")
                return
            if not self.check(f"{label}: the round trip decides as the policy", _same(want, got),
                              f"under {semantics}, {_situation(request)}: the policy gives "
                              f"{_decision(want)}, its round trip {_decision(got)} ("
                              + "; ".join(_differences(want, got)) + ")"):
                return
            compared += 1
        self.report.passed.append(f"{label}: {compared} decisions the same under {semantics}")

    def mutations(self, label: str, text: str) -> None:
        """The rendered document with each field replaced by each wrong value: NativeError
        or policies, never another exception."""
        documents, write = _parse(text)
        if documents is None:
            self.report.skipped.append(f"{label}: bad input (the dump is neither JSON nor YAML)")
            return
        broken: dict[str, list[str]] = {}
        for at, changed in _mutated(documents):
            self.report.imports += 1
            try:
                out = self.translator.import_all(write(changed))
            except NativeError:
                continue
            except Exception as e:
                broken.setdefault(type(e).__name__, []).append(f"{at}: {type(e).__name__}: {e}")
                continue
            if not _pairs(out):
                broken.setdefault("shape", []).append(f"{at}: returned {_short(out)}")
        for kind, lines in broken.items():
            more = f" (and {len(lines) - MAX_LISTED} more)" if len(lines) > MAX_LISTED else ""
            self.failures.append(f"{label}: bad native input: the rendered document with " +
                                 "; ".join(lines[:MAX_LISTED]) + more + " (only NativeError may escape import)")
        if not broken:
            self.report.passed.append(f"{label}: bad native input is refused with NativeError")

    def bad_inputs(self) -> None:
        if not self.can_import:
            return
        for text in BAD_INPUTS:
            shown = _short(text)
            self.report.imports += 1
            try:
                out = self.translator.import_all(text)
            except NativeError:
                self.report.passed.append(f"import refuses {shown}")
            except Exception as e:
                self.failures.append(f"import of {shown} raised {type(e).__name__}: {e} (only NativeError may "
                                     "escape import)")
            else:
                self.failures.append(f"import of {shown} returned {_short(out)} (it is no native configuration: "
                                     "a NativeError)")

    def targets(self) -> None:
        keys = self.translator.target_keys
        self.refused("--target: an unknown key", {"no_such_key_": "x"}, "--target.no_such_key_")
        for key, spec in keys.items():
            if spec.check is None:
                self.report.skipped.append(f"--target.{key}: no check, every value is taken")
                continue
            self.refused(f"--target.{key}: a bad value", {key: {"no": "such value"}}, f"--target.{key}")

    def refused(self, what: str, ref: dict, where: str) -> None:
        try:
            check_target(self.translator, ref)
        except NativeError as e:
            self.check(what, e.where == where, f"refused naming {e.where!r}, not {where!r}")
        except Exception as e:
            self.failures.append(f"{what}: raised {type(e).__name__}: {e}, not a NativeError naming {where}")
        else:
            self.failures.append(f"{what}: {_short(ref)} is accepted")


def check_translator(name: str, policies: Union[Iterable[Union[Policy, dict]], Mapping[str, Union[Policy, dict]]],
                     target: Optional[Mapping[str, Any]] = None) -> TranslatorReport:
    """Check the translator registered as ``name`` on ``policies`` (a list, or a mapping
    of a label to each), rendering with ``target`` as ``--target`` (see
    :mod:`scalebridge.testing.translator_conformance`). Raises ``AssertionError`` listing
    every failure, each naming its policy; returns the report otherwise. A policy that
    is not valid is the caller's error (``ValueError``)."""
    from .. import registry
    from ..engine import load_policy
    try:
        translator = registry.translator(name).obj
    except ScalebridgeError as e:
        raise AssertionError(f"no translator {name!r} to check: {e}") from None
    suite = _Suite(translator, check_target(translator, target))
    suite.targets()
    suite.bad_inputs()
    items = policies.items() if isinstance(policies, Mapping) else \
        ((f"policies[{i}]" + (f" ({_name(p)})" if _name(p) else ""), p) for i, p in enumerate(policies))
    for label, raw in items:
        try:
            policy = load_policy(raw)
        except ScalebridgeError as e:
            raise ValueError(f"check_translator: {label} is not a valid policy: {e}") from None
        suite.policy(label, policy, raw if isinstance(raw, dict) else policy.model_dump(exclude_none=True))
    if suite.failures:
        raise AssertionError(f"the {name!r} translator ({type(translator).__name__}) breaks the translator "
                             "contract:\n  " + "\n  ".join(suite.failures))
    return suite.report


def check_round_trip(name: str, policies: Union[Iterable[Union[Policy, dict]], Mapping[str, Union[Policy, dict]]],
                     target: Optional[Mapping[str, Any]] = None) -> TranslatorReport:
    """The round-trip part of :func:`check_translator` alone — render, import, a lossless
    render a fixed point that decides as the policy — for many policies (a property test's):
    no ``--target`` refusals, no bad native input. Raises ``AssertionError`` listing every
    failure, each naming its policy."""
    from .. import registry
    from ..engine import load_policy
    try:
        translator = registry.translator(name).obj
    except ScalebridgeError as e:
        raise AssertionError(f"no translator {name!r} to check: {e}") from None
    suite = _Suite(translator, check_target(translator, target), mutations=False)
    items = policies.items() if isinstance(policies, Mapping) else \
        ((f"policies[{i}]" + (f" ({_name(p)})" if _name(p) else ""), p) for i, p in enumerate(policies))
    for label, raw in items:
        policy = load_policy(raw)
        suite.policy(label, policy, raw if isinstance(raw, dict) else policy.model_dump(exclude_none=True))
    if suite.failures:
        raise AssertionError(f"the {name!r} translator ({type(translator).__name__}) breaks the round trip:\n  "
                             + "\n  ".join(suite.failures))
    return suite.report


# ----------------------------------------------------------------------------- helpers


def _name(p: Union[Policy, dict]) -> Optional[str]:
    return p.get("name") if isinstance(p, dict) else p.name


def _pairs(out: Any) -> bool:
    return isinstance(out, list) and all(isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], dict) and
                                         isinstance(x[1], Losses) for x in out)


def _invalid(policy: dict) -> Optional[str]:
    """Why ``scalebridge validate --semantics`` (the policy's own) would refuse ``policy``."""
    from ..engine import load_policy, resolve_semantics
    try:
        resolve_semantics(policy.get("semantics"), path="$.semantics").check(load_policy(policy))
    except ScalebridgeError as e:
        return str(e)
    return None


def _short(v: Any, limit: int = 120) -> str:
    s = json.dumps(v, default=repr) if not isinstance(v, str) else repr(v)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _flat(obj: Any, at: str = "$") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flat(v, f"{at}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _flat(v, f"{at}[{i}]")
    else:
        yield at, obj


def _differences(a: Any, b: Any) -> list[str]:
    """The first few paths where ``a`` and ``b`` differ, each with both values."""
    fa, fb = dict(_flat(a)), dict(_flat(b))
    out = [f"{k}: {_short(fa.get(k, '(absent)'))} -> {_short(fb.get(k, '(absent)'))}"
           for k in list(fa) + [k for k in fb if k not in fa] if fa.get(k, ...) != fb.get(k, ...)]
    return out[:MAX_LISTED] + ([f"and {len(out) - MAX_LISTED} more"] if len(out) > MAX_LISTED else [])


def _parse(text: str) -> tuple[Optional[list], Any]:
    """The documents of a dump (a JSON one, or a YAML stream) and how to write them back."""
    try:
        return [json.loads(text)], lambda docs: json.dumps(docs[0])
    except ValueError:
        pass
    import yaml
    try:
        return list(yaml.safe_load_all(text)), lambda docs: yaml.safe_dump_all(docs, sort_keys=False)
    except yaml.YAMLError:
        return None, None


def _paths(obj: Any, at: tuple = ()) -> Iterator[tuple]:
    yield at
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, at + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, at + (i,))


def _mutated(documents: list) -> Iterator[tuple[str, list]]:
    """Every document with one of its fields (an object or a list too) replaced by each
    of :data:`WRONG_VALUES`, with the path replaced."""
    import copy
    for d, doc in enumerate(documents):
        for at in _paths(doc):
            if not at:
                continue
            for wrong in WRONG_VALUES:
                docs = copy.deepcopy(documents)
                holder = docs[d]
                for part in at[:-1]:
                    holder = holder[part]
                holder[at[-1]] = wrong
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in at)
                yield f"{'$' if len(documents) == 1 else f'document {d}'}{where} = {_short(wrong)}", docs


def _scales(policy: Policy) -> dict[str, float]:
    """Each metric name the policy reads, with the value that is 100 % of its target: a
    Utilization target as a fraction of a request of 1, an AverageValue or Value target
    as it is, a rule's largest threshold."""
    from ..units import exact
    out: dict[str, float] = {}
    for m in policy.metrics or []:
        t = m.target
        if t.type == "Utilization":
            out[m.name] = float(t.average_utilization if t.average_utilization is not None else 60) / 100
        else:
            out[m.name] = float(exact(t.average_value if t.type == "AverageValue" else t.value))
    rules = list(policy.rules) + [r for p in policy.profiles for r in p.rules]
    for r in rules:
        out[r.metric] = max(out.get(r.metric, 0.0), abs(float(r.threshold)) or 1.0)
    return out


def _requests(scales: Mapping[str, float]) -> Iterator[dict]:
    """The generated requests: 2 and 5 members, each of :data:`LOADS` of every metric's
    target, without a history and with a recent recommendation of 8."""
    for current in (2, 5):
        for load in LOADS:
            for state in (None, {"recommendations": [{"time": NOW - 120, "replicas": 8}],
                                 "sizes": [{"time": NOW - 120, "replicas": 8}]}):
                members = [{"name": f"m-{i}", "phase": "Running", "ready": True, "start_time": NOW - 7200,
                            "ready_transition_time": NOW - 7100, "requests": {"cpu": 1, "memory": 1}}
                           for i in range(current)]
                metrics = {}
                for name, scale in scales.items():
                    v = float(scale * load)
                    metrics[name] = {"members": {m["name"]: v for m in members}, "timestamp": NOW - 15, "window": 60,
                                     "value": v, "values": [v], "series": [[NOW - 60 * k, v] for k in range(16, -1, -1)],
                                     "member_series": {m["name"]: [[NOW - 60 * k, v] for k in range(16, -1, -1)]
                                                       for m in members}}
                request = {"now": NOW, "current_replicas": current,
                           "observations": {"status_replicas": current, "members": members, "metrics": metrics}}
                if state is not None:
                    request["state"] = state
                yield request


def _situation(request: dict) -> str:
    loads = {n: m["value"] for n, m in request["observations"]["metrics"].items()}
    return (f"{request['current_replicas']} members, metrics {_short(loads, 80)}, "
            f"{'a recommendation of 8 two minutes ago' if 'state' in request else 'no history'}")


def _decision(r: dict) -> str:
    return f"{r['desired_replicas']} ({r['reason']}{', ' + r['error'] if r.get('error') else ''})"


def _same(a: dict, b: dict) -> bool:
    """The same response, the metrics' names included; their order aside (a format that
    holds each kind of signal in a field of its own, as GCE's, reads them back in its
    order, which decides nothing)."""
    def metrics(r: dict) -> list:
        return sorted(json.dumps(m, sort_keys=True, default=str) for m in r.get("metrics") or [])
    return {**a, "metrics": None} == {**b, "metrics": None} and metrics(a) == metrics(b)
