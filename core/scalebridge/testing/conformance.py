"""The provider conformance suite: what a plugin author runs against their own
provider to show it keeps the :mod:`scalebridge.providers` contract::

    from scalebridge.testing import check_provider

    def test_my_provider_keeps_the_contract(my_server):
        provider = MyProvider(endpoint=my_server.url)
        check_provider(provider, {"group": "web"},
                       provoke=lambda target, call, kind: my_server.fail_next(call, kind))

A provider with no server to ask for a fault (one keeping sizes in a file, an
in-process one) gets the same checks through :class:`FailNext`, built in its
test — its production class carries no fault injection::

    provoke = FailNext({"observe": "store.read", "set_size": "store.write"},
                       {ErrorKind.NOT_FOUND: lambda: FileNotFoundError(2, "gone", "sizes.json"),
                        ErrorKind.FORBIDDEN: lambda: PermissionError(13, "denied", "sizes.json")})
    check_provider(FileProvider(path=tmp_path / "sizes.json"), {"name": "web"}, provoke=provoke,
                   fault_kinds=provoke.kinds)

It drives one real target through what ``scalebridge run`` does with it and
checks, raising one ``AssertionError`` that lists every broken promise:

- the provider declares itself: ``name``, ``semantics``, ``capabilities`` (of
  :class:`~scalebridge.providers.Capability`), ``pacing`` (positive rates), and the
  ``ref_keys`` the ref gives; with ``Capability.TRANSLATE``, a translator registered
  for it (``provider`` its name) that implements ``apply``;
- ``observe`` returns an :class:`~scalebridge.providers.Observation` whose members
  are valid protocol members and whose ``in_flight`` is a string or None; an
  operation in flight settles within ``max_observes`` observes;
- ``set_size`` to the current size changes nothing (idempotence); to another size,
  the size reads back (the ``SizeChange.size``: the provider may clamp it, and then
  says so in ``note``); setting it twice changes nothing more — the members settle
  at the size, not at twice the change (an absolute size, never a delta); a
  ``SizeChange`` that says it is not in flight is not reported in flight by the next
  observe;
- ``read_metrics`` returns protocol metric observations for the queries it was
  asked, only with ``Capability.METRICS`` (without it, nothing);
- every failure the ``provoke(target, call, kind)`` hook arranges (the next
  ``call`` — ``observe``, ``read_metrics``, ``set_size`` — to fail as the cloud
  fails for ``kind``; the hook returns False for a kind it cannot provoke, or a
  callable the suite calls once that call is over, to undo what it arranged) comes
  out as a :class:`~scalebridge.providers.ProviderError` of that kind, never an
  SDK's exception, and ``retry_after`` is None or a non-negative number;
- a ref lacking a required key (each of ``ref_keys``) and each of ``bad_refs``
  raises :class:`~scalebridge.providers.RefError` naming a key.

The target ends at the size it started with. ``now`` is where the suite's clock
starts (the target's ``start_time``, else the wall clock); each observe advances
it by ``period`` seconds. The contract the suite checks is the one the built-in
providers keep: a GCE resize is DONE when scheduled and the MIG settles later
(https://cloud.google.com/compute/docs/instance-groups/creating-groups-of-managed-instances#monitoring_groups),
an ASG's ``SetDesiredCapacity`` is absolute
(https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_SetDesiredCapacity.html).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from pydantic import ValidationError

from ..providers import (Capability, ErrorKind, MetricQuery, Observation, Pacing, Provider, ProviderError,
                         RefError, SizeChange, Target)

__all__ = ["check_provider", "ConformanceReport", "DEFAULT_POLICY", "DEFAULT_QUERIES", "FAULT_CALLS", "FailNext"]

#: a policy with one CPU utilization metric, handed to ``Target.use_policy`` first
DEFAULT_POLICY: dict = {"min_replicas": 1, "max_replicas": 20,
                        "metrics": [{"type": "resource", "name": "cpu",
                                     "target": {"type": "Utilization", "average_utilization": 60}}]}
DEFAULT_QUERIES = (MetricQuery("cpu", "resource", DEFAULT_POLICY["metrics"][0], 300.0, 60.0,
                               frozenset({"members", "value", "series"})),)
FAULT_CALLS = ("observe", "read_metrics", "set_size")
FAULT_KINDS = (ErrorKind.THROTTLED, ErrorKind.TRANSIENT, ErrorKind.CONFLICT, ErrorKind.NOT_FOUND,
               ErrorKind.FORBIDDEN)

Provoke = Callable[[Target, str, ErrorKind], "Optional[bool] | Callable[[], None]"]


class FailNext:
    """The suite's ``provoke`` hook for a provider without a server that can fail on
    request: fault injection that lives in the provider's *test*, not in its
    production class.

    ``seams`` maps each call the suite provokes (``observe``, ``read_metrics``,
    ``set_size``) to the attribute through which that call reaches what the provider
    talks to — its file store, its client, its socket — as a dotted path from the
    target (``"store.read"``, ``"_client.get"``), or a function ``target -> (owner,
    attribute name)``. ``errors`` maps each :class:`ErrorKind` the test can provoke
    to a function making the exception that backend raises for it
    (``FileNotFoundError``, ``PermissionError``, the SDK's own error). Asked for
    ``(call, kind)``, it replaces that attribute *on the instance* so that its next
    use raises the exception once, inside the provider, which must turn it into a
    :class:`~scalebridge.providers.ProviderError` of ``kind``; it returns the undo
    the suite calls once the call is over (whether or not the seam was used). A call
    or kind it has no entry for is answered False: the suite reports it skipped.
    ``provoked`` lists the ``(call, kind, exception)`` raised."""

    def __init__(self, seams: Mapping[str, "str | Callable[[Target], tuple[Any, str]]"],
                 errors: Mapping["ErrorKind | str", Callable[[], BaseException]]):
        unknown = set(seams) - set(FAULT_CALLS)
        if unknown:
            raise ValueError(f"FailNext: no such call {sorted(unknown)} (the calls are {', '.join(FAULT_CALLS)})")
        self.seams = dict(seams)
        self.errors = {ErrorKind(k): v for k, v in errors.items()}
        self.provoked: list[tuple[str, str, BaseException]] = []

    @property
    def kinds(self) -> tuple[ErrorKind, ...]:
        """The kinds it can provoke, for ``check_provider(..., fault_kinds=...)``."""
        return tuple(k for k in FAULT_KINDS if k in self.errors) + \
            tuple(k for k in self.errors if k not in FAULT_KINDS)

    def _owner(self, target: Target, call: str) -> tuple[Any, str]:
        seam = self.seams[call]
        if callable(seam):
            return seam(target)
        *path, attr = seam.split(".")
        owner: Any = target
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, attr):
            raise AttributeError(f"FailNext: {type(target).__name__} has no {seam!r} (the seam of {call})")
        return owner, attr

    def __call__(self, target: Target, call: str, kind: ErrorKind) -> "bool | Callable[[], None]":
        kind = ErrorKind(kind)
        if call not in self.seams or kind not in self.errors:
            return False
        owner, attr = self._owner(target, call)
        attrs = getattr(owner, "__dict__", {})   # an SDK client's own attributes, not its class's
        own = attr in attrs
        saved = attrs.get(attr)
        state = {"armed": True}

        def undo() -> None:
            if state["armed"]:
                state["armed"] = False
                if own:
                    setattr(owner, attr, saved)
                else:
                    delattr(owner, attr)

        def failing(*args: Any, **kwargs: Any) -> Any:
            undo()
            error = self.errors[kind]()
            self.provoked.append((call, kind.value, error))
            raise error

        setattr(owner, attr, failing)
        return undo


@dataclass
class ConformanceReport:
    """What :func:`check_provider` checked (``passed``), what it could not
    (``skipped``, with why), and the faults it provoked (``(call, kind)``)."""

    passed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    provoked: list[tuple[str, str]] = field(default_factory=list)


class _Suite:
    def __init__(self, provider: Provider, ref: Mapping[str, Any], now: Optional[float], period: float,
                 max_observes: int, settle_wait: float):
        self.provider, self.ref = provider, ref
        self.now = now
        self.period, self.max_observes, self.settle_wait = period, max_observes, settle_wait
        self.failures: list[str] = []
        self.report = ConformanceReport()

    def check(self, name: str, ok: bool, why: str) -> bool:
        if ok:
            self.report.passed.append(name)
        else:
            self.failures.append(f"{name}: {why}")
        return ok

    def tick(self) -> float:
        assert self.now is not None
        self.now += self.period
        return self.now

    def call(self, name: str, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run one provider call; anything but a result is a failure of ``name``."""
        try:
            return True, fn()
        except ProviderError as e:
            self.failures.append(f"{name}: {type(e).__name__} {e}")
        except Exception as e:   # an SDK exception crossing the contract is what the suite reports
            self.failures.append(f"{name}: raised {type(e).__module__}.{type(e).__name__}: {e} "
                                 "(a provider raises only ProviderError)")
        return False, None

    # -- checks

    def declared(self) -> None:
        p = self.provider
        self.check("provider.name", isinstance(p.name, str) and bool(p.name), f"name is {p.name!r}")
        self.check("provider.semantics", isinstance(p.semantics, str) and bool(p.semantics),
                   f"semantics is {p.semantics!r}")
        caps = p.capabilities
        self.check("provider.capabilities", isinstance(caps, frozenset) and all(isinstance(c, Capability) for c in caps),
                   f"capabilities must be a frozenset of Capability, got {caps!r}")
        pacing = p.pacing
        self.check("provider.pacing", isinstance(pacing, Pacing) and pacing.writes_per_second > 0 and
                   pacing.reads_per_second > 0 and pacing.write_burst >= 1 and pacing.read_burst >= 1,
                   f"pacing must be a Pacing with positive rates and bursts, got {pacing!r}")
        if Capability.TRANSLATE in (caps if isinstance(caps, frozenset) else ()):
            from .. import registry
            from ..translate import Translator
            entry = registry.translator_for_provider(p.name)
            self.check("capabilities: TRANSLATE", entry is not None and isinstance(entry.obj, Translator)
                       and type(entry.obj).can("apply"),
                       f"the provider declares Capability.TRANSLATE but no translator registered with provider = "
                       f"{p.name!r} implements apply (scalebridge_register_translators)")
        missing = set(p.ref_keys) - set(self.ref)
        self.check("provider.ref_keys", not missing, f"the ref lacks required keys {sorted(missing)}")

    def observation(self, name: str, target: Target) -> Optional[Observation]:
        ok, obs = self.call(name, lambda: target.observe(self.tick()))
        if not ok:
            return None
        if not isinstance(obs, Observation):
            self.failures.append(f"{name}: observe returned {type(obs).__name__}, not an Observation")
            return None
        problems = []
        if isinstance(obs.current_replicas, bool) or not isinstance(obs.current_replicas, int) or \
                obs.current_replicas < 0:
            problems.append(f"current_replicas {obs.current_replicas!r} is not a non-negative integer")
        if obs.status_replicas is not None and (not isinstance(obs.status_replicas, (int, float)) or
                                                obs.status_replicas < 0):
            problems.append(f"status_replicas {obs.status_replicas!r} is not a non-negative number")
        if obs.in_flight is not None and not isinstance(obs.in_flight, str):
            problems.append(f"in_flight {obs.in_flight!r} is neither a string nor None")
        if obs.members is not None:
            from ..protocol import MEMBER
            for i, m in enumerate(obs.members):
                try:
                    MEMBER.validate_python(_fields(m))
                except (ValidationError, AttributeError, TypeError) as e:
                    problems.append(f"members[{i}] is not a protocol member ({str(e).splitlines()[0]})")
                    break
        return obs if self.check(name, not problems, "; ".join(problems)) else None

    def settled(self, name: str, target: Target) -> Optional[Observation]:
        for _ in range(self.max_observes):
            obs = self.observation(f"{name}: observe", target)
            if obs is None or obs.in_flight is None:
                return obs
            if self.settle_wait:
                time.sleep(self.settle_wait)
        self.failures.append(f"{name}: still in flight after {self.max_observes} observes")
        return None

    def resize(self, name: str, target: Target, size: int) -> Optional[SizeChange]:
        ok, change = self.call(f"{name}: set_size({size})", lambda: target.set_size(size))
        if not ok:
            return None
        if not self.check(f"{name}: set_size({size}) result", isinstance(change, SizeChange) and
                          isinstance(change.size, int) and not isinstance(change.size, bool) and change.size >= 0,
                          f"set_size returned {change!r}, not a SizeChange with a non-negative size"):
            return None
        if change.size != size:
            self.check(f"{name}: a clamped size says why", bool(change.note),
                       f"asked {size}, got {change.size} and no note")
        return change

    def resized(self, name: str, target: Target, size: int) -> Optional[Observation]:
        """``set_size(size)``, then observe until nothing is in flight: the settled
        observation, or None (the failure recorded)."""
        if self.resize(name, target, size) is None:
            return None
        return self.settled(name, target)

    def sizes(self, target: Target, start: Observation) -> None:
        cur = start.current_replicas
        obs = self.resized("idempotence", target, cur)
        if obs is None:
            return
        self.check("idempotence: the current size again changes nothing", obs.current_replicas == cur,
                   f"set_size({cur}) on a target of {cur} left it at {obs.current_replicas}")
        hi = start.max_size if start.max_size is not None else math.inf
        new = cur + 1 if cur + 1 <= hi else cur - 1
        if new < 0 or (start.min_size is not None and new < start.min_size):
            self.report.skipped.append("resize: the provider's bounds leave no other size")
            return
        change = self.resize("resize", target, new)
        if change is None:
            return
        first = self.observation("resize: read back", target)
        if first is None:
            return
        self.check("resize: the size reads back", first.current_replicas == change.size,
                   f"set_size({new}) said {change.size}; observe then read {first.current_replicas}")
        if not change.in_flight:
            self.check("in-flight: a settled write is not reported in flight", first.in_flight is None,
                       f"set_size said in_flight False, observe then said {first.in_flight!r}")
        if first.in_flight is not None and self.settled("resize", target) is None:
            return
        obs = self.resized("absolute size", target, new)
        if obs is None:
            return
        self.check("absolute size: setting it twice changes nothing more", obs.current_replicas == change.size,
                   f"set_size({new}) twice left {obs.current_replicas}, not {change.size}")
        if obs.status_replicas is not None:
            self.check("absolute size: the members settle at the size", obs.status_replicas == obs.current_replicas,
                       f"settled with {obs.status_replicas} members for a size of {obs.current_replicas}")
        self.resized("restore", target, cur)

    def metrics(self, target: Target, obs: Observation, queries: Sequence[MetricQuery]) -> None:
        ok, got = self.call("read_metrics", lambda: target.read_metrics(self.now, obs, list(queries)))
        if not ok:
            return
        if not self.check("read_metrics returns a mapping", isinstance(got, dict), f"got {type(got).__name__}"):
            return
        if Capability.METRICS not in self.provider.capabilities:
            self.check("capabilities: read_metrics only with METRICS", got == {},
                       f"without Capability.METRICS read_metrics returned {sorted(got)}")
            return
        names = {q.name for q in queries}
        self.check("read_metrics answers only what was asked", set(got) <= names,
                   f"returned {sorted(set(got) - names)} that no query asked for")
        from ..protocol import METRIC_OBSERVATION
        for name, m in got.items():
            try:
                METRIC_OBSERVATION.validate_python(_fields(m))
            except (ValidationError, AttributeError, TypeError) as e:
                self.failures.append(f"read_metrics[{name!r}]: not a protocol metric observation "
                                     f"({str(e).splitlines()[0]})")
            else:
                self.report.passed.append(f"read_metrics[{name!r}] is a protocol observation")
        if not got:
            self.report.skipped.append("read_metrics: nothing read for the default queries")

    def faults(self, target: Target, obs: Observation, provoke: Provoke, queries: Sequence[MetricQuery],
               kinds: Sequence[ErrorKind]) -> None:
        for call in FAULT_CALLS:
            if call == "read_metrics" and Capability.METRICS not in self.provider.capabilities:
                continue
            for kind in kinds:
                armed = provoke(target, call, kind)
                if armed is False:
                    self.report.skipped.append(f"faults: {call} {kind.value} (the hook cannot provoke it)")
                    continue
                try:
                    self.fault(target, obs, queries, call, kind)
                finally:
                    if callable(armed):
                        armed()

    def fault(self, target: Target, obs: Observation, queries: Sequence[MetricQuery], call: str,
              kind: ErrorKind) -> None:
        self.report.provoked.append((call, kind.value))
        name = f"faults: {call} failing as {kind.value}"
        fn: Callable[[], Any] = {"observe": lambda: target.observe(self.tick()),
                                 "read_metrics": lambda: target.read_metrics(self.now, obs, list(queries)),
                                 "set_size": lambda: target.set_size(obs.current_replicas)}[call]
        try:
            fn()
        except ProviderError as e:
            ra = e.retry_after
            self.check(name, e.kind == kind and (ra is None or (isinstance(ra, (int, float)) and ra >= 0)),
                       f"raised {e.kind.value} (retry_after {ra!r}), expected {kind.value}")
        except Exception as e:
            self.failures.append(f"{name}: raised {type(e).__module__}.{type(e).__name__}: {e} "
                                 "(a provider raises only ProviderError)")
        else:
            self.failures.append(f"{name}: the call succeeded (the hook did not make it fail)")

    def refs(self, bad_refs: Sequence[Mapping[str, Any]]) -> None:
        cases = [({k: v for k, v in self.ref.items() if k != key}, key) for key in sorted(self.provider.ref_keys)]
        cases += [(r, None) for r in bad_refs]
        for ref, key in cases:
            name = f"RefError: ref without {key!r}" if key else f"RefError: {dict(ref)!r}"
            try:
                self.provider.target(ref)
            except RefError as e:
                self.check(name, isinstance(e.key, str) and bool(e.key) and (key is None or key in e.key),
                           f"RefError names {e.key!r}" + (f", not {key!r}" if key else ""))
            except Exception as e:
                self.failures.append(f"{name}: raised {type(e).__name__}: {e}, not RefError")
            else:
                self.failures.append(f"{name}: accepted")


def check_provider(provider: Provider, ref: Mapping[str, Any], *, provoke: Optional[Provoke] = None,
                   fault_kinds: Sequence[ErrorKind] = FAULT_KINDS, bad_refs: Sequence[Mapping[str, Any]] = (),
                   policy: Optional[Mapping[str, Any]] = None, queries: Sequence[MetricQuery] = DEFAULT_QUERIES,
                   now: Optional[float] = None, period: float = 15.0, max_observes: int = 20,
                   settle_wait: float = 0.0) -> ConformanceReport:
    """Check ``provider`` keeps the provider contract on the target ``ref`` names
    (see :mod:`scalebridge.testing.conformance`). ``provoke(target, call, kind)``
    makes the next ``call`` fail as the cloud does for ``kind`` (without it, the
    error checks are skipped); ``settle_wait`` seconds pass between observes of a
    target in flight (a real cloud settles on the wall clock). Raises
    ``AssertionError`` listing every failure; returns the report otherwise."""
    from ..engine import load_policy
    from ..protocol import Settings
    suite = _Suite(provider, ref, now, period, max_observes, settle_wait)
    suite.declared()
    ok, target = suite.call("target(ref)", lambda: provider.target(ref))
    if ok and not isinstance(target, Target):
        suite.failures.append(f"target(ref) returned {type(target).__name__}, not a Target")
        ok = False
    if ok:
        if suite.now is None:
            start = getattr(target, "start_time", None)
            suite.now = float(start) if start is not None else time.time()
        suite.now -= period
        suite.check("target.name", isinstance(target.name, str) and bool(target.name), f"name is {target.name!r}")
        suite.call("use_policy", lambda: target.use_policy(load_policy(dict(policy or DEFAULT_POLICY)), Settings()))
        ok, manager = suite.call("managed_by", target.managed_by)
        if ok:
            suite.check("managed_by", manager is None or isinstance(manager, str),
                        f"managed_by returned {manager!r}, not a name or None")
        start = suite.settled("observe", target)
        if start is not None:
            suite.metrics(target, start, queries)
            if provoke is not None:
                suite.faults(target, start, provoke, queries, fault_kinds)
            else:
                suite.report.skipped.append("faults: no provoke hook given")
            suite.sizes(target, start)
    suite.refs(bad_refs)
    if suite.failures:
        raise AssertionError(f"{type(provider).__name__} breaks the provider contract:\n  " +
                             "\n  ".join(suite.failures))
    return suite.report


def _fields(x: Any) -> dict:
    """A member or a metric observation as the protocol's JSON object, its null keys left out:
    the core's own type (what the built-ins return) or the protocol's dict."""
    d = dataclasses.asdict(x) if dataclasses.is_dataclass(x) and not isinstance(x, type) else x
    return {k: v for k, v in d.items() if v is not None}
