"""The fault queue the local servers share: faults wait in a list, the first that
applies to a request answers it, and each answers ``times`` requests (None: every
one) before it leaves the list."""
from __future__ import annotations

from typing import Callable, Optional, Protocol, TypeVar

__all__ = ["take_fault"]


class _Counted(Protocol):
    times: Optional[int]


F = TypeVar("F", bound=_Counted)


def take_fault(queue: list[F], applies: Callable[[F], bool]) -> Optional[F]:
    """The first fault of ``queue`` that ``applies`` to the request, one of its
    ``times`` spent; a fault with none left is taken off ``queue``. None when no
    fault applies. ``applies`` is asked of each fault in order until one does; the
    caller holds the lock guarding ``queue``."""
    for fault in queue:
        if applies(fault):
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    queue.remove(fault)
            return fault
    return None
