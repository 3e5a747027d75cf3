"""Decision semantics: the contract (:mod:`.base`) and the built-in providers.

Each built-in module (``kubernetes``, ``gce``, ``azure``, ``aws``, ``neutral``)
holds one :class:`Semantics`; :mod:`.builtin` registers them through the ``scalebridge``
entry-point group, exactly as a third-party semantics would be.
"""
from .base import Context, Decision, MetricResult, Semantics

__all__ = ["Context", "Decision", "MetricResult", "Semantics"]
