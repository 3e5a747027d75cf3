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
    """Register providers: ``register(name, factory)`` where ``factory(**options)``
    returns a :class:`scalebridge.providers.Provider` (usually the class itself).

    ``name`` is what a run configuration's ``providers:`` key (or its ``type:``)
    selects. The factory is called with that entry's options; it should not
    import its SDK at module import time (import it inside the factory with
    :func:`scalebridge.providers.require`, which names the extra to install), so
    that ``scalebridge plugins`` and ``validate`` work without every cloud's SDK.
    The per-call contract is :class:`~scalebridge.providers.Provider` and its
    :class:`~scalebridge.providers.Target`, documented in ``docs/plugins.md``.
    """


@hookspec
def scalebridge_register_metric_sources(register):
    """Register metric sources: ``register(name, factory)`` where
    ``factory(**options)`` returns a :class:`scalebridge.metric_sources.MetricSource`
    (usually the class itself).

    ``name`` is what a run configuration's ``metric_sources:`` entry selects with
    ``type:``; the factory is called with that entry's other options. A target's
    ``metrics.<name>.source: {metric_source: INSTANCE, query: …, member_label: …}``
    then reads that metric from the instance instead of the provider's own
    monitoring, in ``run`` and ``observe`` and for ``backtest``'s history. The
    per-call contract (an instant and a range query; the value, per-member,
    window and history reads built on them) is documented in ``docs/plugins.md``."""


@hookspec
def scalebridge_register_forecasters(register):
    """Register forecasting models: ``register(name, factory)`` where
    ``factory(**params)`` returns a :class:`scalebridge.forecasting.Forecaster`."""


@hookspec
def scalebridge_register_translators(register):
    """Register native autoscaler formats: ``register(translator)`` once per
    :class:`scalebridge.translate.Translator` instance (from
    ``scalebridge.translate``; the built-in ``kubernetes``, ``gce``, ``azure``,
    ``aws`` and ``keda`` translators are registered through this hook too).

    Its ``name`` is what ``scalebridge render --to NAME`` and ``scalebridge import
    --from NAME`` select; a name registered twice is an error naming both plugins. A
    translator implements ``render(policy, target) -> (native, losses)`` — ``policy`` a
    checked :class:`scalebridge.policy.Policy`, ``target`` the ``--target`` keys its
    ``target_keys`` declare (checked before the call), ``losses`` a
    :class:`scalebridge.translate.Losses`: ``losses.add(field, why)`` for each policy
    feature the format cannot express, ``losses.placeholder(field, how)`` for a value
    only ``--target`` can give (``render --strict`` fails while one is left) — and may
    implement ``dump(native) -> str`` (JSON by default), ``import_all(text)`` (the
    format read back as policies) and ``apply(name, target, policy, dry_run, say,
    metrics)`` (``scalebridge apply``, for the targets of its ``provider``).

    A provider plugin whose provider declares ``Capability.TRANSLATE`` registers a
    translator whose ``provider`` is that provider's name and which implements
    ``apply``. Raise ``scalebridge.translate.NativeError(field, why)`` for bad input
    (one line, exit 2); any other exception is reported as the plugin's bug, naming
    it and the method (exit 1). docs/plugins.md, "A translator", has a worked example.
    """
