"""Fallback on metric failure: KEDA's ``fallback`` (pkg/fallback/fallback.go), the
arithmetic in :mod:`scalebridge.stages.fallback`.

Each metric's consecutive failed decisions are counted in ``state``; past
``failure_threshold`` the fallback count joins the read metrics' proposals, the semantics
decides from that as ``observations.proposal`` (its stabilization, rate limits, profiles
and bounds apply), and the reason is ``Fallback``.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..decision import Context, Decision, MetricResult, aligned
from ..policy import Policy
from ..stages.fallback import STATE_FAILURES, count_failures, failures_of, fallback_proposal, fallback_replicas
from .base import Control, Inner

__all__ = ["Fallback", "fallback_report", "store_failures"]


class Fallback(Control):
    name = "fallback"

    def applies(self, policy: Policy) -> bool:
        """A fallback for the whole target: ``behavior: formula`` falls back inside the
        formulas instead (:mod:`.formula`; KEDA 2.20 ``doFallback``: ``case
        FallbackBehaviorScalingModifiers: return nil``)."""
        return policy.fallback is not None and policy.fallback.behavior != "formula"

    def decide(self, ctx: Context, inner: Inner) -> Decision:
        fb = ctx.policy.fallback
        if ctx.obs.proposal is not None:
            return inner(ctx)
        failed = ctx.failed
        state = ctx.state
        prev = failures_of(state.extra)
        # a decision that may fall back runs first on a copy: its state is kept only if it stands
        imminent = any(n >= fb.failure_threshold for n in prev.values())
        scratch = state.copy() if imminent else state
        ctx.state = scratch
        d = inner(ctx)
        ctx.state = state
        entries = aligned(ctx.policy, d.metrics)
        read, bad, proposals = _read_metrics(ctx.policy, d, entries, failed)
        counts = count_failures(prev, read, bad)
        over = sorted(k for k in bad if counts[k] > fb.failure_threshold)
        if not over:
            if imminent:
                state.assign(scratch)
            store_failures(state, counts)
            d.metrics = entries
            d.extra = {**(d.extra or {}), "fallback": fallback_report(fb, counts, None)}
            return d
        r = fallback_replicas(fb, ctx.current)
        still = any(counts[k] <= fb.failure_threshold for k in bad)
        p = fallback_proposal(r, proposals, ctx.current, still)
        n = max(counts[k] for k in over)
        ctx.note("fallback", ctx.current, p, f"{', '.join(over)} failed {n} decisions in a row (failure_threshold "
                                            f"{fb.failure_threshold}): fallback {r} ({fb.behavior}) joins the read "
                                            "metrics' proposals")
        obs = ctx.obs
        ctx.obs = dataclasses.replace(obs, proposal=p)
        d2 = inner(ctx)
        ctx.obs = obs
        store_failures(state, counts)
        d2.metrics = entries
        d2.reason = "Fallback"
        if d2.cause == "metric":
            d2.cause = "fallback"
        d2.error = (f"fallback: {', '.join(over)} failed {n} consecutive decisions (failure_threshold "
                    f"{fb.failure_threshold}); fallback replicas {r} ({fb.behavior})")
        d2.extra = {**(d2.extra or {}), "fallback": fallback_report(fb, counts, r)}
        return d2


def store_failures(state, counts: dict) -> None:
    """The failure counts, kept in ``state`` (none kept when every metric was read)."""
    if counts:
        state.extra[STATE_FAILURES] = counts
    else:
        state.extra.pop(STATE_FAILURES, None)


def fallback_report(fb, counts: dict, replicas: Optional[int]) -> dict:
    """The response's ``fallback``: whether it applies, each failing metric's count, the
    metrics past the threshold, and the count they stand for."""
    over = sorted(k for k, n in counts.items() if n > fb.failure_threshold)
    return {"active": bool(over), "failures": dict(counts), "metrics": over, "replicas": replicas}


def _read_metrics(policy, d: Decision, entries: list[MetricResult], failed: dict) -> tuple[list, set, list]:
    """The metric keys this decision read, those that failed, and the read ones' proposals."""
    read: list = []
    bad: set = set()
    proposals: list = []
    for e in entries:
        if e.triggered is not None or e.error == "disabled":
            continue
        read.append(e.name)
        if e.error is not None or e.name in failed:
            bad.add(e.name)
        else:
            proposals.append(e.replicas)
    in_force = policy.rules
    if d.profile is not None:
        in_force = next((p.rules for p in policy.profiles if p.name == d.profile), policy.rules)
    for rule, e in zip(in_force, [e for e in entries if e.triggered is not None]):
        if not rule.enabled:
            continue
        read.append(rule.metric)
        if e.error is not None or rule.metric in failed:
            bad.add(rule.metric)
        elif e.triggered:
            proposals.append(e.replicas)
    return read, bad, proposals
