"""Stage functions: the building blocks every semantics composes.

A semantics is a composition of these stages with its provider's defaults,
not a copy of the pipeline (docs/architecture.md). Each stage is pure and
documents the provider behaviour it reproduces.
"""
