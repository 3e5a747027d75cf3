"""The built-in semantics, registered through the ``scalebridge`` entry-point group
(``pyproject.toml``) exactly as a third-party plugin registers its own: the HPA's, the GCE
autoscaler's, Azure autoscale's, EC2 Auto Scaling's, and the neutral composition — in
that order, the order ``--semantics all`` answers in."""
from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def scalebridge_register_semantics(register):
    from .aws import AwsSemantics
    from .azure import AzureSemantics
    from .gce import GceSemantics
    from .kubernetes import KubernetesSemantics
    from .neutral import NeutralSemantics
    for semantics in (KubernetesSemantics(), GceSemantics(), AzureSemantics(), AwsSemantics(), NeutralSemantics()):
        register(semantics)
