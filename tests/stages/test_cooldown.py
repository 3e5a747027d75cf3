"""The cooldown stage (scalebridge.stages.cooldown): the rule-action memo, each rule's
cooldown, and forgetting what has expired.

Source: https://learn.microsoft.com/en-us/azure/azure-monitor/autoscale/autoscale-understanding-settings (cooldown)."""
from __future__ import annotations

from scalebridge.stages.cooldown import (
    cooldown_until, forget_expired_rule_action, last_rule_action, MEMO_KEY, remember_rule_action,
    rule_cooldown_until)
from scalebridge.state import DecisionState, TimeLog
from scalebridge.testing.requests import AZURE_NOW as NOW


def test_cooldown_functions():
    s = DecisionState()
    assert cooldown_until(s, 300) is None
    s.last_scale = {"time": NOW, "direction": "Increase", "cause": "rule", "cooldown_seconds": 600,
                    "completed_at": NOW + 60}
    assert last_rule_action(s, 300) == (NOW + 60, 600)
    assert cooldown_until(s, 300) == NOW + 660
    assert rule_cooldown_until(s, 120, 300) == NOW + 180
    remember_rule_action(s, NOW + 100, 300)
    s.last_scale = {"time": NOW + 100, "direction": "Increase", "cause": "boundary"}
    assert cooldown_until(s, 300) == NOW + 660
    forget_expired_rule_action(s, NOW + 659, 300)
    assert MEMO_KEY in s.extra
    forget_expired_rule_action(s, NOW + 660, 300)
    assert MEMO_KEY not in s.extra
    # a logged rule event with no known cooldown
    s.scale_down_events = TimeLog([(NOW + 200, 1, "rule"), (NOW + 250, 1, "boundary")])
    assert last_rule_action(s, 300) == (NOW + 200, 300)
