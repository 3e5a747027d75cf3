"""Cooldowns after rule-caused scale actions (Azure Monitor autoscale), per rule.

Azure (https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings,
the cooldown section): "After any scale action, autoscale evaluates each candidate
rule by using that rule's configured cooldown. A rule becomes eligible to initiate
a scale action when its own cooldown has elapsed since the most recent scale action.
Cooldown isn't applied globally based on the rule that performed the most recent
scale action." The REST reference agrees (ScaleAction.cooldown: "the amount of
time to wait since the last scaling action before this action occurs"), and so does
the get-started page ("Another rule with a shorter cool-down period can become
eligible sooner"). The page's timeline: a scale-out at 10:00; the scale-in rule
(40 minutes) is deferred at 10:30 and eligible at 10:40; the scale-out rule
(60 minutes) not before 11:00.

:func:`combine_eligible` applies it: a fired rule still in its cooldown does not
count as fired. When that leaves the rules without the direction they asked for —
a scale-out rule fired but none eligible, or a scale-in the cooling rules keep
from being unanimous — nothing moves (``CooldownActive``), and a scale-in is not
considered in a scale-out's place. Equality is eligible.

The protocol (``state``, docs/protocol.md): the cooldowns count from the most
recent rule-caused action's ``last_scale.completed_at`` (default: its ``time``);
moves into ``[min, max]`` and the default-capacity fallback start none and are never
held by one. ``last_scale.cooldown_seconds`` is still recorded and read (a request
without rules — ``observations.proposal`` — waits the last action's cooldown), but a
rule waits its own. A policy update drops the state, and with it every cooldown
("Updating an autoscale setting resets the scale action timestamp and clears the
cooldown state for all rules").

A boundary move overwrites ``last_scale``; so that it does not erase a rule action's
time, :func:`remember_rule_action` keeps the last rule action under the namespaced
state key ``azure.last_rule_scale`` and :func:`last_rule_action` reads it back
(:func:`forget_expired_rule_action` drops it once spent and no longer needed to vouch
for the logged event). An event log entry with ``cause: rule`` newer than anything
else known (a hand-written state) counts from its own time.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

from .. import constants as C
from ..state import DecisionState, TimeLog
from .rules import CombinedRules, RuleEvaluation, combine_rules

__all__ = ["MEMO_KEY", "last_rule_action", "remember_rule_action", "note_scale_action", "forget_expired_rule_action",
           "cooldown_until", "rule_cooldown_until", "rule_cooldown", "fallback_cooldown", "cooldown_horizon",
           "start_of_cooldowns", "combine_eligible", "EligibleRules"]

MEMO_KEY = "azure.last_rule_scale"


def rule_cooldown(rule, fallback: float) -> float:
    """A rule's own cooldown (``action.cooldown_seconds``), else ``fallback``: "The
    default cool-down period is five minutes" (Azure,
    https://learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-get-started)."""
    c = rule.action.cooldown_seconds if rule.action is not None else None
    return fallback if c is None else c


def fallback_cooldown(settings) -> float:
    """The cooldown of a rule action that names none: ``settings.default_cooldown_seconds``,
    else Azure's five minutes (``AZURE_DEFAULT_COOLDOWN``)."""
    c = settings.default_cooldown_seconds
    return C.AZURE_DEFAULT_COOLDOWN if c is None else c


def cooldown_horizon(policy) -> float:
    """Seconds of scale events a cooldown may still need: the longest cooldown of
    any rule, the policy's or a profile's (at least the default five minutes)."""
    rules = list(policy.rules) + [r for p in policy.profiles for r in p.rules]
    return max([C.AZURE_DEFAULT_COOLDOWN] + [rule_cooldown(r, 0.0) for r in rules])


def start_of_cooldowns(state: DecisionState, now: float, settings) -> float:
    """What every decision under rule cooldowns does first: the fallback cooldown
    (:func:`fallback_cooldown`), with a remembered rule action that no longer
    matters dropped (:func:`forget_expired_rule_action`)."""
    fallback = fallback_cooldown(settings)
    forget_expired_rule_action(state, now, fallback)
    return fallback


def _latest_rule_event(log: TimeLog) -> Optional[float]:
    for t, _, cause in reversed(log.entries):
        if cause == "rule":
            return t
    return None


def last_rule_action(state: DecisionState, fallback_cooldown: float) -> Optional[tuple[float, float]]:
    """``(start, cooldown_seconds)`` of the most recent rule-caused scale action
    in ``state``, or None. ``start`` is ``completed_at`` when known, else the
    action's time; an action without a recorded cooldown holds for
    ``fallback_cooldown``."""
    ls = state.last_scale
    if ls is not None and ls.get("cause") == "rule":
        return _start(ls), _cooldown(ls, fallback_cooldown)
    best: Optional[tuple[float, float]] = None
    best_time = None
    memo = state.extra.get(MEMO_KEY)
    if isinstance(memo, dict) and "time" in memo:
        best_time = memo["time"]
        best = (_start(memo), _cooldown(memo, fallback_cooldown))
    for log in (state.scale_up_events, state.scale_down_events):
        if not log.entries:
            continue
        t = _latest_rule_event(log)
        if t is not None and (best_time is None or t > best_time):
            best_time, best = t, (t, fallback_cooldown)
    return best


