"""The ``sim`` provider: a simulated fleet and load on the controller's clock.

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. A target's ``ref`` is ``scalebridge simulate``'s fleet and
load (``workload`` or ``trace``, ``capacity``, ``startup``, …); under
``scalebridge run --clock virtual --until DURATION`` it replays as fast as the
decisions compute, and decides what ``simulate`` decides (see
:mod:`scalebridge_sim.provider`).
"""
from __future__ import annotations

from scalebridge.hookspecs import hookimpl


@hookimpl
def scalebridge_register_providers(register):
    from .provider import SimProvider
    register("sim", SimProvider)
