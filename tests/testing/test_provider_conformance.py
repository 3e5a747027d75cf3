"""check_provider passes a provider that keeps the contract and names each way a
provider can break it."""
from __future__ import annotations

from typing import Any, Mapping, Optional

import pytest

from scalebridge.providers import ErrorKind, Observation, Provider, ProviderError, RefError, SizeChange, Target
from scalebridge.testing.conformance import check_provider
from scalebridge.testing.fake import FakeProvider

FAKE_KIND = {ErrorKind.THROTTLED: "throttled_retry_after", ErrorKind.TRANSIENT: "5xx",
             ErrorKind.CONFLICT: "conflict", ErrorKind.NOT_FOUND: "not_found", ErrorKind.FORBIDDEN: "forbidden"}


def provoke(fake: FakeProvider):
    def hook(target: Target, call: str, kind: ErrorKind) -> bool:
        fake.inject(FAKE_KIND[kind], target=target.name, call=call)
        return True
    return hook


@pytest.mark.parametrize("options", [{}, {"settle_observes": 3}, {"settle_seconds": 40}, {"capabilities": []}])
def test_the_fake_keeps_the_contract(options):
    fake = FakeProvider(**options)
    report = check_provider(fake, {"name": "web", "size": 3, "load": 1.5}, provoke=provoke(fake),
                            bad_refs=[{"name": "web", "zone": "x"}])
    assert len(report.provoked) == (15 if "capabilities" not in options else 10)
    assert fake.size("web") == 3                       # the suite leaves the target as it found it
    assert "resize: the size reads back" in report.passed
    assert any(p.startswith("RefError") for p in report.passed)


def test_the_fake_at_its_own_bound_is_resized_the_other_way():
    fake = FakeProvider()
    check_provider(fake, {"name": "web", "size": 4, "max_size": 4})
    assert [s for _, s in fake.history("web")] == [4, 3, 3, 4]


def test_without_a_hook_the_fault_checks_are_skipped_not_passed():
    report = check_provider(FakeProvider(), {"name": "web"})
    assert report.provoked == [] and "faults: no provoke hook given" in report.skipped


# -- providers that break the contract, one way each


class Wrapped(Target):
    """A fake target with one behaviour replaced by a subclass."""

    def __init__(self, inner: Target):
        self.inner, self.name, self.start_time = inner, inner.name, inner.start_time

    def observe(self, now: float) -> Observation:
        return self.inner.observe(now)

    def read_metrics(self, now, observation, queries):
        return self.inner.read_metrics(now, observation, queries)

    def set_size(self, size: int) -> SizeChange:
        return self.inner.set_size(size)


class Broken(Provider):
    name = "broken"
    target_class: type = Wrapped

    def __init__(self, **options: Any):
        self.fake = FakeProvider(**options)
        self.capabilities = self.fake.capabilities
        self.pacing = self.fake.pacing

    def target(self, ref: Mapping[str, Any]) -> Target:
        return self.target_class(self.fake.target(ref))


class Delta(Wrapped):
    def set_size(self, size: int) -> SizeChange:          # a delta, not an absolute size
        cur = self.inner.state.size
        return self.inner.set_size(cur + (size - cur) * 2 if size != cur else cur)


class LeaksSdkErrors(Wrapped):
    def observe(self, now: float) -> Observation:
        try:
            return self.inner.observe(now)
        except ProviderError as e:
            raise ConnectionResetError(str(e)) from None


class WrongKind(Wrapped):
    def set_size(self, size: int) -> SizeChange:
        try:
            return self.inner.set_size(size)
        except ProviderError as e:
            raise ProviderError(ErrorKind.TRANSIENT, e.message) from None


class SaysSettled(Wrapped):
    def set_size(self, size: int) -> SizeChange:
        change = self.inner.set_size(size)
        change.in_flight = False
        return change


class NeverSettles(Wrapped):
    def observe(self, now: float) -> Observation:
        obs = self.inner.observe(now)
        obs.in_flight = "op-forever"
        return obs


class BadMembers(Wrapped):
    def observe(self, now: float) -> Observation:
        obs = self.inner.observe(now)
        obs.members = [{"name": m["name"], "phase": "Booting"} for m in obs.members]
        return obs


class MetricsWithoutCapability(Wrapped):
    def read_metrics(self, now, observation, queries):
        return {"cpu": {"value": 50.0}}


class AnswersUnasked(Wrapped):
    def read_metrics(self, now, observation, queries):
        return {**self.inner.read_metrics(now, observation, queries), "memory": {"value": 1.0}}


class KeyErrorRefs(Broken):
    ref_keys = frozenset({"name"})

    def target(self, ref):
        ref["name"]
        return super().target(ref)


def broken(cls, target_class=Wrapped, **options):
    return type(f"{target_class.__name__}Provider", (cls,), {"target_class": target_class})(**options)


def hook_for(p: Broken):
    return provoke(p.fake)


@pytest.mark.parametrize("target_class, options, expected", [
    (Delta, {}, "absolute size: setting it twice changes nothing more"),
    (LeaksSdkErrors, {}, "raised builtins.ConnectionResetError"),
    (WrongKind, {}, "set_size failing as throttled: raised transient"),
    (SaysSettled, {"settle_observes": 2}, "in-flight: a settled write is not reported in flight"),
    (NeverSettles, {}, "still in flight after 20 observes"),
    (BadMembers, {}, "members[0] is not a protocol member"),
    (MetricsWithoutCapability, {"capabilities": []}, "without Capability.METRICS read_metrics returned ['cpu']"),
    (AnswersUnasked, {}, "returned ['memory'] that no query asked for"),
])
def test_each_broken_promise_is_named(target_class, options, expected):
    p = broken(Broken, target_class, **options)
    with pytest.raises(AssertionError) as e:
        check_provider(p, {"name": "web", "size": 2}, provoke=hook_for(p))
    assert expected in str(e.value)


def test_a_ref_error_that_is_not_a_ref_error_is_named():
    p = broken(KeyErrorRefs)
    with pytest.raises(AssertionError) as e:
        check_provider(p, {"name": "web"})
    assert "RefError: ref without 'name': raised KeyError" in str(e.value)


def test_a_bad_ref_that_is_accepted_is_named():
    class Lenient(Broken):
        def target(self, ref):
            return super().target({k: v for k, v in ref.items() if k != "zone"})
    with pytest.raises(AssertionError) as e:
        check_provider(Lenient(), {"name": "web"}, bad_refs=[{"name": "web", "zone": "x"}])
    assert "{'name': 'web', 'zone': 'x'}: accepted" in str(e.value)


def test_a_hook_that_provokes_nothing_is_named():
    fake = FakeProvider()
    with pytest.raises(AssertionError) as e:
        check_provider(fake, {"name": "web"}, provoke=lambda target, call, kind: True)
    assert "the call succeeded (the hook did not make it fail)" in str(e.value)


def test_undeclared_pacing_is_named():
    class Stalled(Broken):
        pass
    p = Stalled(pacing={"writes_per_second": 1, "write_burst": 1})
    from scalebridge.providers import Pacing
    p.pacing = Pacing(writes_per_second=0.0)
    with pytest.raises(AssertionError) as e:
        check_provider(p, {"name": "web"})
    assert "provider.pacing" in str(e.value)
