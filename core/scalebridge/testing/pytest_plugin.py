"""pytest fixtures for testing a provider plugin, or anything that drives one.

Registered as a ``pytest11`` entry point, so installing scalebridge makes them
available to every test suite; without the entry point, name the module in a
``conftest.py``: ``pytest_plugins = ["scalebridge.testing.pytest_plugin"]``.

- ``fake_provider``: a fresh :class:`~scalebridge.testing.fake.FakeProvider`;
  ``make_fake_provider(**options)`` makes more (closed at the end of the test).
- ``manual_clock``: the controller's virtual clock, started at
  :data:`~scalebridge.testing.fake.DEFAULT_START`; ``advance(s)``, ``set(t)``, and
  ``sleep`` that returns at once.
- ``state_path``: a state file in the test's temporary directory;
  ``state_store``: the SQLite state store opened on it.
- ``run_config``: ``run_config(targets, providers=..., policies=..., **top)`` writes
  a run configuration (YAML) to the test's temporary directory and returns its path;
  a target's ``provider`` defaults to a fake provider instance named ``fake``.
- ``controller_factory``: ``controller_factory(config_path, **options)`` builds the
  controller in-process (options as ``scalebridge run``'s: ``clock``, ``state``,
  ``dry_run``, ``audit``) and closes it at the end of the test.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

from ..controller.clock import VirtualClock
from .fake import DEFAULT_START, FakeProvider

__all__ = ["ManualClock", "fake_provider", "make_fake_provider", "manual_clock", "state_path", "state_store",
           "run_config", "controller_factory", "FAKE_TYPE"]

#: the ``type:`` of a run configuration's provider entry that makes a fake provider
FAKE_TYPE = "scalebridge.testing.fake:FakeProvider"


class ManualClock(VirtualClock):
    """The controller's virtual clock, started at :data:`~scalebridge.testing.fake.DEFAULT_START`,
    that also records what it was asked to sleep (``slept``): a test moves it with
    ``advance``/``set``, and ``sleep`` advances at once."""

    def __init__(self, start: float = DEFAULT_START):
        super().__init__(start)
        self.slept: list[float] = []

    def sleep(self, seconds: float, stop: Optional[threading.Event] = None) -> bool:
        if stop is None or not stop.is_set():
            self.slept.append(seconds)
        return super().sleep(seconds, stop)


@pytest.fixture
def make_fake_provider() -> Iterator[Callable[..., FakeProvider]]:
    made: list[FakeProvider] = []

    def make(**options: Any) -> FakeProvider:
        p = FakeProvider(**options)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


@pytest.fixture
def fake_provider(make_fake_provider) -> FakeProvider:
    return make_fake_provider()


@pytest.fixture
def manual_clock():
    return ManualClock(DEFAULT_START)


@pytest.fixture
def state_path(tmp_path: Path) -> Path:
    return tmp_path / "scalebridge-state.db"


@pytest.fixture
def state_store(state_path: Path):
    store_mod = pytest.importorskip("scalebridge.controller.store")
    store = store_mod.SQLiteStore(state_path)
    yield store
    store.close()


def write_run_config(path: Path, targets: list[dict], *, providers: Optional[dict] = None,
                     policies: Optional[dict] = None, **top: Any) -> Path:
    """A run configuration at ``path``: ``targets`` (a target's ``provider``
    defaults to ``fake``, its ``policy`` to ``default``), ``providers`` (default: one
    fake provider instance ``fake``), ``policies`` (default: ``default``, one CPU
    utilization metric at 60%, 1 to 20 members) and top-level keys (``sync_period_seconds``)."""
    import yaml
    providers = {"fake": {"type": FAKE_TYPE}} if providers is None else providers
    policies = {"default": {"min_replicas": 1, "max_replicas": 20,
                            "metrics": [{"type": "resource", "name": "cpu",
                                         "target": {"type": "Utilization", "average_utilization": 60}}]}} \
        if policies is None else policies
    config = {**top, "providers": providers, "policies": policies,
              "targets": [{"provider": "fake", "policy": "default", **t} for t in targets]}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.fixture
def run_config(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1_000_000))

    def write(targets: list[dict], **kwargs: Any) -> Path:
        return write_run_config(tmp_path / f"run-{next(counter)}.yaml", targets, **kwargs)

    return write


@pytest.fixture
def controller_factory(state_path: Path) -> Iterator[Callable[..., Any]]:
    loop_mod = pytest.importorskip("scalebridge.controller.loop")
    made: list[Any] = []

    def make(config: Path, **options: Any) -> Any:
        options.setdefault("state", str(state_path))
        controller = loop_mod.build_controller(str(config), **options)
        made.append(controller)
        return controller

    yield make
    for c in made:
        close = getattr(c, "close", None)
        if close is not None:
            close()
