"""``scalebridge shadow report CONFIG [--since 24h]``: what a shadow run recorded, per
target (docs/shadow.md).

It reads the audit (``--audit FILE``, else the configuration's ``audit:``), keeps each
shadow record's comparison (the ``shadow`` object :mod:`.shadow` writes) and says, per
target of the configuration:

- **agreement**: the share of compared syncs where scalebridge decided the size the
  native autoscaler decided;
- **difference**: the mean of ``|scalebridge − native|`` over compared syncs, and the
  worst (the largest, with its sign and when);
- **reasons**: the stages at which scalebridge departed, most frequent first, each with
  one of its lines;
- **inputs**: how many compared syncs the native autoscaler's reported metrics did not
  match what scalebridge read;
- **cost**: instance-hours. Each compared sync's two sizes hold from the time
  scalebridge decided until the next compared sync (the last one for the median gap
  between compared syncs), and the instance-hours are their integral: scalebridge's,
  the native autoscaler's and the difference. It is the size scalebridge asked for from
  where the native autoscaler had the target, each sync — an estimate of what the
  policy would have cost, not a replay (``scalebridge backtest`` replays).

``--since DURATION`` keeps the records of the last DURATION before the audit's latest
record (an audit copied from elsewhere reads the same as one still being written).
``--plot FILE`` draws, per target, both sizes over time with the load scalebridge read.
"""
from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any, Iterable, Optional

__all__ = ["TargetSummary", "read_audit", "summarize", "summaries", "render_text", "plot_shadow"]


@dataclass
class TargetSummary:
    """One target's shadow record, summed up."""
    target: str
    records: int = 0
    compared: int = 0
    agreed: int = 0
    not_compared: Counter = field(default_factory=Counter)
    mean_abs_difference: Optional[float] = None
    worst_difference: Optional[int] = None
    worst_at: Optional[float] = None
    stages: Counter = field(default_factory=Counter)
    stage_example: dict = field(default_factory=dict)
    inputs_mismatched: int = 0
    inputs_compared: int = 0
    instance_hours_scalebridge: float = 0.0
    instance_hours_native: float = 0.0
    start: Optional[float] = None
    end: Optional[float] = None
    native_autoscaler: Optional[str] = None
    #: (time decided, scalebridge, native, load) per compared sync, for the plot
    series: list = field(default_factory=list, repr=False)

    @property
    def agreement(self) -> Optional[float]:
        return self.agreed / self.compared if self.compared else None

    @property
    def instance_hours_difference(self) -> float:
        return self.instance_hours_scalebridge - self.instance_hours_native

    def to_json(self) -> dict:
        return {"target": self.target, "records": self.records, "compared": self.compared, "agreed": self.agreed,
                "agreement": self.agreement, "not_compared": dict(self.not_compared),
                "mean_abs_difference": self.mean_abs_difference, "worst_difference": self.worst_difference,
                "worst_at": self.worst_at,
                "reasons": [{"stage": s, "count": n, "example": self.stage_example.get(s)}
                            for s, n in self.stages.most_common()],
                "inputs_compared": self.inputs_compared, "inputs_mismatched": self.inputs_mismatched,
                "instance_hours": {"scalebridge": self.instance_hours_scalebridge,
                                   "native": self.instance_hours_native,
                                   "difference": self.instance_hours_difference},
                "start": self.start, "end": self.end, "native_autoscaler": self.native_autoscaler}


def read_audit(lines: Iterable[str]) -> tuple[list[dict], int]:
    """The audit's shadow records (JSON objects with a ``shadow`` object), and the count
    of lines that were not JSON objects (skipped, said once)."""
    out, bad = [], 0
    for line in lines:
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(r, dict):
            bad += 1
            continue
        if isinstance(r.get("shadow"), dict) and isinstance(r.get("target"), str) and \
                isinstance(r.get("time"), (int, float)):
            out.append(r)
    return out, bad


def summarize(target: str, records: list[dict]) -> TargetSummary:
    """One target's summary from its shadow records (any order)."""
    s = TargetSummary(target)
    records = sorted(records, key=lambda r: r["time"])
    s.records = len(records)
    if records:
        s.start, s.end = records[0]["time"], records[-1]["time"]
    diffs: list[int] = []
    for r in records:
        sh = r["shadow"]
        if sh.get("native_autoscaler"):
            s.native_autoscaler = sh["native_autoscaler"]
        if not sh.get("compared"):
            s.not_compared[sh.get("why") or "not compared"] += 1
            continue
        sb, native = sh.get("scalebridge_replicas"), sh.get("native_replicas")
        if not isinstance(sb, int) or not isinstance(native, int):
            s.not_compared["no sizes"] += 1
            continue
        s.compared += 1
        d = sb - native
        diffs.append(d)
        if sh.get("agree", d == 0):
            s.agreed += 1
        else:
            stage = sh.get("stage") or "decision"
            s.stages[stage] += 1
            s.stage_example.setdefault(stage, sh.get("detail"))
        if sh.get("inputs_match") is not None:
            s.inputs_compared += 1
            if sh["inputs_match"] is False:
                s.inputs_mismatched += 1
        t = sh.get("decided_at", r["time"])
        load = sh.get("load") or {}
        s.series.append((float(t), sb, native, next(iter(load.values()), None) if load else None))
    if diffs:
        s.mean_abs_difference = sum(abs(d) for d in diffs) / len(diffs)
        i = max(range(len(diffs)), key=lambda k: abs(diffs[k]))
        s.worst_difference, s.worst_at = diffs[i], s.series[i][0]
    s.series.sort(key=lambda p: p[0])
    s.instance_hours_scalebridge, s.instance_hours_native = instance_hours(s.series)
    return s


