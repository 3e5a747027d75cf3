"""Provider factories the configuration tests name by ``module:attr``."""
from __future__ import annotations

from scalebridge.providers import require


def needs_missing_sdk(**options):
    """A provider whose SDK is not installed: the factory imports it, as plugins do."""
    require("scalebridge_no_such_sdk.client", "nosuch", "nosuch")
    raise AssertionError("unreachable")


from scalebridge.testing.fake import FakeProvider  # noqa: E402


class StoringFake(FakeProvider):
    """A fake provider that offers the two optional hooks: a state store of its own
    (an SQLite file at the ``path`` option) and an election it never wins."""

    def state_store(self, path=None, **unknown):
        from scalebridge.controller.store import SQLiteStore
        from scalebridge.providers import RefError
        if unknown:
            raise RefError(f"state.{sorted(unknown)[0]}", "not an option of this store (path)")
        return SQLiteStore(path)

    def elector(self, namespace, name, identity, clock):
        from scalebridge.controller.election import NeverLeader
        self.elected = (namespace, name, identity)
        return NeverLeader()


class BuggyFake(FakeProvider):
    """A fake whose target ``bug`` raises a plain exception (a plugin's bug) and whose
    target ``odd`` reports a member in a phase the protocol does not know."""

    def target(self, ref):
        t = super().target(ref)
        if ref.get("name") == "bug":
            def observe(now):
                raise RuntimeError("plugin bug")
            t.observe = observe
        elif ref.get("name") == "odd":
            real = t.observe

            def observe(now):
                obs = real(now)
                obs.members = [dict(m, phase="Sleeping") for m in obs.members]
                return obs
            t.observe = observe
        return t


class PickyFake(FakeProvider):
    """A fake that checks metric sources as a cloud's plugin does: a source needs a
    ``metric_name``."""

    def check_metric_source(self, name, source):
        from scalebridge.providers import RefError
        for key in source or {}:
            if key != "metric_name":
                raise RefError(f"metrics.{name}.source.{key}", "unknown key; a source takes metric_name")


class SlowFake(FakeProvider):
    """A fake whose observe takes ``observe_seconds`` (a cloud API's round trip) and
    records the thread each observe ran on, in :attr:`threads` (``{target: name}``)."""

    def __init__(self, observe_seconds=0.0, **options):
        super().__init__(**options)
        self.observe_seconds = float(observe_seconds)
        self.threads = {}

    def target(self, ref):
        import threading
        import time
        t = super().target(ref)
        real = t.observe

        def observe(now):
            self.threads[ref["name"]] = threading.current_thread().name
            time.sleep(self.observe_seconds)
            return real(now)
        t.observe = observe
        return t


class BatchingFake(FakeProvider):
    """A fake that observes in batches (``Provider.observe_many``): it records each
    batch's targets, fails the target ``odd-one`` alone, answers None (observe it
    yourself) for ``self-served``, and raises as a whole when ``broken`` is set."""

    broken = False

    def __init__(self, **options):
        super().__init__(**options)
        self.batches: list[list[str]] = []

    def observe_many(self, batch, now):
        from scalebridge.providers import ErrorKind, ProviderError
        self.batches.append([t.name for t, _ in batch])
        if self.broken:
            raise RuntimeError("the batch call broke")
        out = []
        for t, _queries in batch:
            if t.name.endswith("odd-one"):
                out.append(ProviderError(ErrorKind.NOT_FOUND, "odd-one is gone"))
            elif t.name.endswith("self-served"):
                out.append(None)
            else:
                out.append(t.observe(now))
        return out
