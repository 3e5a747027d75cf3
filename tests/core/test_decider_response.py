"""The Python API in one shape: a newcomer found ``scalebridge.decide()`` returning a dict with
``desired_replicas`` while ``Decider.step()`` returned a ``Decision`` with ``.desired`` and no
docstring. A Decision converts to the protocol's response: ``Decider.step(...).to_response()``
is what ``decide()`` returns for the same request, field for field (state and metrics too)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import scalebridge
from scalebridge.protocol import Request

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = sorted((ROOT / "examples" / "requests").glob("*.json")) + \
    sorted((ROOT / "examples" / "controls").glob("*.json"))


def _decider_response(req: dict, semantics: str) -> dict:
    env = Request.model_validate(req)
    state = req.get("state")
    decider = scalebridge.Decider(req["policy"], semantics, req.get("settings"),
                                  state=copy.deepcopy(state) if state is not None else None)
    return decider.step(env.now, env.current_replicas, req.get("observations") or {}).to_response()


@pytest.mark.parametrize("path", REQUESTS, ids=lambda p: p.name)
@pytest.mark.parametrize("semantics", ["kubernetes", "gce", "aws", "scalebridge"])
def test_a_decision_converts_to_what_decide_returns(path, semantics):
    req = json.loads(path.read_text())
    try:
        want = scalebridge.decide(copy.deepcopy(req), semantics=semantics)
    except scalebridge.errors.ScalebridgeError:
        pytest.skip(f"{semantics} cannot run {path.name}'s policy")
    assert _decider_response(req, semantics) == want


def test_the_readme_example_and_its_fields():
    req = json.loads((ROOT / "examples/requests/pods.json").read_text())
    decider = scalebridge.Decider(req["policy"], "kubernetes", state=req["state"])
    decision = decider.step(req["now"], req["current_replicas"], req["observations"])
    response = decision.to_response()
    assert response["desired_replicas"] == decision.desired == 4
    assert response["recommended_replicas"] == decision.recommended
    assert response == scalebridge.decide(req, semantics="kubernetes")
    assert "`.desired`" in scalebridge.Decider.step.__doc__.replace("``", "`") or \
        ".desired" in scalebridge.Decider.step.__doc__


def test_a_stale_decision_refuses_to_report_a_later_state():
    req = json.loads((ROOT / "examples/requests/pods.json").read_text())
    decider = scalebridge.Decider(req["policy"], "kubernetes")
    first = decider.step(req["now"], 3, req["observations"])
    decider.step(req["now"] + 15, 4, req["observations"])
    with pytest.raises(ValueError, match="stepped since"):
        first.to_response()
    with pytest.raises(ValueError, match="not made by Decider.step"):
        scalebridge.decision.Decision(3, 3, "DesiredWithinRange").to_response()
