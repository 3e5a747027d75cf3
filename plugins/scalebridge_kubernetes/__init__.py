"""The ``kubernetes`` provider plugin (extra ``[kubernetes]``).

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. Importing it does not import the ``kubernetes`` SDK: the
provider imports it when it first talks to the API server.
"""
from __future__ import annotations

from scalebridge.hookspecs import hookimpl

from .provider import KubernetesProvider

__all__ = ["KubernetesProvider"]


@hookimpl
def scalebridge_register_providers(register):
    register("kubernetes", KubernetesProvider)


@hookimpl
def scalebridge_register_translators(register):
    from .keda import KedaTranslator
    from .translate import HpaTranslator
    register(HpaTranslator())
    register(KedaTranslator())   # KEDA runs on this provider's clusters: its ScaledObjects are this plugin's