def instance_hours(series: list) -> tuple[float, float]:
    """Instance-hours of scalebridge's and the native autoscaler's sizes: each point's
    sizes hold until the next point, the last one for the median gap between points
    (nothing when there is a single point: no gap to hold it for)."""
    if len(series) < 2:
        return 0.0, 0.0
    gaps = [b[0] - a[0] for a, b in zip(series, series[1:])]
    last = statistics.median(gaps)
    sb = native = 0.0
    for (t, a, n, _), gap in zip(series, gaps + [last]):
        sb += a * gap
        native += n * gap
    return sb / 3600.0, native / 3600.0


def summaries(records: list[dict], targets: Optional[list[str]] = None,
              since: Optional[float] = None) -> list[TargetSummary]:
    """A summary per target (``targets`` in that order, else in the order first seen),
    of the records in the ``since`` seconds before the latest one."""
    if since is not None and records:
        cutoff = max(r["time"] for r in records) - since
        records = [r for r in records if r["time"] >= cutoff]
    by: dict[str, list[dict]] = {}
    for r in records:
        by.setdefault(r["target"], []).append(r)
    names = targets if targets is not None else list(by)
    return [summarize(n, by.get(n, [])) for n in names]


def _pct(x: Optional[float]) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _stamp(t: Optional[float]) -> str:
    import time
    return "—" if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def render_text(items: list[TargetSummary], out: IO[str]) -> None:
    """The report for a person."""
    for s in items:
        out.write(f"{s.target}" + (f" (beside {s.native_autoscaler})" if s.native_autoscaler else "") + "\n")
        if not s.records:
            out.write("  no shadow records\n\n")
            continue
        out.write(f"  {_stamp(s.start)} → {_stamp(s.end)}: {s.records} syncs, {s.compared} compared\n")
        out.write(f"  agreement: {_pct(s.agreement)} ({s.agreed} of {s.compared})\n")
        if s.compared:
            out.write(f"  difference: mean {s.mean_abs_difference:.2f} replicas, worst {s.worst_difference:+d} "
                      f"at {_stamp(s.worst_at)}\n")
        for stage, n in s.stages.most_common(3):
            out.write(f"  departs at {stage}: {n} syncs, e.g. {s.stage_example.get(stage)}\n")
        if s.inputs_compared:
            out.write(f"  inputs: the native autoscaler's metrics differed from scalebridge's in "
                      f"{s.inputs_mismatched} of {s.inputs_compared} syncs\n")
        for why, n in s.not_compared.most_common(2):
            out.write(f"  not compared: {n} syncs ({why})\n")
        out.write(f"  cost: scalebridge {s.instance_hours_scalebridge:.2f} instance-hours, native "
                  f"{s.instance_hours_native:.2f}, difference {s.instance_hours_difference:+.2f}\n\n")


def plot_shadow(items: list[TargetSummary], path: Any, max_panels: int = 12) -> str:
    """Per target: both sizes over time (steps), and the load scalebridge read (its first
    metric) on a second axis (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [s for s in items if s.series][:max_panels]
    fig, axes = plt.subplots(len(shown) or 1, 1, figsize=(12, 2.8 * max(1, len(shown))), squeeze=False)
    for ax, s in zip(axes[:, 0], shown):
        t0 = s.series[0][0]
        hours = [(p[0] - t0) / 3600.0 for p in s.series]
        ax.step(hours, [p[2] for p in s.series], where="post", color="black", lw=1.6,
                label=s.native_autoscaler or "native")
        ax.step(hours, [p[1] for p in s.series], where="post", color="#1f77b4", lw=1.0, label="scalebridge")
        ax.set_ylabel("replicas")
        loads = [p[3] for p in s.series]
        if any(v is not None and math.isfinite(v) for v in loads):
            ax2 = ax.twinx()
            ax2.plot(hours, [math.nan if v is None else v for v in loads], color="#ff7f0e", lw=0.7, alpha=0.7,
                     label="load (scalebridge's reading)")
            ax2.set_ylabel("load", color="#ff7f0e")
        ax.set_title(f"{s.target}: agreement {_pct(s.agreement)}, instance-hours difference "
                     f"{s.instance_hours_difference:+.1f}", fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper left")
        ax.set_xlabel(f"hours since {_stamp(t0)}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
