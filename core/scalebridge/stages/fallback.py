"""Fallback on metric failure: KEDA's ``fallback``, in the protocol's terms.

KEDA (pkg/fallback/fallback.go, https://keda.sh/docs/latest/reference/scaledobject-spec/#fallback):

- it counts, per metric, the consecutive times the metric failed to be read
  (``IncrementFailure``), and resets the count when it is read again
  (``UpdateHealthStatus`` with ``NumberOfFailures: 0``);
- "Once that value passes the ``failureThreshold``" — ``NumberOfFailures >
  FailureThreshold`` in ``GetMetricsWithFallback`` — the metric is no longer an
  error: it stands for the fallback count, as ``target × replicas`` (``target ×
  replicas / ready replicas`` for ``Value``) which the HPA turns back into that
  many replicas, beside the metrics that are read;
- the count is, by ``behavior`` (``doFallback``): ``static`` ``replicas``;
  ``current_replicas`` the current count; ``current_replicas_if_higher``
  ``max(current, replicas)``; ``current_replicas_if_lower`` ``min(current, replicas)``;
  "current" is the scale subresource's ``spec.replicas`` (``resolver.GetCurrentReplicas``),
  the protocol's ``current_replicas``.

The count is kept in ``state["fallback.failures"]`` (metric key → consecutive
failed decisions), so that a decision stays pure and a restart keeps it.
"""
from __future__ import annotations

from typing import Iterable, Optional

from ..errors import RequestError

__all__ = ["STATE_FAILURES", "failures_of", "count_failures", "fallback_replicas", "fallback_proposal"]

STATE_FAILURES = "fallback.failures"


def failures_of(extra: dict) -> dict:
    """The failure counts the request's state carries (``{}`` when none)."""
    v = extra.get(STATE_FAILURES)
    if v is None:
        return {}
    if type(v) is not dict or not all(type(k) is str and type(n) is int and n >= 0 for k, n in v.items()):
        raise RequestError(f"$.state['{STATE_FAILURES}']", "must be an object mapping a metric to the number of "
                                                            f"consecutive decisions it failed in (an integer >= 0), got {v!r}")
    return v


def count_failures(previous: dict, read: Iterable[str], failed: Iterable[str]) -> dict:
    """The counts after one decision: each metric read that failed counts one more
    (``IncrementFailure``); one read without failing is back to none (its health
    reset); a metric not read in this decision keeps its count."""
    failed = set(failed)
    out = {k: n for k, n in previous.items() if k not in set(read)}
    for k in read:
        if k in failed:
            out[k] = previous.get(k, 0) + 1
    return out


def fallback_replicas(spec, current: int) -> int:
    """The count a metric in fallback stands for, by ``spec.behavior`` (``doFallback``)."""
    b = spec.behavior
    if b == "current_replicas":
        return current
    if b == "current_replicas_if_higher":
        return max(current, spec.replicas)
    if b == "current_replicas_if_lower":
        return min(current, spec.replicas)
    return spec.replicas


def fallback_proposal(replicas: int, read_proposals: Iterable[Optional[int]], current: int,
                      still_failing: bool) -> int:
    """The count the semantics then decides from (as ``observations.proposal``): the
    fallback count joins the proposals of the metrics that were read by max — the
    HPA takes the highest of its metrics, one of which now says ``replicas`` — and a
    metric that fails but has not yet passed the threshold is still an invalid
    metric, which blocks a scale-in (as the HPA: "invalid metrics ... and the rest
    would scale down")."""
    p = max([replicas] + [r for r in read_proposals if r is not None])
    if still_failing and p < current:
        p = current
    return p
