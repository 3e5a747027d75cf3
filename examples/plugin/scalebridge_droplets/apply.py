"""``scalebridge apply CONFIG`` for ``droplets`` targets: the pool's own
autoscaler, read with ``GET /v1/pools/{pool}/autoscaler`` and written whole with
``PUT /v1/pools/{pool}/autoscaler``, through the plugin's own client (the target's).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from scalebridge.policy import Policy
from scalebridge.translate.apply import diff

from .translate import render

if TYPE_CHECKING:
    from .provider import PoolTarget


def apply_native(name: str, target: "PoolTarget", policy: Policy, dry_run: bool, say: Callable[[str], None]) -> bool:
    """One pool: say what the policy loses, then each field that changes (or ``create``,
    or ``unchanged``), and write the autoscaler unless ``dry_run``. Returns whether
    anything changed (or would)."""
    native, losses = render(policy, {"pool": target.pool})
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    have = target.client.autoscaler(target.pool)
    wanted = native["autoscaler"]
    changes = diff(wanted, have) if have is not None else ["create"]
    for line in changes:
        say(f"{name}: autoscaler {target.pool}: {line}")
    if not changes:
        say(f"{name}: unchanged")
        return False
    if not dry_run:
        target.client.set_autoscaler(target.pool, wanted)
    return True
