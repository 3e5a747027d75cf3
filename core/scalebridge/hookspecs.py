"""The whole plugin contract of scalebridge (pluggy, project name ``scalebridge``).

Plugins are found through the ``scalebridge`` entry-point group. A plugin
module defines any of the hooks below, decorated with :data:`hookimpl`::

    from scalebridge.hookspecs import hookimpl

    @hookimpl
    def scalebridge_register_semantics(register):
        register(MySemantics())

Hooks *register* things once, at start-up (in the manner of tox's
``tox_register_tox_env(register)`` and llm's ``register_models(register)``);
the per-call contract is the small ABC each registered object implements —
:class:`scalebridge.semantics.Semantics` for semantics — never a pluggy call per
decision.
"""
from __future__ import annotations

import pluggy

PROJECT = "scalebridge"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def scalebridge_register_semantics(register):
    """Register decision semantics.

    Call ``register(semantics)`` once per :class:`scalebridge.semantics.Semantics`
    instance; its ``name`` is what ``request.semantics`` and ``--semantics``
    select. A name registered twice is an error naming both plugins.
    """


@hookspec
def scalebridge_register_providers(register):
    """Register providers: ``register(name, factory)`` where ``factory(**config)``
    returns an object implementing :class:`scalebridge.providers.Provider`
    (observe a target, report status and in-flight operations, set its absolute
    size). Declare optional capabilities on the provider rather than failing at
    call time."""


@hookspec
def scalebridge_register_metric_sources(register):
    """Register metric sources: ``register(name, factory)``; a source reads
    samples for ``observations.metrics`` outside the decision."""


@hookspec
def scalebridge_register_forecasters(register):
    """Register forecasting models: ``register(name, factory)`` where
    ``factory(**params)`` returns a :class:`scalebridge.forecasting.Forecaster`."""
