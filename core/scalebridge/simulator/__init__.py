"""Building blocks of the fleet simulator: traces, workloads, the oracle, scores.

- :mod:`.traces`: read and validate ``timestamp,value`` CSVs, resample to ticks.
- :mod:`.workloads`: seeded synthetic load shapes (``make_workload``).
- :mod:`.oracle`: the clairvoyant cheapest never-short fleet, and the
  request/ready/removal model the fleet loop shares with it.
- :mod:`.scores`: cost, shortfall and churn of a replay.
"""

from .oracle import members_needed, oracle_ready, oracle_sizes, ready_members, startup_ticks
from .scores import SCORE_KEYS, Scores, compute_scores
from .traces import Trace, TraceError, read_trace, resample
from .workloads import WORKLOADS, make_workload

__all__ = [
    "SCORE_KEYS",
    "Scores",
    "Trace",
    "TraceError",
    "WORKLOADS",
    "compute_scores",
    "make_workload",
    "members_needed",
    "oracle_ready",
    "oracle_sizes",
    "read_trace",
    "ready_members",
    "resample",
    "startup_ticks",
]
