"""The fault queue of the local servers: the first fault that applies answers, each
answers ``times`` requests (None: every one), then leaves the queue."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from scalebridge.testing.fault_queue import take_fault


@dataclass
class _F:
    name: str
    times: Optional[int] = 1


def test_the_first_fault_that_applies_answers_and_is_spent_after_its_times():
    a, b = _F("a", times=2), _F("b")
    queue = [a, b]
    assert take_fault(queue, lambda f: True) is a and queue == [a, b] and a.times == 1
    assert take_fault(queue, lambda f: True) is a and queue == [b]
    assert take_fault(queue, lambda f: True) is b and queue == []
    assert take_fault(queue, lambda f: True) is None


def test_a_fault_that_does_not_apply_is_passed_over_untouched():
    a, b = _F("a"), _F("b")
    queue = [a, b]
    assert take_fault(queue, lambda f: f.name == "b") is b
    assert queue == [a] and a.times == 1
    assert take_fault(queue, lambda f: f.name == "b") is None


def test_a_fault_without_times_answers_forever():
    forever = _F("x", times=None)
    queue = [forever]
    assert all(take_fault(queue, lambda f: True) is forever for _ in range(50))
    assert queue == [forever]


def test_applies_is_asked_in_order_only_until_one_does():
    asked: list[str] = []
    queue = [_F("a"), _F("b"), _F("c")]
    take_fault(queue, lambda f: asked.append(f.name) or f.name == "b")
    assert asked == ["a", "b"]
