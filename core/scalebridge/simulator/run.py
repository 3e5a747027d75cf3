"""Where the replay's names were first importable from: ``simulate`` and
``Run`` (:mod:`.replay`), the world's helpers (:mod:`.world`), the comparison
and its scores (:mod:`.comparison`), ``compare`` (:mod:`.batch`)."""

from __future__ import annotations

from .batch import compare, registered_semantics
from .bounds import bounds
from .comparison import Comparison, RunResult, oracle_for, score_run
from .replay import Run, simulate
from .world import Forecaster, Progress, World, default_initial, published_metrics

__all__ = ["Comparison", "Forecaster", "Progress", "Run", "RunResult", "World", "bounds", "compare",
           "default_initial", "oracle_for", "published_metrics", "registered_semantics", "score_run", "simulate"]
