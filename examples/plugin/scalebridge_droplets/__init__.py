"""``scalebridge-droplets``: an example third-party scalebridge plugin, laid out as a
built-in one is (``plugins/scalebridge_<cloud>/``), for a plugin author to copy.

It speaks to an invented cloud, a pool of droplets behind a small JSON API (documented
in :mod:`.client`): the ``droplets`` provider actuates a pool's size (:mod:`.provider`),
the ``droplets`` translator writes a policy as the pool's own autoscaler
(:mod:`.translate`, :mod:`.apply`), and :mod:`.fake_server` is the API on 127.0.0.1 its
tests run against. It also registers a semantics, ``proportional`` (:mod:`.semantics`).

Registered through the ``scalebridge`` entry-point group (``pyproject.toml``:
``droplets = "scalebridge_droplets"``), exactly like the built-ins; it imports nothing
but ``scalebridge`` and the standard library.
"""
from scalebridge.hookspecs import hookimpl

from .provider import DropletsProvider
from .semantics import ProportionalSemantics

__all__ = ["DropletsProvider", "ProportionalSemantics"]


@hookimpl
def scalebridge_register_providers(register):
    register("droplets", DropletsProvider)


@hookimpl
def scalebridge_register_translators(register):
    from .translate import PoolAutoscalerTranslator
    register(PoolAutoscalerTranslator())


@hookimpl
def scalebridge_register_semantics(register):
    register(ProportionalSemantics())
