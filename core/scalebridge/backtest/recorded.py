"""A back-test with no cloud and no Prometheus: ``backtest --history METRIC=FILE`` and
``--recorded FILE``.

Each ``--history`` file is a policy metric's history as ``simulate --trace`` reads a
trace (:mod:`scalebridge.simulator.traces`: a ``timestamp,value`` CSV, one row per
sample, Unix seconds, each value holding until the next), read in place of the metric's
source for every target whose policy reads that metric; ``--scale`` multiplies its
values (``1/60``: counts per minute as a rate per second) and ``--fill`` repairs its gaps,
as they do for ``simulate``. ``--recorded FILE`` is the size the target had, in the same
format (the number of members), for the ``recorded`` row and ``×actual``.

``CONFIG`` may be a policy file instead of a run configuration: the back-test of that
policy alone, as a target named after it, whose metrics come from ``--history``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..errors import ScalebridgeError
from ..providers import Observation, ProviderError, ErrorKind, SizeChange, Target

__all__ = ["Recorded", "read_recorded", "parse_history", "policy_target", "RecordedTarget"]


class RecordedError(ScalebridgeError):
    """A ``--history`` or ``--recorded`` flag that cannot be used, said in one line."""


def parse_history(text: str) -> tuple[str, str]:
    """``METRIC=FILE`` → (metric, file); ValueError saying the form."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise ValueError(f"expected METRIC=FILE.csv (the policy metric's name, its recorded history), got {text!r}")
    return name.strip(), path.strip()


@dataclass(frozen=True)
class Recorded:
    """The ``--history`` traces by metric name, and the ``--recorded`` size trace."""
    metrics: dict[str, Any] = field(default_factory=dict)      #: metric name → its Trace
    size: Optional[Any] = None                                 #: the size the target had (a Trace), or None

    def span(self) -> tuple[float, float]:
        """The period every ``--history`` file covers: ``[latest start, earliest end)``."""
        traces = list(self.metrics.values())
        return max(t.start for t in traces), min(t.end for t in traces)

    def source_of(self, name: str) -> str:
        return str(self.metrics[name].source)


def read_recorded(history: list[tuple[str, str]], recorded: Optional[str], scale: Optional[float],
                  fill: Optional[str]) -> Recorded:
    """The traces of ``--history`` and ``--recorded``; a file's problem is a
    :class:`~scalebridge.simulator.traces.TraceError` naming its line."""
    from ..simulator.traces import read_trace
    metrics: dict[str, Any] = {}
    for name, path in history:
        if name in metrics:
            raise RecordedError(f"--history {name}: given twice ({metrics[name].source} and {path})")
        metrics[name] = read_trace(path, scale=1.0 if scale is None else scale, fill=fill)
    size = read_trace(recorded, fill=fill) if recorded is not None else None
    return Recorded(metrics, size)


class RecordedTarget(Target):
    """The target of a policy file back-tested on its own: it has no provider; its
    metrics are ``--history`` files and its size, if given, ``--recorded``."""

    def __init__(self, name: str):
        self.name = name

    def observe(self, now: float) -> Observation:
        raise ProviderError(ErrorKind.INVALID, "a policy back-tested on recorded files has no target to observe",
                            operation="observe")

    def set_size(self, size: int) -> SizeChange:
        raise ProviderError(ErrorKind.INVALID, "a policy back-tested on recorded files has no target to scale",
                            operation="set_size")


def policy_target(path: str, recorded: Recorded) -> Any:
    """The :class:`~scalebridge.controller.runtime.TargetSpec` of a policy file back-tested
    on its own, named after the policy (else the file); RecordedError when no
    ``--history`` names a metric it reads."""
    from .. import controls
    from ..controller.queries import metric_names, queries_for
    from ..controller.runtime import TargetSpec
    from ..engine import DEFAULT_SEMANTICS, read_policy_file
    from ..protocol import Settings
    policy = read_policy_file(path)
    names = metric_names(policy)
    if not recorded.metrics:
        raise RecordedError(f"{path} is a policy file: give its metric's history with --history METRIC=FILE.csv "
                            f"(it reads {', '.join(names) or 'no metric'}), or back-test a run configuration")
    unknown = [n for n in recorded.metrics if n not in names]
    if unknown:
        raise RecordedError(f"--history {unknown[0]}: the policy reads no metric {unknown[0]!r}; it reads "
                            f"{', '.join(names) or 'none'}")
    compiled = controls.compile(policy)
    queries = queries_for(compiled, policy.semantics or DEFAULT_SEMANTICS)
    known = {q.name for q in queries}
    from ..providers import MetricQuery
    for m in policy.metrics or ():   # a metric this semantics does not read is still the demand another replays
        if m.name in recorded.metrics and m.name not in known:
            queries.append(MetricQuery(m.name, m.type, {}, 60.0))
            known.add(m.name)
    for name in recorded.metrics:
        if name not in known:
            queries.append(MetricQuery(name, "rule", {}, 60.0))
    name = policy.name or Path(path).stem
    return TargetSpec(name, "recorded", None, RecordedTarget(name), compiled, "", policy.semantics or DEFAULT_SEMANTICS,
                      Settings(), True, queries)
