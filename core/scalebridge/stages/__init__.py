"""Stage functions: the building blocks every semantics composes.

A semantics is a composition of these stages with its provider's defaults
(DESIGN.md, "Semantics"), not a copy of the pipeline. Each stage is pure and
documents the provider behaviour it reproduces.
"""
