"""The ``azure`` provider plugin (extra ``[azure]``): virtual machine scale sets
through azure-mgmt-compute, metrics from Azure Monitor through azure-mgmt-monitor,
authenticated with azure-identity.

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin; the SDKs are imported only when a provider is made, so this
module imports without them.
"""
from scalebridge.hookspecs import hookimpl

from .provider import AzureProvider

__all__ = ["AzureProvider"]


@hookimpl
def scalebridge_register_providers(register):
    register("azure", AzureProvider)


@hookimpl
def scalebridge_register_translators(register):
    from .translate import AutoscaleSettingTranslator
    register(AutoscaleSettingTranslator())
