"""The ``gce`` provider plugin (extra ``[gce]``): zonal and regional managed
instance groups through google-cloud-compute (REST), metrics from Cloud
Monitoring (gRPC).

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. Importing it imports no SDK: the clients are built on a
target's first call (:mod:`.client`).
"""
from scalebridge.hookspecs import hookimpl


@hookimpl
def scalebridge_register_providers(register):
    from .provider import GceProvider
    register("gce", GceProvider)


@hookimpl
def scalebridge_register_translators(register):
    from .translate import AutoscalerTranslator
    register(AutoscalerTranslator())
