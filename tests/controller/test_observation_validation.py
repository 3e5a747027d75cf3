"""What a provider observed is validated as the decision protocol's observations
before any semantics reads it; members equal to the last sync's keep their validated
models (a target's members mostly stay as they were), and members that changed are
validated again — an invalid one fails its target, as on the first sync."""
from __future__ import annotations

from scalebridge.controller.reconcile import _observations
from scalebridge.providers import Observation, ProviderError
from scalebridge.controller.reconcile import TargetRun

import pytest


def _member(name: str, **kw) -> dict:
    return {"name": name, "phase": "Running", "ready": True, "start_time": 1.0e9, "requests": {"cpu": 0.5}, **kw}


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _run() -> TargetRun:
    return TargetRun(spec=None, decider=None)   # the observations need neither


def test_equal_members_keep_their_validated_models_and_changed_ones_are_validated_again():
    run = _run()
    first = _observations(run, Observation(2, members=[_member("a"), _member("b")]), {})
    again = _observations(run, Observation(2, members=[_member("a"), _member("b")]), {})
    assert _same(again.members, first.members)
    changed = _observations(run, Observation(2, members=[_member("a"), _member("b", ready=False)]), {})
    assert not _same(changed.members, first.members)
    assert [m.ready for m in changed.members] == [True, False]
    with pytest.raises(ProviderError, match=r"observations\.members\[1\]\.phase"):
        _observations(run, Observation(2, members=[_member("a"), _member("b", phase="Sleeping")]), {})
    # an invalid observation is never kept: the last valid members are what is compared
    back = _observations(run, Observation(2, members=[_member("a"), _member("b", ready=False)]), {})
    assert _same(back.members, changed.members)


def test_metrics_are_validated_every_sync():
    run = _run()
    _observations(run, Observation(1, members=[_member("a")]), {"cpu": {"members": {"a": 0.2}}})
    with pytest.raises(ProviderError, match=r"observations\.metrics\.cpu\.members\.a"):
        _observations(run, Observation(1, members=[_member("a")]), {"cpu": {"members": {"a": "lots"}}})
