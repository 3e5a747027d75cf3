"""A decision not carried out (dry run, a write in flight, a standby, no write
left at the pacing, a write that failed): the controller keeps the target's one
:class:`~scalebridge.state.DecisionState` and gives back the events it took
before the decision (:meth:`~scalebridge.state.DecisionState.events`,
:meth:`~scalebridge.state.DecisionState.restore_events`), never converting the
state to the protocol's JSON and back. The protocol's rule it must equal
(docs/protocol.md): the caller that does not carry a decision out keeps only
the response's ``recommendations`` and ``sizes``, everything else as it was.

For each built-in semantics, hypothesis draws a policy that keeps history and a
sequence of decisions, each carried out or not: the Decider with events given
back and chained ``decide()`` calls applying the protocol's rule to the JSON
must decide alike and hold the same state throughout. And the state before a
decision, as the state store persists it beside a pending write
(``to_protocol(events, before=now)``), decides again at the same time exactly as
the decision did (what a controller restarted inside that sync does).
"""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scalebridge.engine import Decider, decide, parse_request
from scalebridge.errors import RequestError
from scalebridge.protocol import StateModel
from scalebridge.state import DecisionState
from tests.core.test_state_round_trip import CASES, NOW, draw_case, observations, steps

_LOGS = ("recommendations", "sizes")


def _not_carried(before: dict, response: dict) -> dict:
    """docs/protocol.md's rule, on the JSON: the response's logs, the rest as before."""
    out = {k: v for k, v in before.items() if k not in _LOGS}
    out.update({k: response[k] for k in _LOGS if k in response})
    return out


def _normal(state: dict) -> dict:
    """The protocol's state as a state read from it writes it (empty event lists spelled out)."""
    return json.loads(json.dumps(DecisionState.from_protocol(StateModel.model_validate(state)).to_protocol()))


def _decision(d) -> tuple:
    return d.desired, d.recommended, d.reason


def _run(semantics: str, policy: dict, sets: dict, seq: list, carried: list, first: int):
    decider = Decider(policy, semantics, sets)
    state: dict = {}
    now, current = NOW, first
    starts = [now - 7200.0] * current
    for k, s in enumerate(seq):
        now += s["dt"]
        obs = observations(now, current, starts, s["util"], s["noise"], current, s["missing"], semantics,
                           s["pending"], s["forecast"])
        req = {"semantics": semantics, "now": now, "current_replicas": current, "policy": policy,
               "settings": sets, "observations": obs, "state": state}
        try:
            r = decide(copy.deepcopy(req))
        except RequestError:
            return
        before = decider.state.events()
        d = decider.step(now, current, parse_request(req)[0].observations)
        assert _decision(d) == (r["desired_replicas"], r["recommended_replicas"], r["reason"]), f"step {k}"
        response = json.loads(json.dumps(r["state"]))
        # the state beside a pending write: before this decision; decided again now, the same decision
        pre = json.loads(json.dumps(decider.state.to_protocol(before, now)))
        again = Decider(policy, semantics, sets, state=DecisionState.from_protocol(StateModel.model_validate(pre)))
        assert _decision(again.step(now, current, parse_request(req)[0].observations)) == _decision(d), f"step {k}"
        if carried[k % len(carried)]:
            state = response
            current = r["desired_replicas"]
        else:
            decider.state.restore_events(before)
            state = _not_carried(state, response)
        assert json.loads(json.dumps(decider.state.to_protocol())) == _normal(state), f"step {k}"
        if current > len(starts):
            starts = starts + [now] * (current - len(starts))
        else:
            starts = starts[:current]


@pytest.mark.parametrize("semantics", sorted(CASES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_events_given_back_equal_the_protocols_rule(semantics, data):
    case = draw_case(data, semantics)
    if case is None:
        return
    policy, sets = case
    seq = data.draw(steps(), label="steps")
    carried = data.draw(st.lists(st.booleans(), min_size=1, max_size=8), label="carried out")
    _run(semantics, policy, sets, seq, carried, data.draw(st.integers(1, 12), label="first current"))
