"""Provider factories the configuration tests name by ``module:attr``."""
from __future__ import annotations

from scalebridge.providers import require


def needs_missing_sdk(**options):
    """A provider whose SDK is not installed: the factory imports it, as plugins do."""
    require("scalebridge_no_such_sdk.client", "nosuch", "nosuch")
    raise AssertionError("unreachable")
