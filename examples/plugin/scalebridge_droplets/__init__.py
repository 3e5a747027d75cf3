"""``scalebridge-droplets``: an example third-party scalebridge plugin, laid out as a
built-in one is (``plugins/scalebridge_<cloud>/``), for a plugin author to copy.

Registered through the ``scalebridge`` entry-point group (``pyproject.toml``:
``droplets = "scalebridge_droplets"``), exactly like the built-ins.
"""
from scalebridge.hookspecs import hookimpl

from .semantics import ProportionalSemantics

__all__ = ["ProportionalSemantics"]


@hookimpl
def scalebridge_register_semantics(register):
    register(ProportionalSemantics())
