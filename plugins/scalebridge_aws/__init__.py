"""The ``aws`` provider plugin (extra ``[aws]``): EC2 Auto Scaling groups through
boto3, metrics from CloudWatch.

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. Importing it does not import boto3: the SDK is loaded when
the provider makes its first client (``scalebridge.providers.require`` names
the extra when it is missing).
"""
from __future__ import annotations

from scalebridge.hookspecs import hookimpl


@hookimpl
def scalebridge_register_providers(register):
    from .provider import AwsProvider
    register("aws", AwsProvider)


@hookimpl
def scalebridge_register_translators(register):
    from .translate import ScalingPoliciesTranslator
    register(ScalingPoliciesTranslator())
