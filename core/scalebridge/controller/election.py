"""Leader election for ``--leader-elect``: the elector comes from the provider
instance ``leader_election.provider`` names (default: the first configured provider that
holds leases — its class implements :meth:`scalebridge.providers.Provider.elector`; the
kubernetes provider does, on a ``coordination.k8s.io/v1`` Lease).
:class:`AlwaysLeader` is the trivial elector (one replica; tests)."""
from __future__ import annotations

import os
import socket
from typing import Any, Optional

from .. import registry
from ..errors import ScalebridgeError
from ..providers import Elector, Provider

__all__ = ["AlwaysLeader", "NeverLeader", "make_elector", "elector_key"]


class AlwaysLeader(Elector):
    """Holds the lease from the start: every write is allowed."""


class NeverLeader(Elector):
    """Never holds it: observes and decides, never writes (tests)."""

    def is_leader(self) -> bool:
        return False


def default_identity() -> str:
    return f"{socket.gethostname()}_{os.getpid()}"


def _elects(provider: Any) -> bool:
    """Whether a provider (or its class) implements leader election."""
    cls = provider if isinstance(provider, type) else type(provider)
    return getattr(cls, "elector", Provider.elector) is not Provider.elector


def elector_key(providers: dict, leader_election: Any) -> Optional[str]:
    """The key of the provider instance that holds the lease: ``leader_election.provider``,
    else the first configured one that can."""
    key: Optional[str] = getattr(leader_election, "provider", None)
    if key is None:
        key = next((k for k, p in providers.items() if _elects(p)), None)
    return key


def make_elector(providers: dict, leader_election: Any, clock: Any) -> Elector:
    """The elector of the configured provider instance (ScalebridgeError when none
    can elect)."""
    namespace = getattr(leader_election, "namespace", None) or "scalebridge"
    name = getattr(leader_election, "name", None) or "scalebridge-controller"
    identity = getattr(leader_election, "identity", None) or default_identity()
    key = elector_key(providers, leader_election)
    if key is None or key not in providers:
        holders = ", ".join(sorted(name for name, r in registry.current().providers.items()
                                   if _elects(r.obj))) or "none installed"
        raise ScalebridgeError(f"--leader-elect needs a provider that holds a lease ({holders}): configure one, "
                               "or name one in leader_election.provider")
    elector = providers[key].elector(namespace, name, identity, clock)
    if elector is None:
        raise ScalebridgeError(f"--leader-elect: provider {key!r} has no leader election")
    return elector
