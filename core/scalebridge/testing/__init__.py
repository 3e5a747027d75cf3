"""What plugin authors test with: the contract every semantics honours, the
provider contract (:func:`check_provider`, :mod:`scalebridge.testing.conformance`), the
translator contract (:func:`check_translator`, :mod:`scalebridge.testing.translator_conformance`),
a fake provider (:class:`FakeProvider`, :mod:`scalebridge.testing.fake`) for
driving a controller without a cloud, request builders (:mod:`.requests`), the
pieces a local API server is built from (:mod:`.local_server`, :mod:`.fault_queue`,
:mod:`.merge_patch`), and for metric sources the conformance checks
(:func:`check_metric_source`, :mod:`scalebridge.testing.metric_source_conformance`).

Each built-in cloud's local API server lives with its plugin (the Kubernetes server in
``scalebridge_kubernetes.fake_server``, Compute and Monitoring in ``scalebridge_gce``,
ARM in ``scalebridge_azure``, the moto proxy in ``scalebridge_aws``, Prometheus and its
PromQL subset in ``scalebridge_prometheus``); their old names here still import, with a
deprecation warning (:mod:`scalebridge.moved`).

    from scalebridge.testing import check_semantics
    def test_my_semantics_keeps_the_contract():
        check_semantics("my-semantics")

:func:`check_semantics` runs generic requests (CPU utilization members and a
group series, one threshold rule pair, a range of loads, histories and modes)
and checks what the protocol promises of any semantics, whatever its
arithmetic: the same request gives the same response; the request is not
modified; the response is JSON and carries every protocol field; a
``Decider`` stepping through a sequence answers as ``decide`` does when each
call gets the previous response's ``state``; ``OFF`` never changes the size,
``ONLY_SCALE_OUT`` never shrinks it and ``ONLY_SCALE_IN`` never grows it; the result stays within ``[min, max]``
when the current size does. It raises ``AssertionError`` naming the request.
"""
from __future__ import annotations

import copy
import json
from typing import Iterable, Optional

from .. import moved
from ..engine import Decider, decide, parse_request
from .conformance import ConformanceReport, FailNext, check_provider
from .fake import FakeProvider, FakeTarget, Load

moved.install()   # scalebridge.testing.kubernetes_server and the other old names still import


def __getattr__(name: str):
    import importlib
    if name == "check_metric_source":   # imported on first use, as before
        return importlib.import_module(f"{__name__}.metric_source_conformance").check_metric_source
    if name in ("check_translator", "check_round_trip"):   # imported on first use: it loads the translate package
        return getattr(importlib.import_module(f"{__name__}.translator_conformance"), name)
    module = moved.TESTING_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'scalebridge.testing' has no attribute {name!r}")
    moved.warn(f"scalebridge.testing.{name}", f"{module}.{name}")
    value = globals()[name] = getattr(importlib.import_module(module), name)   # warned once
    return value


__all__ = ["ConformanceReport", "FailNext", "FakeProvider", "FakeTarget", "Load", "check_provider", "check_semantics",
           "contract_requests"]

NOW = 1767225600.0
PROTOCOL_FIELDS = ("semantics", "current_replicas", "recommended_replicas", "desired_replicas", "metrics",
                   "profile", "reason", "able_to_scale", "error", "state")


def _request(current: int, utilization: float, *, mode: str = "ON", lo: int = 1, hi: int = 12,
             now: float = NOW, state: Optional[dict] = None) -> dict:
    members = [{"name": f"m-{i}", "phase": "Running", "ready": True, "start_time": now - 7200,
                "ready_transition_time": now - 7100, "requests": {"cpu": 1}} for i in range(current)]
    series = [[now - 60 * k, float(utilization)] for k in range(16, -1, -1)]
    req = {"now": now, "current_replicas": current,
           "policy": {"min_replicas": lo, "max_replicas": hi, "mode": mode,
                      "metrics": [{"type": "resource", "name": "cpu",
                                   "target": {"type": "Utilization", "average_utilization": 60}}],
                      "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70,
                                 "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}},
                                {"metric": "cpu", "operator": "LessThan", "threshold": 30,
                                 "action": {"direction": "Decrease", "type": "ChangeCount", "value": 1}}]},
           "observations": {"status_replicas": current, "members": members,
                            "metrics": {"cpu": {"members": {m["name"]: utilization / 100 for m in members},
                                                "timestamp": now - 15, "window": 60, "series": series}}}}
    if state is not None:
        req["state"] = state
    return req


def contract_requests() -> Iterable[dict]:
    """The generic requests :func:`check_semantics` runs (a semantics may answer
    any of them with an ``error``; it may not break the contract)."""
    for mode in ("ON", "OFF", "ONLY_SCALE_OUT", "ONLY_SCALE_IN"):
        for current in (1, 4, 12):
            for util in (0, 20, 45, 60, 75, 150):
                yield _request(current, util, mode=mode)
                yield _request(current, util, mode=mode, state={"recommendations": []})
                yield _request(current, util, mode=mode,
                               state={"recommendations": [{"time": NOW - 120, "replicas": 9}],
                                      "sizes": [{"time": NOW - 120, "replicas": 9}]})


def _check_one(name: str, req: dict) -> None:
    where = f"{name}: current {req['current_replicas']}, mode {req['policy']['mode']}, " \
            f"cpu {req['observations']['metrics']['cpu']['series'][-1][1]}%, state {req.get('state')}"
    before = copy.deepcopy(req)
    try:
        r = decide(req, name)
        again = decide(req, name)
        json.dumps(r)
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"{where}: {type(e).__name__}: {e}") from e
    assert req == before, f"{where}: decide modified its request"
    assert again == r, f"{where}: the same request gave another response"
    for field in PROTOCOL_FIELDS:
        assert field in r, f"{where}: the response lacks {field!r}"
    cur, desired = req["current_replicas"], r["desired_replicas"]
    mode = req["policy"]["mode"]
    if mode == "OFF":
        assert desired == cur, f"{where}: mode OFF changed the size to {desired}"
    if mode == "ONLY_SCALE_OUT":
        assert desired >= cur, f"{where}: mode ONLY_SCALE_OUT shrank to {desired}"
    if mode == "ONLY_SCALE_IN":
        assert desired <= cur, f"{where}: mode ONLY_SCALE_IN grew to {desired}"
    lo, hi = req["policy"]["min_replicas"], req["policy"]["max_replicas"]
    if lo <= cur <= hi:
        assert lo <= desired <= hi, f"{where}: {desired} is outside [{lo}, {hi}]"


def _check_sequence(name: str) -> None:
    """A Decider stepping through a load sequence answers as chained decide() calls."""
    loads = [40, 80, 130, 130, 90, 50, 20, 20, 20, 70, 10, 10]
    first = _request(4, loads[0])
    env, policy = parse_request(first)
    decider = Decider(policy, name)
    current, state = 4, None
    for k, util in enumerate(loads):
        now = NOW + 15 * k
        req = _request(current, util, now=now, state=state)
        r = decide(req, name)
        step = decider.step(now, current, parse_request(req)[0].observations)
        assert step.desired == r["desired_replicas"], \
            f"{name}: tick {k}: Decider.step gave {step.desired}, decide with the returned state {r['desired_replicas']}"
        current, state = r["desired_replicas"], r["state"]


def check_semantics(name: str) -> int:
    """Check the contract for the registered semantics ``name``; returns the number
    of requests checked."""
    n = 0
    for req in contract_requests():
        _check_one(name, req)
        n += 1
    _check_sequence(name)
    return n