def _start(ls: dict) -> float:
    c = ls.get("completed_at")
    return c if c is not None else ls["time"]


def _cooldown(ls: dict, fallback: float) -> float:
    c = ls.get("cooldown_seconds")
    return c if c is not None else fallback


def remember_rule_action(state: DecisionState, now: float, fallback_cooldown: float) -> None:
    """Call before a non-rule scale action (a move into ``[min, max]``, the
    default capacity) is recorded: keep the rule action in ``last_scale``
    under ``azure.last_rule_scale``, so that the new ``last_scale`` does not
    erase it — even when its cooldown has already run: the rule's event stays
    in the scale-event logs, and read back from there without its cooldown it
    would hold for ``fallback_cooldown`` (a 60 s rule re-held until 300 s)."""
    ls = state.last_scale
    if ls is not None and ls.get("cause") == "rule":
        state.extra[MEMO_KEY] = dict(ls)


def note_scale_action(state: DecisionState, now: float, cause: str, fallback_cooldown: float) -> None:
    """Call when a decision moves the count, before it is recorded: a rule action
    supersedes ``azure.last_rule_scale`` (its own ``last_scale`` governs now); any
    other action keeps the rule action it overwrites (:func:`remember_rule_action`)."""
    if cause == "rule":
        if state.extra:
            state.extra.pop(MEMO_KEY, None)
    else:
        remember_rule_action(state, now, fallback_cooldown)


def _logs_hold_rule_event_until(state: DecisionState, t: float) -> bool:
    return any(e[0] <= t and e[2] == "rule"
               for log in (state.scale_up_events, state.scale_down_events) for e in log.entries)


def forget_expired_rule_action(state: DecisionState, now: float, fallback_cooldown: float) -> None:
    """Drop ``azure.last_rule_scale`` once a newer rule action is in ``last_scale``,
    or once its cooldown has run out and the event logs no longer hold a rule
    event it stands for (while they do, it keeps them from being read back with
    ``fallback_cooldown``)."""
    extra = state.extra
    if not extra:
        return
    memo = extra.get(MEMO_KEY)
    if memo is None:
        return
    ls = state.last_scale
    if (not isinstance(memo, dict) or "time" not in memo
            or (ls is not None and ls.get("cause") == "rule" and ls.get("time", 0) >= memo["time"])
            or (now >= _start(memo) + _cooldown(memo, fallback_cooldown)
                and not _logs_hold_rule_event_until(state, memo["time"]))):
        del extra[MEMO_KEY]


def cooldown_until(state: DecisionState, fallback_cooldown: float) -> Optional[float]:
    """Until when rule-caused scale actions, in either direction, are held:
    the most recent rule action's start plus its cooldown (None: no rule action
    on record). Held while ``now < until``."""
    last = last_rule_action(state, fallback_cooldown)
    if last is None:
        return None
    return last[0] + last[1]


def rule_cooldown_until(state: DecisionState, rule_cooldown: float, fallback_cooldown: float) -> Optional[float]:
    """Per-rule reading: a rule may act again ``rule_cooldown`` seconds after
    the most recent rule action (None: no rule action on record)."""
    last = last_rule_action(state, fallback_cooldown)
    if last is None:
        return None
    return last[0] + rule_cooldown


@dataclasses.dataclass(slots=True)
class EligibleRules:
    """What :func:`combine_eligible` found: the rules' combination counting only the
    rules out of their cooldown (``combined``), whether the cooldowns held the
    direction the fired rules asked for (``held``), and when the first held rule
    becomes eligible (``until``)."""
    combined: CombinedRules
    held: bool = False
    until: Optional[float] = None


def combine_eligible(evals: Sequence[RuleEvaluation], combined: CombinedRules, state: DecisionState, now: float,
                     fallback_cooldown: float, current: int) -> EligibleRules:
    """Azure's per-rule cooldown over ``combined`` (:func:`~.rules.combine_rules` of
    ``evals``): each fired rule counts only once its own cooldown has elapsed since the
    most recent rule action (``now >= start + cooldown``)."""
    if combined.direction is None:
        return EligibleRules(combined)
    last = last_rule_action(state, fallback_cooldown)
    if last is None:
        return EligibleRules(combined)
    start = last[0]
    cooling = [e for e in evals if e.fired and now < start + rule_cooldown(e.rule, fallback_cooldown)]
    if not cooling:
        return EligibleRules(combined)
    until = min(start + rule_cooldown(e.rule, fallback_cooldown) for e in cooling)
    held_ids = {id(e) for e in cooling}
    eligible = [dataclasses.replace(e, fired=False, result=None) if id(e) in held_ids else e for e in evals]
    again = combine_rules(eligible, current)
    if again.direction != combined.direction:
        return EligibleRules(CombinedRules(current, None, [], again.fired, again.of), True, until)
    return EligibleRules(again, False, until)
