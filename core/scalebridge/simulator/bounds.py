"""The sizes a policy allows anywhere, as one ``(minimum, maximum)`` pair: what the
oracle, the frontier and the warm start stay within."""

from __future__ import annotations

from typing import Optional

from ..policy import Policy

__all__ = ["bounds"]


def bounds(policy: Policy) -> tuple[int, Optional[int]]:
    """(minimum, maximum) the policy allows anywhere: its own, else the loosest
    of its profiles' (min 1 and no max when it says nothing)."""
    lo = policy.min_replicas
    hi = policy.max_replicas
    if lo is None:
        lo = min((p.capacity.minimum for p in policy.profiles), default=1)
    if hi is None and policy.profiles:
        hi = max(p.capacity.maximum for p in policy.profiles)
    return int(lo), (None if hi is None else int(hi))
