"""The fleet simulator: replay a load through policies and semantics, score it.

- :mod:`.traces`: read and validate ``timestamp,value`` CSVs, resample to ticks.
- :mod:`.workloads`: seeded synthetic load shapes (``make_workload``).
- :mod:`.oracle`: the clairvoyant cheapest never-short fleet, and the
  request/ready/removal model the fleet loop shares with it.
- :mod:`.scores`: cost, shortfall and churn of a replay.
- :mod:`.fleet`: the fleet model (capacity, startup, drain, metric lag) and
  its member accounting.
- :mod:`.world`: the simulated world (fleet, load, published metrics), stepped
  from sync to sync by whoever decides.
- :mod:`.replay`: one replay (``simulate``): the world stepped by a ``Decider``.
- :mod:`.comparison`: runs side by side with their scores, and their JSON; the
  reactive frontier (the HPA at CPU targets 60–90%) and the iso-risk cost ratio
  against it (``compare --frontier``).
- :mod:`.batch`: every (policy, semantics) pair on one load (``compare``), in
  worker processes if asked.
- :mod:`.bounds`: the sizes a policy allows anywhere.
- :mod:`.scenario`: loads and fleets from flags or a scenario file.
- :mod:`.cli`, :mod:`.plot`, :mod:`.demo`: ``scalebridge simulate``/``compare``,
  the comparison plot, the demo's simulation part.
"""

from .fleet import Fleet, FleetModel, Startup, parse_startup
from .oracle import members_needed, oracle_ready, oracle_sizes, ready_members, startup_ticks
from .batch import compare
from .comparison import Comparison, RunResult, oracle_for, score_run
from .replay import Run, simulate
from .world import Forecaster, World, default_initial, published_metrics
from .scenario import Scenario, ScenarioError, Workload, load_scenario, load_workload
from .scores import SCORE_KEYS, Scores, compute_scores
from .traces import Trace, TraceError, read_trace, resample
from .workloads import WORKLOADS, make_workload

__all__ = [
    "Comparison",
    "Fleet",
    "FleetModel",
    "Forecaster",
    "Run",
    "RunResult",
    "SCORE_KEYS",
    "Scenario",
    "ScenarioError",
    "Scores",
    "Startup",
    "Trace",
    "TraceError",
    "WORKLOADS",
    "Workload",
    "World",
    "compare",
    "compute_scores",
    "default_initial",
    "load_scenario",
    "load_workload",
    "make_workload",
    "members_needed",
    "oracle_for",
    "oracle_ready",
    "oracle_sizes",
    "parse_startup",
    "published_metrics",
    "read_trace",
    "ready_members",
    "resample",
    "score_run",
    "simulate",
    "startup_ticks",
]
